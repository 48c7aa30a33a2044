"""The access line of ``dpdist serve`` (``dpdist.serve._access``): one line whatever the request's path (attack 67,
F11): the method and path are written as routed, percent-encoded again, never raw - an anonymous
``GET /x%0aINFO: ...`` wrote a second, forged line, and ``/LOGSECRET5%1b%5b2J`` a raw ``ESC[2J`` that cleared the
terminal of an operator tailing the log."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")

from dpdist.serve._access import access_line  # noqa: E402
from dpdist.serve._logs import INNER, Inner  # noqa: E402
from serve_support import FORGED_PATH, HOSTILE_PATHS, assert_one_line, http_scope  # noqa: E402




@pytest.mark.parametrize("mode", ["anonymous", "full"])
@pytest.mark.parametrize("path", HOSTILE_PATHS)
def test_an_access_line_is_one_printable_line_whatever_the_path(path, mode, caplog):
    with caplog.at_level("INFO", logger="uvicorn.access"):
        access_line(http_scope(path), 404, mode)
    (record,) = [record for record in caplog.records if record.name == "uvicorn.access"]
    line = record.getMessage()
    assert_one_line(line)
    assert line.count('"') == 2 and line.endswith('HTTP/1.1" 404'), line  # the request's quotes are its own
    if path == FORGED_PATH:
        assert '"GET /x%0AINFO%3A%20%20%20%20%20-%20-%20%22PUT%20/api/campaigns/c2/batches/-%20HTTP/1.1%22%20200%20OK' in line


def test_a_gateway_requests_line_names_its_inner_path_escaped(caplog):
    scope = http_scope("/ohttp", "POST") | {INNER: Inner("GET", "/LOGSECRET5\x1b[2J\n", "unmatched", 404)}
    with caplog.at_level("INFO", logger="uvicorn.access"):
        access_line(scope, 200, "full")
    (line,) = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    assert_one_line(line)
    assert "/LOGSECRET5%1B%5B2J%0A" in line


#: attack116 F4: a requester's own path holding a credential (a token, a Bearer credential, a URL's password, an
#: Authorization value), written masked as any text dpdist shows, then percent-encoded
CREDENTIAL_PATHS = {
    "/api/campaigns/c/token=LOGSECRET6": "/api/campaigns/c/token%3D***",
    "/x/Bearer LOGSECRET7": "/x/Bearer%20***",
    "//user:LOGSECRET8@host/x": "//user%3A***%40host/x",
    "/x/Authorization: LOGSECRET9": "/x/Authorization%3A%20***",
    # attack117 F3: any scheme's credential masked, its scheme kept; F6: a path percent-encoded twice (the server decoded
    # it once): what the fully decoded path holds is masked, and that form is written
    "/x/Authorization: NTLM abcLOGSECRET10": "/x/Authorization%3A%20NTLM%20***",
    "/x/token%3DLOGSECRET11": "/x/token%3D***",
    "/x/Bearer%20LOGSECRET12": "/x/Bearer%20***",
    "/x/http%3A%2F%2Fuser%3ALOGSECRET13%40h/": "/x/http%3A//user%3A***%40h/",
    "/x/token%253DLOGSECRET14": "/x/token%3D***",
    "/x/ok%41/token=LOGSECRET15": "/x/okA/token%3D***",
    # attack118: a Token header after an RLO (sent as %E2%80%AEToken%3A%20...), a camelCase token name, a token's value
    # led by a <
    "/x/\u202eToken: LOGSECRET16": "/x/%E2%80%AEToken%3A%20***",
    "/x/submitToken: LOGSECRET17": "/x/submitToken%3A%20***",
    "/x/token=<LOGSECRET18>": "/x/token%3D***",
}


def test_an_access_line_keeps_a_path_encoded_twice_that_holds_no_credential(caplog):
    # attack117 F6: only a path whose decoded form holds a credential is written decoded
    with caplog.at_level("INFO", logger="uvicorn.access"):
        access_line(http_scope("/x/a%2541b"), 404, "full")
    (line,) = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    assert ' /x/a%252541b HTTP/1.1" 404' in line, line


@pytest.mark.parametrize("mode", ["anonymous", "full"])
@pytest.mark.parametrize("path", list(CREDENTIAL_PATHS))
def test_an_access_line_masks_a_credential_in_the_path(path, mode, caplog):
    with caplog.at_level("INFO", logger="uvicorn.access"):
        access_line(http_scope(path), 404, mode)
    (line,) = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    assert_one_line(line)
    assert "LOGSECRET" not in line and f' {CREDENTIAL_PATHS[path]} HTTP/1.1" 404' in line, line


@pytest.mark.parametrize("path", list(CREDENTIAL_PATHS))
def test_a_json_access_line_masks_a_credential_in_the_path(path, caplog):
    import time

    from dpdist.serve._logs import AccessLog

    with caplog.at_level("INFO", logger="dpdist.serve.access"):
        AccessLog.write(http_scope(path), "unmatched", 404, time.perf_counter(), full=True)
    (record,) = [record for record in caplog.records if record.name == "dpdist.serve.access"]
    assert record.path == CREDENTIAL_PATHS[path] and "LOGSECRET" not in record.getMessage()


#: attack120 F1: a client host that a trusted proxy's X-Forwarded-For gave (any text its requester sent): credentials,
#: a quote and a tab (fields of its own), NEL (a second line to Python's splitlines), escape sequences
FORWARDED_HOSTS = [
    "password=LOGSECRET20 Bearer LOGSECRET21",
    '1.2.3.4" 200 OK\tFAKE',
    '1.2.3.4\x85INFO:     1.2.3.4:0 - "GET /forged HTTP/1.1" 200 OK',
    "1.2.3.4\x1b[1A\x1b[2K\x1b]0;pwned\x07",
]


@pytest.mark.parametrize("host", FORWARDED_HOSTS)
def test_a_forwarded_client_that_is_no_address_is_written_masked_and_encoded(host, caplog):
    import time

    from dpdist.serve._logs import AccessLog

    scope = http_scope("/healthz") | {"client": (host, 0)}
    with caplog.at_level("INFO", logger="uvicorn.access"), caplog.at_level("INFO", logger="dpdist.serve.access"):
        access_line(scope, 200, "full")
        AccessLog.write(scope, "/healthz", 200, time.perf_counter(), full=True)
    (line,) = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    (record,) = [record for record in caplog.records if record.name == "dpdist.serve.access"]
    assert_one_line(line)
    assert_one_line(record.client)
    assert line.count('"') == 2 and line.startswith(record.client + " - "), line
    for written in (line, record.client):
        assert "LOGSECRET" not in written and "\t" not in written and " " not in written.split(" - ")[0], written
    if host.startswith("password"):
        assert record.client == "password%3D***%20Bearer%20***:0"


@pytest.mark.parametrize("client", [("127.0.0.1", 5555), ("2001:db8::1", 443), ("::ffff:10.0.0.1", 0)])
def test_a_client_address_is_written_as_it_is(client, caplog):
    with caplog.at_level("INFO", logger="uvicorn.access"):
        access_line(http_scope("/healthz") | {"client": client}, 200, "full")
    (line,) = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    assert line.startswith(f"{client[0]}:{client[1]} - "), line


def test_an_anonymous_line_leaves_out_a_relayed_batchs_id(caplog):
    # attack120 F5: the relay's batch id was written in full; anonymous lines name no batch id, direct or relayed
    with caplog.at_level("INFO", logger="uvicorn.access"):
        access_line(http_scope("/api/campaigns/c/relayed/80c0ffee80c0ffee", "PUT"), 200, "anonymous")
        access_line(http_scope("/api/campaigns/c/relayed/80c0ffee80c0ffee", "PUT"), 200, "full")
    anonymous, full = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    assert '"PUT /api/campaigns/c/relayed/- HTTP/1.1" 200' in anonymous and "80c0ffee" not in anonymous
    assert "/api/campaigns/c/relayed/80c0ffee80c0ffee" in full


@pytest.mark.parametrize("mode", ["anonymous", "full"])
def test_the_credential_a_request_carried_is_masked_in_its_path(mode, caplog):
    # attack120 F5: GET /x/<the admin token> with that token in its Authorization header wrote the token
    scope = http_scope("/x/LOGSECRET22adminToken/y") | {"headers": [(b"authorization", b"Bearer LOGSECRET22adminToken")]}
    with caplog.at_level("INFO", logger="uvicorn.access"):
        access_line(scope, 404, mode)
    (line,) = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    assert "LOGSECRET" not in line and ' /x/***/y HTTP/1.1" 404' in line, line


def test_the_requests_own_credential_and_a_userinfo_are_masked_in_a_forwarded_client(caplog):
    # attack121 F3: X-Forwarded-For repeating the request's own Bearer credential, or holding user:password@ before an
    # address, was written as sent
    own = http_scope("/x") | {"client": ("admintoken-abcdef-123456", 0),
                             "headers": [(b"authorization", b"Bearer admintoken-abcdef-123456")]}
    userinfo = http_scope("/x") | {"client": ("user:SECRETPW@10.0.0.1", 0)}
    with caplog.at_level("INFO", logger="uvicorn.access"):
        access_line(own, 404, "full")
        access_line(userinfo, 404, "full")
    lines = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    assert lines[0].startswith("***:0 - ") and lines[1].startswith("***%4010.0.0.1:0 - "), lines


def test_a_gateway_lines_inner_credential_is_masked_in_its_path(caplog):
    # attack121 F2: the inner request's own credential (Inner.secrets), as a direct request's
    path = "/api/campaigns/mysecrettoken99/config"
    scope = http_scope("/ohttp", "POST") | {INNER: Inner("GET", path, "unmatched", 404, ("mysecrettoken99",))}
    with caplog.at_level("INFO", logger="uvicorn.access"):
        access_line(scope, 200, "anonymous")
    (line,) = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    assert '"GET /api/campaigns/***/config HTTP/1.1" 404' in line and "mysecret" not in line, line


def test_the_credential_a_request_carried_is_masked_in_its_method(caplog):
    # attack122 F2: h11 takes any token as a method, so "AdminTok3n... /x HTTP/1.1" wrote the request's credential
    import time

    from dpdist.serve._logs import AccessLog

    secret = "AdminTok3nSecretXYZ123456"
    scope = http_scope("/x", secret) | {"headers": [(b"authorization", f"Bearer {secret}".encode())]}
    with caplog.at_level("INFO", logger="uvicorn.access"), caplog.at_level("INFO", logger="dpdist.serve.access"):
        access_line(scope, 404, "anonymous")
        AccessLog.write(scope, "unmatched", 404, time.perf_counter())
    (line,) = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    (record,) = [record for record in caplog.records if record.name == "dpdist.serve.access"]
    assert '"*** /x HTTP/1.1" 404' in line and record.method == "***" and secret not in record.getMessage(), line


def test_a_non_ascii_credential_a_request_carried_is_masked_in_its_path(caplog):
    # attack123 F3: the header's UTF-8 bytes were read as Latin-1, so the token repeated in the (UTF-8 decoded) path
    # was written percent-encoded
    token = "p\u00e4ssw\u00f6rd-T\u00f8ken1"
    scope = http_scope(f"/x/{token}") | {"headers": [(b"authorization", b"Bearer " + token.encode())]}
    with caplog.at_level("INFO", logger="uvicorn.access"):
        access_line(scope, 404, "anonymous")
    (line,) = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    assert ' /x/*** HTTP/1.1" 404' in line, line
