"""The client's two steps of token issuance (RFC 9578, sections 6.1 and 6.3): blind a token input, finalize the answer.

::

    nonce = random(32), or the caller's
    token_input = 0x0002 | nonce | SHA-256(TokenChallenge) | token_key_id
    blinded_msg, inv = Blind(pkI, token_input)               # RFC 9474, PrepareIdentity
    TokenRequest = 0x0002 | token_key_id[31] | blinded_msg   # sent to the issuer
    authenticator = Finalize(pkI, token_input, TokenResponse, inv)
    Token = token_input | authenticator

The issuer sees ``blinded_msg``, uniform whatever the token input is, and never the challenge, so
it cannot tell which token it signed when the token is later redeemed.  The 32-byte nonce is the
fresh high-entropy part of the signed message that RFC 9474 section 7.3 asks for: random, or given by
a caller that binds the token to something of its own (dpdist binds each token to the report it
admits: :mod:`dpdist._wire._binding`), derived from fresh high-entropy input.  The
token key is the one the client was given with the campaign (not the issuer's say-so at issuance:
an issuer that gave each client its own key could recognise its clients' tokens).
"""

from __future__ import annotations

import functools
import hashlib
import math
import secrets
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameterError
from .._validation import Bytes, Described, InstanceOf, Optional, validate_params
from . import _blindrsa
from ._messages import NK, TOKEN_TYPE, TokenChallenge, TokenRequest
from ._token_key import decode_token_key

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey

__all__ = ["PendingToken", "request_token", "finalize_token", "challenge_bytes"]


@dataclass(frozen=True)
class PendingToken:
    """A token being issued: ``request`` (the TokenRequest to send) and what finalizing its answer needs (kept on the device)."""

    request: bytes
    token_input: bytes = field(repr=False)
    token_key: bytes = field(repr=False)
    inv: int = field(repr=False)


@functools.lru_cache(maxsize=64)
def public_key_of(token_key: bytes) -> tuple[RSAPublicKey, bytes]:
    """The parsed key of a token key and its key id (cached: a verifier checks many tokens under one key)."""
    return decode_token_key(token_key), hashlib.sha256(token_key).digest()


def challenge_bytes(challenge: Any) -> bytes:
    """A TokenChallenge of type 0x0002 as bytes, from a :class:`TokenChallenge` or its encoding (checked)."""
    parsed = challenge if isinstance(challenge, TokenChallenge) else TokenChallenge.decode(challenge)
    if parsed.token_type != TOKEN_TYPE:
        raise InvalidParameterError(f"The 'challenge' argument must be of token type 0x0002. Got 0x{parsed.token_type:04x}.")
    return parsed.encode()


_TOKEN_KEY = Described(Bytes(), "bytes (DER)")
#: a challenge as an argument: the object or its encoding
_CHALLENGE = InstanceOf((TokenChallenge, bytes, bytearray, memoryview), "a TokenChallenge or its encoding (bytes)")
#: a token's nonce as an argument: None (random) or 32 bytes
_NONCE = Optional(Described(Bytes(32), "32 bytes (a token's nonce)"))


@validate_params({"challenge": _CHALLENGE, "token_key": _TOKEN_KEY, "nonce": _NONCE})
def request_token(challenge: TokenChallenge | bytes, token_key: bytes, *, nonce: bytes | None = None) -> PendingToken:
    """Start issuing one token for ``challenge`` under the issuer key ``token_key`` (RFC 9578, section 6.1).

    Parameters
    ----------
    challenge : TokenChallenge or bytes
        The origin's TokenChallenge (type 0x0002), or its encoding.
    token_key : bytes
        The issuer's token key (DER SubjectPublicKeyInfo, RFC 9578 section 6.5), from a source the
        client trusts (the campaign's config).
    nonce : bytes, optional
        The token's nonce (32 bytes; default: random).  One chosen by the caller must come from fresh
        high-entropy input (RFC 9474 section 7.3), as a hash of a fresh public key does; the issuer never
        sees it (the request is blinded).

    Returns
    -------
    PendingToken
        ``.request`` is the body of the POST to the issuer; pass the whole object and the issuer's
        answer to :func:`finalize_token`.
    """
    nonce, salt = secrets.token_bytes(32) if nonce is None else nonce, secrets.token_bytes(_blindrsa.SALT_LENGTH)
    key = token_key
    n = public_key_of(key)[0].public_numbers().n
    while True:  # the blinding factor: uniform in [1, n), invertible (RFC 9474, section 4.2)
        r = 1 + secrets.randbelow(n - 1)
        if math.gcd(r, n) == 1:
            return request_token_with(challenge, key, nonce, salt, r)


@validate_params({"challenge": _CHALLENGE, "token_key": _TOKEN_KEY})
def request_token_with(challenge: Any, token_key: bytes, nonce: bytes, salt: bytes, r: int) -> PendingToken:
    """:func:`request_token` with its random values given (the test vectors of RFC 9578 fix them)."""
    key = token_key
    public_key, key_id = public_key_of(key)
    numbers = public_key.public_numbers()
    digest = hashlib.sha256(challenge_bytes(challenge)).digest()
    token_input = TOKEN_TYPE.to_bytes(2, "big") + nonce + digest + key_id
    blinded_msg, inv = _blindrsa.blind_with(numbers.n, numbers.e, token_input, salt, r)
    return PendingToken(TokenRequest(key_id[-1], blinded_msg).encode(), token_input, key, inv)


@validate_params({
    "pending": InstanceOf(PendingToken, "the PendingToken of request_token"),
    "token_response": Described(Bytes(NK), f"{NK} bytes (a TokenResponse of type 0x0002)"),
})
def finalize_token(pending: PendingToken, token_response: bytes) -> bytes:
    """The Token (354 bytes, RFC 9578 section 6.3) from the issuer's TokenResponse to ``pending.request``.

    Raises
    ------
    InvalidParameterError
        ``token_response`` is not 256 bytes.
    InvalidTokenError
        The answer does not unblind to a valid signature under the token key (``reason="invalid_signature"``).
    """
    public_key, _ = public_key_of(pending.token_key)
    authenticator = _blindrsa.finalize(public_key, pending.token_input, bytes(token_response), pending.inv)
    return pending.token_input + authenticator
