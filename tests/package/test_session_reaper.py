"""What the tests start dies with the test run, also when the run is SIGKILLed (tests/session_reaper.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from session_reaper import SESSION_VARIABLE

pytestmark = pytest.mark.slow

TESTS = Path(__file__).resolve().parents[1]

#: a test run in miniature: names itself, starts a two-worker server in a session of its own and a process of its own
#: group, prints their pids, and waits to be killed
RUN = """
import json, subprocess, sys, time
sys.path.insert(0, sys.argv[1])
from session_reaper import start_reaper
start_reaper()
from serve_support import ServerProcess
server = ServerProcess(sys.argv[2], workers=2).start()
sleeper = subprocess.Popen(["sleep", "600"])
print(json.dumps({"server": server.pids(), "sleeper": sleeper.pid}), flush=True)
time.sleep(600)
"""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def test_this_run_is_named_and_its_reaper_waits_for_its_end():
    name = os.environ[SESSION_VARIABLE]
    reapers = [path for path in Path("/proc").glob("[0-9]*/cmdline")
               if b"session_reaper.py" in path.read_bytes() and name.encode() in path.read_bytes()]
    assert len(reapers) == 1


def test_a_killed_run_takes_the_servers_it_started_with_it(tmp_path):
    run = subprocess.Popen([sys.executable, "-c", RUN, str(TESTS), str(tmp_path / "campaigns.sqlite")],
                           stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        started = json.loads(run.stdout.readline())
        pids = [*started["server"], started["sleeper"]]
        assert len(started["server"]) >= 3 and all(_alive(pid) for pid in pids)  # the supervisor, 2 workers, ...
        os.kill(run.pid, signal.SIGKILL)  # the run alone: its server is in a session of its own
        run.wait()
        deadline = time.monotonic() + 20
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [pid for pid in pids if _alive(pid)] == []
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
