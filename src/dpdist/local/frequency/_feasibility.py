r"""A test of an aggregate against every honest population: the likelihood ratio of the fit on the simplex.

Whatever the users hold, honest reports of a protocol with a finite channel :math:`Q`
(:math:`Q[v, y] = \Pr[y \mid v]`) come from the output law :math:`Q^\top f` of *some*
distribution :math:`f` on the simplex.  Fake reports need not: 10 % of GRR reports on one
item (:math:`\varepsilon = 1`, :math:`d = 16`, a uniform population) give that item an
unbiased estimate of 1.03, above 1, and every other item a slightly negative one, a
violation spread over all items that no single item's count shows (docs/explanation/poisoning.md, "Poisoning diagnostics").  The
test pools it: the likelihood ratio of the best fit on the simplex against the best fit of
all (the saturated model),

.. math::

    T = 2\,\big(\max_{\pi} L(\pi) - \max_{f \in \Delta} L(Q^\top f)\big),

large when no honest population explains the counts.

**Protocols whose aggregate is the histogram of channel outputs** (``grr``, ``hr``, ``cp``,
``flh``): :math:`L(\pi) = \sum_y N_y \log \pi_y` over the :math:`k` outputs; the saturated
fit is :math:`N/n`; the fit on the simplex is GRR's closed-form maximum likelihood
(:func:`~._exact_channel.grr_maximum_likelihood`) or EM on the exact channel (IBU,
:func:`~dpdist.local._em.expectation_maximization` with the duality-gap stop), whose
certified gap :math:`g` (:math:`\max L - L(\hat f) \le g`) is taken off, so the statistic
used, :math:`2(L(N/n) - L(Q^\top \hat f) - g)`, is at most :math:`T`.

**Unary encodings** (``oue``, ``sue``: one independent bit per item): the
aggregate holds per-bit counts :math:`C_v`, bit :math:`v` of an honest report set with
probability :math:`p^*` if its user holds :math:`v`, else :math:`q^*`, so the bit rates are
:math:`r_v = q^* + (p^* - q^*) f_v` with :math:`f` on the simplex (all :math:`r_v \ge q^*`
and :math:`\sum_v r_v = p^* + (d-1) q^*`, the number of bits an honest report sets on
average).  :math:`L(r) = \sum_v C_v \log r_v + (n - C_v) \log(1 - r_v)`; the saturated fit
is :math:`C/n`; the fit on the simplex solves its KKT conditions exactly (water filling:
each :math:`f_v` the root of a quadratic at a common multiplier, found by bisection).

**The false-alarm rate holds for every n and every honest population** (no asymptotics, no
boundary correction).  The fit on the simplex is at least as likely as the truth, so
:math:`T \le 2 n D(\hat\pi \,\|\, \pi_{\text{true}})`.  For :math:`n` i.i.d. draws on
:math:`k` outputs the moment generating function of :math:`n D` is at most that of a
Gamma(:math:`k - 1`, 1) variable (Agrawal, "Finite-sample concentration of the multinomial
in relative entropy", IEEE Trans. Inf. Theory 66(10), 2020, Theorem 1.2), hence by
Chernoff, for :math:`t > 2(k-1)`,

.. math::

    \Pr[T \ge t] \le e^{-t/2} \Big(\frac{e\,t}{2(k-1)}\Big)^{k-1} .

Per-bit counts of unary encodings are, given the users, independent Poisson-binomial
sums; :math:`x \mapsto e^{s\,n\,\mathrm{kl}(x/n \| r)}` is convex, so each is bounded by the
binomial with the same mean (Hoeffding, "On the distribution of the number of successes in
independent trials", Ann. Math. Statist. 27, 1956, Theorem 3), whose bound is Agrawal's with
:math:`k = 2`; independence multiplies the :math:`d` of them, which is the bound above with
:math:`k - 1 = d`.  A population drawn at random is a mixture of fixed ones, so the bound
holds for it too.  The output histogram is bounded for users drawn i.i.d. (the multinomial
model of the estimators, :mod:`._exact_channel`); measured on fixed populations in
``tests/local/frequency/test_feasibility.py``.  The bound is conservative: against the chi-square limit it
asks :math:`T \ge 91` instead of 60 at :math:`\alpha = 10^{-6}`, :math:`k = 16`.

**What it cannot see.**  Fake reports that honest users could have sent (Cheu, Smith &
Ullman, IEEE S&P 2021) keep the counts inside the honest set: no test of the aggregate can
find them.  For unary encodings that includes reports that copy the honest bit rates, or
that set item 0's bit and fewer other bits so that the number of set bits stays honest on
average: their per-bit counts are those of an honest population.  What they change is the
joint law of a report's bits, e.g. the number of bits a report sets (an honest report sets
:math:`\mathrm{Bern}(p^*) + \mathrm{Bin}(d-1, q^*)`, whatever its user holds); the aggregate
keeps no such statistic, but the reports do: :func:`set_bits_test` tests it on them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from ..._types import ArrayLike
from ..._validation import Admits, Described, InstanceOf, Interval, Options, check_param, validate_params
from ...errors import InvalidParameterError
from .._aggregator import Aggregator
from .._em import expectation_maximization
from .._protocol import LocalProtocol

if TYPE_CHECKING:
    from ._oracle import FrequencyOracle
    from ._unary import UnaryEncoding

__all__ = ["FeasibilityTest", "feasibility_test", "set_bits_test", "why_no_feasibility_test", "multinomial_lr_tail"]

#: false-alarm rate of one evaluation on honest reports, at most (the service's default)
ALPHA = 1e-6
#: protocols whose aggregate is the histogram of the outputs of their exact channel
OUTPUT_HISTOGRAM = frozenset({"grr", "hr", "cp", "flh"})
#: protocols with one independent Bernoulli bit per item, each report from its own user
UNARY = frozenset({"oue", "sue"})
#: memoized protocols: the reports of one device share its memo, so they are not independent
MEMOIZED = frozenset({"l-grr", "l-osue", "loloha", "dbitflippm"})
#: the output histogram is tested when it has at most this many outputs (EM's cost grows with them, and the bound's
#: power falls: it needs T > 2(k - 1))
MAX_OUTPUTS = 1 << 16
#: EM's certified gap to the maximum log-likelihood, in nats (taken off the statistic): at least this, and 0.01 per output
TOLERANCE = 0.05
#: EM's iterations between checks of whether the bound's answer is settled (the last is the cap)
STAGES = (20, 200, 2_000, 10_000)


@dataclass(frozen=True)
class FeasibilityTest:
    """The likelihood-ratio test of an aggregate against every honest population (module docstring).

    Attributes
    ----------
    statistic : float
        :math:`T`, the likelihood ratio of the fit on the simplex against the saturated fit (with EM,
        a certified lower bound of it).
    p_value : float
        An upper bound on :math:`\\Pr[T \\ge` ``statistic`` :math:`]` for honest reports, every n.
    alpha : float
        The false-alarm rate: flagged when ``p_value < alpha``.
    flagged : bool
    categories : int
        :math:`k`: outputs of the histogram, or ``d + 1`` for ``d`` independent bits (the bound's ``k``).
    model : str
        ``"output histogram"`` or ``"per-bit counts"``.
    fit : ndarray
        The frequencies of the honest population closest to the counts (the fit on the simplex).
    gap : float
        The fit's certified distance to the maximum log-likelihood, taken off ``statistic`` (0 when exact).
    method : str
    """

    statistic: float
    p_value: float
    alpha: float
    flagged: bool
    categories: int
    model: str
    fit: np.ndarray = field(repr=False)
    gap: float = 0.0
    method: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (the service's ``diagnostics["constraint"]``)."""
        return {
            "test": "likelihood_ratio",
            "model": self.model,
            "statistic": float(self.statistic),
            "p_value": float(self.p_value),
            "alpha": float(self.alpha),
            "flagged": bool(self.flagged),
            "categories": int(self.categories),
            "method": self.method,
        }


def multinomial_lr_tail(statistic: float, degrees: int) -> float:
    r"""Agrawal's bound :math:`e^{-t/2} (e t / (2m))^m` on :math:`\Pr[2nD \ge t]`, :math:`m = k - 1` (1 for
    :math:`t \le 2m`, where it says nothing)."""
    if degrees < 1:
        return 1.0
    half = statistic / 2.0
    if not half > degrees:
        return 1.0
    return float(min(1.0, math.exp(-half + degrees * (1.0 + math.log(half / degrees)))))


def why_no_feasibility_test(protocol: FrequencyOracle) -> str | None:
    """Why ``protocol``'s aggregate cannot be tested (None: it can)."""
    name = protocol.name
    if name in UNARY:
        return None
    if name in MEMOIZED:
        return (f"no likelihood-ratio test for {name}: the reports of one device share its memo, so a campaign's reports "
                "are not independent draws and the bound does not apply")
    if name in OUTPUT_HISTOGRAM:
        outputs = protocol.channel_operator().shape[0]
        if outputs > MAX_OUTPUTS:
            return (f"{name}'s channel has {outputs:,} outputs (more than {MAX_OUTPUTS:,}): the fit costs too much and "
                    f"the bound needs a likelihood ratio above {2 * (outputs - 1):,}")
        return None
    return (f"no likelihood-ratio test for {name}: its aggregate is neither the histogram of its channel's outputs nor "
            "independent per-item bits")


#: the aggregate a test reads (not the reports themselves)
_AGGREGATOR = InstanceOf(Aggregator, "the protocol's aggregator (protocol.aggregator().add(reports)), not the reports")


@validate_params({
    "protocol": Admits(LocalProtocol, why_no_feasibility_test, "a dpdist local protocol whose aggregate the test reads: "
                       "grr, hr, cp, flh (output histograms) or oue, sue (per-item bits)"),
    "aggregator": _AGGREGATOR,
    "alpha": Interval(0.0, 1.0, closed="neither"),
})
def feasibility_test(protocol: FrequencyOracle, aggregator: Aggregator, *, alpha: float = ALPHA) -> FeasibilityTest:
    """Test a frequency oracle's aggregate against every honest population (module docstring).

    Parameters
    ----------
    protocol : LocalProtocol
        ``grr``, ``hr``, ``cp``, ``flh`` (output histograms) or ``oue``, ``sue`` (bits).
    aggregator : Aggregator
        Its aggregate, with at least one report.
    alpha : float
        False-alarm rate: the test flags when its p-value bound is below it.

    Returns
    -------
    FeasibilityTest
    """
    aggregator._check_protocol(protocol)  # an aggregate of another config: IncompatibleStateError, as estimate()
    if aggregator.n <= 0:
        raise InvalidParameterError("feasibility_test needs an aggregate of at least one report. Got n = 0.")
    if protocol.name in UNARY:
        statistic, fit, categories, model = _per_bit(protocol, aggregator)
        gap, how = 0.0, "the exact fit of the per-bit counts' rates on the simplex (water filling)"
    else:
        statistic, fit, gap, how = _output_histogram(protocol, aggregator, alpha)
        categories, model = protocol.channel_operator().shape[0], "output histogram"
    statistic = max(statistic, 0.0)
    p_value = multinomial_lr_tail(statistic, categories - 1)
    method = (f"likelihood ratio of {how} against the saturated fit, {model}; p-value bound "
              f"exp(-T/2)(eT/(2m))^m, m = {categories - 1} (Agrawal 2020; every n and honest population)")
    return FeasibilityTest(statistic, p_value, alpha, bool(p_value < alpha), categories, model, fit, gap, method)


# ---------------------------------------------------------------------- output histograms
def _log_likelihood(counts: np.ndarray, probabilities: np.ndarray) -> float:
    positive = counts > 0
    return float(counts[positive] @ np.log(probabilities[positive]))


def _output_histogram(protocol, aggregator, alpha: float) -> tuple[float, np.ndarray, float, str]:
    r"""The statistic (a certified lower bound of T with EM), the fit, EM's gap and how it was fitted.

    EM runs in stages from the projected unbiased estimate (mixed with the uniform: EM cannot leave a
    zero), and stops at a stage where the bound's answer is settled: :math:`2(L(N/n) - L(\hat f))`
    (an upper bound of :math:`T`) at most :math:`2(k - 1)`, where the bound is 1 whatever :math:`T` is,
    or the certified lower bound already below ``alpha``'s p-value, or at the gap ``tolerance``
    (0.01 nats per output: a likelihood ratio below :math:`2(k - 1)` says nothing anyway).
    """
    counts = np.asarray(aggregator.statistic, dtype=np.float64)
    n = counts.sum()
    saturated = _log_likelihood(counts, counts / n)
    operator = protocol.channel_operator()
    if protocol.tags.closed_form_mle:  # GRR: the exact maximum (module docstring of ._exact_channel)
        fit = protocol.maximum_likelihood(counts)
        predicted = np.maximum(operator.matvec(fit), 1e-300)
        return 2.0 * (saturated - _log_likelihood(counts, predicted)), fit, 0.0, "GRR's closed-form maximum likelihood"
    outputs, d = operator.shape
    tolerance = max(TOLERANCE, 0.01 * (outputs - 1))
    projected = protocol.estimate(aggregator, postprocess="simplex").frequencies
    fit = 0.9 * np.asarray(projected, dtype=np.float64) + 0.1 / d
    upper, gap = math.inf, 0.0  # STAGES is never empty: the loop sets both
    for budget in STAGES:
        result = expectation_maximization(counts, operator, smoothing=False, tolerance=tolerance, max_iterations=budget,
                                          start=fit, accelerate=True, stopping="gap")
        fit = result.probabilities
        predicted = np.maximum(operator.matvec(fit), 1e-300)
        upper = 2.0 * (saturated - _log_likelihood(counts, predicted))
        gap = max(float(operator.rmatvec(counts / predicted).max() - n), 0.0)
        if result.converged or upper <= 2.0 * (outputs - 1) or multinomial_lr_tail(upper - 2.0 * gap, outputs - 1) < alpha:
            break
    return upper - 2.0 * gap, fit, gap, f"EM's fit on the simplex (certified within {gap:.2g} nats, taken off)"


# ---------------------------------------------------------------------- per-bit counts
def _bernoulli_log_likelihood(counts: np.ndarray, n: float, rates: np.ndarray) -> float:
    ones = np.where(counts > 0, counts * np.log(np.where(counts > 0, rates, 1.0)), 0.0)
    zeros = np.where(n - counts > 0, (n - counts) * np.log(np.where(n - counts > 0, 1.0 - rates, 1.0)), 0.0)
    return float(ones.sum() + zeros.sum())


def _rates_at(multiplier: float, counts: np.ndarray, n: float) -> np.ndarray:
    r"""The root in [0, 1] of :math:`C/r - (n - C)/(1 - r) = m` for each count: :math:`m r^2 - (m + n) r + C = 0`,
    as :math:`2C / ((m + n) + \sqrt{(m + n)^2 - 4 m C})` (stable at :math:`m = 0`, where it is :math:`C/n`)."""
    b = multiplier + n
    return 2.0 * counts / (b + np.sqrt(np.maximum(b * b - 4.0 * multiplier * counts, 0.0)))


def _per_bit(protocol, aggregator) -> tuple[float, np.ndarray, int, str]:
    """The per-bit likelihood ratio, the fit on the simplex, ``k = d + 1`` (the bound's ``d`` binary terms)."""
    p, q = protocol.support_probabilities()
    counts = np.rint(np.asarray(protocol.support_counts(aggregator), dtype=np.float64))
    n = float(aggregator.n)
    d = counts.size

    def frequencies(multiplier: float) -> np.ndarray:
        return np.maximum((_rates_at(multiplier, counts, n) - q) / (p - q), 0.0)

    # the KKT multiplier m of the constraint sum f = 1 (per unit of p - q): sum f(m) falls from d (1 - q)/(p - q) > 1
    # as m -> -inf to 0 as m -> +inf; bracket, then bisect to the float
    low, high = -n, n
    while frequencies(low).sum() < 1.0:
        low *= 2.0
    while frequencies(high).sum() > 1.0:
        high *= 2.0
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle in (low, high):
            break
        if frequencies(middle).sum() > 1.0:
            low = middle
        else:
            high = middle
    fit = frequencies(high)
    fit = fit / fit.sum() if fit.sum() > 0 else np.full(d, 1.0 / d)
    rates = np.clip(q + (p - q) * fit, 1e-300, 1.0 - 1e-16)
    saturated = _bernoulli_log_likelihood(counts, n, counts / n)
    return 2.0 * (saturated - _bernoulli_log_likelihood(counts, n, rates)), fit, d + 1, "per-bit counts"


# ---------------------------------------------------------------------- per report
def set_bits_test(protocol: FrequencyOracle, reports: ArrayLike, *, alpha: float = ALPHA) -> FeasibilityTest:
    r"""Test unary-encoding reports by the number of bits each sets (what their aggregate cannot show).

    An honest report of ``oue`` or ``sue`` sets :math:`\mathrm{Bern}(p^*) +
    \mathrm{Bin}(d - 1, q^*)` bits whatever its user holds, independently of the other reports,
    so the histogram of set bits over :math:`n` reports is exactly
    :math:`\mathrm{Multinomial}(n, \pi)` with :math:`\pi` known: :math:`T = 2 n D(\hat\pi \| \pi)`
    and the bound of the module docstring, :math:`k = d + 1`, is a valid p-value for every
    :math:`n`.  It sees fake reports that copy the honest bit rates (each bit set with its
    honest marginal rate sets a Poisson-binomial number of bits, more spread than the honest
    law) and fake reports with one chosen bit set and the others at a lower rate.

    Parameters
    ----------
    protocol : LocalProtocol
        ``oue`` or ``sue``.
    reports : array
        Bit-packed reports (``protocol.privatize``'s output, a report file's rows).
    alpha : float
        False-alarm rate.
    """
    from scipy.stats import binom  # lazy: loads scipy (0.4-2 s); import dpdist stays light

    alpha = check_param("set_bits_test", "alpha", alpha, Interval(0.0, 1.0, closed="neither"))
    check_param("set_bits_test", "protocol", protocol.name, Described(Options(tuple(sorted(UNARY))), (
        f"a unary encoding, one of {sorted(UNARY)} (whose honest reports set a number of bits that does not depend on "
        "the user's item)")))
    rows = protocol.validate_reports(reports).reports  # the valid rows (padding bits clear)
    if rows.shape[0] == 0:
        raise InvalidParameterError("set_bits_test needs at least one valid report. Got none.")
    d = protocol.domain_size
    set_bits = cast("UnaryEncoding", protocol).unpack(rows).sum(axis=1, dtype=np.int64)
    observed = np.bincount(set_bits, minlength=d + 1).astype(np.float64)
    p, q = protocol.support_probabilities()
    ones = np.arange(d + 1)
    expected = p * binom.pmf(ones - 1, d - 1, q) + (1 - p) * binom.pmf(ones, d - 1, q)  # Bern(p) + Bin(d-1, q)
    n = observed.sum()
    positive = observed > 0
    statistic = 2.0 * float(observed[positive] @ np.log(observed[positive] / (n * expected[positive])))
    p_value = multinomial_lr_tail(max(statistic, 0.0), d)
    method = (f"likelihood ratio of the number of set bits per report (d + 1 = {d + 1} values) against its honest "
              "law Bern(p*) + Bin(d-1, q*); p-value bound exp(-T/2)(eT/(2m))^m, m = d (Agrawal 2020; every n)")
    return FeasibilityTest(max(statistic, 0.0), p_value, alpha, bool(p_value < alpha), d + 1, "set bits per report",
                           observed / n, 0.0, method)
