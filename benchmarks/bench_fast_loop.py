"""What the fast loop costs a newcomer: a fresh clone, ``uv sync``, then ``uv run pytest -m "not slow"`` twice.

For each ``--into`` folder, side by side (so that the clones see one load; default: the temporary directory and the
folder that holds this checkout, so that one clone lies inside the temporary directory and one outside it): ``git
clone`` of ``--source`` (default: this checkout's committed ``HEAD``) into a fresh folder there, ``uv sync``, and
``--runs`` runs of the loop in the clone (the first compiles every module's bytecode: cold; the next are warm), each
under ``/usr/bin/time``, in this process's environment less what an enclosing virtual environment or test session set
(``VIRTUAL_ENV``, ``PYTHONPYCACHEPREFIX``, ``DPDIST_CACHE_DIR``). Per run: the suite's own counter (tests/cpu_time.py:
user + system CPU-s of the pytest process and the children it reaped, and the part inside the tests), user + system and
wall seconds by ``/usr/bin/time``, the tests passed, and the load average before and after. The clone is removed
afterwards (``--keep`` keeps it).

Usage::

    uv run python benchmarks/bench_fast_loop.py [--into /tmp --into /work] [--runs 2] [-- PYTEST ARGUMENTS]

Prints a table and writes ``benchmarks/results/fast_loop.json``; docs/how-to/contribute.md and
docs/reference/benchmarks/test-suite.md ("The fast loop") quote it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "fast_loop.json"
#: variables an enclosing virtual environment or test session set, which a newcomer's shell has not
INHERITED = ("VIRTUAL_ENV", "PYTHONPYCACHEPREFIX", "DPDIST_CACHE_DIR")
#: the suite's counter (tests/cpu_time.py) and pytest's closing line
COUNTER = re.compile(r"this session: ([\d.]+) CPU-s .*?\(([\d.]+) inside (\d+) tests")
CLOSING = re.compile(r"(\d+) passed.* in ([\d.]+)s")


def run_loop(clone: Path, pytest_args: list[str], environment: dict[str, str]) -> dict:
    """One run of the loop in ``clone`` under ``/usr/bin/time``: its figures."""
    times = clone.parent / f"{clone.name}.time"
    load_before = os.getloadavg()[0]
    run = subprocess.run(["/usr/bin/time", "-o", str(times), "-f", "%e %U %S", "uv", "run", "pytest", *pytest_args],
                         cwd=clone, env=environment, capture_output=True, text=True)
    wall, user, system = (float(value) for value in times.read_text().split()[-3:])
    times.unlink()
    counter, closing = COUNTER.search(run.stdout), CLOSING.search(run.stdout)
    if run.returncode != 0 or counter is None or closing is None:
        raise RuntimeError(f"the loop in {clone} ended with code {run.returncode}:\n{run.stdout[-3000:]}{run.stderr[-2000:]}")
    return {"cpu_s": float(counter[1]), "cpu_s_inside_tests": float(counter[2]), "tests": int(counter[3]),
            "passed": int(closing[1]), "pytest_wall_s": float(closing[2]), "time_user_plus_sys_s": round(user + system, 2),
            "time_wall_s": wall, "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2)}


def measure(source: str, into: Path, runs: int, pytest_args: list[str], keep: bool) -> list[dict]:
    """A fresh clone of ``source`` in a new folder under ``into``, synced, and ``runs`` runs of the loop in it: a row
    per run."""
    environment = {key: value for key, value in os.environ.items() if key not in INHERITED}
    clone = Path(tempfile.mkdtemp(prefix="dpdist-fast-loop-", dir=into)) / "dpdist"
    try:
        subprocess.run(["git", "clone", "--quiet", source, str(clone)], check=True)
        subprocess.run(["uv", "sync", "--quiet"], cwd=clone, env=environment, check=True)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=clone, capture_output=True, text=True,
                                check=True).stdout.strip()
        inside = clone.is_relative_to(Path(tempfile.gettempdir()).resolve())
        return [{"clone": str(clone), "inside_temporary_directory": inside, "commit": commit, "run": number,
                 **run_loop(clone, pytest_args, environment)} for number in range(1, runs + 1)]
    finally:
        if not keep:
            shutil.rmtree(clone.parent, ignore_errors=True)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--into", type=Path, action="append", help="a folder to clone into (repeatable; default: the "
                        "temporary directory and this checkout's parent)")
    parser.add_argument("--source", default=str(ROOT), help="the repository to clone (default: this checkout)")
    parser.add_argument("--runs", type=int, default=2, help="runs of the loop per clone (default 2: cold, then warm)")
    parser.add_argument("--keep", action="store_true", help="keep the clones")
    parser.add_argument("--out", type=Path, default=OUT, help="default: benchmarks/results/fast_loop.json")
    parser.add_argument("pytest_args", nargs="*", default=["-m", "not slow"], help='default: -m "not slow"')
    args = parser.parse_args(argv)
    if args.runs <= 0:
        parser.error(f"--runs must be > 0; got {args.runs}")
    folders = args.into or [Path(tempfile.gettempdir()), ROOT.parent]
    started = datetime.datetime.now().astimezone()
    with ThreadPoolExecutor(len(folders)) as pool:
        placed = pool.map(lambda folder: measure(args.source, folder.resolve(), args.runs, args.pytest_args, args.keep), folders)
        rows = [row for runs in placed for row in runs]
    result = {"date": started.isoformat(timespec="minutes"), "cores": len(os.sched_getaffinity(0)),
              "pytest_args": args.pytest_args, "runs": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{started:%Y-%m-%d %H:%M}, {result['cores']} cores, uv run pytest {' '.join(args.pytest_args)}")
    print("| clone | run | tests passed | CPU-s (suite's counter) | inside tests | /usr/bin/time user+sys | wall | load |")
    print("|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['clone']} | {row['run']} | {row['passed']:,} | {row['cpu_s']:.1f} | {row['cpu_s_inside_tests']:.1f} "
              f"| {row['time_user_plus_sys_s']:.1f} | {row['time_wall_s']:.0f} s | {row['load_before']:.1f}-{row['load_after']:.1f} |")

if __name__ == "__main__":
    main()
