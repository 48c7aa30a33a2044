"""One request whose answer must arrive within a wall-clock deadline.

httpx's ``timeout`` bounds each read, not the answer: a server, or anything on the path, that answers a head and then
one byte of body every few seconds keeps a plain ``client.request`` waiting as long as it likes (100,000 bytes at one
per 2 s: 55 hours), and the retry window never starts, since no attempt ever fails.  :func:`request_within` streams
the body and stops once ``seconds`` have passed since its head arrived, raising :class:`httpx.ReadTimeout` (a
:class:`httpx.TransportError`): the attempt ends as a timed-out one does, and is retried under the client's retry rule
with the same bytes.  The bound is ``seconds`` plus at most one read's timeout (a read that blocks, the head's included, is
bounded by httpx's own ``timeout``).

The body is bounded in bytes too: past :data:`MAX_ANSWER_BYTES` (decoded: a small gzip answer may unpack to gigabytes)
the read stops and the answer is refused in one line (:class:`~dpdist.errors.ServiceRefusedError`, code
``answer_too_large``, not retried).  The answer is rebuilt from the header bytes as they came (a proxy's non-ASCII
``Server: café`` made every call an "internal error UnicodeEncodeError" when it was rebuilt from decoded text).
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from .._answer import MAX_ANSWER_BYTES, TOO_LARGE
from .._redact import redacted_url
from .._shown import kind_of, secrets_of, shown
from ..errors import ServiceRefusedError

__all__ = ["deadline_of", "request_within", "MAX_ANSWER_BYTES", "TOO_LARGE"]

#: headers that describe the bytes on the wire, not the decoded body the answer is rebuilt with
_WIRE_HEADERS = frozenset({b"content-encoding", b"content-length", b"transfer-encoding"})


def deadline_of(timeout: Any) -> float | None:
    """The seconds an attempt's answer may take for a client's ``timeout`` (a number, an :class:`httpx.Timeout`: its
    read timeout, or None: no deadline)."""
    if isinstance(timeout, httpx.Timeout):
        return timeout.read
    return None if timeout is None else float(timeout)


def request_within(http: httpx.Client, method: str, url: str, seconds: float | None, *,
                   limit: int | None = None, **kwargs: Any) -> httpx.Response:
    """``http.request(method, url, **kwargs)``, its body read whole, unless ``seconds`` pass before it is (then
    :class:`httpx.ReadTimeout`, the connection closed; ``seconds`` None: no deadline) or it holds more than ``limit``
    bytes once decoded (then :class:`ServiceRefusedError`, code :data:`TOO_LARGE`; None: :data:`MAX_ANSWER_BYTES`)."""
    limit = MAX_ANSWER_BYTES if limit is None else limit
    with http.stream(method, url, **kwargs) as response:
        started, chunks, read = time.monotonic(), [], 0  # the head arrived (each of its reads bounded by httpx's timeout)
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            read += len(chunk)
            if read > limit:
                raise _too_large(method, response, limit)
            if seconds is not None and time.monotonic() - started > seconds:
                raise httpx.ReadTimeout(
                    f"the answer to {method} {redacted_url(str(url))} was still arriving {seconds:g} s after its head (the client's timeout, "
                    f"its deadline per attempt; {read} bytes of body read)", request=response.request)
    headers = [(name, value) for name, value in response.headers.raw if name.lower() not in _WIRE_HEADERS]
    return httpx.Response(response.status_code, headers=headers, content=b"".join(chunks), request=response.request)


def _too_large(method: str, response: httpx.Response, limit: int) -> ServiceRefusedError:
    """The one-line refusal of an answer past ``limit`` bytes."""
    secrets = secrets_of(response)
    return ServiceRefusedError(
        f"The answer to {method} {shown(str(response.request.url), secrets)} is larger than dpdist reads (HTTP "
        f"{response.status_code}, {kind_of(response)}, more than {limit >> 20} MiB once decoded): a dpdist service's "
        "answers are far smaller. Is that URL the dpdist service, not another server answering in its place?",
        status=response.status_code, code=TOO_LARGE)
