"""The event loop's side of a one-report batch, in one process: dpdist's ASGI app against the floors'.

``bench_serve.py --cases ratio`` measures whole servers; ``bench_commit_group.py`` their committer threads.  This
script isolates what the event loop's thread does per request above the HTTP parser: each side's ASGI application
called directly (no socket, no parser) on ``PUT /api/campaigns/{campaign}/batches/{batch_id}`` with a one-report
GRR body under a fresh batch id, its committer answering at once (its thread, idle, is not used), ``--requests``
requests a round, ``--repeats`` alternating rounds, each side first in turn:

* **dpdist**: ``create_app`` as ``dpdist serve`` builds it (``--rate-limit 0``, no access log, as the ratio case runs
  it), its group commit's ``commit`` answering each batch with its acknowledgement;
* **floor**: ``floor_app.app`` (Starlette's router, ``Request``, ``Response``), its committer answering "not a
  duplicate";
* **obligations**: ``floor_obligations.app`` (the batch route matched ahead of Starlette, answered with ASGI
  messages), likewise.

The body arrives in one message that ``receive`` already holds, as uvicorn's request cycle holds a small body that
came with its head (dpdist then reads it without a deadline timer).

Usage::

    uv run python benchmarks/bench_request_path.py [--requests 20000] [--repeats 5]

Prints a table and writes ``benchmarks/results/request_path.json``.
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
import uuid
from pathlib import Path

import numpy as np

from dpdist import io, local

sys.path.insert(0, str(Path(__file__).resolve().parent))
import floor_app  # noqa: E402  (beside this script)
from bench_commit_group import CAMPAIGN, CONFIG  # noqa: E402  (the campaign both benchmarks measure)

OUT = Path(__file__).resolve().parent / "results" / "request_path.json"


class _Cycle:
    """uvicorn's request cycle as :func:`dpdist._guard._body.receive_body` sees it: the whole body held already."""

    def __init__(self, body: bytes):
        self.message = {"type": "http.request", "body": body, "more_body": False}
        self.message_event: asyncio.Event | None = None

    async def receive(self) -> dict:
        return self.message


class _Answering:
    """A floor committer that answers at once (``outcome``), on the caller's loop."""

    def __init__(self, outcome):
        self.outcome = outcome

    def put(self, key, future, loop, work=None) -> None:
        future.set_result(self.outcome)


def _dpdist_app(folder: str):
    from dpdist.serve._app import create_app
    from dpdist.serve._group import acknowledgement
    from dpdist.serve._limits import Limits

    app = create_app(f"sqlite:///{folder}/dpdist.sqlite", admin_token="a" * 32,
                     limits=Limits(rate_limit=0, access_log="off"))
    service = app.state.service
    service.store.create(CAMPAIGN, CONFIG)
    service.store.transition(CAMPAIGN, "open")

    async def commit(item):  # the group commit's answer to a new batch, at once
        return acknowledgement(item.campaign_id, item.batch_id, 1, 1, {}, duplicate=False)

    service.committer.commit = commit
    return app


def _obligations_app():
    import floor_obligations  # imported when measured: it sets floor_app's committer class

    return floor_obligations.app


def _scope(batch_id: str, length: int) -> dict:
    path = f"/api/campaigns/{CAMPAIGN}/batches/{batch_id}"
    return {"type": "http", "asgi": {"version": "3.0", "spec_version": "2.3"}, "http_version": "1.1",
            "server": ("127.0.0.1", 8000), "client": ("127.0.0.1", 50000), "scheme": "http", "method": "PUT",
            "root_path": "", "path": path, "raw_path": path.encode(), "query_string": b"", "state": {},
            "headers": [(b"host", b"127.0.0.1:8000"), (b"content-type", b"application/octet-stream"),
                        (b"content-length", str(length).encode())]}


async def _per_request(app, body: bytes, requests: int) -> float:
    """Thread CPU per request of ``app`` (microseconds), every answer a 200."""
    cycle = _Cycle(body)
    cycle.message_event = asyncio.Event()
    cycle.message_event.set()
    statuses: list[int] = []

    async def send(message) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    scopes = [_scope(uuid.uuid4().hex, len(body)) for _ in range(requests)]
    started = time.thread_time()
    for scope in scopes:
        await app(scope, cycle.receive, send)
    spent = time.thread_time() - started
    if set(statuses) != {200}:
        raise RuntimeError(f"expected only 200 answers; got {sorted(set(statuses))}")
    return spent / requests * 1e6


def measure(requests: int, repeats: int) -> list[dict]:
    """Per side, the median over ``repeats`` alternating rounds (after a warm-up round of each)."""
    protocol = local.from_config(CONFIG)
    body = io.encode_record(protocol, protocol.privatize(np.array([3]), rng=1))
    with tempfile.TemporaryDirectory() as folder:
        apps = {"dpdist": _dpdist_app(folder), "floor": floor_app.app, "obligations": _obligations_app()}
        #: the floors share floor_app's committer: each side's, answering at once (the floor: "not a duplicate"; the
        #: obligations floor: not a duplicate, one report read and accepted)
        committers = {"dpdist": [], "floor": [_Answering(False)], "obligations": [_Answering((False, 1, 1))]}
        names = list(apps)
        rounds: dict[str, list[float]] = {name: [] for name in names}

        async def run() -> None:
            for repeat in range(-1, repeats):  # round -1: the warm-up
                for name in names[repeat % len(names):] + names[: repeat % len(names)]:
                    floor_app._COMMITTERS[:] = committers[name]
                    spent = await _per_request(apps[name], body, requests if repeat >= 0 else max(1, requests // 10))
                    if repeat >= 0:
                        rounds[name].append(spent)

        asyncio.run(run())
    return [{"side": name, "requests": requests, "us_per_request": statistics.median(spent), "rounds": spent}
            for name, spent in rounds.items()]


def _table(rows: list[dict]) -> str:
    lines = ["| side | CPU us a request (ASGI app) |", "|---|---|"]
    lines += [f"| {row['side']} | {row['us_per_request']:.1f} |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000, help="requests a round (default 20000)")
    parser.add_argument("--repeats", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    for option in ("requests", "repeats"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be >= 1; got {getattr(args, option)}")
    rows = measure(args.requests, args.repeats)
    print(_table(rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"load": os.getloadavg()[0], "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
