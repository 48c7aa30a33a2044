"""``dpdist issuer`` in process: keys, credentials, the policy (at most tokens_each tokens per credential,
spent durably before the answer), retries answered from the store, concurrency, bad input, the limits.

The end-to-end test over a real socket with the command line is tests/cli/test_issuer.py.
"""

from __future__ import annotations

import asyncio
import sqlite3

import httpx
import pytest

pytest.importorskip("starlette")
pytest.importorskip("cryptography")

pytestmark = pytest.mark.usefixtures("pooled_issuer_keys")  # RSA keys made once per session (tests/issuer_key_pool.py)

from starlette.testclient import TestClient  # noqa: E402

from dpdist import privacypass as pp  # noqa: E402
from dpdist.errors import InvalidParameterError, InvalidTokenError, ServiceRefusedError, ServiceUnavailableError  # noqa: E402
from dpdist.issuer import create_app  # noqa: E402
from dpdist.serve._limits import Limits  # noqa: E402

ADMIN = "issuer-admin-token-0123456789"
ADMIN_HEADERS = {"Authorization": f"Bearer {ADMIN}"}
CHALLENGE = pp.TokenChallenge("issuer.example", bytes(range(32)))


def _headers(credential: str) -> dict:
    return {"Authorization": f"Bearer {credential}", "Content-Type": pp.REQUEST_MEDIA_TYPE}


class Issuer:
    """An issuer app in process, with a key ``campaign`` and helpers."""

    def __init__(self, path, **options):
        self.path = path
        self.app = create_app(str(path), name="issuer.example", admin_token=ADMIN, **options)
        self.client = TestClient(self.app)

    def __enter__(self):
        self.client.__enter__()
        return self

    def __exit__(self, *exc):
        self.client.__exit__(*exc)

    def create_key(self, name: str = "campaign", tokens_each: int = 10) -> bytes:
        answer = self.client.post("/issuer/v1/keys", json={"name": name, "tokens_each": tokens_each}, headers=ADMIN_HEADERS)
        assert answer.status_code == 201, answer.text
        return pp.b64url_decode(answer.json()["token_key"], "token_key")

    def mint(self, name: str = "campaign", count: int = 1, tokens_each: int = 1) -> list[str]:
        answer = self.client.post(f"/issuer/v1/keys/{name}/credentials", json={"count": count, "tokens_each": tokens_each},
                                  headers=ADMIN_HEADERS)
        assert answer.status_code == 201, answer.text
        return answer.json()["credentials"]

    def ask(self, credential: str, body: bytes, name: str | None = "campaign"):
        path = f"/issuer/v1/keys/{name}/token-request" if name else "/issuer/v1/token-request"
        return self.client.post(path, content=body, headers=_headers(credential))

    def status(self) -> dict:
        return self.client.get("/issuer/v1/status", headers=ADMIN_HEADERS).json()["keys"]


@pytest.fixture
def issuer(tmp_path):
    with Issuer(tmp_path / "issuer.sqlite") as running:
        running.token_key = running.create_key()
        yield running


def test_a_credential_gets_a_token_that_verifies(issuer):
    credential = issuer.mint()[0]
    pending = pp.request_token(CHALLENGE, issuer.token_key)
    answer = issuer.ask(credential, pending.request)
    assert answer.status_code == 200 and answer.headers["content-type"] == pp.RESPONSE_MEDIA_TYPE
    assert answer.headers["cache-control"] == "no-store" and len(answer.content) == 256
    token = pp.finalize_token(pending, answer.content)
    assert pp.verify_token(token, issuer.token_key, CHALLENGE) == pending.token_input[2:34]
    assert issuer.status() == {"campaign": {"tokens_each": 10, "credentials": 1, "tokens": 1, "issued": 1, "remaining": 0}}


