"""One request whose answer must arrive within a wall-clock deadline.

httpx's ``timeout`` bounds each read, not the answer: a server, or anything on the path, that answers a head and then
one byte of body every few seconds keeps a plain ``client.request`` waiting as long as it likes (100,000 bytes at one
per 2 s: 55 hours), and the retry window never starts, since no attempt ever fails; one byte of a header every half
second did the same to the head.  :func:`request_within` stops once ``seconds`` have passed since the
request was sent, head and body alike (each read of httpx's own transports waits at most until then:
:mod:`._bounded_reads`), raising :class:`httpx.ReadTimeout` (a :class:`httpx.TransportError`): the attempt ends as a
timed-out one does, and is retried under the client's retry rule with the same bytes.

The body is bounded in bytes too: past the caller's ``limit`` (decoded: a small gzip answer may unpack to gigabytes;
:data:`ACK_ANSWER_BYTES` for what devices and relays read, :data:`CONFIG_ANSWER_BYTES` for a config, else
:data:`MAX_ANSWER_BYTES`) the read stops and the answer is refused in one line
(:class:`~dpdist.errors.ServiceRefusedError`, code ``answer_too_large``, not retried); its ``json()`` refuses, before
parsing, a document of more values than those bytes should hold (:func:`dpdist._json.loads_within`: parsing holds far
more than the bytes).  The answer is rebuilt from the header bytes as they came (a proxy's non-ASCII
``Server: café`` made every call an "internal error UnicodeEncodeError" when it was rebuilt from decoded text).

An asynchronous deadline is :func:`timeout` (``asyncio.timeout``), never ``asyncio.wait_for``: before Python 3.12,
``wait_for`` runs its awaitable in a task of its own and, when its caller is cancelled in the same turn of the event loop
in which that task finished, returns the result and drops the cancellation, so that a loop cancelled at shutdown (the
relay's forwarder) went on forever and its shutdown never returned.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from typing import Any

import httpx

from .._json import loads_within
from .._redact import redacted_url
from .._shown import kind_of, secrets_of, shown
from ..errors import ServiceRefusedError
from ._bounded_reads import bound_reads, reads_within
from ._decoded import ACCEPTED_ENCODING, CorruptBody, Decoder

__all__ = ["deadline_of", "request_within", "request_within_async", "timeout", "MAX_ANSWER_BYTES",
           "CONFIG_ANSWER_BYTES", "ACK_ANSWER_BYTES", "TOO_LARGE", "ANSWERED_BY"]

#: headers that describe the bytes on the wire, not the decoded body the answer is rebuilt with
_WIRE_HEADERS = frozenset({b"content-encoding", b"content-length", b"transfer-encoding"})
#: the most bytes of one answer's body dpdist reads, once decoded, of the admin's calls (an estimate of 10^5 items is
#: 10.6 MB of JSON for GRR, 22.3 MB for OLH; OLH's of 10^6, 227 MB, is refused; a plot a few hundred kB; kept reports
#: are streamed to a file, not read here)
MAX_ANSWER_BYTES = 128 << 20
#: the most bytes of a campaign's config or identity, once decoded: a config is at most the 1 MiB of a record header
#: that carries it, and its answer holds it twice (the service refuses at creation a config whose answer would pass
#: this, ``dpdist.serve._campaigns.DEVICE_CONFIG_BYTES``, or whose record header would pass 1 MiB)
CONFIG_ANSWER_BYTES = 4 << 20
#: the most bytes of an acknowledgement, a token, a key or a refusal read by a device or a relay (a few hundred bytes)
ACK_ANSWER_BYTES = 1 << 20
#: the most bytes of a public page (a campaign's config or identity) a relay reads of its collector, once decoded: a
#: few KB from dpdist; the relay keeps them for a few seconds, so answers of 128 MiB each would pile up in its memory
#: (the collector refuses a relayed campaign whose config page would pass it)
PAGE_ANSWER_BYTES = 1 << 20
#: the extension of a response a transport answered itself (its value: who, ``"the Oblivious HTTP relay"``): a refusal
#: names it, not the server (kept by :func:`request_within`; a server cannot set it)
ANSWERED_BY = "dpdist_answered_by"
#: the ``code`` of the error of an answer larger than :data:`MAX_ANSWER_BYTES`
TOO_LARGE = "answer_too_large"
#: the ``code`` of the error of an answer in codings dpdist does not decode: ``dpdist._http._answer.UNEXPECTED``'s (a module
#: of this floor: named, not imported)
UNEXPECTED = "unexpected_answer"


def deadline_of(timeout: Any) -> float | None:
    """The seconds an attempt's answer may take for a client's ``timeout`` (a number, an :class:`httpx.Timeout`: its
    read timeout, or None: no deadline)."""
    if isinstance(timeout, httpx.Timeout):
        return timeout.read
    return None if timeout is None else float(timeout)


def request_within(http: httpx.Client, method: str, url: str, seconds: float | None, *,
                   limit: int | None = None, answered_by: str | None = None, **kwargs: Any) -> httpx.Response:
    """``http.request(method, url, **kwargs)``, its answer read whole, unless ``seconds`` pass after the request is sent
    before it is, head and body (then :class:`httpx.ReadTimeout`, the connection closed; ``seconds`` None: no
    deadline) or it holds more than ``limit`` bytes once decoded (then :class:`ServiceRefusedError`, code
    :data:`TOO_LARGE`; None: :data:`MAX_ANSWER_BYTES`; a refusal, 4xx or 5xx, at most :data:`ACK_ANSWER_BYTES`).  Its
    ``json()`` raises ``ValueError`` for JSON nested too deeply (:func:`dpdist._json.loads`), never ``RecursionError``.
    ``answered_by``: who is asked, when not the dpdist service (``"the Oblivious HTTP relay"``): a refusal of its
    answer names it (:data:`ANSWERED_BY`)."""
    limit = MAX_ANSWER_BYTES if limit is None else limit
    bound_reads(http)
    chunks: list[bytes] = []
    read, head, started = 0, False, time.monotonic()
    try:
        with reads_within(seconds), http.stream(method, url, **_accepting(kwargs)) as response:
            head = True
            _answered(response, answered_by)
            decoder = _decoder(method, response)
            limit = _bound_of(response, limit)
            for raw in _raw(response):
                for chunk in _pieces(decoder.feed(raw), method, response):
                    read = _kept_within(chunks, chunk, read, limit, method, response)
                if seconds is not None and time.monotonic() - started > seconds:  # a transport given by the caller
                    raise httpx.ReadTimeout("", request=response.request)
            for chunk in _pieces(decoder.end(), method, response):
                read = _kept_within(chunks, chunk, read, limit, method, response)
    except httpx.ReadTimeout as error:
        if seconds is None or time.monotonic() - started < seconds:
            raise
        raise httpx.ReadTimeout(
            f"the answer to {method} {redacted_url(str(url))} was not whole {seconds:g} s after the request was sent "
            f"(the client's timeout, its deadline per attempt; "
            f"{f'{read} bytes of body read' if head else 'its head not yet whole'})", request=_request_of(error)) from None
    return _Answer.of(response, chunks, limit)


async def request_within_async(http: httpx.AsyncClient, method: str, url: str, seconds: float, *,
                               limit: int | None = None, answered_by: str | None = None,
                               **kwargs: Any) -> httpx.Response:
    """:func:`request_within` with an ``httpx.AsyncClient``: the answer whole within ``seconds`` of the request's
    start, head and body (else :class:`httpx.ReadTimeout`), at most ``limit`` bytes once decoded (else
    :class:`ServiceRefusedError`, code :data:`TOO_LARGE`; None: :data:`MAX_ANSWER_BYTES`; a refusal at most
    :data:`ACK_ANSWER_BYTES`)."""
    limit = MAX_ANSWER_BYTES if limit is None else limit

    async def read() -> httpx.Response:
        chunks: list[bytes] = []
        read = 0
        async with http.stream(method, url, **_accepting(kwargs)) as response:
            _answered(response, answered_by)
            decoder = _decoder(method, response)
            bound = _bound_of(response, limit)
            async for raw in _raw_async(response):
                for chunk in _pieces(decoder.feed(raw), method, response):
                    read = _kept_within(chunks, chunk, read, bound, method, response)
            for chunk in _pieces(decoder.end(), method, response):
                read = _kept_within(chunks, chunk, read, bound, method, response)
        return _Answer.of(response, chunks, bound)

    try:
        async with timeout(seconds):  # in this task: a cancellation of the caller is never lost (the module)
            return await read()
    except asyncio.TimeoutError:  # the read cancelled, its connection closed
        raise httpx.ReadTimeout(f"the answer to {method} {redacted_url(str(url))} was not whole {seconds:g} s after "
                                "the request was sent (the client's timeout, its deadline per attempt)") from None


def timeout(seconds: float):
    """``async with timeout(seconds):`` the block, or :class:`TimeoutError` (``asyncio.TimeoutError``) once ``seconds``
    passed, in the caller's own task (``asyncio.timeout``; its backport on Python 3.10): see the module."""
    if sys.version_info >= (3, 11):
        return asyncio.timeout(seconds)
    from async_timeout import timeout as backport  # pyright: ignore[reportMissingImports]  # lazy: Python 3.10 only (not installed on 3.11+; the serve and relay extras bring it there)

    return backport(seconds)


