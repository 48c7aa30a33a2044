r"""Complete :math:`\beta`-ary trees over histogram bins: their height and HH-ADMM.

A tree over ``bins = beta**h`` leaves is stored level by level as a list of
arrays, ``levels[0]`` the root (one node), ``levels[h]`` the leaves; the
children of node ``j`` of level ``l`` are nodes ``beta*j .. beta*j + beta-1``
of level ``l + 1``.

:func:`hh_admm` is Algorithm 2 of App. B of paper 003 (HH-ADMM); its projection
:math:`\Pi_C` onto the consistent trees is Hay et al.'s constrained inference,
:func:`dpdist.postprocess.hay_consistency`, shared with the central tree release.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..._validation import validate_params
from ...postprocess import BRANCHING, _check_tree, _children_sums, _simplex_projection

__all__ = ["tree_height", "hh_admm", "AdmmResult"]


def tree_height(bins: int, branching: int) -> int | None:
    """``h`` with ``branching**h == bins``, or None when ``bins`` is not a power of ``branching``."""
    height = round(math.log(bins) / math.log(branching))
    for candidate in (height - 1, height, height + 1):
        if candidate >= 1 and branching**candidate == bins:
            return candidate
    return None


@dataclass(frozen=True)
class AdmmResult:
    """Output of :func:`hh_admm`.

    Attributes
    ----------
    tree : list of arrays
        The ADMM iterate :math:`\\hat x` per level.
    leaves : ndarray
        The leaves of the non-negative, normalized split variable :math:`w`
        (exactly :math:`\\ge 0` and summing to 1; equal to ``tree[-1]`` within the
        primal tolerance at convergence).
    iterations : int
    primal_residual, dual_residual : float
        Residuals at the last iteration (Euclidean norms, see :func:`hh_admm`).
    converged : bool
    """

    tree: list
    leaves: np.ndarray
    iterations: int
    primal_residual: float
    dual_residual: float
    converged: bool


_total = np.add.reduce


def _simplex_projections(sizes: list[int], pieces: list[slice]) -> Callable[[np.ndarray], np.ndarray]:
    """Each level of a tree vector projected onto the simplex: :func:`~dpdist.postprocess.project_simplex` level by
    level, the same numbers from one pass over the levels padded to one width (HH-ADMM takes 10^4 projections).

    A padded entry is ``-inf``: it sorts after every entry of its level, adds nothing to the sums before it and never
    holds the support, so each level's sorted entries, partial sums, support and threshold are the level's own.
    A level whose support is empty (not finite: where ``project_simplex`` raises) goes level by level.
    """
    width, count = max(sizes), len(sizes)
    rows = np.repeat(np.arange(count), sizes)
    columns = np.concatenate([np.arange(size) for size in sizes])
    padding = np.full((count, width), -np.inf)
    ranks = np.arange(1, width + 1)
    every = np.arange(count)

    def project(vector: np.ndarray) -> np.ndarray:
        padded = padding.copy()
        padded[rows, columns] = vector
        ordered = np.sort(padded, axis=1)[:, ::-1]
        cumulative = ordered.cumsum(axis=1) - 1.0
        with np.errstate(invalid="ignore"):  # -inf - -inf in the padding: nan, not in the support
            support = ordered - cumulative / ranks > 0
        if not support.any(axis=1).all():
            projected = np.empty_like(vector)
            for piece in pieces:
                projected[piece] = _simplex_projection(vector[piece])
            return projected
        last = width - 1 - support[:, ::-1].argmax(axis=1)  # each level's last index in the support
        threshold = cumulative[every, last] / (last + 1)
        return np.maximum(vector - threshold[rows], 0.0)

    return project


def _consistent_projection(pieces: list[slice], branching: int) -> Callable[[np.ndarray], np.ndarray]:
    """:func:`~dpdist.postprocess.hay_consistency` of a tree vector (no known root), with the same arithmetic as
    ``_consistent_tree``: its weights computed once and the levels written into one vector."""
    height = len(pieces) - 1
    weights = {}
    for depth in range(height - 1, -1, -1):
        i = height - depth + 1  # height of this level's nodes; leaves have i = 1
        own = (branching**i - branching ** (i - 1)) / (branching**i - 1)
        weights[depth] = (own, 1.0 - own)

    def project(vector: np.ndarray) -> np.ndarray:
        z = [vector[piece] for piece in pieces]
        for depth in range(height - 1, -1, -1):
            own, rest = weights[depth]
            z[depth] = own * z[depth] + rest * _children_sums(z[depth + 1], branching)
        out = np.empty_like(vector)
        out[pieces[0]] = z[0]
        for depth in range(1, height + 1):
            residual = out[pieces[depth - 1]] - _children_sums(z[depth], branching)
            out[pieces[depth]] = z[depth] + (residual / branching).repeat(branching, axis=-1)
        return out

    return project


@validate_params({"branching": BRANCHING})
def hh_admm(
    levels: list[np.ndarray],
    branching: int,
    *,
    tolerance: float = 1e-7,
    max_iterations: int = 10_000,
) -> AdmmResult:
    r"""Algorithm 2 of paper 003 (App. B): ADMM for problem (5), with :math:`\rho = 1`.

    .. math::

        \min \tfrac12 \|\hat x - \tilde x\|_2^2 \quad \text{s.t.}\quad
        A\hat x = 0,\ \hat x \ge 0,\ \hat x_0 = 1

    split as :math:`\hat x - \tilde x = y`, :math:`\hat x = z \in C = \{Ax = 0\}`,
    :math:`\hat x = w \in N_+` (each level non-negative and summing to 1).  The
    updates are those of Algorithm 2: :math:`y = (\hat x - \tilde x + \mu)/2`,
    :math:`z = \Pi_C(\hat x + \nu)` (:func:`hay_consistency`, eq. 13),
    :math:`w = \Pi_{N_+}(\hat x + \eta)` (eq. 14), the average for :math:`\hat x`
    (eq. 9) and the scaled dual ascents (10)-(12).

    :math:`\Pi_{N_+}` is computed as the exact Euclidean projection of every level
    onto the probability simplex (:func:`dpdist.postprocess.project_simplex`);
    the paper suggests Norm-Sub for it, which coincides with that projection
    whenever the positive entries sum to at least 1 but not otherwise, and ADMM's
    convergence guarantee needs the exact projection.

    Stopping rule (Boyd et al. 2011, sec. 3.3, absolute tolerances only): with
    :math:`N` the number of nodes, stop when the primal residual
    :math:`\|(\hat x - \tilde x - y,\ \hat x - z,\ \hat x - w)\|_2` and the dual
    residual :math:`\|(y - y',\ z - z',\ w - w')\|_2` (change of the split
    variables in one iteration, :math:`\rho = 1`) are both at most
    ``tolerance * sqrt(N)``, or after ``max_iterations`` iterations.
    """
    _check_tree(levels, branching, "hh_admm")  # once: the projections below take the checked levels' views
    sizes = [len(level) for level in levels]
    ends = np.cumsum(sizes).tolist()
    pieces = [slice(start, end) for start, end in zip([0, *ends[:-1]], ends)]
    noisy = np.concatenate([np.asarray(level, dtype=np.float64) for level in levels])

    def split(vector):
        return [vector[piece] for piece in pieces]

    project_consistent = _consistent_projection(pieces, branching)  # Pi_C, eq. 13 (hay_consistency)
    project_normalized = _simplex_projections(sizes, pieces)  # Pi_N+, eq. 14 (each level's project_simplex)
    x = noisy.copy()
    y = z = w = mu = nu = eta = np.zeros_like(x)  # the split variables and scaled duals (every update rebinds)
    limit = tolerance * math.sqrt(x.size)
    primal = dual = math.inf
    iteration = 0
    for iteration in range(1, max_iterations + 1):
        y_old, z_old, w_old = y, z, w
        y = 0.5 * (x - noisy + mu)
        z = project_consistent(x + nu)
        w = project_normalized(x + eta)
        x = ((y + noisy - mu) + (z - nu) + (w - eta)) / 3.0
        mu = mu + x - noisy - y
        nu = nu + x - z
        eta = eta + x - w
        # np.add.reduce: what np.sum calls, without its wrapper (up to 10^4 iterations of a few microseconds each)
        primal = math.sqrt(_total((x - noisy - y) ** 2) + _total((x - z) ** 2) + _total((x - w) ** 2))
        dual = math.sqrt(_total((y - y_old) ** 2) + _total((z - z_old) ** 2) + _total((w - w_old) ** 2))
        if primal <= limit and dual <= limit:
            break
    return AdmmResult(
        tree=split(x),
        leaves=split(w)[-1],
        iterations=iteration,
        primal_residual=primal,
        dual_residual=dual,
        converged=primal <= limit and dual <= limit,
    )
