"""What a campaign collected through a relay states: its local guarantee, the amplified central one, the assumptions."""

from __future__ import annotations

import functools
import json

from .._guarantee import PrivacyGuarantee
from ..local import from_config
from ._accounting import account

__all__ = ["ASSUMPTIONS", "relayed_statement"]

#: what the central guarantee rests on (docs/deployment.md, "Anonymous collection")
ASSUMPTIONS = (
    "the relay and the collector do not collude",
    "each sealed message is one report of one device, and a device sends one report to the campaign",
    "the relay forwards what devices sent, shuffled, in batches of at least its public minimum (it injects and replays nothing)",
    "the collector stores no per-device id and no arrival time, and refuses direct submissions to the campaign",
)


def relayed_statement(protocol, smallest_batch: int | None, reports: int, delta: float) -> dict:
    """The guarantees of a relayed campaign whose reports so far came in batches of at least ``smallest_batch``.

    ``central`` is the amplified guarantee at ``n = smallest_batch`` (each report was shuffled among
    the reports of its batch), None before the first batch, or with a ``reason`` when there is
    none (memoized protocols, a batch of one).
    """
    statement = {
        "local": {**protocol.guarantee.to_dict(), "describe": protocol.guarantee.describe()},
        "reports": int(reports),
        "smallest_batch": smallest_batch,
        "assumptions": list(ASSUMPTIONS),
        "central": None,
    }
    if smallest_batch is None:
        return statement
    if protocol.tags.memoized:
        statement["central"] = {"reason": "a memoized protocol's reports share a device's memo: no amplified guarantee"}
    elif smallest_batch < 2:
        statement["central"] = {"reason": "a batch of one report hides it among no others"}
    else:
        statement["central"] = dict(_central(json.dumps(protocol.config(), sort_keys=True), int(smallest_batch), float(delta)))
    return statement


@functools.lru_cache(maxsize=256)
def _central(config: str, n: int, delta: float) -> tuple:
    result = account(from_config(json.loads(config)), n, delta)
    guarantee = PrivacyGuarantee(max(result.epsilon, 1e-12), result.delta, "replace", "central")
    return tuple({**guarantee.to_dict(), "describe": guarantee.describe(), "n": n, "method": result.method,
                  "notes": list(result.notes)}.items())