def test_the_directory_and_the_key(issuer):
    issuer.create_key("other")
    answer = issuer.client.get("/.well-known/private-token-issuer-directory")
    assert answer.status_code == 200 and answer.headers["content-type"] == "application/private-token-issuer-directory"
    directory = answer.json()
    assert directory["issuer-request-uri"] == "/issuer/v1/token-request"
    assert [entry["token-type"] for entry in directory["token-keys"]] == [2, 2]
    assert directory["dpdist-keys"]["campaign"] == pp.b64url_encode(issuer.token_key)
    assert directory["token-keys"][0]["token-key"] == pp.b64url_encode(issuer.token_key)
    assert directory["dpdist-issuer-name"] == "issuer.example"
    assert directory["dpdist-tokens-each"] == {"campaign": 10, "other": 10}
    document = issuer.client.get("/issuer/v1/keys/campaign").json()
    assert document == {"name": "campaign", "token_type": 2, "token_key": pp.b64url_encode(issuer.token_key),
                        "token_key_id": pp.token_key_id(issuer.token_key).hex(), "tokens_each": 10}
    assert issuer.client.get("/issuer/v1/keys/nothing").status_code == 404
    assert issuer.client.get("/healthz").json()["service"] == "dpdist issuer"


def test_a_retry_of_the_same_request_is_answered_from_the_store_and_spends_nothing(issuer):
    credential = issuer.mint(tokens_each=2)[0]
    pending = pp.request_token(CHALLENGE, issuer.token_key)
    first = issuer.ask(credential, pending.request)
    again = issuer.ask(credential, pending.request)
    generic = issuer.ask(credential, pending.request, name=None)  # the RFC 9578 route: the key of the credential
    assert first.status_code == again.status_code == generic.status_code == 200
    assert first.content == again.content == generic.content
    assert issuer.status()["campaign"]["issued"] == 1


def test_a_credential_gives_at_most_tokens_each_tokens(issuer):
    single, triple = issuer.mint(tokens_each=1)[0], issuer.mint(tokens_each=3)[0]
    assert issuer.ask(single, pp.request_token(CHALLENGE, issuer.token_key).request).status_code == 200
    refused = issuer.ask(single, pp.request_token(CHALLENGE, issuer.token_key).request)
    assert refused.status_code == 403 and refused.json()["error"] == "exhausted"
    answers = [issuer.ask(triple, pp.request_token(CHALLENGE, issuer.token_key).request, name=None) for _ in range(4)]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 403]
    assert issuer.status()["campaign"] == {"tokens_each": 10, "credentials": 2, "tokens": 4, "issued": 4, "remaining": 0}


def test_a_key_publishes_its_ceiling_and_no_credential_of_it_gives_more(issuer):
    """A relayed campaign counts each credential the collector may hold as ``tokens_each`` reports: the issuer publishes
    that ceiling with the key, and refuses to mint a credential above it."""
    answer = issuer.client.post("/issuer/v1/keys", json={"name": "once"}, headers=ADMIN_HEADERS)  # the default: one report
    assert answer.status_code == 201 and answer.json()["tokens_each"] == 1
    assert issuer.client.get("/issuer/v1/keys/once").json()["tokens_each"] == 1
    above = issuer.client.post("/issuer/v1/keys/once/credentials", json={"count": 3, "tokens_each": 2}, headers=ADMIN_HEADERS)
    assert above.status_code == 409 and above.json()["error"] == "above_key_ceiling"
    assert "ceiling, 1" in above.json()["detail"] and "Got 2" in above.json()["detail"]
    assert issuer.status()["once"] == {"tokens_each": 1, "credentials": 0, "tokens": 0, "issued": 0, "remaining": 0}
    assert len(issuer.mint("once", count=2, tokens_each=1)) == 2
    for ceiling in (0, 10_001, True, "5", 2.0):
        answer = issuer.client.post("/issuer/v1/keys", json={"name": "bad", "tokens_each": ceiling}, headers=ADMIN_HEADERS)
        assert (answer.status_code, answer.json()["error"]) == (400, "invalid_tokens_each"), ceiling
    assert issuer.client.get("/issuer/v1/keys/bad").status_code == 404


