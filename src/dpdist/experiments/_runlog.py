"""``OUT/runs.jsonl``: one line per invocation of :func:`~dpdist.experiments.reproduce` on a folder.

A run that was interrupted and resumed, or re-run on its full cache, is several invocations; the
page of a reproduction (:mod:`._pages`) states their sum: the wall time of the ones that computed
cells, the cells each computed and the load of the machine while it ran.  Each line holds:

``started`` / ``finished`` (UTC, ISO 8601), ``seconds`` (wall time), ``computed`` / ``reused`` /
``failed`` cells, ``load`` (the 1-minute load average sampled every 30 s and at the ends: its
minimum, median and maximum, and the number of samples), ``cpus`` (``os.cpu_count()``), ``commit``
(``git describe --always --dirty`` of the package's checkout, or None outside one), ``command``,
``repeats`` and ``run`` (quick or full).
"""

from __future__ import annotations

import datetime as _datetime
import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["LoadSampler", "source_commit", "append_run", "read_runs"]

RUNS_FILE = "runs.jsonl"


class LoadSampler:
    """Samples the 1-minute load average every ``interval`` seconds in a daemon thread while in use."""

    def __init__(self, interval: float = 30.0):
        self.interval = interval
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        try:
            self.samples.append(round(os.getloadavg()[0], 2))
        except OSError:  # pragma: no cover - not every platform has a load average
            pass

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def __enter__(self) -> "LoadSampler":
        self._sample()
        self._thread = threading.Thread(target=self._loop, name="dpdist-load-sampler", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._sample()

    def summary(self) -> dict[str, Any]:
        """``{"min", "median", "max", "samples"}`` of the sampled load (None values without samples)."""
        values = sorted(self.samples)
        if not values:
            return {"min": None, "median": None, "max": None, "samples": 0}
        return {"min": values[0], "median": values[len(values) // 2], "max": values[-1], "samples": len(values)}


def source_commit() -> str | None:
    """``git describe --always --dirty --abbrev=7`` of the checkout this package is imported from, or None."""
    folder = Path(__file__).resolve().parent
    try:
        described = subprocess.run(
            ["git", "describe", "--always", "--dirty", "--abbrev=7"], cwd=folder, capture_output=True, text=True,
            timeout=10, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    text = described.stdout.strip()
    return text or None


def utc_now() -> str:
    return _datetime.datetime.now(_datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def append_run(out: str | Path, record: dict[str, Any]) -> Path:
    """Append one invocation's ``record`` to ``OUT/runs.jsonl`` (a line written whole)."""
    path = Path(out) / RUNS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    line = json.dumps(record, sort_keys=True) + "\n"
    with path.open("a") as handle:
        handle.write(line)
        handle.flush()
        os.fsync(handle.fileno())
    return path


def read_runs(out: str | Path) -> list[dict[str, Any]]:
    """The invocations recorded in ``OUT/runs.jsonl`` (an empty list without one)."""
    path = Path(out) / RUNS_FILE
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def timer() -> float:
    return time.perf_counter()
