"""Campaigns collected through a relay (issue 34 item 3; docs/deployment.md, "Anonymous collection").

A campaign created with ``"relay": true`` (or ``{"delta": ...}``) gets, in the same request:

- an X25519 key pair (:mod:`dpdist.relay._envelope`) whose public half is in the campaign's public config
  (``"relay"``), so that devices seal their reports to it, and whose private half stays in the
  collector's database (table ``relayed_campaigns``, deleted with the campaign);
- the relay's identity: the SHA-256 of the relay token the service was started with
  (``DPDIST_RELAY_TOKEN``), the only credential that delivers batches to the campaign;
- a random submit token that nobody is told, so that a direct (non-relayed) submission is refused
  even before the campaign's relay row is read (the refusal names the reason: 409 ``relayed_campaign``).

The relay delivers ``PUT /api/campaigns/{c}/relayed/{batch_id}``: the sealed messages of one
shuffled batch, framed (:func:`dpdist.relay._envelope.unframe`).  Each message is opened with the
campaign's private key and must hold exactly one report (the amplification counts messages as
users); a message that does not open, or holds another number of reports, is one rejected row.  The
opened batch goes through the ordinary group commits (:meth:`~._service.Service.count`), so it is
counted once under the relay's random batch id, with its arrival time replaced by the campaign's
creation minute (:meth:`RelayedCampaigns.opened`): what is stored of a relayed batch is its relay
batch id, its size and its counts, no device's id and no time.  The group commit that counts a relayed
batch also lowers the campaign's ``smallest_batch`` (the running minimum of its batches' sizes) in
the same transaction, so the statement below reads one row.

The campaign states its guarantee (:func:`dpdist.amplification._statement.relayed_statement`): the
local one, and the amplified central one at the size of its smallest batch so far, with the assumptions.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from dataclasses import dataclass
from typing import Any

from ..errors import MalformedReportError
from ._campaigns import ARRIVAL_RESOLUTION_MS, Campaign, CampaignRow, check_batch_id, token_sha256
from ._refusals import Conflict, InvalidRequest, NotFound, Refusal, Unauthorized
from ._store import Store

__all__ = ["RelayedCampaigns", "DEFAULT_DELTA"]

#: the delta of the stated central guarantee when the campaign does not set one
DEFAULT_DELTA = 1e-8


@dataclass(frozen=True)
class RelayKey:
    """One relayed campaign's row: the relay's token hash, the key pair (raw bytes), the stated delta, and the size
    of its smallest batch so far (kept by the group commits that count its batches; None before the first)."""

    relay_token_sha256: str
    public_key: bytes
    private_key: bytes
    delta: float
    smallest_batch: int | None = None


class RelayedCampaigns:
    """The relayed campaigns of one service: creation, public fields, the relay's deliveries."""

    def __init__(self, store: Store, relay_token: str | None):
        self.store, self.relay_token = store, relay_token

    # ------------------------------------------------------------------ campaigns
    def create(self, document: dict, **options: Any) -> Campaign:
        """Create the campaign ``document`` describes (``options``: the store's ``create`` keywords) as relayed."""
        from ..relay import _envelope

        delta = _delta(document.get("relay"))
        if not self.relay_token:
            raise Conflict("no_relay_token", "This service has no relay token (DPDIST_RELAY_TOKEN or --relay-token): "
                               "no relay could deliver to a relayed campaign.")
        if options.get("enrollment") or options.get("submit_token") is not None:
            raise InvalidRequest("invalid_relay", "A relayed campaign takes no submit or enrollment token: devices "
                               "reach it through the relay only (a per-device token would identify the device).")
        pair = _envelope.generate_key()
        name: Any = document.get("campaign")  # checked by the store
        config: Any = document.get("config")
        campaign = self.store.create(name, config, **{
            **options, "submit_token": secrets.token_urlsafe(32)})  # known to no one: direct submissions refused
        self.store.db.execute(
            "INSERT INTO relayed_campaigns (campaign_id, export_file_id, relay_token_sha256, public_key, private_key, delta)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (campaign.id, campaign.export_file_id, token_sha256(self.relay_token), pair.public_key.hex(), pair.private_key.hex(), delta),
        )
        return campaign

    def key(self, campaign: CampaignRow) -> RelayKey | None:
        """The campaign's relay row, or None for a campaign collected directly."""
        rows = self.store.db.execute(
            "SELECT relay_token_sha256, public_key, private_key, delta, smallest_batch FROM relayed_campaigns"
            " WHERE campaign_id = ? AND export_file_id = ?", (campaign.id, campaign.export_file_id))
        if not rows:
            return None
        token, public, private, delta, smallest = rows[0]
        return RelayKey(token, bytes.fromhex(public), bytes.fromhex(private), float(delta),
                        None if smallest is None else int(smallest))

    def forget(self, campaign_id: str) -> None:
        """Delete a deleted campaign's keys."""
        self.store.db.execute("DELETE FROM relayed_campaigns WHERE campaign_id = ?", (campaign_id,))

    def statement(self, campaign: CampaignRow, key: RelayKey) -> dict:
        """The campaign's local guarantee and its amplified central one at its smallest batch so far (``key``'s running
        minimum: no scan of the batches)."""
        from ..amplification._statement import relayed_statement

        n = campaign.n if isinstance(campaign, Campaign) else self.store.totals(campaign.id).n
        return {"delta": key.delta, **relayed_statement(campaign.protocol, key.smallest_batch, n, key.delta)}

    def public_fields(self, campaign: CampaignRow) -> dict:
        """What the public config adds for a relayed campaign (nothing for a direct one)."""
        from ..relay import _envelope

        key = self.key(campaign)
        if key is None:
            return {}
        return {"relay": _envelope.public_key_config(key.public_key), "anonymity": self.statement(campaign, key),
                "submit_token_required": False}

    def summary_fields(self, campaign: CampaignRow) -> dict:
        """What the admin summary adds: whether the campaign is relayed, and its statement."""
        key = self.key(campaign)
        if key is None:
            return {"relayed": False}
        return {"relayed": True, "submit_token_required": False, "anonymity": self.statement(campaign, key)}

    def direct_refusal(self, campaign_id: str) -> Refusal | None:
        """The refusal of a direct submission to a relayed campaign (None if the campaign is not relayed)."""
        try:
            relayed = self.key(self.store.row(campaign_id)) is not None
        except NotFound:
            return None
        if not relayed:
            return None
        return Conflict("relayed_campaign", f"Campaign {campaign_id!r} is collected through a relay: send reports "
                            "to the relay (its URL is the one the campaign was announced with), not to the collector.")

    # ------------------------------------------------------------------ deliveries
    def admit(self, campaign_id: str, token: str) -> tuple[CampaignRow, RelayKey]:
        """The checks made before a relayed batch's body is read: a relayed campaign, the relay's token."""
        campaign = self.store.row(campaign_id)
        key = self.key(campaign)
        if key is None:
            raise Conflict("not_relayed", f"Campaign {campaign_id!r} is not collected through a relay.")
        if not hmac.compare_digest(token_sha256(token), key.relay_token_sha256):
            raise Unauthorized("unauthorized", f"Relayed batches of campaign {campaign_id!r} need the relay's token.")
        return campaign, key

    @staticmethod
    def digest(body: bytes) -> str:
        """What identifies a relayed batch's content (a redelivery under the same id is told apart from a reuse)."""
        return hashlib.sha256(b"relayed\n" + body).hexdigest()

    @staticmethod
    def arrival_ms(campaign: CampaignRow) -> int:
        """The one arrival time stored for every batch of a relayed campaign: its creation minute."""
        return campaign.created_ms // ARRIVAL_RESOLUTION_MS * ARRIVAL_RESOLUTION_MS

    def opened(self, campaign: CampaignRow, key: RelayKey, batch_id: str, body: bytes, limits: Any):
        """The relayed batch's reports, opened and validated (a :class:`~dpdist.local.ReportBatch`, one row per sealed
        message), ready for :meth:`~._service.Service.count` (module docstring)."""
        check_batch_id(batch_id)
        try:
            messages = _unframe(body, limits)
        except MalformedReportError as error:
            raise InvalidRequest("malformed_batch", str(error)) from None
        return _open_batch(campaign, key, messages, limits)