def test_keys_of_a_schema_1_database_get_the_ceiling_of_their_credentials(tmp_path):
    """An issuer database of the previous version has no ceilings: each key gets the most tokens any of its credentials
    was minted with (what its credentials may give), or 10,000 (the most any could) for a key without credentials."""
    path = tmp_path / "issuer.sqlite"
    with Issuer(path) as issuer:
        issuer.create_key("minted", tokens_each=10)
        issuer.mint("minted", tokens_each=3)
        issuer.mint("minted", tokens_each=7)
        issuer.create_key("bare", tokens_each=10)
    with sqlite3.connect(path) as db:  # the schema of version 1: no ceiling column
        db.execute("ALTER TABLE keys DROP COLUMN tokens_each")
        db.execute("PRAGMA user_version=1")
    with Issuer(path) as issuer:
        assert {name: key["tokens_each"] for name, key in issuer.status().items()} == {"minted": 7, "bare": 10_000}
        above = issuer.client.post("/issuer/v1/keys/minted/credentials", json={"count": 1, "tokens_each": 8}, headers=ADMIN_HEADERS)
        assert above.json()["error"] == "above_key_ceiling"
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA user_version").fetchone() == (2,)


def test_a_credential_of_one_key_gets_no_token_of_another(issuer):
    # another key whose id ends in another byte: a TokenRequest names its key by that byte alone, so the generic route
    # (the credential's key) cannot tell two keys apart that share it (1 in 256; this test failed once so)
    truncated = pp.token_key_id(issuer.token_key)[-1]
    for index in range(8):
        name, other_key = f"other{index}", issuer.create_key(f"other{index}")
        if pp.token_key_id(other_key)[-1] != truncated:
            break
    credential = issuer.mint("campaign")[0]
    pending = pp.request_token(CHALLENGE, other_key)
    answer = issuer.ask(credential, pending.request, name=name)
    assert answer.status_code == 403 and answer.json()["error"] == "wrong_key"
    answer = issuer.ask(credential, pending.request, name=None)  # the generic route: the request names the other key
    assert answer.status_code == 422 and answer.json()["error"] == "invalid_token_request"
    assert issuer.status()["campaign"]["issued"] == 0


async def _concurrently(app, requests: list[tuple[str, bytes]]) -> list[httpx.Response]:
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://issuer") as client:
            return await asyncio.gather(*(client.post("/issuer/v1/keys/campaign/token-request", content=body,
                                                      headers=_headers(credential)) for credential, body in requests))


def test_concurrent_requests_for_the_last_token_give_exactly_one(tmp_path):
    with Issuer(tmp_path / "issuer.sqlite") as issuer:
        token_key = issuer.create_key()
        credential = issuer.mint(tokens_each=2)[0]
        assert issuer.ask(credential, pp.request_token(CHALLENGE, token_key).request).status_code == 200  # one left
    pendings = [pp.request_token(CHALLENGE, token_key) for _ in range(8)]
    answers = asyncio.run(_concurrently(issuer.app, [(credential, pending.request) for pending in pendings]))
    codes = sorted(answer.status_code for answer in answers)
    assert codes == [200] + [403] * 7, codes
    winner = next(index for index, answer in enumerate(answers) if answer.status_code == 200)
    pp.verify_token(pp.finalize_token(pendings[winner], answers[winner].content), token_key, CHALLENGE)
    assert {answer.json()["error"] for answer in answers if answer.status_code == 403} == {"exhausted"}
    with sqlite3.connect(tmp_path / "issuer.sqlite") as db:
        assert db.execute("SELECT remaining FROM credentials").fetchall() == [(0,)]
        assert db.execute("SELECT COUNT(*) FROM issued").fetchone() == (2,)


def test_concurrent_copies_of_one_request_spend_one_token(tmp_path):
    with Issuer(tmp_path / "issuer.sqlite") as issuer:
        token_key = issuer.create_key()
        credential = issuer.mint(tokens_each=5)[0]
    pending = pp.request_token(CHALLENGE, token_key)
    answers = asyncio.run(_concurrently(issuer.app, [(credential, pending.request)] * 6))
    assert [answer.status_code for answer in answers] == [200] * 6
    assert len({answer.content for answer in answers}) == 1
    with sqlite3.connect(tmp_path / "issuer.sqlite") as db:
        assert db.execute("SELECT remaining FROM credentials").fetchall() == [(4,)]


