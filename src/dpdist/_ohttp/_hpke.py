"""HPKE (RFC 9180), base mode, of the one suite Oblivious HTTP speaks here: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
AES-128-GCM (ids 0x0020, 0x0001, 0x0001).

Composed of ``cryptography``'s X25519 and AES-GCM and the standard library's SHA-256, each HKDF step one HMAC
(:func:`hmac_sha256`): every length this suite derives is at most one SHA-256 block, so Expand is one HMAC (RFC 5869
section 2.3, ``T(1)``).  The steps are RFC 9180's: ``LabeledExtract`` and ``LabeledExpand``
(section 4), the KEM's ``ExtractAndExpand`` (section 4.1) and ``DeriveKeyPair`` (section 7.1.3), ``KeySchedule``
(section 5.1), the nonce of each sequence number (section 5.2) and ``Export`` (section 5.3).  ``cryptography``'s own ``hpke.Suite`` seals and opens
in one shot and exports nothing, which an Oblivious HTTP answer is keyed from.  Checked against RFC 9180
Appendix A.1.1 and against ``pyhpke`` (``tests/ohttp/test_hpke.py``).
"""

from __future__ import annotations

import functools
import hashlib

from ..errors import MissingDependencyError

__all__ = ["Context", "aead", "derive_key_pair", "hmac_sha256", "setup_recipient", "setup_sender", "public_key_of", "KEY_BYTES"]

#: bytes of an X25519 key (private or public) and of ``enc``
KEY_BYTES = 32
_VERSION = b"HPKE-v1"
#: the KEM's suite id (section 4.1) and the whole suite's (section 5.1)
_KEM_ID = b"KEM\x00\x20"
_SUITE_ID = b"HPKE\x00\x20\x00\x01\x00\x01"
_KEY, _NONCE, _SECRET = 16, 12, 32  # AES-128-GCM's Nk and Nn, SHA-256's Nh


@functools.cache
def _crypto():
    """``cryptography``'s X25519 key classes and AES-GCM (imported once: an import statement costs microseconds a call)."""
    try:
        from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey, X25519PublicKey  # lazy: optional extra dpdist[serve]
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # lazy: optional extra dpdist[serve]
    except ImportError:  # pragma: no cover - the serve extra brings it
        raise MissingDependencyError("Oblivious HTTP needs cryptography: pip install 'dpdist[serve]'.") from None
    return X25519PrivateKey, X25519PublicKey, AESGCM


def aead(key: bytes):
    """``cryptography``'s AES-GCM keyed with ``key`` (16 bytes: AES-128-GCM)."""
    return _crypto()[2](key)


#: a key's bytes XOR RFC 2104's ipad and opad (0x36, 0x5C), as :mod:`hmac` pads one
_IPAD, _OPAD = bytes(x ^ 0x36 for x in range(256)), bytes(x ^ 0x5C for x in range(256))
_BLOCK = 64  # SHA-256's block
_sha256 = hashlib.sha256


def hmac_sha256(key: bytes, message: bytes) -> bytes:
    """HMAC-SHA256 (RFC 2104) of two SHA-256 hashes from :mod:`hashlib`: :func:`hmac.digest` gives the same bytes but
    goes through OpenSSL's HMAC, whose setup per call costs more than the two hashes of a short message (a request's ten
    HMACs took 32 us with cold caches, 16 this way)."""
    if len(key) > _BLOCK:
        key = _sha256(key).digest()
    key = key.ljust(_BLOCK, b"\x00")
    return _sha256(key.translate(_OPAD) + _sha256(key.translate(_IPAD) + message).digest()).digest()


def _labeled_extract(suite: bytes, salt: bytes, label: bytes, ikm: bytes) -> bytes:
    """``LabeledExtract`` (section 4): HKDF-Extract, an empty salt read as HashLen zeros (as HMAC pads its key)."""
    return hmac_sha256(salt, _VERSION + suite + label + ikm)


def _expand_prefix(suite: bytes, label: bytes, length: int) -> bytes:
    """What ``LabeledExpand`` (section 4) of ``length`` bytes under ``label`` puts before its info."""
    return length.to_bytes(2, "big") + _VERSION + suite + label


def _labeled_expand(suite: bytes, prk: bytes, label: bytes, info: bytes, length: int) -> bytes:
    """``LabeledExpand`` (section 4) of at most 32 bytes: HKDF-Expand's first block ``T(1)``."""
    return hmac_sha256(prk, _expand_prefix(suite, label, length) + info + b"\x01")[:length]


#: the labels of each step, written once: DHKEM's ExtractAndExpand, the key schedule's secret, export's
_EAE_PRK, _SHARED_SECRET = _VERSION + _KEM_ID + b"eae_prk", _expand_prefix(_KEM_ID, b"shared_secret", _SECRET)
_SCHEDULE_SECRET, _EXPORT = _VERSION + _SUITE_ID + b"secret", _VERSION + _SUITE_ID + b"sec"


def _shared_secret(dh: bytes, enc: bytes, public_key: bytes) -> bytes:
    """DHKEM's ``ExtractAndExpand(dh, enc || pkRm)`` (section 4.1)."""
    return hmac_sha256(hmac_sha256(b"", _EAE_PRK + dh), _SHARED_SECRET + enc + public_key + b"\x01")


