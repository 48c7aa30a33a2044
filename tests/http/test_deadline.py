"""A server that trickles its answer ends an attempt as a timeout does: httpx's ``timeout`` bounds each
read, so one byte of body every few seconds kept ``Client.submit_body`` and ``dpdist submit`` waiting for ever, and the
retry window never started.  The fake server trickles for at most 20 s (then closes), on 127.0.0.1."""

from __future__ import annotations

import gzip
import time
from http.server import BaseHTTPRequestHandler

import pytest

pytest.importorskip("httpx")

from dpdist.client import AdminClient, Client  # noqa: E402
from dpdist.errors import ServiceRefusedError, ServiceUnavailableError  # noqa: E402
from dpdist._http import _deadline  # noqa: E402
from ops_support import serving, trickle_head  # noqa: E402

#: the most a connection is trickled to (then closed): a client that hangs cannot hold the test longer
TRICKLE_S = 20.0


class _Trickle(BaseHTTPRequestHandler):
    timeout = 30
    puts: list[tuple[str, bytes]] = []

    def log_message(self, format, *args):  # quiet
        pass

    def do_PUT(self):
        type(self).puts.append((self.path, self.rfile.read(int(self.headers["Content-Length"]))))
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "100000")
        self.end_headers()
        until = time.monotonic() + TRICKLE_S
        try:
            while time.monotonic() < until:
                self.wfile.write(b" ")
                self.wfile.flush()
                time.sleep(0.2)
        except OSError:  # the client gave up on this attempt
            pass
        self.close_connection = True


@pytest.fixture
def trickling():
    _Trickle.puts = []
    with serving(_Trickle) as url:
        yield url


def test_a_trickled_answer_ends_the_attempt_and_the_batch_is_resent_until_the_window_ends(trickling):
    failures: list[str] = []
    with Client(trickling, timeout=1.0, retry_window=1.5, backoff=0.0,
                on_retry=lambda *args: failures.append(args[0])) as client:
        with pytest.raises(ServiceUnavailableError) as error:
            client.submit_body("c", "b1", b"the batch's bytes")
    message = str(error.value)
    assert "ReadTimeout" in message and "was not whole 1 s after the request was sent" in message, message
    assert "bytes of body read" in message
    assert "Nothing was lost" in message and "Traceback" not in message
    assert len(_Trickle.puts) >= 2 and set(_Trickle.puts) == {("/api/campaigns/c/batches/b1", b"the batch's bytes")}
    assert all(failure.startswith("ReadTimeout") for failure in failures)


class _Odd(BaseHTTPRequestHandler):
    """Answers ``/api/campaigns`` with a non-ASCII ``Server`` header (a proxy's ``café``), and everything else with a
    gzip body of 8 MiB of spaces (8 kB on the wire)."""
    timeout = 30
    protocol_version = "HTTP/1.1"
    gets: list[str] = []

    def log_message(self, format, *args):  # quiet
        pass

    def do_GET(self):
        type(self).gets.append(self.path)
        odd = self.path == "/api/campaigns"
        body = b'{"campaigns": []}' if odd else gzip.compress(b" " * (8 << 20), mtime=0)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        if odd:
            self._headers_buffer.append("Server: café \u202e\r\n".encode())  # type: ignore[attr-defined]
        else:
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def odd():
    _Odd.gets = []
    with serving(_Odd) as url:
        yield url


def test_a_non_ascii_header_leaves_a_success_a_success(odd):
    with AdminClient(odd, admin_token="admin-token-0123456789", retries=0) as client:
        assert client.campaigns() == []


def test_an_answer_past_the_limit_once_decoded_is_refused_in_one_line_and_not_retried(odd, monkeypatch):
    monkeypatch.setattr(_deadline, "MAX_ANSWER_BYTES", 1 << 20)
    with AdminClient(odd, admin_token="admin-token-0123456789", retries=3, backoff=0.0) as client:
        with pytest.raises(ServiceRefusedError) as error:
            client.estimate("c")
    message = str(error.value)
    assert error.value.code == "answer_too_large" and "\n" not in message
    assert "larger than dpdist reads (HTTP 200, application/json, more than 1 MiB once decoded)" in message, message
    assert _Odd.gets == ["/api/campaigns/c/estimate"]


class _SlowHead(BaseHTTPRequestHandler):
    """Answers a status line, then one byte of a header every 0.2 s (for at most TRICKLE_S): the head is never whole,
    and each read is short, so httpx's per-read timeout never fires."""
    timeout = 30
    seen: list[str] = []

    def log_message(self, format, *args):  # quiet
        pass

    def do_GET(self):
        type(self).seen.append(self.path)
        trickle_head(self.wfile, TRICKLE_S)
        self.close_connection = True

    do_POST = do_GET


@pytest.fixture
def slow_head():
    _SlowHead.seen = []
    with serving(_SlowHead) as url:
        yield url


def test_a_trickled_head_ends_the_attempt_at_the_client_timeout(slow_head):
    started = time.monotonic()
    with AdminClient(slow_head, admin_token="admin-token-0123456789", timeout=1.0, retry_window=0) as client:
        with pytest.raises(ServiceUnavailableError) as error:
            client.campaigns()
    message = str(error.value)
    assert "ReadTimeout" in message and "was not whole 1 s after the request was sent" in message, message
    assert "its head not yet whole" in message
    assert time.monotonic() - started < TRICKLE_S  # not held until the server closes
    assert _SlowHead.seen == ["/api/campaigns"]


