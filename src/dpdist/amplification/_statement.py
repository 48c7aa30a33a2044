"""What a campaign collected through a relay states: its local guarantee, the amplified central one, the assumptions."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

from .._guarantee import PrivacyGuarantee
from ..local import from_config
from ._accounting import account

__all__ = ["ASSUMPTIONS", "Admission", "relayed_statement"]

#: what the central guarantee rests on, party by party (docs/deployment.md, "Anonymous collection", "Threat model")
ASSUMPTIONS = (
    "relay: does not collude with the collector (it learns who sent a report, never what: the reports are sealed to "
    "the collector's key)",
    "issuer: does not mint tokens for the collector beyond its policy (it learns who got a token, never which: the "
    "signature is blind)",
    "devices: at most `colluding` of a batch's admitted reports come from devices whose values the collector knows "
    "(a public campaign setting); each token admits one report",
    "collector: stores no per-device id and no arrival time, and refuses direct submissions to the campaign",
)


@dataclass(frozen=True)
class Admission:
    """Who may put a report in a relayed campaign's batches: the campaign's issuer (None: anyone), whether it is
    independent of the collector, and ``colluding``, the public bound on admitted reports of devices whose values
    the collector knows."""

    issuer: str | None
    independent: bool
    colluding: int


def relayed_statement(protocol, smallest_batch: int | None, reports: int, delta: float, admission: Admission) -> dict:
    """The guarantees of a relayed campaign whose batches so far held at least ``smallest_batch`` admitted reports.

    A report is *admitted* when the collector verified its token (valid for the campaign, never spent
    before), opened it and read exactly one report from it; messages it could not open or verify
    never count (docs/deployment.md, "Accounting").  ``central`` is the amplified guarantee at
    ``n = smallest_batch - colluding`` (each report was shuffled among the others of its batch, at
    most ``colluding`` of which the collector may know), None before the first batch, or a
    ``reason`` when the collector could have filled a batch itself (no issuer, or one it runs), for
    memoized protocols, or when no other honest report hid it.
    """
    statement = {
        "local": {**protocol.guarantee.to_dict(), "describe": protocol.guarantee.describe()},
        "reports": int(reports),
        "smallest_batch": smallest_batch,
        "admission": {"issuer": admission.issuer, "issuer_independent": admission.independent,
                      "colluding": admission.colluding},
        "assumptions": list(ASSUMPTIONS),
        "central": None,
    }
    if admission.issuer is None:
        statement["central"] = {"reason": "no admission: anyone, the collector included, can send reports through the "
                                "relay and fill a batch with its own, so against the collector only the local guarantee "
                                "holds (the relay still hides who sent which report)"}
    elif not admission.independent:
        statement["central"] = {"reason": "the campaign's issuer is run by the collector, which can mint tokens for "
                                "reports of its own and fill a batch with them: against the collector only the local "
                                "guarantee holds"}
    elif smallest_batch is None:
        return statement
    elif protocol.tags.memoized:
        statement["central"] = {"reason": "a memoized protocol's reports share a device's memo: no amplified guarantee"}
    elif smallest_batch - admission.colluding < 2:
        statement["central"] = {"reason": f"a batch of {smallest_batch} admitted reports, up to {admission.colluding} of "
                                "them from devices colluding with the collector, hides a report among no others"}
    else:
        hidden = int(smallest_batch) - admission.colluding
        statement["central"] = dict(_central(json.dumps(protocol.config(), sort_keys=True), hidden, float(delta)))
    return statement


@functools.lru_cache(maxsize=256)
def _central(config: str, n: int, delta: float) -> tuple:
    result = account(from_config(json.loads(config)), n, delta)
    guarantee = PrivacyGuarantee(max(result.epsilon, 1e-12), result.delta, "replace", "central")
    return tuple({**guarantee.to_dict(), "describe": guarantee.describe(), "n": n, "method": result.method,
                  "notes": list(result.notes)}.items())
