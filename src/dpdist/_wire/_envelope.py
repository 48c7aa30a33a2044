"""dpdist's own sealed envelope, deprecated: opened by the collector and checked by the relay for devices of earlier
versions until dpdist 0.2.0, which removes it.  No dpdist client seals in it any more: every relayed report is an
RFC 9458 request (:mod:`._ohttp_report`), and ``docs/how-to/ohttp.md`` ("dpdist's own envelope: deprecated") states
what a deployed device that still sends it gets until then.

A report sealed with HPKE (RFC 9180; :mod:`dpdist._ohttp._hpke`) to the campaign's envelope key (not its Oblivious
HTTP key), all integers big-endian::

    version (1 byte, = 1) | key id (8 bytes) | enc (32 bytes) | ciphertext (AEAD, 16-byte tag)

with ``info = b"dpdist relay v1\\x00" + campaign id`` and ``aad = version | key id``; the key id is the first 8 bytes of
SHA-256 of the public key, and the plaintext ``kind (1 byte) | body length (4 bytes) | body | zeros`` padded to a
multiple of 256 bytes (kind 1: dpdist binary records, 2: JSON).  One suite: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
AES-128-GCM, base mode.  A relayed campaign's identity still names the envelope's key (``relay.public_key``,
``relay.key_id``), so that such a device can take part in a campaign that takes the envelope (``relay.sealed_v1``).
"""

from __future__ import annotations

import base64
import hashlib
import os
import struct
from dataclasses import dataclass

from ..errors import MalformedReportError
from .._ohttp import _hpke
from .._validation import Bytes, Described, Text, validate_params
from ._frames import MAX_SEALED_BYTES

__all__ = ["KeyPair", "PADDING", "SEALED_CONTENT_TYPE", "check_sealed", "enc_of", "generate_key", "open_sealed",
           "public_key_config"]

VERSION = 1
#: the content type of one sealed submission, device to relay
SEALED_CONTENT_TYPE = "application/vnd.dpdist.sealed-report"
SUITE = {"kem": "DHKEM(X25519, HKDF-SHA256)", "kdf": "HKDF-SHA256", "aead": "AES-128-GCM", "ids": [0x0020, 0x0001, 0x0001]}
CONTENT_TYPE_OF_KIND = {1: "application/octet-stream", 2: "application/json"}
PADDING = 256
_KEY_ID_BYTES, _TAG_BYTES, _KEY_BYTES = 8, 16, 32
_HEADER_BYTES = 1 + _KEY_ID_BYTES + _KEY_BYTES
_INFO = b"dpdist relay v1\x00"
_PRIVATE_KEY = Described(Bytes(_KEY_BYTES), f"a raw {_KEY_BYTES}-byte X25519 private key (bytes)")
_CAMPAIGN = Described(Text(), "the campaign id, a non-empty string")


def key_id(public_key: bytes) -> bytes:
    """The 8-byte id of an X25519 public key: the first bytes of its SHA-256."""
    return hashlib.sha256(public_key).digest()[:_KEY_ID_BYTES]


@dataclass(frozen=True)
class KeyPair:
    """A collector's X25519 key pair of the envelope (raw 32-byte keys)."""

    private_key: bytes
    public_key: bytes

    @property
    def key_id(self) -> bytes:
        return key_id(self.public_key)


def generate_key() -> KeyPair:
    """A fresh key pair from the operating system's CSPRNG (any 32 bytes are an X25519 private key: RFC 7748)."""
    private_key = os.urandom(_KEY_BYTES)
    return KeyPair(private_key, _hpke.public_key_of(private_key))


def public_key_config(public_key: bytes) -> dict:
    """What a device of an earlier version sealed to: the suite, the public key (base64url, no padding), its id (hex)."""
    encoded = base64.urlsafe_b64encode(public_key).rstrip(b"=").decode()
    return {**SUITE, "public_key": encoded, "key_id": key_id(public_key).hex()}


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
    header, enc = bytes(sealed[: 1 + _KEY_ID_BYTES]), enc_of(sealed)
    try:
        plain = _hpke.setup_recipient(enc, private_key, _INFO + campaign.encode("utf-8")).open(bytes(sealed[_HEADER_BYTES:]),
                                                                                             aad=header)
    except Exception:  # ValueError for a low-order enc, cryptography's InvalidTag for a wrong key, tag or campaign
        raise MalformedReportError("A sealed report does not open with the campaign's key (wrong key, campaign or bytes).") from None
    kind, length = struct.unpack(">BI", plain[:5])
    if kind not in CONTENT_TYPE_OF_KIND or length > len(plain) - 5 or any(plain[5 + length :]):
        raise MalformedReportError("A sealed report's plaintext is not a dpdist envelope (kind, length, zero padding).")
    return CONTENT_TYPE_OF_KIND[kind], plain[5 : 5 + length]
