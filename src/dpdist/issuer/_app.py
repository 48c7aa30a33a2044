"""The issuer's ASGI application (Starlette): Privacy Pass tokens of type 0x0002 for credentials, a policy, an admin API.

Routes
------
``GET /.well-known/private-token-issuer-directory``
    The issuer directory (RFC 9578, section 4): ``issuer-request-uri`` and ``token-keys`` (every key,
    ``token-type`` 2), plus ``dpdist-keys`` (``{name: token-key}``), ``dpdist-tokens-each`` (``{name: ceiling}``)
    and ``dpdist-issuer-name``.
``GET /issuer/v1/keys/{name}``
    ``{"name", "token_type": 2, "token_key", "token_key_id", "tokens_each"}`` (token key: base64url DER SPKI; id: hex
    SHA-256; ``tokens_each``: the key's ceiling, the most tokens any of its credentials gives).
``POST /issuer/v1/keys/{name}/token-request`` (and ``POST /issuer/v1/token-request``: the key of the credential)
    ``Authorization: Bearer <credential>``, ``Content-Type: application/private-token-request``, body a
    TokenRequest (RFC 9578, section 6.1); 200 ``application/private-token-response``: the blind
    signature (256 bytes).  Refused: 401 ``unauthorized`` (no or unknown credential), 403
    ``wrong_key`` (the credential is for another key), 403 ``exhausted`` (its tokens are spent), 415,
    422 ``invalid_token_request`` (size, token type, truncated key id or value out of range: RFC 9578
    section 6.2), 429 ``rate_limited``, 408/413/503 (the service's limits), 503 ``shutting_down`` (the server's
    shutdown cut the request short).
``POST /issuer/v1/keys`` (admin), body ``{"name", "tokens_each"}``
    A new RSA-2048 key of that name (one per campaign) whose credentials give at most ``tokens_each`` tokens each
    (1..10000, default 1; fixed for good, as the key): 201 with the key as above; 409 ``key_exists``.
``POST /issuer/v1/keys/{name}/credentials`` (admin), body ``{"count", "tokens_each"}``
    ``count`` fresh credentials, each good for ``tokens_each`` tokens of the key (at most the key's ceiling, else 409
    ``above_key_ceiling``): 201 ``{"key", "tokens_each", "credentials": [...]}``.  The credentials are in this answer
    only.
``GET /issuer/v1/status`` (admin)
    Per key: credentials, tokens allowed, issued, remaining.
``GET /healthz``

The policy: a credential gives at most ``tokens_each`` tokens of its key, and no credential of a key more than the
key's published ceiling: a relayed campaign counts each credential the collector may hold as that many reports
(docs/explanation/accounting.md, "Accounting").  A token request is
counted (the credential's count decremented and the answer stored, in one committed transaction)
before it is answered; the same request again (same credential, same TokenRequest bytes) gets the
stored answer and spends nothing, so a device whose answer was lost retries without losing a token.
The issuer learns which credential obtained a token and when, never which token: it signs blinded
messages (RFC 9474).  It logs no client address.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import os
import re
from dataclasses import dataclass, field
from typing import Any, cast

from cryptography.hazmat.primitives import serialization
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._guard import Limits
from .._guard._body import content_coding_of
from .._guard._refusals import refusal_headers
from .._guard._security_headers import SecurityHeadersMiddleware
from .._guard._shutdown import ShutdownMiddleware
from ..errors import InvalidParameterError
from .._validation import InstanceOf, Optional, validate_params
from ..privacypass import _blindrsa
from ..privacypass._http_auth import b64url_encode
from ..privacypass._messages import TOKEN_TYPE, TokenRequest
from ..privacypass._token_key import encode_token_key, generate_private_key, token_key_id
from . import _limits
from ._arguments import ADMIN_TOKEN, CORS_ORIGINS, SERVER_NAME, STORE
from ._limits import Conflict, Forbidden, InvalidRequest, NotFound, Refusal, Unauthorized, Unprocessable, UnsupportedMediaType
from ._store import MAX_TOKENS_EACH, IssuerStore, credential_hash

__all__ = ["create_app", "DIRECTORY_PATH", "KEY_NAME", "MAX_CREDENTIALS", "MAX_TOKENS_EACH"]

DIRECTORY_PATH = "/.well-known/private-token-issuer-directory"
DIRECTORY_MEDIA_TYPE = "application/private-token-issuer-directory"
#: a key name: 1-128 characters A-Z a-z 0-9 . _ - (a campaign id is a good one)
KEY_NAME = re.compile(r"[A-Za-z0-9._-]{1,128}")
#: credentials minted by one admin request, at most
MAX_CREDENTIALS = 10_000


@validate_params({
    "db_path": STORE,
    "admin_token": ADMIN_TOKEN,
    "name": SERVER_NAME,
    "cors_origins": CORS_ORIGINS,
    "limits": Optional(InstanceOf(Limits, "a dpdist._guard.Limits (dpdist.serve's included)")),
}, owner="issuer.create_app")
def create_app(db_path: str, *, name: str, admin_token: str, limits: Any = None, cors_origins: Any = ()) -> Starlette:
    """The issuer (module docstring), its state in the SQLite file ``db_path``.

    Parameters
    ----------
    db_path : str or path
        The issuer's SQLite file (created if missing).  It holds the private keys: protect it.
    name : str
        The issuer's server name (host name, optional port), as TokenChallenges name it.
    admin_token : str
        The admin API's bearer token (>= 16 characters): whoever holds it mints credentials.
    limits : dpdist._guard.Limits, optional
        Header and body times, body bytes, rate per address (those of every dpdist server; :mod:`._limits`).
    cors_origins : str or sequence of str
        Origins (``https://example.org``, or ``"*"``) whose pages may request tokens from a browser.
    """
    if isinstance(cors_origins, str):  # the command line's comma-separated origins (its table checked each)
        cors_origins = tuple(origin.strip() for origin in cors_origins.split(",") if origin.strip())
    db_path, origins = os.fspath(db_path), tuple(cors_origins or ())
    limits = _limits.check_limits(limits)
    middleware = [Middleware(SecurityHeadersMiddleware)]
    if origins:
        middleware.append(Middleware(CORSMiddleware, allow_origins=list(origins), allow_methods=["GET", "POST"],
                                     allow_headers=["Authorization", "Content-Type"], max_age=600))
    middleware.append(Middleware(ShutdownMiddleware))  # the innermost: a request the shutdown cut short answered 503
    app = Starlette(routes=ROUTES, lifespan=lifespan, middleware=middleware, exception_handlers={Refusal: refused})
    app.state.issuer = _Issuer(db_path, name, admin_token, limits)
    return app


@dataclass
class _Issuer:
    """What the endpoints share (``app.state.issuer``): the settings of :func:`create_app`, the limits' state (a body
    budget with a share per client address, the rate of token requests per address), the keys loaded, and while the
    issuer runs its store (:func:`lifespan`)."""

    db_path: str
    name: str
    admin_token: str
    limits: Limits
    store: IssuerStore = field(init=False)
    keys: dict = field(default_factory=dict)

    def __post_init__(self):
        self.budget = self.limits.budget(_limits.MAX_BODY_BYTES)  # a share per client address (dpdist._guard._body)
        self.rate = _limits.RateLimiter(self.limits.rate_limit, self.limits.rate_burst)

    def signing_key(self, key_name: str):
        """The key's (private key, token key, key id), loaded once."""
        cached = self.keys.get(key_name)
        if cached is None:
            record = self.store.key(key_name)
            if record is None:
                return None
            cached = (serialization.load_der_private_key(record.private_key, password=None), record.token_key,
                      token_key_id(record.token_key))
            self.keys[key_name] = cached
        return cached

    async def body(self, request: Request, media_type: str | None = None) -> bytes:
        if media_type is not None:
            given = request.headers.get("content-type", "").split(";")[0].strip().lower()
            if given != media_type:
                raise UnsupportedMediaType("unsupported_media_type", f"The body must be {media_type}. Got {given or 'none'!r}.", close=True)
        async with _limits.receive_body(request.headers.get("content-length"), request.receive, self.limits, self.budget,
                                        _limits.MAX_BODY_BYTES, host=request.client.host if request.client else None,
                                        coding=content_coding_of(request.scope["headers"])) as data:
            return bytes(data)

    def check_admin(self, request: Request) -> None:
        header = request.headers.get("authorization", "")
        if not hmac.compare_digest(header.encode("latin-1"), f"Bearer {self.admin_token}".encode()):
            raise Unauthorized("unauthorized", f"{request.url.path} needs 'Authorization: Bearer <admin token>'.", close=True)

    async def json_body(self, request: Request) -> dict:
        try:
            document = json.loads(await self.body(request, "application/json"))
        except ValueError:
            raise InvalidRequest("invalid_json", "The body must be a JSON object.") from None
        if not isinstance(document, dict):
            raise InvalidRequest("invalid_json", "The body must be a JSON object.")
        return document

    def check_rate(self, request: Request) -> None:
        try:
            self.rate.check(request.client.host if request.client else None)
        except _limits.RateLimited as error:
            raise _limits.RateLimited(
                "rate_limited", f"This client sends token requests faster than the issuer's limit of {self.rate.rate:g} per "
                f"second (bursts of {self.rate.burst}); retry the same request later.", retry_after=error.retry_after, close=True,
            ) from None


