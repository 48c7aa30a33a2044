"""One request whose answer must arrive within a wall-clock deadline.

httpx's ``timeout`` bounds each read, not the answer: a server, or anything on the path, that answers a head and then
one byte of body every few seconds keeps a plain ``client.request`` waiting as long as it likes (100,000 bytes at one
per 2 s: 55 hours), and the retry window never starts, since no attempt ever fails.  :func:`request_within` streams
the body and stops once ``seconds`` have passed since its head arrived, raising :class:`httpx.ReadTimeout` (a
:class:`httpx.TransportError`): the attempt ends as a timed-out one does, and is retried under the client's retry rule
with the same bytes.  The bound is ``seconds`` plus at most one read's timeout (a read that blocks, the head's included, is
bounded by httpx's own ``timeout``).
"""

from __future__ import annotations

import time
from typing import Any

import httpx

from .._redact import redacted_url

__all__ = ["deadline_of", "request_within"]

#: headers that describe the bytes on the wire, not the decoded body the answer is rebuilt with
_WIRE_HEADERS = frozenset({"content-encoding", "content-length", "transfer-encoding"})


def deadline_of(timeout: Any) -> float | None:
    """The seconds an attempt's answer may take for a client's ``timeout`` (a number, an :class:`httpx.Timeout`: its
    read timeout, or None: no deadline)."""
    if isinstance(timeout, httpx.Timeout):
        return timeout.read
    return None if timeout is None else float(timeout)


def request_within(http: httpx.Client, method: str, url: str, seconds: float | None, **kwargs: Any) -> httpx.Response:
    """``http.request(method, url, **kwargs)``, its body read whole, unless ``seconds`` pass before it is (then
    :class:`httpx.ReadTimeout`, the connection closed); ``seconds`` None: no deadline."""
    if seconds is None:
        return http.request(method, url, **kwargs)
    with http.stream(method, url, **kwargs) as response:
        started, chunks = time.monotonic(), []  # the head arrived (each of its reads bounded by httpx's timeout)
        for chunk in response.iter_bytes():
            chunks.append(chunk)
            if time.monotonic() - started > seconds:
                raise httpx.ReadTimeout(
                    f"the answer to {method} {redacted_url(str(url))} was still arriving {seconds:g} s after its head (the client's timeout, "
                    f"its deadline per attempt; {sum(map(len, chunks))} bytes of body read)", request=response.request)
    headers = [(name, value) for name, value in response.headers.multi_items() if name.lower() not in _WIRE_HEADERS]
    return httpx.Response(response.status_code, headers=headers, content=b"".join(chunks), request=response.request)
