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

* a report on a target supports no other item, so :math:`\phi_0 = 0` and every non-target's
  estimate is pulled down by the same :math:`s = -\beta q / (p - q)`.  Genuine frequencies are
  non-negative and the items of a categorical domain mostly rare, so the bulk of the estimates sits
  at :math:`s` plus noise of standard deviation :math:`\sigma_0 = \sqrt{q(1-q)/(N (p-q)^2)}`: the
  lower quartile :math:`Q_\alpha` of :math:`\tilde f_Z` estimates it,
  :math:`\hat s = \min(0, Q_\alpha + z_{1-\alpha}\sigma_0)`, then again over the items below
  :math:`\hat s + 3\sigma_0` only (the frequent items, clearly above the floor, would move the quantile's level
  among the floor's items); it is conservative: genuine mass in the lower quartile only raises it.
  :math:`\hat\beta = -\hat s (p - q)/q`.  A shift within ``3`` standard errors of the quantile
  (:math:`\sigma_0\sqrt{\alpha(1-\alpha)}/(\varphi(z_{1-\alpha})\sqrt{d'})` over the :math:`d'` items kept)
  is taken for noise: :math:`\hat\beta = 0`, and a clean campaign is left as it is;
* the estimates of one-item reports sum to exactly 1, so after the correction of the non-targets,
  :math:`g = (\tilde f_Z - \hat s)/(1 - \hat\beta)`, the mass in excess of 1,
  :math:`E = \sum_v g_v - 1`, is the fake reports' and lies on the targets: it is removed from the
  highest items (or from ``targets`` when they are known) by water-filling, the sparsest removal.

Protocols whose reports support many items (OUE, SUE, OLH, ...) hide the fake reports' padding:
the maximal-gain attack sets :math:`\lfloor p + (d-1)q \rfloor` bits (OUE) or takes a random hash
(OLH), so :math:`\phi_0 \approx q`, the non-targets do not move and the totals match honest
ones (measured in docs/frequency.md, "Poisoned campaigns").  There :math:`\beta` is not
identifiable from the aggregate: it must be given (``fake_fraction``, e.g. from a count of
accounts that failed enrollment checks), and each target, fully supported by every fake report,
carries :math:`\beta(1 - q - \tilde f_Y^0 (p-q))/((p - q)(1 - \beta))` with :math:`\tilde f_Y^0 = 0`
of excess.  Without ``targets`` the items whose :math:`g` reaches that excess within 3
:math:`\sigma_0` are taken for targets (a genuine item that frequent loses the excess too).

Constraint inference (Sun et al., sec. VI): the recovered genuine frequencies are the Euclidean
projection of :math:`g` onto the simplex, the solution of the KKT conditions of
:math:`\min \|f - g\|^2` s.t. :math:`f \ge 0, \sum f = 1` (:func:`dpdist.postprocess.project_simplex`).

Departures from the paper, stated: the paper takes :math:`\eta` as known to the server; here it is
learned for one-item protocols and taken from ``fake_fraction`` otherwise; the floor estimate
:math:`\hat s` and the water-filling are this module's reading of the paper's learning step.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any

import numpy as np

from ..._types import ArrayLike
from ..._validation import Interval, check_param
from ...errors import InvalidParameterError, OutOfDomainError
from ...estimates import FrequencyEstimate
from ... import postprocess as _postprocess
from .._aggregator import Aggregator

__all__ = ["recover_frequencies", "RECOVERY_METHODS"]

#: the recovery estimators ``estimate(..., recover=...)`` takes
RECOVERY_METHODS = ("none", "ldprecover")
#: lower quantile of the estimates that locates the non-targets' floor (one-item protocols)
FLOOR_QUANTILE = 0.25
#: standard errors a learned shift (or an excess) must exceed to count as an attack
SIGNIFICANCE_Z = 3.0
#: largest fake fraction the estimator accepts or learns (beyond it the "genuine" users are not a majority)
MAX_FAKE_FRACTION = 0.5


def _check_targets(owner: str, targets: Any, domain_size: int) -> np.ndarray | None:
    if targets is None:
        return None
    array = np.asarray(targets)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu":
        raise InvalidParameterError(
            f"The 'targets' argument of {owner} must be a non-empty 1-D array of item ids (ints). "
            f"Got {targets!r} instead."
        )
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
        A pure frequency oracle (``grr``, ``oue``, ``sue``, ``olh``, ...): one with
        ``support_probabilities``.
    data : Aggregator or array_like
        The campaign's aggregator, or a batch of its reports.
    fake_fraction : float, optional
        The fraction :math:`\beta = m/N` of fake reports, in ``[0, 0.5)``, when known.  ``None``:
        learned from the aggregate for protocols whose reports support one item (GRR), taken as 0
        (no recovery beyond the simplex projection) for the others, where it is not identifiable.
    targets : array_like of int, optional
        The attacked items, when known (the paper's "attack details" as a constraint): the fake
        mass is removed from them only.

    Returns
    -------
    FrequencyEstimate
        The recovered frequencies (in the simplex) with ``postprocess="ldprecover"``; ``variance``
        is the plain unbiased estimator's; ``details`` holds ``fake_fraction`` (used),
        ``fake_fraction_learned``, ``targets`` (the items the excess was taken from), ``excess``
        (the fake mass removed, in frequency units) and ``floor_shift`` (:math:`\hat s`).

    Notes
    -----
    The estimator and its learning step are derived in the module docstring
    (:mod:`dpdist.local.frequency._recovery`).  On a clean campaign of a one-item protocol the
    learned fraction is 0 unless the floor moves by 3 standard errors, and the result is the simplex
    projection of the unbiased estimate.

    References
    ----------
    X. Sun, Q. Ye, H. Hu, J. Duan, T. Wo, J. Xu, R. Yang, "LDPRecover: Recovering Frequencies from
    Poisoning Attacks against Local Differential Privacy", ICDE 2024 (arXiv:2403.09351).
    X. Cao, J. Jia, N. Z. Gong, "Data Poisoning Attacks to Local Differential Privacy Protocols",
    USENIX Security 2021.
    """
    owner = f"{getattr(protocol, 'display_name', type(protocol).__name__)} recovery"
    if getattr(getattr(protocol, "tags", None), "kind", None) != "frequency" or not hasattr(
        protocol, "support_probabilities"
    ):
        raise InvalidParameterError(
            f"The 'protocol' argument of recover_frequencies must be a pure frequency oracle, one with support "
            f"probabilities (grr, oue, sue, olh, ss, hr, flh, ...). Got {protocol!r} instead."
        )
    if fake_fraction is not None:
        fake_fraction = check_param(
            owner, "fake_fraction", fake_fraction, Interval(0.0, MAX_FAKE_FRACTION, closed="left")
        )
    target_items = _check_targets(owner, targets, protocol.domain_size)
    plain = protocol.estimate(data)
    poisoned, n = plain.frequencies, plain.n
    p, q = protocol.support_probabilities()
    d = poisoned.size
    sigma = math.sqrt(q * (1 - q) / (n * (p - q) ** 2))
    one_item = getattr(protocol, "statistic_total_per_report", None) == 1
    # the malicious frequency of a non-target: -q/(p-q) when a report supports one item (eq. of the estimator
    # with phi_0 = 0); about 0 for padded reports (phi_0 ~ q), where it is not identifiable
    floor = -q / (p - q) if one_item else 0.0
    learned = fake_fraction is None
    if fake_fraction is None:
        beta = _learned_fake_fraction(poisoned, sigma, floor) if one_item else 0.0
    else:
        beta = float(fake_fraction)
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
    recovered = _postprocess.project_simplex(genuine)  # the CI problem's KKT solution
    details = {
        **plain.details,
        "estimator": "ldprecover",
        "fake_fraction": beta,
        "fake_fraction_learned": learned,
        "targets": [int(item) for item in np.sort(taken)],
        "excess": excess,
        "floor_shift": shift,
    }
    return FrequencyEstimate(
        frequencies=recovered, n=n, variance=plain.variance, epsilon=plain.epsilon, protocol=plain.protocol,
        postprocess="ldprecover", details=details, guarantee=plain.guarantee, labels=plain.labels,
    )


def _learned_fake_fraction(poisoned: np.ndarray, sigma: float, floor: float) -> float:
    """:math:`\\hat\\beta = \\hat s / \\tilde f_Y^0` from the lower quantile of the estimates, 0 unless significant."""
    alpha = FLOOR_QUANTILE
    normal = NormalDist()
    z = normal.inv_cdf(1 - alpha)
    shift = min(0.0, float(np.quantile(poisoned, alpha)) + z * sigma)
    floor_items = poisoned[poisoned <= shift + SIGNIFICANCE_Z * sigma]  # without the items clearly above the floor
    shift = min(0.0, float(np.quantile(floor_items, alpha)) + z * sigma)
    standard_error = sigma * math.sqrt(alpha * (1 - alpha)) / (normal.pdf(z) * math.sqrt(floor_items.size))
    if shift > -SIGNIFICANCE_Z * standard_error:
        return 0.0
    return min(shift / floor, MAX_FAKE_FRACTION - 1e-9)
