"""``dpdist._redact``: no URL dpdist prints, logs or raises shows its password (``dpdist relay
--collector http://user:pw@h`` printed it at start, ``dpdist submit --server http://user:pw@h`` in its error line)."""

from __future__ import annotations

import logging

import pytest

from cli_support import run
from dpdist._redact import redacted_url, url_secrets
from dpdist._shown import masked
from dpdist.errors import InvalidParameterError


@pytest.mark.parametrize("url, shown", [
    ("http://user:PWORD@h:1/x", "http://user:***@h:1/x"),
    ("postgresql://user:p@ss:w@db.example:5432/dpdist", "postgresql://user:***@db.example:5432/dpdist"),
    ("https://h.example/path@x", "https://h.example/path@x"),
    ("http://user@h:1", "http://user@h:1"),
    ("sqlite:///campaigns.sqlite", "sqlite:///campaigns.sqlite"),
    ("campaigns.sqlite", "campaigns.sqlite"),
    # a password typed with "/", with a space, a user name with "@" (each leaked whole)
    ("http://u:SECRET/x@127.0.0.1:1", "http://u:***@127.0.0.1:1"),
    ("http://u:SECRET x@127.0.0.1:1/p", "http://u:***@127.0.0.1:1/p"),
    ("http://us@er:SECRET@127.0.0.1:1", "http://us@er:***@127.0.0.1:1"),
    ("HTTP://u:SECRET@[::1]:1", "HTTP://u:***@[::1]:1"),
    ("http://h:5432/db", "http://h:5432/db"),
    # a scheme-relative reference (a redirect's Location), an empty host before the userinfo
    ("//u:SECRET@h.example/x", "//u:***@h.example/x"),
    ("http:///alice:SECRET@127.0.0.1:1", "http:///alice:***@127.0.0.1:1"),
    ("http://h.example//a/b", "http://h.example//a/b"),
    # the ":" percent-encoded, the "@" (or ":") typed fullwidth (NFKC reads them as ASCII)
    ("http://u%3AS3CRETc@127.0.0.1:9200", "http://u%3A***@127.0.0.1:9200"),
    ("postgresql://u%3aDBPW10@127.0.0.1:1/d", "postgresql://u%3a***@127.0.0.1:1/d"),
    ("http://u:S3CRETe\uff20127.0.0.1:9200", "http://u:***\uff20127.0.0.1:9200"),
    ("postgresql://u\uff1aDBPW18\ufe6b127.0.0.1:1/d", "postgresql://u\uff1a***\ufe6b127.0.0.1:1/d"),
    # a URL without its slashes; libpq's key=value string
    ("postgresql:alice:S3cretPW@127.0.0.1", "postgresql:alice:***@127.0.0.1"),
    ("host=127.0.0.1 user=alice password = 'S3cret PW' port=1", "host=127.0.0.1 user=alice password = '***' port=1"),
    ("http://h.example/a%3Ab@c", "http://h.example/a%3Ab@c"),
])
def test_a_url_is_shown_without_its_password_only(url, shown):
    assert redacted_url(url) == shown
    assert masked(f"GET {url} failed; is it at {url}?", url_secrets(url)) == f"GET {shown} failed; is it at {shown}?"


def test_the_relay_refuses_a_collector_with_a_password_in_one_line_that_masks_it(tmp_path, monkeypatch, capsys):
    """httpx would send ``user:password@`` as Basic auth in place of the relay's token: refused, masked."""
    uvicorn = pytest.importorskip("uvicorn")
    pytest.importorskip("pyhpke")
    monkeypatch.setenv("DPDIST_RELAY_TOKEN", "relay-token-0123456789")
    monkeypatch.setattr(uvicorn, "run", lambda *args, **kwargs: None)  # the start line, not the server
    status, _, err = run(capsys, "relay", "--queue", tmp_path / "q.sqlite", "--collector", "http://user:URLPASSWORD@h:1")
    assert status == 2 and "'--collector' option" in err and "user:***@h:1" in err and "URLPASSWORD" not in err
    assert "authenticates with its token" in err and err.count("\n") == 1


def test_submit_the_client_and_the_issuer_refuse_a_url_with_a_password_masked(tmp_path, monkeypatch, capsys):
    """dpdist sends its own token to the server and to the issuer: a ``user:password@`` would replace it."""
    pytest.importorskip("httpx")
    from dpdist.client import Client
    from serve_support import free_port

    server = f"http://user:PASSW0RDSECRET@127.0.0.1:{free_port()}"
    (tmp_path / "d.csv").write_text("x\n1\n2\n")
    status, _, err = run(capsys, "submit", "--server", server, "--campaign", "c", "--column", "x", tmp_path / "d.csv",
                         "--retries", "0")
    assert status == 2 and "PASSW0RDSECRET" not in err and "'--server' option" in err and "user:***@127.0.0.1:" in err
    status, _, err = run(capsys, "submit", "--server", "http://127.0.0.1:1", "--campaign", "c", "--column", "x",
                         tmp_path / "d.csv", "--issuer", server, "--issuer-credential", "cred", "--retries", "0")
    assert status == 2 and "PASSW0RDSECRET" not in err and "'--issuer' option" in err and "Basic" in err
    monkeypatch.setenv("DPDIST_ISSUER_ADMIN_TOKEN", "issuer-admin-0123456789")
    status, _, err = run(capsys, "issuer", "status", "--issuer", server)
    assert status == 2 and "PASSW0RDSECRET" not in err and "'--issuer' option" in err
    with pytest.raises(InvalidParameterError, match="'server' parameter of Client.*authenticates with its token") as refused:
        Client(server, retries=0)
    assert "PASSW0RDSECRET" not in str(refused.value) and "user:***@" in str(refused.value)
    with Client("http://127.0.0.1:1", ohttp_relay=server, retries=0):  # an OHTTP relay gets no token of dpdist: taken
        pass


