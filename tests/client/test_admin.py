"""dpdist.client.AdminClient and issuer_of: the URLs they take, the answers they refuse, an export read as it arrives
(more of the clients: tests/serve/test_app.py and beyond)."""

from __future__ import annotations

import gzip
import json
import struct
import zlib

import numpy as np
import pytest

from dpdist import io
from dpdist.errors import InvalidParameterError, ServiceRefusedError, ServiceUnavailableError
from dpdist.local import from_config

pytest.importorskip("httpx")

import httpx  # noqa: E402 - after the extra's check
from dpdist.client import AdminClient, Client, issuer_of  # noqa: E402 - after the extra's check

ADMIN = "admin-token-0123456789"


@pytest.mark.parametrize("relay", [{"url": "http://alice:S3cretPW@relay.example"}, {"url": "https://alice@relay.example:1/x"},
                                   {"url": "http://relay.example", "issuer": {"url": "http://alice:S3cretPW@issuer.example"}}])
def test_a_relayed_campaign_s_urls_with_a_password_are_refused_before_anything_is_sent(relay):
    """The relay's and the issuer's URLs are published to every device with the campaign's config (a bad port: the
    service refuses it, tests/serve/test_relayed.py)."""
    with AdminClient("http://127.0.0.1:1", admin_token=ADMIN, retries=0) as client:  # nothing listens: refused first
        with pytest.raises(InvalidParameterError, match=r"relay\['") as refused:
            client.create_campaign("c", {"protocol": "grr", "version": 1, "epsilon": 1.0, "domain_size": 2}, relay=relay)
    assert "S3cretPW" not in str(refused.value)


def test_an_issuer_named_with_a_password_is_refused_before_it_is_asked():
    with pytest.raises(InvalidParameterError, match="'url' parameter of issuer_of.*without user:password@") as refused:
        issuer_of("http://alice:S3cretPW@127.0.0.1:1", "k")
    assert "S3cretPW" not in str(refused.value) and "alice:***@127.0.0.1:1" in str(refused.value)