def test_the_state_survives_a_restart(tmp_path):
    path = tmp_path / "issuer.sqlite"
    with Issuer(path) as issuer:
        token_key = issuer.create_key()
        credential = issuer.mint(tokens_each=1)[0]
        pending = pp.request_token(CHALLENGE, token_key)
        first = issuer.ask(credential, pending.request).content
    with Issuer(path) as issuer:
        assert issuer.ask(credential, pending.request).content == first  # the answer lost in the crash, given again
        refused = issuer.ask(credential, pp.request_token(CHALLENGE, token_key).request)
        assert refused.status_code == 403 and refused.json()["error"] == "exhausted"
        assert issuer.client.get("/issuer/v1/keys/campaign").json()["token_key"] == pp.b64url_encode(token_key)
    with sqlite3.connect(path) as db:  # credentials are stored hashed, never as given
        hashes = [bytes(row[0]) for row in db.execute("SELECT hash FROM credentials")]
        assert hashes and credential.encode() not in hashes and len(hashes[0]) == 32
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


def test_bad_token_requests_are_refused(issuer):
    credential = issuer.mint(tokens_each=10)[0]
    good = pp.request_token(CHALLENGE, issuer.token_key).request
    n = pp.decode_token_key(issuer.token_key).public_numbers().n
    cases = {
        "no credential": (None, good, pp.REQUEST_MEDIA_TYPE, 401, "unauthorized"),
        "unknown credential": ("x" * 43, good, pp.REQUEST_MEDIA_TYPE, 401, "unauthorized"),
        "basic": ("basic", good, pp.REQUEST_MEDIA_TYPE, 401, "unauthorized"),
        "json": (credential, good, "application/json", 415, "unsupported_media_type"),
        "gzip": (credential, good, pp.REQUEST_MEDIA_TYPE, 415, "unsupported_content_encoding"),
        "gzip twice": (credential, good, pp.REQUEST_MEDIA_TYPE, 415, "unsupported_content_encoding"),
        "short": (credential, good[:-1], pp.REQUEST_MEDIA_TYPE, 422, "invalid_token_request"),
        "long": (credential, good + b"\x00", pp.REQUEST_MEDIA_TYPE, 422, "invalid_token_request"),
        "type 1": (credential, b"\x00\x01" + good[2:], pp.REQUEST_MEDIA_TYPE, 422, "invalid_token_request"),
        "key id": (credential, good[:2] + bytes([good[2] ^ 1]) + good[3:], pp.REQUEST_MEDIA_TYPE, 422, "invalid_token_request"),
        "out of range": (credential, good[:3] + n.to_bytes(256, "big"), pp.REQUEST_MEDIA_TYPE, 422, "invalid_token_request"),
        "too large": (credential, bytes(70_000), pp.REQUEST_MEDIA_TYPE, 413, "too_large"),
    }
    for case, (who, body, media_type, status, code) in cases.items():
        headers = {"Content-Type": media_type}
        if who == "basic":
            headers["Authorization"] = "Basic dXNlcjpwYXNz"
        elif who is not None:
            headers["Authorization"] = f"Bearer {who}"
        if case == "gzip":  # a body in a content coding: not read (the credential spends nothing)
            headers["Content-Encoding"] = "gzip"
        listed = list(headers.items()) + ([("Content-Encoding", "identity"), ("Content-Encoding", "gzip")]
                                          if case == "gzip twice" else [])  # every line counts
        answer = issuer.client.post("/issuer/v1/keys/campaign/token-request", content=body, headers=listed)
        assert (answer.status_code, answer.json()["error"]) == (status, code), case
        if status == 401:
            assert answer.headers["www-authenticate"] == "Bearer"
    assert issuer.status()["campaign"]["issued"] == 0


