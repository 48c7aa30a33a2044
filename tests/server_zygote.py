"""``dpdist serve``, ``relay`` and ``issuer serve`` (and the tests' other ``dpdist`` commands) started by fork from a
process that imported their libraries once.

A server's start in a fresh interpreter spends most of its CPU importing: NumPy, uvicorn, Starlette, cryptography,
Jinja2 and the rest (about half of a ``dpdist serve`` start's 1.4 CPU-s), and the end-to-end tests start a few hundred
servers.  So each test process keeps one *zygote*: a child that imported those libraries and then forgot ``dpdist``
itself (every ``dpdist`` module is dropped from ``sys.modules``, so each server imports and initialises dpdist afresh:
its random streams, ids and caches are its own, as in a process started with ``python -m dpdist.cli``).  For each
server it forks a child that runs exactly what ``python -m dpdist.cli ARGS`` runs (``runpy`` on ``dpdist.cli``, the
command's own exit status), in a session of its own, with the environment, working directory and standard streams
the test gave.

The server is a separate process the test can signal, SIGKILL and wait for, a child of the test process: the zygote
forks twice and the middle process exits at once, and the test process is a *child subreaper* (``prctl``) while it
asks, so the server is handed to it (its exit status and CPU time are the test process's to collect, as for
``subprocess.Popen``).  What it cannot be is a process whose own command line names the options (``/proc/PID/cmdline``
is the zygote's): the tests of ``ps`` and the console script's start-up start theirs with ``subprocess``.

Run as a script, this module is the zygote: it reads one request a line on its standard input and answers each with
the server's pid.
"""

from __future__ import annotations

import atexit
import ctypes
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

#: the interpreter options the zygote's children are started as (``python -m dpdist.cli``)
PREFIX = [sys.executable, "-m", "dpdist.cli"]

#: the modules a server's start imports; the zygote imports them, then drops every ``dpdist`` module again
PREIMPORTED = (
    "dpdist.cli._main", "dpdist.cli._serve", "dpdist.cli._relay", "dpdist.cli._issuer", "dpdist.serve",
    "dpdist.serve._operations", "dpdist.serve._logs", "dpdist.serve._workers", "dpdist.relay", "dpdist.relay._app",
    "dpdist.relay._queue", "dpdist.issuer._app", "uvicorn", "uvicorn.main", "uvicorn.protocols.http.h11_impl",
    "uvicorn.protocols.http.httptools_impl", "uvicorn.protocols.websockets.auto", "uvicorn.lifespan.on",
    "uvicorn.loops.auto", "uvicorn.logging", "psycopg", "psycopg_pool", "httpx",
)

_PR_SET_CHILD_SUBREAPER = 36


class ForkedProcess:
    """A server forked by the zygote, child of this process: what the tests use of :class:`subprocess.Popen`."""

    def __init__(self, pid: int, args: list[str], output: tuple = ()):
        self.pid, self.args, self.returncode, self.output = pid, args, None, output
        self._lock = threading.Lock()

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Its standard output and error (text), once it has exited (started by :func:`started`)."""
        self.wait(timeout)
        return tuple(Path(path).read_text(errors="replace") for path in self.output)  # type: ignore[return-value]

    def poll(self) -> int | None:
        return self._reap(os.WNOHANG)

    def wait(self, timeout: float | None = None) -> int:
        if timeout is None:
            return self._reap(0)
        deadline = time.monotonic() + timeout
        while self.poll() is None:
            if time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.args, timeout)
            time.sleep(0.01)
        return self.returncode

    def _reap(self, flags: int) -> int | None:
        with self._lock:
            if self.returncode is None:
                try:
                    pid, status = os.waitpid(self.pid, flags)
                except ChildProcessError:  # reaped already (cannot happen: only this object waits for it)
                    return self.returncode
                if pid == self.pid:
                    self.returncode = os.waitstatus_to_exitcode(status)
            return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class _Zygote:
    """The zygote of this test process (started at its first use, ended with the process)."""

    def __init__(self):
        environment = {key: value for key, value in os.environ.items() if not key.startswith(("OTEL_", "DPDIST_"))
                       or key == "DPDIST_TEST_SESSION"}
        self.process = subprocess.Popen([sys.executable, __file__], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        env=environment, text=True, bufsize=1)
        self.lock = threading.Lock()
        self.owner = os.getpid()
        atexit.register(self.end)

    def end(self) -> None:
        """End the zygote and reap it (its CPU time then counts in this process's children's)."""
        if self.owner == os.getpid() and self.process.poll() is None:
            self.process.stdin.close()
            self.process.wait(timeout=60)

    def fork(self, args: list[str], env: dict, log_path, error_path, cwd: str) -> int:
        request = json.dumps({"args": args, "env": env, "log": str(log_path) if log_path else None,
                              "error": str(error_path) if error_path else None, "cwd": cwd})
        libc = ctypes.CDLL(None, use_errno=True)
        with self.lock:
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # the server, orphaned at once, comes to this process
            try:
                self.process.stdin.write(request + "\n")
                answer = self.process.stdout.readline()
            finally:
                libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)
        if not answer:
            raise RuntimeError(f"the servers' zygote exited with status {self.process.wait()}")
        return int(answer)


_ZYGOTE: list[_Zygote] = []


def end() -> None:
    """End this process's zygote, if it started one (a later :func:`start` starts another)."""
    for zygote in _ZYGOTE:
        zygote.end()


