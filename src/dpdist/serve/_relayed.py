"""Campaigns collected through a relay (docs/how-to/anonymous-collection.md, "Anonymous collection").

A campaign created with ``"relay": {"url": ..., "issuer": ..., "colluding": m, "delta": d}`` gets, in the
same request:

- an Oblivious HTTP key configuration (RFC 9458; key id 0, :mod:`dpdist._wire._ohttp_report`) whose public half is
  in the campaign's identity (``relay.ohttp``), so that devices encapsulate their reports to it, and whose private
  half stays in the collector's database (table ``relayed_campaigns``, deleted with the campaign); and, for devices
  of earlier versions until dpdist 0.2.0, an X25519 key pair of dpdist's deprecated envelope
  (:mod:`dpdist._wire._envelope`, ``relay.public_key``);
- its **identity** (:mod:`dpdist._wire._identity`): the public document a device trusts (config, HPKE key,
  the relay's URL, the issuer with its token key and ``tokens_each``, ``colluding``, ``delta``), made once and served verbatim
  (``GET /api/campaigns/{c}/identity``), and its pin (the SHA-256 of those bytes), so that a device never
  takes the key from the relay;
- the relay's identity: the SHA-256 of the relay token the service was started with
  (``DPDIST_RELAY_TOKEN``), the only credential that delivers batches to the campaign;
- a random submit token that nobody is told, so that a direct (non-relayed) submission is refused
  even before the campaign's relay row is read (the refusal names the reason: 409 ``relayed_campaign``).

The relay delivers ``PUT /api/campaigns/{c}/relayed/{batch_id}``: the messages of one shuffled batch,
framed (:func:`dpdist._wire._frames.unframe`), each the device's Privacy Pass token (RFC 9578 type 2,
when the campaign names an issuer) followed by its sealed report.  Each token is verified again here
(publicly verifiable: the issuer's key and the campaign's challenge), must be bound to the report it comes
with (its nonce commits to the report's HPKE ``enc``: :mod:`dpdist._wire._binding`) and must never have been
spent in the campaign (table ``relayed_tokens``, written by the group commit that counts the batch); each sealed
report is opened with the campaign's private key and must hold exactly one report.  A message that
fails any of these is one rejected row (``no_token``, ``bad_token``, ``token_not_bound``, ``token_spent``,
``unopened``, ``not_one_report``, ``malformed_report``): only *admitted* reports count toward the batch's size.
A token is spent only by the report it admits: one bound to another report, or with a report that does not open or
is refused, is not (a relay that moved it onto a report of its own, or made the device's report unreadable, has not
used it up: the report it was made for still counts when it comes).  A report
is counted once whatever token travels with it: the HPKE encapsulated key (``enc``) of each report opened is recorded
(table ``relayed_reports``, by the same group commit), and a copy of a report opened before, in this batch or a counted
one, is a rejected row, ``replayed_report``, whose token is not spent (a relay that attached another device's token to
the copy has not used it up).  The
opened batch goes through the ordinary group commits (:meth:`~._service.Service.count`), so it is
counted once under the relay's random batch id, with its arrival time replaced by the campaign's
creation minute (:meth:`RelayedCampaigns.arrival_ms`): what is stored of a relayed batch is its relay
batch id, its size and its counts, the spent token nonces, no device's id and no time.  The group
commit that counts a relayed batch also lowers the campaign's ``smallest_batch`` (the running minimum
of its batches' admitted reports) in the same transaction, so the statement below reads one row.

A delivered message is an RFC 9458 request (:mod:`dpdist._wire._ohttp_report`; ``unopened``,
``malformed_binary_http``, ``not_a_report_request`` when it cannot be opened with the campaign's Oblivious HTTP key,
``relayed_campaigns.ohttp_private_key``) or, from a device of an earlier version, a report in dpdist's deprecated
envelope, told apart by its first byte and opened until dpdist 0.2.0 (a campaign made before schema 8 has no
Oblivious HTTP key and takes that envelope only).  The collector tells the two apart, so a batch holding both counts,
in ``smallest_batch``, as the admitted reports of the envelope it holds fewest of; ``dpdist_relayed_reports`` (the
metrics) counts each envelope's reports.  ``relayed_campaigns.sealed_v1`` (:meth:`RelayedCampaigns.set_envelopes`)
says whether the campaign's relay still takes dpdist's envelope (public config ``relay.envelopes``): off for a
campaign made since the envelope's deprecation unless its creation asks ``"sealed_v1": true``.

The campaign states its guarantee (:func:`dpdist.amplification._statement.relayed_statement`): the
local one, and the amplified central one at its smallest batch minus ``colluding x tokens_each`` reports
(``colluding`` devices, each credential good for the issuer's ``tokens_each`` tokens), with the assumptions
party by party; none against the collector when anyone may send reports (no issuer), the collector
runs the issuer, or the colluding reports leave fewer than two honest ones in a batch.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import re
import secrets
from collections import Counter
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .._redact import redacted_url, url_secrets
from .._shown import masked
from .._validation import HttpUrl
from ..amplification._statement import Admission, relayed_statement
from ..errors import InvalidParameterError, InvalidTokenError, MalformedReportError
from ..local import ReportBatch
from ..local.ledger import normal_collector
from ..privacypass import TOKEN_LENGTH, b64url_decode, b64url_encode, decode_token_key, verify_token
from .._wire import _envelope, _ohttp_report
from .._wire._frames import MAX_SEALED_BYTES, unframe
from .._wire._binding import is_bound
from .._ohttp import public_key_of
from .._wire._identity import campaign_challenge, identity_document, pin_of
from ._campaigns import (ARRIVAL_RESOLUTION_MS, Campaign, CampaignRow, Creation, check_batch_id, check_config,
                         token_sha256)
from ._ingest import decode_body
from .._guard._refusals import Conflict, InvalidRequest, NotFound, Refusal, Unauthorized
from .._http import _telemetry
from ._store import Store

__all__ = ["RelayedCampaigns", "DEFAULT_DELTA", "smallest_group"]

#: the delta of the stated central guarantee when the campaign does not set one
DEFAULT_DELTA = 1e-8
_URL = re.compile(r"https?://[^\s/?#]+(/[^\s?#]*)?")
#: a URL a relayed campaign gives its devices: no user:password@ (published with no token), a port in 1..65535
_PUBLIC_URL = HttpUrl(no_userinfo=HttpUrl.PUBLISHED)
_KEY_NAME = re.compile(r"[A-Za-z0-9._-]{1,128}")
_ISSUER_NAME = re.compile(r"[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?")
_NONCES_PER_QUERY = 400
#: what a relayed campaign's document names of its issuer (``tokens_each``: the ceiling the issuer publishes with its key)
_ISSUER_FIELDS = ("url", "name", "key", "token_key", "independent", "tokens_each")


@dataclass(frozen=True)
class RelayKey:
    """One relayed campaign's row: the relay's token hash, the key pair (raw bytes), the stated delta, the number of
    admitted reports of its smallest batch so far (kept by the group commits that count its batches; None before the
    first), its identity document's bytes (None for a campaign created before identities: no relay URL, no
    issuer), the private key of its Oblivious HTTP key configuration (None for a campaign made before it had one), and
    whether its relay still takes reports in dpdist's own envelope (``sealed_v1``)."""

    relay_token_sha256: str
    public_key: bytes
    private_key: bytes
    delta: float
    smallest_batch: int | None = None
    identity: bytes | None = None
    ohttp_private_key: bytes | None = None
    sealed_v1: bool = True

    @functools.cached_property
    def document(self) -> dict:
        """The identity document (module docstring)."""
        return json.loads(self.identity) if self.identity is not None else {"issuer": None, "colluding": 0, "relay": {}}

    @property
    def issuer(self) -> dict | None:
        """The campaign's issuer (``url``, ``name``, ``key``, ``token_type``, ``token_key``, ``independent``,
        ``tokens_each``: absent from an identity made before issuers published it), or None."""
        return self.document["issuer"]

    @functools.cached_property
    def challenge(self) -> bytes | None:
        """The campaign's TokenChallenge, bound to its identity (None without an issuer or an identity)."""
        if self.issuer is None or self.identity is None:
            return None
        return campaign_challenge(self.issuer, pin_of(self.identity))

    def admission(self):
        issuer = self.issuer
        return Admission(None if issuer is None else issuer["url"], bool(issuer and issuer["independent"]),
                         int(self.document["colluding"]), None if issuer is None else issuer.get("tokens_each"))


