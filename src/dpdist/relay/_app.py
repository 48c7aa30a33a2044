"""The relay's ASGI application (Starlette): sealed reports in, nothing about their senders out.

Routes
------
``PUT /relay/v1/campaigns/{campaign}/reports/{report_id}``
    A report in dpdist's own envelope (:mod:`dpdist._wire._envelope`, deprecated: from devices of earlier versions,
    taken until dpdist 0.2.0 while the campaign takes it; or, as ``message/ohttp-req``, an RFC 9458 request, as on the
    ``ohttp`` route below), under a report id the device chose at random (1-128
    characters ``A-Z a-z 0-9 . _ -``; a retry sends the same id, and a report sealed again under an
    id already accepted is that report: ``duplicate``).  A campaign that names an issuer admits a
    report only with ``Authorization: PrivateToken token="..."`` (RFC 9577 section 2.2): a Privacy
    Pass token of type 2 (RFC 9578) that verifies under the campaign's issuer key and challenge and
    was never spent in the campaign, bound to the report it comes with (its nonce commits to the report's HPKE
    ``enc``: :mod:`dpdist._wire._binding`); without one the answer is 401 with
    ``WWW-Authenticate: PrivateToken challenge=..., token-key=...`` (RFC 9577 section 2.1), a token
    already spent by another report 403 ``token_spent``, a token bound to another report 403 ``token_not_bound``.  202 once it is durable:
    ``{"campaign", "report_id", "duplicate", "queued": true}``.  Refused: 404 unknown campaign, 409 campaign not
    open or not collected through a relay, 400 not a sealed report for the campaign's current key,
    413 too large, 409 ``sealed_v1_off`` when the campaign turned dpdist's envelope off (a retry of a report id
    accepted before is answered ``duplicate`` first; and while fewer than K reports in dpdist's envelope, acknowledged
    before the switch, wait, such reports are still taken until they are K: they could never form a batch otherwise).  The same sealed
    bytes under another report id are that report (``duplicate``: the HPKE ``enc`` is the device's).
``PUT /relay/v1/campaigns/{campaign}/ohttp/{report_id}`` (or the route above with ``message/ohttp-req``)
    A report as an RFC 9458 encapsulated request (``message/ohttp-req``; :mod:`dpdist._wire._ohttp_report`), as every
    dpdist client sends it, encapsulated to the Oblivious HTTP key configuration of the campaign's identity
    (``relay.ohttp``), with the same pin, token, report id, queue, batches and acknowledgement.  The answer is the relay's own, in
    the clear, at once (it cannot wait for the batch; the gateway's ``message/ohttp-res`` never comes
    back): 202 means the relay committed the request to its queue and will deliver it in a shuffled
    batch, not that the collector could open or count it.  Refused: 415 ``not_ohttp`` (another
    content type, on this route), 400 ``not_encapsulated`` (not key id 0 and dpdist's suite, or a
    length out of range), 400 ``wrong_length`` (not the one length every report of the campaign pads to:
    :func:`dpdist._wire._ohttp_report.report_length`; a report in dpdist's envelope longer than that plus 256 bytes is refused
    the same way, so that no report can make its batch too large for the collector),
    409 ``no_ohttp_key`` (an identity made before campaigns had one).
``GET /api/campaigns/{campaign}/config``, ``GET /api/campaigns/{campaign}/identity``
    The collector's public config and the campaign's identity document (verbatim bytes), passed on
    (with their content type and security headers) and cached for a few seconds.  A device does not
    trust a config the relay serves unless it was given the campaign's pin and the identity hashes to
    it (:mod:`dpdist._wire._identity`); the relay serves no page and no script (a page the relay served would be
    code the relay controls): devices load the participation page from the collector, which sends to
    the relay (CORS: any origin may ``PUT`` with ``Authorization`` and ``content-type``; no cookies).
``GET /healthz``; ``GET /relay/v1/status`` (admin token): reports waiting per campaign (and per campaign and envelope,
    ``waiting_by_envelope``: ``sealed_v1``, ``ohttp``), batches by state, reports dropped per campaign, and the requests
    refused since the relay started, by error code (``refused``: ``token_not_bound``, ``token_spent``, ...; in memory).
``DELETE /relay/v1/campaigns/{campaign}/queue`` (admin token)
    Drop the reports of the campaign that wait for a batch (a campaign deleted, or created again under its id, whose
    reports can never be delivered): ``{"campaign", "dropped"}``, counted in the status and logged.  Their report ids
    and token nonces are forgotten with them (a device that sends one again is not told it was delivered); batches
    already formed are delivered as before, and the identity the relay pinned stays pinned.

The relay logs no client address and no per-report time (uvicorn's access log is off), trusts no
forwarding header, and answers every device the same way whatever it sent: it cannot read it.  It
keeps the limits of ``dpdist serve`` (:mod:`dpdist._guard`): header and body time, minimum body rate,
body size and memory (with a share per client address), concurrency, and a rate of submissions per
address kept in memory only for its window.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .._http import _telemetry
from .._http._deadline import PAGE_ANSWER_BYTES, request_within_async
from .._http._tls import verifying_context
from .._guard import AUTHENTICATED, Limits, guard
from .._json import loads_within
from .._validation import validate_params
from ..errors import InvalidParameterError
from ..privacypass import b64url_decode, format_www_authenticate, parse_authorization, verify_token
from .. import _ohttp
from .._wire import _binding, _envelope, _ohttp_report
from .._wire._frames import MAX_SEALED_BYTES
from . import _queue
from ._arguments import RELATIONS, RULES
from ._collector import PAGE_DEADLINE_S, PAGES_KEPT_BYTES
from ._forwarder import Forwarder
from .._wire._identity import PIN_HEADER, campaign_challenge, pin_of
from ._queue import RelayQueue

__all__ = ["create_app"]

log = logging.getLogger("dpdist.relay")
_REPORT_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
_CAMPAIGN = re.compile(r"[A-Za-z0-9._-]{1,128}")
_CONFIG_TTL_S = 5.0
_KEPT_HEADERS = {"content-type", "content-security-policy", "cache-control", "x-content-type-options", "referrer-policy",
                 "cross-origin-opener-policy", "cross-origin-resource-policy", "permissions-policy"}


class RelayError(Exception):
    def __init__(self, status: int, code: str, detail: str, headers: dict | None = None):
        super().__init__(detail)
        self.status, self.code, self.detail, self.headers = status, code, detail, headers


class _PublicPages:
    """GETs of the collector's public pages, each answer (status, kept headers, body) cached for a few seconds."""

    def __init__(self, client):
        self.client, self.cache, self.kept_bytes = client, {}, 0

    async def get(self, path: str, fresh: bool = False) -> tuple[int, dict, bytes]:
        """The page (``fresh``: asked of the collector now, whatever is cached)."""
        hit = None if fresh else self.cache.get(path)
        if hit is not None and time.monotonic() - hit[0] < _CONFIG_TTL_S:
            return hit[1:]
        try:  # bounded in time and bytes (:mod:`._collector`): a trickling or gzip-bomb answer is none
            response = await request_within_async(self.client, "GET", path, PAGE_DEADLINE_S, limit=PAGE_ANSWER_BYTES)
        except Exception:
            raise RelayError(503, "collector_unavailable", "The collector did not answer; try again later.") from None
        headers = {name: value for name, value in response.headers.items() if name.lower() in _KEPT_HEADERS}
        if response.status_code < 500:
            replaced = self.cache.pop(path, None)
            self.kept_bytes -= len(replaced[3]) if replaced is not None else 0
            if len(self.cache) >= 4096 or self.kept_bytes + len(response.content) > PAGES_KEPT_BYTES:
                self.cache.clear()
                self.kept_bytes = 0
            self.kept_bytes += len(response.content)
            self.cache[path] = (time.monotonic(), response.status_code, headers, response.content)
        return response.status_code, headers, response.content

    async def config(self, campaign: str, fresh: bool = False) -> tuple[int, dict]:
        status, _, body = await self.get(f"/api/campaigns/{campaign}/config", fresh)
        try:
            document = loads_within(body, PAGE_ANSWER_BYTES)
        except ValueError:  # not JSON, nested deeper than Python reads or too many values (dpdist._json.loads)
            raise RelayError(503, "collector_unavailable", f"The collector answered {status} without JSON.") from None
        if not isinstance(document, dict):  # the callers read keys: a list or a number is no config
            raise RelayError(503, "collector_unavailable", f"The collector answered {status} without a JSON object.")
        return status, document


