"""``dpdist._redact``: no URL dpdist prints, logs or raises shows its password (the outsider's finding: ``dpdist relay
--collector http://user:pw@h`` printed it at start, ``dpdist submit --server http://user:pw@h`` in its error line)."""

from __future__ import annotations

import logging

import pytest

from cli_support import run
from dpdist._redact import redacted_repr, redacted_text, redacted_url, without_password
from dpdist.errors import InvalidParameterError


@pytest.mark.parametrize("url, shown", [
    ("http://user:PW@h:1/x", "http://user:***@h:1/x"),
    ("postgresql://user:p@ss:w@db.example:5432/dpdist", "postgresql://user:***@db.example:5432/dpdist"),
    ("https://h.example/path@x", "https://h.example/path@x"),
    ("http://user@h:1", "http://user@h:1"),
    ("sqlite:///campaigns.sqlite", "sqlite:///campaigns.sqlite"),
    ("campaigns.sqlite", "campaigns.sqlite"),
    # a second outsider's: a password typed with "/", with a space, a user name with "@" (each leaked whole)
    ("http://u:SECRET/x@127.0.0.1:1", "http://u:***@127.0.0.1:1"),
    ("http://u:SECRET x@127.0.0.1:1/p", "http://u:***@127.0.0.1:1/p"),
    ("http://us@er:SECRET@127.0.0.1:1", "http://us@er:***@127.0.0.1:1"),
    ("HTTP://u:SECRET@[::1]:1", "HTTP://u:***@[::1]:1"),
    ("http://h:5432/db", "http://h:5432/db"),
    # attack65 F1/F7: a scheme-relative reference (a redirect's Location), an empty host before the userinfo
    ("//u:SECRET@h.example/x", "//u:***@h.example/x"),
    ("http:///alice:SECRET@127.0.0.1:1", "http:///alice:***@127.0.0.1:1"),
    ("http://h.example//a/b", "http://h.example//a/b"),
    # attack67 F9/F15: the ":" percent-encoded, the "@" (or ":") typed fullwidth (NFKC reads them as ASCII)
    ("http://u%3AS3CRETc@127.0.0.1:9200", "http://u%3A***@127.0.0.1:9200"),
    ("postgresql://u%3aDBPW10@127.0.0.1:1/d", "postgresql://u%3a***@127.0.0.1:1/d"),
    ("http://u:S3CRETe\uff20127.0.0.1:9200", "http://u:***@127.0.0.1:9200"),
    ("postgresql://u\uff1aDBPW18\ufe6b127.0.0.1:1/d", "postgresql://u:***@127.0.0.1:1/d"),
    ("http://h.example/a%3Ab@c", "http://h.example/a%3Ab@c"),
])
def test_a_url_is_shown_without_its_password_only(url, shown):
    assert redacted_url(url) == shown
    assert redacted_text(f"GET {url} failed; is it at {url}?") == f"GET {shown} failed; is it at {shown}?"


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
    """dpdist sends its own token to the server and to the issuer: a ``user:password@`` would replace it (F6)."""
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


def test_an_address_quoted_without_its_scheme_and_a_driver_s_quote_of_the_password_are_masked():
    """Dask quotes a scheduler address without its scheme (``invalid address 'u:SECRET@127.0.0.1:1'``); PostgreSQL's
    driver quotes the password it could not read (``invalid percent-encoded token: "p%zzSECRET"``)."""
    from dpdist._redact import without_password

    assert redacted_text("invalid address 'u:SECRET@127.0.0.1:1'") == "invalid address 'u:***@127.0.0.1:1'"
    url = "postgresql://u:p%zzSECRET@127.0.0.1:1/db"
    assert without_password('invalid percent-encoded token: "p%zzSECRET"', url) == 'invalid percent-encoded token: "***"'
    assert without_password('bad "p ss"', "postgresql://u:p ss@h/db") == 'bad "***"'


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


