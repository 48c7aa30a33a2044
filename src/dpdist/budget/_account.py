"""A session's account: its charges composed into one loss and stated by its accountant (:mod:`dpdist.accounting`).

The charges compose sequentially (they may all touch the same people); each was first stated in the
session's relation.  The session's accountant reads the composed loss at the session's delta:
``"basic"`` adds epsilons and deltas, ``"zcdp"`` adds rhos, ``"pld"`` composes privacy loss
distributions, ``"tightest"`` takes the smallest of those that can state every charge.  A charge an
accountant cannot state (a mechanism with no PLD under ``"pld"``, no rho under ``"zcdp"``, any delta in
a pure session) is refused by name (:func:`unstateable`), never summed in some other currency.
"""

from __future__ import annotations

import math
from typing import Sequence

from ..accounting import ACCOUNTANTS, PrivacyLoss, Statement, cannot_state, sequential, state
from ..privacy import PrivacyGuarantee

__all__ = ["composed", "statement_of", "unstateable", "point_delta"]


def composed(charges: Sequence) -> PrivacyLoss | None:
    """The charges' losses composed in sequence (None before the first)."""
    return sequential([charge.loss for charge in charges]) if charges else None


def point_delta(charges: Sequence) -> float:
    """The deltas the charges state themselves, added up (what a further charge with a delta may still take)."""
    return math.fsum(charge.charged.delta for charge in charges)


def unstateable(total: PrivacyGuarantee, accountant: str, loss: PrivacyLoss) -> str | None:
    """Why the session's ``accountant`` cannot state ``loss`` at its delta (a sentence naming both), or None."""
    if accountant == "tightest":
        reasons = [cannot_state(name, loss, total.delta) for name in ACCOUNTANTS]
        if all(reason is not None for reason in reasons):
            return f"no accountant can state it at delta {total.delta:.3g} ({reasons[0]})"
        return None
    reason = cannot_state(accountant, loss, total.delta)
    return None if reason is None else f"the {accountant!r} accountant cannot state it at delta {total.delta:.3g}: {reason}"


def statement_of(total: PrivacyGuarantee, accountant: str, loss: PrivacyLoss) -> Statement:
    """The session accountant's statement of ``loss`` at the session's delta (``"tightest"`` at delta 0 is basic's:
    no accountant states a pure epsilon below the sum)."""
    return state(loss, total.delta, "basic" if accountant == "tightest" and total.delta == 0 else accountant)