@validate_params(RULES, owner="dpdist.relay.create_app", relations=RELATIONS)
def create_app(
    db_path: str,
    *,
    collector: str,
    relay_token: str,
    min_batch: int,
    max_batch: int,
    admin_token: str | None = None,
    interval: float = 0.5,
    transport: Any = None,
    limits: Limits | None = None,
    max_body_bytes: int = MAX_SEALED_BYTES,
) -> Starlette:
    """The relay (module docstring): queue in ``db_path`` (SQLite), batches of ``min_batch`` to ``max_batch``
    reports delivered to ``collector`` with ``relay_token``; ``transport``: an httpx transport, for tests.

    ``limits`` (default :class:`dpdist._guard.Limits`): the bounds of ``dpdist serve`` that the relay keeps too,
    request bodies of at most ``max_body_bytes`` (:func:`dpdist._guard.guard`; its state at ``app.state.guard``);
    run the application with ``uvicorn.run(app, ..., **dpdist._guard.uvicorn_options(limits))``.  Arguments the
    relay cannot run with raise :class:`~dpdist.errors.InvalidParameterError` (its table: :mod:`._arguments`).
    """
    limits = (limits or Limits()).check(max_body_bytes)  # a bad limit is refused before anything is opened
    app = Starlette(routes=ROUTES, lifespan=lifespan, exception_handlers={RelayError: refused})
    app.state.relay = _Relay(db_path, collector, relay_token, min_batch, max_batch, admin_token, interval, transport)
    # the service's limits: body size, time, memory (per address; a submission is anonymous until its token verifies),
    # the rate of PUT/POST per address (in memory, never logged); header time and the concurrency cap are uvicorn's
    guard(app, limits, max_body_bytes=max_body_bytes)
    # outermost: a participation page served by the collector sends to the relay from its own origin (no cookies, no
    # credentials), and sees every answer, the limits' refusals included
    app.add_middleware(CORSMiddleware, allow_origins=["*"], allow_methods=["GET", "PUT", "POST"],
                       allow_headers=["authorization", "content-type", PIN_HEADER.lower()], expose_headers=["www-authenticate", "retry-after"],
                       max_age=600)
    if _telemetry.start("dpdist-relay"):  # a span per request (a new trace: a device's traceparent is not taken)
        app.add_middleware(_telemetry.TracingMiddleware, facts=_telemetry.route_fields)
    return app