def test_the_admin_api_needs_the_admin_token_and_checks_its_input(issuer):
    for headers in ({}, {"Authorization": "Bearer wrong-token-0123456789"}, {"Authorization": f"Bearer {ADMIN}x"}):
        assert issuer.client.post("/issuer/v1/keys", json={"name": "x"}, headers=headers).status_code == 401
        assert issuer.client.post("/issuer/v1/keys/campaign/credentials", json={"count": 1, "tokens_each": 1},
                                  headers=headers).status_code == 401
        assert issuer.client.get("/issuer/v1/status", headers=headers).status_code == 401
    again = issuer.client.post("/issuer/v1/keys", json={"name": "campaign"}, headers=ADMIN_HEADERS)
    assert again.status_code == 409 and again.json()["error"] == "key_exists"
    for body, code in (({"name": "a b"}, "invalid_key_name"), ({}, "invalid_key_name"), ({"name": "x" * 129}, "invalid_key_name")):
        answer = issuer.client.post("/issuer/v1/keys", json=body, headers=ADMIN_HEADERS)
        assert (answer.status_code, answer.json()["error"]) == (400, code)
    answer = issuer.client.post("/issuer/v1/keys", content=b"[1]", headers={**ADMIN_HEADERS, "Content-Type": "application/json"})
    assert (answer.status_code, answer.json()["error"]) == (400, "invalid_json")
    for body, code in (({"count": 0, "tokens_each": 1}, "invalid_count"), ({"count": 10_001, "tokens_each": 1}, "invalid_count"),
                       ({"count": 1, "tokens_each": True}, "invalid_tokens_each"), ({"count": 1}, "invalid_tokens_each")):
        answer = issuer.client.post("/issuer/v1/keys/campaign/credentials", json=body, headers=ADMIN_HEADERS)
        assert (answer.status_code, answer.json()["error"]) == (400, code)
    answer = issuer.client.post("/issuer/v1/keys/none/credentials", json={"count": 1, "tokens_each": 1}, headers=ADMIN_HEADERS)
    assert (answer.status_code, answer.json()["error"]) == (404, "unknown_key")
    credentials = issuer.mint(count=50)
    assert len(set(credentials)) == 50 and all(len(credential) == 43 for credential in credentials)  # 256 random bits each


def test_the_rate_limit_per_address(tmp_path):
    with Issuer(tmp_path / "issuer.sqlite", limits=Limits(rate_limit=0.5, rate_burst=2)) as issuer:
        token_key = issuer.create_key()
        credential = issuer.mint(tokens_each=5)[0]
        answers = [issuer.ask(credential, pp.request_token(CHALLENGE, token_key).request) for _ in range(3)]
    assert [answer.status_code for answer in answers] == [200, 200, 429]
    assert answers[2].json()["error"] == "rate_limited" and int(answers[2].headers["retry-after"]) >= 1


def test_cors_lets_the_named_origins_ask_for_tokens(tmp_path):
    with Issuer(tmp_path / "issuer.sqlite", cors_origins="https://collector.example") as issuer:
        preflight = issuer.client.options("/issuer/v1/keys/campaign/token-request", headers={
            "Origin": "https://collector.example", "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type"})
        assert preflight.status_code == 200
        assert preflight.headers["access-control-allow-origin"] == "https://collector.example"
        other = issuer.client.get("/healthz", headers={"Origin": "https://elsewhere.example"})
        assert "access-control-allow-origin" not in other.headers


def test_create_app_checks_its_arguments_as_the_command_line_does(tmp_path):
    path = str(tmp_path / "i.sqlite")
    bad = [
        ({"db_path": ""}, "db_path"),
        ({"name": "issuer@example"}, "name"),
        ({"name": "issuer.example:70000"}, "name"),
        ({"name": ""}, "name"),
        ({"admin_token": "short"}, "admin_token"),
        ({"admin_token": None}, "admin_token"),
        ({"cors_origins": ["collector.example"]}, "cors_origins"),
        ({"limits": {"rate_limit": 1}}, "limits"),
        ({"limits": Limits(header_timeout=-1)}, "--header-timeout"),
    ]
    for change, named in bad:
        arguments = {"db_path": path, "name": "issuer.example", "admin_token": ADMIN, **change}
        with pytest.raises(InvalidParameterError, match=named):
            create_app(arguments.pop("db_path"), **arguments)
    create_app(path, name="issuer.example:8443", admin_token=ADMIN, cors_origins="*")


