"""A session's account: its charges composed into one loss and stated by its accountant (:mod:`dpdist.accounting`).

The charges compose sequentially (they may all touch the same people); each was first stated in the
session's relation; the charges of one memo are one mechanism (:mod:`._derivation`).  The session's accountant reads the composed loss at the session's delta:
``"basic"`` adds epsilons and deltas, ``"zcdp"`` adds rhos, ``"pld"`` composes privacy loss
distributions, ``"tightest"`` takes the smallest of those that can state every charge.  A charge an
accountant cannot state (a mechanism with no PLD under ``"pld"``, no rho under ``"zcdp"``, any delta in
a pure session) is refused by name (:func:`unstateable`), never summed in some other currency.
"""

from __future__ import annotations

import math
from typing import Sequence

from ..accounting import ACCOUNTANTS, Atoms, Composed, Curve, PrivacyLoss, Statement, cannot_state, sequential, state
from .._guarantee import PrivacyGuarantee
from ._derivation import memo_total

__all__ = ["composed", "statement_of", "unstateable", "point_delta"]


def composed(charges: Sequence, relation: str = "replace") -> PrivacyLoss | None:
    """The charges' losses composed in sequence (None before the first); the charges of one memo as one mechanism,
    ``guarantee_over`` of all their reports (:func:`~._derivation.memo_total`), in the session's ``relation``."""
    if not charges:
        return None
    fresh = [charge.loss for charge in charges
             if charge.loss.derivation is None or charge.loss.derivation.get("kind") != "memo"]
    return sequential(fresh + memo_total(charges, relation))


def point_delta(charges: Sequence, accountant: str) -> float:
    """The delta the charges take before any conversion: their deltas added up under ``"basic"``; under another
    accountant the mass their loss distributions put at an infinite loss (a Gaussian's delta is no such mass: it is
    the conversion's, which the session's own delta pays)."""
    if accountant == "basic":
        return math.fsum(charge.charged.delta for charge in charges)
    return math.fsum(infinite_mass(charge.loss.distribution) if charge.loss.distribution is not None
                     else charge.charged.delta for charge in charges)


def infinite_mass(distribution) -> float:
    """The probability of an infinite loss (an upper bound: the masses of composed parts added up)."""
    if isinstance(distribution, Atoms):
        return distribution.infinity
    if isinstance(distribution, Curve):
        return distribution.deltas[-1]
    if isinstance(distribution, Composed):
        return math.fsum(count * infinite_mass(part) for part, count in distribution.parts)
    return 0.0


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