@dataclass
class _Relay:
    """What the endpoints share (``app.state.relay``): the settings of :func:`create_app` and, while the relay runs,
    its queue, its forwarder and the collector's public pages (:func:`lifespan`)."""

    db_path: str
    collector: str
    relay_token: str
    min_batch: int
    max_batch: int
    admin_token: str | None
    interval: float
    transport: Any
    refused: Counter = field(default_factory=Counter)  # requests refused since start, by error code
    store: RelayQueue = field(init=False)
    forwarder: Forwarder = field(init=False)
    pages: _PublicPages = field(init=False)


@contextlib.asynccontextmanager
async def lifespan(app: Starlette):
    """Open the queue, start the forwarder with the server; at shutdown stop it and close the queue."""
    state: _Relay = app.state.relay
    state.store = await run_in_threadpool(RelayQueue, state.db_path)
    client = httpx.AsyncClient(base_url=state.collector.rstrip("/"), transport=state.transport, timeout=60.0,
                               verify=verifying_context())
    state.forwarder = Forwarder(state.store, client, relay_token=state.relay_token, min_batch=state.min_batch,
                                max_batch=state.max_batch, interval=state.interval)
    state.pages = _PublicPages(client)
    task = asyncio.create_task(state.forwarder.run())
    try:
        yield
    finally:
        await _cancelled(task)
        await client.aclose()
        await run_in_threadpool(state.store.close)
        await run_in_threadpool(_telemetry.flush)


async def _cancelled(task: asyncio.Task) -> None:
    """Cancel ``task`` until it ended: one cancellation a library's await drops (as ``asyncio.wait_for`` did before
    Python 3.12) must not leave the relay's shutdown waiting for a loop that never ends."""
    while not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=1.0)