def start(command: list[str], env: dict, log_path=None, *, error_path=None) -> ForkedProcess | None:
    """``command`` (``python -m dpdist.cli ...``) forked from this process's zygote, its output appended to
    ``log_path`` (else discarded), its errors to ``error_path`` if given (else with its output); None for any other
    command (start it with ``subprocess``)."""
    if command[:len(PREFIX)] != PREFIX or not sys.platform.startswith("linux"):
        return None
    if not _ZYGOTE or _ZYGOTE[0].owner != os.getpid() or _ZYGOTE[0].process.poll() is not None:
        _ZYGOTE[:] = [_Zygote()]
    args = command[len(PREFIX):]
    return ForkedProcess(_ZYGOTE[0].fork(args, env, log_path, error_path, os.getcwd()), command, (log_path, error_path))


def started(command: list[str], env: dict, folder) -> ForkedProcess | subprocess.Popen:
    """``command`` running, its output and errors kept for ``communicate()`` (text): forked from the zygote, the two
    streams in new files of ``folder``, where :func:`start` can; else with ``subprocess`` and pipes."""
    streams = tempfile.mkdtemp(prefix="streams-", dir=folder)
    output, errors = Path(streams) / "stdout", Path(streams) / "stderr"
    forked = start(command, env, output, error_path=errors)
    if forked is not None:
        return forked
    return subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def run(command: list[str], *, timeout: float, env: dict | None = None, check: bool = False) -> subprocess.CompletedProcess:
    """``command`` run to its end as :func:`subprocess.run` with ``capture_output=True, text=True`` (forked where
    :func:`started` can), in ``env`` (else this process's environment); SIGKILLed and
    :class:`subprocess.TimeoutExpired` after ``timeout`` seconds; :class:`subprocess.CalledProcessError` if ``check``
    and it failed."""
    with tempfile.TemporaryDirectory(prefix="dpdist-run-") as folder:
        process = started(command, dict(os.environ) if env is None else env, folder)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise
    done = subprocess.CompletedProcess(command, process.returncode, out, err)
    if check:
        done.check_returncode()
    return done


#: how the zygote's interpreter found SIGINT at its start: how a server's finds it
_SIGINT: list = []


def _serve(request: dict) -> None:
    """In the forked server: ``python -m dpdist.cli ARGS`` as ``request`` says.  Its ``SystemExit`` (or any other
    exception) propagates out of the zygote's loop to the interpreter, which ends the process as it ends ``python -m``:
    non-daemon threads joined, ``atexit`` run, the exit status or traceback as the command left them."""
    os.setsid()
    os.chdir(request["cwd"])
    null = os.open(os.devnull, os.O_RDWR)
    log = os.open(request["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if request["log"] else null
    error = os.open(request["error"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) if request["error"] else log
    os.dup2(null, 0)
    os.dup2(log, 1)
    os.dup2(error, 2)
    os.closerange(3, 1 << 16)
    signal.signal(signal.SIGINT, _SIGINT[0])  # as the interpreter found it (the zygote changed no other signal)
    os.environ.clear()
    os.environ.update(request["env"])
    sys.path[0] = request["cwd"]  # as ``python -m`` (the zygote's is this file's folder)
    sys.argv = ["dpdist.cli", *request["args"]]  # runpy sets argv[0] to the module's file
    import runpy

    runpy.run_module("dpdist.cli", run_name="__main__", alter_sys=True)


def _zygote() -> None:
    """The zygote: import, forget dpdist, then fork a server per request line."""
    import importlib

    for name in PREIMPORTED:
        try:
            importlib.import_module(name)
        except ImportError:  # an extra not installed: the server imports (and refuses) it itself
            pass
    for name in [name for name in sys.modules if name == "dpdist" or name.startswith("dpdist.")]:
        del sys.modules[name]
    assert threading.active_count() == 1, "a thread started by an import would not be in the forked servers"
    _SIGINT.append(signal.signal(signal.SIGINT, signal.SIG_IGN))  # a ^C of the test run ends the run, and this process
    for line in sys.stdin:
        request = json.loads(line)
        read_end, write_end = os.pipe()
        middle = os.fork()
        if middle == 0:
            os.close(read_end)
            server = os.fork()
            if server == 0:
                os.close(write_end)
                _serve(request)
                sys.exit(0)  # the command returned without exiting
            os.write(write_end, f"{server}\n".encode())
            os._exit(0)
        os.close(write_end)
        with os.fdopen(read_end) as answer:
            pid = answer.readline()
        os.waitpid(middle, 0)
        sys.stdout.write(pid)
        sys.stdout.flush()


if __name__ == "__main__":
    _zygote()
