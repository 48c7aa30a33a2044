"""uvicorn's httptools protocol with a header timeout, a header-size limit, the concurrency cap of
:class:`._protocol.ConcurrencyCap`, no WebSocket (:class:`._protocol.NoUpgrade`) and no access line of its own.

httptools (llhttp, in C) parses a request in a fraction of h11's CPU; this is
the protocol of ``dpdist serve`` when it is installed (``--http auto``), with
the defences of :class:`._protocol.HeaderTimeoutH11Protocol`:

* **header time**: the timer of :class:`._protocol.HeaderTimer` is armed when the
  connection opens and at the first bytes that follow a request once its answer
  is sent (as the h11 protocol does), and disarmed when a request's headers are
  complete; bytes that never begin a request (blank lines) keep it armed;
* **header size**: llhttp sets no limit on a request's line and headers, so the
  bytes received while a request's headers are incomplete are counted, and past
  :data:`._limits.MAX_HEADER_BYTES` (passed as uvicorn's ``h11_max_incomplete_event_size``) the request is answered 400 and the
  connection closed, as h11 does past its ``max_incomplete_event_size``.  A head
  that begins in the middle of a read (pipelined behind the previous request) is
  counted from the next read.  A complete head read at once is also refused
  past the limit (its line, header names and values), which h11 lets through;
* **transfer codings**: llhttp reads a chunked body whatever codings are listed
  before ``chunked`` (``Transfer-Encoding: gzip, chunked``), and the body would
  be taken as it came, still in that coding.  Any coding but ``chunked`` is
  answered 400 and the connection closed, as h11 answers it;
* **trailers**: the fields after the last chunk of a chunked body come through
  llhttp's ``on_header`` like headers, after the head is complete, and uvicorn
  would append them to the request's headers without bound (hundreds of MiB
  held by one connection, no credential needed).  Here they are dropped (no
  dpdist route reads a trailer, and a field added to the headers after the
  application read them is one no check saw) and counted against the same
  limit: the fields' bytes, and every read spent wholly inside the trailer
  section (llhttp buffers a field until it ends).  Past it the request is
  answered 400 and the connection closed, as an oversized head is (closed
  without an answer if the application's answer has begun).

A request's answer is written with one ``send`` where uvicorn made two, its head
held until its body (:mod:`._held_head`), and written at the latest when the answer
is complete or before a 400 the protocol writes itself; a ``HEAD`` answer, which has
no body, is not held (held, it waited for the loop's next turn).

Importing this module fails without ``httptools``: :func:`._limits.protocol_class`
then falls back to h11.
"""

from __future__ import annotations

import asyncio
from itertools import chain
from typing import cast

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from ._held_head import HeldHead
from ._protocol import ConcurrencyCap, HeaderTimer, NoUpgrade

#: uvicorn's own default for the option, should a config leave it unset
MAX_HEADER_DEFAULT = 16 << 10

__all__ = ["HeaderTimeoutHttpToolsProtocol"]

#: bytes of a request head besides its line and header names and values, counted per header ("\r\n" and ": ")
_HEADER_OVERHEAD = 4


class HeadersTooLarge(Exception):
    """Raised from a parser callback: httptools turns it into an ``HttpParserCallbackError``, uvicorn into a 400."""


class UnsupportedTransferCoding(Exception):
    """Raised from a parser callback for a ``Transfer-Encoding`` naming a coding but ``chunked`` (400, as h11 answers)."""


