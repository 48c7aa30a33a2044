"""A burst of devices through nginx, and slowloris beside it: every refusal a 503 with Retry-After, never a 502.

``dpdist serve`` (SQLite, its default limits) behind Debian's nginx configured as
docs/how-to/reverse-proxy.md says (``tests/nginx_support.py``; nginx's ``worker_connections``
raised to 4096 so that nginx itself refuses nothing).  ``--devices`` devices, each
from its own address of 127.1.0.0/16 (nginx forwards it in ``X-Forwarded-For``,
which the service trusts from 127.0.0.1), start at once and send ``--batches``
one-report batches one after the other, each on a fresh connection with its whole
request written at once.  A device resends the same batch (same id and bytes)
after a 429/503's ``Retry-After`` (jittered up to 50% later, as the clients do),
after 1 s for a 502/504 or a connection closed without an answer.  Beside them,
``--slowloris`` connections from one address (127.2.0.1) go straight to the
service and trickle a header line a second, never ending their heads.

Printed (one JSON object): the answers by status, the 502s, the connections closed
unanswered, the refusals without ``Retry-After``, p50/p99 of the accepted requests'
latency, the campaign's count against the batches sent, and when the service
closed the slowloris connections (each must go by ``--header-timeout``).
Everything listens on 127.0.0.1 and stops by itself; the run is bounded by
``--timeout``.  Usage::

    uv run python benchmarks/bench_burst.py [--devices 1000] [--batches 3] [--slowloris 200] [--header-timeout 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from nginx_support import Nginx  # noqa: E402
from serve_support import ADMIN_TOKEN, ServerProcess  # noqa: E402

from dpdist import io, local  # noqa: E402

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 64}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


class Burst:
    """The devices and what they were answered (see the module)."""

    def __init__(self, port: int, prefix: str, campaign: str, devices: int, batches: int):
        protocol = local.from_config(GRR)
        rng = np.random.default_rng(61)
        self.port, self.prefix, self.campaign = port, prefix, campaign
        self.devices, self.batches = devices, batches
        self.bodies = [io.encode_record(protocol, protocol.privatize(rng.integers(0, 64, 1), rng=rng)) for _ in range(64)]
        self.statuses: dict[int, int] = {}
        self.unanswered = self.without_retry_after = 0
        self.latencies: list[float] = []
        self.acknowledged: set[str] = set()

    async def exchange(self, source: str, batch_id: str, body: bytes) -> tuple[int | None, dict]:
        """One request on a fresh connection from ``source``: its status (None: closed unanswered) and headers."""
        reader, writer = await asyncio.open_connection("127.0.0.1", self.port, local_addr=(source, 0))
        try:
            head = (f"PUT {self.prefix}/api/campaigns/{self.campaign}/batches/{batch_id} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                    f"Content-Type: application/octet-stream\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n")
            writer.write(head.encode() + body)  # the whole request at once
            answer = await reader.read()
        finally:
            writer.close()
        if not answer.startswith(b"HTTP/1."):
            return None, {}
        lines = answer.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
        headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(":") for line in lines[1:])}
        return int(lines[0].split()[1]), headers

    async def device(self, index: int, rng: random.Random) -> None:
        source = f"127.1.{index // 250}.{index % 250 + 1}"
        for _ in range(self.batches):
            batch_id, body = uuid.uuid4().hex, self.bodies[rng.randrange(len(self.bodies))]
            while True:
                started = time.perf_counter()
                try:
                    status, headers = await self.exchange(source, batch_id, body)
                except (ConnectionError, OSError):
                    status, headers = None, {}
                if status is None:
                    self.unanswered += 1
                    await asyncio.sleep(1.0)
                    continue
                self.statuses[status] = self.statuses.get(status, 0) + 1
                if status == 200:
                    self.latencies.append(time.perf_counter() - started)
                    self.acknowledged.add(batch_id)
                    break
                if status in (429, 503):
                    self.without_retry_after += "retry-after" not in headers
                    await asyncio.sleep(float(headers.get("retry-after", 1)) * rng.uniform(1.0, 1.5))
                elif status in (502, 504):
                    await asyncio.sleep(1.0)
                else:
                    raise RuntimeError(f"device {index}: HTTP {status} {headers}")

    async def run(self) -> None:
        rng = random.Random(61)
        await asyncio.gather(*(self.device(index, rng) for index in range(self.devices)))


async def slowloris(port: int, count: int, seconds: float) -> list[float]:
    """``count`` connections from 127.2.0.1 trickling a header line a second: when each was closed by the server
    (seconds after it opened; None if still open after ``seconds``)."""

    async def one(index: int) -> float | None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=("127.2.0.1", 0))
        opened = time.monotonic()
        try:
            writer.write(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            line = 0
            while time.monotonic() - opened < seconds:
                try:
                    if await asyncio.wait_for(reader.read(1), timeout=1.0) == b"":
                        return time.monotonic() - opened
                except asyncio.TimeoutError:
                    line += 1
                    writer.write(f"X-Trickle-{line}: {index}\r\n".encode())
                except ConnectionError:
                    return time.monotonic() - opened
            return None
        finally:
            writer.close()

    return await asyncio.gather(*(one(index) for index in range(count)))


def run(devices: int, batches: int, slow: int, header_timeout: float, timeout: float) -> dict:
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)  # the devices' sockets here, the server's and nginx's (inherited)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, 16384)), hard))
    with tempfile.TemporaryDirectory() as folder:
        server = ServerProcess(str(Path(folder) / "burst.sqlite"), log_path=Path(folder) / "serve.log",
                               options=("--header-timeout", str(header_timeout), "--forwarded-allow-ips", "127.0.0.1"))
        server.start(timeout=120)
        try:
            with Nginx(server.port) as nginx:
                campaign = "burst"
                assert httpx.post(f"{server.url}/api/campaigns", json={"campaign": campaign, "config": GRR}, headers=ADMIN,
                                  timeout=60).status_code == 201
                assert httpx.post(f"{server.url}/api/campaigns/{campaign}/open", headers=ADMIN, timeout=60).status_code == 200
                burst = Burst(nginx.port, "/dpdist", campaign, devices, batches)

                async def both():
                    return await asyncio.wait_for(asyncio.gather(burst.run(), slowloris(server.port, slow, 3 * header_timeout + 5)),
                                                  timeout)

                started = time.monotonic()
                _, closed = asyncio.run(both())
                took = time.monotonic() - started
                document = httpx.get(f"{server.url}/api/campaigns/{campaign}", headers=ADMIN, timeout=60).json()
                errors = nginx.errors()
        finally:
            server.stop()
    latencies = np.array(burst.latencies) * 1e3
    closed_at = [seconds for seconds in closed if seconds is not None]
    return {
        "devices": devices, "batches_each": batches, "seconds": round(took, 1), "statuses": burst.statuses,
        "bad_gateway": burst.statuses.get(502, 0), "unanswered": burst.unanswered,
        "refusals_without_retry_after": burst.without_retry_after, "acknowledged": len(burst.acknowledged),
        "counted": document["n"], "counted_batches": document["batches"],
        "accepted_p50_ms": round(float(np.percentile(latencies, 50)), 1) if latencies.size else None,
        "accepted_p99_ms": round(float(np.percentile(latencies, 99)), 1) if latencies.size else None,
        "slowloris": slow, "slowloris_still_open": len(closed) - len(closed_at),
        "slowloris_closed_after_max_s": round(max(closed_at), 2) if closed_at else None, "header_timeout": header_timeout,
        "nginx_errors": [line for line in errors.splitlines() if "[error]" in line or "[alert]" in line][:5],
        "load": Path("/proc/loadavg").read_text().split()[0],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=1000)
    parser.add_argument("--batches", type=int, default=3, help="one-report batches per device (3)")
    parser.add_argument("--slowloris", type=int, default=200, help="slowloris connections from one address (200)")
    parser.add_argument("--header-timeout", type=float, default=10.0, help="the service's --header-timeout (10)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds the whole run may take (600)")
    parser.add_argument("--out", default=None, help="also append the result to this file (JSON lines)")
    args = parser.parse_args()
    result = run(args.devices, args.batches, args.slowloris, args.header_timeout, args.timeout)
    print(json.dumps(result), flush=True)
    if args.out:
        with open(args.out, "a") as out:
            out.write(json.dumps(result) + "\n")


if __name__ == "__main__":
    main()
