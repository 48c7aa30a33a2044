"""One token from a dpdist issuer over HTTP (``dpdist issuer``; RFC 9578 section 6.1-6.3 over httpx).

``POST {issuer_url}/issuer/v1/keys/{key_name}/token-request`` with ``Authorization: Bearer
<credential>``, ``Content-Type: application/private-token-request`` and the TokenRequest as the body;
200 ``application/private-token-response`` is the blind signature, finalized here into a token.

A network error, 408, 425, 429 or 5xx is retried with **the same request** (the same blinded
message): the issuer stores its answer to each (credential, request) and answers a retry with it,
so a token whose answer was lost costs the credential nothing more.  A new request (a new blind)
after a lost answer would spend a second token of the credential.  The waits between attempts are
fixed by the attempt number and the issuer's ``Retry-After`` (jittered), never by the token.
"""

from __future__ import annotations

import asyncio
import math
import re
import time
from typing import Any

from .._redact import redacted_url
from .._http._redirect import HOOKS, keep_location, redirect_refusal
from .._http._retry import Retries, retry_after
from .._http._answer import refusal_shown
from .._shown import kind_of
from .._http._tls import verifying_context
from ..errors import ServiceRefusedError, ServiceUnavailableError
from .._validation import HttpUrl, Constraint, Described, Either, Integer, Interval, Optional, Text, validate_params
from ._client import _NONCE, PendingToken, finalize_token, request_token
from ._messages import NK

__all__ = ["fetch_token", "fetch_token_async", "REQUEST_MEDIA_TYPE", "RESPONSE_MEDIA_TYPE"]

REQUEST_MEDIA_TYPE = "application/private-token-request"
RESPONSE_MEDIA_TYPE = "application/private-token-response"
_RETRY_STATUSES = {408, 425, 429, 500, 502, 503, 504}
_KEY_NAME = re.compile(r"[A-Za-z0-9._-]{1,128}")


_SECONDS = Described(Interval(0.0, 600.0, closed="right"), "a number of seconds in (0, 600]")
#: the rules of a token fetch's arguments
_FETCH: dict[str, Constraint] = {
    "issuer_url": HttpUrl(no_userinfo=HttpUrl.TOKEN_SENT, base=True),
    "key_name": Described(Text(pattern=_KEY_NAME.pattern), "1-128 characters A-Z a-z 0-9 . _ -"),
    "credential": Described(Text(ascii=True), "the non-empty ASCII credential the issuer's operator gave"),
    "retries": Described(Optional(Integer(low=0, high=100)), "None (as many as retry_window allows) or an int in 0..100"),
    "backoff": _SECONDS,
    "timeout": _SECONDS,
    "retry_window": Described(Optional(Interval(0.0, math.inf, closed="left")),
                              "None (no bound in time) or a number of seconds >= 0"),
    "nonce": _NONCE,
}


#: a token request stops retrying some time: after its retries, or at the end of its window
_STOPS = (Either("retry_window", "retries", why="a token request must stop retrying some time",
                 counterexample={"retries": None}),)


#: the most bytes of an issuer's answer read, once decoded: a TokenResponse is NK (256) bytes, a refusal a short JSON
#: object (a ~1 MB gzip answer unpacked to 1 GiB took 2.3 GB of a device's memory)
_MOST_BYTES = 64 << 10


async def _keep_location(response: Any) -> None:
    """:func:`dpdist._http._redirect.keep_location` as an ``httpx.AsyncClient``'s hook (which must be a coroutine)."""
    keep_location(response)


def _url(issuer_url: str, key_name: str) -> str:
    return f"{issuer_url.rstrip('/')}/issuer/v1/keys/{key_name}/token-request"


