"""Pauses at the worst moment, for the crash tests' subprocesses: installed by the child's own command line.

Nothing of dpdist reads a test setting: a crash test starts ``dpdist`` (or its own script) in a new Python process
through :func:`command` or :func:`preamble`, which first wraps one step of dpdist in a pause, and SIGKILLs the
process during it.

``pause_before_rename=seconds``
    every atomic replacement (:mod:`dpdist._io._atomic`) sleeps after its file is written and fsynced, before the
    rename: the moment a kill must leave the old file whole.
``pause_after_batches=(k, seconds)``
    the service's client sleeps after its ``k``-th acknowledged batch (``Client.submit_body``, what ``dpdist submit``
    sends each journaled batch with): a kill then falls between two batches of one run.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent

__all__ = ["command", "preamble", "install"]


def install(*, pause_before_rename: float | None = None, pause_after_batches: tuple[int, float] | None = None) -> None:
    """Wrap the steps of this process's dpdist in the pauses asked for (see the module)."""
    if pause_before_rename is not None:
        from dpdist._io import _atomic

        replace = _atomic._replace

        def paused_replace(temporary, path):
            time.sleep(pause_before_rename)
            replace(temporary, path)

        _atomic._replace = paused_replace
    if pause_after_batches is not None:
        from dpdist.client import Client

        submit_body, (count, seconds) = Client.submit_body, pause_after_batches
        sent = [0]

        def paused_submit_body(self, *args, **kwargs):
            acknowledgement = submit_body(self, *args, **kwargs)
            sent[0] += 1
            if sent[0] == count:
                time.sleep(seconds)
            return acknowledgement

        Client.submit_body = paused_submit_body


def preamble(**pauses) -> str:
    """Python lines that put this folder on the path and install ``pauses`` (the start of a child's ``-c`` script)."""
    return f"import sys; sys.path.insert(0, {str(TESTS)!r}); import crash_hooks; crash_hooks.install(**{pauses!r})\n"


def command(*arguments: str, **pauses) -> list[str]:
    """The command line of ``dpdist ARGUMENTS`` in a new Python process with ``pauses`` installed."""
    script = preamble(**pauses) + "from dpdist.cli import main; sys.exit(main(sys.argv[1:]))\n"
    return [sys.executable, "-c", script, *arguments]
