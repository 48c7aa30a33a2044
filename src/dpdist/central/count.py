r"""A private count: the number of records (rows kept per person, with ``privacy_id``) plus exact discrete Laplace noise.

The count of a data set changes by one when a record is added or removed (sensitivity 1 under add/remove
neighbours; the count is what is private, so there are no replace neighbours here): the count plus
:math:`Z`, :math:`P(Z = z) \propto e^{-\varepsilon' |z|}` (:func:`~dpdist.central.noise.discrete_laplace`, exact, with
:math:`\varepsilon'` the dyadic rounding down of :math:`\varepsilon`), is :math:`\varepsilon`-DP (Ghosh, Roughgarden &
Sundararajan 2012, the geometric mechanism).  Per person (``privacy_id``) the rows are bounded to :math:`k` and the
noise runs at :math:`\varepsilon/k`: scale :math:`k/\varepsilon`, the sensitivity :math:`k` of a person's rows
(:mod:`dpdist.central._contributions`).  The interval is exact: with :math:`\rho = e^{-\varepsilon'}`,
:math:`P(|Z| \ge t) = 2\rho^t/(1 + \rho)` for :math:`t \ge 1`, and :math:`[\tilde c - t, \tilde c + t]` with the smallest
:math:`t` such that :math:`P(|Z| > t) \le 1 - \text{level}` covers the count with probability at least ``level``.
"""

from __future__ import annotations

import math

from .._types import ArrayLike, Seed
from .._validation import Interval, validate_params
from ..estimates import CountRelease
from ._common import check_central_input
from .noise import _dyadic_epsilon, _sampler_scale, discrete_laplace

__all__ = ["count"]


@validate_params({"level": Interval(0.0, 1.0, closed="neither")})
def count(x: ArrayLike, epsilon: float, *, level: float = 0.95, rng: Seed = None, secure: bool = False,
          missing: str | float = "refuse", privacy_id: ArrayLike | None = None,
          max_contributions: int | str | None = None) -> CountRelease:
    """The number of records of ``x`` under ``epsilon``-DP (add/remove neighbours), with its exact interval.

    Parameters
    ----------
    x : array_like
        The records (their values are not read, only their number; a missing value is what ``missing`` says).
    epsilon : float
    level : float
        Confidence level of the interval, in (0, 1).
    rng, secure, missing
        As in :func:`dpdist.central.histogram_queries` (``"drop"`` leaves the records without a value out).
    privacy_id, max_contributions : optional
        Whose row each value is, and the rows kept per person: the count of the rows kept, per person
        (:mod:`dpdist.central._contributions`).
        Ids compare exactly, numbers by value, strings as written (normalise them first); two kinds are refused
        (:mod:`dpdist._ids`).
    """
    owner = "count"
    data = check_central_input(owner, x, epsilon=epsilon, bounds=None, rng=rng, secure=secure, missing=missing,
                               neighbouring="add-remove", privacy_id=privacy_id, max_contributions=max_contributions,
                               bounded=False)
    noisy = float(data.x.size + int(discrete_laplace(1, 1, data.epsilon, data.rng)[0]))
    rho = _rho(data.epsilon)
    half = _half_width(rho, 1 - float(level))
    scale = math.sqrt(2 * rho) / (1 - rho)  # the standard deviation of the discrete Laplace law
    details = {"mechanism": "discrete Laplace (geometric mechanism), exact", "sensitivity": 1,
               "noise_scale": 1 / data.epsilon, "secure": data.secure}
    guarantee = data.stated(data.guarantee("add-remove"))
    return CountRelease(noisy, scale, noisy - half, noisy + half, float(level), "count", guarantee.epsilon,
                        data.details(**details), guarantee)


def _rho(epsilon: float) -> float:
    r""":math:`\rho = e^{-\varepsilon'}` of the law the sampler draws (its scale as it rounds it: never less noise)."""
    t, s = _sampler_scale(1 / _dyadic_epsilon(epsilon))
    return math.exp(-s / t)


def _half_width(rho: float, alpha: float) -> float:
    r"""The smallest :math:`t` with :math:`P(|Z| > t) = 2\rho^{t+1}/(1 + \rho) \le \alpha` (exact tails)."""
    if rho <= 0.0:
        return 0.0
    t = max(0, math.ceil(math.log(alpha * (1 + rho) / 2) / math.log(rho) - 1))
    while t > 0 and 2 * rho ** t / (1 + rho) <= alpha:  # one step down if the logarithms rounded up
        t -= 1
    return float(t)
