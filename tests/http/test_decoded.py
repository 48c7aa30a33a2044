"""An answer's body decoded by dpdist itself, one bounded step at a time (``dpdist._http._decoded``, read by
``dpdist._http._deadline``): an answer of ``Content-Encoding: gzip, gzip`` (2 GiB of zeros in 3,477 bytes) once made the
reader hold 4.27 GB before it refused the answer."""

from __future__ import annotations

import gzip
import tracemalloc
import zlib

import httpx
import pytest

from dpdist._http._decoded import ACCEPTED_ENCODING, STEP, Decoder
from dpdist._http._answer import UNEXPECTED
from dpdist._http._deadline import UNEXPECTED as NAMED_HERE
from dpdist._http._deadline import request_within
from dpdist.errors import ServiceRefusedError


def _gzip_of_zeros(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    return b"".join(packer.compress(zeros) for _ in range(size >> 20)) + packer.flush()


def _answer(body: bytes, encoding: str | None, seen: list | None = None):
    def handler(request: httpx.Request) -> httpx.Response:
        if seen is not None:
            seen.append(request.headers.get("accept-encoding"))
        headers = {"content-type": "application/json"} | ({"content-encoding": encoding} if encoding else {})
        return httpx.Response(200, headers=headers, stream=httpx.ByteStream(body))  # raw bytes, as from the network

    return httpx.Client(transport=httpx.MockTransport(handler), base_url="http://h")


@pytest.mark.parametrize("encoding", ["gzip", "x-gzip", "deflate", "raw deflate", None])
def test_one_layer_is_decoded_as_sent_and_only_gzip_and_deflate_are_asked_for(encoding):
    document = b'{"campaigns": []}' * 1000
    if encoding in ("gzip", "x-gzip"):
        body = gzip.compress(document)
    elif encoding == "deflate":
        body = zlib.compress(document)
    elif encoding == "raw deflate":
        packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        body, encoding = packer.compress(document) + packer.flush(), "deflate"  # some servers send deflate unwrapped
    else:
        body = document
    seen: list = []
    with _answer(body, encoding, seen) as http:
        answer = request_within(http, "GET", "/api/campaigns", 5)
    assert answer.content == document and seen == [ACCEPTED_ENCODING]
    assert "content-encoding" not in answer.headers  # the rebuilt answer is the decoded body


@pytest.mark.parametrize("encoding", ["gzip, gzip", "gzip,deflate", "br", "zstd", "compress"])
def test_codings_dpdist_does_not_decode_are_refused_before_the_body_is_read(encoding):
    inner = _gzip_of_zeros(8 << 20)
    body = gzip.compress(inner) if encoding.startswith("gzip") else inner
    with _answer(body, encoding) as http, pytest.raises(ServiceRefusedError) as refused:
        request_within(http, "GET", "/api/campaigns", 5)
    assert refused.value.code == "unexpected_answer" and "dpdist decodes one layer of gzip or deflate" in str(refused.value)


def test_a_gzip_bomb_is_refused_holding_no_more_than_the_limit_and_a_step():
    """One network read of a bomb no longer unpacks whole: 64 MiB of zeros against a 1 MiB limit."""
    bomb = _gzip_of_zeros(64 << 20)
    with _answer(bomb, "gzip") as http:
        tracemalloc.start()
        try:
            with pytest.raises(ServiceRefusedError) as refused:
                request_within(http, "GET", "/api/campaigns", 5, limit=1 << 20)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert refused.value.code == "answer_too_large"
    assert peak < len(bomb) + (1 << 20) + 3 * STEP, peak  # httpx decoded it all at once: 64 MiB


def test_the_refusals_code_is_the_answer_readers():
    assert NAMED_HERE == UNEXPECTED


@pytest.mark.parametrize("body", [b"\x1f\x8b\x08\x00not gzip at all", b'{"campaigns": []}',
                                  gzip.compress(b"{}", mtime=0)[:-6], gzip.compress(b"{}", mtime=0) + b"GARBAGE\x1b[2J",
                                  gzip.compress(b"{}", mtime=0) + gzip.compress(b"[]", mtime=0),
                                  gzip.compress(b"{}", mtime=0)[:-8] + b"\x00\x00\x00\x00" + gzip.compress(b"{}", mtime=0)[-4:]])
def test_a_body_that_does_not_inflate_is_refused_in_one_line_not_an_internal_error(body):
    """A corrupt gzip body (or one not gzip at all, or its CRC wrong) was "internal error DecodingError"."""
    with _answer(body, "gzip") as http, pytest.raises(ServiceRefusedError) as refused:
        request_within(http, "GET", "/api/campaigns", 5)
    assert refused.value.code == "unexpected_answer"
    assert any(words in str(refused.value) for words in ("does not inflate", "after its stream's end", "ends before"))
    # gzip is a coding dpdist reads; the body is corrupt or cut short, and the sentence says so
    assert "is corrupt or cut short (HTTP 200" in str(refused.value), str(refused.value)
    assert "coding dpdist does not read" not in str(refused.value), str(refused.value)


def test_the_decoder_writes_bounded_pieces_and_keeps_what_the_inflater_held():
    response = httpx.Response(200, headers={"content-encoding": "gzip"}, request=httpx.Request("GET", "http://h"))
    decoder = Decoder(response)
    pieces = list(decoder.feed(_gzip_of_zeros(5 << 20))) + list(decoder.end())
    assert sum(map(len, pieces)) == 5 << 20 and max(map(len, pieces)) <= STEP
