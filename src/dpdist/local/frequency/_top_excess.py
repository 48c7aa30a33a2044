r"""The top of a GRR campaign against what the rest of the reports allow: the estimates' excess above a level.

Fake reports that all name one rare item (the maximal gain attack of Cao, Jia & Gong, USENIX
Security 2021) raise its estimate by :math:`\beta(1 - q)/(p - q)` for a fake share :math:`\beta`
(:math:`\varepsilon = 1`, :math:`d = 128`: 75 :math:`\beta`, so 1.5 % of fakes move an item of
frequency 0.002 to about 1.1).  The per-item test (:mod:`dpdist.serve._diagnostics`) sees it only
once the item alone is above 1 by five standard errors, and the likelihood ratio
(:mod:`._feasibility`) pays for its :math:`d - 1` degrees of freedom.  But an honest population
cannot put mass 1 on the target *and* keep its heavy items: the estimates of the top of the
distribution, together, exceed what the rest of the reports allow.  This test reads exactly that.

**The statistic.**  For a level :math:`\varphi` (an estimate; :math:`c = N(q + \varphi(p - q))` in
reports), the mass the estimates hold above it,

.. math::

    S_\varphi = \sum_v (\hat f_v - \varphi)^+ = \frac{1}{N(p - q)} \sum_v (C_v - c)^+ ,

with :math:`C_v` the reports naming item :math:`v` among :math:`N`.  An honest population puts
at most its whole mass, 1, above any level, plus what the noise adds.

**The bound, for every n and every honest population.**  GRR reports its user's item with
probability :math:`p` and each other with :math:`q`; equivalently (the sampler of
:mod:`.grr`) each report independently keeps its user's item with probability :math:`r = p - q`,
else names an item drawn uniformly from all :math:`d` (:math:`dq + r = 1`).  So :math:`C_v = U_v +
G_v`, with :math:`(G, U_1, \dots, U_d)` the counts of the "kept" branch and of each uniform item:
a multinomial :math:`(N; r, q, \dots, q)` whatever the users hold (fixed or drawn), and
:math:`G_v \ge 0` summing to :math:`G`.  Since :math:`(u + g - c)^+ \le (u - c)^+ + g` for
:math:`g \ge 0`,

.. math::

    \sum_v (C_v - c)^+ \;\le\; G + \sum_v (U_v - c)^+ \qquad \text{(every report sequence)} .

A multinomial vector is negatively associated (Joag-Dev & Proschan, Ann. Statist. 11, 1983), so
for non-decreasing functions of its disjoint coordinates
:math:`E[e^{\lambda G}\prod_v e^{\lambda (U_v - c)^+}] \le E[e^{\lambda G}] \prod_v E[e^{\lambda (U_v - c)^+}]`,
and Chernoff's bound gives, for every :math:`\lambda \ge 0`,

.. math::

    \Pr\Big[\sum_v (C_v - c)^+ \ge s\Big] \le \exp\big(-\lambda s + N \log(1 - r + r e^\lambda)
    + d \log M_c(\lambda)\big), \qquad
    M_c(\lambda) = \Pr[X \le c] + e^{-\lambda c} (1 - q + q e^\lambda)^N \Pr[X_\lambda > c],

with :math:`X \sim \mathrm{Bin}(N, q)` and :math:`X_\lambda \sim \mathrm{Bin}(N, q e^\lambda/(1 - q + q
e^\lambda))` (the exponentially tilted binomial: :math:`E[e^{\lambda X}; X > c]` in closed form).
The exponent is convex in :math:`\lambda`; any :math:`\lambda` gives a valid bound, and the one
used is the best of a geometric grid (:data:`GRID_POINTS`).  The test reads :math:`S_\varphi` at
:data:`LEVELS`, :math:`c = \lceil Nq + z\sqrt{Nq(1 - q)}\rceil` for :math:`z = 1, \dots, 6` (public:
they depend on :math:`N`, not on the counts), and its p-value is the smallest bound times their
number (Bonferroni): **a campaign of honest reports is flagged with probability at most**
``alpha`` (:data:`ALPHA`, :math:`10^{-6}`), for every :math:`N` and population.  The bound is
tightest for a point mass (all of :math:`G` on one item); measured in
``tests/local/frequency/test_top_excess.py`` and ``benchmarks/bench_poisoning_detection.py``.

**What it sees and what it cannot** (GRR, :math:`\varepsilon = 1`, :math:`d = 128`,
:math:`N = 10^5`, Zipf(1), a target of frequency 0.0018, 100 campaigns per share; docs/explanation/poisoning.md,
"Small fractions of fakes").  It flags the maximal gain attack in 0.84 of the campaigns at a fake
share of 1.5 % (the target's estimate 1.13; the per-item counts and the likelihood ratio in none) and
in all from 1.75 %, and the "masked" variant (a fifth of the fakes spread over the rarest quarter of
the items, which hides it from the likelihood ratio) in 0.25 at 1.75 % and all at 2 %.  An attack that
keeps the target's estimate plus the heavy items' within the unit mass of a population and its noise
(1.25 %: the target at 0.94) leaves an aggregate that an honest one gives at this :math:`N`; fakes that
keep every item at its floor :math:`q` (an attacker who knows the population) leave the expected
counts of an honest population, which no test of the aggregate can tell at any :math:`N` (Cheu, Smith
& Ullman, IEEE S&P 2021): 0.58 at 2 %.

Only GRR: the decomposition needs one-item reports whose user's item is kept with a probability
that does not depend on the item.  Memoized protocols (``l-grr``) share a device's memo across its
reports, which are then not independent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from ..._validation import Admits, InstanceOf, Interval, validate_params
from ...errors import InvalidParameterError
from .._aggregator import Aggregator
from .._protocol import LocalProtocol

if TYPE_CHECKING:
    from ._oracle import FrequencyOracle

__all__ = ["ALPHA", "LEVELS", "TopExcessTest", "top_excess_test", "why_no_top_excess_test"]

#: false-alarm rate of one evaluation on honest reports, at most (the service's default)
ALPHA = 1e-6
#: the levels read, in standard deviations of one item's uniform-branch count above its mean N q
LEVELS = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
#: the Chernoff parameter runs over a geometric grid of GRID_POINTS values from GRID_LOW / sd to LAMBDA_SPREAD / sd
#: (at most LAMBDA_CAP), sd = sqrt(N q (1 - q)): every lambda gives a valid bound, and neighbours 2 % apart miss the
#: optimum by a few thousandths of a nat
GRID_LOW, LAMBDA_SPREAD, LAMBDA_CAP, GRID_POINTS = 1e-3, 200.0, 20.0, 600
#: items listed in the JSON document
_SHOWN = 20


@dataclass(frozen=True)
class TopExcessTest:
    """The test of the estimates' excess above a level against the unit mass of a population (module docstring).

    Attributes
    ----------
    statistic : float
        :math:`S_\\varphi = \\sum_v (\\hat f_v - \\varphi)^+` at the level with the smallest p-value bound.
    level : float
        :math:`\\varphi`, that level, as an estimate.
    allowed : float
        The largest :math:`S_\\varphi` at that level that is not flagged at ``alpha`` (an honest population's
        mass, 1, plus the noise the bound allows).
    p_value : float
        An upper bound on the probability of so large an excess at some level for honest reports (every n,
        every population), Bonferroni over the levels.
    alpha : float
    flagged : bool
        ``p_value < alpha``.
    items : tuple of int
        The items estimated above the level, highest first: the target of an attack with the genuine heavy items.
    levels : int
        The number of levels read.
    method : str
    """

    statistic: float
    level: float
    allowed: float
    p_value: float
    alpha: float
    flagged: bool
    items: tuple[int, ...]
    levels: int
    method: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the service's ``diagnostics["top"]``)."""
        return {
            "test": "top_excess",
            "statistic": float(self.statistic),
            "level": float(self.level),
            "allowed": float(self.allowed),
            "p_value": float(self.p_value),
            "alpha": float(self.alpha),
            "flagged": bool(self.flagged),
            "items": [int(item) for item in self.items[:_SHOWN]],
            "count_items": len(self.items),
            "levels": int(self.levels),
            "method": self.method,
        }


