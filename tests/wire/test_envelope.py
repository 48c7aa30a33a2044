"""Sealing a report for the relay (dpdist._wire._envelope): a key that is not 32 bytes and bad arguments are
refused by name."""

from __future__ import annotations


import pytest

from dpdist.errors import InvalidParameterError


@pytest.fixture
def envelope():
    pytest.importorskip("pyhpke")
    from dpdist._wire import _envelope

    return _envelope


@pytest.mark.parametrize("key, got", [(b"x" * 10, "10 bytes"), (b"x" * 33, "33 bytes"), ("abc", "str"), (None, "NoneType")])
def test_seal_refuses_a_key_that_is_not_32_bytes(envelope, key, got):
    with pytest.raises(InvalidParameterError, match=rf"The 'public_key' parameter of seal must be a raw 32-byte X25519 "
                                                    rf"public key .*Got {got} instead"):
        envelope.seal(key, "c", b"body", "application/json")


def test_seal_and_open_refuse_bad_arguments_by_name(envelope):
    pair = envelope.generate_key()
    with pytest.raises(InvalidParameterError, match=r"'public_key' argument of seal is not a usable X25519 public key: "
                                                    r"it is a low-order point"):
        envelope.seal(bytes(32), "c", b"body", "application/json")
    with pytest.raises(InvalidParameterError, match=r"The 'campaign' parameter of seal .*Got None instead"):
        envelope.seal(pair.public_key, None, b"body", "application/json")
    with pytest.raises(InvalidParameterError, match=r"The 'body' parameter of seal must be bytes\. Got str"):
        envelope.seal(pair.public_key, "c", "body", "application/json")
    with pytest.raises(InvalidParameterError, match=r"The 'content_type' parameter of seal must be the content type of dpdist binary records or JSON, one of"):
        envelope.seal(pair.public_key, "c", b"body", "text/csv")
    sealed = envelope.seal(pair.public_key, "c", b"body", "application/json")
    with pytest.raises(InvalidParameterError, match=r"The 'private_key' parameter of open_sealed must be a raw 32-byte"):
        envelope.open_sealed(b"k" * 5, "c", sealed)
    assert envelope.open_sealed(pair.private_key, "c", sealed) == ("application/json", b"body")
    with pytest.raises(InvalidParameterError, match=r"The 'public_key' of a relayed campaign must be a 32-byte X25519 "
                                                    r"key in base64url.*Got 'AAAA' instead"):
        envelope.decode_public_key("AAAA")
    with pytest.raises(InvalidParameterError, match=r"'public_key'.*Got None instead"):
        envelope.decode_public_key(None)
