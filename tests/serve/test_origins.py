"""The origins whose pages may call the service: one rule for ``Operations.cors_origins`` and ``--cors-origin``."""

from __future__ import annotations

import pytest

from dpdist.serve._origins import ORIGIN, ORIGINS, ORIGINS_TEXT


@pytest.mark.parametrize("origin", ["*", "https://example.org", "http://127.0.0.1:8080", "http://[::1]:8000"])
def test_an_origin_is_a_scheme_a_host_and_a_port(origin):
    assert ORIGIN.check(origin) == origin and ORIGINS.check([origin]) == (origin,)


@pytest.mark.parametrize("origin", ["https://example.org/", "https://a.example/path", "example.org", "ftp://x", ""])
def test_a_path_a_trailing_slash_or_another_scheme_is_refused(origin):
    with pytest.raises(ValueError):
        ORIGINS.check([origin])
    with pytest.raises(ValueError):
        ORIGINS_TEXT.check(f"https://fine.example,{origin}" if origin else "https://a.example/")


def test_the_option_is_origins_separated_by_commas_or_none():
    assert ORIGINS_TEXT.check("") == "" and ORIGINS_TEXT.check("https://a.example, http://b.example:81")