@pytest.mark.parametrize("text, shown", [
    ("postgresql://alice@127.0.0.1:5432/dpdist?password=S3cret%40PW%3A%2F%23%3F",
     "postgresql://alice@127.0.0.1:5432/dpdist?password=***"),
    ("postgresql:///dpdist?host=127.0.0.1&user=alice&password=S3cretPW&port=1",
     "postgresql:///dpdist?host=127.0.0.1&user=alice&password=***&port=1"),
    ("postgresql://alice:S3cretPW@h:1/d?PASSWORD=Q2secret&sslpassword=Q3secret&sslmode=require",
     "postgresql://alice:***@h:1/d?PASSWORD=***&sslpassword=***&sslmode=require"),
    ("host=127.0.0.1 user=alice password=S3cretPW dbname=d", "host=127.0.0.1 user=alice password=*** dbname=d"),
    ("host=h password = 'S3 cret\\'PW' dbname=d", "host=h password = *** dbname=d"),
    ("passwords=3 and no secret", "passwords=3 and no secret"),
    # attack65 F2: libpq decodes a query's names too
    ("postgresql://alice@127.0.0.1:1/d?pass%77ord=S3cretPW&x%41=1", "postgresql://alice@127.0.0.1:1/d?pass%77ord=***&x%41=1"),
    ("postgresql://a@h/d?%70assword=S3cretPW", "postgresql://a@h/d?%70assword=***"),
    ("postgresql://a@h/d?sslmode=require&%73slpassword=S3cretPW", "postgresql://a@h/d?sslmode=require&%73slpassword=***"),
    ("http://h/a%20b=c", "http://h/a%20b=c"),
])
def test_a_password_given_as_a_parameter_is_masked(text, shown):
    """attack64 F2: libpq reads ``password``/``sslpassword`` from a URL's query and from ``key=value`` strings."""
    assert redacted_text(text) == shown and redacted_text(f"GET {text} failed") == f"GET {shown} failed"


def test_dpdist_serve_never_shows_a_password_of_the_db_url_s_query(capsys):
    pytest.importorskip("psycopg")
    pytest.importorskip("starlette")
    from dpdist._redact import without_password

    url = "postgresql://alice@127.0.0.1:1/d?password=Q2s%40ecret&sslpassword=Q3secret&connect_timeout=2"
    status, out, err = run(capsys, "serve", "--db", url, "--admin-token", "admin-token-0123456789")
    assert status == 2 and err.count("\n") == 1 and "'--db' option" in err
    assert "Q2s" not in err + out and "Q3secret" not in err + out and "password=***" in err
    assert without_password("could not use Q2s@ecret", url) == "could not use ***"
    assert without_password("no S3cretPW", "postgresql://a@h/d?pass%77ord=S3cretPW") == "no ***"


@pytest.mark.parametrize("message, url, shown", [
    # attack67 F15: libpq reads the host from the first "@" of a password typed with one, and quotes the rest
    ("failed to resolve host 'DBPW3@127.0.0.1'", "postgresql://u:p@DBPW3@127.0.0.1:1/d", "failed to resolve host '***@127.0.0.1'"),
    ('missing key/value separator "=" in URI query parameter: "password%3DDBPW11"',
     "postgresql://u@127.0.0.1:1/d?password%3DDBPW11", 'missing key/value separator "=" in URI query parameter: "password%3D***"'),
    ('password authentication failed for user "u:DBPW10"', "postgresql://u%3ADBPW10@127.0.0.1:1/d",
     'password authentication failed for user "u:***"'),
])
def test_a_driver_quoting_part_of_a_password_has_it_masked(message, url, shown):
    assert without_password(message, url) == shown


def test_dpdist_serve_never_shows_the_part_of_a_password_after_an_at_sign(capsys):
    pytest.importorskip("psycopg")
    pytest.importorskip("starlette")
    status, out, err = run(capsys, "serve", "--db", "postgresql://u:p@DBPW3@127.0.0.1:1/d", "--admin-token",
                           "admin-token-0123456789")
    assert status == 2 and err.count("\n") == 1 and "'--db' option" in err
    assert "DBPW3" not in err + out, err


