"""A 3xx answer to a request that carries dpdist's token: refused in one line, never followed.

httpx does not follow redirects unless asked, and dpdist never asks: a redirect (a proxy sending http:// to
https://, a moved service, a captive portal) would take the ``Authorization: Bearer`` token to another URL.  Read as
an answer, the redirect's empty body crashed the caller (``JSONDecodeError``) or passed for a success (``{}``).
:func:`redirect_refusal` is the one check: the caller raises what it returns, which names the status and the
``Location`` (escaped, the process's own secrets masked: :mod:`dpdist._shown`) and asks for that URL instead.

httpx reads a redirect's ``Location`` even when it does not follow it (to build ``response.next_request``), and a
malformed one (``http:\\\\host``, a port that is no number, a control character) ended the request in
``InvalidURL`` (an "internal error") or ``RemoteProtocolError`` (retried for the whole retry window).  The response
hook :func:`keep_location` (:data:`HOOKS`, on every client of dpdist's that sends a token) moves a 3xx's ``Location``
aside before httpx reads it; :func:`location_of` reads it back.
"""

from __future__ import annotations

from typing import Any

from .._redact import url_secrets
from .._shown import masked, secrets_of, shown
from ..errors import ServiceRefusedError

__all__ = ["redirect_refusal", "keep_location", "location_of", "HOOKS", "KEPT"]

#: the header a 3xx's ``Location`` is moved to (httpx neither parses nor follows it there)
KEPT = "X-Dpdist-Unfollowed-Location"


def keep_location(response: Any) -> None:
    """An httpx response hook: move a 3xx answer's ``Location`` to :data:`KEPT`, so that httpx, which would parse it
    to build the redirect it does not follow, never fails on a malformed one."""
    if 300 <= response.status_code < 400 and "Location" in response.headers:
        raw = response.headers.raw  # the bytes as sent: a non-ASCII Location is kept, never re-encoded
        response.headers = type(response.headers)(
            [(KEPT.encode() if name.lower() == b"location" else name, value) for name, value in raw])


def location_of(response: Any) -> str | None:
    """A 3xx answer's ``Location`` as the server sent it (moved by :func:`keep_location` or not), None without one."""
    return response.headers.get(KEPT, response.headers.get("Location"))


#: the ``event_hooks`` of an ``httpx.Client`` that never follows a redirect
HOOKS = {"response": [keep_location]}


def redirect_refusal(method: str, url: str, response: Any, option: str) -> ServiceRefusedError | None:
    """The error of a redirect answered to ``method url`` (None for any other answer).

    Parameters
    ----------
    method, url : str
        The request (the URL as the user gave its base).
    response : httpx.Response
        The answer.
    option : str
        What gave the URL, named in the advice (``--server``, ``--issuer``, ``server=``).

    Returns
    -------
    ServiceRefusedError or None
        ``"The server redirected GET http://h/api/campaigns (HTTP 302 to 'https://h/api/campaigns'): ..."``, its
        ``status`` the 3xx and its ``code`` ``"redirected"``.
    """
    if not 300 <= response.status_code < 400:
        return None
    location, secrets = location_of(response), (*secrets_of(response), *url_secrets(url))
    to = f" to '{shown(location, secrets)}'" if location else " with no Location"
    return ServiceRefusedError(masked(
        f"The server redirected {method} {url} (HTTP {response.status_code}{to}): dpdist follows no redirect, which would "
        f"send its token elsewhere. Give the URL it names as {option} instead.", secrets),
        status=response.status_code, code="redirected")
