"""The Oblivious HTTP gateway against a direct submission: the collector's CPU per report.

Target: ``dpdist serve``'s CPU per report of a batch that comes encapsulated through ``POST /ohttp/gateway``
(RFC 9458: the request opened with HPKE, its Binary HTTP decoded, served by the application, the answer sealed)
within 1.3x of the same batch sent directly (``PUT /api/campaigns/c/batches/{id}``).

One ``dpdist serve`` (SQLite, its per-address rate limit off: every request comes from 127.0.0.1), pinned to CPU 0
with ``taskset``; the load (``--clients`` threads of keep-alive httpx clients) on the other core.  Every request is
made before the clock starts (each batch under its own id, each encapsulation with its own ephemeral key), so the
figure is the server's own: its CPU time read from ``/proc`` before and after each run, over the reports it
acknowledged.  The two kinds run in turns (direct, gateway, direct, gateway, ...), ``--rounds`` times each (short
turns, many of them: at a varying load a turn's pair is closer in time), at
one batch size per line (``--batch-sizes``: GRR d = 64 reports, 1 = the per-request overhead at its largest).
No relay in between: a relay's work is not the collector's.

Usage::

    uv run python benchmarks/bench_ohttp_gateway.py [--requests 500] [--batch-sizes 1,100,10000] [--rounds 15]
        [--out benchmarks/results/ohttp_gateway.json]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from serve_support import ADMIN_TOKEN, ServerProcess  # noqa: E402

from dpdist import local  # noqa: E402
from dpdist._io._binary import encode_record  # noqa: E402
from dpdist.client import AdminClient  # noqa: E402
from dpdist import _ohttp  # noqa: E402
from dpdist._ohttp import _bhttp  # noqa: E402

CONFIG = {"protocol": "grr", "version": 1, "epsilon": 1.0, "domain_size": 64}


class Collector(ServerProcess):
    """``dpdist serve`` without its per-address rate limit."""

    def environment(self) -> dict:
        return {**super().environment(), "DPDIST_RATE_LIMIT": "0"}


def _requests(collector: str, kind: str, count: int, batch_size: int, run: str, config: _ohttp.KeyConfig):
    """``count`` requests of ``kind`` (``direct`` or ``gateway``), each a batch of ``batch_size`` fresh reports."""
    protocol = local.from_config(CONFIG)
    rng = np.random.default_rng(zlib.crc32(run.encode()))
    authority = collector.split("//", 1)[1]
    made = []
    for index in range(count):
        batch_id = f"{zlib.crc32(run.encode()):08x}{index:024x}"  # 32 hex digits, unique per run and request
        body = encode_record(protocol, protocol.privatize(rng.integers(0, 64, batch_size), rng=rng), batch_id)
        path = f"/api/campaigns/c/batches/{batch_id}"
        if kind == "direct":
            made.append(("PUT", path, body, "application/octet-stream"))
            continue
        inner = _bhttp.Request("PUT", "http", authority, path, ((b"content-type", b"application/octet-stream"),), body)
        encapsulated, _ = _ohttp.encapsulate_request(config, _bhttp.encode_request(inner))
        made.append(("POST", "/ohttp/gateway", encapsulated, _ohttp.REQUEST_CONTENT_TYPE))
    return made


def _send(collector: Collector, made: list, clients: int) -> tuple[int, float, float]:
    """Send ``made`` with ``clients`` threads: (acknowledged, the server's CPU seconds, wall seconds)."""
    shares = [made[index::clients] for index in range(clients)]

    def worker(share) -> int:
        ok = 0
        with httpx.Client(base_url=collector.url, timeout=60) as http:
            for method, path, body, content_type in share:
                answer = http.request(method, path, content=body, headers={"content-type": content_type})
                ok += answer.status_code == 200
        return ok

    cpu, wall = collector.cpu_seconds(), time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        acknowledged = sum(pool.map(worker, shares))
    return acknowledged, collector.cpu_seconds() - cpu, time.perf_counter() - wall


def _figure(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:#.3g}"


def page_table(record: dict) -> list[str]:
    """The table of ``docs/reference/benchmarks/anonymity.md`` ("The Oblivious HTTP gateway against a direct submission") made from a
    results ``record``: per batch size, the medians, their ratio and each round's ratio."""
    rows = ["| reports per batch | direct, CPU-µs per report | gateway, CPU-µs per report | gateway / direct | "
            "each round's gateway / direct |", "|---:|---:|---:|---:|---:|"]
    for line in record["lines"]:
        rounds = ", ".join(f"{gateway / direct:.2f}" for direct, gateway in zip(line["runs_us"]["direct"],
                                                                                  line["runs_us"]["gateway"]))
        rows.append(f"| {line['batch_size']:,} | {_figure(line['direct_cpu_us_per_report'])} | "
                    f"{_figure(line['gateway_cpu_us_per_report'])} | {line['ratio']:.2f} | {rounds} |")
    return rows


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--batch-sizes", default="1,100,10000")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--out", default=None)
    options = parser.parse_args(argv)
    lines = []
    with tempfile.TemporaryDirectory() as folder:
        collector = Collector(str(Path(folder) / "c.sqlite"), cpu=0,
                              options=("--limit-concurrency", "4096", "--max-pending-heads-per-address", "4096")).start()
        try:
            with AdminClient(collector.url, admin_token=ADMIN_TOKEN) as operator:
                operator.create_campaign("c", CONFIG)
                operator.open_campaign("c")
            (config, *_) = _ohttp.decode_key_list(httpx.get(collector.url + "/ohttp/keys").content)
            for batch_size in (int(size) for size in options.batch_sizes.split(",")):
                per_report: dict[str, list[float]] = {"direct": [], "gateway": []}
                for turn in range(options.rounds):
                    for kind in ("direct", "gateway"):
                        made = _requests(collector.url, kind, options.requests, batch_size, f"{kind}{batch_size}r{turn}", config)
                        acknowledged, cpu, wall = _send(collector, made, options.clients)
                        if acknowledged != len(made):
                            raise SystemExit(f"{kind}: {acknowledged} of {len(made)} requests acknowledged")
                        per_report[kind].append(cpu / (acknowledged * batch_size))
                        print(f"batch {batch_size:>5} {kind:>8}: {acknowledged} requests, {cpu:.2f} CPU-s, {wall:.2f} s wall, "
                              f"{1e6 * per_report[kind][-1]:.1f} CPU-us per report", flush=True)
                direct, gateway = (statistics.median(per_report[kind]) for kind in ("direct", "gateway"))
                lines.append({"batch_size": batch_size, "requests": options.requests, "rounds": options.rounds,
                              "direct_cpu_us_per_report": 1e6 * direct, "gateway_cpu_us_per_report": 1e6 * gateway,
                              "ratio": gateway / direct, "runs_us": {kind: [1e6 * value for value in values]
                                                                     for kind, values in per_report.items()}})
                print(f"batch {batch_size}: gateway / direct = {gateway / direct:.3f} (median of {options.rounds})", flush=True)
        finally:
            collector.kill()
    record = {"benchmark": "ohttp_gateway", "date": time.strftime("%Y-%m-%d"), "machine": platform.machine(),
              "python": platform.python_version(), "clients": options.clients, "config": CONFIG, "lines": lines}
    print("\n".join(page_table(record)))
    if options.out:
        Path(options.out).write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
