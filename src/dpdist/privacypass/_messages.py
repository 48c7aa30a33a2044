"""The messages of Privacy Pass token type 0x0002 and their encodings (RFC 9577 section 2, RFC 9578 section 6).

All integers are big-endian; ``opaque x<a..b>`` is a length prefix of as many bytes as ``b`` needs,
then the bytes (TLS presentation language, RFC 8446 section 3)::

    struct {                                    struct {                          struct {
        uint16_t token_type;                        uint16_t token_type = 0x0002;     uint16_t token_type = 0x0002;
        opaque issuer_name<1..2^16-1>;              uint8_t truncated_token_key_id;   uint8_t nonce[32];
        opaque redemption_context<0..32>;           uint8_t blinded_msg[Nk];          uint8_t challenge_digest[32];
        opaque origin_info<0..2^16-1>;          } TokenRequest;                       uint8_t token_key_id[32];
    } TokenChallenge;                           struct { uint8_t blind_sig[Nk]; }     uint8_t authenticator[Nk];
                                                    TokenResponse;                } Token;

with ``Nk = 256``.  ``redemption_context`` is empty or 32 bytes; ``issuer_name`` and
``origin_info`` are printable ASCII (origin names separated by commas).  The token's
``challenge_digest`` is ``SHA-256(TokenChallenge)`` and its authenticator signs the first 98 bytes
(``token_type | nonce | challenge_digest | token_key_id``, RFC 9577 section 2.2.2).  Readers take
exactly one message of the type and refuse anything else (a short or long buffer, a wrong length
prefix) rather than guess.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

from ..errors import InvalidParameterError, InvalidTokenError
from .._validation import Bytes, Described, Integer, OneOf, Text, validate_params

__all__ = [
    "TOKEN_TYPE",
    "NK",
    "TOKEN_LENGTH",
    "TOKEN_REQUEST_LENGTH",
    "TokenChallenge",
    "TokenRequest",
    "Token",
]

#: Privacy Pass token type 0x0002: Blind RSA (2048-bit), RFC 9578 section 8.2.2
TOKEN_TYPE = 0x0002
#: bytes of a blinded message, a blind signature and a token authenticator (RSA-2048)
NK = 256
#: bytes of a Token of type 0x0002: 2 + 32 + 32 + 32 + 256
TOKEN_LENGTH = 2 + 32 + 32 + 32 + NK
#: bytes of a TokenRequest of type 0x0002: 2 + 1 + 256
TOKEN_REQUEST_LENGTH = 2 + 1 + NK


#: the rules of a TokenChallenge's fields (``opaque x<a..b>`` bounds its lengths)
_CHALLENGE = {
    "issuer_name": Text(ascii=True, max_length=0xFFFF),
    "redemption_context": OneOf((Bytes(0), Bytes(32)), "empty or 32 bytes"),
    "origin_info": Text(non_empty=False, ascii=True, max_length=0xFFFF),
    "token_type": Integer(low=0, high=0xFFFF),
}


@validate_params(_CHALLENGE)
@dataclass(frozen=True)
class TokenChallenge:
    """A TokenChallenge (RFC 9577, section 2.1.1): which tokens an origin accepts.

    Parameters
    ----------
    issuer_name : str
        The issuer's server name (host name and optional port, RFC 9577 section 2.1.1.1).
    redemption_context : bytes
        Empty, or 32 bytes that bind tokens to a context (dpdist: to one campaign and its key).
    origin_info : str
        Empty (tokens for any origin), or origin names separated by commas.
    token_type : int
        0x0002 (the only type dpdist issues and verifies; others can be encoded and read).
    """

    issuer_name: str
    redemption_context: bytes = b""
    origin_info: str = ""
    token_type: int = TOKEN_TYPE

    def encode(self) -> bytes:
        return self._encoded

    @functools.cached_property
    def _encoded(self) -> bytes:  # a verifier encodes one challenge for every token it checks: once
        issuer, origins = self.issuer_name.encode("ascii"), self.origin_info.encode("ascii")
        return (self.token_type.to_bytes(2, "big") + len(issuer).to_bytes(2, "big") + issuer
                + bytes([len(self.redemption_context)]) + self.redemption_context + len(origins).to_bytes(2, "big") + origins)

    def digest(self) -> bytes:
        """``SHA-256(TokenChallenge)``: the token's ``challenge_digest``."""
        return hashlib.sha256(self.encode()).digest()

    @classmethod
    @validate_params({"data": Bytes()}, owner="TokenChallenge.decode")
    def decode(cls, data: bytes) -> "TokenChallenge":
        """The TokenChallenge encoded in ``data`` (all of it); InvalidParameterError if ``data`` is not exactly one."""
        try:
            if len(data) < 2:
                raise ValueError("truncated")
            token_type, at = int.from_bytes(data[0:2], "big"), 2
            issuer, at = _opaque(data, at, 2)
            context, at = _opaque(data, at, 1)
            origins, at = _opaque(data, at, 2)
            if at != len(data):
                raise ValueError(f"{len(data) - at} bytes after its last field")
            return cls(issuer.decode("ascii"), context, origins.decode("ascii"), token_type)
        except (ValueError, InvalidParameterError) as error:
            raise InvalidParameterError(f"The 'challenge' argument is not a TokenChallenge (RFC 9577, section 2.1.1): {error}") from None