def _bound_of(response: httpx.Response, limit: int) -> int:
    """The bytes of ``response``'s body read: ``limit``; a refusal's at most :data:`ACK_ANSWER_BYTES` (its message
    shows 2,000 characters of it; a 128 MiB refusal was parsed, 2.24 GB)."""
    return min(limit, ACK_ANSWER_BYTES) if response.status_code >= 400 else limit


def _answered(response: httpx.Response, answered_by: str | None) -> None:
    """Mark ``response`` as ``answered_by``'s (:data:`ANSWERED_BY`), if the caller names who it asked."""
    if answered_by is not None:
        response.extensions = {**response.extensions, ANSWERED_BY: answered_by}


def _accepting(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``kwargs`` of a request, asking for the codings :class:`~._decoded.Decoder` decodes (one layer of gzip or
    deflate; httpx would also ask for brotli or zstd when their packages are installed)."""
    headers = httpx.Headers(kwargs.get("headers"))
    headers["Accept-Encoding"] = ACCEPTED_ENCODING
    return {**kwargs, "headers": headers}


def _raw(response: httpx.Response):
    """The raw bytes of ``response``'s body as they arrive; the body of an answer a transport handed over read (a
    test's ``MockTransport`` given ``content=``: httpx decoded it then) as it is."""
    if response.is_stream_consumed:
        yield response.content
        return
    yield from response.iter_raw()


async def _raw_async(response: httpx.Response):
    """:func:`_raw` of an answer read asynchronously."""
    if response.is_stream_consumed:
        yield response.content
        return
    async for raw in response.aiter_raw():
        yield raw


def _decoder(method: str, response: httpx.Response) -> Decoder:
    """The decoder of ``response``'s body; an answer in codings dpdist does not decode refused in one line (code
    ``unexpected_answer``, not retried) before its body is read (``gzip, gzip`` unpacked 2 GiB in one read)."""
    try:
        return Decoder(response, decoded=response.is_stream_consumed)
    except ValueError as error:
        raise _unreadable(method, response, str(error)) from None


def _pieces(pieces: Iterator[bytes], method: str, response: httpx.Response) -> Iterator[bytes]:
    """The decoded ``pieces`` of ``response``; a body that does not inflate refused in one line (it was
    "internal error DecodingError")."""
    try:
        yield from pieces
    except CorruptBody as error:
        raise _corrupt(method, response, str(error)) from None


def _unreadable(method: str, response: httpx.Response, reason: str) -> ServiceRefusedError:
    """The one-line refusal of an answer in codings dpdist does not decode (code ``unexpected_answer``, not retried)."""
    who = _who(response)
    return _undecoded(method, response, reason, "is in a coding dpdist does not read", f"{who} answers in one. Is "
                      f"that URL {who}, not another server answering in its place?")


def _corrupt(method: str, response: httpx.Response, reason: str) -> ServiceRefusedError:
    """The one-line refusal of an answer whose gzip or deflate body does not decode: corrupt or cut short on the way
    (code ``unexpected_answer``, not retried; it once said "a coding dpdist does not read")."""
    return _undecoded(method, response, reason, "is corrupt or cut short", f"its body does not decode. Is that URL "
                      f"{_who(response)}, and no proxy on the way that changes or cuts its answers?")


def _undecoded(method: str, response: httpx.Response, reason: str, what: str, question: str) -> ServiceRefusedError:
    """``The answer to METHOD URL <what> (HTTP status, kind, <reason>): <question>``, masked and escaped."""
    secrets = secrets_of(response)
    return ServiceRefusedError(
        f"The answer to {method} {shown(str(response.request.url), secrets)} {what} (HTTP {response.status_code}, "
        f"{kind_of(response)}, {shown(reason, secrets)}): {question}", status=response.status_code, code=UNEXPECTED)


def _who(response: httpx.Response) -> str:
    """Who answered ``response``: :data:`ANSWERED_BY`, or the dpdist service."""
    return str(response.extensions.get(ANSWERED_BY, "the dpdist service"))


def _kept_within(chunks: list[bytes], chunk: bytes, read: int, limit: int, method: str,
                 response: httpx.Response) -> int:
    """Keep ``chunk`` of an answer's decoded body; the bytes kept so far, or :func:`_too_large` past ``limit``."""
    read += len(chunk)
    if read > limit:
        raise _too_large(method, response, limit)
    chunks.append(chunk)
    return read


def _kept(response: httpx.Response) -> dict[str, Any]:
    """The extensions of ``response`` a rebuilt answer keeps (:data:`ANSWERED_BY`)."""
    return {ANSWERED_BY: response.extensions[ANSWERED_BY]} if ANSWERED_BY in response.extensions else {}


def _request_of(error: httpx.RequestError) -> httpx.Request | None:
    """The request ``error`` names, None if it names none."""
    try:
        return error.request
    except RuntimeError:  # raised without its request
        return None


class _Answer(httpx.Response):
    """An answer read whole, whose ``json()`` raises ``ValueError`` (not ``RecursionError``) for a document nested
    deeper than Python parses (a server's ``[[[[...]]]]``: every reader already refuses a ``ValueError``) or holding
    more values than its bound allows (:func:`dpdist._json.loads_within`: parsing holds far more than the bytes)."""

    limit = MAX_ANSWER_BYTES

    @classmethod
    def of(cls, response: httpx.Response, chunks: list[bytes], limit: int) -> "_Answer":
        """The answer ``response`` whose decoded body is ``chunks`` (at most ``limit`` bytes), rebuilt from the header
        bytes as they came, without those that describe the bytes on the wire."""
        headers = [(name, value) for name, value in response.headers.raw if name.lower() not in _WIRE_HEADERS]
        answer = cls(response.status_code, headers=headers, content=b"".join(chunks), request=response.request,
                     extensions=_kept(response))
        answer.limit = limit
        return answer

    def json(self, **kwargs: Any) -> Any:
        return loads_within(self.content, self.limit)


def _too_large(method: str, response: httpx.Response, limit: int) -> ServiceRefusedError:
    """The one-line refusal of an answer past ``limit`` bytes."""
    secrets, who = secrets_of(response), _who(response)
    return ServiceRefusedError(
        f"The answer to {method} {shown(str(response.request.url), secrets)} is larger than dpdist reads (HTTP "
        f"{response.status_code}, {kind_of(response)}, more than "
        f"{f'{limit >> 20} MiB' if limit >= 1 << 20 else f'{limit >> 10} KiB'} once decoded): {who}'s "
        f"answers are far smaller. Is that URL {who}, not another server answering in its place?",
        status=response.status_code, code=TOO_LARGE)
