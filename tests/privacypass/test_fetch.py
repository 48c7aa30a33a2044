"""fetch_token's arguments, and what it makes of a hostile issuer's answers (a token fetched from a running issuer:
tests/privacypass/test_privacypass.py); the stub issuer listens on 127.0.0.1 and trickles for at most 20 s."""

from __future__ import annotations

import base64
import gzip
import http.server
import json
import time

import pytest

from dpdist.errors import InvalidParameterError, ServiceRefusedError, ServiceUnavailableError
from ops_support import serving, trickle_head

pytest.importorskip("httpx")


def test_an_issuer_url_with_a_password_is_refused_the_credential_would_not_be_sent():
    """httpx sends ``user:password@`` as Basic auth in place of the device's ``Bearer <credential>``."""
    from dpdist.privacypass import fetch_token

    with pytest.raises(InvalidParameterError, match="'issuer_url' parameter.*authenticates with its token") as refused:
        fetch_token("http://alice:S3cretPW@127.0.0.1:1", "k", "credential", b"c" * 10, b"k" * 10, retries=0)
    assert "S3cretPW" not in str(refused.value)


# ---------------------------------------------------------------------- a hostile issuer
CREDENTIAL = "UuGS31Fsim0VeEikJVUta0bXDckpHLp51Iq8CryPhl4"


#: the device's credential as an issuer's refusal may echo it: percent-encoded, in base64
ENCODED = f"{CREDENTIAL[:5]}%{ord(CREDENTIAL[5]):02X}{CREDENTIAL[6:]} {base64.b64encode(CREDENTIAL.encode()).decode()}"


class _Hostile(http.server.BaseHTTPRequestHandler):
    """Answers the token request as ``mode`` says: a refusal echoing the credential with ESC/BEL, one that is no dpdist
    refusal, a gzip bomb, a redirect without Location, a head trickled one byte every 0.2 s (for at most 20 s),
    a 200 of the wrong length."""
    timeout = 30
    mode = "echo"
    posts = 0

    def log_message(self, *args):  # quiet
        pass

    def do_POST(self):
        type(self).posts += 1
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.mode == "slowhead":
            trickle_head(self.wfile, 20.0)
            self.close_connection = True
            return
        status, headers, body = {
            "echo": (403, {"Content-Type": "application/json"}, json.dumps(
                {"error": "exhausted", "detail": "\u001b[2J\u001b[31mred\nline2 Bearer "
                 f"{CREDENTIAL} and bare {CREDENTIAL}, {ENCODED}"}).encode()),
            "foreign": (400, {"Content-Type": "application/json"}, json.dumps(
                {"error": "x\u001b]0;PWNED\u0007", "detail": f"Bearer {CREDENTIAL}"}).encode()),
            "bomb": (200, {"Content-Type": "application/private-token-response", "Content-Encoding": "gzip"},
                     gzip.compress(bytes(8 << 20), mtime=0)),
            "redirect": (302, {}, b""),
            "short": (200, {"Content-Type": "application/private-token-response"}, bytes(100)),
        }[self.mode]
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def campaign_key():
    from dpdist import privacypass as pp

    return pp.encode_token_key(pp.generate_private_key().public_key()), pp.TokenChallenge("issuer.example", bytes(32))


def _fetch(url, campaign_key, **options):
    from dpdist.privacypass import fetch_token

    token_key, challenge = campaign_key
    return fetch_token(url, "k1", CREDENTIAL, challenge, token_key, **{"retries": 0, **options})


@pytest.fixture
def hostile():
    _Hostile.posts = 0
    with serving(_Hostile) as url:
        yield url


def test_a_refusal_echoing_the_credential_is_shown_masked_escaped_and_in_one_line(hostile, campaign_key):
    _Hostile.mode = "echo"
    with pytest.raises(ServiceRefusedError) as error:
        _fetch(hostile, campaign_key)
    message = str(error.value)
    assert CREDENTIAL not in message and "\x1b" not in message and "\x07" not in message and "\n" not in message
    assert "The issuer refused the token request POST" in message and message.endswith(
        "(HTTP 403): exhausted: \\x1b[2J\\x1b[31mred\\nline2 Bearer *** and bare ***, *** ***=="), message
    assert error.value.status == 403 and error.value.code == "exhausted"


def test_a_refusal_that_is_no_dpdist_refusal_is_said_by_its_status_host_and_size(hostile, campaign_key):
    _Hostile.mode = "foreign"
    with pytest.raises(ServiceRefusedError) as error:
        _fetch(hostile, campaign_key)
    host = hostile.removeprefix("http://")
    assert str(error.value).endswith(f"(HTTP 400): status 400 from {host} (not a dpdist answer, 98 bytes)"), str(error.value)
    assert error.value.code == "" and "PWNED" not in str(error.value)


def test_a_gzip_bomb_is_refused_after_a_bounded_read(hostile, campaign_key):
    _Hostile.mode = "bomb"
    with pytest.raises(ServiceRefusedError) as error:
        _fetch(hostile, campaign_key)
    assert error.value.code == "answer_too_large" and "more than 64 KiB once decoded" in str(error.value), str(error.value)


def test_a_redirect_says_it_is_one_and_where_it_pointed(hostile, campaign_key):
    _Hostile.mode = "redirect"
    with pytest.raises(ServiceRefusedError) as error:
        _fetch(hostile, campaign_key)
    assert error.value.code == "redirected" and "(HTTP 302 with no Location)" in str(error.value), str(error.value)


def test_an_answer_of_the_wrong_length_names_the_issuer_not_a_parameter(hostile, campaign_key):
    _Hostile.mode = "short"
    with pytest.raises(ServiceRefusedError) as error:
        _fetch(hostile, campaign_key)
    message = str(error.value)
    assert error.value.code == "bad_response" and "100 bytes, not a TokenResponse (256 bytes)" in message, message
    assert "finalize_token" not in message


def test_a_trickled_head_ends_at_the_timeout(hostile, campaign_key):
    _Hostile.mode = "slowhead"
    started = time.monotonic()
    with pytest.raises(ServiceUnavailableError) as error:
        _fetch(hostile, campaign_key, timeout=1.0)
    assert "was not whole 1 s after the request was sent" in str(error.value), str(error.value)
    assert time.monotonic() - started < 20.0 and _Hostile.posts == 1


@pytest.mark.parametrize("mode", ["slowhead", "echo", "bomb"])
def test_the_async_fetch_reads_as_the_sync_one(hostile, campaign_key, mode):
    import asyncio

    from dpdist.privacypass import fetch_token_async

    _Hostile.mode = mode
    token_key, challenge = campaign_key
    with pytest.raises((ServiceRefusedError, ServiceUnavailableError)) as error:
        asyncio.run(fetch_token_async(hostile, "k1", CREDENTIAL, challenge, token_key, retries=0, timeout=1.0))
    message = str(error.value)
    assert CREDENTIAL not in message and "\x1b" not in message
    assert {"slowhead": "was not whole 1 s", "echo": "(HTTP 403): exhausted: \\x1b", "bomb": "larger than dpdist reads"}[mode] in message