def test_a_request_after_a_deadline_is_bounded_afresh(slow_head, odd):
    """The deadline is the calling thread's for one request: a later request on the same client has its own."""
    import httpx

    with httpx.Client() as http:
        with pytest.raises(httpx.ReadTimeout):
            _deadline.request_within(http, "GET", slow_head + "/x", 0.5)
        assert _deadline.request_within(http, "GET", odd + "/api/campaigns", 5.0).json() == {"campaigns": []}


class _Deep(BaseHTTPRequestHandler):
    """Answers every request 200 with JSON nested 100,000 deep."""
    timeout = 30
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # quiet
        pass

    def do_GET(self):
        body = b'{"campaigns": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_PUT = do_GET


def test_json_nested_too_deeply_is_an_unexpected_answer_not_a_recursion_error():
    with serving(_Deep) as url, AdminClient(url, admin_token="admin-token-0123456789", retry_window=0) as client:
        with pytest.raises(ServiceRefusedError) as error:
            client.campaigns()
    assert error.value.code == "unexpected_answer" and "nested too deeply" in str(error.value), str(error.value)


def test_an_acknowledgement_nested_too_deeply_is_not_one_and_not_a_recursion_error():
    with serving(_Deep) as url, Client(url, retry_window=0) as client:
        with pytest.raises(ServiceUnavailableError) as error:
            client.submit_body("c", "b1", b"the batch's bytes")
    assert "not JSON" in str(error.value) and "RecursionError" not in str(error.value), str(error.value)


def test_a_deadline_set_inside_another_gives_the_outer_one_back():
    from dpdist._http import _bounded_reads

    with _bounded_reads.reads_within(5.0):
        with _bounded_reads.reads_within(1.0):
            assert _bounded_reads._DEADLINE.seconds == 1.0
        assert _bounded_reads._DEADLINE.seconds == 5.0
    assert _bounded_reads._DEADLINE.seconds is None


def _gzip_answer(body: bytes, status: int = 200):
    """A transport answering every request ``status`` with ``body`` gzipped, and the requests it got."""
    import httpx

    wire, asked = gzip.compress(body, 1, mtime=0), []

    def answer(request):
        asked.append(request.url.path)
        return httpx.Response(status, content=wire, headers={"Content-Encoding": "gzip",
                                                             "Content-Type": "application/json"})
    return httpx.MockTransport(answer), asked


def test_an_answer_of_more_values_than_its_bytes_should_hold_is_refused_before_it_is_parsed():
    """Legal JSON of empty containers costs ~37 bytes held per byte parsed (48 MiB: 1.8 GB)."""
    import tracemalloc

    transport, asked = _gzip_answer(b'{"campaigns": [' + b"{}," * (1 << 20) + b"{}]}")  # 3 MiB, 2^20 + 2 containers
    with AdminClient("http://h", admin_token="admin-token-0123456789", transport=transport, retries=3) as client:
        tracemalloc.start()
        try:
            with pytest.raises(ServiceRefusedError) as error:
                client.campaigns()
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    message = str(error.value)
    assert error.value.code == "unexpected_answer" and "\n" not in message, message
    assert "JSON of more than 1,048,576 arrays and objects" in message, message
    assert peak < 24 << 20, peak  # the body and its pieces; parsed, the containers alone held ~115 MB
    assert asked == ["/api/campaigns"]


@pytest.mark.parametrize("call, limit", [
    (lambda client: client.submit_body("c", "b1", b"the batch's bytes"), "1 MiB"),  # an acknowledgement
    (lambda client: client.config("c"), "4 MiB"),
])
def test_a_device_reads_an_acknowledgement_or_a_config_within_its_own_smaller_bound(call, limit):
    transport, asked = _gzip_answer(b" " * (21 << 20))
    with Client("http://h", submit_token="submit-token-0123456789", transport=transport, retries=3) as client:
        with pytest.raises(ServiceRefusedError) as error:
            call(client)
    assert error.value.code == "answer_too_large", str(error.value)
    assert f"more than {limit} once decoded" in str(error.value) and len(asked) == 1


def test_a_refusal_is_read_up_to_an_acknowledgement_s_bound_whatever_the_call():
    """A refusal's message shows 2,000 characters of it: a 128 MiB one was parsed whole (2.24 GB)."""
    transport, asked = _gzip_answer(b'{"error": "bad", "detail": "' + b"x" * (2 << 20) + b'"}', status=400)
    with AdminClient("http://h", admin_token="admin-token-0123456789", transport=transport, retries=3) as client:
        with pytest.raises(ServiceRefusedError) as error:
            client.campaigns()
    assert error.value.code == "answer_too_large" and "HTTP 400" in str(error.value)
    assert "more than 1 MiB once decoded" in str(error.value) and asked == ["/api/campaigns"]


def test_a_page_full_of_brackets_is_refused_as_not_json_not_as_too_many_values():
    transport, _ = _gzip_answer(b"<html>" + b"[{" * (1 << 20) + b"</html>")
    with AdminClient("http://h", admin_token="admin-token-0123456789", transport=transport, retries=0) as client:
        with pytest.raises(ServiceRefusedError) as error:
            client.campaigns()
    assert error.value.code == "unexpected_answer" and "(not JSON): status 200 from h" in str(error.value)
