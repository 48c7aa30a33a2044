"""A 3xx answer to a request that carries dpdist's token: refused in one line, never followed.

httpx does not follow redirects unless asked, and dpdist never asks: a redirect (a proxy sending http:// to
https://, a moved service, a captive portal) would take the ``Authorization: Bearer`` token to another URL.  Read as
an answer, the redirect's empty body crashed the caller (``JSONDecodeError``) or passed for a success (``{}``).
:func:`redirect_refusal` is the one check: the caller raises what it returns, which names the status and the
``Location`` (its password masked) and asks for that URL instead.
"""

from __future__ import annotations

from typing import Any

from ._redact import redacted_text
from .errors import ServiceRefusedError

__all__ = ["redirect_refusal"]


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
    location = response.headers.get("Location")
    to = f" to {location[:200]!r}" if location else " with no Location"
    return ServiceRefusedError(redacted_text(
        f"The server redirected {method} {url} (HTTP {response.status_code}{to}): dpdist follows no redirect, which would "
        f"send its token elsewhere. Give the URL it names as {option} instead."),
        status=response.status_code, code="redirected")
