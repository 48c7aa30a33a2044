"""``dpdist issuer`` over a real socket, driven by its command line (slow: processes and a server).

``dpdist issuer serve`` in a subprocess on 127.0.0.1 and a free port; ``dpdist issuer key``,
``credentials`` and ``status`` (in this process) against it; a device fetching tokens with
:func:`dpdist.privacypass.fetch_token`; a slowloris connection closed by the header timeout; the
command line's errors in one line.
"""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import time

import pytest

pytest.importorskip("starlette")
pytest.importorskip("cryptography")

from relay_support import ISSUER_ADMIN_TOKEN, IssuerProcess  # noqa: E402

from dpdist import privacypass as pp  # noqa: E402
from dpdist.errors import ServiceRefusedError  # noqa: E402

pytestmark = pytest.mark.slow

ADMIN = ISSUER_ADMIN_TOKEN


@pytest.fixture
def _dpdist(monkeypatch, capsys):
    """``_dpdist(*arguments, token=...)``: the ``dpdist`` command in this process (the issuer it talks to is the real
    subprocess; a command's own process added its start only), with no ``DPDIST_`` variable but the issuer's admin token
    ``token``; its exit status, standard output and error as ``subprocess.run`` gives them.  An ``issuer serve`` that
    would start serving fails the test."""
    import uvicorn

    from dpdist.cli import main

    for key in [key for key in os.environ if key.startswith("DPDIST_")]:
        monkeypatch.delenv(key)
    monkeypatch.setattr(uvicorn, "run", lambda *arguments, **options: pytest.fail("the issuer started"))

    def run(*arguments: str, token: str | None = ADMIN) -> subprocess.CompletedProcess:
        if token is None:
            monkeypatch.delenv("DPDIST_ISSUER_ADMIN_TOKEN", raising=False)
        else:
            monkeypatch.setenv("DPDIST_ISSUER_ADMIN_TOKEN", token)
        code = main(list(arguments))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["dpdist", *arguments], code, out, err)

    return run


def test_the_issuer_end_to_end_over_a_socket(tmp_path, _dpdist):
    issuer = IssuerProcess(str(tmp_path / "issuer.sqlite"), options=("--header-timeout", "1")).start()
    try:
        created = _dpdist("issuer", "key", "commute", "--tokens-each", "2", "--issuer", issuer.url)
        assert created.returncode == 0, created.stderr
        key = json.loads(created.stdout)
        token_key = pp.b64url_decode(key["token_key"], "token_key")
        assert key["token_type"] == 2 and key["token_key_id"] == pp.token_key_id(token_key).hex() and key["tokens_each"] == 2
        again = _dpdist("issuer", "key", "commute", "--issuer", issuer.url)  # never replaced: the same key, printed
        assert again.returncode == 0 and json.loads(again.stdout) == key and "exists already" in again.stderr
        assert "tokens_each 2" in again.stderr  # its ceiling too, whatever was asked now
        above = _dpdist("issuer", "credentials", "commute", "--count", "1", "--tokens-each", "3", "--issuer", issuer.url)
        assert above.returncode == 2 and above.stderr.count("\n") == 1 and "above_key_ceiling" in above.stderr

        out = tmp_path / "credentials.txt"
        minted = _dpdist("issuer", "credentials", "commute", "--count", "3", "--tokens-each", "1", "--out", str(out), "--issuer", issuer.url)
        assert minted.returncode == 0, minted.stderr
        credentials = out.read_text().split()
        assert len(credentials) == 3 and stat.S_IMODE(out.stat().st_mode) == 0o600

        challenge = pp.TokenChallenge("issuer.test", bytes(32))
        token = pp.fetch_token(issuer.url, "commute", credentials[0], challenge, token_key)
        assert pp.verify_token(token, token_key, challenge) == token[2:34]
        with pytest.raises(ServiceRefusedError) as refused:
            pp.fetch_token(issuer.url, "commute", credentials[0], challenge, token_key)
        assert refused.value.code == "exhausted"

        status = _dpdist("issuer", "status", "--issuer", issuer.url)
        assert json.loads(status.stdout)["keys"]["commute"] == {"tokens_each": 2, "credentials": 3, "tokens": 3, "issued": 1,
                                                                "remaining": 2}

        slow = socket.create_connection(("127.0.0.1", issuer.port))  # headers that never end: closed after the header timeout
        slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        slow.settimeout(10)
        started, answer = time.monotonic(), b""
        while chunk := slow.recv(1024):  # socket.timeout after 10 s: still open, the test fails
            answer += chunk
        assert time.monotonic() - started < 5 and (answer == b"" or answer.startswith(b"HTTP/1.1 408")), answer
        slow.close()

        refused_cli = _dpdist("issuer", "status", "--issuer", issuer.url, token="wrong-admin-token-0123")
        assert refused_cli.returncode == 2 and refused_cli.stderr.count("\n") == 1 and "401" in refused_cli.stderr
    finally:
        issuer.stop()


