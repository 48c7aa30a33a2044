"""Reports sealed to the collector with HPKE (RFC 9180), and the frames that carry them through the relay.

The relay holds ciphertexts only: a device seals its batch body (what it would send the collector
directly: dpdist binary records or JSON rows) to the campaign's public key, the relay queues, shuffles
and forwards the sealed messages, and the collector opens them.  One suite, fixed:
DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM (RFC 9180 ids 0x0020, 0x0001, 0x0001), base mode,
single-shot, as ``pyhpke`` (Python) and ``@hpke/core`` with ``@hpke/dhkem-x25519`` (JavaScript) implement it.

A sealed message (all integers big-endian)::

    version (1 byte, = 1) | key id (8 bytes) | enc (32 bytes) | ciphertext (AEAD, 16-byte tag)

with ``info = b"dpdist relay v1\\x00" + campaign id`` (a report sealed for one campaign does not open
in another) and ``aad = version | key id``.  The key id is the first 8 bytes of SHA-256 of the
public key.  The plaintext is ``kind (1 byte) | body length (4 bytes) | body | zeros`` padded to a
multiple of 256 bytes, so that the relay sees one length for every report of a campaign of the same
size (kind 1: dpdist binary records, 2: JSON).

A relayed batch is the sealed messages one after another, each after its length (4 bytes).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import struct
from dataclasses import dataclass

from ..errors import InvalidParameterError, MalformedReportError, MissingDependencyError
from .._validation import Bytes, Described, Optional, Text, validate_params

__all__ = [
    "KIND_OF_CONTENT_TYPE",
    "KeyPair",
    "MAX_SEALED_BYTES",
    "SEALED_CONTENT_TYPE",
    "SUITE",
    "check_sealed",
    "enc_of",
    "ephemeral_key",
    "frame",
    "generate_key",
    "open_sealed",
    "public_key_config",
    "seal",
    "unframe",
]

VERSION = 1
#: the content type of one sealed submission, device to relay
SEALED_CONTENT_TYPE = "application/vnd.dpdist.sealed-report"
SUITE = {"kem": "DHKEM(X25519, HKDF-SHA256)", "kdf": "HKDF-SHA256", "aead": "AES-128-GCM", "ids": [0x0020, 0x0001, 0x0001]}
KIND_OF_CONTENT_TYPE = {"application/octet-stream": 1, "application/vnd.dpdist.reports": 1, "application/json": 2}
#: a content type of KIND_OF_CONTENT_TYPE, in any case, with parameters after ';'
_CONTENT_TYPE = Described(Text(pattern=r"(?is)\s*(" + "|".join(map(re.escape, KIND_OF_CONTENT_TYPE)) + r")\s*(;.*)?"),
                          f"the content type of dpdist binary records or JSON, one of {sorted(KIND_OF_CONTENT_TYPE)}")
CONTENT_TYPE_OF_KIND = {1: "application/octet-stream", 2: "application/json"}
PADDING = 256
#: largest sealed message a relay accepts (one device's submission; bodies larger than this go in several)
MAX_SEALED_BYTES = 1 << 20
_KEY_ID_BYTES, _ENC_BYTES, _TAG_BYTES, _KEY_BYTES = 8, 32, 16, 32


def _key(kind: str) -> Described:
    """The rule of an X25519 key of 32 bytes (RFC 7748, section 5), raw."""
    return Described(Bytes(_KEY_BYTES), f"a raw {_KEY_BYTES}-byte X25519 {kind} key (bytes; decode_public_key reads a "
                                        "config's base64url)")


_PUBLIC_KEY, _PRIVATE_KEY = _key("public"), _key("private")
_CAMPAIGN = Described(Text(), "the campaign id, a non-empty string")
_HEADER_BYTES = 1 + _KEY_ID_BYTES + _ENC_BYTES
_INFO = b"dpdist relay v1\x00"


def _suite():
    try:
        from pyhpke import AEADId, CipherSuite, KDFId, KEMId  # lazy: optional extra dpdist[serve] (pyhpke), tried
    except ImportError:  # pragma: no cover - the serve extra brings it

        raise MissingDependencyError("Sealing reports for a relay needs pyhpke: pip install 'dpdist[serve]'.") from None
    return CipherSuite.new(KEMId.DHKEM_X25519_HKDF_SHA256, KDFId.HKDF_SHA256, AEADId.AES128_GCM)


@validate_params({"public_key": _PUBLIC_KEY})
def key_id(public_key: bytes) -> bytes:
    """The 8-byte id of an X25519 public key: the first bytes of its SHA-256."""
    return hashlib.sha256(public_key).digest()[:_KEY_ID_BYTES]


@dataclass(frozen=True)
class KeyPair:
    """A collector's X25519 key pair (raw 32-byte keys)."""

    private_key: bytes
    public_key: bytes

    @property
    def key_id(self) -> bytes:
        return key_id(self.public_key)


