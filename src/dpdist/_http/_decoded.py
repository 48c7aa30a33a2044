"""An answer's body decoded from its raw bytes, one step of bounded size at a time.

httpx decodes each network read whole, through every coding the answer names: an answer of 3,477 bytes sent with
``Content-Encoding: gzip, gzip`` (2 GiB of zeros compressed twice) came out of one read as 2 GiB, so a bound on the
decoded body checked after each read (:data:`dpdist._http._deadline.MAX_ANSWER_BYTES`) was checked too late: 4.27 GB of
memory before the refusal.  dpdist asks for one layer of ``gzip`` or ``deflate`` (:data:`ACCEPTED_ENCODING`), reads
the raw bytes and inflates them itself, at most :data:`STEP` bytes of output per call (:func:`zlib.decompressobj`'s
``max_length``); an answer in any other coding, or in several, is refused before its body is read.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

import httpx

__all__ = ["ACCEPTED_ENCODING", "STEP", "CorruptBody", "Decoder", "codings_of"]

#: the codings dpdist asks for (``Accept-Encoding``) and decodes: one layer of either
ACCEPTED_ENCODING = "gzip, deflate"
#: the most bytes one inflating step writes (the memory an answer's decoding holds beyond what is kept)
STEP = 1 << 20
_WINDOW = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class CorruptBody(ValueError):
    """A body that does not inflate: a broken or hostile server's (or not in the coding it names)."""


def codings_of(response: httpx.Response) -> list[str]:
    """The content codings ``response`` names, in the order applied (``identity`` left out)."""
    named = (part.strip().lower() for part in response.headers.get("content-encoding", "").split(","))
    return [coding for coding in named if coding and coding != "identity"]


class Decoder:
    """The decoded body of ``response`` from its raw chunks (:meth:`feed`, then :meth:`end`), in pieces of at most
    :data:`STEP` bytes (``decoded``: the chunks are the body already, as a transport that read the answer gives it).
    ``ValueError`` (with what was named) for codings dpdist does not decode: not one layer of gzip or deflate."""

    def __init__(self, response: httpx.Response, *, decoded: bool = False):
        codings = codings_of(response)
        if len(codings) > 1 or (codings and codings[0] not in _WINDOW):
            raise ValueError(f"Content-Encoding {', '.join(codings)!r} (dpdist decodes one layer of gzip or deflate)")
        self.response = response
        self.coding = codings[0] if codings and not decoded else None
        self._inflate = None if self.coding is None else zlib.decompressobj(_WINDOW[self.coding])
        self._started = False

    def feed(self, raw: bytes) -> Iterator[bytes]:
        """The decoded pieces of the raw chunk ``raw``."""
        if self._inflate is None:
            if raw:
                yield raw
            return
        data = raw
        if data and self._inflate.eof:  # bytes after the stream's end: garbage, or a second member (a bomb) unread
            raise CorruptBody(f"its {self.coding} body goes on after its stream's end")
        while data:
            try:
                piece = self._inflate.decompress(data, STEP)
            except zlib.error as error:
                if self.coding == "deflate" and not self._started:  # a raw deflate stream without zlib's header
                    self._inflate, self._started = zlib.decompressobj(-zlib.MAX_WBITS), True
                    continue
                raise CorruptBody(f"its {self.coding} body does not inflate: {error}") from None
            self._started = True
            if piece:
                yield piece
            if self._inflate.eof and self._inflate.unused_data:
                raise CorruptBody(f"its {self.coding} body goes on after its stream's end")
            data = self._inflate.unconsumed_tail

    def end(self) -> Iterator[bytes]:
        """What the inflater still holds once the raw bytes ended."""
        if self._inflate is not None:
            tail = self._inflate.flush()
            if tail:
                yield tail
            if self._started and not self._inflate.eof:  # cut short: its checksum never read
                raise CorruptBody(f"its {self.coding} body ends before its stream does")
