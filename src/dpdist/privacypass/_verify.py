"""Token verification (RFC 9577 section 2.2.2, RFC 9578 section 6.4): what a relay and a collector run on every token.

A token of type 0x0002 is valid for a challenge and an issuer key when it is 354 bytes of type
0x0002, its ``challenge_digest`` is ``SHA-256(TokenChallenge)``, its ``token_key_id`` is
``SHA-256(token_key)``, and its authenticator is an RSASSA-PSS signature (SHA-384, MGF1-SHA-384,
48-byte salt) of its first 98 bytes under the key.  Anyone holding the public key can check it
(publicly verifiable tokens).  Spending a token once is the caller's job: the nonce returned is the
token's identity, to be recorded with what the token admitted.

The key is parsed once per token key and the challenge hashed once per challenge (small caches),
so a check is one RSA public operation (OpenSSL, through ``cryptography``) and a few comparisons.
"""

from __future__ import annotations

import functools
import hashlib
from typing import Any

from ..errors import InvalidTokenError
from .._validation import validate_params
from ._client import _CHALLENGE, _TOKEN_KEY, challenge_bytes, public_key_of
from ._messages import TOKEN_LENGTH, TOKEN_TYPE, TokenChallenge

__all__ = ["verify_token"]


@functools.lru_cache(maxsize=256)
def _challenge_digest(challenge: bytes) -> bytes:
    return hashlib.sha256(challenge_bytes(challenge)).digest()


@functools.lru_cache(maxsize=1)
def _pss():
    from cryptography.hazmat.primitives import hashes  # lazy: optional extra (cryptography, in dpdist[serve] and dpdist[relay])
    from cryptography.hazmat.primitives.asymmetric import padding  # lazy: optional extra (cryptography, in dpdist[serve] and dpdist[relay])

    return padding.PSS(mgf=padding.MGF1(hashes.SHA384()), salt_length=48), hashes.SHA384()


@validate_params({
    "token_key": _TOKEN_KEY,
    "challenge": _CHALLENGE,
})
def verify_token(token: Any, token_key: bytes, challenge: TokenChallenge | bytes) -> bytes:
    """Check a token (module docstring) and return its 32-byte nonce.

    Parameters
    ----------
    token : bytes
        The Token (354 bytes), as sent in ``Authorization: PrivateToken token="..."``.
    token_key : bytes
        The issuer key the campaign names (DER SubjectPublicKeyInfo, RFC 9578 section 6.5).
    challenge : TokenChallenge or bytes
        The campaign's TokenChallenge (or its encoding).

    Raises
    ------
    InvalidTokenError
        With ``reason`` ``"malformed"``, ``"wrong_token_type"``, ``"wrong_challenge"``, ``"wrong_key"``
        or ``"invalid_signature"``.
    InvalidParameterError
        ``token_key`` or ``challenge`` are not a token key and a TokenChallenge of type 0x0002 (the
        verifier's own configuration, not the token, is wrong).
    """
    from cryptography.exceptions import InvalidSignature  # lazy: optional extra (cryptography, in dpdist[serve] and dpdist[relay])

    if not isinstance(token, (bytes, bytearray, memoryview)):
        raise InvalidTokenError(f"The 'token' argument must be bytes. Got {type(token).__name__}.", reason="malformed")
    public_key, key_id = public_key_of(token_key)
    digest = _challenge_digest(challenge.encode() if isinstance(challenge, TokenChallenge) else bytes(challenge))
    token = bytes(token)
    if len(token) != TOKEN_LENGTH:
        raise InvalidTokenError(f"A token of type 0x0002 is {TOKEN_LENGTH} bytes. Got {len(token)} bytes.", reason="malformed")
    if token[:2] != TOKEN_TYPE.to_bytes(2, "big"):
        raise InvalidTokenError(f"The token is of type 0x{token[:2].hex()}, not 0x0002.", reason="wrong_token_type")
    if token[34:66] != digest:
        raise InvalidTokenError("The token was made for another challenge (another campaign or issuer).", reason="wrong_challenge")
    if token[66:98] != key_id:
        raise InvalidTokenError("The token was made for another issuer key.", reason="wrong_key")
    pss, sha384 = _pss()
    try:
        public_key.verify(token[98:], token[:98], pss, sha384)
    except InvalidSignature:
        raise InvalidTokenError("The token's authenticator is not the issuer's signature of it (forged or altered).",
                                reason="invalid_signature") from None
    return token[2:34]
