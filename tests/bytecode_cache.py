"""The suite's Python processes keep their compiled bytecode, in one directory beside the interpreter's environment.

An environment that sets ``PYTHONDONTWRITEBYTECODE=1`` (this project's machine does, and ``uv sync`` compiles nothing)
makes every Python process compile every module it imports from source, every time: about 1.4 of the 2.6 CPU-s a
process spends importing the service's modules (numpy, scipy, starlette, uvicorn, dpdist), and the suite starts
hundreds of them (servers, the command line, reproduction workers) besides its own imports (docs/reference/benchmarks/test-suite.md,
"The test suite").  :func:`keep_bytecode` lets this process and every process it starts write and read their
bytecode under ``PYTHONPYCACHEPREFIX`` (:data:`sys.pycache_prefix`, PEP 3147 and Python 3.8's prefix), a directory in
the interpreter's environment (``sys.prefix``, e.g. ``.venv/dpdist-test-pycache``), so that no ``__pycache__`` appears
in the source tree and a copy of the tree run with the same interpreter shares it.  A ``.pyc`` is only used while its
source's modification time and size are the ones it records, so a changed module is compiled again.

The bytecode of sources under the temporary directory (the copies of the tree some tests run, the scripts they write)
is dropped when a test run starts, by the run's first process: those sources are not seen again.  This checkout and its
environment keep theirs when they lie in the temporary directory themselves (a fresh clone there, as CI's may be), and a
process that finds the prefix set (a pytest-xdist worker, a test's own pytest run) drops nothing: dropping it all at each
start had made every run of such a clone cold, and emptied it under the running tests (docs/reference/benchmarks/test-suite.md,
"The fast loop").  ``DPDIST_TEST_BYTECODE=0`` keeps the environment's choice; a prefix already
set wins; an environment that cannot be written is left as it is.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

#: the directory, in the interpreter's environment, that holds the suite's bytecode
PREFIX = Path(sys.prefix) / "dpdist-test-pycache"
#: the folders whose bytecode is kept wherever they lie: this checkout and the interpreter's environment
KEPT = (Path(__file__).resolve().parents[1], Path(sys.prefix).resolve())


def keep_bytecode() -> None:
    """Write and read bytecode under :data:`PREFIX`, in this process and (through the environment) in its children."""
    if os.environ.get("DPDIST_TEST_BYTECODE", "1") == "0":
        return
    prefix = os.environ.get("PYTHONPYCACHEPREFIX") or str(PREFIX)
    try:
        Path(prefix).mkdir(parents=True, exist_ok=True)
    except OSError:
        return
    if not os.access(prefix, os.W_OK):
        return
    if "PYTHONPYCACHEPREFIX" not in os.environ:  # the run's first process
        temporary = Path(tempfile.gettempdir()).resolve()
        kept = [folder.relative_to(temporary).parts for folder in KEPT if folder.is_relative_to(temporary)]
        _drop(Path(prefix) / temporary.relative_to("/"), kept)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False


def _drop(folder: Path, kept: list[tuple[str, ...]]) -> None:
    """Remove what ``folder`` holds (the prefix mirrors each source's absolute path) but the paths ``kept``, relative
    to it, and what lies under them."""
    if () in kept:
        return
    try:
        children = list(folder.iterdir())
    except OSError:
        return
    for child in children:
        below = [parts[1:] for parts in kept if parts[0] == child.name]
        if below:
            _drop(child, below)
        elif child.is_dir() and not child.is_symlink():
            shutil.rmtree(child, ignore_errors=True)
        else:
            child.unlink(missing_ok=True)