@contextlib.asynccontextmanager
async def lifespan(app: Starlette):
    """Open the issuer's store with the server; close it at shutdown."""
    issuer: _Issuer = app.state.issuer
    issuer.store = await run_in_threadpool(IssuerStore, issuer.db_path)
    try:
        yield
    finally:
        await run_in_threadpool(issuer.store.close)


def _key_document(key_name: str, token_key: bytes, tokens_each: int) -> dict:
    return {"name": key_name, "token_type": TOKEN_TYPE, "token_key": b64url_encode(token_key),
            "token_key_id": token_key_id(token_key).hex(), "tokens_each": tokens_each}


# ---------------------------------------------------------------------- public
async def directory(request: Request) -> Response:
    issuer: _Issuer = request.app.state.issuer
    keys = await run_in_threadpool(issuer.store.token_keys)
    document = {
        "issuer-request-uri": "/issuer/v1/token-request",
        "token-keys": [{"token-type": TOKEN_TYPE, "token-key": b64url_encode(token_key)} for _, token_key, _ in keys],
        "dpdist-issuer-name": issuer.name,
        "dpdist-keys": {key_name: b64url_encode(token_key) for key_name, token_key, _ in keys},
        "dpdist-tokens-each": {key_name: ceiling for key_name, _, ceiling in keys},
    }
    return Response(json.dumps(document), media_type=DIRECTORY_MEDIA_TYPE, headers={"Cache-Control": "max-age=60"})