# ---------------------------------------------------------------------- the client over HTTP
class LosingTransport(httpx.BaseTransport):
    """Forwards to the in-process issuer; the first ``lose`` answers are lost after the issuer sent them."""

    def __init__(self, client: TestClient, lose: int):
        self.client, self.lose, self.requests = client, lose, []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request.content)
        answer = self.client.post(request.url.path, content=request.content, headers=dict(request.headers))
        if self.lose > 0:
            self.lose -= 1
            raise httpx.ReadError("connection reset", request=request)
        return httpx.Response(answer.status_code, headers=answer.headers, content=answer.content)


def test_fetch_token_retries_the_same_request_and_the_lost_answer_costs_nothing(issuer):
    credential = issuer.mint(tokens_each=1)[0]
    transport = LosingTransport(issuer.client, lose=2)
    token = pp.fetch_token("http://issuer", "campaign", credential, CHALLENGE, issuer.token_key, backoff=0.001, transport=transport)
    pp.verify_token(token, issuer.token_key, CHALLENGE)
    assert len(transport.requests) == 3 and len(set(transport.requests)) == 1  # the same blinded request each time
    assert issuer.status()["campaign"]["issued"] == 1
    with pytest.raises(ServiceRefusedError) as refused:  # a second token: refused
        pp.fetch_token("http://issuer", "campaign", credential, CHALLENGE, issuer.token_key, transport=LosingTransport(issuer.client, 0))
    assert (refused.value.status, refused.value.code) == (403, "exhausted")


def test_fetch_token_gives_up_after_its_retries_and_checks_its_arguments(issuer):
    credential = issuer.mint()[0]
    with pytest.raises(ServiceUnavailableError, match="3 attempt"):
        pp.fetch_token("http://issuer", "campaign", credential, CHALLENGE, issuer.token_key, retries=2, backoff=0.001,
                       transport=LosingTransport(issuer.client, lose=5))
    for arguments, named in ((("ftp://x", "campaign", credential), "issuer_url"), (("http://x", "a b", credential), "key_name"),
                             (("http://x", "campaign", ""), "credential")):
        with pytest.raises(InvalidParameterError, match=named):
            pp.fetch_token(*arguments, CHALLENGE, issuer.token_key)
    for option, value in (("retries", -1), ("retries", 1.5), ("backoff", 0), ("timeout", float("nan"))):
        with pytest.raises(InvalidParameterError, match=option):
            pp.fetch_token("http://x", "campaign", credential, CHALLENGE, issuer.token_key, **{option: value})


def test_fetch_token_refuses_an_answer_signed_by_another_key(issuer):
    """An issuer that signs with another key than the campaign's (to tag its clients) gives no token."""
    def modulus(token_key: bytes) -> int:
        return pp.decode_token_key(token_key).public_numbers().n

    for attempt in range(64):  # a key whose modulus is above the campaign's, so that it can sign any blinded message
        name = f"other{attempt}"
        other = issuer.create_key(name)
        if modulus(other) > modulus(issuer.token_key):
            break
    credential = issuer.mint(name)[0]
    with pytest.raises(InvalidTokenError) as caught:  # the device asks with the campaign's key, the issuer signs with 'other'
        pp.fetch_token("http://issuer", name, credential, CHALLENGE, issuer.token_key, transport=_RewritingTransport(issuer.client, other))
    assert caught.value.reason == "invalid_signature"


class _RewritingTransport(httpx.BaseTransport):
    """A lying issuer: whatever key id the request names, it signs with ``key``'s truncated id."""

    def __init__(self, client: TestClient, token_key: bytes):
        self.client, self.key_id = client, pp.token_key_id(token_key)

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        body = request.content[:2] + self.key_id[-1:] + request.content[3:]
        answer = self.client.post(request.url.path, content=body, headers=dict(request.headers))
        return httpx.Response(answer.status_code, headers=answer.headers, content=answer.content)


def test_fetch_token_async(issuer):
    credential = issuer.mint()[0]

    async def main():  # the app's state is the running TestClient's (its lifespan opened the store)
        return await pp.fetch_token_async("http://issuer", "campaign", credential, CHALLENGE.encode(), issuer.token_key,
                                          transport=httpx.ASGITransport(app=issuer.app))

    token = asyncio.run(main())
    assert pp.verify_token(token, issuer.token_key, CHALLENGE) == token[2:34]
