"""dpdist.client.Client and issuer_of: the URLs they take (more of the client: tests/serve/test_app.py and beyond)."""

from __future__ import annotations

import pytest

from dpdist.errors import InvalidParameterError

pytest.importorskip("httpx")

from dpdist.client import Client, issuer_of  # noqa: E402 - after the extra's check

ADMIN = "admin-token-0123456789"


@pytest.mark.parametrize("relay", [{"url": "http://alice:S3cretPW@relay.example"}, {"url": "https://alice@relay.example:1/x"},
                                   {"url": "http://relay.example", "issuer": {"url": "http://alice:S3cretPW@issuer.example"}}])
def test_a_relayed_campaign_s_urls_with_a_password_are_refused_before_anything_is_sent(relay):
    """The relay's and the issuer's URLs are published to every device with the campaign's config (a bad port: the
    service refuses it, tests/serve/test_relayed.py)."""
    with Client("http://127.0.0.1:1", admin_token=ADMIN, retries=0) as client:  # nothing listens: refused first
        with pytest.raises(InvalidParameterError, match=r"relay\['") as refused:
            client.create_campaign("c", {"protocol": "grr", "version": 1, "epsilon": 1.0, "domain_size": 2}, relay=relay)
    assert "S3cretPW" not in str(refused.value)


def test_an_issuer_named_with_a_password_is_refused_before_it_is_asked():
    with pytest.raises(InvalidParameterError, match="'url' parameter of issuer_of.*without user:password@") as refused:
        issuer_of("http://alice:S3cretPW@127.0.0.1:1", "k")
    assert "S3cretPW" not in str(refused.value) and "alice:***@127.0.0.1:1" in str(refused.value)