@pytest.mark.parametrize("url, shown", [
    # attack114 F1: the user name read up to the port's ":" and the password to the last "@", the parameter's
    ("postgresql://dp@db.example:5432/app?sslmode=require&password=p@SEKRET", "postgresql://dp@db.example:***@password=***"),
    ("postgresql://dp@127.0.0.1:55432/postgres?password=pa%20ss/w@rd:SEKRET", "postgresql://dp@127.0.0.1:***@password=***"),
    ("postgresql://dp@[::1]/db?password=p@SEKRET", "postgresql://dp@[:***@password=***"),
    ("postgresql://dp@h1:5432,h2:5432/db?password=p@SEKRET", "postgresql://dp@h1:***@password=***"),
    ("postgresql://h:5432/db?user=dp&password=p@SEKRET", "postgresql://h:***@password=***"),
    ("postgresql://dp@h:5432/db?sslpassword=k@SEKRET", "postgresql://dp@h:***@sslpassword=***"),
    ("postgresql://dp@h:5432/db?password=k\uff20SEKRET", "postgresql://dp@h:***@password=***"),
    ("postgresql://dp@h:5432/db?pass%77ord=p@SEKRET", "postgresql://dp@h:***@pass%77ord=***"),
    ("postgresql://dp@h:5432/db?password%3Dp@SEKRET", "postgresql://dp@h:***@password%3D***"),
    ("postgresql://u:SEKRET@host:5432/db?password=p@xSEKRET", "postgresql://u:***@password=***"),  # both masked
    ("postgresql://u:SEKRET@host:5432/db", "postgresql://u:***@host:5432/db"),  # as before
    ("postgresql://user@corp.com:SEKRET@host/db", "postgresql://user@corp.com:***@host/db"),
    # attack115 R1: a "password=" in userinfo is the password's, not a parameter; later parameters masked as before
    ("postgresql://dp:my.password=SEKRET@127.0.0.1:1/db?sslpassword='SEKRET'",
     "postgresql://dp:***@127.0.0.1:1/db?sslpassword=***"),
    ("postgresql://dp%3ASEK:RET@127.0.0.1:1/db?password=p@x", "postgresql://dp%3A***@password=***"),
    ("postgresql://127.0.0.1:1/db?password=x@y&password =@SEKRET", "postgresql://127.0.0.1:***@password=***&password =***"),
    # attack115 L1: a quote does not end a query's value
    ("postgresql://dp@127.0.0.1:5/postgres?password=it's-SEKRET%40x", "postgresql://dp@127.0.0.1:5/postgres?password=***"),
    ("postgresql://dp@h/db?pass%77ord=a'SEKRET&x=1", "postgresql://dp@h/db?pass%77ord=***&x=1"),
])
def test_a_query_password_holding_an_at_sign_after_a_port_is_masked_whole(url, shown):
    assert redacted_url(url) == shown and "SEKRET" not in redacted_url(url)


def test_a_long_url_is_masked_before_it_is_cut(capsys):
    """attack115 L2: the '--db' value was cut to 200 characters before its password was masked, so the ``@`` that ends
    a long userinfo's password fell past the cut and the password was shown."""
    pytest.importorskip("starlette")
    status, out, err = run(capsys, "serve", "--db", "mysql://dp:" + "k" * 180 + "SEKRETzz@127.0.0.1:1/db",
                           "--admin-token", "admin-token-0123456789")
    assert status == 2 and "'--db'" in err and "SEKRET" not in err + out, err