def why_no_top_excess_test(protocol: FrequencyOracle) -> str | None:
    """Why ``protocol``'s aggregate has no top-excess test (None: it has one)."""
    if protocol.name == "grr":
        return None
    return (f"no top-excess test for {protocol.name}: it is derived for GRR's one-item reports, each keeping its "
            "user's item with one probability whatever the item (module dpdist.local.frequency._top_excess)")


@validate_params({
    "protocol": Admits(LocalProtocol, why_no_top_excess_test, "a dpdist local protocol the test is derived for: grr"),
    "aggregator": InstanceOf(Aggregator, "the protocol's aggregator (protocol.aggregator().add(reports)), not the reports"),
    "alpha": Interval(0.0, 1.0, closed="neither"),
})
def top_excess_test(protocol: FrequencyOracle, aggregator: Aggregator, *, alpha: float = ALPHA) -> TopExcessTest:
    """Test whether the top of a GRR campaign's estimate holds more than the rest of its reports allow.

    Parameters
    ----------
    protocol : LocalProtocol
        ``grr``.
    aggregator : Aggregator
        Its aggregate, with at least one report.
    alpha : float
        False-alarm rate: flagged when the p-value bound is below it.

    Returns
    -------
    TopExcessTest

    Notes
    -----
    The statistic, its bound for every n and every honest population and what it can and cannot see are
    derived in the module docstring (:mod:`dpdist.local.frequency._top_excess`).
    """
    aggregator._check_protocol(protocol)  # an aggregate of another config: IncompatibleStateError, as estimate()
    counts = np.rint(np.asarray(aggregator.statistic, dtype=np.float64))
    total = int(counts.sum())
    if total <= 0:
        raise InvalidParameterError("top_excess_test needs an aggregate of at least one report. Got n = 0.")
    p, q = protocol.support_probabilities()
    kept = p - q  # r: the probability that a report keeps its user's item (1 - d q)
    mean, sd = total * q, math.sqrt(total * q * (1.0 - q))
    cuts = np.array([math.ceil(mean + z * sd) for z in LEVELS], dtype=np.int64)
    excess = np.maximum(counts[None, :] - cuts[:, None], 0.0).sum(axis=1)
    log_bounds, allowed = _bounds(excess, alpha / len(LEVELS), total, q, kept, cuts, counts.size)
    best = min(range(len(LEVELS)), key=lambda j: (log_bounds[j], -excess[j] / allowed[j]))  # where none is below 1:
    cut = int(cuts[best])  # the level nearest to it
    p_value = min(1.0, len(LEVELS) * math.exp(log_bounds[best]))
    scale = total * kept  # reports per unit of estimate
    above = np.flatnonzero(counts > cut)
    items = tuple(int(item) for item in above[np.argsort(-counts[above], kind="stable")])
    method = (f"excess of the estimates above a level over the unit mass of a population: Chernoff bound on "
              f"G + sum (U_v - c)+ (negatively associated multinomial, Joag-Dev & Proschan 1983), {len(LEVELS)} levels "
              "c = N q + z sd (z = 1..6), Bonferroni; every n and honest population")
    return TopExcessTest(float(excess[best]) / scale, (cut / total - q) / kept, float(allowed[best]) / scale, p_value,
                         alpha, bool(p_value < alpha), items, len(LEVELS), method)