@functools.lru_cache(maxsize=64)
def _schedule(info: bytes) -> tuple[bytes, bytes, bytes]:
    """The messages of the key schedule's three expansions (section 5.1: ``key``, ``base_nonce``, ``exp``) of base
    mode under ``info``, each of ``key_schedule_context = mode || psk_id_hash || info_hash`` (empty psk and id)."""
    context = (b"\x00" + _labeled_extract(_SUITE_ID, b"", b"psk_id_hash", b"")
               + _labeled_extract(_SUITE_ID, b"", b"info_hash", info))
    return (_expand_prefix(_SUITE_ID, b"key", _KEY) + context + b"\x01",
            _expand_prefix(_SUITE_ID, b"base_nonce", _NONCE) + context + b"\x01",
            _expand_prefix(_SUITE_ID, b"exp", _SECRET) + context + b"\x01")


class Context:
    """An HPKE context (section 5.1) of one side: seal or open in sequence (section 5.2), export secrets (5.3)."""

    def __init__(self, shared_secret: bytes, info: bytes):
        key, base_nonce, exporter = _schedule(info)
        secret = hmac_sha256(shared_secret, _SCHEDULE_SECRET)  # LabeledExtract(shared_secret, "secret", psk = "")
        self._aead = _crypto()[2](hmac_sha256(secret, key)[:_KEY])
        self._base_nonce = int.from_bytes(hmac_sha256(secret, base_nonce)[:_NONCE], "big")
        self._exporter = hmac_sha256(secret, exporter)
        self._sequence = 0

    def _nonce(self) -> bytes:
        """``ComputeNonce(seq)``: the base nonce XOR the sequence number."""
        return (self._base_nonce ^ self._sequence).to_bytes(_NONCE, "big")

    def seal(self, plaintext: bytes, aad: bytes = b"") -> bytes:
        """The next message sealed (its sequence number then advances)."""
        sealed = self._aead.encrypt(self._nonce(), plaintext, aad)
        self._sequence += 1
        return sealed

    def open(self, ciphertext: bytes, aad: bytes = b"") -> bytes:
        """The next message opened (``cryptography``'s ``InvalidTag`` if it does not open; the sequence number then
        stays)."""
        opened = self._aead.decrypt(self._nonce(), ciphertext, aad)
        self._sequence += 1
        return opened

    def export(self, exporter_context: bytes, length: int) -> bytes:
        """``Export(exporter_context, L)`` of at most 32 bytes."""
        if not 0 < length <= _SECRET:
            raise ValueError(f"this suite exports 1 to {_SECRET} bytes at once, not {length}")
        return hmac_sha256(self._exporter, length.to_bytes(2, "big") + _EXPORT + exporter_context + b"\x01")[:length]


@functools.lru_cache(maxsize=8)
def _private_key(raw: bytes):
    """The X25519 key of a raw private key and its raw public key, kept for the keys in use (reading one costs a
    scalar multiplication: once per key, not once per request)."""
    key = _crypto()[0].from_private_bytes(raw)
    return key, key.public_key().public_bytes_raw()


def public_key_of(private_key: bytes) -> bytes:
    """The raw X25519 public key of a raw private key (RFC 7748; not kept: an ephemeral key's too)."""
    return _crypto()[0].from_private_bytes(bytes(private_key)).public_key().public_bytes_raw()


def derive_key_pair(ikm: bytes) -> tuple[bytes, bytes]:
    """``DeriveKeyPair(ikm)`` of DHKEM(X25519, HKDF-SHA256) (section 7.1.3): the raw private key and its public key."""
    private_key = _labeled_expand(_KEM_ID, _labeled_extract(_KEM_ID, b"", b"dkp_prk", bytes(ikm)), b"sk", b"", KEY_BYTES)
    return private_key, public_key_of(private_key)


def setup_recipient(enc: bytes, private_key: bytes, info: bytes) -> Context:
    """``SetupBaseR`` (section 5.1.1): the recipient's context of ``enc`` under its raw ``private_key``.

    Raises ValueError for an ``enc`` that is no usable X25519 key (its length, or a low-order point: an all-zero
    shared secret, RFC 7748 section 6.1)."""
    key, public_key = _private_key(private_key if type(private_key) is bytes else bytes(private_key))
    dh = key.exchange(_crypto()[1].from_public_bytes(enc))
    return Context(_shared_secret(dh, enc, public_key), info if type(info) is bytes else bytes(info))


def setup_sender(public_key: bytes, info: bytes, ephemeral_private_key: bytes | None = None) -> tuple[bytes, Context]:
    """``SetupBaseS`` (section 5.1.1): ``enc`` and the sender's context to the raw ``public_key``, with a fresh
    ephemeral key from the CSPRNG (or ``ephemeral_private_key``, a published example's, for one message only).

    Raises ValueError for a ``public_key`` that is no usable X25519 key."""
    private, public = _crypto()[:2]
    ephemeral = private.generate() if ephemeral_private_key is None else private.from_private_bytes(bytes(ephemeral_private_key))
    enc = ephemeral.public_key().public_bytes_raw()
    dh = ephemeral.exchange(public.from_public_bytes(bytes(public_key)))
    return enc, Context(_shared_secret(dh, enc, bytes(public_key)), bytes(info))
