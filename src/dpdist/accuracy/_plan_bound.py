r"""A cheap proof that a composed privacy loss's exact epsilon lies above a value: a plan's search skips its PLD there.

For a loss :math:`L` (under :math:`P`) the exact curve is :math:`\delta(t) = \mathbb E[(1 - e^{t - L})_+] \ge
(1 - e^{-c})\,\Pr[L \ge t + c]` for any :math:`c > 0`.  A composition sums independent losses, so its mean
:math:`\mu` and variance :math:`\sigma^2` are sums, and Cantelli's inequality gives, for :math:`a = \mu - (t + c) >
0`, :math:`\Pr[L > t + c] \ge a^2 / (\sigma^2 + a^2)`.  When that bound on :math:`\delta(t)` is above ``delta``, every
:math:`\varepsilon \le t` has :math:`\delta(\varepsilon) > \delta` (the curve does not increase): the exact epsilon at
``delta`` is above :math:`t`, and so is any accountant's, each an upper bound on it (the ``pld`` one rounds losses
up and moves truncated tails to :math:`+\infty`).  :func:`dpdist.accuracy.explain_plan` asks whether a per-campaign
epsilon fits its target: where this proves it does not (a year of campaigns at the target's epsilon each, 1.7 CPU-s
of composition for GRR), the answer is the one the composition would give, without it.
"""

from __future__ import annotations

import math

from ..accounting import Atoms, Composed, LossDistribution

__all__ = ["surely_above"]

#: how far above the value the proof must reach, and by what factor above ``delta`` (room for any rounding)
_RELATIVE_MARGIN = 1e-3
_DELTA_FACTOR = 2.0


def _moments(distribution: LossDistribution) -> tuple[float, float] | None:
    """The mean and variance of a composition of :class:`Atoms` with no infinite loss; ``None`` for anything else."""
    if isinstance(distribution, Atoms):
        if distribution.infinity > 0:
            return None
        pairs = [(loss, mass) for loss, mass in zip(distribution.losses, distribution.masses) if mass > 0]
        if not all(math.isfinite(loss) for loss, _ in pairs):
            return None
        mean = math.fsum(loss * mass for loss, mass in pairs)
        return mean, math.fsum(mass * (loss - mean) ** 2 for loss, mass in pairs)
    if isinstance(distribution, Composed):
        mean = variance = 0.0
        for part, count in distribution.parts:
            moments = _moments(part)
            if moments is None:
                return None
            mean, variance = mean + count * moments[0], variance + count * moments[1]
        return mean, variance
    return None


def surely_above(distribution: LossDistribution | None, delta: float, epsilon: float) -> bool:
    """Whether the exact epsilon of ``distribution`` at ``delta`` is provably above ``epsilon`` (module docstring);
    ``False`` when the bound cannot tell (the caller then computes)."""
    moments = None if distribution is None else _moments(distribution)
    if moments is None:
        return False
    mean, variance = moments
    t = epsilon * (1 + _RELATIVE_MARGIN) + _RELATIVE_MARGIN
    gap = mean - (t + 1.0)  # c = 1
    if not gap > 0:
        return False
    bound = -math.expm1(-1.0) * gap**2 / (variance + gap**2)
    return bound > _DELTA_FACTOR * delta
