r"""Recovering the genuine frequencies of a poisoned campaign: LDPRecover (Sun et al., ICDE 2024).

Fake users can send reports that pass every check and still move the estimate: the maximal-gain
attack of Cao, Jia & Gong (USENIX Security 2021; :func:`dpdist.testing.maximal_gain_attack`)
raises the estimate of a few target items by :math:`\beta (1 - q)/(p - q)` each, with
:math:`\beta` the fraction of fake reports.  :mod:`dpdist.serve._diagnostics` detects what no honest
population produces; this module estimates what the genuine users alone would have given.

The genuine-frequency estimator (Sun et al., sec. IV).  Of the :math:`N = n + m` reports,
:math:`n` are genuine (item frequencies :math:`f_X`) and :math:`m = \beta N` fake.  The support
count of an item is the sum of both groups' counts, so the poisoned unbiased estimate
:math:`\tilde f_Z(v) = (C_v/N - q)/(p - q)` is the mixture

.. math::

    \tilde f_Z(v) = (1 - \beta)\,\tilde f_X(v) + \beta\,\tilde f_Y(v), \qquad
    \tilde f_X(v) = \frac{\tilde f_Z(v) - \beta\,\tilde f_Y(v)}{1 - \beta}
    = (1 + \eta)\,\tilde f_Z(v) - \eta\,\tilde f_Y(v), \quad \eta = m / n,

with :math:`\tilde f_Y(v) = (\phi_v - q)/(p - q)` the *malicious frequency*: what the estimator
reads from the fake reports alone, :math:`\phi_v` being the fraction of them that support
:math:`v`.  :math:`\tilde f_X` is unbiased for :math:`f_X` when :math:`\beta` and :math:`\tilde f_Y`
are right.

Learning the fake statistics (the "adaptive attack" of Sun et al., sec. V: fake reports support
a small set :math:`T` of targets, and the other items at a common rate :math:`\phi_0`).  Two facts
of the protocol identify them from the aggregate alone when every report supports exactly one item
(GRR: ``statistic_total_per_report == 1``):

* a report on a target supports no other item, so :math:`\phi_0 = 0`: a non-target :math:`v` is reported
  with probability :math:`\pi_v = (1 - \beta)(q + f_X(v)(p - q)) \ge (1 - \beta) q`, for any genuine
  distribution.  The hypothesis :math:`H_0(\beta)` "the fake share is at most :math:`\beta`" thus makes each
  count :math:`C_v` stochastically at least :math:`\mathrm{Bin}(N, (1-\beta)q)` (targets only more), and
  the multinomial counts are negatively associated (Joag-Dev & Proschan, Ann. Statist. 1983), so are the
  indicators :math:`[C_v \le c]`, and Chernoff's bound holds for their sum (Dubhashi & Ranjan, 1998):
  with :math:`F_\beta(c) = P(\mathrm{Bin}(N, (1-\beta)q) \le c)` and :math:`k = \lceil d/4 \rceil`,
  :math:`P(C_{(k)} \le c) \le \exp(-d\,\mathrm{KL}(k/d \,\|\, F_\beta(c)))` for :math:`F_\beta(c) < k/d`.
  The observed :math:`k`-th lowest count :math:`c` gives the lower confidence bound
  :math:`\underline\beta`, the share at which that bound equals :data:`FALSE_ALARM_RATE`
  (:math:`\alpha = 10^{-3}`): :math:`P(\underline\beta > \beta) \le \alpha` for every campaign, in
  particular :math:`P(\underline\beta > 0) \le \alpha` for every clean campaign, whatever :math:`n`,
  :math:`d` and the genuine distribution (point masses and small counts included: the law is the
  exact binomial, :math:`F` inverted through the regularized incomplete beta function).  The point
  estimate :math:`\beta^\circ` solves :math:`F_\beta(c) = k/d` (the :math:`k`-th of :math:`d` counts at
  its expected rank); genuine mass in the lowest quarter only lowers both.  The share used is
  :math:`\hat\beta = \min(\beta^\circ, 2\underline\beta)`: 0 whenever :math:`\underline\beta = 0`, the
  point estimate once the attack is clear (:math:`\beta^\circ \ge 2(\beta^\circ - \underline\beta)`),
  and continuous in between, so one more report moves it by about what it moves
  :math:`\beta^\circ` (no threshold: measured, a fake report added one at a time changes no item by more
  than one report's influence :math:`1/(N(p-q))`).  The price is power: at :math:`d = 128`,
  :math:`\varepsilon = 1`, :math:`N = 4.2\cdot 10^4` and :math:`\beta = 0.05` the share learned averages 0.032
  (docs/explanation/poisoning.md, "Poisoned campaigns").  The floor shift is :math:`\hat s = -\hat\beta q/(p - q)`;
* the estimates of one-item reports sum to exactly 1, so after the correction of the non-targets,
  :math:`g = (\tilde f_Z - \hat s)/(1 - \hat\beta)`, the mass in excess of 1,
  :math:`E = \sum_v g_v - 1`, is the fake reports' and lies on the targets: it is removed from the
  highest items (or from ``targets`` when they are known) by water-filling, the sparsest removal.

Protocols whose reports support many items (OUE, SUE, OLH, ...) hide the fake reports' padding:
the maximal-gain attack sets :math:`\lfloor p + (d-1)q \rfloor` bits (OUE) or takes a random hash
(OLH), so :math:`\phi_0 \approx q`, the non-targets do not move and the totals match honest
ones (measured in docs/explanation/poisoning.md, "Poisoned campaigns").  There :math:`\beta` is not
identifiable from the aggregate: it must be given (``fake_fraction``, e.g. from a count of
accounts that failed enrollment checks), and each target, fully supported by every fake report,
carries :math:`\beta(1 - q - \tilde f_Y^0 (p-q))/((p - q)(1 - \beta))` with :math:`\tilde f_Y^0 = 0`
of excess.  Without ``targets`` the items whose :math:`g` reaches that excess within 3
:math:`\sigma_0` are taken for targets (a genuine item that frequent loses the excess too).

Constraint inference (Sun et al., sec. VI): the recovered genuine frequencies are the Euclidean
projection of :math:`g` onto the simplex, the solution of the KKT conditions of
:math:`\min \|f - g\|^2` s.t. :math:`f \ge 0, \sum f = 1` (:func:`dpdist.postprocess.project_simplex`).

Departures from the paper, stated: the paper takes :math:`\eta` as known to the server; here it is
learned for one-item protocols and taken from ``fake_fraction`` otherwise; the floor test and the
water-filling are this module's reading of the paper's learning step.

Protocols (:data:`SUPPORTED_PROTOCOLS`): the model above is derived for GRR (one item per report), unary
encodings with independent bits (OUE, SUE, RUE: :math:`p` on the item's bit, :math:`q` on each other)
and local hashing (OLH, RLH: a uniform hash then GRR on its range, :math:`q^* = 1/g`).  Others are
refused: HR, FLH and HCMS have a statistic total of 1 per report without GRR's one-item structure
(a report supports a set of items, the floor argument fails), the sketches (CMS, OCMS) and SS, RWS,
CP, the longitudinal protocols have no derived malicious frequency here.

Limits (measured, docs/explanation/frequency-oracles.md): recovery removes a mass from the items it believes were
attacked; an adversary who knows the method can make it remove genuine mass instead.  With the
share learned (GRR), fake reports spread over many rare targets (:math:`r = 32`-64 of 128) leave
every target below the genuine heavy items, and the water-filling takes the excess off those: the
recovered estimate is worse than the simplex projection alone.  With the share known and the
targets not (OUE, SUE, RUE, OLH, RLH), fake reports that set each target bit with probability 1/2
keep each target under the cut, which then falls on the genuine items as frequent as the excess.
``targets=`` (the attacked items, when known) confines the removal to them and is the remedy.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._types import ArrayLike
from ..._validation import Described, Interval, ItemIds, Optional, Options, check_param, validate_params
from ...errors import OutOfDomainError
from ...estimates import FrequencyEstimate
from ... import postprocess as _postprocess
from .._aggregator import Aggregator

__all__ = ["recover_frequencies", "RECOVERY_METHODS"]

#: the recovery estimators ``estimate(..., recover=...)`` takes
RECOVERY_METHODS = ("none", "ldprecover")
#: the protocols whose fake-report model is derived (module docstring): GRR's one-item reports; unary
#: encodings (independent bits: OUE, SUE, RUE) and local hashing (a hash then GRR: OLH, RLH), padded
SUPPORTED_PROTOCOLS = ("grr", "oue", "sue", "rue", "olh", "rlh")
#: lower quantile of the counts whose law tests the non-targets' floor (one-item protocols)
FLOOR_QUANTILE = 0.25
#: probability that a campaign without fake reports learns a positive fake share (one-item protocols), any genuine
#: distribution, any n and d (the Chernoff bound of the module docstring)
FALSE_ALARM_RATE = 1e-3
#: standard errors an item must come within of a fully supported target's excess to be cut (padded protocols)
SIGNIFICANCE_Z = 3.0
#: largest fake fraction the estimator accepts or learns (beyond it the "genuine" users are not a majority)
MAX_FAKE_FRACTION = 0.5


def _check_targets(owner: str, targets: Any, domain_size: int) -> np.ndarray | None:
    """``targets`` (None or distinct item ids: :class:`~dpdist._validation.ItemIds`, the table's) within the domain."""
    if targets is None:
        return None
    array = np.asarray(targets, dtype=np.int64)
    if array.min() < 0 or array.max() >= domain_size or np.unique(array).size != array.size:
        raise OutOfDomainError(
            f"The 'targets' argument of {owner} must hold distinct items in [0, {domain_size}). Got {targets!r} instead."
        )
    return array.astype(np.int64)


def _water_fill(values: np.ndarray, excess: float) -> np.ndarray:
    """``values`` with ``excess`` removed from the top: every entry above a level ``tau`` lowered to it."""
    ordered = np.sort(values)[::-1]
    levels = (np.cumsum(ordered) - excess) / np.arange(1, ordered.size + 1)
    tau = levels[np.flatnonzero(ordered > levels)[-1]]
    return np.minimum(values, tau)


@validate_params({"fake_fraction": Optional(Interval(0.0, MAX_FAKE_FRACTION, closed="left")),
                  "targets": Optional(ItemIds())})
def recover_frequencies(
    protocol: Any,
    data: Aggregator | ArrayLike,
    *,
    fake_fraction: float | None = None,
    targets: ArrayLike | None = None,
) -> FrequencyEstimate:
    r"""Genuine item frequencies of a campaign that fake users may have poisoned (LDPRecover).

    Parameters
    ----------
    protocol : FrequencyOracle
        One of :data:`SUPPORTED_PROTOCOLS` (``grr``, ``oue``, ``sue``, ``rue``, ``olh``, ``rlh``), those whose
        poisoning model is derived; any other raises :class:`~dpdist.errors.InvalidParameterError`.
    data : Aggregator or array_like
        The campaign's aggregator, or a batch of its reports.
    fake_fraction : float, optional
        The fraction :math:`\beta = m/N` of fake reports, in ``[0, 0.5)``, when known.  ``None``:
        learned from the aggregate for protocols whose reports support one item (GRR), taken as 0
        (no recovery beyond the simplex projection) for the others, where it is not identifiable.
        Recommended where enrollment gives a count: the share learned is 0 up to 2 % of fakes, which
        move a rare item to about 1 (docs/explanation/poisoning.md, "Small fractions of fakes").
    targets : array_like of int, optional
        The attacked items, when known (the paper's "attack details" as a constraint): the fake
        mass is removed from them only.  Give them with ``fake_fraction``: the share alone levels the top genuine items.

    Returns
    -------
    FrequencyEstimate
        The recovered frequencies (in the simplex) with ``postprocess="ldprecover"``; no interval
        (``variance`` infinite, ``details["no_interval"]`` says why); ``details`` holds ``fake_fraction`` (used),
        ``fake_fraction_learned``, ``targets`` (the items the excess was taken from), ``excess``
        (the fake mass removed, in frequency units) and ``floor_shift`` (:math:`\hat s`).

    Warnings
    --------
    Recovery can be worse than no recovery (the simplex projection) against an adversary who knows it
    (GRR, d = 128, eps = 1, 5 % fakes over r = 64 rare targets, share learned: MSE sum 0.056 against the
    projection's 0.045; OUE, share known, target bits set with probability 1/2: the top genuine item
    falls from 0.21 to 0.055).  Pass ``targets`` when known: the removal is then confined to them.

    Notes
    -----
    The estimator and its learning step are derived in the module docstring
    (:mod:`dpdist.local.frequency._recovery`).  On a clean campaign of a one-item protocol the
    learned fraction is 0 except with probability at most :data:`FALSE_ALARM_RATE` (1e-3), for any
    genuine distribution, :math:`n` and :math:`d`, and the result is then the simplex projection of the
    unbiased estimate.  The learned fraction is continuous in the counts (no detection threshold).

    References
    ----------
    X. Sun, Q. Ye, H. Hu, J. Duan, T. Wo, J. Xu, R. Yang, "LDPRecover: Recovering Frequencies from
    Poisoning Attacks against Local Differential Privacy", ICDE 2024 (arXiv:2403.09351).
    X. Cao, J. Jia, N. Z. Gong, "Data Poisoning Attacks to Local Differential Privacy Protocols",
    USENIX Security 2021.
    """
    fake_fraction, target_items = _checked_recovery(protocol, fake_fraction, targets)
    plain = protocol.estimate(data)
    p, q = protocol.support_probabilities()
    one_item = getattr(protocol, "statistic_total_per_report", None) == 1
    beta = _fake_fraction(fake_fraction, plain.frequencies, plain.n, p, q, one_item)
    genuine, shift, excess, taken = _without_fakes(plain.frequencies, plain.n, p, q, beta, one_item, target_items)
    return _recovered(plain, genuine, beta, fake_fraction is None, taken, excess, shift)


def _checked_recovery(protocol: Any, fake_fraction: float | None, targets: ArrayLike | None):
    """``(fake_fraction, target items)`` checked for ``protocol``, which must be one whose poisoning model is derived."""
    owner = f"{getattr(protocol, 'display_name', type(protocol).__name__)} recovery"
    name = getattr(protocol, "name", type(protocol).__name__)
    if getattr(getattr(protocol, "tags", None), "kind", None) != "frequency" and name in SUPPORTED_PROTOCOLS:
        name = f"{name} (not a frequency protocol)"  # refused whatever its name
    check_param("recover_frequencies (recover='ldprecover')", "protocol", name, Described(
        Options(tuple(SUPPORTED_PROTOCOLS)),
        f"one whose poisoning model is derived, one of {list(SUPPORTED_PROTOCOLS)} (one-item reports, unary encoding or "
        "local hashing); for the others the fake reports' effect on the estimate is not modelled"))
    return fake_fraction, _check_targets(owner, targets, protocol.domain_size)


def _fake_fraction(given: float | None, poisoned: np.ndarray, n: int, p: float, q: float, one_item: bool) -> float:
    """The fake fraction beta: the one given, else learned from the aggregate (one-item reports) or 0 (the others,
    where it is not identifiable)."""
    if given is not None:
        return float(given)
    counts = np.rint(n * (q + poisoned * (p - q)))  # GRR's histogram, read back from its unbiased estimate
    return _learned_fake_fraction(counts, n, q) if one_item else 0.0


def _without_fakes(poisoned: np.ndarray, n: int, p: float, q: float, beta: float, one_item: bool,
                   target_items: np.ndarray | None) -> tuple[np.ndarray, float, float, np.ndarray]:
    """``(genuine, floor shift, excess, items the excess was taken from)``: the genuine-frequency estimator, and the
    fake mass taken off the candidates (the targets when given)."""
    d = poisoned.size
    sigma = math.sqrt(q * (1 - q) / (n * (p - q) ** 2))
    # the malicious frequency of a non-target: -q/(p-q) when a report supports one item (eq. of the estimator
    # with phi_0 = 0); about 0 for padded reports (phi_0 ~ q), where it is not identifiable
    floor = -q / (p - q) if one_item else 0.0
    shift = beta * floor
    genuine = (poisoned - shift) / (1 - beta)  # the genuine-frequency estimator, (1 + eta) f_Z - eta f_Y
    candidates = np.arange(d) if target_items is None else target_items
    excess = 0.0
    if beta > 0 and one_item:
        excess = float(genuine.sum() - 1.0)  # one-item estimates sum to 1: the rest is the fake reports'
        if excess > 0:
            genuine[candidates] = _water_fill(genuine[candidates], excess)
        taken = candidates[genuine[candidates] < (poisoned[candidates] - shift) / (1 - beta)]
    elif beta > 0:
        per_target = beta * (1 - q) / ((p - q) * (1 - beta))  # a target every fake report supports
        if target_items is None:
            candidates = np.flatnonzero(genuine >= per_target - SIGNIFICANCE_Z * sigma / (1 - beta))
        genuine[candidates] -= per_target
        excess = per_target * candidates.size
        taken = candidates
    else:
        taken = np.zeros(0, dtype=np.int64)
    return genuine, shift, excess, taken


def _recovered(plain: FrequencyEstimate, genuine: np.ndarray, beta: float, learned: bool, taken: np.ndarray,
               excess: float, shift: float) -> FrequencyEstimate:
    """The recovered estimate: ``genuine`` projected onto the simplex, without interval, its details stated."""
    recovered = _postprocess.project_simplex(genuine)  # the CI problem's KKT solution
    details = {
        **plain.details,
        "estimator": "ldprecover",
        "fake_fraction": beta,
        "fake_fraction_learned": learned,
        "targets": [int(item) for item in np.sort(taken)],
        "excess": excess,
        "floor_shift": shift,
        "no_interval": "no interval: none is derived for the recovered frequencies (the plain estimator's "
                       "standard errors are about everyone who reported, fakes included, around another estimate)",
    }
    return FrequencyEstimate(
        frequencies=recovered, n=plain.n, variance=np.full(plain.domain_size, np.inf), epsilon=plain.epsilon,
        protocol=plain.protocol,
        postprocess="ldprecover", details=details, guarantee=plain.guarantee, labels=plain.labels,
    )


def _learned_fake_fraction(counts: np.ndarray, n: int, q: float) -> float:
    """The one-sided lower confidence bound :math:`\\underline\\beta` of the fake share (module docstring).

    ``counts`` are the items' report counts (GRR's histogram), ``n`` the number of reports, ``q`` the
    probability that a report lands on a given other item.  0 unless the :math:`k`-th lowest count is
    below what :math:`H_0(0)` (no fake report) allows at :data:`FALSE_ALARM_RATE`.
    """
    from scipy import special  # lazy: scipy loads in 0.4-2 s

    d = counts.size
    k = max(1, math.ceil(FLOOR_QUANTILE * d))
    c = float(np.sort(counts)[k - 1])
    if c >= n:  # every report on one item and k = d: no item is below anything
        return 0.0
    # the rate pi with P(Bin(n, pi) <= c) = F: P(Bin(n, pi) <= c) = I_{1 - pi}(n - c, c + 1)
    def share(level: float) -> float:
        return max(0.0, 1.0 - (1.0 - float(special.betaincinv(n - c, c + 1, level))) / q)

    lower = share(_binomial_level(k / d, d, math.log(1 / FALSE_ALARM_RATE)))  # H_0(beta) rejected below it
    point = share(k / d)  # the k-th lowest of d counts at its expected rank
    return float(min(point, 2 * lower, MAX_FAKE_FRACTION - 1e-9))


def _binomial_level(a: float, d: int, log_inverse_alpha: float) -> float:
    """The :math:`F \\in (0, a)` with :math:`d\\,\\mathrm{KL}(a \\| F) = \\log(1/\\alpha)` (Chernoff's bound), by bisection.

    :math:`\\mathrm{KL}(a \\| F)` decreases from :math:`+\\infty` to 0 as :math:`F` rises from 0 to :math:`a`.
    """

    def divergence(f: float) -> float:
        tail = (1 - a) * math.log((1 - a) / (1 - f)) if a < 1 else 0.0
        return a * math.log(a / f) + tail

    low, high = 0.0, a
    for _ in range(200):
        middle = 0.5 * (low + high)
        if middle <= 0 or d * divergence(middle) > log_inverse_alpha:
            low = middle
        else:
            high = middle
    return low
