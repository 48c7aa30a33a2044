"""Work that a test run does once, whatever pytest-xdist worker asks first: :func:`once_per_run`."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
from pathlib import Path
from typing import Callable


def once_per_run(tmp_path_factory, name: str, make: Callable[[Path], dict]) -> tuple[Path, dict]:
    """``make(folder)``'s outcome (a JSON document) and its ``folder``, made once per test run: the pytest-xdist
    workers share their temporary folders' parent, and the first worker to ask runs ``make`` under a lock while the
    others wait and read what it wrote (one process without xdist: its own temporary folder)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    folder, done = shared / name, shared / f"{name}.json"
    with open(shared / f"{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not done.exists():
            shutil.rmtree(folder, ignore_errors=True)
            done.write_text(json.dumps(make(folder)))
    return folder, json.loads(done.read_text())
