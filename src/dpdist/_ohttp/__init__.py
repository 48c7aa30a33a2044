"""Oblivious HTTP (RFC 9458): the envelope that dpdist's relay, the collector's gateway and the devices share.

A device encodes its request as Binary HTTP (RFC 9292, :mod:`._bhttp`), encapsulates it to a key
configuration of the gateway (section 4.3) and sends it through a relay that sees who sent something,
not what; the gateway decapsulates it, serves the request, and encapsulates the answer to the same
HPKE context (section 4.4), which only that device can open.

One HPKE suite (RFC 9180): DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM (ids 0x0020, 0x0001,
0x0001), base mode (:mod:`._hpke`, composed of ``cryptography``'s X25519 and AES-GCM and the standard library's
SHA-256); the response's key schedule is HKDF (:func:`._hpke.hmac_sha256`) and AES-128-GCM.  Tested byte for byte on
RFC 9458's Appendix A (``tests/ohttp/test_ohttp.py``).

Key configuration (section 3.1), big-endian::

    key id (1) | KEM id (2) | public key (32) | symmetric algorithms length (2) | (KDF id (2) | AEAD id (2))...

and ``application/ohttp-keys`` (section 3.2): each configuration after its 2-byte length.  An
encapsulated request is ``key id (1) | KEM id (2) | KDF id (2) | AEAD id (2) | enc (32) | ct`` with
``info = "message/bhttp request" | 0x00 | those 7 bytes`` and an empty AAD; the response is
``nonce (16) | ct``, keyed by ``secret = Export("message/bhttp response", 16)``, ``prk = Extract(enc | nonce,
secret)``, ``key = Expand(prk, "key", 16)``, ``nonce = Expand(prk, "nonce", 12)``.

Chunked Oblivious HTTP (``message/ohttp-chunked-req``, draft-ietf-ohai-chunked-ohttp) is read too: the
same header and ``enc``, info ``"message/bhttp chunked request"``, then chunks ``length (varint) | ct``
sealed in sequence with AAD ``""`` until a length of 0, after which the rest is the final chunk, sealed
with AAD ``"final"``; the answer (``message/ohttp-chunked-res``) is keyed from ``"message/bhttp chunked
response"`` and framed the same way, the i-th chunk's nonce the base nonce XOR i.  ``ohttpy`` (PyPI, on a
modified Microsoft ``ohttp``) sends ``message/ohttp-chunked-req`` holding an *unchunked* RFC 9458 request
and reads an answer framed its own way (:data:`OHTTPY_DIALECT`), as Microsoft's attested OHTTP server
sends it: the response's status and header fields in the clear on the outer response, only its content
encapsulated.  The gateway recognizes such a request by the info string it opens under and answers in kind.
The outer content type is the relay's to change, and an RFC 9458 request relabelled as chunked opens as
ohttpy's: dpdist's clients therefore state inside the envelope, in the field :data:`WHOLE_ANSWER_FIELD`, that
they read the whole answer encapsulated, and the gateway refuses such a request opened in ohttpy's dialect
rather than put its answer's status and fields in the clear.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from ..errors import InvalidParameterError, MalformedReportError
from . import _hpke
from ._bhttp import read_varint, write_varint
from ._hpke import hmac_sha256, public_key_of

__all__ = [
    "CHUNKED_REQUEST_CONTENT_TYPE", "CHUNKED_RESPONSE_CONTENT_TYPE", "ClientContext", "KEYS_CONTENT_TYPE", "KeyConfig",
    "KeyConfigMismatch", "OHTTPY_DIALECT", "Opened", "REQUEST_CONTENT_TYPE", "RESPONSE_CONTENT_TYPE", "SUITE_IDS",
    "MAX_CHUNKS", "TooManyChunks", "WHOLE_ANSWER_FIELD", "decapsulate_request", "decode_key_list", "encapsulate_request", "encode_key_list",
    "public_key_of",
]

REQUEST_CONTENT_TYPE = "message/ohttp-req"
RESPONSE_CONTENT_TYPE = "message/ohttp-res"
CHUNKED_REQUEST_CONTENT_TYPE = "message/ohttp-chunked-req"
CHUNKED_RESPONSE_CONTENT_TYPE = "message/ohttp-chunked-res"
KEYS_CONTENT_TYPE = "application/ohttp-keys"
#: the one suite: KEM, KDF, AEAD (RFC 9180 section 7)
SUITE_IDS = (0x0020, 0x0001, 0x0001)
#: ``message/ohttp-chunked-req`` as ohttpy sends it: an RFC 9458 request; its answer's status and fields on the outer
#: response, its content framed with LEB128 lengths, a length after the final indicator, keyed from RFC 9458's label (a
#: modified Microsoft ``ohttp``, not the draft)
OHTTPY_DIALECT = "ohttpy"
#: the inner field (name, value) by which dpdist's clients state, under HPKE, that they read the whole answer encapsulated
#: (``message/ohttp-res``): a request carrying it is never answered in :data:`OHTTPY_DIALECT`
WHOLE_ANSWER_FIELD = (b"dpdist-ohttp-answer", b"encapsulated")
_KEM, _KDF, _AEAD = SUITE_IDS
_REQUEST_LABEL, _RESPONSE_LABEL = b"message/bhttp request", b"message/bhttp response"
_CHUNKED_REQUEST_LABEL, _CHUNKED_RESPONSE_LABEL = b"message/bhttp chunked request", b"message/bhttp chunked response"
_HEADER_BYTES, _ENC_BYTES, _KEY_BYTES, _TAG_BYTES, _NONCE_BYTES, _AEAD_KEY_BYTES, _AEAD_NONCE_BYTES = 7, 32, 32, 16, 16, 16, 12
_FINAL = b"final"
_SUITE_HEADER = struct.pack(">HHH", *SUITE_IDS)  # the KEM, KDF and AEAD ids of a request's header
#: largest plaintext of one chunk this gateway accepts (the draft's recommended ceiling, 2^14 bytes)
MAX_CHUNK_BYTES = 1 << 14
#: most chunks of one chunked request opened when the caller names no cap (one AES-GCM open each: a 16 MiB body in
#: 1-byte chunks cost 2 s of CPU)
MAX_CHUNKS = 4096


class TooManyChunks(MalformedReportError):
    """A chunked request cut into more chunks than the gateway opens (``too_many_chunks``)."""


class KeyConfigMismatch(MalformedReportError):
    """An encapsulated request for a key id or algorithms the gateway does not have (RFC 9458 section 5.3: the client's
    key configuration is not the gateway's)."""


# ---------------------------------------------------------------------- key configurations (section 3)
@dataclass(frozen=True)
class KeyConfig:
    """One key configuration: its id (0-255), KEM, public key and the (KDF, AEAD) pairs it accepts."""

    key_id: int
    public_key: bytes
    symmetric: tuple[tuple[int, int], ...] = ((_KDF, _AEAD),)
    kem_id: int = _KEM

    def encode(self) -> bytes:
        """The configuration's bytes (section 3.1)."""
        if not 0 <= self.key_id <= 255 or len(self.public_key) != _KEY_BYTES or not self.symmetric:
            raise InvalidParameterError(f"A key configuration has a key id 0-255, a {_KEY_BYTES}-byte X25519 key and at "
                                        f"least one (KDF, AEAD) pair. Got id {self.key_id}, {len(self.public_key)} bytes.")
        algorithms = b"".join(struct.pack(">HH", kdf, aead) for kdf, aead in self.symmetric)
        return struct.pack(">BH", self.key_id, self.kem_id) + self.public_key + struct.pack(">H", len(algorithms)) + algorithms

    @property
    def supported(self) -> bool:
        """Whether this configuration offers dpdist's suite (X25519 and HKDF-SHA256 with AES-128-GCM)."""
        return self.kem_id == _KEM and (_KDF, _AEAD) in self.symmetric


def _decode_config(raw: bytes) -> KeyConfig:
    if len(raw) < 3:
        raise MalformedReportError("A key configuration ends inside its key id or KEM id.")
    key_id, kem_id = struct.unpack(">BH", raw[:3])
    if kem_id != _KEM:  # the public key's length depends on the KEM: one this code does not know cannot be read
        raise MalformedReportError(f"A key configuration's KEM is {kem_id:#06x}; this code reads DHKEM(X25519, HKDF-SHA256) "
                                   f"({_KEM:#06x}) only.")
    if len(raw) < 3 + _KEY_BYTES + 2:
        raise MalformedReportError("A key configuration ends inside its public key.")
    public_key = raw[3 : 3 + _KEY_BYTES]
    (length,) = struct.unpack(">H", raw[3 + _KEY_BYTES : 5 + _KEY_BYTES])
    algorithms = raw[5 + _KEY_BYTES :]
    if length != len(algorithms) or length == 0 or length % 4:
        raise MalformedReportError(f"A key configuration's algorithms claim {length} bytes; it holds {len(algorithms)} "
                                   "(a non-zero multiple of 4).")
    pairs = tuple(struct.unpack(">HH", algorithms[i : i + 4]) for i in range(0, length, 4))
    return KeyConfig(key_id, bytes(public_key), pairs, kem_id)


def encode_key_list(configs) -> bytes:
    """``application/ohttp-keys``: each configuration after its 2-byte length (section 3.2)."""
    return b"".join(struct.pack(">H", len(encoded)) + encoded for encoded in (config.encode() for config in configs))


def decode_key_list(raw: bytes) -> list[KeyConfig]:
    """The configurations of an ``application/ohttp-keys`` document (:class:`MalformedReportError` if broken)."""
    raw, configs, offset = bytes(raw), [], 0
    while offset < len(raw):
        if offset + 2 > len(raw):
            raise MalformedReportError("An application/ohttp-keys document ends inside a length.")
        (length,) = struct.unpack(">H", raw[offset : offset + 2])
        if offset + 2 + length > len(raw):
            raise MalformedReportError(f"An application/ohttp-keys configuration claims {length} bytes past the end.")
        configs.append(_decode_config(raw[offset + 2 : offset + 2 + length]))
        offset += 2 + length
    if not configs:
        raise MalformedReportError("An application/ohttp-keys document holds no key configuration.")
    return configs


# ---------------------------------------------------------------------- the response's key schedule (section 4.4)
def response_keys(secret: bytes, enc: bytes, response_nonce: bytes) -> tuple[bytes, bytes]:
    """``(aead key, aead nonce)`` of a response (section 4.4): Extract(enc | nonce, secret), then Expand "key", "nonce"
    (each one HMAC: HKDF-Expand's first block, ``info | 0x01``)."""
    prk = hmac_sha256(enc + response_nonce, secret)
    return hmac_sha256(prk, b"key\x01")[:_AEAD_KEY_BYTES], hmac_sha256(prk, b"nonce\x01")[:_AEAD_NONCE_BYTES]


def _chunk_nonce(base: bytes, counter: int) -> bytes:
    return (int.from_bytes(base, "big") ^ counter).to_bytes(_AEAD_NONCE_BYTES, "big")


def _header(key_id: int) -> bytes:
    return struct.pack(">BHHH", key_id, _KEM, _KDF, _AEAD)


# ---------------------------------------------------------------------- the device's side
class ClientContext:
    """What a device keeps of one request to open its response: the HPKE context and ``enc``."""

    def __init__(self, context, enc: bytes):
        self._context, self.enc = context, enc

    def open_response(self, data: bytes) -> bytes:
        """The Binary HTTP response in an encapsulated response (:class:`MalformedReportError` if it does not open)."""
        data = bytes(data)
        if len(data) < _NONCE_BYTES + _TAG_BYTES:
            raise MalformedReportError(f"An encapsulated response is at least {_NONCE_BYTES + _TAG_BYTES} bytes. Got {len(data)}.")
        key, nonce = response_keys(self._context.export(_RESPONSE_LABEL, _NONCE_BYTES), self.enc, data[:_NONCE_BYTES])
        try:
            return _hpke.aead(key).decrypt(nonce, data[_NONCE_BYTES:], b"")
        except Exception:  # cryptography's InvalidTag
            raise MalformedReportError("The encapsulated response does not open with this request's context: it was "
                                       "changed on the way, or is not the answer to this request.") from None


def encapsulate_request(config: KeyConfig, message: bytes, *, ephemeral_private_key: bytes | None = None
                        ) -> tuple[bytes, ClientContext]:
    """``message`` (a Binary HTTP request) encapsulated to ``config`` (section 4.3), and the context that opens its
    answer.  ``ephemeral_private_key``: a fixed ephemeral key (a published example's; or a relayed report's, the one its
    token is bound to: :mod:`dpdist._wire._binding`), used for one message only."""
    if not isinstance(config, KeyConfig) or not config.supported:
        raise InvalidParameterError("The key configuration must offer DHKEM(X25519, HKDF-SHA256) with HKDF-SHA256 and "
                                    f"AES-128-GCM, the one suite dpdist speaks. Got {config!r:.200}.")
    header = _header(config.key_id)
    try:
        enc, context = _hpke.setup_sender(config.public_key, _REQUEST_LABEL + b"\x00" + header, ephemeral_private_key)
    except ValueError:  # an all-zero shared secret: a low-order point (RFC 7748 section 6.1)
        raise InvalidParameterError("The key configuration's public key is not a usable X25519 key (a low-order "
                                    "point, RFC 7748 section 6.1).") from None
    return header + enc + context.seal(bytes(message), aad=b""), ClientContext(context, enc)


# ---------------------------------------------------------------------- the gateway's side
class Opened(NamedTuple):
    """A decapsulated request: the Binary HTTP message, how its answer is encapsulated (``respond(message)``) and the
    answer's content type; ``key_id`` names the key it was encapsulated to.  ``dialect`` :data:`OHTTPY_DIALECT`: the
    answer's status and fields go on the outer response and ``respond`` takes its content only (not Binary HTTP)."""

    message: bytes
    key_id: int
    response_content_type: str
    respond: Callable[..., bytes]
    dialect: str | None = None


def _recipient(keys: Mapping[int, bytes], data: bytes, label: bytes):
    """The HPKE context of a request's header and ``enc`` under ``label``, and ``enc`` (``KeyConfigMismatch`` for a key
    id or suite this gateway does not have)."""
    if len(data) < _HEADER_BYTES + _ENC_BYTES:
        raise MalformedReportError(f"An encapsulated request is at least {_HEADER_BYTES + _ENC_BYTES} bytes. Got {len(data)}.")
    key_id = data[0]
    if key_id not in keys or data[1:_HEADER_BYTES] != _SUITE_HEADER:
        _, kem, kdf, aead = struct.unpack(">BHHH", data[:_HEADER_BYTES])
        raise KeyConfigMismatch(f"The request is encapsulated to key id {key_id} with suite ({kem:#06x}, {kdf:#06x}, "
                                f"{aead:#06x}); this gateway holds key ids {sorted(keys)} with {tuple(map(hex, SUITE_IDS))}: "
                                "fetch its key configuration again.")
    enc = data[_HEADER_BYTES : _HEADER_BYTES + _ENC_BYTES]
    try:
        context = _hpke.setup_recipient(enc, keys[key_id], label + b"\x00" + data[:_HEADER_BYTES])
    except ValueError:  # a low-order enc: an all-zero shared secret
        raise MalformedReportError("The encapsulated request's enc is not a usable X25519 key.") from None
    return key_id, context, enc


def _open(context, ciphertext: bytes, aad: bytes) -> bytes:
    try:
        return context.open(ciphertext, aad=aad)
    except Exception:  # cryptography's InvalidTag: a wrong key or tag
        raise MalformedReportError("The encapsulated request does not open with the gateway's key (changed on the way, "
                                   "or encapsulated to another key).") from None


#: response nonces drawn from the CSPRNG and not used yet, each taken once (``list.pop`` is atomic: never two answers')
_NONCES: list[bytes] = []
os.register_at_fork(after_in_child=_NONCES.clear)  # a forked process draws its own, never its parent's


def _fresh_nonce() -> bytes:
    """A response nonce from the CSPRNG: read 256 at a time, one system call per 256 answers (one per answer cost the
    gateway about 3 us with cold caches)."""
    try:
        return _NONCES.pop()
    except IndexError:
        block = os.urandom(256 * _NONCE_BYTES)
        _NONCES.extend(block[at : at + _NONCE_BYTES] for at in range(0, len(block), _NONCE_BYTES))
        return _NONCES.pop()


def _response_keying(context, enc: bytes, response_nonce: bytes | None = None) -> tuple[bytes, object, bytes]:
    """``(response nonce, AES-GCM under the response's key, its AEAD nonce)`` of RFC 9458's answer (section 4.4) to the
    request of ``context`` and ``enc``: a fresh nonce from the CSPRNG (or ``response_nonce``, a published example's)."""
    nonce = _fresh_nonce() if response_nonce is None else bytes(response_nonce)
    key, aead_nonce = response_keys(context.export(_RESPONSE_LABEL, _NONCE_BYTES), enc, nonce)
    return nonce, _hpke.aead(key), aead_nonce


def _seal_response(keying: tuple, message: bytes) -> bytes:
    """RFC 9458's encapsulated answer: ``nonce | ct`` (``keying``: :func:`_response_keying`'s)."""
    nonce, aead, aead_nonce = keying
    return nonce + aead.encrypt(aead_nonce, bytes(message), b"")


def _decapsulate_whole(keys: Mapping[int, bytes], data: bytes, response_content_type: str, seal,
                       dialect: str | None = None) -> Opened:
    key_id, context, enc = _recipient(keys, data, _REQUEST_LABEL)
    message = _open(context, data[_HEADER_BYTES + _ENC_BYTES :], b"")
    # the answer's key now, while the key schedule's code is in the processor's caches: derived after the inner
    # request is served, behind the database's commit, it cost several times as much
    keying = _response_keying(context, enc)
    return Opened(message, key_id, response_content_type, lambda answer, response_nonce=None: seal(
        keying if response_nonce is None else _response_keying(context, enc, response_nonce), answer), dialect)


def decapsulate_request(keys: Mapping[int, bytes], data: bytes, *, chunked: bool = False,
                        max_chunks: int = MAX_CHUNKS) -> Opened:
    """The request in ``data`` (``message/ohttp-req``; ``chunked``: ``message/ohttp-chunked-req``, the draft's or
    ohttpy's), opened with the private key of its key id in ``keys`` (``{key id: raw private key}``); a chunked one
    in at most ``max_chunks`` chunks, the final one included.

    Raises :class:`KeyConfigMismatch` for a key id or suite not in ``keys``, :class:`TooManyChunks` past
    ``max_chunks`` (before opening more), :class:`MalformedReportError` for anything that does not open or is not
    framed as the format says.
    """
    data = bytes(data)
    if not chunked:
        return _decapsulate_whole(keys, data, RESPONSE_CONTENT_TYPE, _seal_response)
    try:
        return _decapsulate_chunked(keys, data, max_chunks)
    except (KeyConfigMismatch, TooManyChunks):
        raise
    except MalformedReportError as draft_error:  # not the draft's: ohttpy's unchunked request under the chunked type?
        try:
            return _decapsulate_whole(keys, data, CHUNKED_RESPONSE_CONTENT_TYPE, _seal_ohttpy_response, OHTTPY_DIALECT)
        except MalformedReportError:
            raise draft_error from None


def _decapsulate_chunked(keys: Mapping[int, bytes], data: bytes, max_chunks: int) -> Opened:
    """A draft-ietf-ohai-chunked-ohttp request (module docstring) of at most ``max_chunks`` chunks."""
    key_id, context, enc = _recipient(keys, data, _CHUNKED_REQUEST_LABEL)
    offset, chunks = _HEADER_BYTES + _ENC_BYTES, []
    while True:
        length, offset = read_varint(data, offset)
        if length == 0:  # the final chunk: the rest of the message
            chunks.append(_open(context, data[offset:], _FINAL))
            break
        if len(chunks) + 1 >= max_chunks:  # this one and the final one would pass the cap
            raise TooManyChunks(f"The chunked request holds more than {max_chunks} chunks (the final one included): "
                                f"send chunks of a few KiB or more (up to {MAX_CHUNK_BYTES} bytes of plaintext).")
        if length > MAX_CHUNK_BYTES + _TAG_BYTES or offset + length > len(data):
            raise MalformedReportError(f"A chunk of the request claims {length} bytes (past the end, or over "
                                       f"{MAX_CHUNK_BYTES} bytes of plaintext).")
        chunks.append(_open(context, data[offset : offset + length], b""))
        offset += length
    return Opened(b"".join(chunks), key_id, CHUNKED_RESPONSE_CONTENT_TYPE,
                  lambda answer, response_nonce=None: _seal_chunked_response(context, enc, answer, response_nonce))


def _seal_chunked_response(context, enc: bytes, message: bytes, response_nonce: bytes | None) -> bytes:
    """The draft's chunked response: the answer in chunks of at most :data:`MAX_CHUNK_BYTES`, then an empty final one."""
    nonce = _fresh_nonce() if response_nonce is None else bytes(response_nonce)
    key, base = response_keys(context.export(_CHUNKED_RESPONSE_LABEL, _NONCE_BYTES), enc, nonce)
    aead, out = _hpke.aead(key), [nonce]
    parts = [message[i : i + MAX_CHUNK_BYTES] for i in range(0, len(message), MAX_CHUNK_BYTES)]
    for counter, part in enumerate(parts):
        sealed = aead.encrypt(_chunk_nonce(base, counter), part, b"")
        out.append(write_varint(len(sealed)) + sealed)
    out.append(b"\x00" + aead.encrypt(_chunk_nonce(base, len(parts)), b"", _FINAL))
    return b"".join(out)


def _leb128(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _seal_ohttpy_response(keying: tuple, message: bytes) -> bytes:
    """The answer as ohttpy reads it (:data:`OHTTPY_DIALECT`): ``nonce | 0 | LEB128(length) | ct``, one final chunk sealed
    with AAD ``"final"`` under RFC 9458's response key (its first nonce, counter 0: ``keying``'s AEAD nonce)."""
    nonce, aead, base = keying
    sealed = aead.encrypt(_chunk_nonce(base, 0), bytes(message), _FINAL)
    return nonce + b"\x00" + _leb128(len(sealed)) + sealed