def test_dpdist_serve_never_shows_a_query_password_holding_an_at_sign(capsys):
    """attack114 F1: the banner and the '--db' error showed ``rd:SEKRET`` of ``?password=pa%20ss/w@rd:SEKRET``."""
    pytest.importorskip("psycopg")
    pytest.importorskip("starlette")
    status, out, err = run(capsys, "serve", "--db", "postgresql://dp@127.0.0.1:1/d?password=pa%20ss/w@rd:SEKRET",
                           "--admin-token", "admin-token-0123456789")
    assert status == 2 and err.count("\n") == 1 and "'--db' option" in err
    assert "SEKRET" not in err + out, err


#: fix76: texts on which a pattern read its long run again from each of its characters (a time quadratic in the run:
#: "A" * 160_000 took 27 s a pattern, minutes whole); each is masked as it was, in a time linear in the text (no timed
#: assertion: a quadratic pattern takes minutes on these, a hang the runner's and CI's timeouts catch)
HOSTILE = [
    ("A" * 200_000 + "://u:SECRET@h", "A" * 200_000 + "://u:***@h"),
    ("A" * 200_000 + "://u:SEC RET@h/x", "A" * 200_000 + "://u:***@h/x"),
    ("1" * 100_000 + "http://u%3ASECRET@h", "1" * 100_000 + "http://u%3A***@h"),
    ("//u:" * 50_000 + " http://u:SECRET@h", "//u:" * 50_000 + " http://u:***@h"),
    ("http://" * 28_572 + " //u:SECRET@h", "http://" * 28_572 + " //u:***@h"),
    ("//" + "\uff1a" * 200_000, "//" + "\uff1a" * 200_000),
    ("//a" + "\uff1a" * 200_000 + "@b", "//a" + "\uff1a" * 199_999 + ":***@b"),
    ("//a\uff1aSECRET@b" + "\uff1a" * 200_000 + ":c", "//a:***@b" + "\uff1a" * 200_000 + ":c"),
    ("//" + "%3A" * 66_667 + " //u%3ASECRET@h", "//" + "%3A" * 66_667 + " //u%3A***@h"),
    ("http://u:" + " " * 200_000 + "SECRET@h", "http://u:***@h"),
    ("x=" + "%41" * 66_667 + " pass%77ord=SECRET", "x=" + "%41" * 66_667 + " pass%77ord=***"),
]


@pytest.mark.parametrize("text, shown", HOSTILE, ids=[f"hostile{index}" for index in range(len(HOSTILE))])
def test_a_long_hostile_text_is_masked_as_before_in_linear_time(text, shown):
    assert redacted_text(text) == shown
    assert without_password(text, "http://u:SECRET@h") == shown


@pytest.mark.parametrize("url, shown", [
    # attack114/115's URLs, now in a line too (attack116 F1: a line showed "rd:SEKRET" of "?password=p@ssw@rd:SEKRET")
    ("postgresql://dp@127.0.0.1:5432/db?password=p@ssw@rd:SEKRET", "postgresql://dp@127.0.0.1:***@password=***"),
    ("postgresql://dp@db.example:5432/app?sslmode=require&password=p@SEKRET", "postgresql://dp@db.example:***@password=***"),
    ("postgresql://dp@h:5432/db?pass%77ord=p@SEKRET", "postgresql://dp@h:***@pass%77ord=***"),
    ("postgresql://dp@127.0.0.1:5/postgres?password=it's-SEKRET%40x", "postgresql://dp@127.0.0.1:5/postgres?password=***"),
    # attack116 F2: a password typed with a space then a "/", a "#" or a quote in a value, a double-quoted value
    ("postgresql://dp:pa ss/w@rd@SEKRET@host/db", "postgresql://dp:***@host/db"),
    ("postgresql://dp@h/db?password=ab#SEKRET", "postgresql://dp@h/db?password=***"),
    ("postgresql://dp@h/db?password=\"a SEKRET\"&x=1", "postgresql://dp@h/db?password=***&x=1"),
    ("host=h password=\"a SEKRET\" dbname=d", "host=h password=*** dbname=d"),
    ("host=h password=ab'SEKRET dbname=d", "host=h password=*** dbname=d"),
    # attack116 F3: the slashes typed fullwidth (U+FF0F, a "/" once NFKC-normalized)
    ("http:\uff0f\uff0fuser:SEKRET@host/x", "http:\uff0f\uff0fuser:***@host/x"),
    ("\uff0f/u:SEKRET@h and /\uff0fu:SEKRET@h", "\uff0f/u:***@h and /\uff0fu:***@h"),
    ("\uff0f\uff0fdp@h:5432/db?password=p@SEKRET", "\uff0f\uff0fdp@h:***@password=***"),
])
def test_a_line_masks_what_one_url_masks(url, shown):
    assert redacted_text(f"GET {url} failed") == f"GET {shown} failed" and redacted_url(url) == shown


