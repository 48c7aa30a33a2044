"""The estimator process: estimates computed outside the server's process, one at a time, at a lower priority.

A long estimate (PEM at n = 10^6 runs for seconds, mostly in Python) would hold
the server's GIL and stall its event loop and its group commits; here it runs in
a child process (``python -m dpdist.serve._estimator``) that the server starts
with its first estimate and starts again if it dies.  The two talk over the
child's standard input and output: each request and each answer is one pickled
frame (an 8-byte length, then the pickle) of trusted objects (the server's own
campaign snapshot and query; the child's document or exception).

One process serves every campaign of the server, one estimate at a time, so no
estimate may hold it for long: each has a time limit (:data:`TIME_LIMIT_S` of
wall time), past which the child is killed (the next estimate starts a new one)
and the request is refused (503 ``estimate_timeout``); the query's iteration
counts and tolerances are bounded before (:mod:`._estimates`).  The child dies
with the server: it watches its parent and exits when it is gone, and a server
that closes its estimator kills the child and sends nothing to a new one.
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

from .._guard._refusals import Busy

__all__ = ["Estimator", "TIME_LIMIT_S", "stopping"]

_FRAME = struct.Struct("<Q")
#: Wall seconds one estimate may hold the estimator process (``DPDIST_ESTIMATE_TIME_LIMIT`` overrides).
TIME_LIMIT_S = 120.0
#: estimates that may wait for the one running; more get 503 ``estimates_busy`` instead of holding the server's
#: threads (which its devices' requests need too)
MAX_WAITING = 8
#: Seconds between the child's checks that its parent (the server) is alive.
PARENT_POLL_S = 0.5


def stopping() -> Busy:
    """The refusal of an estimate asked of a server that is stopping (503 ``shutting_down``)."""
    return Busy("shutting_down", "The server is stopping; no estimate is computed now.", retry_after=5)


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

    def __init__(self, time_limit: float | None = None):
        self._lock = threading.Lock()
        self._queue = threading.BoundedSemaphore(MAX_WAITING + 1)  # the one running and those waiting for it
        self._process: subprocess.Popen | None = None
        self._closed = False
        limit = time_limit if time_limit is not None else float(os.environ.get("DPDIST_ESTIMATE_TIME_LIMIT", TIME_LIMIT_S))
        self.time_limit = limit

    def run(self, function, *arguments):
        if not self._queue.acquire(blocking=False):  # each waiter holds one of the server's threads
            raise Busy("estimates_busy", f"{MAX_WAITING} estimates are already waiting for the estimator; ask again "
                       "later.", retry_after=5)
        try:
            return self._run(function, *arguments)
        finally:
            self._queue.release()

    def _run(self, function, *arguments):
        ok, value, seconds = False, cast(Any, None), 0.0  # (set by the read that succeeds; a failed second one raises)
        with self._lock:
            for attempt in range(2):
                if self._closed:  # the server is stopping: nothing goes to a new process
                    raise stopping()
                process = self._started()
                expired = threading.Event()

                def expire(process=process, expired=expired):
                    expired.set()
                    _kill(process)

                timer = threading.Timer(self.time_limit, expire)
                timer.daemon = True
                timer.start()
                try:
                    _write(process.stdin, (function, arguments))
                    ok, value, seconds = _read(process.stdout)
                    break
                except (EOFError, OSError):  # it died (e.g. out of memory, or killed): a new one, once
                    self._stop()
                    if expired.is_set():
                        raise Busy("estimate_timeout", f"The estimate took longer than {self.time_limit:g} s and "
                                          "was stopped (one estimator serves every campaign of this server); ask with "
                                          "fewer iterations or a larger tolerance.", retry_after=5) from None
                    if self._closed:  # stopped under it by the server's stop (an EOFError, a 500)
                        raise stopping() from None
                    if attempt:
                        raise
                finally:
                    timer.cancel()
        if not ok:
            raise value
        return value, seconds

    def _started(self) -> subprocess.Popen:
        if self._process is None or self._process.poll() is not None:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "dpdist.serve._estimator"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                stderr=None, close_fds=True,
            )
            if _read(self._process.stdout) != "ready":  # its imports done: the time limits count from here
                raise EOFError("the estimator process did not start")
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
        """Kill the child now (an estimate in flight gets an error, and is not sent to a new process)."""
        self._closed = True
        process = self._process
        if process is not None:
            _kill(process)
        if self._lock.acquire(timeout=10):
            try:
                self._stop()
            finally:
                self._lock.release()


def _kill(process: subprocess.Popen) -> None:
    try:
        if process.poll() is None:
            process.kill()
    except OSError:  # pragma: no cover - already gone
        pass


def _watch_parent(parent: int) -> None:
    """Exit the child when its parent (the server) is gone: an estimate in flight must not outlive it."""
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(0)


def main() -> None:
    """The child: answer requests until the server closes its standard input."""
    try:
        os.nice(5)  # the server's ingest goes first on a shared core
    except OSError:  # pragma: no cover - not permitted: same priority
        pass
    parent = os.getppid()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="dpdist-parent-watch").start()
    import scipy.stats  # noqa: F401  # lazy: the first estimate's imports, made in the child before it says ready

    from . import _diagnostics, _estimates  # noqa: F401 - the imports of the first estimate, done before it  # lazy: the first estimate's imports, made in the child before it says ready

    source, sink = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing printed may corrupt the answers
    _write(sink, "ready")
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