def generate_key() -> KeyPair:
    """A fresh key pair from the operating system's CSPRNG."""
    pair = _suite().kem.derive_key_pair(os.urandom(32))
    return KeyPair(pair.private_key.to_private_bytes(), pair.public_key.to_public_bytes())


@validate_params({"public_key": _PUBLIC_KEY})
def public_key_config(public_key: bytes) -> dict:
    """What a device needs to seal reports: the suite, the public key (base64url, no padding) and its id (hex)."""
    return {**SUITE, "public_key": _b64(public_key), "key_id": key_id(public_key).hex()}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def decode_public_key(text: str) -> bytes:
    """The raw public key of a config's ``public_key`` (base64url, no padding, of 32 bytes)."""
    raw = b""
    if isinstance(text, str):
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
        except ValueError:  # binascii.Error, and non-ASCII text
            raw = b""
    if len(raw) != _KEY_BYTES:
        raise InvalidParameterError(
            f"The 'public_key' of a relayed campaign must be a {_KEY_BYTES}-byte X25519 key in base64url "
            f"(43 characters, no padding). Got {text!r:.100} instead."
        )
    return raw


#: the seed of a report's HPKE ephemeral key, drawn with its token
_SEED = Described(Bytes(_KEY_BYTES), f"{_KEY_BYTES} random bytes (the seed drawn with a token)")


@validate_params({"seed": _SEED})
def ephemeral_key(seed: bytes) -> tuple[bytes, bytes]:
    """``(private key, enc)`` of the HPKE ephemeral key ``DeriveKeyPair(seed)`` (RFC 9180 section 7.1.3), raw: the key
    one report is sealed with, and the ``enc`` its token's nonce commits to (:mod:`._binding`)."""
    pair = _suite().kem.derive_key_pair(seed)
    return pair.private_key.to_private_bytes(), pair.public_key.to_public_bytes()


def _seal_iv(public_key, campaign, body, content_type) -> tuple[bytes, str, bytes, int]:
    """:func:`seal`'s arguments with the kind of its content type (every argument checked by its table)."""
    return public_key, campaign, body, KIND_OF_CONTENT_TYPE[content_type.split(";")[0].strip().lower()]


def _info(campaign: str) -> bytes:
    return _INFO + campaign.encode("utf-8")


@validate_params({"public_key": _PUBLIC_KEY, "campaign": _CAMPAIGN, "body": Bytes(), "content_type": _CONTENT_TYPE,
                  "seed": Optional(_SEED)})
def seal(public_key: bytes, campaign: str, body: bytes, content_type: str, *, seed: bytes | None = None) -> bytes:
    """A device's batch body sealed to the campaign's key (module docstring), with the ephemeral key of ``seed``
    (:func:`ephemeral_key`: the one its token is bound to; sealed once, its bytes kept for resends) or a fresh one.

    Raises :class:`~dpdist.errors.InvalidParameterError` naming the argument for a key that is not 32 bytes or
    not a usable X25519 public key (a low-order point), a campaign that is not an id, a body that is not bytes, a
    content type other than binary records or JSON, or a body too large for one sealed message.
    """
    public_key, campaign, body, kind = _seal_iv(public_key, campaign, body, content_type)
    plain = struct.pack(">BI", kind, len(body)) + body
    plain += bytes(-len(plain) % PADDING)
    suite = _suite()
    header = bytes([VERSION]) + key_id(public_key)
    ephemeral = None if seed is None else suite.kem.derive_key_pair(seed)
    try:
        enc, sender = suite.create_sender_context(suite.kem.deserialize_public_key(public_key), info=_info(campaign),
                                                  eks=ephemeral)
    except ValueError:  # pyhpke: an all-zero shared secret, the key is a low-order point (RFC 7748, section 6.1)
        raise InvalidParameterError(
            "The 'public_key' argument of seal is not a usable X25519 public key: it is a low-order point, whose "
            f"shared secret is all zeros (RFC 7748, section 6.1). Got {_b64(public_key)!r}."
        ) from None
    sealed = header + enc + sender.seal(plain, aad=header)
    if len(sealed) > MAX_SEALED_BYTES:
        raise InvalidParameterError(
            f"The 'body' argument of seal is at most {MAX_SEALED_BYTES} bytes once sealed; this body makes "
            f"{len(sealed)}. Send fewer reports at once."
        )
    return sealed


