"""A device's requests through a standard Oblivious HTTP relay (RFC 9458): an httpx transport that encapsulates them.

:class:`ObliviousTransport` turns each request into Binary HTTP (RFC 9292), encapsulates it to the
gateway's key configuration and POSTs it to the relay resource as ``message/ohttp-req``; the relay
forwards it to the collector's gateway (``/ohttp/gateway``), which serves it and answers
``message/ohttp-res``, opened here into the collector's own answer.  The client's retries, refusals
and exactly-once batch ids work unchanged on top: a retry encapsulates the same inner request afresh,
and the collector counts a batch id once however many times a relay delivers it.

Only what the device gives away through the relay: the relay sees the device's address and the size
of an encapsulated request; the collector sees neither (docs/how-to/anonymous-collection.md, "Anonymous collection").  That
size depends on public things only: each inner request is zero-padded (RFC 9292 section 3.8) to
:func:`padded_length`, a power of two (at least :data:`MIN_PADDED_BYTES`) of its length as if every
record's CRC-32 (written in decimal in the record's header) had all 10 digits, so neither the reports nor
their checksum change it, only the batch's size (unpadded, a one-report GRR batch's
length named report 38 over 100 items).

The key configuration is the campaign's, from its public config (``"ohttp"``); a device given the
configuration out of band (``ohttp_keys=``, ``--ohttp-keys``: the bytes of ``application/ohttp-keys``,
e.g. as the relay's operator publishes them) encapsulates to the newest of them the campaign's config also
states, and refuses a campaign whose config states none of them (``ohttp_key_mismatch``) before anything is
sent: a collector handing out keys per device (to tell them apart behind the relay) is caught by a device
that compares.  A device given its keys sends
every request through the relay, its campaigns' configs included (:func:`given_key_config`); one that is not
fetches the config, and so the keys, from the collector directly, which then sees its address once, before
any report.
"""

from __future__ import annotations

import base64
import json

import httpx

from .._validation import HttpUrl, validate_params
from ..errors import CampaignIdentityError, InvalidParameterError, MalformedReportError
from .. import _ohttp
from .._ohttp import _bhttp
from .._ohttp._padding import MIN_PADDED_BYTES, padded_length
from .._http._deadline import ACK_ANSWER_BYTES, ANSWERED_BY, deadline_of, request_within
from .._redact import MASK
from .._shown import secrets_of

__all__ = ["MIN_PADDED_BYTES", "OHTTP_RELAY", "ObliviousTransport", "campaign_key_config", "given_key_config",
           "padded_length"]

#: an Oblivious HTTP relay resource, as a device names it (``Client(ohttp_relay=...)``)
OHTTP_RELAY = HttpUrl("the http:// or https:// URL of an Oblivious HTTP relay resource, with a host")


#: never encapsulated: fields about a connection (RFC 9110 section 7.6.1), and ``user-agent`` and ``accept``, which
#: named the client library and its version to the collector and told Python from JS devices: every
#: dpdist client sends the same fields (those the request needs: content type, authorization) and WHOLE_ANSWER_FIELD
#: who answered what the relay says itself (:data:`~dpdist._http._deadline.ANSWERED_BY`): a refusal names it, not the service
OHTTP_RELAY_ANSWERED = "the Oblivious HTTP relay"
_HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "upgrade", "trailer",
                         "host", "content-length", "accept-encoding", "user-agent", "accept"})


def given_key_config(given: bytes) -> _ohttp.KeyConfig:
    """The first configuration of the ``given`` ``application/ohttp-keys`` that offers dpdist's suite: what a device
    given its keys out of band encapsulates everything to, its campaigns' configs included (the collector then never
    sees its address, not even when it fetches a config); :class:`InvalidParameterError` if none does."""
    configs = [config for config in _ohttp.decode_key_list(given) if config.supported]
    if not configs:
        raise InvalidParameterError("The 'ohttp_keys' parameter of Client must offer a key configuration with X25519, "
                                    "HKDF-SHA256 and AES-128-GCM (RFC 9458 Appendix A's suite). None does.")
    return configs[0]


