"""Post-processing of noisy frequency vectors and CDFs (free under DP: no data access).

References
----------
.. [1] T. Wang, M. Lopuhaä-Zwakenberg, Z. Li, B. Skoric, N. Li, "Locally
   Differentially Private Frequency Estimation with Consistency", NDSS 2020
   (Norm, Norm-Sub, Base-Pos, ...).
.. [2] W. Wang, M. Á. Carreira-Perpiñán, "Projection onto the probability simplex:
   An efficient algorithm with a simple proof", arXiv:1309.1541 (2013).
.. [3] P. Kairouz, K. Bonawitz, D. Ramage, "Discrete distribution estimation under
   local privacy", ICML 2016 (the projected decoder = simplex projection).
.. [4] M. Hay, V. Rastogi, G. Miklau, D. Suciu, "Boosting the accuracy of differentially
   private histograms through consistency", PVLDB 2010 (the consistent tree of noisy counts).
.. [5] P. L. Davies, A. Kovac, "Densities, spectral densities and modality", Annals of
   Statistics 32(3), 2004 (the taut string: of all densities whose CDF lies in a tube, the
   derivative of the shortest path through it has the fewest modes, sec. 2-3).
.. [6] Q. F. Stout, "Unimodal regression via prefix isotonic regression", Computational
   Statistics & Data Analysis 53(2), 2008 (the least-squares unimodal fit: the best of the
   increasing-then-decreasing isotonic fits over every place of the mode).
.. [7] M. J. Best, N. Chakravarti, "Active set algorithms for isotonic regression; a unifying
   framework", Mathematical Programming 47, 1990 (pool adjacent violators: pooling any adjacent
   violating blocks, in any order, ends at the one least-squares fit).
"""

from __future__ import annotations

import numpy as np
from .errors import InvalidParameterError, InvalidValueTypeError
from ._validation import Integer, Options, validate_params
from ._types import ArrayLike

__all__ = [
    "norm",
    "norm_sub",
    "base_pos",
    "clip",
    "clip_normalize",
    "project_simplex",
    "isotonic_cdf",
    "taut_string",
    "unimodal_regression",
    "hay_consistency",
    "consistency_violation",
    "apply",
    "METHODS",
]


#: the branching factor of a tree (the tables of the functions that take a tree)
BRANCHING = Integer(low=2)