def _headers(credential: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {credential}", "Content-Type": REQUEST_MEDIA_TYPE, "Accept": RESPONSE_MEDIA_TYPE}


def _retries(retries: int | None, backoff: float, retry_window: float | None) -> Retries:
    """The retries of one token request (:mod:`dpdist._http._retry`): ``retries`` attempts after the first at most, within
    ``retry_window`` seconds of the first failure (None: no bound in time)."""
    # retries or retry_window, or both: the table (_STOPS)
    return Retries(window=math.inf if retry_window is None else retry_window, backoff=backoff, retries=retries)


def _pause(retrying: Retries, response) -> float | None:
    return retrying.pause(retry_after(response.headers.get("retry-after")) if response is not None else None)


def _answer(pending: PendingToken, url: str, response) -> bytes:
    """The token from a final (non-retried) answer, or the issuer's refusal as ServiceRefusedError: what the issuer
    said as :func:`dpdist._http._answer.refusal_shown` says it (the credential the request carried masked)."""
    redirected = redirect_refusal("POST", url, response, "the issuer (--issuer; the campaign's issuer URL)")
    if redirected is not None:
        raise redirected
    if response.status_code == 200:
        media_type = kind_of(response).lower()
        if media_type != RESPONSE_MEDIA_TYPE:
            raise ServiceRefusedError(f"POST {redacted_url(url)} answered 200 with {media_type!r}, not {RESPONSE_MEDIA_TYPE}.", 200, "bad_response")
        if len(response.content) != NK:
            raise ServiceRefusedError(
                f"POST {redacted_url(url)} answered 200 with {len(response.content)} bytes, not a TokenResponse "
                f"({NK} bytes): is that URL the campaign's issuer?", 200, "bad_response")
        return finalize_token(pending, response.content)
    code, said = refusal_shown(response, limit=500)
    raise ServiceRefusedError(f"The issuer refused the token request POST {redacted_url(url)} (HTTP "
                              f"{response.status_code}): {said}", response.status_code, code)


@validate_params(_FETCH, relations=_STOPS)
def fetch_token(issuer_url: str, key_name: str, credential: str, challenge: Any, token_key: bytes, *,
                retries: int | None = 6, backoff: float = 0.5, timeout: float = 30.0, transport: Any = None,
                retry_window: float | None = None, nonce: bytes | None = None) -> bytes:
    """One token (354 bytes) for ``challenge`` under ``token_key``, issued by a dpdist issuer to ``credential``.

    Parameters
    ----------
    issuer_url : str
        The issuer's base URL (``dpdist issuer serve``).
    key_name : str
        The issuer key's name (one per campaign).
    credential : str
        What the issuer's operator gave this device (``Authorization: Bearer``).
    challenge : TokenChallenge or bytes
        The campaign's TokenChallenge.
    token_key : bytes
        The campaign's issuer key (from the campaign's config, not from the issuer).
    retries : int, optional
        Attempts after the first on network errors, 408, 425, 429 and 5xx, each with the same request (None: as many as
        ``retry_window`` allows).
    retry_window : float, optional
        Seconds from the first failure during which the request is retried (:mod:`dpdist._http._retry`; what the device's
        client gives: a restart of the issuer under load is ridden out).
    nonce : bytes, optional
        The token's nonce (:func:`~._client.request_token`; default: random).
    transport : httpx transport, optional
        For tests.

    Raises
    ------
    ServiceRefusedError
        The issuer refused (``status``, ``code``: 401 ``unauthorized``, 403 ``exhausted``, 404 ``unknown_key``, ...).
    ServiceUnavailableError
        No answer after the retries.
    InvalidTokenError
        The issuer's answer is not a valid blind signature under ``token_key``.
    """
    import httpx  # lazy: optional extra dpdist[serve]

    from .._http._deadline import request_within  # lazy: it imports httpx (optional extra dpdist[serve])

    url = _url(issuer_url, key_name)
    retrying = _retries(retries, backoff, retry_window)
    pending = request_token(challenge, token_key, nonce=nonce)
    failure, response = "", None
    with httpx.Client(timeout=timeout, transport=transport, verify=verifying_context(), event_hooks=HOOKS) as client:
        while True:
            response = None
            try:  # the answer whole within timeout, head and body, and at most _MOST_BYTES
                response = request_within(client, "POST", url, timeout, limit=_MOST_BYTES, content=pending.request,
                                          headers=_headers(credential))
            except httpx.TransportError as error:
                failure = f"{type(error).__name__}: {error}"
            else:
                if response.status_code not in _RETRY_STATUSES:
                    return _answer(pending, url, response)
                failure = f"HTTP {response.status_code}"
            delay = _pause(retrying, response)
            if delay is None:
                break
            time.sleep(delay)
    raise ServiceUnavailableError(f"POST {redacted_url(url)} failed after {retrying.failures} attempt(s) over {retrying.spent:.1f} s: "
                                  f"{failure}.")


@validate_params(_FETCH, relations=_STOPS)
async def fetch_token_async(issuer_url: str, key_name: str, credential: str, challenge: Any, token_key: bytes, *,
                            retries: int | None = 6, backoff: float = 0.5, timeout: float = 30.0, transport: Any = None,
                            retry_window: float | None = None, nonce: bytes | None = None) -> bytes:
    """:func:`fetch_token` with ``httpx.AsyncClient`` (an async transport for tests)."""
    import httpx  # lazy: optional extra dpdist[serve]

    from .._http._deadline import request_within_async  # lazy: it imports httpx (optional extra dpdist[serve])

    url = _url(issuer_url, key_name)
    retrying = _retries(retries, backoff, retry_window)
    pending = request_token(challenge, token_key, nonce=nonce)
    failure, response = "", None
    async with httpx.AsyncClient(timeout=timeout, transport=transport, verify=verifying_context(),
                                 event_hooks={"response": [_keep_location]}) as client:
        while True:
            response = None
            try:
                response = await request_within_async(client, "POST", url, timeout, limit=_MOST_BYTES,
                                                      content=pending.request, headers=_headers(credential))
            except httpx.TransportError as error:
                failure = f"{type(error).__name__}: {error}"
            else:
                if response.status_code not in _RETRY_STATUSES:
                    return _answer(pending, url, response)
                failure = f"HTTP {response.status_code}"
            delay = _pause(retrying, response)
            if delay is None:
                break
            await asyncio.sleep(delay)
    raise ServiceUnavailableError(f"POST {redacted_url(url)} failed after {retrying.failures} attempt(s) over {retrying.spent:.1f} s: "
                                  f"{failure}.")
