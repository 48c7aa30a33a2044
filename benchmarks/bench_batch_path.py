"""Where a batch of 10^4 reports costs the server its CPU, in one process: the ASGI app and its group commit.

``bench_serve.py --cases ratio --bodies batch`` measures a whole server under ``wrk`` against numpy's decode + count of
the same bytes.  This script drives what the server does above the HTTP parser, deterministically:
``create_app`` as ``dpdist serve`` builds it (``--rate-limit 0``, no access log, as the ratio case runs it), its
committer thread started, ``--concurrency`` requests at a time (each ``PUT /api/campaigns/{campaign}/batches/{id}`` of
one GRR record of ``--size`` one-byte reports, d = 64, under a fresh batch id), ``--batches`` requests a round, every
answer a 200 and every report counted.  Per batch: the process's CPU (every thread), the event loop's thread's, and the
rest's (the committer); numpy's ``np.bincount(np.frombuffer(payload, np.uint8), minlength=64)`` of the same payload.

With ``--profile`` each thread runs under ``cProfile`` (call counts and cumulative times: load-insensitive) and the
functions that cost most are printed per thread.

Usage::

    uv run python benchmarks/bench_batch_path.py [--database sqlite|postgresql] [--batches 400] [--concurrency 16]
        [--size 10000] [--repeats 3] [--profile]

Prints a line a round and writes ``benchmarks/results/batch_path.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import cProfile
import io as text_io
import json
import os
import pstats
import statistics
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np

from dpdist import io, local

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_commit_group import CAMPAIGN  # noqa: E402  (beside this script; the campaign _scope names)
from bench_request_path import _Cycle, _scope  # noqa: E402

OUT = Path(__file__).resolve().parent / "results" / "batch_path.json"
GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 64}


@contextlib.contextmanager
def _database(kind: str):
    """A fresh database URL of ``kind`` (a PostgreSQL cluster of its own, as ``bench_serve.py`` starts one)."""
    from bench_serve import database

    with database(kind) as url:
        yield url if kind != "sqlite" else f"sqlite:///{url}"


def _app(url: str):
    from dpdist.serve._app import create_app
    from dpdist.serve._limits import Limits

    app = create_app(url, admin_token="a" * 32, max_body_bytes=64 << 20,
                     limits=Limits(rate_limit=0, access_log="off", max_inflight_bytes=1 << 30))
    service = app.state.service
    service.store.create(CAMPAIGN, GRR)
    service.store.transition(CAMPAIGN, "open")
    service.start()
    return app


def _body(size: int) -> tuple[bytes, bytes]:
    """The request body (one record of ``size`` GRR reports, no file id) and its reports' payload."""
    protocol = local.from_config(GRR)
    rng = np.random.default_rng(48)
    reports = protocol.privatize(rng.integers(0, 64, size), rng=rng)
    return io.encode_record(protocol, reports), np.ascontiguousarray(reports).tobytes()