def test_the_command_line_says_what_is_wrong_in_one_line(tmp_path, _dpdist):
    cases = [
        (["issuer", "serve", "--issuer-db", str(tmp_path / "i.sqlite"), "--issuer-name", "a@b"], ADMIN, "--issuer-name"),
        (["issuer", "serve", "--issuer-db", str(tmp_path / "i.sqlite"), "--issuer-name", "issuer.test"], None, "DPDIST_ISSUER_ADMIN_TOKEN"),
        (["issuer", "serve", "--issuer-db", str(tmp_path / "i.sqlite"), "--issuer-name", "issuer.test"], "short", "at least 16"),
        (["issuer", "serve", "--issuer-db", str(tmp_path), "--issuer-name", "issuer.test"], ADMIN, "--issuer-db"),
        (["issuer", "serve", "--issuer-db", str(tmp_path / "i.sqlite"), "--issuer-name", "x", "--rate-limit", "-1"], ADMIN, "--rate-limit"),
        (["issuer", "credentials", "commute", "--count", "0"], ADMIN, "--count"),
        (["issuer", "key", "commute"], None, "DPDIST_ISSUER_ADMIN_TOKEN"),
        (["issuer", "key", "commute", "--issuer", "ftp://x"], ADMIN, "--issuer"),
        (["issuer", "key", "commute", "--tokens-each", "0"], ADMIN, "--tokens-each"),
        (["issuer", "status", "--issuer", "http://127.0.0.1:9", "--retry-window", "0"], ADMIN, "no connection within --retry-window"),
    ]
    for arguments, token, named in cases:
        result = _dpdist(*arguments, token=token)
        assert result.returncode == 2, (arguments, result.stderr)
        assert result.stderr.startswith("dpdist: error: ") and result.stderr.count("\n") == 1, result.stderr
        assert named in result.stderr, (named, result.stderr)


def test_an_issuer_s_refusal_of_a_code_dpdist_does_not_know_is_named_not_echoed(monkeypatch, capsys):
    """Only what dpdist wrote is shown of an answer: a refusal of a code it does not know is named by its status and
    size, and none of its text (credentials in it included) reaches the one line."""
    import http.server

    from cli_support import run
    from ops_support import serving

    detail = "a token=ABCDEFG\tHIJ b password=PW\u00a0WORD c Bearer SECRETQ\u2028MORE d submitToken=ABC\u3000DEF"

    class Refusing(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = json.dumps({"error": "bad_x", "detail": detail}).encode()
            self.send_response(400)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):  # quiet
            pass

    monkeypatch.setenv("DPDIST_ISSUER_ADMIN_TOKEN", ADMIN)
    with serving(Refusing) as url:
        status, out, err = run(capsys, "issuer", "status", "--issuer", url)
    assert status == 2 and out == "", err
    assert "(HTTP 400): status 400 from" in err and "not a dpdist answer" in err and err.count("\n") == 1, err
    assert not any(word in err for word in ("ABCDEFG", "HIJ", "PW", "SECRETQ", "MORE", "bad_x")), err


@pytest.mark.parametrize("http, level", [("h11", "debug"), ("httptools", "info")])
def test_no_secret_the_issuer_holds_or_checks_reaches_its_log_however_a_client_sends_it(tmp_path, http, level):
    """The admin token and a credential the issuer minted (and a credential it never minted, which it checks), sent in
    every header, path parameter, query, body and raw request of tests/log_secrets_support.py: in no line of the
    issuer's log."""
    import secrets

    from dpdist.issuer._app import ROUTES
    from log_secrets_support import lines_holding, send_every_way

    issuer = IssuerProcess(str(tmp_path / "issuer.sqlite"), log_path=tmp_path / "issuer.log",
                           options=("--http", http, "--rate-limit", "0"))
    issuer.log_level = level
    issuer.start()
    try:
        (credential,) = issuer.credentials("commute", 1, tokens_each=100)
        held = {"admin token": ADMIN, "credential": credential, "unknown credential": secrets.token_urlsafe(32)}
        routes = [(method, route.path) for route in ROUTES for method in sorted(route.methods - {"HEAD"})]
        sent = sum(send_every_way(issuer.url, secret, routes, {"name": "commute"}, f"Bearer {ADMIN}") for secret in held.values())
    finally:
        issuer.stop()
    log = (tmp_path / "issuer.log").read_text(errors="replace")
    assert sent > 500 and "Started server process" in log, (sent, log[-500:])
    found = lines_holding(log, held)
    assert not found, {secret: lines[:5] for secret, lines in found.items()}