class RelayedCampaigns:
    """The relayed campaigns of one service: creation, public fields, the relay's deliveries."""

    def __init__(self, store: Store, relay_token: str | None, previous_relay_token: str | None = None):
        self.store, self.relay_token, self.previous_relay_token = store, relay_token, previous_relay_token
        if relay_token and previous_relay_token:  # a rotation: the campaigns of the previous token move to the new one
            store.db.execute("UPDATE relayed_campaigns SET relay_token_sha256 = ? WHERE relay_token_sha256 = ?",
                             (token_sha256(relay_token), token_sha256(previous_relay_token)))

    # ------------------------------------------------------------------ campaigns
    def create(self, document: dict, **options: Any) -> Campaign:
        """Create the campaign ``document`` describes (``options``: the store's ``create`` keywords) as relayed."""
        url, delta, colluding, issuer, sealed_v1 = _settings(document.get("relay"))
        if not self.relay_token:
            raise Conflict("no_relay_token", "This service has no relay token (DPDIST_RELAY_TOKEN or --relay-token): "
                               "no relay could deliver to a relayed campaign.")
        if options.get("enrollment") or options.get("submit_token") is not None:
            raise InvalidRequest("invalid_relay", "A relayed campaign takes no submit or enrollment token: devices "
                               "reach it through the relay only (a per-device token would identify the device).")
        from .._http._deadline import PAGE_ANSWER_BYTES  # lazy: it imports httpx, which a collector does not need to start

        pair, ohttp_private = _envelope.generate_key(), os.urandom(32)  # the CSPRNG: dpdist's envelope, and RFC 9458's
        name: Any = document.get("campaign")  # checked by the store
        config: Any = document.get("config")
        campaign = self.store.create(name, config, **{
            **options, "submit_token": secrets.token_urlsafe(32)}, devices_read=PAGE_ANSWER_BYTES)  # a relay's pages;
        # the submit token known to no one: direct submissions refused
        identity = identity_document(campaign.id, campaign.config, relay_url=url, public_key=pair.public_key,
                                     issuer=issuer, colluding=colluding, delta=delta,
                                     ohttp_public_key=public_key_of(ohttp_private))
        self.store.db.execute(
            "INSERT INTO relayed_campaigns (campaign_id, export_file_id, relay_token_sha256, public_key, private_key, delta,"
            " identity, ohttp_private_key, sealed_v1) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (campaign.id, campaign.export_file_id, token_sha256(self.relay_token), pair.public_key.hex(), pair.private_key.hex(),
             delta, identity.decode("ascii"), ohttp_private.hex(), int(sealed_v1)),
        )
        return campaign

    def check_reconfig(self, campaign_id: str, config: Any) -> None:
        """A relayed campaign's new config must be readable through its relay, as at creation (pages of at most
        ``PAGE_ANSWER_BYTES``); other campaigns' are checked by the store."""
        from .._http._deadline import PAGE_ANSWER_BYTES  # lazy: it imports httpx, which a collector does not need to start

        if self.key(self.store.get(campaign_id)) is not None:
            check_config(config, self.store.max_statistic_bytes, PAGE_ANSWER_BYTES)

    def reconfigured(self, campaign: CampaignRow) -> None:
        """A relayed campaign's identity made again after its config changed (before it opened): a new pin."""
        key = self.key(campaign)
        if key is None or key.identity is None:
            return
        document = key.document
        issuer = None if document["issuer"] is None else {name: document["issuer"][name] for name in _ISSUER_FIELDS
                                                          if name in document["issuer"]}
        ohttp = None if key.ohttp_private_key is None else public_key_of(key.ohttp_private_key)
        identity = identity_document(campaign.id, campaign.config, relay_url=document["relay"]["url"], public_key=key.public_key,
                                     issuer=issuer, colluding=document["colluding"], delta=document["delta"],
                                     ohttp_public_key=ohttp)
        self.store.db.execute("UPDATE relayed_campaigns SET identity = ? WHERE campaign_id = ? AND export_file_id = ?",
                              (identity.decode("ascii"), campaign.id, campaign.export_file_id))

    def key(self, campaign: CampaignRow) -> RelayKey | None:
        """The campaign's relay row, or None for a campaign collected directly."""
        rows = self.store.db.execute(
            "SELECT relay_token_sha256, public_key, private_key, delta, smallest_batch, identity, ohttp_private_key, sealed_v1"
            " FROM relayed_campaigns WHERE campaign_id = ? AND export_file_id = ?", (campaign.id, campaign.export_file_id))
        if not rows:
            return None
        token, public, private, delta, smallest, identity, ohttp, sealed_v1 = rows[0]
        return RelayKey(token, bytes.fromhex(public), bytes.fromhex(private), float(delta),
                        None if smallest is None else int(smallest), None if identity is None else _published(identity),
                        None if ohttp is None else bytes.fromhex(ohttp), bool(sealed_v1))

    def set_envelopes(self, campaign_id: str, document: Any) -> dict:
        """Turn dpdist's own envelope on or off for a relayed campaign (``{"sealed_v1": false}``): off, its relay refuses
        such reports by name (409 ``sealed_v1_off``; those it acknowledged before are still delivered and counted: a retry
        of one is ``duplicate``, and the relay takes such reports until K wait, so that those waiting form a batch); only
        a campaign whose identity names an Oblivious HTTP key configuration can turn it off.  The campaign's envelopes
        (:meth:`envelopes`)."""
        if not isinstance(document, dict) or set(document) != {"sealed_v1"} or not isinstance(document["sealed_v1"], bool):
            raise InvalidRequest("invalid_envelopes", "The body is {\"sealed_v1\": true|false} (false: the campaign's relay "
                                                      f"takes Oblivious HTTP requests only). Got {json.dumps(document)[:200]}.")
        campaign = self.store.row(campaign_id)
        key = self.key(campaign)
        if key is None:
            raise Conflict("not_relayed", f"Campaign {campaign_id!r} is not collected through a relay.")
        if not document["sealed_v1"] and key.ohttp_private_key is None:
            raise Conflict("no_ohttp_key", f"Campaign {campaign_id!r} was made before relayed campaigns had an Oblivious HTTP "
                                           "key configuration: dpdist's envelope is its only one and stays on.")
        self.store.db.execute("UPDATE relayed_campaigns SET sealed_v1 = ? WHERE campaign_id = ? AND export_file_id = ?",
                              (int(document["sealed_v1"]), campaign.id, campaign.export_file_id))
        changed = self.key(campaign)
        assert changed is not None  # the row read above, updated
        return {"campaign": campaign.id, "envelopes": self.envelopes(changed)}

    @staticmethod
    def envelopes(key: RelayKey) -> dict:
        """Which envelopes the campaign's relay takes: ``sealed_v1`` (dpdist's own) and ``ohttp`` (RFC 9458)."""
        return {"sealed_v1": key.sealed_v1, "ohttp": key.ohttp_private_key is not None}

    def forget(self, campaign_id: str) -> None:
        """Delete a deleted campaign's keys, spent tokens and opened reports' encapsulated keys."""
        self.store.db.execute("DELETE FROM relayed_campaigns WHERE campaign_id = ?", (campaign_id,))
        self.store.db.execute("DELETE FROM relayed_tokens WHERE campaign_id = ?", (campaign_id,))
        self.store.db.execute("DELETE FROM relayed_reports WHERE campaign_id = ?", (campaign_id,))

    def statement(self, campaign: CampaignRow, key: RelayKey) -> dict:
        """The campaign's local guarantee and its amplified central one at its smallest batch so far (``key``'s running
        minimum: no scan of the batches)."""
        n = campaign.n if isinstance(campaign, Campaign) else self.store.totals(campaign.id).n
        traces = _telemetry.possible()  # the relay's tracing backend a party (docs/explanation/threat-model.md)
        return {"delta": key.delta, **relayed_statement(campaign.protocol, key.smallest_batch, n, key.delta, key.admission(),
                                                        traces)}

    def identity(self, campaign: CampaignRow) -> bytes:
        """The identity document's bytes of a relayed campaign (:class:`NotFound` for another campaign)."""
        key = self.key(campaign)
        if key is None or key.identity is None:
            raise NotFound("no_identity", f"Campaign {campaign.id!r} is not collected through a relay (or was created "
                                          "before relayed campaigns had an identity): it has no identity document.")
        return key.identity

    def public_fields(self, campaign: CampaignRow) -> dict:
        """What the public config adds for a relayed campaign (nothing for a direct one)."""
        key = self.key(campaign)
        if key is None:
            return {}

        issuer = key.issuer
        if issuer is not None and key.challenge is not None:  # derived from the identity, for a device to compare
            issuer = {**issuer, "challenge": b64url_encode(key.challenge)}
        relay = {**_envelope.public_key_config(key.public_key), "url": key.document["relay"].get("url"),
                 "pin": None if key.identity is None else pin_of(key.identity), "issuer": issuer,
                 "envelopes": self.envelopes(key)}
        if "ohttp" in key.document["relay"]:  # the identity's (a device takes it from the identity, which the pin covers)
            relay["ohttp"] = key.document["relay"]["ohttp"]
        return {"relay": relay, "anonymity": self.statement(campaign, key), "submit_token_required": False}

    def origins(self, campaign_id: str) -> list[str]:
        """The origins a relayed campaign's participation page talks to besides the collector: its relay and issuer
        (none for another campaign, or an unknown one)."""
        try:
            key = self.key(self.store.row(campaign_id))
        except (NotFound, InvalidRequest):
            return []
        if key is None:
            return []
        urls = [key.document["relay"].get("url"), (key.issuer or {}).get("url")]
        return [normal_collector(url) for url in urls if url]

    def summary_fields(self, campaign: CampaignRow) -> dict:
        """What the admin summary adds: whether the campaign is relayed, and its statement."""
        key = self.key(campaign)
        if key is None:
            return {"relayed": False}
        return {"relayed": True, "submit_token_required": False, "anonymity": self.statement(campaign, key),
                "envelopes": self.envelopes(key)}

    @staticmethod
    def direct_refusal(campaign: Creation) -> Refusal | None:
        """The refusal of a direct submission to a relayed campaign (None if the campaign is not relayed)."""
        if not campaign.relayed:
            return None
        return Conflict("relayed_campaign", f"Campaign {campaign.id!r} is collected through a relay: send reports "
                            "to the relay (its URL is the one the campaign was announced with), not to the collector.")

    # ------------------------------------------------------------------ deliveries
    def admit(self, campaign_id: str, token: str) -> tuple[CampaignRow, RelayKey]:
        """The checks made before a relayed batch's body is read: a relayed campaign, the relay's token."""
        campaign = self.store.row(campaign_id)
        key = self.key(campaign)
        if key is None:
            raise Conflict("not_relayed", f"Campaign {campaign_id!r} is not collected through a relay.")
        if not self._relay_may_deliver(token, key.relay_token_sha256):
            raise Unauthorized("unauthorized", f"Relayed batches of campaign {campaign_id!r} need the relay's token.")
        return campaign, key

    def _relay_may_deliver(self, token: str, bound_sha256: str) -> bool:
        """``token`` is the one the campaign is bound to, or, while the service rotates its relay token (started with the
        previous one), the previous token of a campaign bound to the current one: a relay still holding it delivers."""
        presented = token_sha256(token)
        if hmac.compare_digest(presented, bound_sha256):
            return True
        previous, current = self.previous_relay_token, self.relay_token
        return bool(previous and current and hmac.compare_digest(bound_sha256, token_sha256(current))
                    and hmac.compare_digest(presented, token_sha256(previous)))

    @staticmethod
    def digest(body: bytes) -> str:
        """What identifies a relayed batch's content (a redelivery under the same id is told apart from a reuse)."""
        return hashlib.sha256(b"relayed\n" + body).hexdigest()

    @staticmethod
    def arrival_ms(campaign: CampaignRow) -> int:
        """The one arrival time stored for every batch of a relayed campaign: its creation minute."""
        return campaign.created_ms // ARRIVAL_RESOLUTION_MS * ARRIVAL_RESOLUTION_MS

    def opened(self, campaign: CampaignRow, key: RelayKey, batch_id: str, body: bytes, limits: Any):
        """The relayed batch's reports, opened and validated (a :class:`~dpdist.local.ReportBatch`, one row per message),
        the nonces of the valid tokens it spends, its admitted reports per envelope (``{"ohttp": n, "sealed_v1": m}``,
        those it holds: :func:`smallest_group`) and the encapsulated keys (hex) of the reports it opened, ready for
        :meth:`~._service.Service.count` (module docstring).  A copy of a report opened before (by a counted batch, or
        earlier in this one: its ``enc``) is one rejected row, ``replayed_report``, whose token is not spent."""
        check_batch_id(batch_id)
        try:
            messages = _unframe(body, limits)
        except MalformedReportError as error:
            raise InvalidRequest("malformed_batch", str(error)) from None
        counted = functools.partial(self._recorded, "relayed_reports", "enc", campaign.id)
        if key.issuer is None or key.challenge is None:
            batch, groups, encs, _ = _open_batch(campaign, key, messages, limits, counted)
            return batch, [], groups, encs
        sealed, nonces = _spend_tokens(messages, key.issuer, key.challenge,
                                       functools.partial(self._recorded, "relayed_tokens", "nonce", campaign.id))
        batch, groups, encs, refused = _open_batch(campaign, key, sealed, limits, counted)
        return batch, [nonce for index, nonce in enumerate(nonces) if nonce is not None and index not in refused], groups, encs

    def _recorded(self, table: str, column: str, campaign_id: str, values: list[str]) -> set[str]:
        """Which of ``values`` (hex) the campaign's counted batches recorded in ``table`` already (spent token nonces,
        opened reports' encapsulated keys)."""
        found: set[str] = set()
        for start in range(0, len(values), _NONCES_PER_QUERY):
            chunk = values[start : start + _NONCES_PER_QUERY]
            marks = ", ".join("?" * len(chunk))
            found.update(row[0] for row in self.store.db.execute(
                f"SELECT {column} FROM {table} WHERE campaign_id = ? AND {column} IN ({marks})", (campaign_id, *chunk)))
        return found