# ---------------------------------------------------------------------- the endpoints
async def submit(request: Request) -> JSONResponse:
    """A report in dpdist's deprecated envelope (:mod:`dpdist._wire._envelope`), or, as ``message/ohttp-req``, an RFC 9458
    request."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == _ohttp.REQUEST_CONTENT_TYPE:
        return await _queue_report(request, _queue.OHTTP)
    return await _queue_report(request, _queue.SEALED_V1)


async def submit_ohttp(request: Request) -> JSONResponse:
    """An RFC 9458 encapsulated report (:mod:`dpdist._wire._ohttp_report`), ``message/ohttp-req`` only."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != _ohttp.REQUEST_CONTENT_TYPE:
        raise RelayError(415, "not_ohttp", f"This route takes {_ohttp.REQUEST_CONTENT_TYPE} (RFC 9458). Got {kind[:80]!r}.")
    return await _queue_report(request, _queue.OHTTP)


async def _queue_report(request: Request, envelope: int) -> JSONResponse:
    """Admit one report (campaign, pin, token, envelope), commit it to the queue, and acknowledge it: 202 once durable
    (the relay holds it and will deliver it in a shuffled batch; not that the collector counted it, which it tells no
    device)."""
    state: _Relay = request.app.state.relay
    campaign, report_id = request.path_params["campaign"], request.path_params["report_id"]
    if not _REPORT_ID.fullmatch(report_id) or not _CAMPAIGN.fullmatch(campaign):
        raise RelayError(400, "invalid_report_id", "A report id and a campaign id are 1-128 characters A-Z a-z 0-9 . _ -.")
    relay = await _relayed_campaign(state.pages, campaign)
    if envelope == _queue.SEALED_V1 and (relay.get("envelopes") or {}).get("sealed_v1") is False:
        if await asyncio.to_thread(state.store.known, campaign, report_id):  # a retry of a report accepted before the switch
            return JSONResponse({"campaign": campaign, "report_id": report_id, "duplicate": True, "queued": True},
                                status_code=202)
        if not 0 < await asyncio.to_thread(state.store.waiting_in, campaign, _queue.SEALED_V1) < state.min_batch:
            raise RelayError(409, "sealed_v1_off", f"Campaign {campaign!r} takes reports as Oblivious HTTP requests only "
                                                   f"(RFC 9458, {_ohttp.REQUEST_CONTENT_TYPE}), no longer in dpdist's own "
                                                   "envelope.")
        # else fewer than K reports in dpdist's envelope wait: taken until they are K, so that they form a batch
    pin, identity = await _pinned_identity(state, campaign, relay, request.headers.get(PIN_HEADER))
    if envelope == _queue.OHTTP and "ohttp" not in identity["relay"]:
        raise RelayError(409, "no_ohttp_key", f"Campaign {campaign!r}'s identity names no Oblivious HTTP key configuration "
                                              "(it was made before): send its reports in dpdist's envelope.")
    token, nonce = _admission(identity, pin, request.headers.get("authorization"))  # before the body is read
    if nonce is not None:  # a device the issuer admitted: its body may use the whole pool, not the anonymous half
        request.scope[AUTHENTICATED] = True
    body = await _read_body(request, MAX_SEALED_BYTES)
    try:
        if envelope == _queue.OHTTP:
            _ohttp_report.check_encapsulated(body)
        else:
            _envelope.check_sealed(body, bytes.fromhex(relay["key_id"]))
    except Exception as error:
        raise RelayError(400, "not_encapsulated" if envelope == _queue.OHTTP else "not_sealed", str(error)) from None
    _check_length(campaign, identity["config"], envelope, body)
    if nonce is not None and not _binding.is_bound(token, body):
        raise RelayError(403, "token_not_bound", "This token was made for another report (its nonce commits to the HPKE "
                                                 "enc of the report it admits): a token admits the one report it was "
                                                 "bound to, sealed with the key drawn with it.")
    enc = _ohttp_report.enc_of(body) if envelope == _queue.OHTTP else _envelope.enc_of(body)
    outcome = await asyncio.wrap_future(state.store.accept(campaign, report_id, token + body, nonce, envelope=envelope,
                                                           enc=enc))
    if outcome == "token_spent":
        raise RelayError(403, "token_spent", "This token admitted another report of the campaign; a token admits one "
                                             "report (get another from the campaign's issuer).")
    state.forwarder.wake.set()
    return JSONResponse({"campaign": campaign, "report_id": report_id, "duplicate": outcome == "duplicate",
                         "queued": True}, status_code=202)


