"""A side environment of a benchmark: a virtual environment of pinned peers, made once from a lock file.

Used by ``bench_audit_field.py`` and ``bench_persons_peers.py`` (each peer library in an environment of its own, away
from dpdist's): ``uv venv`` + ``uv pip install -r <lock>`` under a cache folder named by the lock's hash, so a changed
lock makes a new environment and an unchanged one is reused.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import subprocess


def locked_environment(lock: pathlib.Path, cache: pathlib.Path) -> pathlib.Path:
    """The python of the environment that ``lock`` pins (created and installed once, under ``cache``)."""
    place = cache / f"{lock.stem}-{hashlib.sha256(lock.read_bytes()).hexdigest()[:12]}"  # hash() of a str varies by process
    python, stamp = place / "bin" / "python", place / ".installed"
    if not stamp.exists():
        subprocess.run(["uv", "venv", "-q", "--python", "3.11", str(place)], check=True)
        subprocess.run(["uv", "pip", "install", "-q", "-r", str(lock)], check=True,
                       env=dict(os.environ, VIRTUAL_ENV=str(place)))
        stamp.write_text(lock.read_text())
    return python