def _public_url(url: Any) -> bool:
    """Whether ``url`` may be given to every device: an http(s) URL with a host, no ``user:password@``, a port in
    1..65535."""
    if not isinstance(url, str) or len(url) > 2048 or not _URL.fullmatch(url):
        return False
    try:
        _PUBLIC_URL.check(url)
    except ValueError:
        return False
    return True


def _published(identity: str) -> bytes:
    """A stored identity document's bytes as they may be served: a relay or issuer URL with ``user:password@`` (taken
    before dpdist refused it at creation) loses it, and the document, its pin and its token challenge change
    with it (devices given the old pin refuse the campaign: its operator creates it again)."""
    if "@" not in identity:
        return identity.encode("ascii")
    document = json.loads(identity)
    relay, issuer = document.get("relay") or {}, document.get("issuer")
    if isinstance(relay.get("url"), str):
        relay["url"] = without_userinfo(relay["url"])
    if isinstance(issuer, dict) and isinstance(issuer.get("url"), str):
        issuer["url"] = without_userinfo(issuer["url"])
    return json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def without_userinfo(url: str) -> str:
    """``url`` without its ``user:password@`` (or ``user@``): ``https://relay.example/base`` for
    ``https://alice:secret@relay.example/base``."""
    parts = urlsplit(url)
    return url if "@" not in parts.netloc else urlunsplit(parts._replace(netloc=parts.netloc.rpartition("@")[2]))