def test_a_refused_url_argument_is_shown_without_its_password(tmp_path):
    pytest.importorskip("starlette")
    from dpdist.relay import create_app

    with pytest.raises(InvalidParameterError, match="collector") as refused:
        create_app(str(tmp_path / "q.sqlite"), collector="ftp://user:SECRETPW@h", relay_token="relay-token-0123456789")
    assert "SECRETPW" not in str(refused.value) and "'ftp://user:***@h'" in str(refused.value)


def test_a_driver_s_quote_of_the_password_is_masked():
    """Dask quotes a scheduler address without its scheme (``invalid address 'u:SECRET@127.0.0.1:1'``); PostgreSQL's
    driver quotes the password it could not read (``invalid percent-encoded token: "p%zzSECRET"``)."""
    assert masked("invalid address 'u:SECRET@127.0.0.1:1'", url_secrets("tcp://u:SECRET@127.0.0.1:1")) == (
        "invalid address 'u:***@127.0.0.1:1'")
    url = "postgresql://u:p%zzSECRET@127.0.0.1:1/db"
    assert masked('invalid percent-encoded token: "p%zzSECRET"', url_secrets(url)) == 'invalid percent-encoded token: "***"'
    assert masked('bad "p ss"', url_secrets("postgresql://u:p ss@h/db")) == 'bad "***"'


def test_a_url_whose_port_is_unreadable_is_refused_by_name_without_its_password(tmp_path, capsys):
    pytest.importorskip("httpx")
    from dpdist.client import Client

    with pytest.raises(InvalidParameterError, match="'server' parameter of Client") as refused:
        Client("http://u:SECRET/x@127.0.0.1:1")
    assert "SECRET" not in str(refused.value)
    (tmp_path / "d.csv").write_text("x\n1\n")
    status, _, err = run(capsys, "submit", "--server", "http://u:SECRET/x@127.0.0.1:1", "--campaign", "c", "--column",
                         "x", tmp_path / "d.csv", "--retries", "0")
    assert status == 2 and "SECRET" not in err and "internal error" not in err and "--server" in err


def test_httpx_logs_a_request_without_the_password_of_its_url(caplog):
    """httpx logs every request's URL at INFO; an application that turns INFO on must not see the password there."""
    import httpx

    import dpdist._redact  # noqa: F401  # puts the filter on httpx's logger

    with caplog.at_level(logging.INFO, logger="httpx"):
        with httpx.Client(transport=httpx.MockTransport(lambda request: httpx.Response(200))) as client:
            client.get("http://user:s3cret-pw@collector.example/v1/campaigns")
    logged = [record.getMessage() for record in caplog.records if record.name == "httpx"]
    assert logged and all("s3cret-pw" not in line for line in logged)
    assert any("http://user:***@collector.example/v1/campaigns" in line for line in logged)


def test_dpdist_serve_never_shows_a_password_of_the_db_url(capsys):
    """The banner and the '--db' error line, whatever the driver repeats of the password (a query's, one holding an
    ``@`` a driver reads a host after, one holding a space, a long one)."""
    pytest.importorskip("psycopg")
    pytest.importorskip("starlette")
    for url in ("postgresql://alice@127.0.0.1:1/d?password=Q2s%40ecret&sslpassword=Q3secret&connect_timeout=2",
                "postgresql://u:p@DBPW3@127.0.0.1:1/d", "postgresql://dp@127.0.0.1:1/d?password=pa%20ss/w@rd:SEKRET",
                "postgresql://dp@127.0.0.1:1/db?password=hunter2 SECRETTAIL",
                'postgresql://dp@127.0.0.1:1/db?pass%77ord="q rSECRET"', "mysql://dp:" + "k" * 180 + "SEKRETzz@127.0.0.1:1/db"):
        status, out, err = run(capsys, "serve", "--db", url, "--admin-token", "admin-token-0123456789")
        assert status == 2 and err.count("\n") == 1 and "'--db' option" in err, err
        for secret in url_secrets(url):
            assert len(secret) < 4 or secret not in err + out, (secret, err)


@pytest.mark.parametrize("url, shown", [
    # a password parameter holding an "@" after a port, a percent-encoded name or "=" (libpq decodes them)
    ("postgresql://dp@db.example:5432/app?sslmode=require&password=p@SEKRET",
     "postgresql://dp@db.example:5432/app?sslmode=require&password=***"),
    ("postgresql://dp@h:5432/db?pass%77ord=p@SEKRET", "postgresql://dp@h:5432/db?pass%77ord=***"),
    ("postgresql://dp@h:5432/db?password%3Dp@SEKRET", "postgresql://dp@h:5432/db?password%3D***"),
    ("postgresql://u:SEKRET@host:5432/db?password=p@xSEKRET", "postgresql://u:***@host:5432/db?password=***"),
    ("postgresql://user@corp.com:SEKRET@host/db", "postgresql://user@corp.com:***@host/db"),
    ("postgresql://dp:my.password=SEKRET@127.0.0.1:1/db?sslpassword='SEKRET'",
     "postgresql://dp:***@127.0.0.1:1/db?sslpassword='***'"),
    ("postgresql://dp@127.0.0.1:5/postgres?password=it's-SEKRET%40x", "postgresql://dp@127.0.0.1:5/postgres?password=***"),
    ("postgresql://dp@127.0.0.1:1/db?password=hunter2 SEKRET&x=1", "postgresql://dp@127.0.0.1:1/db?password=***&x=1"),
])
def test_a_password_parameter_is_masked_whole(url, shown):
    assert redacted_url(url) == shown and "SEKRET" not in redacted_url(url)
