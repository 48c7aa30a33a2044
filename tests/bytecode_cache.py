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
is dropped when a session starts with that directory: those sources are not seen again.  ``DPDIST_TEST_BYTECODE=0`` keeps the
environment's choice; a prefix already set wins; an environment that cannot be written is left as it is.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

#: the directory, in the interpreter's environment, that holds the suite's bytecode
PREFIX = Path(sys.prefix) / "dpdist-test-pycache"


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
    if prefix == str(PREFIX):  # it mirrors each source's absolute path: what was compiled from temporary files goes
        shutil.rmtree(PREFIX / Path(tempfile.gettempdir()).resolve().relative_to("/"), ignore_errors=True)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.pycache_prefix = prefix
    sys.dont_write_bytecode = False