def _without_passwords(value: Any) -> str:
    """``value`` (a refused ``relay`` or its ``issuer``) as JSON, the passwords of the URLs it names masked."""
    named = [value, value.get("issuer")] if isinstance(value, dict) else []
    urls = [item["url"] for item in named if isinstance(item, dict) and isinstance(item.get("url"), str)]
    return masked(json.dumps(value), tuple(secret for url in urls for secret in url_secrets(url)))


def _settings(relay: Any) -> tuple[str, float, int, dict | None, bool]:
    """The relay URL, delta, colluding bound, issuer and ``sealed_v1`` (dpdist's deprecated envelope taken as well as
    RFC 9458 requests: default false) a campaign document's ``"relay"`` asks for."""
    example = ('{"url": "https://relay.example", "issuer": {"url": "https://issuer.example", "name": "issuer.example", '
               '"key": "commute", "token_key": "<base64url>", "independent": true, "tokens_each": 1}, "colluding": 0, '
               '"delta": 1e-8}')
    if not isinstance(relay, dict) or not set(relay) <= {"url", "delta", "colluding", "issuer", "sealed_v1"} or "url" not in relay:
        raise InvalidRequest("invalid_relay", f"'relay' must be an object naming the relay devices send to, such as {example} "
                                              f"('issuer' null: no admission tokens). Got {_without_passwords(relay)}.")
    url = relay["url"]
    if not _public_url(url):
        raise InvalidRequest("invalid_relay", f"'relay.url' must be the relay's http:// or https:// base URL, with a port in "
                                              f"1..65535 if any and without user:password@ ({HttpUrl.PUBLISHED}). Got "
                                              f"{json.dumps(redacted_url(url) if isinstance(url, str) else url)}.")
    delta = relay.get("delta", DEFAULT_DELTA)
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise InvalidRequest("invalid_relay", f"'relay.delta' must be a number with 0 < delta < 1. Got {json.dumps(delta)}.")
    colluding = relay.get("colluding", 0)
    if isinstance(colluding, bool) or not isinstance(colluding, int) or not 0 <= colluding <= 10**9:
        raise InvalidRequest("invalid_relay", "'relay.colluding' (the public bound on devices, credentials of the issuer, "
                                              "whose reports' values the collector knows) must be an integer >= 0. Got "
                                              f"{json.dumps(colluding)}.")
    sealed_v1 = relay.get("sealed_v1", False)  # dpdist's envelope, deprecated: taken only when asked for
    if not isinstance(sealed_v1, bool):
        raise InvalidRequest("invalid_relay", "'relay.sealed_v1' (whether the relay takes reports in dpdist's deprecated "
                                              "envelope besides Oblivious HTTP requests) must be true or false. Got "
                                              f"{json.dumps(sealed_v1)}.")
    issuer = relay.get("issuer")
    return url.rstrip("/"), float(delta), colluding, None if issuer is None else _issuer(issuer), sealed_v1