def campaign_key_config(campaign: str, document: dict, given: bytes | None) -> _ohttp.KeyConfig:
    """The key configuration to encapsulate ``campaign``'s requests to: the newest of its config's ``"ohttp"`` that
    offers dpdist's suite and, for a device ``given`` configurations, the newest of those that is among them (so a
    rotation, which states a new key before the old ones, does not cut off devices holding the old configuration, and
    a collector cannot make such a device encapsulate to a key of its own: module docstring)."""
    stated = document.get("ohttp") if isinstance(document, dict) else None
    if document.get("relay") is not None:
        raise CampaignIdentityError(
            f"Campaign {campaign!r} is collected through its dpdist relay (its config names one), which batches and "
            "shuffles its reports: send without an OHTTP relay. Nothing was sent.", "relayed_campaign")
    if not isinstance(stated, dict) or not isinstance(stated.get("keys"), str):
        raise CampaignIdentityError(
            f"Campaign {campaign!r}'s collector states no Oblivious HTTP key configuration (a collector before dpdist's "
            "gateway): its reports cannot go through an OHTTP relay. Nothing was sent.", "no_ohttp_gateway")
    raw = base64.urlsafe_b64decode(stated["keys"] + "=" * (-len(stated["keys"]) % 4))
    try:
        configs = [config for config in _ohttp.decode_key_list(raw) if config.supported]
    except MalformedReportError as error:
        raise CampaignIdentityError(f"Campaign {campaign!r}'s Oblivious HTTP key configuration is unreadable: {error} "
                                    "Nothing was sent.", "ohttp_key_mismatch") from None
    if not configs:
        raise CampaignIdentityError(f"Campaign {campaign!r}'s gateway offers no key configuration with X25519, HKDF-SHA256 "
                                    "and AES-128-GCM. Nothing was sent.", "ohttp_key_mismatch")
    if given is not None:  # the newest stated that the device was given: a rotation adds keys, the given ones still serve
        mine = {config.encode() for config in _ohttp.decode_key_list(given)}
        shared = [config for config in configs if config.encode() in mine]
        if not shared:
            raise CampaignIdentityError(
                f"Campaign {campaign!r}'s collector states Oblivious HTTP key configurations (key ids "
                f"{[config.key_id for config in configs]}) none of which is among the ones this device was given: a "
                "collector that gives devices different keys can tell them apart behind the relay, and a retired key "
                "cannot be sent to. Nothing was sent.", "ohttp_key_mismatch")
        return shared[0]
    return configs[0]


class ObliviousTransport(httpx.BaseTransport):
    """An httpx transport that sends every request through the relay resource ``relay_url``, encapsulated to ``config``
    (module docstring); ``transport``: how the relay itself is reached (tests), ``timeout``: per relay request."""

    @validate_params({"relay_url": OHTTP_RELAY})
    def __init__(self, relay_url: str, config: _ohttp.KeyConfig, *, transport=None, timeout=60.0, verify=True):
        self.relay_url, self.config = relay_url, config
        self._outer = httpx.Client(transport=transport, timeout=timeout, verify=verify)
        self._deadline = deadline_of(timeout)  # the relay's answer, too, within the deadline per attempt

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        target = url.raw_path.decode("ascii")
        headers = tuple((name.lower().encode("ascii"), value.encode("latin-1")) for name, value in request.headers.items()
                        if name.lower() not in _HOP_BY_HOP) + (_ohttp.WHOLE_ANSWER_FIELD,)
        body = request.read()
        message = _bhttp.encode_request(_bhttp.Request(request.method, url.scheme, url.netloc.decode("ascii"), target,
                                                       headers, body))
        message += bytes(padded_length(message, body) - len(message))  # RFC 9292 section 3.8: zero padding
        encapsulated, context = _ohttp.encapsulate_request(self.config, message)
        outer = request_within(self._outer, "POST", self.relay_url, self._deadline, limit=ACK_ANSWER_BYTES,
                               answered_by=OHTTP_RELAY_ANSWERED, content=encapsulated,
                               headers={"content-type": _ohttp.REQUEST_CONTENT_TYPE, "accept": _ohttp.RESPONSE_CONTENT_TYPE})
        if outer.status_code != 200 or outer.headers.get("content-type", "").split(";")[0] != _ohttp.RESPONSE_CONTENT_TYPE:
            return _not_encapsulated(outer, request)
        try:
            answer = _bhttp.decode_response(context.open_response(outer.content))
        except MalformedReportError as error:  # changed on the way, or not this request's answer: nothing to trust in it
            raise httpx.RemoteProtocolError(f"The relay's answer is not the gateway's answer to this request: {error}",
                                            request=request) from None
        return httpx.Response(answer.status, headers=[(name.decode("latin-1"), value.decode("latin-1"))
                                                      for name, value in answer.headers],
                              content=answer.content, request=request)

    def close(self) -> None:
        self._outer.close()


def _not_encapsulated(outer: httpx.Response, request: httpx.Request) -> httpx.Response:
    """A relay's or the gateway's own answer (nothing was served): passed on, RFC 9458's key problem named for the client."""
    kind = outer.headers.get("content-type", "").split(";")[0]
    if outer.status_code == 400 and kind == "application/problem+json":
        try:
            problem = outer.json()
        except ValueError:
            problem = {}
        if problem.get("type") == "https://iana.org/assignments/http-problem-types#ohttp-key":
            body = {"error": "ohttp_key_mismatch", "detail": "The gateway holds no key for this key configuration "
                             f"(rotated or retired): fetch the campaign's config again. {problem.get('detail', '')}"}
            return httpx.Response(400, json=body, request=request)
    if 200 <= outer.status_code < 300:  # a 2xx that is not an encapsulated answer: the relay's, not the collector's
        return httpx.Response(502, content=json.dumps({"error": "not_encapsulated", "detail": f"The relay answered "
                              f"{outer.status_code} {kind or 'without a content type'}, not message/ohttp-res."}).encode(),
                              headers={"content-type": "application/json"}, request=request)
    content = outer.content
    for secret in secrets_of(outer):  # the relay's own credential (a Basic one from its URL's user:password@)
        content = content.replace(secret.encode(), MASK.encode())
    return httpx.Response(outer.status_code, headers=outer.headers, content=content, request=request,
                          extensions={ANSWERED_BY: OHTTP_RELAY_ANSWERED})
