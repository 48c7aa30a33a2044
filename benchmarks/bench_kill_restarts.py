"""Devices across restarts: concurrent ``dpdist submit`` commands while the service is SIGKILLed and restarted.

``--submitters`` commands (default 6), each sending ``--values`` values (default 50,000) of a GRR d = 16 campaign in
batches of ``--batch-size`` (default 500), start at once; every ``--up`` seconds (default 3) the service (one
``dpdist serve`` process group, SQLite or PostgreSQL) is SIGKILLed, stays down ``--down`` seconds (default 1) and is
started again on the same port, ``--kills`` times (default 5).  Each command must finish on its first run (exit 0:
it retries refused connections and 503s within its ``--retry-window``, its journal making every resend safe) and
the campaign's ``n`` must be exactly the values sent (nothing lost, nothing counted twice).

Printed (one JSON object): the database, each command's exit code, how many were still running when the last restart
ended (the kills must fall inside the run for the test to mean anything), the restart times, the load average at
each kill, ``n`` against the values sent.  Everything listens on 127.0.0.1 and stops by itself.  Usage::

    uv run python benchmarks/bench_kill_restarts.py --database sqlite|postgresql [--submitters 6] [--values 50000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from serve_support import ADMIN_TOKEN, ServerProcess, database_url  # noqa: E402

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 16}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}


def _device_files(folder: Path, submitters: int, values: int) -> list[Path]:
    drawn = np.random.default_rng(61).integers(0, 16, submitters * values)
    files = []
    for index in range(submitters):
        path = folder / f"device{index}.csv"
        path.write_text("v\n" + "\n".join(map(str, drawn[index * values : (index + 1) * values])) + "\n")
        files.append(path)
    return files


def _submit(url: str, data: Path, journal: Path, batch_size: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dpdist.cli", "submit", str(data), "--campaign", "c", "--column", "v", "--server", url,
         "--batch-size", str(batch_size), "--journal", str(journal)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={key: value for key, value in os.environ.items() if not key.startswith("DPDIST_")},
    )


def run(args: argparse.Namespace, folder: Path) -> dict:
    files = _device_files(folder, args.submitters, args.values)
    with database_url(args.database, folder) as url:
        server = ServerProcess(url, options=("--rate-limit", "0")).start(timeout=120)
        try:
            for step in ({"campaign": "c", "config": GRR}, None):
                path = "/api/campaigns" if step else "/api/campaigns/c/open"
                answer = httpx.post(f"{server.url}{path}", json=step, headers=ADMIN, timeout=60)
                answer.raise_for_status()
            started = time.monotonic()
            running = [_submit(server.url, path, folder / f"journal{index}", args.batch_size)
                       for index, path in enumerate(files)]
            restarts, loads = [], []
            for _ in range(args.kills):
                time.sleep(args.up)
                server.kill()
                loads.append(round(os.getloadavg()[0], 1))
                time.sleep(args.down)
                begun = time.monotonic()
                server.start(timeout=120)
                restarts.append(round(time.monotonic() - begun, 1))
            alive = sum(process.poll() is None for process in running)
            kills_over = time.monotonic() - started
            for process in running:
                process.communicate(timeout=args.timeout)
            document = httpx.get(f"{server.url}/api/campaigns/c", headers=ADMIN, timeout=60).json()
        finally:
            server.stop()
    return {
        "database": args.database, "exit_codes": [process.returncode for process in running],
        "running_after_the_last_restart": alive, "kills_over_s": round(kills_over, 1),
        "all_done_s": round(time.monotonic() - started, 1), "restart_s": restarts, "load_at_kills": loads,
        "n": document["n"], "values_sent": args.submitters * args.values,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--database", choices=("sqlite", "postgresql"), default="sqlite")
    parser.add_argument("--submitters", type=int, default=6)
    parser.add_argument("--values", type=int, default=50_000)
    parser.add_argument("--batch-size", type=int, default=500)
    parser.add_argument("--kills", type=int, default=5)
    parser.add_argument("--up", type=float, default=3.0, help="seconds the service runs between kills")
    parser.add_argument("--down", type=float, default=1.0, help="seconds nothing listens after each kill")
    parser.add_argument("--timeout", type=float, default=1200.0, help="seconds a command may take in all")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dpdist-kill-") as folder:
        print(json.dumps(run(args, Path(folder))))


if __name__ == "__main__":
    main()