def _issuer(issuer: Any) -> dict:
    """The issuer of a campaign document's ``"relay"``, checked (its token key parses as an RFC 9578 type-2 key)."""
    fields = set(_ISSUER_FIELDS)
    if not isinstance(issuer, dict) or set(issuer) != fields:
        raise InvalidRequest("invalid_relay", f"'relay.issuer' must be an object with exactly {sorted(fields)} (or null; "
                                              "'tokens_each': the most tokens one credential gives, as the issuer publishes "
                                              "it with the key: GET {issuer}/issuer/v1/keys/{key}, or dpdist.client."
                                              f"issuer_of). Got {_without_passwords(issuer)}.")
    checks = (("url", _public_url, "an http:// or https:// URL, with a port in 1..65535 if any and without user:password@ "
                                   f"({HttpUrl.PUBLISHED})"),
              ("tokens_each", lambda v: isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 10_000,
               "the int in 1..10000 the issuer publishes with the key (the most tokens one of its credentials gives)"),
              ("name", lambda v: isinstance(v, str) and _ISSUER_NAME.fullmatch(v), "the issuer's host name (and port)"),
              ("key", lambda v: isinstance(v, str) and _KEY_NAME.fullmatch(v), "1-128 characters A-Z a-z 0-9 . _ -"),
              ("independent", lambda v: isinstance(v, bool), "true or false (false: the collector runs the issuer)"))
    for name, check, allowed in checks:
        if not check(issuer[name]):
            shown = redacted_url(issuer[name]) if isinstance(issuer[name], str) else issuer[name]
            raise InvalidRequest("invalid_relay", f"'relay.issuer.{name}' must be {allowed}. Got {json.dumps(shown)}.")
    try:
        token_key = b64url_decode(issuer["token_key"], "token_key")
        decode_token_key(token_key)
    except InvalidParameterError as error:
        raise InvalidRequest("invalid_relay", f"'relay.issuer.token_key' is not an issuer's token key: {error}") from None
    return {**issuer, "url": issuer["url"].rstrip("/"), "token_key": b64url_encode(token_key)}


