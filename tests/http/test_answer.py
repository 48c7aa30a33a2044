"""A 2xx answer that is not what a dpdist service answers is refused in one line.

A stub on 127.0.0.1 answers ``200 {"campaign": "c"}`` (or a page) to everything: ``dpdist campaign list`` ended in
"internal error KeyError: 'campaigns' (a bug of dpdist ...)", ``Client.campaigns()`` raised KeyError.
"""

from __future__ import annotations

import http.server
import json

import pytest

from cli_support import run
from ops_support import serving
from dpdist.errors import ServiceRefusedError

httpx = pytest.importorskip("httpx")

ADMIN = "admin-token-0123456789"


class _Answering(http.server.BaseHTTPRequestHandler):
    body = b'{"campaign": "c"}'
    kind = "application/json"

    def _answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.send_response(200)
        self.send_header("Content-Type", self.kind)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    do_GET = do_POST = do_PUT = do_DELETE = _answer

    def log_message(self, *args) -> None:  # quiet
        pass


class _Page(_Answering):
    body = b"<html><body>Log in: http://u:S3cretPW@portal.example/</body></html>"
    kind = "text/html; charset=utf-8"



@pytest.fixture
def stub():
    with serving(_Answering) as url:
        yield url


@pytest.fixture
def page():
    with serving(_Page) as url:
        yield url


def test_the_client_refuses_an_answer_without_what_it_reads(stub, page):
    from dpdist.client import AdminClient, issuer_of

    for server, said in ((stub, "no 'campaigns'"), (page, "not JSON")):
        with AdminClient(server, admin_token=ADMIN, retries=0) as client:
            with pytest.raises(ServiceRefusedError) as refused:
                client.campaigns()
        message = str(refused.value)
        assert refused.value.code == "unexpected_answer" and refused.value.status == 200
        host = server.removeprefix("http://")
        assert (f"The answer to GET {server}/api/campaigns is not what a dpdist service answers ({said}): status 200 "
                f"from {host} (not a dpdist answer, ") in message
        assert "S3cretPW" not in message
    with pytest.raises(ServiceRefusedError, match="not what a dpdist issuer answers .*no 'token_key'"):
        issuer_of(stub, "k1")


@pytest.mark.parametrize("argv", [
    ["campaign", "list", "--server", "{url}", "--retries", "0"],
    ["campaign", "show", "c", "--server", "{url}", "--retries", "0"],
    ["issuer", "status", "--issuer", "{url}"],
])
def test_a_command_answered_by_another_server_says_so_in_one_line(page, stub, monkeypatch, capsys, argv):
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("DPDIST_ISSUER_ADMIN_TOKEN", ADMIN)
    for url in (stub, page) if argv[0] == "campaign" else (page,):
        status, out, err = run(capsys, *[word.format(url=url) for word in argv])
        assert status != 0 and out == "" and err.count("\n") == 1, err
        assert "is not what a dpdist" in err and "internal error" not in err and "S3cretPW" not in err, err


def test_a_document_of_the_keys_read_is_returned_as_is():
    from dpdist._http._answer import answer_document

    answer = httpx.Response(200, json={"campaigns": []})
    assert answer_document("GET", "http://h/api/campaigns", answer, ("campaigns",)) == {"campaigns": []}
    answer = httpx.Response(200, json=[1, 2], request=httpx.Request("GET", "http://h/x"))
    with pytest.raises(ServiceRefusedError, match=r"not a JSON object\): status 200 from h \(not a dpdist answer, 5 bytes\)"):
        answer_document("GET", "http://h/x", answer)


def test_what_another_server_answered_is_said_by_its_status_host_and_size_only():
    from dpdist._http._answer import answer_document

    page = httpx.Response(200, content=b"<p>token=ABCDEFG\tHIJ\n  x</p>", headers={"Content-Type": "text/html"},
                          request=httpx.Request("GET", "http://h:8080/x"))
    with pytest.raises(ServiceRefusedError) as refused:
        answer_document("GET", "http://h:8080/x", page, ("campaigns",))
    assert "(not JSON): status 200 from h:8080 (not a dpdist answer, 28 bytes)." in str(refused.value)
    assert "token" not in str(refused.value) and "<p>" not in str(refused.value)


