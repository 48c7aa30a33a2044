"""Nothing the tests start outlives the test run, also when the run is killed.

The tests start servers, relays, nginx, PostgreSQL clusters, browsers and benchmark scripts, many of them in sessions of
their own (so that a test can SIGKILL a server's whole process group) and stopped by the test's teardown.  A test run
killed with SIGKILL runs no teardown, and those processes ran on, holding ports, CPU and memory, until someone noticed.

So the run's first process (pytest, or pytest-xdist's controller; tests/conftest.py ``pytest_configure``) calls
:func:`start_reaper` before any test runs.  It marks the environment every process it starts inherits with a name of
this run (``DPDIST_TEST_SESSION``) and starts a reaper, in a session of its own, whose standard input is a pipe only the
run's first process holds.  When that process ends, however it ends, the pipe closes and the reaper SIGKILLs every
process that carries the run's name in the environment it started with (``/proc/PID/environ``): the pytest-xdist
workers, and everything any of them started, children of children included, whichever session they are in.  A run that
ended normally has stopped them all, and the reaper finds nothing.

Run as a script (``python session_reaper.py NAME``), this module is the reaper.
"""

from __future__ import annotations

import os
import signal
import sys
import time
import uuid
from pathlib import Path

#: the environment variable that names the test run a process belongs to
SESSION_VARIABLE = "DPDIST_TEST_SESSION"

#: the write end of the reaper's pipe, held until this process ends (never closed on purpose)
_held: list[int] = []


def start_reaper() -> str:
    """Name this test run in the environment of every process it will start, start its reaper; the name.

    Call once, in the run's first process, before any test starts a process."""
    name = uuid.uuid4().hex
    read_end, write_end = os.pipe()  # neither is inherited by the processes the tests start (close-on-exec)
    environment = {key: value for key, value in os.environ.items() if key != SESSION_VARIABLE}
    os.posix_spawn(sys.executable, [sys.executable, str(Path(__file__).resolve()), name], environment,
                   file_actions=[(os.POSIX_SPAWN_DUP2, read_end, 0)], setsid=True)
    os.close(read_end)
    _held.append(write_end)
    os.environ[SESSION_VARIABLE] = name
    return name


def marked_processes(name: str) -> list[int]:
    """The processes whose environment, as they started, names the test run ``name``."""
    marker = f"{SESSION_VARIABLE}={name}".encode()
    found = []
    for path in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker in path.read_bytes().split(b"\0"):
                found.append(int(path.parent.name))
        except (OSError, ValueError):
            continue  # gone meanwhile, or a kernel thread
    return found


def reap(name: str, *, passes: int = 200, pause: float = 0.05) -> int:
    """SIGKILL every process of the test run ``name`` until two passes in a row find none (a process may start one
    more while it is killed); how many were killed."""
    killed = 0
    quiet = 0
    for _ in range(passes):
        found = [pid for pid in marked_processes(name) if pid != os.getpid()]
        quiet = 0 if found else quiet + 1
        if quiet == 2:
            break
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed += 1
            except ProcessLookupError:
                pass
        time.sleep(pause)
    return killed


def main() -> None:
    name = sys.argv[1]
    while os.read(0, 4096):  # nothing is written: this returns b"" once the run's first process has ended
        pass
    reap(name)


if __name__ == "__main__":
    main()
