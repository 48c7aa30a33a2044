"""The relay's requests to the collector (``dpdist.relay._collector``): each answer read at most
``MAX_ANSWER_BYTES`` once decoded and whole within a deadline, or none (attack 67: a gzip bomb took the relay to 3.1 GB,
a trickled answer held its delivery for minutes); what it logs of an answer escaped, masked and cut."""

from __future__ import annotations

import asyncio
import zlib

import httpx
import pytest

pytest.importorskip("starlette")

from dpdist.relay._collector import NoAnswer, ask, logged  # noqa: E402

TOKEN = "relay-token-0123456789"


def _ask(handler, **options):
    async def run():
        async with httpx.AsyncClient(transport=httpx.MockTransport(handler), base_url="http://collector") as client:
            return await asyncio.wait_for(ask(client, "PUT", "/api/campaigns/c/relayed/b1", content=b"batch",
                                              headers={"authorization": f"Bearer {TOKEN}"}, **options), 20)

    return asyncio.run(run())


class _Stream(httpx.AsyncByteStream):
    """A body sent in pieces (``pause`` seconds apart); counts the pieces read."""

    def __init__(self, pieces: list[bytes], pause: float = 0.0):
        self.pieces, self.pause, self.sent = pieces, pause, 0

    async def __aiter__(self):
        for piece in self.pieces:
            if self.pause:
                await asyncio.sleep(self.pause)
            self.sent += 1
            yield piece


def test_an_answer_within_the_bounds_is_read_whole_its_header_bytes_kept():
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.content == b"batch"
        body = zlib.compress(b'{"ok": true}', wbits=31)
        return httpx.Response(200, headers=[(b"content-encoding", b"gzip"), (b"server", "café".encode())],
                              stream=_Stream([body[:5], body[5:]]))

    answer = _ask(handler, seconds=10)
    assert answer.status_code == 200 and answer.json() == {"ok": True}
    assert (b"server", "café".encode()) in answer.headers.raw and "content-encoding" not in answer.headers


def test_a_gzip_bomb_stops_being_read_past_the_limit():
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = b"".join(packer.compress(bytes(1 << 20)) for _ in range(64)) + packer.flush()  # 64 MiB of zeros, ~64 kB
    stream = _Stream([data[start:start + 1024] for start in range(0, len(data), 1024)])

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-encoding": "gzip"}, stream=stream)

    with pytest.raises(NoAnswer, match=r"larger than the relay reads \(more than 1 MiB once decoded\)"):
        _ask(handler, seconds=10, limit=1 << 20)
    assert stream.sent < len(stream.pieces) // 4  # ~1 MiB decoded of 64: the rest never read


@pytest.mark.parametrize("slow", ["head", "body"])
def test_an_answer_not_whole_within_the_deadline_is_none(slow):
    async def handler(request: httpx.Request) -> httpx.Response:
        if slow == "head":
            await asyncio.sleep(60)
        return httpx.Response(200, stream=_Stream([b" "] * 600, pause=0.1))  # a minute of body

    with pytest.raises(NoAnswer, match=r"was not whole 0.3 s after the request started"):
        _ask(handler, seconds=0.3)


def test_a_logged_answer_is_one_line_without_the_relays_token():
    request = httpx.Request("PUT", "http://collector/x", headers={"authorization": f"Bearer {TOKEN}"})
    answer = httpx.Response(400, request=request)
    text = f'x\x1b]0;PWNED\x07\n\x1b[2JINFO: fake {TOKEN} Basic dTpPSFNFQ1JFVA== http://u:pw@h/?token=abcdefgh ' + "y" * 900
    line = logged(text, answer, limit=300)
    assert line.isprintable() and len(line) <= 303
    for secret in (TOKEN, "dTpPSFNFQ1JFVA==", ":pw@", "abcdefgh"):
        assert secret not in line
    assert line.startswith("x\\x1b]0;PWNED\\x07\\n\\x1b[2JINFO: fake *** Basic ***") and line.endswith("...")
    assert TOKEN not in logged(f"bare {TOKEN}", secrets=(TOKEN,))