def check_sealed(sealed: bytes, expected_key_id: bytes | None = None) -> None:
    """What a relay can check without the key: version, key id, length (raises :class:`MalformedReportError`)."""
    if not isinstance(sealed, (bytes, bytearray, memoryview)):
        raise MalformedReportError(f"A sealed report is bytes. Got {type(sealed).__name__}.")
    if len(sealed) < _HEADER_BYTES + _TAG_BYTES + 5 or len(sealed) > MAX_SEALED_BYTES:
        raise MalformedReportError(f"A sealed report is {_HEADER_BYTES + _TAG_BYTES + 5} to {MAX_SEALED_BYTES} bytes. Got {len(sealed)}.")
    if sealed[0] != VERSION:
        raise MalformedReportError(f"Unknown sealed-report version {sealed[0]} (this relay reads version {VERSION}).")
    if expected_key_id is not None and sealed[1 : 1 + _KEY_ID_BYTES] != expected_key_id:
        raise MalformedReportError("The report is sealed to another key than the campaign's current one: fetch its config again.")


def enc_of(sealed: bytes) -> bytes:
    """The HPKE encapsulated key of a sealed message (checked by :func:`check_sealed`): drawn afresh for each sealing."""
    return bytes(sealed[1 + _KEY_ID_BYTES : _HEADER_BYTES])


@validate_params({"private_key": _PRIVATE_KEY, "campaign": _CAMPAIGN, "sealed": Bytes()})
def open_sealed(private_key: bytes, campaign: str, sealed: bytes) -> tuple[str, bytes]:
    """``(content type, body)`` of a sealed message; :class:`MalformedReportError` if it does not open."""
    check_sealed(sealed)
    suite = _suite()
    key = suite.kem.deserialize_private_key(private_key)
    header, enc, ciphertext = sealed[: 1 + _KEY_ID_BYTES], sealed[1 + _KEY_ID_BYTES : _HEADER_BYTES], sealed[_HEADER_BYTES:]
    try:
        plain = suite.create_recipient_context(enc, key, info=_info(campaign)).open(ciphertext, aad=header)
    except Exception:  # pyhpke raises its own errors for a wrong key, tag or encapsulation
        raise MalformedReportError("A sealed report does not open with the campaign's key (wrong key, campaign or bytes).") from None
    kind, length = struct.unpack(">BI", plain[:5])
    if kind not in CONTENT_TYPE_OF_KIND or length > len(plain) - 5 or any(plain[5 + length :]):
        raise MalformedReportError("A sealed report's plaintext is not a dpdist envelope (kind, length, zero padding).")
    return CONTENT_TYPE_OF_KIND[kind], plain[5 : 5 + length]


def frame(messages) -> bytes:
    """Sealed messages as one relayed-batch body: each after its 4-byte length."""
    return b"".join(struct.pack(">I", len(message)) + message for message in messages)


def unframe(body: bytes, max_messages: int | None = None) -> list[bytes]:
    """The sealed messages of a relayed-batch body (:class:`MalformedReportError` if the framing is broken)."""
    messages, offset = [], 0
    while offset < len(body):
        if offset + 4 > len(body):
            raise MalformedReportError("A relayed batch ends inside a length prefix.")
        (length,) = struct.unpack(">I", body[offset : offset + 4])
        if length > MAX_SEALED_BYTES or offset + 4 + length > len(body):
            raise MalformedReportError(f"A relayed batch's message at byte {offset} claims {length} bytes past the end.")
        messages.append(body[offset + 4 : offset + 4 + length])
        offset += 4 + length
        if max_messages is not None and len(messages) > max_messages:
            raise MalformedReportError(f"A relayed batch holds at most {max_messages} messages.")
    return messages