async def _round(app, body: bytes, batches: int, concurrency: int) -> tuple[float, float]:
    """Process and loop-thread CPU seconds for ``batches`` requests, ``concurrency`` at a time, every answer a 200."""
    statuses: list[int] = []

    async def send(message) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def client(count: int) -> None:
        cycle = _Cycle(body)
        cycle.message_event = asyncio.Event()
        cycle.message_event.set()
        for _ in range(count):
            await app(_scope(uuid.uuid4().hex, len(body)), cycle.receive, send)

    shares = [batches // concurrency + (index < batches % concurrency) for index in range(concurrency)]
    process, loop = time.process_time(), time.thread_time()
    await asyncio.gather(*(client(share) for share in shares))
    process, loop = time.process_time() - process, time.thread_time() - loop
    if set(statuses) != {200}:
        raise RuntimeError(f"expected only 200 answers; got {sorted(set(statuses))}")
    return process, loop


def _numpy_us(payload: bytes, repeat: int = 2000) -> float:
    """numpy's decode + count of ``payload`` (microseconds, best of 5)."""
    best = float("inf")
    for _ in range(5):
        started = time.process_time()
        for _ in range(repeat):
            np.bincount(np.frombuffer(payload, np.uint8), minlength=64)
        best = min(best, (time.process_time() - started) / repeat)
    return best * 1e6


@contextlib.contextmanager
def _profiled(profiles: list, service):
    """This thread and every thread started in the block (the committer's, stopped first: it starts again with the
    next batch) under a ``cProfile.Profile`` of its own timed by the thread's CPU clock (appended to ``profiles``)."""
    def first_call(*_):  # the new thread's first profile event: its own profiler replaces this hook
        profile = cProfile.Profile(time.thread_time)
        profiles.append(profile)
        profile.enable()

    service.committer.stop()
    mine = cProfile.Profile(time.thread_time)
    profiles.append(mine)
    threading.setprofile(first_call)
    mine.enable()
    try:
        yield
    finally:
        mine.disable()
        threading.setprofile(None)  # type: ignore[arg-type]


def _print_profiles(profiles: list, top: int = 45) -> None:
    for profile in profiles:
        if not profile.getstats() or pstats.Stats(profile).total_tt < 0.01:
            continue  # an idle thread (the thread pool's)
        profile.disable()  # (another thread's: stops collecting what it has)
        for key in ("tottime", "cumulative"):
            out = text_io.StringIO()
            pstats.Stats(profile, stream=out).sort_stats(key).print_stats(top)
            print(out.getvalue())


def measure(kind: str, size: int, batches: int, concurrency: int, repeats: int, profile: bool) -> list[dict]:
    body, payload = _body(size)
    rows = []
    with _database(kind) as url:
        app = _app(url)
        profiles: list = []
        try:
            asyncio.run(_round(app, body, max(concurrency, batches // 10), concurrency))  # warm-up
            with _profiled(profiles, app.state.service) if profile else contextlib.nullcontext():
                for _ in range(repeats):
                    process, loop = asyncio.run(_round(app, body, batches, concurrency))
                    rows.append({"process_us": process / batches * 1e6, "loop_us": loop / batches * 1e6})
        finally:
            app.state.service.close()
        if profile:
            _print_profiles(profiles)
    numpy_us = _numpy_us(payload)
    for row in rows:
        row.update({"committer_us": row["process_us"] - row["loop_us"], "numpy_us": numpy_us,
                    "of_numpy": numpy_us / row["process_us"]})
    return rows


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", default="sqlite", choices=("sqlite", "postgresql"))
    parser.add_argument("--size", type=int, default=10_000, help="reports a batch (default 10000)")
    parser.add_argument("--batches", type=int, default=400, help="batches a round (default 400)")
    parser.add_argument("--concurrency", type=int, default=16, help="requests at a time (default 16)")
    parser.add_argument("--repeats", type=int, default=3, help="rounds (default 3)")
    parser.add_argument("--profile", action="store_true", help="each thread under cProfile, the top functions printed")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    for option in ("size", "batches", "concurrency", "repeats"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be >= 1; got {getattr(args, option)}")
    rows = measure(args.database, args.size, args.batches, args.concurrency, args.repeats, args.profile)
    print(f"load {os.getloadavg()[0]:.2f}; {args.database}, {args.size} reports a batch, {args.concurrency} at a time")
    for row in rows:
        print(f"process {row['process_us']:.0f} us a batch (loop {row['loop_us']:.0f}, others {row['committer_us']:.0f});"
              f" numpy {row['numpy_us']:.1f} us: 1/{1 / row['of_numpy']:.1f}")
    print(f"median process {statistics.median(row['process_us'] for row in rows):.0f} us a batch")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"load": os.getloadavg()[0], "database": args.database, "size": args.size,
                                    "concurrency": args.concurrency, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