def test_one_url_masks_a_query_password_up_to_its_end_a_space_included():
    """attack116 F2: ``?password=a b`` in ``--db``: one URL's query value ends at ``&`` or the URL's end; in a line, a
    space ends it (what follows may be prose)."""
    assert redacted_url("postgresql://dp@h/db?password=a bSEKRET&x=1") == "postgresql://dp@h/db?password=***&x=1"
    assert redacted_url("postgresql://dp@h/db?sslmode=require&password=a b c SEKRET") == \
        "postgresql://dp@h/db?sslmode=require&password=***"
    assert redacted_repr("postgresql://dp@h/db?password=a SEKRET") == "'postgresql://dp@h/db?password=***'"
    assert redacted_text("postgresql://dp@h/db?password=aSEKRET failed: refused") == \
        "postgresql://dp@h/db?password=*** failed: refused"
    assert without_password('bad "a b SEKRET"', 'postgresql://dp@h/db?password="a b SEKRET"') == 'bad "***"'


#: attack116's patterns on long hostile texts (see HOSTILE): a spaced password read up to the next "//", fullwidth
#: slashes, what a mask left of a value, a double-quoted value, an encoded name's quoted value
HOSTILE_116 = [
    ("http://u: a/" * 16_667 + " http://u: SE/CRET@h", "http://u: a/" * 16_667 + " http://u:***@h"),
    ("\uff0f" * 200_000 + " http:\uff0f\uff0fu:SECRET@h", "\uff0f" * 200_000 + " http:\uff0f\uff0fu:***@h"),
    ("\uff0f\uff0fu:" * 50_000 + " \uff0f\uff0fu:SECRET@h", "\uff0f\uff0fu:" * 50_000 + " \uff0f\uff0fu:***@h"),
    ("password=x" + "'" * 200_000 + " password=SECRET", "password=***" + "'" * 200_000 + " password=***"),
    ("password=x" + "''a" * 66_667 + " password=SECRET", "password=*** password=***"),
    ('password="' + "\\\"" * 100_000 + " SECRET", "password=***"),
    ("%41='" * 40_000 + " pass%77ord=SECRET", "%41='" * 40_000 + " pass%77ord=***"),
]


@pytest.mark.parametrize("text, shown", HOSTILE_116, ids=[f"hostile116_{index}" for index in range(len(HOSTILE_116))])
def test_attack116s_patterns_read_a_long_hostile_text_in_linear_time(text, shown):
    assert redacted_text(text) == shown and redacted_url(text) == shown
    assert without_password(text, "http://u:SECRET@h") == shown


