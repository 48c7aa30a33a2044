"""What the device's and the admin's clients share: one connection to a dpdist server, sent again as its answers ask.

:class:`Connection` holds the server's URL, the httpx client and the retry settings; its ``_request`` sends one
request until it is answered, acknowledged or the retry window is spent (:mod:`dpdist._http._retry`), each attempt's answer
whole within the client's timeout (:mod:`dpdist._http._deadline`), and turns a refusal into one line that masks the secrets
the client holds (:mod:`dpdist._http._answer`, :func:`dpdist._shown.masked`).  :class:`~dpdist.client.Client` (a device)
and :class:`~dpdist.client.AdminClient` (the operator) stand on it and know nothing of each other.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable
from urllib.parse import urlsplit

from .._http._answer import answer_document, refusal_shown
from .._http._deadline import ANSWERED_BY, deadline_of, request_within
from .._redact import url_secrets
from .._http._redirect import HOOKS, location_of, redirect_refusal
from .._http._retry import MAX_BACKOFF_S, NOT_ACKNOWLEDGED, Retries, describe_window, retry_after
from .._shown import masked, secrets_of, shown
from .._http._tls import verifying_context
from .._validation import (CallableRule, Described, HttpUrl, Integer, Interval, NamedInstanceOf, OneOf, Optional,
                           Token)
from ..errors import ServiceRefusedError, ServiceUnavailableError

__all__ = ["CONNECTION_RULES", "Connection", "MALFORMED_IN_A_ROW", "origin_of", "refusal", "retry_schedule", "token_rule"]

#: Answers after which the same request (same batch id and bytes) is sent again: the server's 5xx, and a
#: proxy's or server's "not now" (408 request timeout, 425 too early, 429 too many requests), as the JS client.
_RETRY_STATUSES = (408, 425, 429, 500, 502, 503, 504)
#: 409 refusals after which the same request is sent again, as the JS client: the campaign was deleted and created
#: again by another server process while the batch was checked (nothing of it counted: docs/explanation/threat-model.md, "Deletion")
_RETRY_CONFLICTS = ("campaign_changed",)

#: answers in a row that break HTTP/1.1 (:func:`_malformed`) after which a request is not sent again: a proxy's
#: garbage once is retried, a server that always answers so (``Transfer-Encoding: gzip, chunked``) is not waited for
#: over the whole retry window; a batch is not acknowledged then, and sent again later counts once
MALFORMED_IN_A_ROW = 3


def _malformed(error: Exception) -> bool:
    """Whether ``error`` is an answer that breaks HTTP/1.1 (h11's "Only Transfer-Encoding: chunked is supported", an
    illegal status or header line), not a connection closed before or while answering (retried as a network error)."""
    import httpx  # lazy: optional extra dpdist[serve]

    said = str(error).lower()
    return isinstance(error, httpx.RemoteProtocolError) and "disconnect" not in said and "closed" not in said


def token_rule(what: str) -> Optional:
    """The rule of a token sent in an HTTP header: printable ASCII, shown by its length only."""
    return Optional(Token(0, f"a string of printable ASCII characters ({what}: it is sent in an HTTP header)",
                          spaces=True))


#: the rules of the arguments every client takes (checked once, when it is built)
CONNECTION_RULES = {
    "server": HttpUrl(no_userinfo=HttpUrl.TOKEN_SENT, base=True),
    "retries": Optional(Described(Integer(low=0), "an int >= 0 (None: as many as retry_window allows)")),
    "retry_window": Described(Interval(0.0, math.inf, closed="left"), "a finite number of seconds >= 0"),
    "backoff": Described(Interval(0.0, math.inf, closed="left"), "a finite number of seconds >= 0"),
    "timeout": Optional(OneOf((Interval(0.0, math.inf), NamedInstanceOf("httpx", ("Timeout",), "an httpx.Timeout")),
                              "a number of seconds > 0 or an httpx.Timeout (None: no limit)")),
    "on_retry": Optional(CallableRule("a function on_retry(method, status, delay, attempt)")),
}


class Connection:
    """One connection to a dpdist server (the module's docstring); the arguments are :class:`~dpdist.client.Client`'s."""

    def __init__(self, server: str, *, retries: int | None, backoff: float, timeout: Any, transport: Any,
                 on_retry: Callable[[str, int, float, int], Any] | None, retry_window: float):
        import httpx  # lazy: optional extra dpdist[serve]

        self.server = server.rstrip("/")
        self.retries, self.backoff, self.retry_window = retries, float(backoff), float(retry_window)
        self.on_retry = on_retry
        self._transport = transport
        self._timeout = timeout
        self._http = httpx.Client(base_url=self.server, timeout=timeout, transport=transport, event_hooks=HOOKS,
                                  verify=verifying_context() if transport is None else True)

    def close(self) -> None:
        self._http.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _request(self, method: str, path: str, *, token: str | None = None, via: Any = None,
                 acknowledges: Callable[[Any], str | None] | None = None, limit: int | None = None, **kwargs):
        """``via``: the httpx client to send with (an Oblivious HTTP relay's; default: straight to the server).
        ``acknowledges``: what a successful answer must be (:mod:`._acks`: None if it is the acknowledgement of what
        was sent, else what it is); an answer that is not is retried as a failure, with the same id and bytes.
        ``limit``: the most bytes of its answer read, decoded (None: ``dpdist._http._deadline.MAX_ANSWER_BYTES``; an
        acknowledgement's or a config's far fewer: parsing holds many times the bytes)."""
        import httpx  # lazy: optional extra dpdist[serve]

        http = self._http if via is None else via
        headers = dict(kwargs.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Bearer {token}"
        retries = self.retrying()
        attempt, failure, malformed = 0, "", 0
        while True:
            attempt += 1
            asked = None
            try:
                response = request_within(http, method, path, deadline_of(self._timeout), headers=headers, limit=limit,
                                          **kwargs)
            except httpx.TransportError as error:
                failure = f"{type(error).__name__}: {error}"
                malformed = malformed + 1 if _malformed(error) else 0
                if malformed >= MALFORMED_IN_A_ROW:  # a server (or proxy) that always answers so: no use waiting
                    failure += f" ({malformed} answers in a row that break HTTP/1.1: not retried further)"
                    break
            else:
                malformed = 0
                if response.status_code not in _RETRY_STATUSES and not _retried_conflict(response):
                    if response.status_code >= 400:
                        raise refusal(method, path, response, self._secrets())
                    redirected = None if acknowledges is not None else redirect_refusal(  # a batch: resent (_acks)
                        method, path if path.startswith(("http://", "https://")) else self.server + path, response,
                        "the server (--server; Client's server)")
                    if redirected is not None:
                        raise redirected
                    problem = None if acknowledges is None else acknowledges(response)
                    if problem is None and acknowledges is not None and not 200 <= response.status_code < 300:
                        # only a success acknowledges: a redirect (not followed) names where, whatever its body says
                        problem = (f"{NOT_ACKNOWLEDGED}: HTTP {response.status_code} (a redirect to "
                                   f"{(location_of(response) or 'nowhere')[:200]!r}, not followed)")
                    if problem is None:
                        return response
                    failure = problem
                else:
                    failure = f"HTTP {response.status_code}"
                asked = retry_after(response.headers.get("Retry-After"))
            delay = retries.pause(asked)
            if delay is None:
                if asked is not None and asked > retries.left() and not retries.spent_all():
                    failure += f" (it asked to be sent again in {asked:g} s, past the retry window)"
                break
            if self.on_retry is not None:
                self.on_retry(failure, attempt, delay, retries.attempts_left())
            time.sleep(delay)
        url = path if path.startswith(("http://", "https://")) else self.server + path  # the relay's, or this server's
        relay = self._relay_of(via)
        if failure.startswith(NOT_ACKNOWLEDGED):
            raise ServiceUnavailableError(masked(_not_acknowledged(method, url, failure, attempt, retries, self.retry_window,
                                                                   relay), self._secrets()))
        # through an OHTTP relay the device connects to the relay only: name it, not the server
        sent, question = (f"{method} {url}", f"is the server running at {origin_of(url)}?") if relay is None else (
            f"{method} {path} through the Oblivious HTTP relay {relay}", f"is the relay running at {origin_of(relay)}?")
        resend = _how_to_resume(method, acknowledges is not None)
        raise ServiceUnavailableError(masked(
            f"{sent} failed: {failure}, after {attempt} attempt(s) over {retries.spent:.1f} s (retried for up "
            f"to {describe_window(self.retry_window)}: retry_window, dpdist's --retry-window; {question}).{resend}",
            self._secrets()))

    def _document(self, method: str, path: str, *, keys: tuple[str, ...] | dict[str, Any] = (), **kwargs) -> dict:
        """The JSON object the service answers to ``method path`` (holding ``keys``), else one line saying the answer
        is not a dpdist service's (:func:`dpdist._http._answer.answer_document`); ``kwargs`` as :meth:`_request` takes."""
        return answer_document(method, self.server + path, self._request(method, path, **kwargs), keys)

    def retrying(self) -> Retries:
        """The retries of one request of this client (its window, backoff and count)."""
        return Retries(window=self.retry_window, backoff=self.backoff, retries=self.retries)

    def _secrets(self) -> tuple[str, ...]:
        """The secrets this client holds (its tokens, its URLs' passwords), masked wherever a line it writes repeats them
        (:func:`dpdist._shown.masked`)."""
        return tuple(url_secrets(self.server))

    def _relay_of(self, via: Any) -> str | None:
        """The Oblivious HTTP relay a request sent ``via`` went through (None: straight to the server)."""
        return None


def retry_schedule(retries: int, backoff: float = 0.25) -> list[float]:
    """The longest pauses between a request's attempts without a ``Retry-After``: ``backoff`` doubling
    each time, at most 10 s each (:func:`retry_delay` waits 50-100% of each)."""
    return [min(MAX_BACKOFF_S, backoff * 2**k) for k in range(retries)]


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def _retried_conflict(response) -> bool:
    """Whether ``response`` is a 409 whose code says to send the same request again (:data:`_RETRY_CONFLICTS`)."""
    if response.status_code != 409:
        return False
    try:
        return response.json().get("error") in _RETRY_CONFLICTS
    except (ValueError, AttributeError):
        return False


def _how_to_resume(method: str, batch: bool) -> str:
    """What a request that failed for the whole retry window leaves, and how to resume: a batch's, a read's (an
    estimate's is not a batch's), nothing of another (an admin's change may have been made)."""
    if batch:
        return (" Nothing was lost: a batch keeps its id and bytes, so sending it again later (dpdist submit: the same "
                "command) counts it once.")
    if method == "GET":
        return (" Nothing was changed: send it again later (dpdist submit: the same command resumes, counting each of "
                "its batches once).")
    return ""


def _not_acknowledged(method: str, url: str, failure: str, attempt: int, retries: Retries, window: float,
                      relay: str | None) -> str:
    """The message of a request whose answers were never the acknowledgement of what it sent (:mod:`._acks`)."""
    through = f" through the Oblivious HTTP relay {relay}" if relay is not None else ""
    return (
        f"{method} {url}{through} got {failure}, after {attempt} attempt(s) over {retries.spent:.1f} s (retried "
        f"for up to {describe_window(window)}: retry_window, dpdist's --retry-window). Is {origin_of(url)} the dpdist service (not a proxy, a captive "
        "portal or another server answering in its place)? Nothing is taken as counted: the batch keeps its id "
        "and bytes, so sending it again later (dpdist submit: the same command) counts it once.")


def _first_up(text: str) -> str:
    """``text`` with its first letter a capital (``"the server"`` -> ``"The server"``)."""
    return text[:1].upper() + text[1:]


def refusal(method: str, path: str, response, secrets: tuple[str, ...] = ()) -> ServiceRefusedError:
    """The one-line error of a 4xx/5xx answer: a dpdist refusal's code and detail, or what the answer is
    (:func:`dpdist._http._answer.refusal_shown`), ``secrets`` (the client's) and the request's own masked."""
    code, said = refusal_shown(response, secrets)
    secrets = (*secrets, *secrets_of(response))
    answered_by = _first_up(str(response.extensions.get(ANSWERED_BY, "the server")))
    return ServiceRefusedError(
        masked(f"{answered_by} refused {method} {shown(path, secrets)}: "
               + (f"HTTP {response.status_code} {said}" if code else said), secrets),
        status=response.status_code,
        code=code,
    )
