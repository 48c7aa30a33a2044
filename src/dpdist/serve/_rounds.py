"""Campaigns that run in rounds: adaptive LDP quantiles (docs/explanation/adaptive-quantiles.md).

A campaign created with ``"rounds": {plan}`` (an :class:`~dpdist.local.AdaptiveQuantiles` config and
``"reports"``, the users of all rounds) runs the plan's rounds one after the other:

- Round ``k`` (1-based) is an ordinary campaign of its own, ``{campaign}-r{k}``, whose config is the
  round's ``threshold`` protocol (its cuts and its round number) and whose ``max_reports`` is the
  round's group size: its reports, refusals and batch ids are counted, kept durable and recovered
  exactly as every campaign's are.
- Devices fetch the campaign's public config (``GET /api/campaigns/{campaign}/config``): it carries the
  current round's config and client view, ``"rounds"`` (the round number, the plan, the thresholds)
  and ``"submit_to"``, the round's campaign, where the device submits its one report.
- When the round's group is full (its count of reports reached its size: a batch larger than the room
  left is refused whole and leaves the round open; or an admin closes it, ``POST .../rounds/advance``), the round's
  campaign is closed (which waits for the commits in flight), round ``k + 1``'s cuts are derived from
  the aggregates of rounds ``1..k`` (:meth:`~dpdist.local.AdaptiveQuantiles.protocol`), and its
  campaign is created and opened; the round pointer in ``round_campaigns`` moves last, so a crash
  between the steps is finished by the next fetch (every step is idempotent).
- A batch for a round that is over is refused, 409 ``stale_round``, and counted in that round's
  ``refused_batches`` (a retry of a batch it acknowledged still gets its acknowledgement).

The parent campaign's own row holds round 1's config and a submit token nobody is told (a device that
submits to it directly is told where to submit instead); the rounds' campaigns take the submit token the
campaign was created with.  Every user answers in one round only (the groups are disjoint): the
guarantee is each round's, epsilon-LDP per user by parallel composition.
"""

from __future__ import annotations

import json
import re
import secrets
import threading
from dataclasses import dataclass
from typing import Any, Callable, cast

from ..errors import DPDistError
from ..local import AdaptiveQuantiles
from ._campaigns import Campaign, CampaignRow, Creation, token_sha256
from .._guard._refusals import Conflict, InvalidRequest, NotFound, Refusal
from ._store import Store

__all__ = ["RoundCampaigns", "ROUND_NAME"]

#: how a round's campaign is named: ``{campaign}-r{k}``
ROUND_NAME = re.compile(r"-r[0-9]+$")
#: a round's campaign is named ``{campaign}-r{k}``: the campaign id leaves room for the suffix
MAX_ID = 58


@dataclass(frozen=True)
class Rounds:
    """One rounds campaign's row: its plan, the group size of each round, the current round (1-based)."""

    campaign_id: str
    plan: Any  # dpdist.local.AdaptiveQuantiles
    sizes: tuple[int, ...]
    round: int
    submit_token_sha256: str | None
    keep_reports: bool

    def child(self, round_number: int) -> str:
        return f"{self.campaign_id}-r{round_number}"


