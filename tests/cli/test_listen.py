"""Whether a command that serves HTTP can listen where it was told to (dpdist.cli._listen): one line naming the option
and the address, before anything is opened."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")

from serve_support import ADMIN_TOKEN  # noqa: E402 - after the extra's check


@pytest.mark.parametrize("command", [["serve", "--db", "campaigns.sqlite"], ["relay", "--queue", "queue.sqlite",
                                     "--collector", "http://127.0.0.1:9", "--relay-token", "relay-token-0123456789"]])
def test_a_port_in_use_is_one_line_naming_the_option_and_the_address(tmp_path, capsys, monkeypatch, command):
    """A second `dpdist serve` on a port in use logged uvicorn's '[Errno 98] error while attempting to bind'
    and exited 1, naming no option (and opened the database first)."""
    import socket

    from cli_support import run

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN_TOKEN)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        status, out, err = run(capsys, *command, "--host", "127.0.0.1", "--port", port)
    lines = err.strip().splitlines()
    assert status == 2 and out == "" and len(lines) == 1 and "Traceback" not in err, err
    assert lines[0].startswith(f"dpdist: error: The '--port' option of dpdist {command[0]}: 127.0.0.1:{port} is in use")
    assert not (tmp_path / command[2]).exists()  # refused before the database or the queue was opened


def test_forwarded_headers_believed_from_anyone_off_loopback_are_said_at_start():
    """`--forwarded-allow-ips '*'` takes the client's own X-Forwarded-For, so every per-address limit is per
    claimed address; said in one line at start when the port is reachable by others."""
    from dpdist.cli._serve import _believes_anyone

    assert _believes_anyone("*", "0.0.0.0") and _believes_anyone("10.0.0.1, *", "::")
    assert not _believes_anyone("*", "127.0.0.1") and not _believes_anyone("*", "::1")
    assert not _believes_anyone("127.0.0.1", "0.0.0.0") and not _believes_anyone("10.0.0.0/8", "0.0.0.0")
