r"""Zero-concentrated DP: a pair's exact :math:`\rho` from its privacy loss, and :math:`\rho` to :math:`(\varepsilon, \delta)`.

A mechanism is :math:`\rho`-zCDP when every ordered neighbouring pair has Rényi divergences
:math:`D_\alpha(P\|Q) \le \rho\alpha` for all :math:`\alpha > 1` (Bun & Steinke, TCC 2016, Def. 1.1);
:math:`\rho`'s add up under composition (their Lemma 2.3) and take the largest over disjoint parts.

**A pair's** :math:`\rho` **from its loss atoms** (:func:`atoms_rho`).  :math:`D_\alpha(P\|Q) =
\frac{1}{\alpha-1}\log \mathbb E_P[e^{(\alpha-1)L}]`.  :math:`D_\alpha` is non-decreasing in :math:`\alpha`
(van Erven & Harremoës 2014, Thm. 3), so on :math:`[\alpha_i, \alpha_{i+1}]`, :math:`D_\alpha/\alpha \le
D_{\alpha_{i+1}}/\alpha_i`; below the first grid point :math:`D_\alpha/\alpha \le D_{\alpha_0}`, and above the
last :math:`D_\alpha/\alpha \le \max L/\alpha_{\max}`.  The largest of these over a grid of 600 points
(:math:`\alpha - 1` from :math:`10^{-7}` to :math:`10^{5}`) is an upper bound on :math:`\sup_\alpha D_\alpha/\alpha`
within the grid's ratio (4%) of it, and much closer where the supremum is approached as :math:`\alpha \to 1`
(randomized response: the Kullback-Leibler divergence :math:`\varepsilon\tanh(\varepsilon/2)`).

**Conversion** (:func:`zcdp_epsilon`): :math:`\rho`-zCDP gives :math:`(\varepsilon, \delta)`-DP with
:math:`\varepsilon = \alpha\rho + \frac{\log(1/\delta) - \log\alpha}{\alpha - 1} + \log(1 - 1/\alpha)` for every
:math:`\alpha > 1` (Canonne, Kamath & Steinke, NeurIPS 2020, Prop. 12 / Cor. 13, the form
:func:`dpdist.central.noise.zcdp_delta` inverts); the smallest over a grid and a golden-section
refinement (any :math:`\alpha` is valid, so missing the exact minimum only overstates).
"""

from __future__ import annotations

import math

import numpy as np

from ._distributions import Atoms

__all__ = ["atoms_rho", "pure_rho", "zcdp_epsilon", "renyi"]

_ORDERS = 1.0 + np.logspace(-7, 5, 600)
#: entries of one block of the orders-by-atoms matrix (8 MB): a pair of 10^5 atoms is read 10 orders at a time
_BLOCK = 2**20


def renyi(atoms: Atoms, orders: np.ndarray) -> np.ndarray:
    r""":math:`D_\alpha(P\|Q)` of the pair of ``atoms`` at each of ``orders`` (> 1); ``inf`` with mass at :math:`+\infty`."""
    if atoms.infinity > 0:
        return np.full(np.shape(orders), math.inf)
    losses, masses = np.asarray(atoms.losses), np.asarray(atoms.masses)
    keep = masses > 0
    losses, logs, orders = losses[keep], np.log(masses[keep]), np.asarray(orders, dtype=np.float64)
    rows = max(1, _BLOCK // losses.size)  # orders per block: a block's matrix holds at most _BLOCK entries
    log_moment = np.concatenate([_log_moments(orders[start:start + rows], losses, logs)
                                 for start in range(0, orders.size, rows)])
    return np.maximum(log_moment, 0.0) / (orders - 1.0)


def _log_moments(orders: np.ndarray, losses: np.ndarray, logs: np.ndarray) -> np.ndarray:
    r""":math:`\log \mathbb E_P[e^{(\alpha - 1) L}]` at each of ``orders``, as a log-sum-exp."""
    exponents = (orders[:, None] - 1.0) * losses[None, :] + logs[None, :]
    top = exponents.max(axis=1)
    return top + np.log(np.exp(exponents - top[:, None]).sum(axis=1))


def atoms_rho(atoms: Atoms) -> float:
    r"""An upper bound on :math:`\sup_{\alpha>1} D_\alpha(P\|Q)/\alpha` of the pair of ``atoms`` (module docstring)."""
    if atoms.infinity > 0:
        return math.inf
    divergences = renyi(atoms, _ORDERS)
    within = divergences[1:] / _ORDERS[:-1]  # alpha in [alpha_i, alpha_{i+1}]
    below = divergences[0]  # alpha in (1, alpha_0]: D_alpha / alpha <= D_{alpha_0}
    beyond = max(atoms.largest, 0.0) / _ORDERS[-1]
    return float(max(within.max(), below, beyond)) * (1 + 1e-12)


def pure_rho(epsilon: float) -> float:
    r""":math:`\varepsilon`-DP implies :math:`\varepsilon^2/2`-zCDP (Bun & Steinke 2016, Prop. 1.4), for any mechanism."""
    return 0.5 * epsilon * epsilon


def zcdp_epsilon(rho: float, delta: float) -> float:
    r"""The :math:`\varepsilon` at ``delta`` of :math:`\rho`-zCDP (Canonne, Kamath & Steinke 2020; module docstring)."""
    if rho <= 0:
        return 0.0
    if not 0 < delta < 1:
        return math.inf
    log_inverse = math.log(1.0 / delta)

    def bound(alpha: float) -> float:
        return alpha * rho + (log_inverse - math.log(alpha)) / (alpha - 1.0) + math.log1p(-1.0 / alpha)

    orders = 1.0 + np.logspace(-6, 8, 400)
    values = orders * rho + (log_inverse - np.log(orders)) / (orders - 1.0) + np.log1p(-1.0 / orders)
    best = int(np.argmin(values))
    low, high = orders[max(best - 1, 0)], orders[min(best + 1, orders.size - 1)]
    ratio = (math.sqrt(5.0) - 1.0) / 2.0
    for _ in range(60):  # golden section on the bracket around the grid's best
        left, right = high - ratio * (high - low), low + ratio * (high - low)
        if bound(left) <= bound(right):
            high = right
        else:
            low = left
    return max(0.0, min(float(values[best]), bound(0.5 * (low + high))))
