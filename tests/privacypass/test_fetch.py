"""fetch_token's arguments (a token fetched from a running issuer: tests/privacypass/test_privacypass.py)."""

from __future__ import annotations

import pytest

from dpdist.errors import InvalidParameterError

pytest.importorskip("httpx")


def test_an_issuer_url_with_a_password_is_refused_the_credential_would_not_be_sent():
    """httpx sends ``user:password@`` as Basic auth in place of the device's ``Bearer <credential>``."""
    from dpdist.privacypass import fetch_token

    with pytest.raises(InvalidParameterError, match="'issuer_url' parameter.*authenticates with its token") as refused:
        fetch_token("http://alice:S3cretPW@127.0.0.1:1", "k", "credential", b"c" * 10, b"k" * 10, retries=0)
    assert "S3cretPW" not in str(refused.value)
