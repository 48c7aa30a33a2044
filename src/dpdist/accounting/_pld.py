r"""The loss distributions of :mod:`._distributions` as ``dp_accounting`` PLDs: discretized, composed, converted.

Google's ``dp_accounting`` (``dp_accounting.pld``; Doroshenko et al., PETS 2022; Koskela, Jälkö &
Honkela, AISTATS 2020) does the work: every loss is rounded *up* to a multiple of the discretization
interval :math:`h` (a pessimistic estimate: each :math:`\delta(\varepsilon)` read off is an upper
bound for the exact pair), compositions are FFT convolutions whose far tails (at most
``TAIL_MASS`` each) go to :math:`+\infty`, and :math:`\varepsilon(\delta)` is read off the
result.  Rounding up overstates a composition of :math:`k` mechanisms by at most :math:`k h` in
loss, so :math:`\varepsilon(\delta)` is at most :math:`k h` above the exact one (the stated
discretization error, :func:`discretization_error`).

``dp_accounting`` is imported here only, when a number is first asked for (it loads SciPy's signal
module: about 1.6 s), and each discretized PLD is kept for the process (keyed by the values, which
are hashable).
"""

from __future__ import annotations

import functools
import math
from collections import defaultdict
from typing import Any

import numpy as np

from .._validation import Interval, validate_params
from ._distributions import LOSS_DISTRIBUTION, Atoms, Composed, Curve, GaussianLoss, LossDistribution

__all__ = ["DISCRETIZATION", "TAIL_MASS", "epsilon_at", "delta_at", "discretization_error", "dp_accounting_pld"]

#: the loss lattice's step (``dp_accounting``'s default): 365 compositions overstate epsilon by at most 0.0365
DISCRETIZATION = 1e-4
#: mass each composition may move from the far tails to +infinity (``dp_accounting``'s default)
TAIL_MASS = 1e-15


def epsilon_at(loss: LossDistribution, delta: float, discretization: float = DISCRETIZATION) -> float:
    """The smallest epsilon whose delta is at most ``delta`` (an upper bound: ``inf`` when none is finite)."""
    return float(dp_accounting_pld(loss, discretization).get_epsilon_for_delta(delta))


def delta_at(loss: LossDistribution, epsilon: float, discretization: float = DISCRETIZATION) -> float:
    """An upper bound on the delta of ``loss`` at ``epsilon``."""
    return float(dp_accounting_pld(loss, discretization).get_delta_for_epsilon(epsilon))


def discretization_error(loss: LossDistribution, discretization: float = DISCRETIZATION) -> float:
    """How far above the exact epsilon the rounding may put :func:`epsilon_at` (compositions times the step)."""
    return mechanisms(loss) * discretization


def mechanisms(loss: LossDistribution) -> int:
    """How many mechanisms ``loss`` composes (1 unless :class:`Composed`)."""
    if isinstance(loss, Composed):
        return sum(count * mechanisms(part) for part, count in loss.parts)
    return 1


@validate_params({
    "loss": LOSS_DISTRIBUTION,
    "discretization": Interval(0.0, math.inf, closed="neither"),
})
@functools.lru_cache(maxsize=256)
def dp_accounting_pld(loss: LossDistribution, discretization: float = DISCRETIZATION) -> Any:
    """``loss`` as a pessimistic ``dp_accounting.pld.PrivacyLossDistribution`` on the lattice ``discretization``."""
    # lazy: dp_accounting loads scipy.signal (1.6 s); only an accountant that composes PLDs needs it
    from dp_accounting.pld import pld_pmf, privacy_loss_distribution as pld

    if isinstance(loss, Atoms):
        rounded: dict[int, float] = defaultdict(float)
        for value, mass in zip(loss.losses, loss.masses):
            if mass > 0:
                rounded[math.ceil(value / discretization)] += mass
        return pld.PrivacyLossDistribution.create_from_rounded_probability(
            dict(rounded), loss.infinity, discretization, pessimistic_estimate=True)
    if isinstance(loss, GaussianLoss):
        return pld.from_gaussian_mechanism(loss.sigma, 1.0, pessimistic_estimate=True,
                                           value_discretization_interval=discretization)
    if isinstance(loss, Curve):
        rounded_epsilons, deltas = _rounded_curve(loss, discretization)
        pmf = pld_pmf.create_pmf_pessimistic_connect_dots(discretization, rounded_epsilons, deltas)
        return pld.PrivacyLossDistribution(pmf)
    total = None  # Composed: the table admits no other kind
    for part, count in loss.parts:
        one = dp_accounting_pld(part, discretization)
        step = one if count == 1 else one.self_compose(count, tail_mass_truncation=TAIL_MASS)
        total = step if total is None else total.compose(step, tail_mass_truncation=TAIL_MASS)
    return total


def _rounded_curve(curve: Curve, discretization: float) -> tuple[np.ndarray, np.ndarray]:
    """The curve's epsilons rounded up to the lattice, each keeping the largest delta of the points it gathers
    (a bound at a smaller epsilon holds at a larger one: delta is non-increasing), made non-increasing."""
    epsilons = np.ceil(np.asarray(curve.epsilons) / discretization).astype(np.int64)
    deltas = np.asarray(curve.deltas, dtype=np.float64)
    unique, first = np.unique(epsilons, return_index=True)
    largest = np.maximum.reduceat(deltas, first)
    return unique, np.minimum.accumulate(largest)
