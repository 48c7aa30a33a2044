"""The estimator process: estimates computed outside the server's process, one at a time, at a lower priority.

A long estimate (PEM at n = 10^6 runs for seconds, mostly in Python) would hold
the server's GIL and stall its event loop and its group commits; here it runs in
a child process (``python -m dpdist.serve._estimator``) that the server starts
with its first estimate and starts again if it dies.  The two talk over the
child's standard input and output: each request and each answer is one pickled
frame (an 8-byte length, then the pickle) of trusted objects (the server's own
campaign snapshot and query; the child's document or exception).
"""

from __future__ import annotations

import os
import pickle
import struct
import subprocess
import sys
import threading
import time
from typing import Any, cast

__all__ = ["Estimator"]

_FRAME = struct.Struct("<Q")


def _write(stream, value) -> None:
    payload = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_FRAME.pack(len(payload)) + payload)
    stream.flush()


def _read(stream):
    head = stream.read(_FRAME.size)
    if len(head) < _FRAME.size:
        raise EOFError("the estimator process ended")
    (size,) = _FRAME.unpack(head)
    payload = stream.read(size)
    if len(payload) < size:
        raise EOFError("the estimator process ended mid-answer")
    return pickle.loads(payload)


class Estimator:
    """The server's side: :meth:`run` sends ``function(campaign, query)`` to the child and returns ``(result,
    CPU seconds it took there)``; exceptions raised there are raised here."""

    def __init__(self):
        self._lock = threading.Lock()
        self._process: subprocess.Popen | None = None

    def run(self, function, *arguments):
        ok, value, seconds = False, cast(Any, None), 0.0  # (set by the read that succeeds; a failed second one raises)
        with self._lock:
            for attempt in range(2):
                process = self._started()
                try:
                    _write(process.stdin, (function, arguments))
                    ok, value, seconds = _read(process.stdout)
                    break
                except (EOFError, OSError):  # it died (e.g. out of memory): a new one, once
                    self._stop()
                    if attempt:
                        raise
        if not ok:
            raise value
        return value, seconds

    def _started(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "dpdist.serve._estimator"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=None, close_fds=True,
            )
        return self._process

    def _stop(self) -> None:
        if self._process is not None:
            if self._process.poll() is None:
                self._process.kill()
            self._process.wait()
            for stream in (self._process.stdin, self._process.stdout):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass
            self._process = None

    def close(self) -> None:
        with self._lock:
            self._stop()


def main() -> None:
    """The child: answer requests until the server closes its standard input."""
    try:
        os.nice(5)  # the server's ingest goes first on a shared core
    except OSError:  # pragma: no cover - not permitted: same priority
        pass
    from . import _diagnostics, _estimates  # noqa: F401 - the imports of the first estimate, done before it
    import scipy.stats  # noqa: F401

    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed may corrupt the answers
    while True:
        try:
            function, arguments = _read(source)
        except EOFError:
            return
        # the CPU seconds of the computation (what the cache's spacing rule bounds), not the wall
        # time: on a loaded machine the wall time of a niced child is many times its cost
        start = time.process_time()
        try:
            answer = (True, function(*arguments), time.process_time() - start)
        except Exception as error:  # noqa: BLE001 - handed to the server, which raises it
            answer = (False, error, time.process_time() - start)
        try:
            pickle.dumps(answer[1])
        except Exception as error:  # noqa: BLE001 - an answer that cannot travel: its description does
            answer = (False, RuntimeError(f"the estimator's answer cannot be sent back: {error!r}"), answer[2])
        _write(sink, answer)


if __name__ == "__main__":
    main()
