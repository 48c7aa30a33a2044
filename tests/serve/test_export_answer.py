"""``Client.export`` (``dpdist campaign export``) reads its answer as it arrives: refused at its first bytes when they
start no report file (attack69 F4: a 2 MB gzip bomb of NULs grew the hidden ``.<name>.download`` to 2 GB before
"neither a Parquet file nor a dpdist report file"), its partial file removed however it ends."""

from __future__ import annotations

import gzip
import zlib

import httpx
import numpy as np
import pytest

from dpdist import io
from dpdist.client import Client
from dpdist.errors import ServiceRefusedError
from dpdist.local import from_config

URL = "http://127.0.0.1:9"


def _gzip_of_zeros(size: int) -> bytes:
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = bytes(1 << 20)
    return b"".join(packer.compress(zeros) for _ in range(size >> 20)) + packer.flush()


class Answer(httpx.SyncByteStream):
    """A body sent ``size`` raw bytes at a time, counting what the reader took, then ``error`` if given."""

    def __init__(self, body: bytes, size: int, error: Exception | None = None):
        self.body, self.size, self.error, self.taken = body, size, error, 0

    def __iter__(self):
        for start in range(0, len(self.body), self.size):
            self.taken += min(self.size, len(self.body) - start)
            yield self.body[start:start + self.size]
        if self.error is not None:
            raise self.error


def _export(tmp_path, answer: Answer, encoding: str | None = "gzip", name: str = "out.bin") -> int:
    def handler(request: httpx.Request) -> httpx.Response:
        assert request.url.path == "/api/campaigns/c/reports"
        headers = {"content-type": "application/octet-stream"} | ({"content-encoding": encoding} if encoding else {})
        return httpx.Response(200, headers=headers, stream=answer)

    with Client(URL, admin_token="a" * 32, retry_window=0, transport=httpx.MockTransport(handler)) as admin:
        return admin.export("c", tmp_path / name)


def _left(tmp_path) -> list[str]:
    return sorted(path.name for path in tmp_path.iterdir())


def test_a_bomb_of_nuls_is_refused_at_its_first_bytes_naming_the_request(tmp_path):
    answer = Answer(_gzip_of_zeros(256 << 20), 1024)  # 256 MiB of NULs in ~250 KB
    with pytest.raises(ServiceRefusedError) as refused:
        _export(tmp_path, answer)
    message = str(refused.value)
    assert refused.value.code == "unexpected_answer" and "\n" not in message
    assert message.startswith(f"The answer to GET {URL}/api/campaigns/c/reports is neither a Parquet file nor a dpdist "
                              "report file (it starts b'\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x00')")
    assert ".download" not in message
    assert answer.taken == 1024  # the first read said it: the rest never read, nothing written
    assert _left(tmp_path) == []


@pytest.mark.parametrize("start", [b"<html>", b"PAR2", b"DPDISTS\n", b"D\x00"])
def test_an_answer_that_starts_no_report_file_is_refused_at_once(tmp_path, start):
    answer = Answer(start + bytes(1 << 20), 1)  # a byte at a time: refused at the first that cannot start one
    with pytest.raises(ServiceRefusedError) as refused:
        _export(tmp_path, answer, encoding=None)
    assert refused.value.code == "unexpected_answer"
    assert answer.taken <= len(start) and _left(tmp_path) == []


@pytest.mark.parametrize("body, error", [
    (gzip.compress(b"DPDISTR\n" + bytes(1000))[:-9], None),  # a gzip stream cut short
    (b"\x1f\x8b" + bytes(100), None),  # no gzip stream
    (gzip.compress(b"DPDISTR\n" + bytes(100_000)), httpx.ReadError("connection reset")),  # the connection lost
])
def test_the_partial_file_is_removed_on_every_failure(tmp_path, body, error):
    with pytest.raises((ServiceRefusedError, httpx.ReadError)):
        _export(tmp_path, Answer(body, 10, error))
    assert _left(tmp_path) == []


@pytest.mark.parametrize("name, encoding", [("out.bin", "gzip"), ("out.parquet", None)])
def test_a_report_file_arriving_a_few_bytes_at_a_time_is_exported(tmp_path, name, encoding):
    protocol = from_config({"protocol": "grr", "epsilon": 1.0, "domain_size": 8, "version": 1})
    reports = protocol.privatize(np.arange(8).repeat(5), rng=70)
    io.write_reports(tmp_path / f"served.{name}", protocol, reports, rng=70)
    body = (tmp_path / f"served.{name}").read_bytes()
    (tmp_path / f"served.{name}").unlink()
    assert _export(tmp_path, Answer(gzip.compress(body) if encoding else body, 3), encoding, name) == 40
    assert np.array_equal(np.sort(io.read_reports(tmp_path / name, protocol).reports), np.sort(reports))
    assert _left(tmp_path) == [name]