@pytest.mark.parametrize("message, url, shown", [
    # attack117 F1: libpq repeats a query value it refuses, the part after a space or a quote included: each password of
    # the URL is masked whole (up to "&" or the end; a quoted one to its closing quote), decoded, and in its pieces
    ('unexpected spaces found in "hunter2 SECRETTAIL", use percent-encoded spaces (%20) instead',
     "postgresql://dp@127.0.0.1:1/db?password=hunter2 SECRETTAIL",
     'unexpected spaces found in "***", use percent-encoded spaces (%20) instead'),
    ('unexpected spaces found in ""q rSECRET"", use', 'postgresql://dp@127.0.0.1:1/db?pass%77ord="q rSECRET"',
     'unexpected spaces found in ""***"", use'),
    ('unexpected spaces found in "a bSECRET", use percent-encoded spaces', "postgresql://dp@h:1/db?password=a bSECRET",
     'unexpected spaces found in "***", use percent-encoded spaces'),
    ("refused bSECRET and hunter2", "postgresql://dp@h:1/db?password=hunter2 bSECRET&x=1", "refused *** and ***"),
    ('bad "a\\"SECRET"', 'postgresql://dp@h/db?password="a\\"SECRET"', 'bad "***"'),
    ("no PGSECRET1", "postgresql://dp@h/db?PGPASSWORD=PGSECRET1", "no ***"),
    # attack117 F2: a password shorter than the shortest piece is not searched for in the message
    ("connection refused: is the server accepting TCP/IP connections?", "postgresql://dp:e@127.0.0.1:1/db",
     "connection refused: is the server accepting TCP/IP connections?"),
    ("connection refused: is the server accepting connections?", "postgresql://dp@127.0.0.1:1/db?password=e",
     "connection refused: is the server accepting connections?"),
])
def test_a_driver_repeating_a_password_with_a_space_or_quote_has_it_masked_whole(message, url, shown):
    assert without_password(message, url) == shown


def test_dpdist_serve_never_shows_a_query_password_after_its_space(capsys):
    pytest.importorskip("psycopg")
    pytest.importorskip("starlette")
    for url in ("postgresql://dp@127.0.0.1:1/db?password=hunter2 SECRETTAIL",
                'postgresql://dp@127.0.0.1:1/db?pass%77ord="q rSECRET"'):
        status, out, err = run(capsys, "serve", "--db", url, "--admin-token", "admin-token-0123456789")
        assert status == 2 and err.count("\n") == 1 and "'--db' option" in err
        assert "SECRET" not in err + out and "hunter2" not in err + out, err
    status, out, err = run(capsys, "serve", "--db", "postgresql://dp:e@127.0.0.1:1/db", "--admin-token",
                           "admin-token-0123456789")
    assert status == 2 and "e***" not in err and "***e" not in err and "conn***" not in err, err


@pytest.mark.parametrize("text, shown", [
    # attack117 F4, F5: an encoded name's or separator's quoted value to its closing quote, a prefixed password name
    ('pass%77ord="q rSECRET" x', "pass%77ord=*** x"),
    ("password%3D'a bSECRET' x", "password%3D*** x"),
    ("PGPASSWORD=SECRET1 and db_password=SECRET2 and userPassword=SECRET3", "PGPASSWORD=*** and db_password=*** and userPassword=***"),
    ("%41='x pass%77ord=SECRET' z", "%41='x pass%77ord=***' z"),
])
def test_attack117s_named_values_are_masked(text, shown):
    assert redacted_text(text) == shown


#: attack117's patterns on long hostile texts (see HOSTILE): a prefixed password name, an encoded name's quoted value
HOSTILE_117 = [
    ("_" * 200_000 + "password=SECRET", "_" * 200_000 + "password=***"),
    ("password" * 25_000 + " password=SECRET", "password" * 25_000 + " password=***"),
    ("%41=\"" * 40_000 + " pass%77ord=\"SECRET\"", "%41=\"" * 40_000 + " pass%77ord=***"),
    ('pass%77ord="' + "\\\"" * 100_000 + " SECRET", "pass%77ord=***"),
]


@pytest.mark.parametrize("text, shown", HOSTILE_117, ids=[f"hostile117_{index}" for index in range(len(HOSTILE_117))])
def test_attack117s_patterns_read_a_long_hostile_text_in_linear_time(text, shown):
    assert redacted_text(text) == shown and redacted_url(text) == shown
    assert without_password(text, "http://u:SECRET@h") == shown
