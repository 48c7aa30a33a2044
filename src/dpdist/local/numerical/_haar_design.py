r"""Design of the wavelet protocol: m per level, V_j, the allocation and the Wasserstein bound.

Paper 000 (Zhao et al., IEEE S&P 2026), eq. 59-61,
75-77, 83, Lemma 5 and Theorem 1.  ``variance_rule="exact"`` uses the corrected
variance :math:`\operatorname{Var}[Y(l)\mid v(l)=0] = 2q` (see
:mod:`._signed_subset`), ``"paper"`` the printed :math:`q` (eq. 117).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ._signed_subset import support_probabilities

__all__ = [
    "VARIANCE_RULES",
    "allocate_users",
    "allocation_weights",
    "bound_optimal_levels",
    "conditional_level_variance",
    "default_levels",
    "level_variance_bound",
    "optimal_subset_size",
    "variance_objective",
    "wasserstein_bound",
]

VARIANCE_RULES = ("exact", "paper")
#: Largest J the protocol accepts (2^21 fine bins).
MAX_LEVELS = 20


def _q_factor(variance_rule: str) -> float:
    return 2.0 if variance_rule == "exact" else 1.0


def variance_objective(d: int, epsilon: float, variance_rule: str = "exact") -> np.ndarray:
    r"""The bracket of eq. 60-61 for every ``m = 1 .. d`` (index ``m - 1``), vectorized.

    .. math:: g(m) = \frac{1+e^{-\varepsilon}}{p(1-e^{-\varepsilon})^2}
              + \frac{c\,q\,(d-1)}{p^2(1-e^{-\varepsilon})^2},

    with :math:`c = 2` (exact) or :math:`c = 1` (as printed).
    """
    m = np.arange(1, d + 1, dtype=np.float64)
    p, q = support_probabilities(d, m, epsilon)
    gap = -math.expm1(-epsilon)  # 1 - e^-eps, accurate for small epsilon
    return (1.0 + math.exp(-epsilon)) / (p * gap**2) + _q_factor(variance_rule) * q * (d - 1) / (p * gap) ** 2


@lru_cache(maxsize=4096)
def optimal_subset_size(d: int, epsilon: float, variance_rule: str = "exact") -> int:
    """``m*`` of eq. 61: the minimizer over all ``m`` in ``1 .. d`` (the smallest on ties)."""
    return int(np.argmin(variance_objective(d, epsilon, variance_rule))) + 1


@lru_cache(maxsize=4096)
def level_variance_bound(level: int, epsilon: float, variance_rule: str = "exact") -> float:
    r""":math:`V_j = 2^j \min_m g(m)` (eq. 75); :math:`\sum_k \operatorname{Var}[a_{jk}] \le V_j / n_j` (eq. 76)."""
    return float(2**level * variance_objective(2**level, epsilon, variance_rule).min())


def conditional_level_variance(
    level: int, n_level: int, epsilon: float, m: int | None = None, variance_rule: str = "exact"
) -> float:
    r"""Eq. 59: :math:`\sum_k \operatorname{Var}[a_{jk} \mid S_j]` for ``n_level`` fixed users of level ``j``.

    .. math:: \frac{2^j}{n_j}\Bigl[\frac{1+e^{-\varepsilon}}{p(1-e^{-\varepsilon})^2} - 1
              + \frac{c\,q\,(d-1)}{p^2(1-e^{-\varepsilon})^2}\Bigr]

    (it does not depend on the users' values, eq. 120).  ``m`` defaults to ``m*``.
    """
    d = 2**level
    m = optimal_subset_size(d, epsilon, variance_rule) if m is None else m
    p, q = support_probabilities(d, m, epsilon)
    gap = -math.expm1(-epsilon)
    bracket = (1.0 + math.exp(-epsilon)) / (p * gap**2) - 1.0 + _q_factor(variance_rule) * q * (d - 1) / (p * gap) ** 2
    return float(d * bracket / n_level)


def allocation_weights(levels: int, epsilon: float, variance_rule: str = "exact") -> np.ndarray:
    r"""Share of users per level, :math:`2^{-j}\sqrt{V_j} / \sum_l 2^{-l}\sqrt{V_l}` (eq. 83 before flooring)."""
    weights = np.array(
        [2.0**-j * math.sqrt(level_variance_bound(j, epsilon, variance_rule)) for j in range(levels + 1)]
    )
    return weights / weights.sum()


def allocate_users(n: int, levels: int, epsilon: float, variance_rule: str = "exact") -> np.ndarray:
    """Eq. 83: ``n_j = floor(w_j n)``; the remainder goes one by one to the largest fractional parts.

    Ties go to the lower level, so the result is deterministic; it sums to ``n``.
    """
    share = allocation_weights(levels, epsilon, variance_rule) * n
    counts = np.floor(share).astype(np.int64)
    remainder = int(n - counts.sum())
    order = np.lexsort((np.arange(levels + 1), -(share - counts)))
    counts[order[:remainder]] += 1
    return counts


def wasserstein_bound(n: int, epsilon: float, levels: int, variance_rule: str = "exact", counts: np.ndarray | None = None) -> float:
    r"""Theorem 1 in its explicit form: eq. 77 + Lemma 5 (eq. 72),

    .. math:: E[W(F_J, F)] \le \sqrt{\sum_{j=0}^{J} 2^{-(2j+2)} V_j / n_j} + 2^{-(J+1)}.

    With ``counts=None`` the :math:`n_j` are the optimal shares :math:`w_j n` of eq. 83
    before flooring, where the square root equals
    :math:`\frac{1}{2\sqrt n}\sum_j 2^{-j}\sqrt{V_j}`; otherwise the given integer
    allocation (``inf`` if a level has no user).
    """
    if counts is None:
        counts = allocation_weights(levels, epsilon, variance_rule) * n
    counts = np.asarray(counts, dtype=np.float64)
    if np.any(counts <= 0):
        return math.inf
    variance = sum(
        2.0 ** -(2 * j + 2) * level_variance_bound(j, epsilon, variance_rule) / counts[j] for j in range(levels + 1)
    )
    return math.sqrt(variance) + 2.0 ** -(levels + 1)


def default_levels(n: int) -> int:
    """``J = ceil(log2(n) / 2)`` (sec. 5.4), capped at :data:`MAX_LEVELS`."""
    return min(MAX_LEVELS, max(0, math.ceil(math.log2(n) / 2))) if n > 1 else 0


def bound_optimal_levels(n: int, epsilon: float, variance_rule: str = "exact", max_levels: int = MAX_LEVELS) -> int:
    """The ``J`` in ``0 .. max_levels`` minimizing :func:`wasserstein_bound` (sec. 6.3); smallest on ties."""
    bounds = [wasserstein_bound(n, epsilon, J, variance_rule) for J in range(max_levels + 1)]
    return int(np.argmin(bounds))
