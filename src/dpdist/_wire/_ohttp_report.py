"""A relayed campaign's report as an Oblivious HTTP request (RFC 9458) through dpdist's relay: the one envelope devices use.

A relayed campaign has an Oblivious HTTP key configuration of its own: key id :data:`KEY_ID`, DHKEM(X25519,
HKDF-SHA256), HKDF-SHA256, AES-128-GCM, named in the campaign's identity (``relay.ohttp``: the
``application/ohttp-keys`` document of that one configuration, base64url), so the identity's pin covers it.
A device encapsulates each report to it (:func:`encapsulate_report`) as the Binary HTTP request it would
send a gateway, always the same form (:func:`report_request`)::

    PUT https:///api/campaigns/{campaign}/batches/{32 random hex digits}
    content-type: application/octet-stream | application/json
    <one report: a dpdist binary record, or JSON>

with no authority and no other field (nothing that names the client, its version or the server it was
given), zero-padded (RFC 9292 section 3.8) to :func:`~dpdist._ohttp._padding.padded_length`.  The request's HPKE
ephemeral key is ``DeriveKeyPair(seed)`` (:func:`ephemeral_key`) of the seed drawn with the report's Privacy Pass
token, whose nonce commits to its ``enc`` (:mod:`._binding`).  The relay checks what it can without the key
(:func:`check_encapsulated`: the key id, the suite, the length) and queues the bytes as they came; the collector
opens them (:func:`open_report`) with the campaign's Oblivious HTTP private key.  In a relayed batch a report in
dpdist's deprecated envelope (:mod:`._envelope`, from a device of an earlier version) is told apart by its first
byte: the envelope's version (1), an encapsulated request's key id (:data:`KEY_ID`, 0).  The inner batch id is
drawn afresh for each encapsulation and read by no one: the relay's batch id is the one counted.
"""

from __future__ import annotations

import base64
import re
import secrets

import functools
import json

import numpy as np

from .._io._binary import encode_record
from ..errors import DPDistError, MalformedReportError
from ..local import from_config
from .. import _ohttp
from .._ohttp import _bhttp
from .._ohttp._padding import padded_length
from .._ohttp._hpke import derive_key_pair
from .._validation import Bytes, Described, validate_params
from ._frames import MAX_SEALED_BYTES

__all__ = ["KEY_ID", "NotAReport", "REPORT_CONTENT_TYPES", "campaign_key_config", "check_encapsulated", "enc_of",
           "encapsulate_report", "ephemeral_key", "is_encapsulated", "key_list", "open_report", "report_length",
           "report_request"]

#: the key id of every relayed campaign's Oblivious HTTP key configuration (dpdist's deprecated envelope starts with 1)
KEY_ID = 0
#: the content types of a report inside a request: dpdist binary records, or JSON
REPORT_CONTENT_TYPES = frozenset({"application/octet-stream", "application/vnd.dpdist.reports", "application/json"})
_HEADER = bytes([KEY_ID]) + b"".join(value.to_bytes(2, "big") for value in _ohttp.SUITE_IDS)
_SMALLEST = len(_HEADER) + 32 + 16  # header, enc, AEAD tag
_PATH = re.compile(r"/api/campaigns/([A-Za-z0-9._-]{1,128})/batches/[0-9a-f]{32}")


class NotAReport(MalformedReportError):
    """An encapsulated report the collector cannot count, with the ``reason`` its rejected row names: ``unopened`` (it
    does not decapsulate with the campaign's key), ``malformed_binary_http`` (RFC 9292 broken inside), or
    ``not_a_report_request`` (not :func:`report_request`'s form for this campaign)."""

    def __init__(self, reason: str, detail: str):
        super().__init__(detail)
        self.reason = reason


def key_list(public_key: bytes) -> bytes:
    """The ``application/ohttp-keys`` of a relayed campaign: its one configuration, key id :data:`KEY_ID`."""
    return _ohttp.encode_key_list([_ohttp.KeyConfig(KEY_ID, bytes(public_key))])


def campaign_key_config(relay: dict) -> _ohttp.KeyConfig | None:
    """The key configuration an identity's ``relay`` names (``relay.ohttp``), or None for a campaign made before
    (:class:`MalformedReportError` for one that is not a single configuration of key id :data:`KEY_ID` in dpdist's
    suite)."""
    text = relay.get("ohttp") if isinstance(relay, dict) else None
    if text is None:
        return None
    try:
        configs = _ohttp.decode_key_list(base64.urlsafe_b64decode(str(text) + "=" * (-len(str(text)) % 4)))
    except ValueError as error:  # binascii.Error; MalformedReportError is a ValueError too
        raise MalformedReportError(f"The identity's relay.ohttp is not an application/ohttp-keys document: {error}") from None
    if len(configs) != 1 or configs[0].key_id != KEY_ID or not configs[0].supported:
        raise MalformedReportError(f"The identity's relay.ohttp must be one key configuration, key id {KEY_ID}, "
                                   "X25519 with HKDF-SHA256 and AES-128-GCM.")
    return configs[0]


@validate_params({"seed": Described(Bytes(32), "32 random bytes (the seed drawn with a token)")})
def ephemeral_key(seed: bytes) -> tuple[bytes, bytes]:
    """``(private key, enc)`` of the HPKE ephemeral key ``DeriveKeyPair(seed)`` (RFC 9180 section 7.1.3), raw: the key
    one report is encapsulated with, and the ``enc`` its token's nonce commits to (:mod:`._binding`); ``seed``: the 32
    bytes drawn with the token."""
    return derive_key_pair(seed)