def _check_length(campaign: str, config: dict, envelope: int, body: bytes) -> None:
    """Refuse (400 ``wrong_length``) a report of another length than the campaign's reports: an RFC 9458 report is the
    one length every report of the campaign pads to; one in dpdist's envelope (padded to 256 bytes, not to one length)
    at most that length plus 256.  So a batch of ``max_batch`` reports stays within what the collector reads."""
    length = _ohttp_report.report_length(campaign, config)
    if length is None:  # a protocol this dpdist does not read: the range checks only
        return
    if envelope == _queue.OHTTP and len(body) != length:
        raise RelayError(400, "wrong_length", f"Every RFC 9458 report of campaign {campaign!r} is {length} bytes (its reports "
                                              f"pad to one length). Got {len(body)}.")
    if envelope == _queue.SEALED_V1 and len(body) > length + _envelope.PADDING:
        raise RelayError(400, "wrong_length", f"A report of campaign {campaign!r} in dpdist's envelope is at most "
                                              f"{length + _envelope.PADDING} bytes (one report). Got {len(body)}.")


async def not_served(request: Request) -> Response:
    raise RelayError(404, "not_served_by_relay", "The relay serves no pages or scripts (they would be code the relay "
                                                 "controls): open the campaign's page at its collector.")


async def public(request: Request) -> Response:
    status, headers, body = await request.app.state.relay.pages.get(request.url.path)
    return Response(body, status_code=status, headers=headers)


async def health(request: Request) -> JSONResponse:
    return JSONResponse({"status": "ok", "service": "dpdist relay"})


async def settings(request: Request) -> JSONResponse:  # K is public: a device (or anyone) may read the batch sizes the relay forms
    state: _Relay = request.app.state.relay
    return JSONResponse({"min_batch": state.min_batch, "max_batch": state.max_batch})


async def status(request: Request) -> JSONResponse:
    state: _Relay = request.app.state.relay
    _check_admin(request, state.admin_token)
    return JSONResponse({**await run_in_threadpool(state.store.status), "min_batch": state.min_batch,
                         "max_batch": state.max_batch, "refused": dict(sorted(state.refused.items()))})


async def drop_queue(request: Request) -> JSONResponse:
    state: _Relay = request.app.state.relay
    _check_admin(request, state.admin_token)
    campaign = request.path_params["campaign"]
    if not _CAMPAIGN.fullmatch(campaign):
        raise RelayError(400, "invalid_campaign", "A campaign id is 1-128 characters A-Z a-z 0-9 . _ -.")
    dropped = await asyncio.wrap_future(state.store.drop_waiting(campaign))
    if dropped:  # (then the campaign is one whose reports the relay took, not a path's text)
        log.warning("relay: the admin dropped %d waiting report(s) of campaign %s", dropped, campaign)
    return JSONResponse({"campaign": campaign, "dropped": dropped})


async def refused(request: Request, error: Exception) -> JSONResponse:
    assert isinstance(error, RelayError)  # the one exception class this handler is registered for
    request.app.state.relay.refused[error.code] += 1
    return JSONResponse({"error": error.code, "detail": error.detail}, status_code=error.status, headers=error.headers)


ROUTES = [
    Route("/healthz", health),
    Route("/api/campaigns/{campaign}/config", public, methods=["GET"]),
    Route("/api/campaigns/{campaign}/identity", public, methods=["GET"]),
    Route("/campaigns/{campaign}/participate", not_served, methods=["GET"]),
    Route("/static/{path:path}", not_served, methods=["GET"]),
    Route("/relay/v1/campaigns/{campaign}/reports/{report_id}", submit, methods=["PUT", "POST"]),
    Route("/relay/v1/campaigns/{campaign}/ohttp/{report_id}", submit_ohttp, methods=["PUT", "POST"]),
    Route("/relay/v1/status", status, methods=["GET"]),
    Route("/relay/v1/campaigns/{campaign}/queue", drop_queue, methods=["DELETE"]),
    Route("/relay/v1/settings", settings, methods=["GET"]),
]


