"""What the access line adds to a request's CPU: ``--access-log off`` beside each mode and format.

``--server`` (the figure docs/reference/benchmarks/service.md states): a whole ``dpdist serve`` (``bench_serve.py``'s options: pinned to
CPU 0, ``--rate-limit 0``; ``--log-level info``, its log to a file) under ``wrk`` (CPU 1, 16 connections, one report
per request, as ``bench_serve.py --cases one``), with ``--access-log off`` and with the default, started in turn
``--repeats`` times: server CPU (every process of it, from ``/proc``) per acknowledged request.

Without it, the line alone: ``AccessLog.write`` on the scope of a batch ``PUT`` (a fresh request id, the route's
parameters, an ``Authorization`` header), in an event loop as the server calls it, ``--requests`` lines a round to a
file, ``--repeats`` alternating rounds of each mode and format: thread CPU per line, the median of the rounds.  A
line's CPU over a request's server CPU with the log off is what the log adds to a request.

Usage::

    uv run python benchmarks/bench_access_log.py [--requests 20000] [--repeats 5]
    uv run python benchmarks/bench_access_log.py --server [--seconds 6] [--repeats 3]

Prints a table and writes ``benchmarks/results/access_log.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dpdist import io, local

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from bench_commit_group import CAMPAIGN  # noqa: E402  (the campaign bench_request_path measures)

OUT = Path(__file__).resolve().parent / "results" / "access_log.json"
#: the sides: (--access-log, --log-format)
SIDES = {"off": ("off", "text"), "anonymous, text (the default)": ("anonymous", "text"),
         "anonymous, json": ("anonymous", "json"), "full, text": ("full", "text")}


def measure(requests: int, repeats: int) -> list[dict]:
    """Per side, the thread CPU of one line (microseconds): the median over ``repeats`` alternating rounds."""
    from dpdist.serve._access import AccessLog
    from dpdist.serve._logs import REQUEST_ID

    route = "/api/campaigns/{campaign}/batches/{batch_id}"
    scope = {"type": "http", "method": "PUT", "path": f"/api/campaigns/{CAMPAIGN}/batches/{'5' * 32}", "http_version": "1.1",
             "client": ("127.0.0.1", 50000), "path_params": {"campaign": CAMPAIGN, "batch_id": "5" * 32},
             "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/octet-stream"),
                         (b"content-length", b"40"), (b"authorization", b"Bearer " + b"t" * 32)]}
    rounds: dict[str, list[float]] = {name: [] for name in SIDES if name != "off"}

    async def run(lines) -> None:
        REQUEST_ID.set("0f" * 16)
        logs = {name: AccessLog(*SIDES[name], lines, campaigns={CAMPAIGN}) for name in rounds}
        names = list(logs)
        for repeat in range(-1, repeats):  # round -1: the warm-up
            for name in names[repeat % len(names):] + names[: repeat % len(names)]:
                write, started = logs[name].write, time.thread_time()
                for _ in range(requests):
                    write(scope, route, 200, 0.0)
                if repeat >= 0:
                    rounds[name].append((time.thread_time() - started) / requests * 1e6)
            await asyncio.sleep(0)

    with tempfile.TemporaryDirectory() as folder, open(Path(folder) / "access.log", "w") as lines:
        asyncio.run(run(lines))
    return [{"side": name, "requests": requests, "us_per_line": statistics.median(spent), "rounds": spent}
            for name, spent in rounds.items()]


def measure_servers(seconds: float, repeats: int) -> list[dict]:
    """Per ``--access-log`` (off, then the default, in turn), the median over ``repeats`` servers of the server CPU per
    acknowledged one-report request under ``wrk``."""
    import bench_serve
    from serve_support import ServerProcess

    protocol = local.from_config(bench_serve.GRR)
    spent: dict[str, list[float]] = {"off": [], "anonymous": []}
    with tempfile.TemporaryDirectory() as folder:
        body = Path(folder) / "one.bin"
        body.write_bytes(io.encode_record(protocol, protocol.privatize(np.array([3]), rng=1)))
        for repeat in range(repeats):
            for mode in list(spent)[repeat % 2:] + list(spent)[: repeat % 2]:
                options = (*[option for option in bench_serve.SERVER_OPTIONS[:-2]], "--access-log", mode)
                process = ServerProcess(f"sqlite:///{folder}/{repeat}-{mode}.sqlite", cpu=0, options=options,
                                        log_path=Path(folder) / f"{repeat}-{mode}.log", log_level="info")
                process.start(timeout=120)
                try:
                    campaign = bench_serve.open_campaign(process.url, bench_serve.GRR)
                    bench_serve.run_wrk(process.url, campaign, body, 1, 8)  # warm up
                    before, cpu = bench_serve.counted(process.url, campaign)["n"], process.cpu_seconds()
                    bench_serve.run_wrk(process.url, campaign, body, seconds, 16)
                    cpu = process.cpu_seconds() - cpu
                    spent[mode].append(cpu / (bench_serve.counted(process.url, campaign)["n"] - before) * 1e6)
                finally:
                    process.stop()
    return [{"side": mode, "seconds": seconds, "us_per_request": statistics.median(rounds), "rounds": rounds}
            for mode, rounds in spent.items()]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000, help="requests a round (default 20000)")
    parser.add_argument("--repeats", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--server", action="store_true", help="whole servers under wrk (see the module)")
    parser.add_argument("--seconds", type=float, default=6.0, help="--server: seconds of wrk per server (default 6)")
    parser.add_argument("--out", type=Path, default=None, help="default: benchmarks/results/access_log[_server].json")
    args = parser.parse_args(argv)
    for option in ("requests", "repeats", "seconds"):
        if getattr(args, option) <= 0:
            parser.error(f"--{option} must be > 0; got {getattr(args, option)}")
    rows = measure_servers(args.seconds, args.repeats) if args.server else measure(args.requests, args.repeats)
    args.out = args.out or OUT.with_name("access_log_server.json" if args.server else OUT.name)
    key = "us_per_request" if args.server else "us_per_line"
    print(f"| --access-log | CPU us {'a request (whole server)' if args.server else 'a line'} |\n|---|---|")
    print("\n".join(f"| {row['side']} | {row[key]:.1f} |" for row in rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"load": os.getloadavg()[0], "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