def _opaque(data: bytes, at: int, prefix: int) -> tuple[bytes, int]:
    if at + prefix > len(data):
        raise ValueError("truncated")
    size = int.from_bytes(data[at : at + prefix], "big")
    at += prefix
    if at + size > len(data):
        raise ValueError("truncated")
    return data[at : at + size], at + size


@dataclass(frozen=True)
class TokenRequest:
    """A TokenRequest of type 0x0002 (RFC 9578, section 6.1): the blinded token input, sent to the issuer."""

    truncated_token_key_id: int
    blinded_msg: bytes
    token_type: int = TOKEN_TYPE

    def encode(self) -> bytes:
        return self.token_type.to_bytes(2, "big") + bytes([self.truncated_token_key_id]) + self.blinded_msg

    @classmethod
    @validate_params({"data": Described(Bytes(TOKEN_REQUEST_LENGTH), f"{TOKEN_REQUEST_LENGTH} bytes (a TokenRequest of type "
                                                                     "0x0002, RFC 9578 section 6.1)")},
                     owner="TokenRequest.decode")
    def decode(cls, data: bytes) -> "TokenRequest":
        """The TokenRequest in ``data``: exactly 259 bytes of token type 0x0002, else InvalidParameterError."""
        token_type = int.from_bytes(data[:2], "big")
        if token_type != TOKEN_TYPE:
            raise InvalidParameterError(f"The 'token_request' argument must be of token type 0x0002. Got 0x{token_type:04x}.")
        return cls(data[2], data[3:], token_type)


@dataclass(frozen=True)
class Token:
    """A Token of type 0x0002 (RFC 9577 section 2.2, RFC 9578 section 6.3): what a device presents, once."""

    nonce: bytes
    challenge_digest: bytes
    token_key_id: bytes
    authenticator: bytes
    token_type: int = TOKEN_TYPE

    def encode(self) -> bytes:
        return self.token_type.to_bytes(2, "big") + self.nonce + self.challenge_digest + self.token_key_id + self.authenticator

    @property
    def authenticator_input(self) -> bytes:
        """``token_type | nonce | challenge_digest | token_key_id``: the message the authenticator signs (98 bytes)."""
        return self.token_type.to_bytes(2, "big") + self.nonce + self.challenge_digest + self.token_key_id

    @classmethod
    def decode(cls, data: bytes) -> "Token":
        """The Token in ``data``: exactly 354 bytes of token type 0x0002, else InvalidTokenError (``malformed``, ``wrong_token_type``)."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise InvalidTokenError(f"The 'token' argument must be bytes. Got {type(data).__name__} instead.", reason="malformed")
        data = bytes(data)
        if len(data) != TOKEN_LENGTH:
            raise InvalidTokenError(
                f"The 'token' argument must be {TOKEN_LENGTH} bytes (a Token of type 0x0002). Got {len(data)} bytes.", reason="malformed"
            )
        token_type = int.from_bytes(data[:2], "big")
        if token_type != TOKEN_TYPE:
            raise InvalidTokenError(f"The 'token' argument must be of token type 0x0002. Got 0x{token_type:04x}.", reason="wrong_token_type")
        return cls(data[2:34], data[34:66], data[66:98], data[98:], token_type)