async def key(request: Request) -> JSONResponse:
    issuer: _Issuer = request.app.state.issuer
    key_name = request.path_params["name"]
    record = await run_in_threadpool(issuer.store.key, key_name) if KEY_NAME.fullmatch(key_name) else None
    if record is None:
        raise NotFound("unknown_key", f"The issuer has no key {key_name!r}.")
    return JSONResponse(_key_document(key_name, record.token_key, record.tokens_each), headers={"Cache-Control": "max-age=60"})


async def token_request(request: Request) -> Response:
    """A blind signature for a credential that has a token left (counted before it is answered; the same request
    again gets the stored answer and spends nothing)."""
    issuer: _Issuer = request.app.state.issuer
    issuer.check_rate(request)
    holder = credential_hash(_bearer(request))
    found = await run_in_threadpool(issuer.store.credential, holder)
    if found is None:
        raise Unauthorized("unauthorized", "The credential is unknown to this issuer.", close=True)
    key_name, remaining = found
    asked = request.path_params.get("name")
    if asked is not None and asked != key_name:
        raise Forbidden("wrong_key", f"This credential gives tokens of another key than {asked!r}.", close=True)
    data = await issuer.body(request, "application/private-token-request")
    try:
        parsed = TokenRequest.decode(data)
    except InvalidParameterError as error:
        raise Unprocessable("invalid_token_request", str(error)) from None
    signing = await run_in_threadpool(issuer.signing_key, key_name)
    if signing is None:  # the credential's key is no longer on the issuer
        raise Forbidden("wrong_key", f"The key {key_name!r} of this credential is not on this issuer.", close=True)
    private_key, _, key_id = signing
    if parsed.truncated_token_key_id != key_id[-1]:
        raise Unprocessable("invalid_token_request", f"The TokenRequest's truncated key id is not that of key {key_name!r}.")
    request_hash = hashlib.sha256(data).digest()
    stored = await run_in_threadpool(issuer.store.answered, holder, request_hash)
    if stored is None:
        stored = await _sign_and_record(issuer, holder, request_hash, private_key, parsed.blinded_msg, key_name, remaining)
    return Response(stored, media_type="application/private-token-response", headers={"Cache-Control": "no-store"})


async def _sign_and_record(issuer: _Issuer, holder: bytes, request_hash: bytes, private_key: Any, blinded: bytes,
                           key_name: str, remaining: int) -> bytes:
    """The blind signature of a request not answered before, recorded (one token spent) before it is answered."""
    if remaining <= 0:
        raise _exhausted(key_name)
    try:
        signed = await run_in_threadpool(_blindrsa.blind_sign, cast(Any, private_key), blinded)  # an RSA key: the issuer makes no other
    except InvalidParameterError as error:
        raise Unprocessable("invalid_token_request", str(error)) from None
    outcome, stored = await asyncio.wrap_future(issuer.store.issue(holder, request_hash, signed))
    if outcome == "exhausted":
        raise _exhausted(key_name)
    return stored