class _Foreign(_Answering):
    """An echo server's object: JSON, but none of what any dpdist route answers."""
    body = b'{"x": 1, "campaigns": "x", "credentials": [1, 2], "headers": {}}'


@pytest.fixture
def foreign():
    with serving(_Foreign) as url:
        yield url


@pytest.mark.parametrize("argv", [
    ["campaign", "list", "--server", "{url}", "--retries", "0"],
    ["campaign", "estimate", "c", "--server", "{url}", "--retries", "0"],
    ["campaign", "estimate", "c", "--json", "--server", "{url}", "--retries", "0"],
    ["campaign", "open", "c", "--server", "{url}", "--retries", "0"],
    ["campaign", "close", "c", "--server", "{url}", "--retries", "0"],
    ["campaign", "delete", "c", "--yes", "--server", "{url}", "--retries", "0"],
    ["issuer", "key", "k1", "--issuer", "{url}"],
    ["issuer", "status", "--issuer", "{url}"],
    ["issuer", "credentials", "k1", "--count", "1", "--issuer", "{url}"],
])
def test_a_json_object_without_what_the_command_reads_is_refused_in_one_line(foreign, monkeypatch, capsys, argv):
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN)
    monkeypatch.setenv("DPDIST_ISSUER_ADMIN_TOKEN", ADMIN)
    status, out, err = run(capsys, *[word.format(url=foreign) for word in argv])
    assert status != 0 and out == "" and err.count("\n") == 1, (out, err)
    assert "is not what a dpdist" in err and "internal error" not in err, err


@pytest.mark.parametrize("document, keys, why", [
    ({"campaigns": "x"}, {"campaigns": [dict]}, "['campaigns'] is a string, not a JSON array"),
    ({"campaigns": [1]}, {"campaigns": [{"campaign": str}]}, "['campaigns'][0] is an integer, not a JSON object"),
    ({"campaigns": [{}]}, {"campaigns": [{"campaign": str}]}, "no 'campaign' in ['campaigns'][0]"),
    ({"n": True}, {"n": int}, "['n'] is true or false, not an integer"),
    ({"estimate": 3}, {"estimate": (dict, type(None))}, "['estimate'] is an integer, not a JSON object"),
    ({"tokens": ["a", None]}, {"tokens": [str]}, "['tokens'][1] is null, not a string"),
])
def test_the_types_of_what_the_caller_reads_are_checked(document, keys, why):
    from dpdist._http._answer import answer_document

    with pytest.raises(ServiceRefusedError) as error:
        answer_document("GET", "http://h/x", httpx.Response(200, json=document), keys)
    assert why in str(error.value) and error.value.code == "unexpected_answer"
    good = {"campaigns": [{"campaign": "c"}], "n": 2, "estimate": None, "tokens": ["a"], "epsilon": 1}
    assert answer_document("GET", "http://h/x", httpx.Response(200, json=good), {**keys, "epsilon": float}) == good


#: what a hostile server puts in every field a command prints: retitle, clear, red, right-to-left
_EVIL = "\u001b]0;PWNED\u0007\u001b[2J\u001b[31m\u202e"


class _Evil(_Answering):
    body = json.dumps({
        "campaigns": [{"campaign": "cx" + _EVIL, "state": "open" + _EVIL, "n": 1, "batches": 1,
                       "config": {"protocol": "grr" + _EVIL}}],
        "campaign": "cx" + _EVIL, "state": "open" + _EVIL, "n": 1, "batches": 1, "protocol": "grr" + _EVIL,
        "epsilon": 2.0, "rejected": {"bad" + _EVIL: 1}, "estimate": None, "guarantee": "g" + _EVIL}).encode()


@pytest.mark.parametrize("argv", [["campaign", "list"], ["campaign", "estimate", "cx"]])
def test_what_a_server_says_is_printed_escaped(monkeypatch, capsys, argv):
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN)
    with serving(_Evil) as url:
        status, out, err = run(capsys, *argv, "--server", url, "--retries", "0")
    assert status == 0, err
    assert not any(character in out for character in "\u001b\u0007\u202e"), out
    assert "cx\\x1b]0;PWNED\\x07" in out