def _answering(status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> AdminClient:
    """A client whose every request gets this answer (the bytes of its headers as given)."""
    import httpx

    transport = httpx.MockTransport(lambda request: httpx.Response(status, headers=headers or [], content=body))
    return AdminClient("http://h", admin_token=ADMIN, transport=transport, retries=0)


@pytest.mark.parametrize("kind, body", [(b"text/html", b"<html>portal</html>"), (b"image/png", b"<html>portal</html>"),
                                        (b"application/json", b"\x89PNG\r\n\x1a\n...")])
def test_a_plot_that_is_not_a_png_is_refused(kind, body):
    from dpdist.errors import ServiceRefusedError

    with pytest.raises(ServiceRefusedError, match="not a PNG image") as error:
        _answering(200, body, [(b"Content-Type", kind)]).estimate_png("c")
    assert error.value.code == "unexpected_answer"
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    assert _answering(200, png, [(b"Content-Type", b"image/png")]).estimate_png("c") == png


@pytest.mark.parametrize("call", ["campaigns", "estimate", "open_campaign", "close_campaign", "delete_campaign",
                                  "create_campaign"])
@pytest.mark.parametrize("body", [b'{"x": 1}', b'{"campaigns": [1, 2], "campaign": 3}', b'{"campaigns": null}'])
def test_a_route_s_answer_without_what_it_holds_is_refused(call, body):
    from dpdist.errors import ServiceRefusedError

    client = _answering(200, body, [(b"Content-Type", b"application/json")])
    arguments = {"campaigns": (), "create_campaign": ("c", {"protocol": "grr"})}.get(call, ("c",))
    with pytest.raises(ServiceRefusedError, match="is not what a dpdist service answers") as error:
        getattr(client, call)(*arguments)
    assert error.value.code == "unexpected_answer"


@pytest.mark.parametrize("status, body, headers", [
    (401, b'{"error": "unauthorized", "detail": "bad token %s"}', []),
    (404, b"<h1>NF Authorization: Bearer %s</h1>", [(b"Content-Type", b"text/html")]),
    (200, b"<html>hi %s</html>", [(b"Content-Type", b"text/html")]),
    (200, b"{}", [(b"Content-Type", b"text/%s")]),
    (307, b"", [(b"Location", b"http://h/?token=%s&admin_token=X9")]),
])
def test_the_client_s_own_token_echoed_by_a_server_is_never_shown(status, body, headers):
    from dpdist.errors import ServiceRefusedError

    token = ADMIN.encode()
    client = _answering(status, body.replace(b"%s", token), [(name, value.replace(b"%s", token)) for name, value in headers])
    with pytest.raises(ServiceRefusedError) as error:
        client.campaigns()
    assert ADMIN not in str(error.value), str(error.value)


def test_a_dpdist_refusal_is_shown_by_its_code_and_its_detail_escaped_on_one_line():
    from dpdist.errors import ServiceRefusedError

    body = json.dumps({"error": "campaign_closed", "detail": f"x\x1b[2J\x1b]0;pwned\x07 line1\nline2\t{ADMIN}"}).encode()
    with pytest.raises(ServiceRefusedError) as error:
        _answering(409, body, [(b"Content-Type", b"application/json")]).campaigns()
    assert str(error.value) == ("The server refused GET /api/campaigns: HTTP 409 campaign_closed: "
                                "x\\x1b[2J\\x1b]0;pwned\\x07 line1\\nline2\\t***"), str(error.value)
    assert error.value.code == "campaign_closed"


@pytest.mark.parametrize("status, body", [
    (409, b'{"error": "conflict", "detail": "x\\u001b[2J"}'),  # a code no dpdist server answers with
    (404, b"<h1>\x1b[31mNF</h1>\nline2"), (600, b""), (403, b'{"error": "forbidden", "detail": null}'),
])
def test_any_other_refusal_is_shown_by_its_status_host_and_size(status, body):
    from dpdist.errors import ServiceRefusedError

    with pytest.raises(ServiceRefusedError) as error:
        _answering(status, body, [(b"Content-Type", b"text/html")]).campaigns()
    assert str(error.value) == (f"The server refused GET /api/campaigns: status {status} from h (not a dpdist answer, "
                                f"{len(body)} bytes)"), str(error.value)
    assert error.value.code == "" and error.value.status == status


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/?x", "http://127.0.0.1:9#f", "http://127.0.0.1:9/base/?x=1"])
def test_issuer_of_refuses_a_query_or_fragment_before_any_request(url):
    """It went to ``GET /?x/issuer/v1/keys/k1`` (or ``/``), and the refusal was a misleading 404."""
    import httpx

    def never(request):
        raise AssertionError(f"sent {request.url}")

    with pytest.raises(InvalidParameterError, match="without a query or fragment"):
        issuer_of(url, "k1", transport=httpx.MockTransport(never))


def test_issuer_of_reads_the_key_up_to_an_acknowledgement_s_bound():
    """``campaign create --issuer`` parsed a 128 MiB key answer (2.37 GB held): a key is a few hundred
    bytes, read as an acknowledgement is, up to 1 MiB."""
    import httpx

    asked = []

    def answer(request):
        asked.append(request.url.path)
        return httpx.Response(200, content=b'{"token_key": "' + b"A" * (2 << 20) + b'"}')

    with pytest.raises(ServiceRefusedError) as refused:
        issuer_of("http://issuer", "k1", transport=httpx.MockTransport(answer))
    assert refused.value.code == "answer_too_large" and "more than 1 MiB once decoded" in str(refused.value)
    assert asked == ["/issuer/v1/keys/k1"]


EXPORT_URL = "http://127.0.0.1:9"


# Client.export (dpdist campaign export) reads its answer as it arrives: refused at its first bytes when they start no
# report file (a 2 MB gzip bomb of NULs grew the hidden .<name>.download to 2 GB before "neither a Parquet
# file nor a dpdist report file"), its partial file removed however it ends.


def _gzip_of_zeros(size: int) -> bytes:
    """A gzip stream of ``size`` NULs (whole MiB), about 1,000 times smaller.  Each MiB is deflated run-length and
    flushed to a byte boundary with a fresh window, so every MiB's bytes are the same: made once and repeated, in a gzip
    member written here (deflating 256 MiB at level 9 took 0.7 CPU-s, this 0.1)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS, 9, zlib.Z_RLE)  # raw deflate: the framing is below
    mib = bytes(1 << 20)
    piece = packer.compress(mib) + packer.flush(zlib.Z_FULL_FLUSH)
    crc = 0
    for _ in range(size >> 20):
        crc = zlib.crc32(mib, crc)
    header = b"\x1f\x8b\x08\x00" + bytes(4) + b"\x02\xff"  # gzip, deflate, no name, no time, level 9, unknown OS
    return header + piece * (size >> 20) + packer.flush() + struct.pack("<II", crc, size & 0xFFFFFFFF)


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

    with AdminClient(EXPORT_URL, admin_token="a" * 32, retry_window=0, transport=httpx.MockTransport(handler)) as admin:
        return admin.export("c", tmp_path / name)


def _left(tmp_path) -> list[str]:
    return sorted(path.name for path in tmp_path.iterdir())


def test_a_bomb_of_nuls_is_refused_at_its_first_bytes_naming_the_request(tmp_path):
    answer = Answer(_gzip_of_zeros(256 << 20), 1024)  # 256 MiB of NULs in ~250 KB
    with pytest.raises(ServiceRefusedError) as refused:
        _export(tmp_path, answer)
    message = str(refused.value)
    assert refused.value.code == "unexpected_answer" and "\n" not in message
    assert message.startswith(f"The answer to GET {EXPORT_URL}/api/campaigns/c/reports is neither a Parquet file nor a dpdist "
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
    (gzip.compress(b"DPDISTR\n" + bytes(1000), mtime=0)[:-9], None),  # a gzip stream cut short
    (b"\x1f\x8b" + bytes(100), None),  # no gzip stream
    (gzip.compress(b"DPDISTR\n" + bytes(100_000), mtime=0), httpx.ReadError("connection reset")),  # the connection lost
])
def test_the_partial_file_is_removed_on_every_failure(tmp_path, body, error):
    with pytest.raises((ServiceRefusedError, ServiceUnavailableError)) as failed:
        _export(tmp_path, Answer(body, 10, error))
    assert _left(tmp_path) == []
    assert "\n" not in str(failed.value) and (error is None or "ReadError: connection reset" in str(failed.value))


def test_an_export_without_a_server_is_one_line_not_an_internal_error(tmp_path):
    def refuse(request):
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    with AdminClient(EXPORT_URL, admin_token="a" * 32, transport=httpx.MockTransport(refuse)) as admin:
        with pytest.raises(ServiceUnavailableError) as failed:
            admin.export("c", tmp_path / "out.bin")
    assert str(failed.value).startswith(f"GET {EXPORT_URL}/api/campaigns/c/reports failed: ConnectError: [Errno 111]")
    assert "Nothing was written" in str(failed.value) and _left(tmp_path) == []


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


def test_only_a_batch_that_failed_is_said_to_be_sent_again_later():
    # an estimate that failed ended "Nothing was lost: a batch keeps its id...", which speaks of no batch
    def handler(request):
        return httpx.Response(503, json={"error": "busy", "detail": "try later"})

    with AdminClient(EXPORT_URL, admin_token="a" * 32, retry_window=0, transport=httpx.MockTransport(handler)) as client, Client(EXPORT_URL, retry_window=0, transport=httpx.MockTransport(handler)) as device:
        with pytest.raises(ServiceUnavailableError) as estimate:
            client.estimate("c")
        with pytest.raises(ServiceUnavailableError) as batch:
            device.submit_body("c", "b1", b"bytes")
    assert "HTTP 503" in str(estimate.value) and "a batch keeps its id" not in str(estimate.value)
    assert "Nothing was changed: send it again later" in str(estimate.value)
    assert "Nothing was lost: a batch keeps its id" in str(batch.value)


def test_a_refusal_whose_detail_is_null_is_shown_by_its_code():
    def handler(request):
        return httpx.Response(403, json={"error": "wrong_key", "detail": None})

    with AdminClient(EXPORT_URL, admin_token="a" * 32, retry_window=0, transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(ServiceRefusedError) as refused:
            client.estimate("c")
    assert str(refused.value).endswith("HTTP 403 wrong_key"), str(refused.value)