async def _relayed_campaign(pages: _PublicPages, campaign: str) -> dict:
    status, document = await pages.config(campaign)
    if status == 404:
        raise RelayError(404, "unknown_campaign", f"The collector has no campaign {campaign!r}.")
    if status != 200:
        raise RelayError(503, "collector_unavailable", f"The collector answered {status} for the campaign's config.")
    relay = document.get("relay")
    if not isinstance(relay, dict) or "key_id" not in relay:
        raise RelayError(409, "not_relayed", f"Campaign {campaign!r} is not collected through a relay: submit to the collector.")
    if document.get("state") != "open":
        raise RelayError(409, "campaign_not_open", f"Campaign {campaign!r} is {document.get('state')}, not open.")
    return relay


async def _pinned_identity(state: _Relay, campaign: str, relay: dict, said: str | None) -> tuple[str, dict]:
    """The pin and identity the campaign is pinned to (pinned now, from the collector, if it was not), after the checks:
    the report was made under it (``said``: the device's pin header; 409 ``pin_mismatch``), and the collector still
    states it (409 ``identity_changed``)."""
    store = state.store
    pinned = await asyncio.to_thread(store.pinned, campaign)
    if pinned is None:
        status, _, identity = await state.pages.get(f"/api/campaigns/{campaign}/identity")
        if status != 200 or not relay.get("pin") or pin_of(identity) != relay["pin"]:
            raise RelayError(503, "collector_unavailable", f"The collector did not serve campaign {campaign!r}'s identity "
                                                           "as its config states it; try again later.")
        pinned = await asyncio.wrap_future(store.pin_identity(campaign, relay["pin"], identity))
    pin, identity = pinned
    matches = said is not None and hmac.compare_digest(said.strip().lower().encode(), pin.encode())
    if not matches and relay.get("pin") == pin:  # the config may be a few seconds old: ask the collector what it states now
        status, now = await state.pages.config(campaign, fresh=True)
        relay = now["relay"] if status == 200 and isinstance(now.get("relay"), dict) else relay
    if relay.get("pin") != pin:
        log.error("relay: campaign %s's collector now states another identity than the one the relay pinned", campaign)
        raise RelayError(409, "identity_changed", (
            f"Campaign {campaign!r}'s collector now states another identity (key, config or issuer) than the one this relay "
            "pinned when it first admitted a report of the campaign: the campaign was deleted and created again under its "
            "id, or its identity changed. This relay takes no more reports of this campaign under either identity, and "
            "fetching the identity again cannot help: stop sending this campaign's reports to this relay (the reports "
            "made for it cannot be delivered here), and ask the campaign's operator for the campaign's new id."))
    if not matches:
        raise RelayError(409, "pin_mismatch", f"A report of campaign {campaign!r} is sent under its identity's pin (header "
                                              f"{PIN_HEADER}), and this relay holds another identity than the one the "
                                              "device was given. Fetch the campaign's identity from its collector again.")
    return pin, json.loads(identity)


def _check_admin(request: Request, admin_token: str | None) -> None:
    header = request.headers.get("authorization", "")
    if not admin_token or not hmac.compare_digest(header.encode(), f"Bearer {admin_token}".encode()):
        raise RelayError(401, "unauthorized", f"{request.method} {request.url.path} needs 'Authorization: Bearer <admin token>'.")


def _admission(identity: dict, pin: str, authorization: str | None) -> tuple[bytes, bytes | None]:
    """The token a report of the campaign must carry and its nonce (``b""``, None for a campaign without an issuer);
    401 with the campaign's challenge when it carries none that verifies."""
    issuer = identity.get("issuer")
    if not issuer:
        return b"", None
    token_key, challenge = b64url_decode(issuer["token_key"], "token_key"), campaign_challenge(issuer, pin)
    ask = {"www-authenticate": format_www_authenticate(challenge, token_key)}
    if not authorization:
        raise RelayError(401, "token_required", "This campaign admits a report only with a token from its issuer "
                                                f"({issuer['url']}): 'Authorization: PrivateToken token=...'.", ask)
    try:
        token = parse_authorization(authorization)
        return token, verify_token(token, token_key, challenge)
    except InvalidParameterError as error:  # InvalidTokenError included
        raise RelayError(401, "invalid_token", f"The report's token is not valid for this campaign: {error}", ask) from None


async def _read_body(request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise RelayError(413, "too_large", f"A sealed submission is at most {limit} bytes.")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise RelayError(413, "too_large", f"A sealed submission is at most {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)
