"""The servers the tests fork from their zygote (tests/server_zygote.py) are processes of their own, as the command
started with ``python -m dpdist.cli`` would be: children of the test process, each in a session of its own, with dpdist
imported afresh (their random streams their own), the command's exit status, and SIGTERM and SIGKILL as for any
process."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import httpx
import pytest

import server_zygote
from serve_support import ADMIN_TOKEN, ServerProcess

pytestmark = pytest.mark.slow  # dpdist serve processes


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def test_forked_servers_are_children_of_the_test_process_each_with_its_own_dpdist(tmp_path):
    servers = [ServerProcess(str(tmp_path / f"c{k}.sqlite"), log_path=tmp_path / f"s{k}.log").start() for k in range(2)]
    try:
        assert all(isinstance(server.process, server_zygote.ForkedProcess) for server in servers)
        pids = [server.process.pid for server in servers]
        assert len(set(pids)) == 2 and all(_parent(pid) == os.getpid() for pid in pids)
        assert all(os.getsid(pid) == pid for pid in pids)  # each in a session of its own, as start_new_session
        # the request ids come from a random stream seeded when dpdist is imported: a dpdist the zygote had imported
        # before forking would give both servers the same stream
        ids = [[httpx.get(server.url + "/healthz").headers["x-request-id"] for _ in range(3)] for server in servers]
        assert not set(ids[0]) & set(ids[1]), ids
        servers[0].process.terminate()
        assert servers[0].process.wait(timeout=60) in (0, -signal.SIGTERM)  # uvicorn re-raises the signal
        servers[1].kill()
        assert servers[1].process.returncode == -signal.SIGKILL
    finally:
        for server in servers:
            server.stop()
    assert "dpdist serve: sqlite database" in (tmp_path / "s0.log").read_text()


def test_a_forked_command_exits_with_the_status_and_message_of_the_command(tmp_path):
    environment = {**os.environ, "DPDIST_ADMIN_TOKEN": ADMIN_TOKEN}
    command = [sys.executable, "-m", "dpdist.cli", "serve", "--db", str(tmp_path / "no" / "such" / "c.sqlite"), "--port", "1"]
    forked = server_zygote.start(command, environment, tmp_path / "log")
    assert forked.wait(timeout=120) == 2
    assert "'--db' option" in (tmp_path / "log").read_text()