def _spend_tokens(messages: list[bytes], issuer: dict, challenge: bytes, spent) -> tuple[list[bytes | str], list[str | None]]:
    """Each message's sealed report after a token that verifies, is bound to that report (:mod:`dpdist._wire._binding`)
    and was never spent (None where not, with the reason in place of the report), and each message's nonce (hex; None
    without a valid token, or with one bound to another report: a token a relay moved is not spent by the move)."""
    token_key = b64url_decode(issuer["token_key"], "token_key")
    nonces: list[str | None] = []
    reasons: list[str | None] = []
    for message in messages:
        if len(message) <= TOKEN_LENGTH:
            nonces.append(None)
            reasons.append("no_token")
            continue
        try:
            verified = verify_token(message[:TOKEN_LENGTH], token_key, challenge).hex()
        except InvalidTokenError:
            nonces.append(None)
            reasons.append("bad_token")
            continue
        bound = is_bound(message[:TOKEN_LENGTH], message[TOKEN_LENGTH:])
        nonces.append(verified if bound else None)
        reasons.append(None if bound else "token_not_bound")
    before = spent([nonce for nonce in dict.fromkeys(nonces) if nonce is not None])
    seen: set[str] = set()
    for index, nonce in enumerate(nonces):
        if nonce is not None and (nonce in before or nonce in seen):
            reasons[index], nonces[index] = "token_spent", None  # spent before, or twice in this batch: its second use
        elif nonce is not None:
            seen.add(nonce)
    sealed: list[bytes | str] = [message[TOKEN_LENGTH:] if reason is None else reason for message, reason in zip(messages, reasons)]
    return sealed, nonces


