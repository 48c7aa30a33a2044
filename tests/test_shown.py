"""``dpdist._shown``: text from outside as dpdist shows it - the process's own secrets masked in any form a server could
echo them in, control characters escaped, cut; nothing else of the text changed.

And the property that makes testable: no line a dpdist process writes holds a secret it was given.  Each process is
handed seeded secrets of every kind of character, and whatever answers it (a server, a collector, a database driver, a
request) echoes them in every form one could (:func:`echoes`); every line each output path writes is searched for every
one of those forms: the Python client's error messages, the command line's error line, ``dpdist serve``'s log records
and access lines, its ``--db`` driver error line, the relay's lines.  (The JavaScript and Java clients' own tests do
the same: ``clients/js/test/known-secrets.test.js``, ``KnownSecretsTest``.)
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import io
import json
import logging
import logging.config
import random
import re
from urllib.parse import quote

import pytest

from cli_support import run
from dpdist._shown import credentials_in, masked, secrets_of, shown
from ops_support import serving

httpx = pytest.importorskip("httpx")
SECRET = "admin-T0ken/with+odd:chars"


def test_control_characters_are_escaped_so_a_line_stays_one_line():
    assert shown("a\x1b[2J\x07b\nc\u202ed") == "a\\x1b[2J\\x07b\\nc\\u202ed"
    assert shown("caf\u00e9 \u4e2d") == "caf\u00e9 \u4e2d"


@pytest.mark.parametrize("form", [
    SECRET, quote(SECRET, safe=""), re.sub("%[0-9A-F]{2}", lambda hex: hex.group(0).lower(), quote(SECRET, safe="")), json.dumps(SECRET)[1:-1],
    "".join(f"\\u{ord(c):04x}" for c in SECRET), "".join(f"&#{ord(c)};" for c in SECRET), SECRET.replace("+", "%2b"),
    base64.b64encode(SECRET.encode()).decode(), base64.urlsafe_b64encode(b"user:" + SECRET.encode()).decode(),
    quote(base64.b64encode(b"xy" + SECRET.encode()).decode(), safe=""),
])
def test_the_process_s_own_secret_is_masked_in_any_form(form):
    text = f"<p>said {form} twice {form}</p>"
    assert SECRET not in shown(text, (SECRET,)) and form not in shown(text, (SECRET,)), shown(text, (SECRET,))
    assert shown(text, (SECRET,)).startswith("<p>said ") and shown(text, (SECRET,)).endswith("</p>")


def test_what_is_no_secret_of_the_process_is_shown_as_it_is():
    text = "Authorization: Bearer someone-elses-token password=theirs http://u:pw@h/"
    assert shown(text, (SECRET,)) == text and masked(text) == text
    assert masked("abc x abc", ("abc",)) == "abc x abc"  # shorter than 4 characters: not masked in text


def test_a_secret_across_the_cut_is_masked_whole_and_the_cut_marked():
    text = "x" * 195 + SECRET + "y" * 10_000
    assert shown(text, (SECRET,)) == "x" * 195 + "***" + "y" * 2 + "..."
    assert shown(SECRET * 1000, (SECRET,), 10) == "*" * 10 + "..."
    assert shown("a" * 300, (), None) == "a" * 300 and shown("a" * 300) == "a" * 200 + "..."


def test_the_secrets_of_a_request_are_its_credential_and_its_url_s_password():
    basic = base64.b64encode(b"relay:pw-of-the-relay").decode()
    assert credentials_in(f"Basic {basic}") == (basic,)  # its password: the URL's, base64 forms of it masked too
    assert credentials_in('PrivateToken token="abcdefgh"') == ('token="abcdefgh"', "abcdefgh")
    assert credentials_in("Bearer abc") == ()
    request = httpx.Request("GET", "http://u:url-password@h/x", headers={"Authorization": "Bearer bearer-token"})
    assert secrets_of(httpx.Response(400, request=request)) == ("bearer-token", "url-password")
    assert secrets_of(httpx.Response(400)) == ()



#: printable ASCII, as a token is (an HTTP header's value); a password may hold any character
TOKEN_CHARACTERS = "abcXYZ0189-_.~+/=:@%&<>\"' \\"
PASSWORD_CHARACTERS = TOKEN_CHARACTERS + "\u00e4\u00f6\u4e2d\U0001f511"
ROUNDS = 6


def echoes(secret: str) -> list[str]:
    """``secret`` in each form a process could be echoed it in."""
    data, percent = secret.encode(), quote(secret, safe="")
    forms = [secret, percent, re.sub("%[0-9A-F]{2}", lambda hex: hex.group(0).lower(), percent), quote(secret, safe="/:@"),
             json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1], repr(secret)[1:-1],
             "".join(f"&#{ord(c)};" for c in secret), "".join(f"&#x{ord(c):X};" for c in secret), secret.replace(" ", "+"),
             secret.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")]
    for prefix in (b"", b"u", b"u:"):
        forms += [base64.b64encode(prefix + data).decode(), base64.urlsafe_b64encode(prefix + data).decode().rstrip("=")]
    return list(dict.fromkeys(forms))


def said(*secrets: str) -> str:
    """Every form of every one of ``secrets``, in one text."""
    return " | ".join(form for secret in secrets for form in echoes(secret))


def assert_holds_none(text: str, *secrets: str) -> None:
    for secret in secrets:
        for form in echoes(secret):
            assert len(form) < 4 or form not in text, f"{form!r} of {secret!r} in {text!r}"


def secrets_of_round(round_: int, *kinds: str) -> tuple[str, ...]:
    """The seeded secrets of one of :data:`ROUNDS` rounds, one of each kind (``token``: printable ASCII, 16 or more;
    ``password``: any character; round ``r`` draws ``16 + 3 r`` characters each, after the rounds before it)."""
    rng = random.Random(85)
    for earlier in range(round_ + 1):
        drawn = tuple("".join(rng.choices(TOKEN_CHARACTERS if kind == "token" else PASSWORD_CHARACTERS, k=16 + 3 * earlier))
                      for kind in kinds)
    return drawn


#: each output path's test runs once a round: the fast loop the last round (the longest secrets), the full suite all
#: (each round is 0.1-0.4 CPU-s: a server's log is searched after ~140 requests a round)
EACH_ROUND = pytest.mark.parametrize("round_", [*(pytest.param(r, marks=pytest.mark.slow) for r in range(ROUNDS - 1)),
                                                ROUNDS - 1])


def _answering(kind: str, text: str):
    """An httpx handler answering every request as ``kind`` says, each answer echoing ``text``."""
    def answer(request):
        if kind == "unreachable":
            raise httpx.ConnectError(f"cannot connect: {text}", request=request)
        if kind == "redirect":
            return httpx.Response(302, headers={"Location": f"http://h/?t={quote(text)}"})
        body = {"refusal": {"error": "campaign_closed", "detail": text}, "other": {"error": text, "detail": text},
                "wrong": {"campaigns": text}}[kind]
        return httpx.Response(200 if kind == "wrong" else 409, json=body)
    return answer


KINDS = ["refusal", "other", "redirect", "wrong", "unreachable"]


@EACH_ROUND
def test_the_python_clients_messages_hold_none_of_their_secrets(round_):
    from dpdist.client import AdminClient, Client
    from dpdist.errors import DPDistError

    admin, submit = secrets_of_round(round_, "token", "token")
    for kind in KINDS:
        transport = httpx.MockTransport(_answering(kind, said(admin, submit)))
        with AdminClient("http://collector.example", admin_token=admin, retries=0, retry_window=0,
                         transport=transport) as client:
            with pytest.raises(DPDistError) as error:
                client.campaigns()
        assert_holds_none(str(error.value), admin)
        with Client("http://collector.example", submit_token=submit, retries=0, retry_window=0,
                    transport=transport) as device:
            with pytest.raises(DPDistError) as error:
                device.submit_body("c", "0" * 32, b"the batch's bytes")
        assert_holds_none(str(error.value), submit)


@EACH_ROUND
def test_the_command_lines_error_line_holds_none_of_its_secrets(capsys, monkeypatch, round_):
    (admin,) = secrets_of_round(round_, "token")
    for kind in ("refusal", "other", "redirect", "wrong"):
        class Echoing(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                answer = _answering(kind, said(admin))(httpx.Request("GET", "http://h/"))
                self.send_response(answer.status_code)
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(answer.content)

            def log_message(self, *args):
                pass

        with serving(Echoing) as url:
            monkeypatch.setenv("DPDIST_ADMIN_TOKEN", admin)  # from the environment, and as an option
            for given in ([], ["--admin-token", admin]):
                status, out, err = run(capsys, "campaign", "list", "--server", url, "--retries", "0", *given)
                assert status != 0 and err.count("\n") == 1, err
                assert_holds_none(out + err, admin)


@EACH_ROUND
def test_the_serve_db_driver_error_line_holds_none_of_its_secrets(capsys, monkeypatch, round_):
    import sqlite3

    import dpdist.serve

    admin, password = secrets_of_round(round_, "token", "password")

    def refused(*args, **kwargs):
        raise sqlite3.OperationalError(f"connection failed: {said(admin, password)}\n  near it")

    monkeypatch.setattr(dpdist.serve, "create_app", refused)
    status, out, err = run(capsys, "serve", "--db", f"postgresql://dp:{quote(password, safe='')}@127.0.0.1:1/db",
                           "--admin-token", admin)
    assert status == 2 and "cannot open the database" in err and err.count("\n") == 1, err
    assert_holds_none(out + err, admin, password)


@contextlib.contextmanager
def _server_logging(log_format: str, secrets: tuple[str, ...]):
    """The server's logging configured as ``dpdist serve`` configures it, its lines written to a text kept; restored
    after."""
    from dpdist.serve._logs import log_config

    names = ["", "uvicorn", "uvicorn.error", "uvicorn.access", "dpdist"]
    kept = [(logging.getLogger(name), logging.getLogger(name).handlers[:], logging.getLogger(name).level,
             logging.getLogger(name).propagate) for name in names]
    config = log_config(log_format, "info", secrets)
    written = io.StringIO()
    for handler in config["handlers"].values():
        handler.pop("stream", None)
        handler["class"], handler["stream"] = "logging.StreamHandler", written
    logging.config.dictConfig(config)
    try:
        yield written
    finally:
        for logger, handlers, level, propagate in kept:
            logger.handlers[:], logger.level, logger.propagate = handlers, level, propagate


@pytest.mark.parametrize("log_format", ["text", "json"])
@EACH_ROUND
def test_the_servers_log_and_access_lines_hold_none_of_its_secrets(tmp_path, monkeypatch, log_format, round_):
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from dpdist.serve import create_app
    from dpdist.serve._limits import Limits
    from dpdist.serve._operations import Operations

    admin, relay, metrics, own = secrets_of_round(round_, "token", "token", "token", "token")
    secrets = (admin, relay, metrics)
    app = create_app(str(tmp_path / f"{len(admin)}.sqlite"), admin_token=admin, relay_token=relay,
                     limits=Limits(access_log="full"), operations=Operations(log_format=log_format, metrics_token=metrics))
    access = app.state.access_log.stream = io.StringIO()
    monkeypatch.setattr(app.state.service.store, "list", lambda: (_ for _ in ()).throw(RuntimeError(said(*secrets))))
    with _server_logging(log_format, secrets) as logged, TestClient(app, raise_server_exceptions=False) as client:
        for secret in (*secrets, own):
            for form in echoes(secret):
                headers = {"Authorization": f"Bearer {own}", "X-Request-ID": form[:128]}
                client.get(f"/api/campaigns/{quote(form, safe='')}/config", headers=headers)
                client.put(f"/api/campaigns/c/batches/{quote(form, safe='')}", content=b"x", headers=headers)
        assert client.get("/api/campaigns", headers={"Authorization": f"Bearer {admin}"}).status_code == 500
    text = logged.getvalue() + access.getvalue()
    assert "internal error on GET /api/campaigns" in text and text.count("\n") > 100, text[-2000:]
    assert_holds_none(text, *secrets, own)


@EACH_ROUND
def test_the_relays_lines_hold_none_of_its_secrets(caplog, round_):
    pytest.importorskip("starlette")
    import asyncio

    from dpdist.relay._forwarder import Forwarder
    from dpdist.relay._queue import Batch

    class Store:
        def settle(self, batch_id, outcome, detail=None):
            self.detail = detail
            done = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done

    token, password = secrets_of_round(round_, "token", "password")
    for kind in KINDS:
        store = Store()

        async def deliver():
            transport = httpx.MockTransport(_answering(kind, said(token, password)))
            async with httpx.AsyncClient(base_url=f"http://relay:{quote(password, safe='')}@collector",
                                         transport=transport) as client:
                forwarder = Forwarder(store, client, relay_token=token, min_batch=1, max_batch=10)
                await forwarder.deliver(Batch("b1", "c", 1, b"x"))

        with caplog.at_level("INFO", logger="dpdist.relay"):
            asyncio.run(deliver())
        lines = [record.getMessage() for record in caplog.records if record.name == "dpdist.relay"]
        assert lines or store.detail, kind
        assert_holds_none("\n".join(lines) + str(getattr(store, "detail", "")), token, password)
        caplog.clear()
