"""The rules of ``dpdist.issuer.create_app``'s arguments that ``dpdist issuer serve`` states for its options too."""

from __future__ import annotations

import pytest

from dpdist.issuer._arguments import ADMIN_TOKEN, CORS_ORIGINS, SERVER_NAME


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
