"""Per-file bookkeeping cost of the ingest journal.

For a state that has already ingested N files (N = 10^2 .. 10^5), time what
``dpdist aggregate`` pays for one more file besides reading its reports:

* **commit**: :func:`dpdist.io.record_ingested` (append the journal line, fsync,
  replace the state atomically) -- must not grow with N;
* **before** (the former design, for comparison): ``save_state`` rewriting every
  file's record in the state header after each file;
* **load**: reading the state and its journal once at the start of a run
  (O(N), paid once per run, not per file).

Usage::

    uv run python benchmarks/bench_ingest_files.py [--max-files 100000] [--repeats 50]

Prints a table and writes ``benchmarks/results/ingest_files.json``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from dpdist import io, local


def _record(i: int) -> dict:
    return {"file": f"reports/device-{i:08d}.bin", "n": 3, "rejected": {}}


def _prefilled(directory: Path, files: int):
    """A state that has ingested ``files`` files (journal written in one go)."""
    proto = local.make("grr", epsilon=1.0, domain_size=64)
    aggregator = proto.simulate(np.zeros(3 * files, dtype=np.int64), rng=0)
    state = directory / "state.bin"
    io.save_state(state, aggregator, {f"id:{i:032x}": _record(i) for i in range(files)})
    return state


def _median_seconds(action, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def measure(files: int, repeats: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        state = _prefilled(Path(tmp), files)
        start = time.perf_counter()
        saved = io.load_state(state)
        load = time.perf_counter() - start
        counter = iter(range(files, files + 10 * repeats))

        def commit():
            i = next(counter)
            io.record_ingested(state, saved, [f"id:{i:032x}"], _record(i))

        commit_seconds = _median_seconds(commit, repeats)
        legacy = {f"id:{i:032x}": _record(i) for i in range(files)}
        legacy_state = Path(tmp) / "legacy.bin"

        def rewrite_all():
            # the former header carried every record (_state._write_state became _state_file.write_state of the fields)
            from dpdist._io._state import _fields
            from dpdist._io._state_file import write_state

            header_records = dict(legacy)
            write_state(legacy_state, _fields(saved.aggregator))
            legacy_state.with_suffix(".json").write_text(json.dumps(header_records))

        before_seconds = _median_seconds(rewrite_all, max(3, repeats // 10))
    return {"files": files, "commit_s": commit_seconds, "before_s": before_seconds, "load_s": load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-files", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=50)
    args = parser.parse_args()
    rows = []
    files = 100
    while files <= args.max_files:
        rows.append(measure(files, args.repeats))
        files *= 10
    print(f"{'files already ingested':>24} {'commit (ms)':>12} {'rewrite-all (ms)':>17} {'load (ms)':>10}")
    for row in rows:
        print(f"{row['files']:>24} {1e3 * row['commit_s']:>12.2f} {1e3 * row['before_s']:>17.2f} {1e3 * row['load_s']:>10.1f}")
    out = Path(__file__).parent / "results" / "ingest_files.json"
    out.write_text(json.dumps(rows, indent=2))


if __name__ == "__main__":
    main()