class HeaderTimeoutHttpToolsProtocol(NoUpgrade, ConcurrencyCap, HeaderTimer, HttpToolsProtocol):
    """See the module; ``header_timeout`` (seconds) as a class attribute, else from the uvicorn ``Config``."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._init_header_timer()
        self._take_over_concurrency_cap()
        self._awaiting_head = True  # before a request's headers are complete (from the end of the previous request)
        self._head_bytes = 0
        self._completed_in_read = False
        self._head_begun = False
        self._chunk_open = self._chunk_body = False  # a chunk's size line parsed, not yet its end; bytes of it seen
        self._trailer_bytes = 0  # trailer fields' bytes, and reads spent wholly in the trailer section
        self._held: HeldHead | None = None  # the last request's answer transport holding its head (._held_head)
        # the uvicorn option dpdist sets to _limits.MAX_HEADER_BYTES for both parsers (h11 reads it itself)
        self._max_header_bytes = int(self.config.h11_max_incomplete_event_size or MAX_HEADER_DEFAULT)

    def connection_made(self, transport):
        super().connection_made(transport)
        self._open_connection()

    # Each parser callback calls uvicorn's own by its class (HttpToolsProtocol: the next in the MRO that has it), not
    # through super(): every request runs them (about 2 us a request).

    def data_received(self, data: bytes) -> None:
        if self._header_deadline is None and self._awaiting_head and (self.cycle is None or self.cycle.response_complete):
            self._arm_header_timer()  # the first bytes of a following request (its timer not armed)
        awaited, self._completed_in_read = self._awaiting_head, False
        # a chunk begun in an earlier read with no byte of data yet: the last chunk (its trailers follow) or one whose
        # data this read brings; if no data came and the chunk is still open, the whole read was trailer fields
        last_chunk = self._chunk_open and not self._chunk_body
        HttpToolsProtocol.data_received(self, data)
        if self.parser is None or self.transport.is_closing():
            return
        if last_chunk and self._chunk_open and not self._chunk_body:
            self._trailer_bytes += len(data)
            if self._trailer_bytes > self._max_header_bytes:
                self._refuse_trailers()
            return
        if not self._awaiting_head:
            return
        if awaited and not self._completed_in_read:  # a head begun mid-read (pipelined) counts from the next read
            self._head_bytes += len(data)
        if self._head_bytes > self._max_header_bytes:
            self.logger.warning("Request headers too large.")
            self.send_400_response("Request headers too large.")
        elif data and (self._head_begun or not self._completed_in_read):
            self._incomplete_head()  # bytes that did not complete a head: counted, or closed beyond the cap

    def on_headers_complete(self) -> None:
        self._awaiting_head, self._head_bytes, self._head_begun = False, 0, False
        self._disarm_header_timer()
        headers = self.headers  # (name, value) pairs, names in lower case
        size = len(self.url) + _HEADER_OVERHEAD * len(headers) + sum(map(len, chain.from_iterable(headers)))
        if b"transfer-encoding" in chain.from_iterable(headers):  # a name (or a value) so spelled: the names looked at
            for name, value in headers:
                if name == b"transfer-encoding" and any(coding.strip(b" \t").lower() != b"chunked" for coding in value.split(b",")):
                    raise UnsupportedTransferCoding(value[:80])
        if size > self._max_header_bytes:
            raise HeadersTooLarge(size)
        before = self.cycle
        HttpToolsProtocol.on_headers_complete(self)
        cycle = self.cycle
        if (cycle is not before and cycle is not None and not self.expect_100_continue
                and cycle.scope["method"] != "HEAD"):  # (a HEAD answer has no body to wait for)
            self._held = HeldHead(self.transport, self.loop)  # head and body in one send (._held_head)
            cycle.transport = cast(asyncio.Transport, self._held)  # (the transport's stand-in: its calls, forwarded)

    def on_header(self, name: bytes, value: bytes) -> None:
        if self._awaiting_head:
            HttpToolsProtocol.on_header(self, name, value)
            return
        # a trailer field (after the last chunk): counted, dropped (not added to the request's headers)
        self._trailer_bytes += len(name) + len(value) + _HEADER_OVERHEAD
        if self._trailer_bytes > self._max_header_bytes:
            raise HeadersTooLarge(self._trailer_bytes)

    def on_chunk_header(self) -> None:
        self._chunk_open, self._chunk_body = True, False

    def on_body(self, body: bytes) -> None:
        self._chunk_body = True
        HttpToolsProtocol.on_body(self, body)

    def on_chunk_complete(self) -> None:
        self._chunk_open = self._chunk_body = False
        self._trailer_bytes = 0

    def _refuse_trailers(self) -> None:
        self.logger.warning("Request trailers too large.")
        self.send_400_response("Request trailers too large.")

    def send_400_response(self, msg: str) -> None:
        self._flush_held()  # an answer's head held goes first
        cycle = self.cycle
        if cycle is not None and cycle.response_started and not cycle.response_complete:
            self.transport.close()  # an answer has begun: a 400 written into it would corrupt it
            return
        super().send_400_response(msg)

    def on_message_begin(self) -> None:
        HttpToolsProtocol.on_message_begin(self)
        self._chunk_open = self._chunk_body = False
        self._trailer_bytes = 0
        self._head_begun = True  # a request's first byte was parsed: its head is not complete yet

    def on_message_complete(self) -> None:
        HttpToolsProtocol.on_message_complete(self)
        self._awaiting_head, self._completed_in_read = True, True  # what follows is the next request's
        self._head_begun = False

    def on_response_complete(self) -> None:
        self._flush_held()  # the whole answer on the wire before the connection may close
        HttpToolsProtocol.on_response_complete(self)
        # a following request begun in the same read as this one (pipelined): no read will arm the timer for the
        # rest of its head, so its headers' time counts from this answer
        if (self._header_deadline is None and self._awaiting_head and self._head_begun
                and not self.transport.is_closing()):
            self._arm_header_timer()
            self._incomplete_head()

    def _flush_held(self) -> None:
        held = self._held
        if held is not None:
            self._held = None
            held.flush()

    def connection_lost(self, exc):
        self._close_header_timer()
        super().connection_lost(exc)

    def _waiting_for_headers(self) -> bool:
        return self._awaiting_head