def _bounds(excess: np.ndarray, level: float, total: int, q: float, kept: float, cuts: np.ndarray,
            items: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Per cut: the log of the Chernoff bound :math:`\min_\lambda (K(\lambda) - \lambda s)` on
    :math:`\Pr[\sum_v (C_v - c)^+ \ge s]` (at most 0), and the largest excess whose bound is at least ``level``,
    :math:`\min_\lambda (K(\lambda) + L)/\lambda` with :math:`L = \log(1/\text{level})`: the bound is at least
    :math:`e^{-L}` iff :math:`K(\lambda) - \lambda s \ge -L` for every :math:`\lambda` of the grid.  A cut at or
    above :math:`N` (no item can pass it) bounds nothing: 0, and every excess (at most ``N`` reports) is allowed."""
    log_bounds, allowed = np.zeros(cuts.size), np.full(cuts.size, float(total))
    usable = cuts < total
    if usable.any():
        lam, cumulant = _cumulant(total, q, kept, cuts[usable], items)
        log_bounds[usable] = np.minimum(0.0, (cumulant - lam * excess[usable, None]).min(axis=1))
        allowed[usable] = ((cumulant - math.log(level)) / lam).min(axis=1)
    return log_bounds, allowed


def _cumulant(total: int, q: float, kept: float, cuts: np.ndarray, items: int) -> tuple[np.ndarray, np.ndarray]:
    r"""The Chernoff grid :math:`\lambda` and :math:`K(\lambda) = N \log(1 - r + r e^\lambda) + d \log M_c(\lambda)`
    for each cut (rows): the log of the product of moment generating functions that bounds
    :math:`E[e^{\lambda (G + \sum_v (U_v - c)^+)}]` (module docstring; convex, :math:`K(0) = 0`).

    The binomial tails are regularized incomplete beta functions: :math:`\Pr[\mathrm{Bin}(N, \pi) \le c] =
    I_{1-\pi}(N - c, c + 1)` and :math:`\Pr[\mathrm{Bin}(N, \pi) > c] = I_\pi(c + 1, N - c)`, for :math:`c < N`.
    """
    from scipy import special  # lazy: loads scipy (0.4-2 s); import dpdist stays light

    sd = max(math.sqrt(total * q * (1.0 - q)), 1.0)
    lam = np.geomspace(GRID_LOW / sd, min(LAMBDA_CAP, LAMBDA_SPREAD / sd), GRID_POINTS)
    growth = np.expm1(lam)
    tilted = q * np.exp(lam) / (1.0 + q * growth)
    c = cuts[:, None].astype(np.float64)
    with np.errstate(divide="ignore"):  # a tail below the smallest double is 0: its log -inf, the term dropped
        below = np.log(special.betainc(total - c, c + 1.0, 1.0 - q))
        above = -lam * c + total * np.log1p(q * growth) + np.log(special.betainc(c + 1.0, total - c, tilted))
    return lam, total * np.log1p(kept * growth) + items * np.logaddexp(below, above)