def report_request(campaign: str, body: bytes, content_type: str) -> bytes:
    """The Binary HTTP request that carries one report (module docstring), zero-padded."""
    request = _bhttp.Request("PUT", "https", "", f"/api/campaigns/{campaign}/batches/{secrets.token_hex(16)}",
                             ((b"content-type", content_type.encode("ascii")),), bytes(body))
    message = _bhttp.encode_request(request)
    return message + bytes(padded_length(message, body) - len(message))


def encapsulate_report(config: _ohttp.KeyConfig, campaign: str, body: bytes, content_type: str, *,
                       seed: bytes | None = None) -> bytes:
    """One report (``body``: a dpdist binary record or JSON of one report) encapsulated to the campaign's ``config``:
    the ``message/ohttp-req`` a device sends dpdist's relay; with the ephemeral key of ``seed`` (the one its token is
    bound to: :func:`ephemeral_key`; encapsulated once, its bytes kept for resends), or a fresh one."""
    if content_type not in REPORT_CONTENT_TYPES:
        raise MalformedReportError(f"A report through the relay is {sorted(REPORT_CONTENT_TYPES)}. Got {content_type!r}.")
    ephemeral = None if seed is None else ephemeral_key(seed)[0]
    encapsulated, _ = _ohttp.encapsulate_request(config, report_request(campaign, body, content_type),
                                                 ephemeral_private_key=ephemeral)
    if len(encapsulated) > MAX_SEALED_BYTES:
        raise MalformedReportError(f"One report encapsulated is at most {MAX_SEALED_BYTES} bytes. Got {len(encapsulated)}.")
    return encapsulated


def is_encapsulated(message: bytes) -> bool:
    """Whether a relayed message (after its token) is an encapsulated request rather than dpdist's deprecated envelope."""
    return bool(message) and message[0] == KEY_ID


def check_encapsulated(data: bytes) -> None:
    """What dpdist's relay can check of an encapsulated report without the key (:class:`MalformedReportError`
    naming what is wrong): the key id and suite of a relayed campaign's configuration, a length in range."""
    if not _SMALLEST < len(data) <= MAX_SEALED_BYTES:
        raise MalformedReportError(f"An encapsulated report is {_SMALLEST + 1} to {MAX_SEALED_BYTES} bytes. Got {len(data)}.")
    if bytes(data[: len(_HEADER)]) != _HEADER:
        raise MalformedReportError(f"An encapsulated report of a relayed campaign starts with key id {KEY_ID} and the suite "
                                   f"{tuple(hex(value) for value in _ohttp.SUITE_IDS)}: encapsulate to the key configuration "
                                   "of the campaign's identity (relay.ohttp).")


def report_length(campaign: str, config: dict) -> int | None:
    """The one length of every encapsulated report of ``campaign`` (its protocol ``config``): every report of a campaign
    pads to it (:func:`report_request`), whatever its value, so a relay refuses any other length; None when ``config`` is
    not a protocol this dpdist reads (then the relay checks the range only)."""
    return _report_length(campaign, json.dumps(config, sort_keys=True))


@functools.lru_cache(maxsize=256)
def _report_length(campaign: str, config: str) -> int | None:
    try:
        protocol = from_config(json.loads(config))
    except (DPDistError, ValueError, TypeError):  # not a protocol of this dpdist: no length known
        return None
    layout = protocol.report_format
    for make in (lambda: np.zeros((1, *layout.row_shape), dtype=layout.dtype),  # a report of no one: its length is all
                 lambda: protocol.privatize([0], rng=0)):  # a protocol whose zero row is not a report (SS: a subset)
        try:
            body = encode_record(protocol, make())
            break
        except (DPDistError, ValueError, TypeError):
            continue
    else:
        return None
    return _SMALLEST + len(report_request(campaign, body, "application/octet-stream"))  # header, enc, request, AEAD tag


def enc_of(data: bytes) -> bytes:
    """The HPKE encapsulated key of an encapsulated report (checked by :func:`check_encapsulated`): drawn afresh for each
    encapsulation."""
    return bytes(data[len(_HEADER) : len(_HEADER) + 32])


def open_report(private_key: bytes, campaign: str, data: bytes, max_bytes: int) -> tuple[str, bytes]:
    """``(content type, body)`` of an encapsulated report of ``campaign`` (:class:`NotAReport` naming its reason)."""
    try:
        opened = _ohttp.decapsulate_request({KEY_ID: bytes(private_key)}, bytes(data))
    except MalformedReportError as error:
        raise NotAReport("unopened", str(error)) from None
    try:
        request = _bhttp.decode_request(opened.message, max_bytes=max_bytes)
    except MalformedReportError as error:
        raise NotAReport("malformed_binary_http", str(error)) from None
    match = _PATH.fullmatch(request.path)
    content_type = (request.header("content-type") or "").split(";")[0].strip().lower()
    if request.method != "PUT" or match is None or match.group(1) != campaign or content_type not in REPORT_CONTENT_TYPES:
        raise NotAReport("not_a_report_request", f"An encapsulated report is PUT /api/campaigns/{campaign}/batches/<id> "
                                                 f"of {sorted(REPORT_CONTENT_TYPES)}. Got {request.method} "
                                                 f"{request.path[:200]} ({content_type[:80]}).")
    return content_type, request.content
