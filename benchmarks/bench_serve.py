"""``dpdist serve`` at population scale: requests per server CPU-second, latency, backpressure, estimates.

Every server is a real ``dpdist serve`` pinned to CPU 0 with ``taskset`` (its
workers too); the load generator runs on CPU 1.  Server CPU is read from
``/proc`` for all of the server's processes (workers and the estimator
included), so the figures per server CPU-second do not depend on how much of
the shared machine the server got.  Every case is bounded in time (seconds),
sends only to 127.0.0.1 and stops its server.  Cases (``--cases``):

``one``
    one report per request (GRR, d = 64, a fresh 32-hex batch id per request),
    ``wrk`` with a Lua script, 64 connections: acknowledged requests per server
    CPU-second and per wall second, p50/p99; SQLite and PostgreSQL.
``workers``
    the same with ``--workers 1`` and ``--workers 2``, three times in turn (both
    pinned to CPU 0: the comparison per CPU-second shows lock contention; wall
    throughput needs a core per worker plus one for ``wrk``, which a 2-core machine
    does not have).
``workers_floor``
    ``workers`` for dpdist and for the durable floor (``benchmarks/floor_app.py`` under
    uvicorn's ``--workers``), in turn, ``--repeats`` times: what a second process on the
    one CPU costs a service that does nothing but the durable group commit (the floor's
    database is SQLite; its groups are its count rows, every process's).
``parsers``
    ``one`` with ``--http h11`` and ``--http httptools``, three alternating pairs
    (the HTTP parser's share of a request's CPU).
``keepalive``
    per-request latency on one keep-alive connection (``GET /healthz`` and a
    one-report ``PUT``, one after the other) with ``--workers 1`` and
    ``--workers 2``, three times in turn (accepted sockets without
    ``TCP_NODELAY`` made every answer on a reused connection wait ~40 ms for the
    client's delayed ACK).
``crowd``
    1,000 concurrent devices, each a keep-alive connection sending one report per
    request and honouring ``Retry-After`` (jittered, as the clients do): p50/p99
    of accepted requests, the slowest refusal, and a SIGKILL of the server in the
    middle (restarted): every acknowledged batch id is counted afterwards.
``batches``
    GRR batches of 10^4 reports: server CPU per batch against numpy's decode and
    count of the same bytes (``np.frombuffer`` + ``np.bincount``).
``ratio``
    dpdist against the Python stack's ceiling: ``dpdist serve`` and a bare
    uvicorn + Starlette app answering 204 to the same PUT (``benchmarks/bare_app.py``,
    both pinned to CPU 0, started once and measured one after the other, ``--repeats``
    alternating pairs), under ``wrk`` with the same requests: one report per request
    and GRR batches of 10^4 one-byte reports, ``--connections`` (default 16 and 64).
    Per server CPU-second: acknowledged requests against the bare app's answered
    requests (the ratio), and for batches reports against the in-process decode +
    count of the same bytes (``np.frombuffer`` + ``np.bincount``); ``wrk``'s own CPU
    and PostgreSQL's are reported beside them.  The durable floor
    (``benchmarks/floor_app.py``) is measured in each round; with ``--obligations``
    also the floor doing only what dpdist's guarantees oblige a service to do per
    batch (``benchmarks/floor_obligations.py``).
``dashboard``
    a PEM campaign at n = 10^6; 1 and then 10 dashboards polling ``/estimate`` and
    ``/history`` every 3 s while reports arrive: server CPU per second with each.

Before and after: ``--baseline SRC`` (the ``src`` folder of another version, e.g.
``git archive main src | tar -x -C /tmp/main``) runs ``one`` and ``crowd``
``--repeats`` times in alternating pairs, that version's server then this one's,
each on a fresh database (the shared machine's load drifts between runs).

Usage::

    uv run python benchmarks/bench_serve.py [--cases one,workers,crowd,batches,ratio,dashboard] [--seconds 6]
        [--databases sqlite,postgresql] [--connections 64] [--baseline /tmp/main/src --repeats 3] [--obligations]
        [--out results.jsonl]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from serve_support import ADMIN_TOKEN, PostgresCluster, ServerProcess, postgres_available  # noqa: E402

from dpdist import io, local  # noqa: E402

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 64}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
#: options of every benchmarked server: no per-address rate limit (all load comes from 127.0.0.1), room for 1,000
#: connections, no access log line per request
SERVER_OPTIONS = ("--rate-limit", "0", "--limit-concurrency", "4096", "--max-pending-heads-per-address", "4096", "--access-log", "off")

LUA = r"""
-- one report per request: PUT a one-report batch under a fresh 32-hex batch id (as dpdist's clients name batches)
-- (args: the body's file, the campaign, a fresh 16-hex prefix per run: ids never repeat between runs)
local counter, prefix, body, campaign = 0, "", nil, nil
local headers = {["Content-Type"] = "application/octet-stream"}
function init(args)
  local file = io.open(args[1], "rb"); body = file:read("*all"); file:close()
  campaign, prefix = args[2], args[3]
end
function request()
  counter = counter + 1
  return wrk.format("PUT", "/api/campaigns/" .. campaign .. "/batches/" .. prefix .. string.format("%016x", counter),
                    headers, body)
end
function done(summary, latency, requests)
  io.write(string.format("STATUS non2xx=%d errors=%d\n", summary.errors.status, summary.errors.connect
    + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
"""


# ---------------------------------------------------------------------- servers
@contextlib.contextmanager
def database(kind: str):
    """A fresh database URL of ``kind`` ("sqlite" or "postgresql"); removed afterwards."""
    with tempfile.TemporaryDirectory() as folder:
        if kind == "sqlite":
            yield str(Path(folder) / "bench.sqlite")
            return
        cluster = PostgresCluster().start()
        try:
            yield cluster.new_database()
        finally:
            cluster.stop()


def database_cpu_seconds(url: str) -> float:
    """CPU seconds of the PostgreSQL server of ``url`` so far (its postmaster and every backend; 0 for SQLite, whose
    work is done by the server's own processes)."""
    import os

    if not url.startswith("postgresql://"):
        return 0.0
    port = url.rsplit(":", 1)[1].split("/")[0]
    ticks, total = os.sysconf("SC_CLK_TCK"), 0
    for pid_file in Path(tempfile.gettempdir()).glob("dpdist-pg-*/data/postmaster.pid"):
        lines = pid_file.read_text().splitlines()
        if len(lines) < 4 or lines[3].strip() != port:
            continue
        postmaster = int(lines[0])
        for stat in Path("/proc").glob("[0-9]*/stat"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = stat.read_text().rsplit(")", 1)[1].split()
                if int(stat.parent.name) == postmaster or int(fields[1]) == postmaster:
                    total += int(fields[11]) + int(fields[12])
    return total / ticks


@contextlib.contextmanager
def server(url: str, *, workers: int = 1, options: tuple = ()):
    process = ServerProcess(url, cpu=0, workers=workers, options=SERVER_OPTIONS + tuple(options), max_body_bytes=64 << 20)
    process.start(timeout=120)
    try:
        yield process
    finally:
        process.stop()


def open_campaign(url: str, config: dict) -> str:
    name = "bench-" + uuid.uuid4().hex[:8]
    assert httpx.post(f"{url}/api/campaigns", json={"campaign": name, "config": config}, headers=ADMIN, timeout=60).status_code == 201
    assert httpx.post(f"{url}/api/campaigns/{name}/open", headers=ADMIN, timeout=60).status_code == 200
    return name


def counted(url: str, campaign: str) -> dict:
    """The campaign's document (asked again after a 503: a loaded machine's server may answer busy)."""
    for _ in range(20):
        answer = httpx.get(f"{url}/api/campaigns/{campaign}", headers=ADMIN, timeout=120)
        if answer.status_code == 200:
            return answer.json()
        time.sleep(float(answer.headers.get("retry-after", 1)))
    raise RuntimeError(f"GET /api/campaigns/{campaign} answered {answer.status_code} 20 times, the last: {answer.text[:500]}")


def load_average() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


# ---------------------------------------------------------------------- one report per request (wrk)
def run_wrk(url: str, campaign: str, body_path: Path, seconds: float, connections: int) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".lua", delete=False) as script:
        script.write(LUA)
    import os

    command = ["taskset", "-c", "1", "wrk", "-t1", f"-c{connections}", f"-d{seconds:g}s", "--latency", "-s", script.name,
               url, "--", str(body_path), campaign, uuid.uuid4().hex[:16]]
    with tempfile.TemporaryFile("w+") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.DEVNULL, text=True)
        _, _, usage = os.wait4(process.pid, 0)  # wrk's own CPU (the load generator's cost, reported beside)
        process.returncode = 0
        out.seek(0)
        output = out.read()
    Path(script.name).unlink()

    def number(pattern: str) -> float:
        found = re.search(pattern, output)
        return float(found.group(1)) if found else float("nan")

    def ms(label: str) -> float:
        found = re.search(rf"{label}\s+([\d.]+)(us|ms|s)\b", output)
        if not found:
            return float("nan")
        return float(found.group(1)) * {"us": 1e-3, "ms": 1.0, "s": 1e3}[found.group(2)]

    return {"requests": int(number(r"(\d+) requests in")), "non_2xx": int(number(r"non2xx=(\d+)")),
            "errors": int(number(r"errors=(\d+)")), "p50_ms": ms("50%"), "p99_ms": ms("99%"),
            "wrk_cpu_s": usage.ru_utime + usage.ru_stime}


def one_per_request(url: str, seconds: float, *, workers: int = 1, connections: int = 64, http: str = "auto") -> dict:
    """Acknowledged one-report requests per server CPU-second (and per second) under ``wrk``."""
    protocol = local.from_config(GRR)
    body_path = Path(tempfile.mkdtemp()) / "one.bin"
    body_path.write_bytes(io.encode_record(protocol, protocol.privatize(np.array([3]), rng=1)))
    with server(url, workers=workers, options=("--http", http)) as process:
        campaign = open_campaign(process.url, GRR)
        run_wrk(process.url, campaign, body_path, 1, 8)  # warm up
        before_n, cpu, wall = counted(process.url, campaign)["n"], process.cpu_seconds(), time.perf_counter()
        db_cpu = database_cpu_seconds(url)
        result = run_wrk(process.url, campaign, body_path, seconds, connections)
        cpu, wall, db_cpu = process.cpu_seconds() - cpu, time.perf_counter() - wall, database_cpu_seconds(url) - db_cpu
        acknowledged = counted(process.url, campaign)["n"] - before_n
        groups = _metric(process.url, "dpdist_group_commits_total")
    shutil.rmtree(body_path.parent)
    return {**result, "acknowledged": acknowledged, "server_cpu_s": cpu, "per_cpu_s": acknowledged / cpu,
            "per_s": acknowledged / wall, "database_cpu_ms_per_request": db_cpu / acknowledged * 1e3 if db_cpu else None,
            "requests_per_group": acknowledged / groups if groups else None, "workers": workers, "http": http,
            "connections": connections, "load": load_average()}


def floor_per_request(seconds: float, *, workers: int = 1, connections: int = 64) -> dict:
    """:func:`one_per_request` for the durable floor (``benchmarks/floor_app.py``) with ``workers`` processes: answered
    requests per server CPU-second; its groups are the rows of its count table (one per group, every process's)."""
    import sqlite3

    protocol = local.from_config(GRR)
    body_path = Path(tempfile.mkdtemp()) / "one.bin"
    body_path.write_bytes(io.encode_record(protocol, protocol.privatize(np.array([3]), rng=1)))
    with floor_server(workers=workers) as process:
        run_wrk(process.url, "floor", body_path, 1, 8)  # warm up

        def groups() -> int:
            with contextlib.closing(sqlite3.connect(process.db_url, timeout=60)) as connection:
                return connection.execute("SELECT count(*) FROM counts").fetchone()[0]

        before, cpu, wall = groups(), process.cpu_seconds(), time.perf_counter()
        result = run_wrk(process.url, "floor", body_path, seconds, connections)
        cpu, wall = process.cpu_seconds() - cpu, time.perf_counter() - wall
        acknowledged = result["requests"] - result["non_2xx"]
        committed = groups() - before
    shutil.rmtree(body_path.parent)
    return {**result, "acknowledged": acknowledged, "server_cpu_s": cpu, "per_cpu_s": acknowledged / cpu,
            "per_s": acknowledged / wall, "requests_per_group": acknowledged / committed if committed else None,
            "workers": workers, "connections": connections, "load": load_average()}


# ---------------------------------------------------------------------- latency on a reused connection
def _exchange(sock, request: bytes) -> float:
    """Send one request on a keep-alive connection and read its whole answer (Content-Length): seconds taken."""
    started = time.perf_counter()
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1))
    while len(body) < length:
        body += sock.recv(65536)
    assert head.startswith(b"HTTP/1.1 200"), head[:80]
    return time.perf_counter() - started


def keep_alive_latency(url: str, *, workers: int, requests: int = 200) -> dict:
    """Per-request latency of ``GET /healthz`` and of a one-report ``PUT`` on one keep-alive connection (this process
    on CPU 1, as a device's client or the relay's forwarder would send them one after the other)."""
    import os
    import socket

    protocol = local.from_config(GRR)
    body = io.encode_record(protocol, protocol.privatize(np.array([3]), rng=1))
    cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {1})  # the client on CPU 1 (the server is pinned to CPU 0)
    with server(url, workers=workers) as process:
        campaign = open_campaign(process.url, GRR)
        results = {"workers": workers, "load": load_average()}
        for name in ("healthz", "put"):
            sock = socket.create_connection(("127.0.0.1", process.port))
            times = []
            for k in range(requests + 10):  # the first 10: warm-up
                if name == "healthz":
                    request = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                else:
                    request = (f"PUT /api/campaigns/{campaign}/batches/{os.urandom(16).hex()} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                               f"Content-Type: application/octet-stream\r\nContent-Length: {len(body)}\r\n\r\n").encode() + body
                elapsed = _exchange(sock, request)
                if k >= 10:
                    times.append(elapsed * 1e3)
            sock.close()
            results[f"{name}_p50_ms"] = float(np.percentile(times, 50))
            results[f"{name}_p90_ms"] = float(np.percentile(times, 90))
            results[f"{name}_mean_ms"] = float(np.mean(times))
    os.sched_setaffinity(0, cpus)
    return results


def _metric(url: str, name: str) -> float:
    """A counter of the server's /metrics (one process: with workers, the one that answered)."""
    text = httpx.get(f"{url}/metrics", headers=ADMIN, timeout=60).text
    found = re.search(rf"^{name} ([0-9.e+]+)$", text, re.M)
    return float(found.group(1)) if found else 0.0


# ---------------------------------------------------------------------- 1,000 devices honouring Retry-After
class Crowd:
    """``devices`` keep-alive connections, each sending one-report batches one after another until ``seconds`` pass;
    a 429/503 is retried after its ``Retry-After`` (x U(1, 1.5)), a dropped connection after 0.5 s (same batch id)."""

    def __init__(self, port: int, campaign: str, body: bytes, devices: int, seconds: float):
        self.port, self.campaign, self.body, self.devices, self.seconds = port, campaign, body, devices, seconds
        self.accepted: list[tuple[float, float]] = []  # (sent at, seconds) per acknowledged request
        self.refused: list[tuple[float, float]] = []  # (sent at, seconds) per 429/503 answer
        self.without_retry_after = 0
        self.acknowledged: set[str] = set()
        self.others: dict[int, int] = {}

    async def _exchange(self, reader, writer, batch_id: str):
        head = (f"PUT /api/campaigns/{self.campaign}/batches/{batch_id} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"Content-Type: application/octet-stream\r\nContent-Length: {len(self.body)}\r\n\r\n").encode()
        start = time.perf_counter()
        writer.write(head + self.body)
        status_line = await reader.readline()
        if not status_line:
            raise ConnectionError("closed")
        headers = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        await reader.readexactly(int(headers.get("content-length", 0)))
        return int(status_line.split()[1]), headers, (start, time.perf_counter() - start)

    async def device(self, rng) -> None:
        import asyncio

        deadline, connection, batch_id = time.perf_counter() + self.seconds, None, uuid.uuid4().hex
        while time.perf_counter() < deadline:
            try:
                if connection is None:
                    connection = await asyncio.open_connection("127.0.0.1", self.port)
                status, headers, took = await self._exchange(*connection, batch_id)
            except (OSError, ConnectionError, asyncio.IncompleteReadError, ValueError, IndexError):
                connection = None
                await asyncio.sleep(0.5)
                continue
            if status == 200:
                self.accepted.append(took)
                self.acknowledged.add(batch_id)
                batch_id = uuid.uuid4().hex
            elif status in (429, 503):
                self.refused.append(took)
                self.without_retry_after += "retry-after" not in headers
                await asyncio.sleep(float(headers.get("retry-after", 1)) * rng.uniform(1.0, 1.5))
            else:
                self.others[status] = self.others.get(status, 0) + 1
            if headers.get("connection", "").lower() == "close":
                connection[1].close()
                connection = None

    async def run(self) -> None:
        import asyncio
        import random

        rng = random.Random(28)
        await asyncio.gather(*(self.device(rng) for _ in range(self.devices)))


def crowd(url: str, seconds: float, devices: int = 1000) -> dict:
    """1,000 devices for ``seconds``, the server SIGKILLed (and restarted) halfway; every acknowledged id counted.

    Latencies are given for the steady state (from 3 s after the start and after the restart: the 1,000 first requests
    of a crowd arrive at once, before any of them could be refused) and for the whole run."""
    import asyncio
    import threading

    protocol = local.from_config(GRR)
    body = io.encode_record(protocol, protocol.privatize(np.array([3]), rng=1))
    with server(url) as process:
        campaign = open_campaign(process.url, GRR)
        load = Crowd(process.port, campaign, body, devices, seconds)
        runner = threading.Thread(target=lambda: _on_cpu_1(lambda: asyncio.run(load.run())))
        start = time.perf_counter()
        runner.start()
        time.sleep(seconds / 2)
        acknowledged_before = len(load.acknowledged)
        process.kill()
        process.start(timeout=120)
        restarted = time.perf_counter()
        runner.join(seconds * 4 + 120)
        rows = counted(process.url, campaign)
    recorded = _recorded_batch_ids(url, campaign)
    steady = [(start + 3, start + seconds / 2), (restarted + 3, start + seconds)]
    return {
        "devices": devices, "seconds": seconds, "acknowledged": len(load.acknowledged), "counted": rows["n"],
        "acknowledged_missing": len(load.acknowledged - recorded), "batches": rows["batches"],
        "acknowledged_before_kill": acknowledged_before, "refusals": len(load.refused),
        "without_retry_after": load.without_retry_after, "other_statuses": load.others, "load": load_average(),
        **_percentiles("accepted", load.accepted, steady), **_percentiles("refusal", load.refused, steady),
    }


def _percentiles(name: str, samples: list, windows: list) -> dict:
    """p50, p99 and max (ms) of ``samples`` (sent at, seconds): in the steady ``windows``, and over the whole run."""
    out = {}
    for label, chosen in (("steady", [took for at, took in samples if any(a <= at < b for a, b in windows)]),
                          ("all", [took for _, took in samples])):
        values = np.array(chosen) * 1e3
        out[f"{name}_{label}"] = (None if not values.size else
                                  {"n": int(values.size), "p50_ms": round(float(np.percentile(values, 50)), 1),
                                   "p99_ms": round(float(np.percentile(values, 99)), 1), "max_ms": round(float(values.max()), 1)})
    return out


def _recorded_batch_ids(url: str, campaign: str) -> set[str]:
    from dpdist.serve._database import open_database

    db = open_database(url)
    try:
        return {row[0] for row in db.execute("SELECT batch_id FROM batches WHERE campaign_id = ?", (campaign,))}
    finally:
        db.close()


def _on_cpu_1(function):
    import os

    os.sched_setaffinity(0, {1})  # this thread only (Linux: affinity is per thread)
    return function()


# ---------------------------------------------------------------------- batches of 10^4 against numpy
def batches(url: str, count: int = 40, size: int = 10_000) -> dict:
    """Server CPU per GRR batch of ``size`` reports against numpy's decode + count of the same bytes."""
    protocol = local.from_config(GRR)
    rng = np.random.default_rng(3)
    reports = [protocol.privatize(rng.integers(0, 64, size), rng=rng) for _ in range(8)]
    uploads = [(batch_id, io.encode_record(protocol, reports[index % 8], batch_id))
               for index, batch_id in enumerate(uuid.uuid4().hex for _ in range(count + 2))]
    payloads = [np.ascontiguousarray(batch).tobytes() for batch in reports]
    numpy_s = min(_numpy_count(payloads, protocol.report_format.dtype) for _ in range(5))
    headers = {"Content-Type": "application/octet-stream"}
    with server(url) as process, httpx.Client(base_url=process.url, timeout=120) as client:
        campaign = open_campaign(process.url, GRR)
        for batch_id, body in uploads[:2]:  # warm up
            client.put(f"/api/campaigns/{campaign}/batches/{batch_id}", content=body, headers=headers)
        cpu, wall = process.cpu_seconds(), time.perf_counter()
        for batch_id, body in uploads[2:]:
            answer = client.put(f"/api/campaigns/{campaign}/batches/{batch_id}", content=body, headers=headers)
            assert answer.json()["accepted"] == size
        cpu, wall = process.cpu_seconds() - cpu, time.perf_counter() - wall
    per_batch = cpu / count
    numpy_per_batch = numpy_s / len(payloads)
    return {"batch": size, "batches": count, "server_cpu_ms_per_batch": per_batch * 1e3,
            "numpy_ms_per_batch": numpy_per_batch * 1e3, "ratio": numpy_per_batch / per_batch,
            "reports_per_cpu_s": size / per_batch, "reports_per_s": size * count / wall, "load": load_average()}


def _numpy_count(payloads: list[bytes], dtype) -> float:
    start = time.process_time()
    for payload in payloads:
        np.bincount(np.frombuffer(payload, dtype=dtype), minlength=64)
    return time.process_time() - start


# ---------------------------------------------------------------------- dpdist against the bare app
class BareProcess(ServerProcess):
    """``benchmarks/bare_app.py`` under uvicorn (httptools, no access log), pinned to ``cpu`` like the server."""

    def command(self) -> list[str]:
        command = [sys.executable, "-m", "uvicorn", "bare_app:app", "--app-dir", str(Path(__file__).resolve().parent),
                   "--http", "httptools", "--no-access-log", "--log-level", "warning", "--host", "127.0.0.1",
                   "--port", str(self.port), "--limit-concurrency", "4096"]
        return ["taskset", "-c", str(self.cpu), *command] if self.cpu is not None else command


class FloorProcess(BareProcess):
    """``benchmarks/floor_app.py`` (the durable floor: a SQLite group commit, acknowledged once durable) under uvicorn,
    its database ``FLOOR_DB`` in a fresh folder, pinned to ``cpu`` like the server."""

    def command(self) -> list[str]:
        command = [part if part != "bare_app:app" else "floor_app:app" for part in super().command()]
        return command + (["--workers", str(self.workers)] if self.workers != 1 else [])

    def environment(self) -> dict:
        return {**super().environment(), "FLOOR_DB": self.db_url}

    def groups(self) -> tuple[int, int]:
        """(groups committed, batches in them) so far."""
        answer = httpx.get(f"{self.url}/floor/counted", timeout=60).json()
        return answer["groups"], answer["items"]


class ObligationsProcess(FloorProcess):
    """``benchmarks/floor_obligations.py`` (the floor doing only what dpdist's guarantees oblige it to), as the floor."""

    def command(self) -> list[str]:
        return [part if part != "floor_app:app" else "floor_obligations:app" for part in super().command()]


@contextlib.contextmanager
def bare_server():
    process = BareProcess("", cpu=0).start(timeout=60)
    try:
        yield process
    finally:
        process.stop()


def _floor_committer():
    """``floor_app.Committer`` (beside this script, which is not a package)."""
    here = str(Path(__file__).resolve().parent)
    if here not in sys.path:
        sys.path.insert(0, here)
    from floor_app import Committer

    return Committer


@contextlib.contextmanager
def floor_server(kind=FloorProcess, workers: int = 1):
    with tempfile.TemporaryDirectory() as folder:
        path = str(Path(folder) / "floor.sqlite")
        if workers != 1:  # its tables and WAL made once, not by two workers' first requests at the same time
            _floor_committer()(path, thread=False).connect().close()
        process = kind(path, cpu=0, workers=workers).start(timeout=60)
        try:
            yield process
        finally:
            process.stop()


def _bodies(kind: str, size: int = 10_000) -> tuple[bytes, int]:
    """The body every request of ``kind`` sends ("one": one GRR report; "batch": ``size`` of them, one record without a
    file id: every request names a fresh batch id) and its reports."""
    protocol = local.from_config(GRR)
    rng = np.random.default_rng(48)
    count = 1 if kind == "one" else size
    return io.encode_record(protocol, protocol.privatize(rng.integers(0, 64, count), rng=rng)), count


def _in_process_rate(body: bytes, reports: int) -> dict:
    """Reports per CPU-second of numpy's decode + count of ``body``'s payload, and of dpdist's own ``decode_body``."""
    from dpdist.serve._ingest import decode_body

    protocol = local.from_config(GRR)
    payload = np.ascontiguousarray(decode_body(protocol, body, "application/octet-stream", None).reports).tobytes()

    def rate(function, repeat: int) -> float:
        best = float("inf")
        for _ in range(5):
            start = time.process_time()
            for _ in range(repeat):
                function()
            best = min(best, (time.process_time() - start) / repeat)
        return reports / best

    repeat = 2000 if reports > 1 else 20000
    return {"numpy_reports_per_cpu_s": rate(lambda: np.bincount(np.frombuffer(payload, np.uint8), minlength=64), repeat),
            "decode_body_reports_per_cpu_s": rate(lambda: decode_body(protocol, body, "application/octet-stream", None),
                                                  repeat // 4)}


def _measure(process, url: str, campaign: str, body_path: Path, seconds: float, connections: int, reports: int,
             db_url: str | None) -> dict:
    """One ``wrk`` run against ``process``: answered (bare) or acknowledged (dpdist) requests per server CPU-second."""
    before = counted(url, campaign) if db_url is not None else None
    groups = _groups(process, db_url)
    threads = thread_cpu(process)
    cpu, db_cpu, wall = process.cpu_seconds(), database_cpu_seconds(db_url or ""), time.perf_counter()
    result = run_wrk(url, campaign, body_path, seconds, connections)
    cpu, wall = process.cpu_seconds() - cpu, time.perf_counter() - wall
    threads = {name: spent - threads[name] for name, spent in thread_cpu(process).items()}
    db_cpu = database_cpu_seconds(db_url or "") - db_cpu
    groups = _groups(process, db_url) - groups
    if before is not None:  # dpdist: what the campaign counted
        acknowledged = (counted(url, campaign)["n"] - before["n"]) // reports
    else:
        acknowledged = result["requests"] - result["non_2xx"]
    return {"acknowledged": acknowledged, "server_cpu_s": round(cpu, 3), "per_cpu_s": acknowledged / cpu,
            "reports_per_cpu_s": acknowledged * reports / cpu, "per_s": acknowledged / wall,
            "database_cpu_ms_per_request": db_cpu / acknowledged * 1e3 if db_cpu and acknowledged else None,
            "wrk_cpu_s": round(result["wrk_cpu_s"], 3), "non_2xx": result["non_2xx"], "errors": result["errors"],
            "p50_ms": result["p50_ms"], "p99_ms": result["p99_ms"], "load": load_average(),
            "requests_per_group": acknowledged / groups if groups > 0 else None,
            # a request's CPU by thread (microseconds): the event loop's and the rest's (the committer), user and system
            "thread_us_per_request": {name: round(spent / acknowledged * 1e6, 1) if acknowledged else None
                                      for name, spent in threads.items()}}


def thread_cpu(process) -> dict[str, float]:
    """CPU seconds so far of the server's threads, user and system apart: ``loop`` (each process's main thread, its
    event loop) and ``others`` (the group committer and every other thread; a worker's or the estimator's too)."""
    ticks = os.sysconf("SC_CLK_TCK")
    spent = dict.fromkeys(("loop_user", "loop_sys", "others_user", "others_sys"), 0.0)
    for pid in process.pids():
        for task in Path(f"/proc/{pid}/task").glob("*"):
            with contextlib.suppress(OSError, ValueError, IndexError):
                fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
                which = "loop" if task.name == str(pid) else "others"
                spent[f"{which}_user"] += int(fields[11]) / ticks
                spent[f"{which}_sys"] += int(fields[12]) / ticks
    return spent


def _groups(process, db_url: str | None) -> float:
    """The group commits of ``process`` so far (dpdist: its metric; the floor: its own count; the bare app: 0)."""
    if isinstance(process, FloorProcess):
        return process.groups()[0]
    return _metric(process.url, "dpdist_group_commits_total") if db_url is not None else 0.0


def ratio(kind: str, seconds: float, connections: tuple = (16, 64), repeats: int = 3, bodies=("one", "batch"),
          baseline: str | None = None, obligations: bool = False):
    """dpdist and the bare app, started once, measured alternately on the same requests (see the module); with
    ``baseline`` (another version's src folder) that version's server too, on its own database, before each pair;
    with ``obligations`` the floor doing what dpdist's guarantees oblige it to (``benchmarks/floor_obligations.py``)
    after the floor."""
    import os

    folder = Path(tempfile.mkdtemp())
    try:
        with contextlib.ExitStack() as stack:
            db_url = stack.enter_context(database(kind))
            dpdist = stack.enter_context(server(db_url))
            bare = stack.enter_context(bare_server())
            floor = stack.enter_context(floor_server())
            obliged = stack.enter_context(floor_server(ObligationsProcess)) if obligations else None
            campaign = open_campaign(dpdist.url, GRR)
            before = None
            if baseline is not None:
                before_url = stack.enter_context(database(kind))
                with _python_path(os, baseline):
                    before = stack.enter_context(server(before_url))
                before_campaign = open_campaign(before.url, GRR)
            for body_kind in bodies:
                body, reports = _bodies(body_kind)
                body_path = folder / f"{body_kind}.bin"
                body_path.write_bytes(body)
                in_process = _in_process_rate(body, reports)
                for count in connections:
                    run_wrk(dpdist.url, campaign, body_path, 1, count)  # warm up each
                    run_wrk(bare.url, campaign, body_path, 1, count)
                    run_wrk(floor.url, campaign, body_path, 1, count)
                    if obliged is not None:
                        run_wrk(obliged.url, campaign, body_path, 1, count)
                    if before is not None:
                        run_wrk(before.url, before_campaign, body_path, 1, count)
                    for repeat in range(repeats):
                        row = {"body": body_kind, "reports": reports, "connections": count, "repeat": repeat}
                        if before is not None:
                            row["baseline"] = _measure(before, before.url, before_campaign, body_path, seconds, count,
                                                       reports, before_url)
                        mine = _measure(dpdist, dpdist.url, campaign, body_path, seconds, count, reports, db_url)
                        durable = _measure(floor, floor.url, campaign, body_path, seconds, count, reports, None)
                        if obliged is not None:
                            row["obligations"] = _measure(obliged, obliged.url, campaign, body_path, seconds, count,
                                                          reports, None)
                        theirs = _measure(bare, bare.url, campaign, body_path, seconds, count, reports, None)
                        row.update({"ratio": mine["per_cpu_s"] / theirs["per_cpu_s"],
                                    "floor_ratio": durable["per_cpu_s"] / theirs["per_cpu_s"],
                                    "of_floor": mine["per_cpu_s"] / durable["per_cpu_s"],
                                    "dpdist": mine, "floor": durable, "bare": theirs})
                        if obliged is not None:
                            row["of_obligations"] = mine["per_cpu_s"] / row["obligations"]["per_cpu_s"]
                            row["obligations_of_floor"] = row["obligations"]["per_cpu_s"] / durable["per_cpu_s"]
                        if before is not None:
                            row["baseline_ratio"] = row["baseline"]["per_cpu_s"] / theirs["per_cpu_s"]
                        if reports > 1:
                            row.update(in_process)
                            row["of_numpy"] = mine["reports_per_cpu_s"] / in_process["numpy_reports_per_cpu_s"]
                        yield row
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# ---------------------------------------------------------------------- dashboards on a PEM campaign
PEM = {"protocol": "pem", "epsilon": 2.0, "alphabet": "abcdefghijklmnopqrstuvwxyz", "max_chars": 12, "k": 20}


def dashboard(url: str, seconds: float, n: int = 1_000_000) -> dict:
    """Server CPU per second with 1 and then 10 dashboards on a PEM campaign of ``n`` reports, while reports arrive."""
    import threading

    protocol = local.from_config(PEM)
    words = np.random.default_rng(0).choice(["apple", "banana", "cherry", "date", "elder", "fig"], size=n,
                                            p=[0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    with server(url) as process, httpx.Client(base_url=process.url, timeout=600) as client:
        campaign = open_campaign(process.url, PEM)
        for start in range(0, n, 100_000):
            batch_id = uuid.uuid4().hex
            body = io.encode_record(protocol, protocol.privatize(words[start : start + 100_000], rng=start), batch_id)
            client.put(f"/api/campaigns/{campaign}/batches/{batch_id}", content=body,
                       headers={"Content-Type": "application/octet-stream"})
        client.get(f"/api/campaigns/{campaign}/estimate", headers=ADMIN)  # the first estimate (and the estimator's start)
        trickle = protocol.privatize(words[:400], rng=1)
        result = {"n": n, "seconds": seconds, "load": load_average()}
        for tabs in (1, 10):
            stop = threading.Event()
            feeder = threading.Thread(target=_trickle, args=(process.url, campaign, protocol, trickle, stop))
            viewers = [threading.Thread(target=_view, args=(process.url, campaign, stop, k * 3.0 / tabs)) for k in range(tabs)]
            cpu = process.cpu_seconds()
            for thread in [feeder, *viewers]:
                thread.start()
            time.sleep(seconds)
            stop.set()
            for thread in [feeder, *viewers]:
                thread.join(120)
            result[f"cpu_per_s_{tabs}_tabs"] = (process.cpu_seconds() - cpu) / seconds
        result["estimate_s"] = _timed_estimate(client, campaign)
    return result


def _trickle(url: str, campaign: str, protocol, reports, stop) -> None:
    """About 20 one-report batches a second: the aggregate keeps changing under the dashboards."""
    with httpx.Client(base_url=url, timeout=60) as client:
        for report in reports:
            if stop.wait(0.05):
                return
            batch_id = uuid.uuid4().hex
            client.put(f"/api/campaigns/{campaign}/batches/{batch_id}", content=io.encode_record(protocol, report[None], batch_id),
                       headers={"Content-Type": "application/octet-stream"})


def _view(url: str, campaign: str, stop, offset: float) -> None:
    """One open dashboard: /estimate and /history every 3 s (the page's REFRESH_MS)."""
    if stop.wait(offset):
        return
    with httpx.Client(base_url=url, timeout=120, headers=ADMIN) as client:
        while True:
            client.get(f"/api/campaigns/{campaign}/estimate")
            client.get(f"/api/campaigns/{campaign}/history")
            if stop.wait(3.0):
                return


def _timed_estimate(client, campaign: str) -> float:
    start = time.perf_counter()
    client.get(f"/api/campaigns/{campaign}/estimate", params={"level": "0.9"}, headers=ADMIN)  # another key: computed
    return time.perf_counter() - start


# ---------------------------------------------------------------------- main
def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="one,workers,crowd,batches,dashboard")
    parser.add_argument("--databases", default="sqlite,postgresql")
    parser.add_argument("--seconds", type=float, default=6.0, help="seconds of load per measurement")
    parser.add_argument("--out", default=None, help="also write the results to this file, one JSON object per line")
    parser.add_argument("--connections", type=int, default=None, help="wrk's connections in 'one' and 'workers_floor' (64) and 'ratio' (16 and 64)")
    parser.add_argument("--bodies", default="one,batch", help="what each request sends in 'ratio': one report, a batch of 10^4")
    parser.add_argument("--baseline", default=None, help="src folder of another version: 'one', 'crowd' and 'ratio' in pairs")
    parser.add_argument("--repeats", type=int, default=3, help="pairs with --baseline (3)")
    parser.add_argument("--obligations", action="store_true",
                        help="'ratio': also the floor doing what dpdist's guarantees oblige it to (floor_obligations.py)")
    args = parser.parse_args()
    if shutil.which("wrk") is None and {"one", "workers", "workers_floor", "parsers", "ratio"} & set(args.cases.split(",")):
        sys.exit("wrk is not installed: apt-get install -y wrk")
    results = []
    for kind in args.databases.split(","):
        if kind == "postgresql" and not postgres_available():
            print("PostgreSQL is not installed; skipped", file=sys.stderr)
            continue
        for case in args.cases.split(","):
            for row in _case(case, kind, args.seconds, args.connections or 64, args.baseline, args.repeats,
                             args.connections is not None, args.bodies, args.obligations):
                row = {"case": case, "database": kind, **row}
                print(json.dumps(row), flush=True)
                results.append(row)
    if args.out:
        Path(args.out).write_text("".join(json.dumps(row) + "\n" for row in results))


def _case(case: str, kind: str, seconds: float, connections: int = 64, baseline: str | None = None, repeats: int = 3,
          connections_given: bool = False, bodies: str = "one,batch", obligations: bool = False):
    if case == "ratio":  # its own servers, one database for all its runs
        counts = (connections,) if connections_given else (16, 64)
        yield from ratio(kind, seconds, counts, repeats, tuple(bodies.split(",")), baseline, obligations)
        return
    if baseline is not None and case in ("one", "crowd"):
        yield from _pairs(case, kind, seconds, connections, baseline, repeats)
        return
    with database(kind) as url:
        if case == "one":
            yield one_per_request(url, seconds, connections=connections)
        elif case == "workers":  # alternating runs: the machine's load drifts between them
            for repeat in range(3):
                for workers in (1, 2):
                    with database(kind) as fresh:
                        yield {"repeat": repeat, **one_per_request(fresh, seconds, workers=workers)}
        elif case == "workers_floor":  # the same for the durable floor, in turn with dpdist's runs
            for repeat in range(repeats):
                for workers in (1, 2):
                    with database(kind) as fresh:
                        yield {"repeat": repeat, "server": "dpdist",
                               **one_per_request(fresh, seconds, workers=workers, connections=connections)}
                    yield {"repeat": repeat, "server": "floor", **floor_per_request(seconds, workers=workers,
                                                                                    connections=connections)}
        elif case == "parsers":  # h11 against httptools, alternating pairs at the same load
            for repeat in range(3):
                for http in ("h11", "httptools"):
                    with database(kind) as fresh:
                        yield {"repeat": repeat, **one_per_request(fresh, seconds, http=http)}
        elif case == "keepalive":  # alternating runs: the machine's load drifts between them
            for repeat in range(3):
                for workers in (1, 2):
                    with database(kind) as fresh:
                        yield {"repeat": repeat, **keep_alive_latency(fresh, workers=workers)}
        elif case == "crowd":
            yield crowd(url, seconds)
        elif case == "batches":
            yield batches(url)
        elif case == "dashboard":
            yield dashboard(url, max(seconds, 15.0))
        else:
            raise SystemExit(f"unknown case {case!r}")


def _pairs(case: str, kind: str, seconds: float, connections: int, baseline: str, repeats: int):
    """``case`` with the server of ``baseline`` (a src folder) and then with this one, ``repeats`` times."""
    import os

    for repeat in range(repeats):
        for version, source in (("baseline", baseline), ("this", None)):
            with _python_path(os, source), database(kind) as fresh:
                row = one_per_request(fresh, seconds, connections=connections) if case == "one" else crowd(fresh, seconds)
                yield {"repeat": repeat, "version": version, **row}


@contextlib.contextmanager
def _python_path(os, source: str | None):
    """Servers started inside run the dpdist of ``source`` (None: this checkout's)."""
    before = os.environ.get("PYTHONPATH")
    if source is not None:
        os.environ["PYTHONPATH"] = str(Path(source).resolve())
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = before


if __name__ == "__main__":
    main()