def _unframe(body: bytes, limits: Any) -> list[bytes]:
    messages = unframe(body, limits.max_json_rows)
    if not messages:
        raise MalformedReportError("A relayed batch holds no sealed report.")
    return messages


def smallest_group(groups: dict[str, int]) -> int | None:
    """The admitted reports of the envelope a relayed batch holds fewest of (None if it admits none): a report is hidden
    among its own envelope's reports only, which the collector tells apart."""
    return min((count for count in groups.values() if count > 0), default=None)


def _open_batch(campaign: CampaignRow, key: RelayKey, messages: list, limits: Any,
                counted) -> tuple[ReportBatch, dict[str, int], list[str], set[int]]:
    """The batch's reports, one row per message: a message refused before (its reason in its place), or that does not
    open, or is a copy of a report opened before (``replayed_report``: its ``enc`` in ``counted(encs)``, the ones the
    campaign's counted batches opened, or earlier in this batch), or does not hold exactly one report, is one rejected
    row (``unopened``, ``malformed_binary_http``, ``not_a_report_request``, ``malformed_report``, ``not_one_report``,
    ...); the admitted reports per envelope (``ohttp``, ``sealed_v1``: those the batch holds); the encapsulated keys
    (hex) of the messages that opened, copies excepted; and the indices of the rows rejected (their tokens are not
    spent: a token is spent only by the report it admits, so a relay that makes a device's report unreadable does not
    use up its token)."""
    opened = [_open_one(campaign, key, message) if not isinstance(message, str) else ("", message, None) for message in messages]
    before = counted([enc for enc in dict.fromkeys(one[2] for one in opened) if enc is not None])
    seen: dict[str, None] = {}
    refused: set[int] = set()
    for index, (envelope, result, enc) in enumerate(opened):
        if enc is not None and (enc in before or enc in seen):
            opened[index] = (envelope, "replayed_report", None)
        elif enc is not None:
            seen[enc] = None
    protocol = campaign.protocol
    layout, config = protocol.report_format, protocol.config()
    rows: list = []
    groups: Counter[str] = Counter()
    for index, (envelope, result, _) in enumerate(opened):
        report: ReportBatch | None = None
        reason = result if isinstance(result, str) else None
        if not isinstance(result, str):
            try:
                report = decode_body(protocol, result[1], result[0], None, limits)
                reason = None if report.n_read == 1 else "not_one_report"
            except Refusal:
                reason = "malformed_report"
        if report is None or reason is not None:
            rows.append(layout.rejected(1, reason or "malformed_report", config))
            refused.add(index)
            continue
        rows.append(report)
        groups[envelope] += report.n_valid
    return ReportBatch.concatenate(rows, layout, config), dict(groups), list(seen), refused


