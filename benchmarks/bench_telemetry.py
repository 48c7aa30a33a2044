"""What OpenTelemetry costs a device's request: the extra absent, installed but off, and on.

The request path of ``bench_request_path.py`` (``dpdist serve``'s ASGI app called directly on ``PUT
/api/campaigns/{campaign}/batches/{batch_id}`` with a one-report GRR body under a fresh batch id; no socket, no
parser, no access log), its group commit answering at once after the committer's own ``commit`` (where a request's
span is kept for its group's), in a fresh process per side and round, ``--repeats`` rounds, the sides in turn:

* **absent**: ``opentelemetry`` cannot be imported (as without ``dpdist[otel]``), no ``OTEL_*`` variable;
* **installed, off**: the extra installed, no ``OTEL_*`` variable (the default);
* **on**: ``OTEL_EXPORTER_OTLP_ENDPOINT`` set, spans exported (every 100 ms) to an OTLP/HTTP receiver in this
  process (tests/otlp_support.py): the span of each request and of its group commit.

Thread CPU of the event loop per request (microseconds), median of the rounds; the spread of the rounds is the noise
the absent and off sides are compared within.  The exporter's own thread is not the request's and is not counted.

Usage::

    uv run python benchmarks/bench_telemetry.py [--requests 20000] [--repeats 5]

Prints a table and writes ``benchmarks/results/telemetry.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "results" / "telemetry.json"
SIDES = ("absent", "installed, off", "on")

#: one side's round, in a fresh process: argv[1] the side, argv[2] the requests; prints microseconds a request
CHILD = """
import asyncio, sys, tempfile
side, requests = sys.argv[1], int(sys.argv[2])
if side == "absent":
    sys.modules["opentelemetry"] = None  # as without the extra: any import of it raises
sys.path.insert(0, sys.argv[3])
import numpy as np
from dpdist import io, local
from dpdist._io._single_writer import SingleWriter
from dpdist.serve._group import acknowledgement
import bench_request_path as path

async def answered(self, item):  # the group's answer to a new batch, at once (after GroupCommitter.commit's own step)
    return acknowledgement(item.campaign_id, item.batch_id, 1, 1, {}, duplicate=False)

async def run(app, body):
    await path._per_request(app, body, max(1, requests // 10))  # warm-up
    return await path._per_request(app, body, requests)

SingleWriter.commit = answered
protocol = local.from_config(path.CONFIG)
body = io.encode_record(protocol, protocol.privatize(np.array([3]), rng=1))
with tempfile.TemporaryDirectory() as folder:
    from dpdist.serve._app import create_app
    from dpdist.serve._limits import Limits
    app = create_app(f"sqlite:///{folder}/dpdist.sqlite", admin_token="a" * 32, limits=Limits(rate_limit=0, access_log="off"))
    app.state.service.store.create(path.CAMPAIGN, path.CONFIG)
    app.state.service.store.transition(path.CAMPAIGN, "open")
    print(asyncio.run(run(app, body)))
    from dpdist._http import _telemetry
    _telemetry.stop()
"""


def _environment(side: str, endpoint: str | None) -> dict:
    environment = {name: value for name, value in os.environ.items() if not name.startswith("OTEL_")}
    if side == "on":
        environment.update(OTEL_EXPORTER_OTLP_ENDPOINT=endpoint or "", OTEL_BSP_SCHEDULE_DELAY="100")
    return environment


def measure(requests: int, repeats: int) -> tuple[list[dict], int]:
    """Per side, the median and the rounds of event-loop CPU per request; and the spans the receiver got."""
    sys.path.insert(0, str(HERE.parent / "tests"))
    from otlp_support import OTLPReceiver

    rounds: dict[str, list[float]] = {side: [] for side in SIDES}
    with OTLPReceiver(max_seconds=3600) as receiver:
        for repeat in range(repeats):
            for side in SIDES[repeat % len(SIDES):] + SIDES[: repeat % len(SIDES)]:
                run = subprocess.run([sys.executable, "-c", CHILD, side, str(requests), str(HERE)], capture_output=True,
                                     text=True, env=_environment(side, receiver.endpoint), timeout=1800)
                if run.returncode != 0:
                    raise RuntimeError(f"the {side} side failed: {run.stderr[-2000:]}")
                rounds[side].append(float(run.stdout.split()[-1]))
        spans = len(receiver.spans())
    rows = [{"side": side, "requests": requests, "us_per_request": statistics.median(spent),
             "spread_us": max(spent) - min(spent), "rounds": spent} for side, spent in rounds.items()]
    return rows, spans


def _table(rows: list[dict]) -> str:
    absent = rows[0]["us_per_request"]
    lines = ["| side | CPU us a request (event loop) | spread of the rounds (us) | over absent |", "|---|---|---|---|"]
    lines += [f"| {row['side']} | {row['us_per_request']:.1f} | {row['spread_us']:.1f} | "
              f"{row['us_per_request'] / absent:.3f} |" for row in rows]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=20_000, help="requests a round (default 20000)")
    parser.add_argument("--repeats", type=int, default=5, help="rounds of each side (default 5)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    for option in ("requests", "repeats"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be >= 1; got {getattr(args, option)}")
    rows, spans = measure(args.requests, args.repeats)
    if spans == 0:  # (the exporter drops what its queue cannot hold: 2,048 spans)
        raise RuntimeError("the receiver got no span of the on side")
    print(_table(rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"load": os.getloadavg()[0], "spans_received": spans, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
