"""The rules of ``dpdist.issuer.create_app``'s arguments that ``dpdist issuer serve`` states for its options too."""

from __future__ import annotations

import pytest

from dpdist.issuer._arguments import ADMIN_TOKEN, CORS_ORIGINS, SERVER_NAME, STORE


@pytest.mark.parametrize("name", ["issuer.example.org", "issuer.example:8443", "localhost", "a-b.c:1", "x:65535"])
def test_a_server_name_is_a_host_name_with_an_optional_port(name):
    assert SERVER_NAME.check(name) == name


@pytest.mark.parametrize("name", ["", "issuer@example", "issuer.example:0", "issuer.example:65536", "-a.example",
                                  "https://issuer.example", "a b"])
def test_anything_else_is_refused(name):
    with pytest.raises(ValueError):
        SERVER_NAME.check(name)


def test_origins_are_a_list_or_the_command_lines_comma_separated_text():
    assert CORS_ORIGINS.check(None) is None
    assert CORS_ORIGINS.check("https://a.example, http://b.example:8080,") == "https://a.example, http://b.example:8080,"
    assert CORS_ORIGINS.check(["*"]) == ("*",) and CORS_ORIGINS.check("") == ""
    for bad in (["collector.example"], "https://a.example/path", ["https://a.example", 3], 3):
        with pytest.raises(ValueError):
            CORS_ORIGINS.check(bad)


def test_the_admin_token_is_printable_ascii_of_16_characters_and_shown_by_its_length():
    assert ADMIN_TOKEN.check("admin-token-0123456") == "admin-token-0123456"
    for bad in ("short", "\u00e9" * 16, None):
        with pytest.raises(ValueError):
            ADMIN_TOKEN.check(bad)
    assert ADMIN_TOKEN.shown("secret-\u00e9" * 3) == "a str of 24 characters"


@pytest.mark.parametrize("path", ["", " ", ":memory:", "file::memory:?cache=shared", "file:im.sqlite?mode=memory",
                                  "file:?mode=memory", "FILE:i.sqlite", "sqlite:///i.sqlite", "host=h password=pw", 3])
def test_the_store_is_a_sqlite_file_not_an_in_memory_database(path, tmp_path, monkeypatch, capsys):
    """As ``dpdist serve --db`` and the relay's ``--queue``: an in-memory store keeps nothing (and is empty to the
    next connection); the library and ``dpdist issuer serve --issuer-db`` refuse it in one line."""
    pytest.importorskip("starlette")
    from dpdist.cli import main
    from dpdist.errors import InvalidParameterError
    from dpdist.issuer import create_app

    assert STORE.check(str(tmp_path / "i.sqlite")) == str(tmp_path / "i.sqlite")
    with pytest.raises(InvalidParameterError, match=r"^The 'db_path' parameter of issuer.create_app must be the path of "
                                                    r"the issuer's SQLite file in an existing folder \(not a folder, and not '' or ':memory:'"):
        create_app(path, name="issuer.example", admin_token="admin-token-0123456")
    if isinstance(path, str):
        monkeypatch.setenv("DPDIST_ISSUER_ADMIN_TOKEN", "admin-token-0123456")
        assert main(["issuer", "serve", "--issuer-db", path, "--issuer-name", "issuer.example"]) == 2
        err = capsys.readouterr().err
        assert err.startswith("dpdist: error: The '--issuer-db' option must be ") and err.count("\n") == 1
