"""A 3xx answer is refused in one line, never followed and never read as an answer.

A stub on 127.0.0.1 answers 302 to everything (a proxy's http -> https redirect): the client's commands crashed
(``JSONDecodeError``, ``KeyError``) or printed ``{}`` and exited 0.
"""

from __future__ import annotations

import http.server

import pytest

from cli_support import run
from ops_support import serving
from dpdist.errors import ServiceRefusedError

pytest.importorskip("httpx")

ADMIN = "admin-token-0123456789"
#: a Location repeating the client's own token (masked) and another's password (not the client's: shown)
LOCATION = f"https://alice:S3cretPW@127.0.0.1:1/elsewhere?t={ADMIN}"


class _Redirecting(http.server.BaseHTTPRequestHandler):
    def _redirect(self) -> None:
        self.send_response(302)
        self.send_header("Location", LOCATION)
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_PUT = _redirect

    def log_message(self, *args) -> None:  # quiet
        pass


class _RedirectingSchemeRelative(_Redirecting):
    """A scheme-relative ``Location`` (``//user:password@host/x``, RFC 3986 4.2) repeating the client's token."""

    def _redirect(self) -> None:
        self.send_response(302)
        self.send_header("Location", f"//u:{ADMIN}@h.example/x")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_PUT = _redirect



@pytest.fixture
def stub():
    with serving(_Redirecting) as url:
        yield url


@pytest.fixture
def relative_stub():
    with serving(_RedirectingSchemeRelative) as url:
        yield url


def test_the_client_refuses_a_redirect_naming_where_it_points_its_own_token_masked(stub):
    from dpdist.client import AdminClient, issuer_of

    with AdminClient(stub, admin_token=ADMIN, retries=0) as client:
        with pytest.raises(ServiceRefusedError) as refused:
            client.campaigns()
    message = str(refused.value)
    assert refused.value.status == 302 and refused.value.code == "redirected"
    assert "HTTP 302 to 'https://alice:S3cretPW@127.0.0.1:1/elsewhere?t=***'" in message and ADMIN not in message
    with pytest.raises(ServiceRefusedError, match="redirected GET .*HTTP 302"):
        issuer_of(stub, "k")


@pytest.mark.parametrize("argv", [
    ["campaign", "list", "--server", "{stub}", "--retries", "0"],
    ["campaign", "show", "c", "--server", "{stub}", "--retries", "0"],
    ["issuer", "key", "k", "--issuer", "{stub}"],
    ["issuer", "status", "--issuer", "{stub}"],
    ["issuer", "credentials", "k", "--count", "2", "--issuer", "{stub}"],
])
def test_a_command_answered_by_a_redirect_says_so_in_one_line_and_fails(stub, monkeypatch, capsys, argv):
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", "admin-token-0123456789")
    monkeypatch.setenv("DPDIST_ISSUER_ADMIN_TOKEN", "admin-token-0123456789")
    status, out, err = run(capsys, *[word.format(stub=stub) for word in argv])
    assert status != 0 and out == "" and err.count("\n") == 1, err
    assert "redirected" in err and "HTTP 302" in err and ADMIN not in err and "internal error" not in err


def test_a_scheme_relative_location_is_shown_without_the_clients_token(relative_stub, monkeypatch, capsys):
    from dpdist.client import AdminClient

    monkeypatch.setenv("DPDIST_ISSUER_ADMIN_TOKEN", "admin-token-0123456789")
    with AdminClient(relative_stub, admin_token="admin-token-0123456789", retries=0) as client:
        with pytest.raises(ServiceRefusedError) as refused:
            client.campaigns()
    status, out, err = run(capsys, "issuer", "status", "--issuer", relative_stub)
    for message in (str(refused.value), err):
        assert "HTTP 302 to '//u:***@h.example/x'" in message and ADMIN not in message, message
    assert status != 0 and err.count("\n") == 1


def _redirecting_to(location: str):
    class _To(_Redirecting):
        requests = 0

        def _redirect(self) -> None:
            type(self).requests += 1
            self.send_response(302)
            self.send_header("Location", location)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST = do_PUT = _redirect
    return _To


@pytest.mark.parametrize("location, shown", [
    (f"http:\\\\u:{ADMIN}@h.example", "'http:\\\\u:***@h.example'"),
    ("http://u:pa/ss@h.example/", "'http://u:pa/ss@h.example/'"),
    ("\x1b[31mRED", "'\\x1b[31mRED'"),
])
def test_a_malformed_location_is_a_redirect_refused_at_once(monkeypatch, capsys, location, shown):
    """A Location httpx parses but does not follow: a malformed one was an "internal error InvalidURL" or a
    RemoteProtocolError retried for the whole retry window."""
    from dpdist.client import AdminClient

    handler = _redirecting_to(location)
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", "admin-token-0123456789")
    monkeypatch.setenv("DPDIST_ISSUER_ADMIN_TOKEN", "admin-token-0123456789")
    with serving(handler) as url:
        with AdminClient(url, admin_token="admin-token-0123456789", retries=3, backoff=0.01) as client:
            with pytest.raises(ServiceRefusedError) as refused:
                client.campaigns()
        message = str(refused.value)
        assert refused.value.code == "redirected" and f"HTTP 302 to {shown}" in message and ADMIN not in message
        assert handler.requests == 1  # refused at once, not retried
        for argv in (["campaign", "list", "--server", url, "--retries", "0"], ["issuer", "status", "--issuer", url]):
            status, out, err = run(capsys, *argv)
            assert status == 2 and err.count("\n") == 1 and "redirected" in err and "internal error" not in err, err
            assert ADMIN not in err


@pytest.mark.parametrize("location, shown", [
    ("http://hé.example/x".encode(), "'http://hé.example/x'"),  # UTF-8 bytes: was "internal error UnicodeEncodeError"
    (b"http://h\xe9.example/x", "'http://hé.example/x'"),  # latin-1 bytes
    (b"http://h/?token=admin-token-0123456789&x=1", "'http://h/?token=***&x=1'"),
])
def test_a_location_of_any_bytes_is_refused_in_one_line_without_the_token(location, shown):
    import httpx

    from dpdist.client import AdminClient

    transport = httpx.MockTransport(lambda request: httpx.Response(302, headers=[(b"Location", location)]))
    with pytest.raises(ServiceRefusedError) as error:
        AdminClient("http://h", admin_token="admin-token-0123456789", transport=transport, retries=0).campaigns()
    assert f"(HTTP 302 to {shown})" in str(error.value) and error.value.code == "redirected", str(error.value)