def _delta(relay: Any) -> float:
    """The delta a ``"relay"`` value of a campaign document asks for (true: :data:`DEFAULT_DELTA`)."""
    if relay is True:
        return DEFAULT_DELTA
    delta = relay.get("delta", DEFAULT_DELTA) if isinstance(relay, dict) and set(relay) <= {"delta"} else None
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise InvalidRequest("invalid_relay", f"'relay' must be true or {{\"delta\": d}} with 0 < d < 1. Got {json.dumps(relay)}.")
    return float(delta)


def _unframe(body: bytes, limits: Any) -> list[bytes]:
    from ..relay import _envelope

    messages = _envelope.unframe(body, limits.max_json_rows)
    if not messages:
        raise MalformedReportError("A relayed batch holds no sealed report.")
    return messages


def _open_batch(campaign: CampaignRow, key: RelayKey, messages: list[bytes], limits: Any):
    """The batch's reports, one row per sealed message: a message that does not open, or does not hold
    exactly one report, is one rejected row (``unopened``, ``not_one_report``)."""
    from ..local import ReportBatch
    from ..relay import _envelope
    from ._ingest import decode_body

    protocol = campaign.protocol
    layout = protocol.report_format
    rows = []
    for message in messages:
        try:
            content_type, plain = _envelope.open_sealed(key.private_key, campaign.id, message)
        except MalformedReportError:
            rows.append(layout.rejected(1, "unopened"))
            continue
        try:
            report = decode_body(protocol, plain, content_type, None, limits)
        except Refusal:
            rows.append(layout.rejected(1, "malformed_report"))
            continue
        rows.append(report if report.n_read == 1 else layout.rejected(1, "not_one_report"))
    return ReportBatch.concatenate(rows, layout)
