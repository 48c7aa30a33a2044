"""Google's ``dp_accounting`` as an independent peer of dpdist's composition: an :class:`~dpdist.accounting.Atoms` pair
as its PLD on the lattice ``step``, losses rounded up (pessimistic) or down (optimistic)."""

from __future__ import annotations

import numpy as np


def dp_accounting_pld(atoms, step: float = 1e-4, pessimistic: bool = True):
    from dp_accounting.pld import privacy_loss_distribution

    rounding = np.ceil if pessimistic else np.floor
    index = rounding(np.asarray(atoms.losses) / step).astype(np.int64)
    rounded: dict[int, float] = {}
    for value, mass in zip(index.tolist(), atoms.masses):
        rounded[value] = rounded.get(value, 0.0) + mass
    return privacy_loss_distribution.PrivacyLossDistribution.create_from_rounded_probability(
        rounded, atoms.infinity, step, pessimistic_estimate=pessimistic)
