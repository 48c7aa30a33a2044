"""The issuer's public key as a token key (RFC 9578, section 6.5): SubjectPublicKeyInfo with the id-RSASSA-PSS OID.

``token_key`` is the DER encoding of::

    SubjectPublicKeyInfo ::= SEQUENCE {
        algorithm AlgorithmIdentifier {        -- RFC 4055, section 3.1
            id-RSASSA-PSS,                     -- 1.2.840.113549.1.1.10
            RSASSA-PSS-params ::= SEQUENCE {
                [0] hashAlgorithm    { id-sha384 }                 -- 2.16.840.1.101.3.4.2.2, parameters absent
                [1] maskGenAlgorithm { id-mgf1, { id-sha384 } }    -- 1.2.840.113549.1.1.8
                [2] saltLength       48 } },
        subjectPublicKey BIT STRING { RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER } } }

and ``token_key_id = SHA-256(token_key)`` (RFC 9578, section 6.5).  Both directions are written
here on bytes (a few DER rules: definite lengths, minimal integers), and the parser accepts only
what the encoder writes: a key is read, encoded again and compared byte for byte, so one public key
has one token key and one key id.  Keys are RSA-2048 (token type 0x0002: ``Nk = 256``).
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from ..errors import InvalidParameterError
from .._validation import AllOf, AttributeIn, Bytes, Described, NamedInstanceOf, validate_params

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPrivateKey, RSAPublicKey

__all__ = ["MODULUS_BITS", "encode_token_key", "decode_token_key", "token_key_id", "generate_private_key"]

#: RSA modulus of token type 0x0002 (RFC 9578, section 8.2.2: Nk = 256 bytes)
MODULUS_BITS = 2048
_PUBLIC_EXPONENT = 65537
_ID_RSASSA_PSS = "1.2.840.113549.1.1.10"
_ID_MGF1 = "1.2.840.113549.1.1.8"
_ID_SHA384 = "2.16.840.1.101.3.4.2.2"


# ---------------------------------------------------------------------- DER (ITU-T X.690), the few rules used here
def _length(size: int) -> bytes:
    if size < 0x80:
        return bytes([size])
    body = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def _tlv(tag: int, content: bytes) -> bytes:
    return bytes([tag]) + _length(len(content)) + content


def _sequence(*parts: bytes) -> bytes:
    return _tlv(0x30, b"".join(parts))


def _integer(value: int) -> bytes:  # non-negative, minimal two's complement
    return _tlv(0x02, value.to_bytes(value.bit_length() // 8 + 1, "big"))


def _oid(dotted: str) -> bytes:
    arcs = [int(arc) for arc in dotted.split(".")]
    body = bytearray([40 * arcs[0] + arcs[1]])
    for arc in arcs[2:]:
        chunk = [arc & 0x7F]
        while arc > 0x7F:
            arc >>= 7
            chunk.append(0x80 | (arc & 0x7F))
        body += bytes(reversed(chunk))
    return _tlv(0x06, bytes(body))


_SHA384 = _sequence(_oid(_ID_SHA384))
#: AlgorithmIdentifier of RSASSA-PSS with SHA-384, MGF1-SHA-384 and a 48-byte salt (RFC 4055 section 3.1, RFC 9578 section 6.5)
_PSS_ALGORITHM = _sequence(
    _oid(_ID_RSASSA_PSS),
    _sequence(_tlv(0xA0, _SHA384), _tlv(0xA1, _sequence(_oid(_ID_MGF1), _SHA384)), _tlv(0xA2, _integer(48))),
)


def _encode(n: int, e: int) -> bytes:
    return _sequence(_PSS_ALGORITHM, _tlv(0x03, b"\x00" + _sequence(_integer(n), _integer(e))))


def _read(data: bytes, at: int, tag: int) -> tuple[bytes, int]:
    """The content of the TLV at ``at`` (of tag ``tag``), and where the next one starts; ValueError if it is not one."""
    if at + 2 > len(data) or data[at] != tag:
        raise ValueError(f"expected tag 0x{tag:02x} at byte {at}")
    size, at = data[at + 1], at + 2
    if size & 0x80:
        count = size & 0x7F
        if not 1 <= count <= 4 or at + count > len(data):
            raise ValueError(f"bad length at byte {at - 1}")
        size, at = int.from_bytes(data[at : at + count], "big"), at + count
    if at + size > len(data):
        raise ValueError(f"truncated at byte {at}")
    return data[at : at + size], at + size


#: a token key as an argument: its DER bytes
_TOKEN_KEY = Described(Bytes(), "bytes (DER)")

# ---------------------------------------------------------------------- the token key
@validate_params({"public_key": AllOf((NamedInstanceOf("cryptography.hazmat.primitives.asymmetric.rsa",
                                                        ("RSAPublicKey", "RSAPrivateKey"), ""),
                                        AttributeIn(object, "key_size", (MODULUS_BITS,), "")),
                                       f"an RSA-{MODULUS_BITS} key of the cryptography package (public or private; "
                                       "token type 0x0002)")})
def encode_token_key(public_key: RSAPublicKey | RSAPrivateKey) -> bytes:
    """The token key (module docstring) of an RSA-2048 key: DER SubjectPublicKeyInfo with id-RSASSA-PSS."""
    key: Any = public_key
    numbers = (key.public_key() if hasattr(key, "private_numbers") else key).public_numbers()
    return _encode(numbers.n, numbers.e)


@validate_params({"token_key": _TOKEN_KEY})
def decode_token_key(token_key: Any) -> RSAPublicKey:
    """The RSA public key of a token key (module docstring); anything else raises InvalidParameterError."""
    from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicNumbers  # lazy: optional extra (cryptography, in dpdist[serve] and dpdist[relay])

    data = token_key
    try:
        spki, end = _read(data, 0, 0x30)
        if end != len(data):
            raise ValueError("bytes after the SubjectPublicKeyInfo")
        if not spki.startswith(_PSS_ALGORITHM):
            raise ValueError("its algorithm is not id-RSASSA-PSS with SHA-384, MGF1-SHA-384 and a 48-byte salt")
        bits, end = _read(spki, len(_PSS_ALGORITHM), 0x03)
        if end != len(spki) or not bits.startswith(b"\x00"):
            raise ValueError("bad subjectPublicKey BIT STRING")
        rsa_key, end = _read(bits, 1, 0x30)
        if end != len(bits):
            raise ValueError("bytes after the RSAPublicKey")
        modulus, at = _read(rsa_key, 0, 0x02)
        exponent, at = _read(rsa_key, at, 0x02)
        if at != len(rsa_key):
            raise ValueError("bytes after the public exponent")
        n, e = int.from_bytes(modulus, "big"), int.from_bytes(exponent, "big")
    except ValueError as error:
        raise InvalidParameterError(f"The 'token_key' argument is not a token key of type 0x0002 (RFC 9578, section 6.5): {error}.") from None
    if _encode(n, e) != data:  # negative or non-minimal integers, long-form lengths that were not needed
        raise InvalidParameterError("The 'token_key' argument is not in DER (the encoding of its key is not the canonical one).")
    if n.bit_length() != MODULUS_BITS or e < 3 or e % 2 == 0 or e >= n or n % 2 == 0:
        raise InvalidParameterError(
            f"The 'token_key' argument must hold an RSA-{MODULUS_BITS} key with an odd exponent >= 3. Got {n.bit_length()} bits, e = {e}."
        )
    return RSAPublicNumbers(e, n).public_key()


@validate_params({"token_key": _TOKEN_KEY})
def token_key_id(token_key: bytes) -> bytes:
    """``SHA-256(token_key)`` (RFC 9578, section 6.5): 32 bytes."""
    return hashlib.sha256(token_key).digest()


def generate_private_key() -> RSAPrivateKey:
    """A fresh RSA-2048 issuer key (e = 65537; OpenSSL's key generation, FIPS 186-style, as RFC 9474 section 6.2 recommends).

    One key for one purpose: RFC 9474 forbids reusing it in another protocol or another RSABSSA variant.
    """
    from cryptography.hazmat.primitives.asymmetric import rsa  # lazy: optional extra (cryptography, in dpdist[serve] and dpdist[relay])

    return rsa.generate_private_key(public_exponent=_PUBLIC_EXPONENT, key_size=MODULUS_BITS)