def _as_vector(frequencies, owner: str) -> np.ndarray:
    try:
        array = np.asarray(frequencies, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    if array is None or array.ndim != 1 or array.size == 0 or not np.all(np.isfinite(array)):
        raise InvalidValueTypeError(
            f"The 'frequencies' argument of {owner} must be a non-empty 1-D array of finite floats. "
            f"Got {frequencies!r:.200} instead."
        )
    return array


def norm(frequencies: ArrayLike) -> np.ndarray:
    """Shift every entry by the same constant so the vector sums to 1 (may stay negative)."""
    f = _as_vector(frequencies, "postprocess.norm")
    return f + (1.0 - f.sum()) / f.size


def base_pos(frequencies: ArrayLike) -> np.ndarray:
    """Set negative entries to 0 (no normalization)."""
    return np.maximum(_as_vector(frequencies, "postprocess.base_pos"), 0.0)


def clip(frequencies: ArrayLike) -> np.ndarray:
    """Clip every entry into [0, 1] (no normalization)."""
    return np.clip(_as_vector(frequencies, "postprocess.clip"), 0.0, 1.0)


def clip_normalize(frequencies: ArrayLike) -> np.ndarray:
    """Set negatives to 0, then divide by the sum (uniform if nothing is positive)."""
    f = np.maximum(_as_vector(frequencies, "postprocess.clip_normalize"), 0.0)
    total = f.sum()
    return f / total if total > 0 else np.full(f.size, 1.0 / f.size)


def norm_sub(frequencies: ArrayLike, *, max_iterations: int | None = None) -> np.ndarray:
    """Norm-Sub of [1]: repeat {negatives -> 0; shift the positives equally} until sum is 1, all >= 0.

    Entries set to 0 stay 0.  Terminates in at most ``d`` rounds, since each
    round either ends or zeroes at least one more entry.
    """
    f = _as_vector(frequencies, "postprocess.norm_sub").copy()
    positive = f > 0
    if not positive.any():
        return np.full(f.size, 1.0 / f.size)
    rounds = max_iterations or f.size + 1
    for _ in range(rounds):
        f[~positive] = 0.0
        f[positive] += (1.0 - f[positive].sum()) / positive.sum()
        now_positive = f > 0
        if np.array_equal(now_positive, positive):
            break
        positive = now_positive
    f[~positive] = 0.0
    return f / f.sum()


def project_simplex(frequencies: ArrayLike) -> np.ndarray:
    """Euclidean projection onto ``{x >= 0, sum x = 1}`` ([2]; the projected decoder of [3])."""
    return _simplex_projection(_as_vector(frequencies, "postprocess.project_simplex"))


def _simplex_projection(f: np.ndarray) -> np.ndarray:
    """:func:`project_simplex` of a checked 1-D float64 array (HH-ADMM calls it thousands of times)."""
    ordered = np.sort(f)[::-1]
    cumulative = ordered.cumsum() - 1.0  # the methods, not np.cumsum / np.nonzero: the same, without the wrappers
    ranks = np.arange(1, f.size + 1)
    support = (ordered - cumulative / ranks > 0).nonzero()[0][-1]
    threshold = cumulative[support] / (support + 1)
    return np.maximum(f - threshold, 0.0)


def isotonic_cdf(values: ArrayLike, *, pinned: bool = False) -> np.ndarray:
    r"""Least-squares fit of CDF values by a non-decreasing sequence in ``[0, 1]``.

    Pool adjacent violators ([7], :func:`_isotonic_fit`), then clipping to ``[0, 1]``: clipping the isotonic fit
    keeps it monotone and gives the least-squares fit under the bounds as well.

    Parameters
    ----------
    values : array_like
        Noisy CDF values at increasing points.
    pinned : bool
        The first and last values are the CDF at the lower and upper bound: fix
        them at 0 and 1 and fit the values in between.  With the ends fixed, the
        constraints on the interior are exactly "non-decreasing and in
        ``[0, 1]``", so this is the projection onto CDFs on the bounds: the
        discretized isotonic regression of Prop. 1 of paper 002 (sec. IV-C),
        which never moves an estimate away from the true CDF in :math:`L^2`.
        Every central release that assembles a CDF uses this form.
    """
    values = _as_vector(values, "postprocess.isotonic_cdf")
    if not pinned:
        return np.clip(_isotonic_fit(values), 0.0, 1.0)
    if values.size < 2:
        raise InvalidValueTypeError(
            "The 'frequencies' argument of postprocess.isotonic_cdf(pinned=True) needs the CDF at both "
            f"bounds: at least 2 values. Got {values.size} instead."
        )
    fitted = np.empty_like(values)
    fitted[0], fitted[-1] = 0.0, 1.0
    if values.size > 2:
        fitted[1:-1] = isotonic_cdf(values[1:-1])
    return fitted


#: values up to this many are fitted by rounds of NumPy (:func:`_isotonic_fit`: what a first release meets, the
#: grids and trees of a few thousand cells); longer ones by SciPy's pool adjacent violators, whose import (1.2-2.9
#: CPU-s) is then small beside the rounds it saves (a 2**20-leaf tree: 0.06 s against 0.2-0.6 s)
POOLED_SIZE = 2**16
#: rounds of pooling before the blocks left go to SciPy (a noisy CDF of 2**14 cells needed at most 23)
POOLED_ROUNDS = 64


def _isotonic_fit(values: np.ndarray) -> np.ndarray:
    """The least-squares non-decreasing fit of ``values`` (pool adjacent violators, [7]).

    Each round pools every maximal run of blocks whose means fall into one block: within such a run each block's
    mean is above the next one's, and a pool of them stays above the next block, so the round is a sequence of
    poolings of adjacent violators, which in any order end at the one fit [7].  Each round leaves fewer blocks, and
    the fit is reached when no mean falls.  Past :data:`POOLED_ROUNDS` rounds (violations nested deep), or for
    more than :data:`POOLED_SIZE` values, SciPy's one-pass pooling of the blocks (weighted by their sizes) ends it.
    """
    sums: np.ndarray = values  # each block's sum and number of values
    sizes: np.ndarray = np.ones(values.size)
    for _ in range(POOLED_ROUNDS if values.size <= POOLED_SIZE else 0):
        means = sums / sizes
        falling = means[1:] < means[:-1]
        if not falling.any():
            return np.repeat(means, sizes.astype(np.int64))
        block = np.cumsum(np.concatenate([[True], ~falling])) - 1
        sums, sizes = np.bincount(block, sums), np.bincount(block, sizes)
    from scipy.optimize import isotonic_regression  # lazy: scipy.optimize (1.2-2.9 CPU-s), for long or deep fits

    return np.repeat(isotonic_regression(sums / sizes, weights=sizes, increasing=True).x, sizes.astype(np.int64))


def taut_string(points: ArrayLike, lower: ArrayLike, upper: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    r"""The taut string through a band of a CDF: the shortest path from ``(points[0], lower[0])`` to
    ``(points[-1], upper[-1])`` with ``lower <= F <= upper`` at every point ([5]).

    The path is piecewise linear, its knots a subset of ``points``; its slopes are a density
    constant between knots, and of all functions in the band its derivative has the fewest
    local extremes (Davies & Kovac 2004, sec. 2-3): drawn from a simultaneous band (the
    whole CDF inside with probability about its level), every peak it shows is one the band
    supports, where the estimate's own density may show peaks of noise (SW at n = 6,600,
    epsilon 2: 9-10 peaks of one).  It bends only where it touches the band: up (a convex knot)
    at the upper limit, down (a concave knot) at the lower one.

    The string is pulled from its last knot: the slopes to the points ahead under the upper
    limits and over the lower ones form a cone; where the next point leaves it, the string
    bends at the point that closed that side of the cone (the funnel of a shortest path in a
    sleeve; vectorized per knot).

    Parameters
    ----------
    points : array_like
        Increasing points (a CDF's bin edges), at least 2.
    lower, upper : array_like
        The band at ``points`` (``lower <= upper``); the ends are where the path starts and ends
        (a CDF band pinned to 0 and 1 at the bounds).

    Returns
    -------
    (ndarray, ndarray)
        The knots' points and the path's values there; ``np.diff(values) / np.diff(knots)`` is
        the density.
    """
    x, low, high = (_as_vector(v, "postprocess.taut_string") for v in (points, lower, upper))
    if not (x.size == low.size == high.size >= 2) or np.any(np.diff(x) <= 0) or np.any(low > high + 1e-12):
        raise InvalidParameterError(
            "The 'points', 'lower' and 'upper' arguments of postprocess.taut_string must be of one length (at least 2), "
            f"with increasing points and lower <= upper. Got lengths {x.size}, {low.size}, {high.size}."
        )
    last = x.size - 1
    knots, values = [0], [low[0]]
    while knots[-1] < last:
        a, ya = knots[-1], values[-1]
        ahead = np.arange(a + 1, x.size)
        span = x[ahead] - x[a]
        ends = (np.r_[low[ahead[:-1]], high[last]] - ya) / span, (high[ahead] - ya) / span  # the end is a point
        floor, ceiling = np.maximum.accumulate(ends[0]), np.minimum.accumulate(ends[1])
        closed = np.flatnonzero(floor > ceiling)
        if closed.size == 0:
            knots.append(last)
            values.append(high[last])
            continue
        b = closed[0]  # b >= 1: one point alone never closes the cone
        if ends[0][b] > ceiling[b - 1]:  # above every slope under the upper limits so far: bend at the lowest one
            k = int(np.flatnonzero(ends[1][:b] == ceiling[b - 1])[-1])
            values.append(high[ahead[k]])
        else:  # below every slope over the lower limits so far: bend at the highest one
            k = int(np.flatnonzero(ends[0][:b] == floor[b - 1])[-1])
            values.append(low[ahead[k]])
        knots.append(int(ahead[k]))
    return x[knots], np.asarray(values)


def unimodal_regression(values: ArrayLike) -> np.ndarray:
    """The least-squares fit of ``values`` by a sequence that rises, then falls ([6]).

    For every place of the peak, the isotonic (pool adjacent violators) fit rising up to it and
    falling after it; the best of them.  Pooling keeps each pool's sum, so the fit keeps the sum
    of ``values`` (a density's mass) and stays non-negative when they are.
    """
    from scipy.optimize import isotonic_regression  # lazy: scipy.optimize costs ~20 MB at import

    y = _as_vector(values, "postprocess.unimodal_regression")
    best, fit = np.inf, y
    for split in range(y.size + 1):
        candidate = np.concatenate([isotonic_regression(y[:split], increasing=True).x if split else y[:0],
                                    isotonic_regression(y[split:], increasing=False).x if split < y.size else y[:0]])
        error = float(np.sum((candidate - y) ** 2))
        if error < best:
            best, fit = error, candidate
    return fit


def _children_sums(level: np.ndarray, branching: int) -> np.ndarray:
    """Each node's children summed; the nodes on the last axis (leading axes: a batch of trees)."""
    return np.add.reduce(level.reshape(*level.shape[:-1], -1, branching), axis=-1)  # .sum(axis=-1), unwrapped


@validate_params({"branching": BRANCHING}, owner="postprocess.hay_consistency")
def hay_consistency(levels: list[np.ndarray], branching: int, *, root: float | None = None) -> list[np.ndarray]:
    r"""Least-squares consistent tree closest to the noisy ``levels`` ([4], Thm. 3).

    A tree over ``branching**h`` leaves is a list of levels, ``levels[0]`` the root;
    the children of node ``j`` of level ``l`` are nodes ``branching*j .. branching*j +
    branching - 1`` of level ``l + 1``.  This is the projection onto the consistent trees
    :math:`\{x : Ax = 0\}` (every node the sum of its children; paper 003 sec. 4.3 defines
    :math:`A`, and its eq. (13) uses the projection as :math:`\Pi_C`); the hierarchical
    histograms, local (``hh``, ``hh-admm``) and central (:mod:`dpdist.central.tree`), use it.

    Bottom-up, with the height :math:`i` of a node counted from 1 at the leaves,

    .. math::

        z_v = \frac{\beta^i - \beta^{i-1}}{\beta^i - 1}\,\tilde x_v
              + \frac{\beta^{i-1} - 1}{\beta^i - 1} \sum_{u \in \mathrm{child}(v)} z_u ,

    then top-down, :math:`\bar x_u = z_u + \frac{1}{\beta}(\bar x_{\mathrm{parent}}
    - \sum_{w \in \mathrm{child}(\mathrm{parent})} z_w)`.  With equal noise
    variance at every node, this is the orthogonal projection of the noisy tree
    onto :math:`\{x: Ax = 0\}`.

    Parameters
    ----------
    levels : list of arrays
        ``levels[l]`` has ``branching**l`` entries, ``levels[0]`` the root.
    branching : int
        :math:`\beta`.
    root : float, optional
        A root value known exactly (e.g. 1 for frequencies, paper 003 sec. 4.3:
        "the total true count is known").  The tree is then the least-squares
        consistent tree *with that root*: the top-down pass starts from it and
        ``levels[0]`` is ignored.
    """
    _check_tree(levels, branching, "postprocess.hay_consistency")
    return _consistent_tree(levels, branching, root)


def _consistent_tree(levels: list[np.ndarray], branching: int, root: float | None) -> list[np.ndarray]:
    """:func:`hay_consistency` of a checked tree (HH-ADMM calls it thousands of times), or of a batch of trees: the
    nodes of each level on its last axis, the same arithmetic tree by tree (the central tree's noise draws)."""
    height = len(levels) - 1
    z = [np.asarray(level, dtype=np.float64) for level in levels]
    for depth in range(height - 1, -1 if root is None else 0, -1):
        i = height - depth + 1  # height of this level's nodes; leaves have i = 1
        own = (branching**i - branching ** (i - 1)) / (branching**i - 1)
        z[depth] = own * z[depth] + (1.0 - own) * _children_sums(z[depth + 1], branching)
    result = [np.full(z[0].shape, float(root)) if root is not None else z[0].copy()]
    for depth in range(1, height + 1):
        parent = result[-1]
        residual = parent - _children_sums(z[depth], branching)
        result.append(z[depth] + (residual / branching).repeat(branching, axis=-1))
    return result


@validate_params({"branching": BRANCHING}, owner="postprocess.consistency_violation")
def consistency_violation(levels: list[np.ndarray], branching: int) -> float:
    """Largest ``|parent - sum(children)|`` over the tree (0 for a consistent tree)."""
    _check_tree(levels, branching, "postprocess.consistency_violation")
    if len(levels) == 1:
        return 0.0
    return max(
        float(np.max(np.abs(levels[depth] - _children_sums(levels[depth + 1], branching))))
        for depth in range(len(levels) - 1)
    )


def _check_tree(levels, branching: int, owner: str) -> None:
    """Refuse ``levels`` that are not a tree of ``branching`` (an int >= 2, checked by the caller's table)."""
    sizes = [np.size(level) for level in levels]
    if not sizes or sizes != [branching**depth for depth in range(len(sizes))]:
        raise InvalidValueTypeError(
            f"The 'levels' argument of {owner} must be a list of levels of 1, branching, branching**2, ... "
            f"entries (branching = {branching}). Got levels of {sizes} entries instead."
        )


METHODS = {
    "none": lambda f: _as_vector(f, "postprocess.apply"),
    "clip": clip,
    "clip-normalize": clip_normalize,
    "norm": norm,
    "norm-sub": norm_sub,
    "base-pos": base_pos,
    "simplex": project_simplex,
}


@validate_params({"method": Options(tuple(sorted(METHODS)))}, owner="postprocess.apply")
def apply(method: str, frequencies: ArrayLike) -> np.ndarray:
    """Apply the post-processing named ``method`` (one of :data:`METHODS`)."""
    return METHODS[method](frequencies)
