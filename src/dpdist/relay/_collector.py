"""The relay's requests to the collector, each answer bounded in time and in bytes, and what it logs of them.

The relay asks the collector for its public pages (a campaign's config and identity) and delivers batches to it.  Its
answers are read the way dpdist's clients read a server's (:mod:`dpdist.serve._deadline`): at most
:data:`dpdist._answer.MAX_ANSWER_BYTES` of body once decoded (a ~1 MB gzip answer that unpacks to 1 GiB took the relay
to 3.1 GB, retried), and the whole exchange - the request sent, the head and the body - within a deadline (a collector
that answers a head and then one byte every half second held the relay's delivery, every campaign's, for minutes: the
per-read timeout restarts with each byte).  An answer past either bound is no answer: :func:`ask` raises
:class:`NoAnswer`, which the relay treats as a network error (a batch is sent again with the same id and bytes; a page
is "collector unavailable").

Whatever the relay logs of an answer goes through :func:`logged`: escaped, masked (the relay's token, any
``Bearer``/``Basic`` credential, ``token=`` values, URLs' passwords: :func:`dpdist._shown.shown`) and cut, so that a
collector, or anything in its place, cannot write a line, a control sequence or the relay's own token into its log.
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx

from .._answer import MAX_ANSWER_BYTES
from .._shown import secrets_of, shown

__all__ = ["ask", "NoAnswer", "logged", "ANSWER_DEADLINE_S", "PAGE_DEADLINE_S", "UPLOAD_RATE"]

#: seconds a delivery's exchange may take (the request's body sent, the head and the body of the answer), plus the
#: time of its body at :data:`UPLOAD_RATE`
ANSWER_DEADLINE_S = 60.0
#: seconds the exchange of a GET of the collector's public pages may take (a device waits on it)
PAGE_DEADLINE_S = 30.0
#: bytes per second a batch's body is given on top of :data:`ANSWER_DEADLINE_S` (a 1 MiB batch: 16 s more)
UPLOAD_RATE = 64 << 10
#: headers that describe the bytes on the wire, not the decoded body the answer is rebuilt with
_WIRE_HEADERS = frozenset({b"content-encoding", b"content-length", b"transfer-encoding"})


class NoAnswer(httpx.TransportError):
    """The collector's answer was not whole within the deadline, or was larger than the relay reads: no answer."""


async def ask(client: httpx.AsyncClient, method: str, path: str, *, seconds: float, limit: int | None = None,
              **kwargs: Any) -> httpx.Response:
    """``client.request(method, path, **kwargs)`` with its body read whole, within ``seconds`` of the request's start
    (``limit``: the most bytes of body read, once decoded; None: :data:`dpdist._answer.MAX_ANSWER_BYTES`).

    Raises
    ------
    NoAnswer
        The exchange took longer than ``seconds`` (the connection is closed), or the body held more than ``limit``
        bytes once decoded (reading stopped there).
    httpx.TransportError
        The collector could not be reached, or a read or write timed out.
    """
    try:
        return await asyncio.wait_for(_whole(client, method, path, MAX_ANSWER_BYTES if limit is None else limit, kwargs),
                                      seconds)
    except asyncio.TimeoutError:
        raise NoAnswer(f"the collector's answer to {method} {path} was not whole {seconds:.3g} s after the request "
                       "started (a deadline per attempt)") from None


async def _whole(client: httpx.AsyncClient, method: str, path: str, limit: int, kwargs: dict) -> httpx.Response:
    """The answer, its body read up to ``limit`` bytes (decoded), rebuilt as a read response."""
    async with client.stream(method, path, **kwargs) as response:
        chunks, read = [], 0
        async for chunk in response.aiter_bytes():
            chunks.append(chunk)
            read += len(chunk)
            if read > limit:  # leaving the block closes the connection: nothing more is read or decoded
                raise NoAnswer(f"the collector's answer to {method} {path} (HTTP {response.status_code}) is larger "
                               f"than the relay reads (more than {limit >> 20} MiB once decoded)")
    # rebuilt from the header bytes as they came (decoded text would not encode again: a proxy's ``Server: café``)
    headers = [(name, value) for name, value in response.headers.raw if name.lower() not in _WIRE_HEADERS]
    return httpx.Response(response.status_code, headers=headers, content=b"".join(chunks), request=response.request)


def logged(text: str, response: Any = None, secrets: tuple[str, ...] = (), limit: int = 300) -> str:
    """``text`` (from the collector: a refusal's body, an error's message) as the relay logs it: one line, escaped,
    masked (``secrets``, the credential ``response``'s request carried, any credential) and cut to ``limit``."""
    carried = secrets_of(response) if response is not None else ()
    return shown(text, tuple(sorted({*secrets, *carried}, key=len, reverse=True)), limit)