# ---------------------------------------------------------------------- admin
async def create_key(request: Request) -> JSONResponse:
    issuer: _Issuer = request.app.state.issuer
    issuer.check_admin(request)
    document = await issuer.json_body(request)
    key_name = document.get("name")
    if not isinstance(key_name, str) or not KEY_NAME.fullmatch(key_name):
        raise InvalidRequest("invalid_key_name", f"A key name is 1-128 characters A-Z a-z 0-9 . _ -. Got {key_name!r}.")
    ceiling = document.get("tokens_each", 1)
    if not isinstance(ceiling, int) or isinstance(ceiling, bool) or not 1 <= ceiling <= MAX_TOKENS_EACH:
        raise InvalidRequest("invalid_tokens_each", f"'tokens_each' (the most tokens any credential of the key gives) must "
                                                    f"be an int in 1..{MAX_TOKENS_EACH}. Got {ceiling!r}.")
    private_key = await run_in_threadpool(generate_private_key)
    token_key = encode_token_key(private_key.public_key())
    pkcs8 = private_key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    if not await asyncio.wrap_future(issuer.store.add_key(key_name, token_key, pkcs8, ceiling)):
        raise Conflict("key_exists", f"The issuer already has a key {key_name!r}; a key is never replaced.")
    return JSONResponse(_key_document(key_name, token_key, ceiling), status_code=201)


async def mint(request: Request) -> JSONResponse:
    issuer: _Issuer = request.app.state.issuer
    issuer.check_admin(request)
    key_name = request.path_params["name"]
    document = await issuer.json_body(request)
    count, each = _count(document, "count", MAX_CREDENTIALS), _count(document, "tokens_each", MAX_TOKENS_EACH)
    credentials = await asyncio.wrap_future(issuer.store.mint(key_name, count, each)) if KEY_NAME.fullmatch(key_name) else None
    if credentials is None:
        raise NotFound("unknown_key", f"The issuer has no key {key_name!r}.")
    if isinstance(credentials, int):
        raise Conflict("above_key_ceiling", f"'tokens_each' must be at most key {key_name!r}'s ceiling, {credentials} "
                                            f"(published with the key; campaigns count each credential as that many "
                                            f"reports). Got {each}. Nothing was minted; a key's ceiling never changes: "
                                            "a key of a higher ceiling is a new key.")
    return JSONResponse({"key": key_name, "tokens_each": each, "credentials": credentials}, status_code=201,
                        headers={"Cache-Control": "no-store"})


def _count(document: dict, name: str, top: int) -> int:
    """The int ``document[name]`` in 1..``top``, else 400 ``invalid_<name>``."""
    value = document.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= top:
        raise InvalidRequest(f"invalid_{name}", f"'{name}' must be an int in 1..{top}. Got {value!r}.")
    return value


async def status(request: Request) -> JSONResponse:
    issuer: _Issuer = request.app.state.issuer
    issuer.check_admin(request)
    return JSONResponse({"issuer_name": issuer.name, "keys": await run_in_threadpool(issuer.store.status)})


async def health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok", "service": "dpdist issuer"})


async def refused(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, Refusal)  # the one exception class this handler is registered for
    return JSONResponse({"error": error.code, "detail": error.detail}, status_code=error.status, headers=refusal_headers(error))


ROUTES = [
    Route("/healthz", health, methods=["GET"]),
    Route(DIRECTORY_PATH, directory, methods=["GET"]),
    Route("/issuer/v1/token-request", token_request, methods=["POST"]),
    Route("/issuer/v1/keys", create_key, methods=["POST"]),
    Route("/issuer/v1/keys/{name}", key, methods=["GET"]),
    Route("/issuer/v1/keys/{name}/token-request", token_request, methods=["POST"]),
    Route("/issuer/v1/keys/{name}/credentials", mint, methods=["POST"]),
    Route("/issuer/v1/status", status, methods=["GET"]),
]


def _bearer(request) -> str:
    header = request.headers.get("authorization", "")
    scheme, _, credential = header.partition(" ")
    credential = credential.strip()
    if scheme.lower() != "bearer" or not credential or not credential.isascii() or not credential.isprintable():
        raise Unauthorized("unauthorized", "A token request needs 'Authorization: Bearer <credential>'.", close=True)
    return credential


def _exhausted(key_name: str) -> Forbidden:
    return Forbidden("exhausted", f"This credential has given all its tokens of key {key_name!r}.")