class RoundCampaigns:
    """The rounds campaigns of one service: creation, the public fields, advancing, stale rounds."""

    def __init__(self, store: Store, changed: Callable[[str], None] = lambda campaign_id: None):
        self.store, self.changed = store, changed  # changed(id): admission reads the campaign again
        self._lock = threading.Lock()  # one advance at a time in this process (others: the conditional update)

    # ------------------------------------------------------------------ creation
    def create(self, document: dict, **options: Any) -> Campaign:
        """Create the rounds campaign ``document`` describes (``options``: the store's ``create`` keywords)."""
        plan, total = _plan(document.get("rounds"))
        name: Any = document.get("campaign")
        if isinstance(name, str) and len(name) > MAX_ID:
            raise InvalidRequest("invalid_campaign_id", f"A rounds campaign's id has at most {MAX_ID} characters (its "
                                 f"rounds are named '<id>-r<k>'). Got {len(name)}.")
        if document.get("config") is not None or options.get("enrollment") or options.get("max_reports") is not None:
            raise InvalidRequest("invalid_rounds", "A rounds campaign takes no 'config', 'max_reports' or 'enrollment': "
                                 "each round's config and size come from the plan ('rounds').")
        token = options.get("submit_token")
        if token is not None and (not isinstance(token, str) or len(token) < 16):
            raise InvalidRequest("invalid_submit_token", "A submit token must be a string of at least 16 characters.")
        sizes = [int(s) for s in plan.group_sizes(total)]
        taken = [f"{name}-r{k}" for k in range(1, plan.rounds + 1) if isinstance(name, str) and self._exists(f"{name}-r{k}")]
        if taken:
            raise Conflict("campaign_exists", f"The rounds of a campaign {name!r} would be named {taken[0]!r}, a campaign "
                           "that exists already; choose another id.")
        first = plan.protocol(0, [])
        campaign = self.store.create(name, first.config(), submit_token=secrets.token_urlsafe(32),
                                     keep_reports=bool(options.get("keep_reports")))
        self.store.db.execute(
            "INSERT INTO round_campaigns (campaign_id, export_file_id, plan, sizes, round, submit_token_sha256, keep_reports)"
            " VALUES (?, ?, ?, ?, 1, ?, ?)",
            (campaign.id, campaign.export_file_id, json.dumps(plan.config()), json.dumps(sizes),
             None if token is None else token_sha256(token), int(bool(options.get("keep_reports")))),
        )
        return campaign

    def of(self, campaign: CampaignRow | Creation) -> Rounds | None:
        """The campaign's rounds row, or None for any other campaign."""
        rows = self.store.db.execute(
            "SELECT plan, sizes, round, submit_token_sha256, keep_reports FROM round_campaigns"
            " WHERE campaign_id = ? AND export_file_id = ?", (campaign.id, campaign.export_file_id))
        if not rows:
            return None
        plan, sizes, current, token, keep = rows[0]
        return Rounds(campaign.id, AdaptiveQuantiles.from_config(json.loads(plan)), tuple(json.loads(sizes)), int(current),
                      token, bool(keep))

    def parent_of(self, campaign_id: str) -> tuple[Rounds, int] | None:
        """``(rounds, k)`` when ``campaign_id`` is round ``k``'s campaign of a rounds campaign, else None."""
        base, _, number = campaign_id.rpartition("-r")
        if not base or not (number.isascii() and number.isdigit()):
            return None
        try:
            rounds = self.of(self.store.row(base))
        except (NotFound, InvalidRequest):
            return None
        k = int(number)
        return (rounds, k) if rounds is not None and 1 <= k <= rounds.plan.rounds else None

    def forget(self, campaign_id: str) -> None:
        """Delete a deleted rounds campaign's rounds (their campaigns too)."""
        rows = self.store.db.execute("SELECT plan FROM round_campaigns WHERE campaign_id = ?", (campaign_id,))
        for (plan,) in rows:
            for k in range(1, int(json.loads(plan)["rounds"]) + 1):
                try:
                    self.store.delete(f"{campaign_id}-r{k}")
                except NotFound:
                    pass
        self.store.db.execute("DELETE FROM round_campaigns WHERE campaign_id = ?", (campaign_id,))

    # ------------------------------------------------------------------ state changes
    def transitioned(self, campaign: Campaign) -> None:
        """After the campaign opened or closed: open its current round's campaign, or close it."""
        rounds = self.of(campaign)
        if rounds is None:
            return
        if campaign.state == "open":
            self._open_round(rounds, rounds.round)
        elif campaign.state == "closed":
            self._close(rounds.child(rounds.round))

    def advance(self, campaign_id: str, *, force: bool = False) -> Rounds | None:
        """Move an open rounds campaign to its next round when the current one is full (``force``: now); the rounds."""
        with self._lock:
            parent = self.store.row(campaign_id)
            rounds = self.of(parent)
            if rounds is None or parent.state != "open":
                return rounds
            k = rounds.round
            self._open_round(rounds, k)  # a crash between creating a round and opening it is finished here
            current = self.store.get(rounds.child(k))
            # full only when its count reached its size: a batch refused as larger than the room left (campaign_full)
            # leaves the round open for the batches that fit (the group commit checks the cap under its lock)
            full = current.n >= rounds.sizes[k - 1]
            if not force and current.state == "open" and not full:
                return rounds
            self._close(rounds.child(k))
            if k == rounds.plan.rounds:
                self.store.transition(campaign_id, "closed")
                self.changed(campaign_id)
                return rounds
            self._open_round(rounds, k + 1)
            self.store.db.execute("UPDATE round_campaigns SET round = ? WHERE campaign_id = ? AND round = ?",
                                  (k + 1, campaign_id, k))
            return self.of(parent)

    def _open_round(self, rounds: Rounds, k: int) -> None:
        """Create (if missing) and open round ``k``'s campaign, its config derived from rounds ``1..k-1``."""
        name = rounds.child(k)
        if not self._exists(name):
            protocol = rounds.plan.protocol(k - 1, self.history(rounds, k - 1))
            try:
                self.store.create(name, protocol.config(), keep_reports=rounds.keep_reports, max_reports=rounds.sizes[k - 1])
            except Conflict:
                pass  # another process created it (from the same closed rounds: the same config)
        row = self.store.row(name)
        if row.config.get("protocol") != "threshold" or row.config.get("round") != k:
            raise Conflict("round_name_taken", f"Campaign {name!r} is not round {k} of {rounds.campaign_id!r}; the "
                           "rounds campaign cannot go on (delete or rename the other campaign).")
        if row.state == "created":  # the campaign's submit token before any device can reach it
            self.store.db.execute("UPDATE campaigns SET submit_token_sha256 = ? WHERE id = ? AND state = 'created'",
                                  (rounds.submit_token_sha256, name))
            self.store.transition(name, "open")
            self.changed(name)

    def _close(self, name: str) -> None:
        try:
            if self.store.row(name).state == "open":
                self.store.transition(name, "closed")
                self.changed(name)
        except NotFound:
            pass

    def history(self, rounds: Rounds, through: int) -> list:
        """The aggregates of rounds ``1..through`` (closed rounds: fixed)."""
        return [self.store.get(rounds.child(k), statistic=True).aggregator() for k in range(1, through + 1)]

    # ------------------------------------------------------------------ what devices and admins see
    def public_fields(self, campaign: CampaignRow) -> dict:
        """What the public config of a rounds campaign says instead; of a round's campaign, whose round it is
        (``round_of``: devices answer one round of a campaign); nothing for any other campaign."""
        rounds = self.of(campaign)
        if rounds is None:
            parent = self.parent_of(campaign.id) if ROUND_NAME.search(campaign.id) else None
            # the rounds' sizes: a device draws its round in proportion to them (dpdist.local.ledger, round_for)
            return {} if parent is None else {"round_of": parent[0].campaign_id, "round_sizes": list(parent[0].sizes)}
        rounds = self.advance(campaign.id) or rounds
        child = self.store.row(rounds.child(rounds.round)) if self._exists(rounds.child(rounds.round)) else None
        protocol = child.protocol if child is not None else rounds.plan.protocol(0, [])
        room = None  # reports the open round still takes: a client sends at most that many (one per device)
        if child is not None and child.state == "open":
            room = max(0, rounds.sizes[rounds.round - 1] - self.store.totals(child.id).n)
        return {"config": protocol.config(), "client_view": protocol.client_view(),
                "submit_to": None if child is None else child.id, "submit_token_required": rounds.submit_token_sha256 is not None,
                "rounds": {**self._status(rounds, protocol), "round_state": "created" if child is None else child.state,
                           "room": room}}

    def _exists(self, name: str) -> bool:
        try:
            self.store.row(name)
            return True
        except (NotFound, InvalidRequest):
            return False

    def reserved(self, campaign_id: Any) -> Refusal | None:
        """The refusal of a new campaign named as a round of a rounds campaign (None: the name is free of that)."""
        found = self.parent_of(campaign_id) if isinstance(campaign_id, str) else None
        if found is None:
            return None
        rounds, k = found
        return Conflict("campaign_exists", f"The id {campaign_id!r} is round {k} of campaign {rounds.campaign_id!r}; "
                        "choose another id.")

    @staticmethod
    def _status(rounds: Rounds, protocol) -> dict:
        return {"round": rounds.round, "of": rounds.plan.rounds, "campaign": rounds.child(rounds.round),
                "cuts": list(protocol.cuts), "thresholds": protocol.thresholds.tolist(), "plan": rounds.plan.config(),
                "sizes": list(rounds.sizes)}

    def summary_fields(self, campaign: CampaignRow) -> dict:
        """What the admin summary adds for a rounds campaign: the round it is in."""
        rounds = self.of(campaign)
        if rounds is None:
            return {}
        return {"rounds": {"round": rounds.round, "of": rounds.plan.rounds, "campaign": rounds.child(rounds.round),
                           "plan": rounds.plan.config(), "sizes": list(rounds.sizes)}}

    def report(self, campaign_id: str) -> dict:
        """Every round's campaign with its counts, the quantiles released from the rounds so far, and the
        rounds' histories one after another, each round's reports added to those of the rounds before it (admin).
        """
        rounds = self.advance(campaign_id) or self.of(self.store.row(campaign_id))
        if rounds is None:
            raise Conflict("not_rounds", f"Campaign {campaign_id!r} does not run in rounds.")
        listed, history, arrivals = [], [], []
        points = max(1, 200 // rounds.round)  # the whole history in about 200 points, as one campaign's
        before = {"n": 0, "batches": 0}  # the earlier rounds' totals
        for k in range(1, rounds.round + 1):
            if not self._exists(rounds.child(k)):
                break
            campaign = self.store.get(rounds.child(k), statistic=True)
            history.append(campaign.aggregator())
            own = self.store.history(campaign.id, points)
            arrivals += [{**point, "n": before["n"] + point["n"], "batches": before["batches"] + point["batches"]}
                         for point in own]
            if own:
                before = {"n": arrivals[-1]["n"], "batches": arrivals[-1]["batches"]}
            listed.append({"round": k, "campaign": campaign.id, "state": campaign.state, "n": campaign.n,
                           "size": rounds.sizes[k - 1], "cuts": list(cast(Any, campaign.protocol).cuts),  # a round's protocol: ThresholdRR
                           "rejected": dict(campaign.rejected), "refused_batches": dict(campaign.refused)})
        estimate = None
        if sum(a.n for a in history):
            estimate = rounds.plan.estimate(history).to_dict()
        return {"campaign": campaign_id, "round": rounds.round, "of": rounds.plan.rounds, "plan": rounds.plan.config(),
                "rounds": listed, "estimate": estimate, "history": arrivals}

    # ------------------------------------------------------------------ refusals
    def stale_refusal(self, campaign_id: str) -> Refusal | None:
        """The refusal of a batch for a round that is over (None: ``campaign_id`` is no round's campaign)."""
        found = self.parent_of(campaign_id)
        if found is None:
            return None
        rounds, k = found
        return Conflict("stale_round", f"Round {k} of campaign {rounds.campaign_id!r} is over; fetch "
                        f"/api/campaigns/{rounds.campaign_id}/config for the current round and answer its question.")

    def direct_refusal(self, campaign: Creation) -> Refusal | None:
        """The refusal of a submission to the rounds campaign itself (None: not a rounds campaign)."""
        rounds = self.of(campaign) if campaign.rounds else None
        if rounds is None:
            return None
        return Conflict("rounds_campaign", f"Campaign {campaign.id!r} runs in rounds: submit to the current round's "
                        f"campaign ('submit_to' of /api/campaigns/{campaign.id}/config, now {rounds.child(rounds.round)!r}).")


def _plan(document: Any):
    """The plan and the total reports of a ``"rounds"`` value, or an ``invalid_rounds`` refusal."""
    if not isinstance(document, dict) or "reports" not in document:
        raise InvalidRequest("invalid_rounds", "'rounds' must be an object: an adaptive quantile plan (q, epsilon, bounds, "
                             f"rounds, grid_size, splits, level) and 'reports', the users of all rounds. Got {document!r:.200}.")
    plan_document = {key: value for key, value in document.items() if key != "reports"}
    total = document["reports"]
    try:
        plan = AdaptiveQuantiles.from_config(plan_document)
        if isinstance(total, bool) or not isinstance(total, int) or not 0 < total <= 2**53:
            raise InvalidRequest("invalid_rounds", f"'rounds.reports' must be a positive integer. Got {total!r}.")
        plan.group_sizes(total)
    except DPDistError as error:
        raise InvalidRequest("invalid_rounds", f"'rounds' is not a valid plan: {error}") from None
    return plan, total