def _open_one(campaign: CampaignRow, key: RelayKey, message: bytes) -> tuple[str, tuple[str, bytes] | str, str | None]:
    """A message's envelope (``sealed_v1``: dpdist's; ``ohttp``: RFC 9458's, told apart by the first byte), its
    ``(content type, body)`` or the reason it is rejected, and its HPKE encapsulated key (hex) once it opened (the AEAD
    authenticates it: a relay cannot make a second message of one report under another).  A report in dpdist's envelope
    is opened also once the campaign turned that envelope off: its relay acknowledged it before (or within the few
    seconds its copy of the campaign's config is kept), and a report the relay acknowledged is never lost."""
    if _ohttp_report.is_encapsulated(message):
        if key.ohttp_private_key is None:
            return "ohttp", "unopened", None
        try:
            result = _ohttp_report.open_report(key.ohttp_private_key, campaign.id, message, MAX_SEALED_BYTES)
        except _ohttp_report.NotAReport as refusal:
            enc = None if refusal.reason == "unopened" else _ohttp_report.enc_of(message).hex()
            return "ohttp", refusal.reason, enc
        return "ohttp", result, _ohttp_report.enc_of(message).hex()
    try:
        return "sealed_v1", _envelope.open_sealed(key.private_key, campaign.id, message), _envelope.enc_of(message).hex()
    except MalformedReportError:
        return "sealed_v1", "unopened", None
