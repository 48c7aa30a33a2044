r"""Many quantiles at once, and a quantile without bounds.

``quantiles(x, epsilon, bounds, q, method=...)``:

``"auto"`` (default)
    Paid from the budget: :data:`CHOICE_SHARE` of it releases the numbers of distinct values :math:`D` and of
    tied records :math:`T = n - D` (one Laplace draw each at that share: adding or removing a record moves one of
    them by one, or neither where a missing value is dropped, so the pair has :math:`\ell_1` sensitivity 1).  Where the noisy ties are at most
    :data:`TIES_LIMIT` of the noisy :math:`n`, that :math:`n` is at most :data:`JOINT_LIMIT` and :math:`n\varepsilon` at
    least :data:`JOINT_MIN_SIZE`, the rest runs
    ``"jointexp"`` with :data:`DEFAULT_INTERVAL_SHARE` of it on intervals; else :data:`LATTICE_SHARE` of the rest
    releases the units the values are heaped on and the rest grows the ``"tree"``, whose quantiles are read on
    those heaps (:mod:`dpdist.central._lattice`: a decile lands on the heap its rank falls in, not between two).
    The choice is a function of the released pair (post-processing), the steps compose sequentially and the
    guarantee states their sum: epsilon-DP under add/remove neighbours.  Why (``benchmarks/bench_decile_peers.py``,
    deciles, epsilon 1): on data without ties JointExp's deciles are 1.2-10.7x closer in rank than the tree's at
    n = 10^3 (0.84x on lognormal incomes at a tight bound; 10.7x on a Pareto 10^7 wide, where one leaf of the tree
    holds a third of the records), 1.3-2.3x at 10^4 and 1.1-5.8x at 10^5, but on heaped data (ties) its outputs
    land beside the atoms, 1.2-2.1x behind the tree in rank and 3-7.5x in the data's units at 10^4.  Below
    :data:`JOINT_MIN_SIZE` the tree is as close (500 lognormal incomes: 0.0096 against 0.0106); above
    :data:`JOINT_LIMIT` records JointExp's time (1 CPU-s at 10^5, 8 at 10^6) outgrows the tree's (0.2 s at 10^6).
    On data with ties the tree has at least :math:`n\varepsilon/32` leaves (:func:`dpdist.central.tree.leaf_floor`).
    ``details["choice"]`` (JointExp) or the
    tree's ``releases[0]["choice"]`` holds the pair and the method chosen, ``details["lattice"]`` the heaps.
``"tree"``
    One :class:`~dpdist.central.tree.TreeHistogram` release; every quantile is
    read off its consistent, isotonic CDF, so asking for 9 or 99 quantiles costs
    the same budget.  Intervals: the CDF's noise standard error
    (:meth:`TreeHistogram.cdf_standard_error`, pure post-processing) gives a
    pointwise band :math:`\hat F \pm z\,\mathrm{se}` at the leaf edges, and the
    interval of the :math:`q`-quantile runs from the left edge of the leaf where
    the upper band reaches :math:`q` to the right edge of the leaf where the
    lower band does (inside a leaf the data may lie anywhere).  It covers the
    *data's* empirical quantile (the noise is the only randomness); coverage is
    checked in ``tests/central/test_tree.py``.
``"aq"``
    Approximate quantiles of Kaplan, Schnapp & Stemmer (ICML 2022, Alg. 1): the
    middle requested quantile is released by the exponential mechanism for one
    quantile (Smith 2011), the data are split at it, and both halves recurse with
    the remaining quantiles rescaled.  The mechanism runs on the public grid of
    :math:`2^{32}` cells (:mod:`dpdist.central._grid_quantile`): grid point :math:`k`
    has weight :math:`\exp(-\varepsilon'|\#\{x < k\} - qK|/2)`, and the draw is exact
    (certified Gumbel-max over the groups of points between data cells, then a
    uniform point of the group; no float Gumbel).  Each record takes part in one release per level of the
    recursion, so with :math:`\lceil\log_2(m+1)\rceil` levels each release gets
    :math:`\varepsilon' = \varepsilon/\lceil\log_2(m+1)\rceil`, and the total is
    :math:`\varepsilon`-DP by parallel composition within a level and sequential
    composition across levels.  The mechanism's error bound is on ranks beyond
    the best rank a point takes (``details["rank_error_bound"]``; with ties that best
    is far from the target, and the rescaled halves pass a miss on), so it gives no
    interval; ``interval_share`` buys intervals (below).
``"jointexp"``
    JointExp of Gillenwater, Joseph & Kulesza (ICML 2021, Alg. 1): one
    exponential mechanism over the sorted vector of all m outputs, utility
    :math:`-\sum_j |\#\{o_{j-1} \le x < o_j\} - n(q_j - q_{j-1})|`, add/remove
    sensitivity :math:`2(1 - \min_j (q_j - q_{j-1}))`, sampled exactly by the
    paper's dynamic program over the groups of grid points between the records' cells
    (:mod:`dpdist.central.joint_exp`: time :math:`O(mD\log D + m^2 D)` for :math:`D` distinct
    cells, no FFT), on a public grid of :func:`joint_exp_grid` cells, so that its tables hold at
    most :math:`2^{28}` numbers whatever the private :math:`n`; the outputs are grid points drawn
    exactly (certified error bounds on every weight, certified Gumbel races).  Intervals with
    ``interval_share`` (below).

Intervals of ``"aq"`` and ``"jointexp"`` (``interval_share``, :mod:`dpdist.central._quantile_intervals`)
    That share of ε buys brackets beside each released quantile (exact closed-rank exponential
    mechanisms on the records between consecutive releases, in parallel) and noisy counts of the
    segments they cut (discrete Laplace); a bracket whose noisy count certifies it below (above)
    the quantile by the counts' Chernoff bound is an end.  Each interval covers the data's
    empirical quantile with probability at least ``level`` for every data set, whatever the point
    release did; the point estimate may lie outside it (where AQ or JointExp missed, on ties).

``"slice"``
    Slice quantiles of Imola, Boninsegna, Keller, Aamand, Roy Chowdhury & Pagh (NeurIPS 2025,
    arXiv 2505.13662): the target ranks get correlated noise from a k-ary tree for continual
    counting, each noisy rank's slice of :math:`2h + 1` records has its median released by the
    exact exponential mechanism within the bounds its neighbours' releases leave
    (:mod:`dpdist.central.slice_quantiles`).  :math:`(\varepsilon, \delta)`-DP under **replace-one**
    neighbours with :math:`n` public (``delta``, default :math:`10^{-10}`); refused where the
    quantiles' ranks are too close for the noise at this :math:`n`.  No intervals (``None``).

:func:`unbounded_quantile` (Durfee, NeurIPS 2023): no upper bound needed.
Candidates :math:`c_i = \ell + \beta^i - 1` grow geometrically from a lower
point :math:`\ell`; AboveThreshold (Dwork & Roth 2014, Alg. 1, with
:math:`\varepsilon_1 = \varepsilon_2 = \varepsilon/2`) asks
:math:`f_i = \#\{x < c_i\} - q\,n` (sensitivity 1 under add/remove and
replacement; not monotone under add/remove, so the general noise) against the
threshold 0, and releases the first candidate above it.  The queries are rounded
to a grid of :math:`\gamma = 2^{-16}`, so the rounded queries have sensitivity
:math:`\Delta_Z = 2^{16} + 1` grid steps; the threshold gets discrete Laplace
noise of scale :math:`\Delta_Z/\varepsilon_1` and each query
:math:`2\Delta_Z/\varepsilon_2` (about Laplace(2/ε) and Laplace(4/ε) in the
queries' units), which is what the proof of Dwork & Roth's Thm. 3.23 needs
(:func:`dpdist.central.noise.above_threshold`).  The
output is a public grid point, so no float bits of the data leak.

Released values are rounded to a public grid of :math:`2^{-32}` of the bounds'
width (post-processing; the floats of an interval's end points never leave).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import replace
import warnings
from typing import Any

import numpy as np

from .._guarantee import PrivacyGuarantee, sequential, split
from .._types import ArrayLike, FloatBounds, Seed
from .._validation import Described, Implies, Interval, Optional, Options, Present, check_param, validate_params
from ..errors import InvalidParameterError, InvalidPrivacyParameterError
from ..estimates import QuantileRelease
from ..estimates._intervals import json_value, normal_quantile
from ..estimates._quantiles import check_q
from ._common import check_central_input
from ._grid_quantile import GRID_CELLS, cell_points, exponential_quantile, to_cells
from ._lattice import Lattice, lattice_quantiles, release_lattice
from ._quantile_intervals import bracket_intervals, split_interval_budget
from .joint_exp import joint_exp
from .noise import above_threshold, laplace_mechanism
from .slice_quantiles import DEFAULT_DELTA as SLICE_DEFAULT_DELTA
from .slice_quantiles import slice_plan, slice_quantile_points
from .tree import TreeHistogram, grow_checked, grow_tree

__all__ = ["QuantileRelease", "quantiles", "unbounded_quantile", "QUANTILE_METHODS"]  # QuantileRelease: re-exported

QUANTILE_METHODS = ("auto", "tree", "aq", "jointexp", "slice")
#: Share of the budget the default (``"auto"``) spends on the numbers of distinct values and of ties that choose
#: its method.
CHOICE_SHARE = 0.02
#: The default runs JointExp where the noisy ties are at most this share of the noisy n,
TIES_LIMIT = 0.25
#: the noisy n at most this many records (JointExp's time grows like n: 8 CPU-s at 10^6, the tree's 0.2),
JOINT_LIMIT = 2e5
#: and the noisy n times epsilon at least this (below it the tree's deciles are as close or closer).
JOINT_MIN_SIZE = 600.0
#: Share of the rest of the default's budget spent, when it grows the tree, on the lattice of units the values are
#: heaped on (:mod:`dpdist.central._lattice`).
LATTICE_SHARE = 0.02
#: Share of the default JointExp's budget spent on its intervals (:mod:`dpdist.central._quantile_intervals`): the
#: estimate's error against its interval's width.  Deciles of lognormal incomes (median 30,000 USD, sigma 0.8, bound
#: 300,000), epsilon 1, 30 runs, rank error (mean width of the 95% intervals in ranks) at shares 0.05, 0.1, 0.2,
#: 0.3: n = 5,000: 1.23e-3 (0.178), 0.97e-3 (0.109), 1.14e-3 (0.069), 1.46e-3 (0.054); n = 20,000: 2.7e-4 (0.072),
#: 2.5e-4 (0.041), 3.7e-4 (0.022), 4.1e-4 (0.015).  The tree at n = 5,000: 1.6e-3 (0.023).
DEFAULT_INTERVAL_SHARE = 0.2
_GRID_BITS = 32


def _is_real(value) -> bool:
    """A real number (Python or NumPy), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _snap(values: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    step = (bounds[1] - bounds[0]) * 2.0**-_GRID_BITS
    return np.clip(bounds[0] + np.round((np.asarray(values) - bounds[0]) / step) * step, bounds[0], bounds[1])


#: The probabilities ``quantiles`` releases when ``q`` is not given: the deciles.
DEFAULT_Q = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)


@validate_params({
    "method": Options(QUANTILE_METHODS),
    "level": Interval(0.0, 1.0, closed="neither"),
    "interval_share": Optional(Described(Interval(0.0, 1.0, closed="neither"),
                                         "a float in (0, 1) (the share of epsilon spent on intervals)")),
}, relations=(
    Implies("interval_share", (None,), "method", ("auto", "tree", "slice"),
            why="it applies to method='aq' and method='jointexp': the tree's intervals cost nothing, 'slice' has none",
            counterexample={"method": "tree", "interval_share": 0.2}),
    Implies("delta", (None,), "method", ("auto", "tree", "aq", "jointexp"),
            why="it applies to method='slice' only: the other methods are pure epsilon-DP",
            counterexample={"method": "aq", "delta": 1e-9}),
))
def quantiles(
    x: ArrayLike,
    *args: Any,
    q: ArrayLike | None = None,
    epsilon: float | None = None,
    bounds: FloatBounds | None = None,
    method: str = "auto",
    level: float = 0.95,
    rng: Seed = None,
    clip: bool = True,
    secure: bool = False,
    delta: float | None = None,
    interval_share: float | None = None,
    missing: str | float = "refuse",
    privacy_id: ArrayLike | None = None,
    max_contributions: int | str | None = None,
) -> QuantileRelease:
    """Release many quantiles of ``x`` under ``epsilon``-DP (add/remove neighbours; ``"slice"``: (epsilon,
    delta)-DP under replace-one neighbours, n public); see the module docstring.

    Called in numpy's order, ``quantiles(x, q, epsilon=..., bounds=...)`` (as
    ``np.quantile(a, q)``), or with every argument by keyword.  The older order
    ``quantiles(x, epsilon, bounds)`` still works, with ``q=`` by keyword; ``q`` given
    positionally last, ``quantiles(x, epsilon, bounds, q)``, works too but is
    deprecated (a :class:`DeprecationWarning`).

    Parameters
    ----------
    x : array_like of float
    q : sequence of float, optional
        Strictly increasing probabilities in (0, 1) (default: the deciles 0.1, ..., 0.9).
    epsilon : float
    bounds : (float, float)
        Public range (use :func:`unbounded_quantile` to find one).
    method : {"auto", "tree", "aq", "jointexp", "slice"}
        ``"auto"`` (default) chooses JointExp or the tree from the data's noisy numbers of distinct values and ties
        (paid from the budget: see the module docstring).
    level : float
        Confidence level of the intervals (``"tree"``; ``"aq"`` and ``"jointexp"`` with ``interval_share``).
    rng, clip, secure
        As in :func:`dpdist.central.histogram_queries`.
    delta : float, optional
        ``"slice"`` only: the release's delta (default 1e-10); the other methods are pure and refuse it.
    interval_share : float, optional
        ``"aq"`` and ``"jointexp"`` only: the share of ``epsilon``, in (0, 1), spent on intervals
        (:mod:`dpdist.central._quantile_intervals`: brackets and noisy counts; the quantiles get the
        rest, and the guarantee states the total).  Default: no intervals, the whole budget on the
        quantiles.  The tree's intervals cost nothing; ``"slice"`` has none.
    missing : {"refuse", "drop"} or float
        Missing values (NaN, None) in ``x``: refused with their count (the default), left out
        (``"drop"``; refused with ``"slice"``, whose replace neighbours keep n public), or each counted
        as the number given; the release's notes state the policy (:mod:`dpdist._missing`).
    privacy_id, max_contributions : optional
        Whose row each value is, and the rows kept per person (an int >= 1, or ``"auto"``): per person.
        Ids compare exactly, numbers by value, strings as written (normalise them first); two kinds are refused
        (:mod:`dpdist._ids`).
    """
    owner = "quantiles"
    q, epsilon, bounds = _quantile_arguments(owner, args, q, epsilon, bounds)
    probabilities = check_q(owner, q)
    share = None if interval_share is None else float(interval_share)  # with 'aq' or 'jointexp': the relations
    unit: dict[str, Any] = {"privacy_id": privacy_id, "max_contributions": max_contributions}
    if method == "tree":
        tree = grow_tree(TreeHistogram, owner, x, epsilon, bounds, rng=rng, clip=clip, secure=secure, missing=missing, **unit)
        return _tree_quantiles(tree, probabilities, float(level))
    if method == "slice":
        if delta is None:
            delta = SLICE_DEFAULT_DELTA
        data = check_central_input(owner, x, epsilon=epsilon, bounds=bounds, rng=rng, clip=clip, secure=secure,
                                   delta=delta, needs_delta=True, missing=missing, neighbouring="replace", **unit)
        return _slice_quantiles(data, probabilities, float(level))
    data = check_central_input(owner, x, epsilon=epsilon, bounds=bounds, rng=rng, clip=clip, secure=secure,
                               missing=missing, neighbouring="add-remove", **unit)
    if method == "auto":
        return _default_quantiles(owner, data, probabilities, float(level))
    if method == "jointexp":
        return _joint_quantiles(data, probabilities, float(level), share)
    return _approximate_quantiles(data, probabilities, float(level), share)


#: the bounds of either calling order, given (their own rule is the release's)
_BOUNDS_GIVEN = Present("a pair (lo, hi) of public bounds: quantiles(x, q, epsilon=..., bounds=(lo, hi)) "
                        "(unbounded_quantile finds a range privately)")


def _quantile_arguments(owner: str, args: tuple, q, epsilon, bounds) -> tuple[Any, float, FloatBounds]:
    """``(q, epsilon, bounds)`` of either calling order of :func:`quantiles` (see its docstring)."""

    if epsilon is not None:  # numpy's order: quantiles(x, q, epsilon=..., bounds=...)
        if len(args) > 1 or (args and q is not None):
            raise InvalidParameterError(
                f"{owner} takes at most one positional argument after x, the probabilities q, when epsilon is given "
                f"by keyword: quantiles(x, q, epsilon=..., bounds=...). Got {len(args)} positional argument(s) "
                f"after x{' and q=' if q is not None else ''}."
            )
        q = args[0] if args else q
    else:  # the older order: quantiles(x, epsilon, bounds[, q])
        if len(args) > 3:
            raise InvalidParameterError(
                f"{owner} takes x, q and keyword arguments: quantiles(x, q, epsilon=..., bounds=...). "
                f"Got {len(args) + 1} positional arguments."
            )
        if args and not _is_real(args[0]):
            raise InvalidPrivacyParameterError(
                f"The 'epsilon' parameter of {owner} must be a finite float > 0. Got {args[0]!r} instead "
                "(for numpy's order, give epsilon and bounds by keyword: quantiles(x, q, epsilon=..., bounds=...))."
            )
        given = dict(zip(("epsilon", "bounds", "q"), args))
        if "bounds" in given and bounds is not None:
            raise InvalidParameterError(f"{owner} got 'bounds' both positionally and by keyword.")
        if "q" in given:
            if q is not None:
                raise InvalidParameterError(f"{owner} got 'q' both positionally and by keyword.")
            warnings.warn(
                "quantiles(x, epsilon, bounds, q) is deprecated: pass q second, as numpy does, with epsilon and "
                "bounds by keyword: quantiles(x, q, epsilon=..., bounds=...) (or q=... by keyword).",
                DeprecationWarning,
                stacklevel=3,
            )
        epsilon = given.get("epsilon")
        bounds = given.get("bounds", bounds)
        q = given.get("q", q)
    if epsilon is None:
        raise InvalidPrivacyParameterError(f"The 'epsilon' parameter of {owner} is missing: quantiles(x, q, epsilon=..., bounds=...).")
    bounds = check_param(owner, "bounds", bounds, _BOUNDS_GIVEN)
    return (DEFAULT_Q if q is None else q), epsilon, bounds


#: JointExp's two tables hold m (D + 1) doubles each for D distinct cells; the data are mapped to a public grid of
#: _JOINT_EXP_CELLS // m - 2 cells so that they stay within 2 x 2^27 doubles (2 GiB) whatever the private n
_JOINT_EXP_CELLS = 2**27
#: the coarsest grid JointExp runs on; fewer cells (more than _JOINT_EXP_CELLS / 1026 quantiles) is refused
_JOINT_EXP_MIN_GRID = 1024


def joint_exp_grid(bounds: tuple[float, float], m: int) -> int:
    """Cells of the public grid the data are snapped to before JointExp: ``_JOINT_EXP_CELLS // m - 2``.

    A function of the public ``bounds`` and number of quantiles only (it used to be a refusal when
    ``m (n + 1)`` exceeded the budget, i.e. a refusal that depended on the private ``n``).
    """
    cells = _JOINT_EXP_CELLS // m - 2
    if cells < _JOINT_EXP_MIN_GRID:
        raise InvalidParameterError(
            f"The 'q' parameter of quantiles with method='jointexp' may hold at most "
            f"{_JOINT_EXP_CELLS // (_JOINT_EXP_MIN_GRID + 2)} probabilities (its tables hold len(q) times a grid of at "
            f"least {_JOINT_EXP_MIN_GRID} cells, within {16 * _JOINT_EXP_CELLS / 2**30:.1f} GiB). Got {m} instead; "
            "use method='tree' for this many."
        )
    return cells


def distinct_and_ties(x: np.ndarray) -> np.ndarray:
    """``[D, n - D]``, ``D`` the distinct values of ``x``: adding or removing a record moves exactly one by one."""
    distinct = float(np.unique(x).size)
    return np.array([distinct, x.size - distinct])


def _default_quantiles(owner: str, data, q: np.ndarray, level: float) -> QuantileRelease:
    """The ``"auto"`` method: JointExp or the tree, chosen from the noisy numbers of distinct values and ties (see
    the module docstring); ``data.left`` becomes what is left after the choice."""
    choice, rest = split(data.guarantee("add-remove"), [CHOICE_SHARE, 1.0 - CHOICE_SHARE])
    noisy = np.round(laplace_mechanism(distinct_and_ties(data.x), 1.0, choice.epsilon, data.rng, integer_valued=True))
    size = max(float(noisy.sum()), 1.0)
    joint = noisy[1] <= TIES_LIMIT * size and JOINT_MIN_SIZE <= size * data.epsilon and size <= JOINT_LIMIT
    chosen = {"distinct": int(noisy[0]), "ties": int(noisy[1]), "epsilon": choice.epsilon,
              "method": "jointexp" if joint else "tree"}
    data.left = rest.epsilon
    if joint:
        return _joint_quantiles(data, q, level, DEFAULT_INTERVAL_SHARE, before=(choice,), choice=chosen)
    # data with ties: LATTICE_SHARE of the rest releases the units the values are heaped on (central._lattice)
    heaps, rest = split(data.guarantee("add-remove"), [LATTICE_SHARE, 1.0 - LATTICE_SHARE])
    lattice = release_lattice(data.x, data.bounds, heaps.epsilon, data.rng)
    data.left = rest.epsilon
    tree = grow_checked(TreeHistogram, owner, data, before=(choice, heaps), choice=chosen,
                        heaped=bool(noisy[1] > TIES_LIMIT * size))  # a finer tree (tree.leaf_floor)
    return _tree_quantiles(tree, q, level, lattice=lattice)


def _joint_quantiles(data, q: np.ndarray, level: float, share: float | None = None, before: tuple = (),
                     choice: dict | None = None) -> QuantileRelease:
    cells = joint_exp_grid(data.bounds, q.size)
    point_budget, interval_budget = _budget(data, share)
    # each record is mapped to its cell of the public grid (a per-record map: neighbours stay neighbours, and
    # JointExp on the cells is epsilon-DP); at most `cells` distinct values remain, whatever the private n
    sorted_cells = np.sort(to_cells(data.x, data.bounds, cells))
    points, tables = joint_exp(sorted_cells, cells, q, point_budget.epsilon, data.rng)
    values = cell_points(points, data.bounds, cells)
    details = {
        "sensitivity": tables.sensitivity,
        "beta": tables.beta,
        "sampler": "exact: the dynamic program's weights with certified error bounds, certified Gumbel races "
        "(central.joint_exp)",
        "rank_error_bound": {
            "probability": level,
            "ranks": "max_j |rank_j - n q_j| <= -u <= -OPT + (m ln(G + 1) + ln(1 / (1 - level))) / beta, G the grid's "
            "cells (the tuples' base measure totals (G + 1)^m / m!, the best tuple's is at least 1 / m!); OPT, the "
            "best utility, is about -m on distinct values and far lower with ties (the tie floor)",
        },
        "grid_cells": cells,
        "secure": data.secure,
        **({"choice": choice} if choice is not None else {}),
    }
    spread = math.log(2 / (1 - level)) / tables.beta  # a gap's typical miss, 1/beta per e-fold
    return _release(data, q, level, "jointexp", (sorted_cells, cells, points), values, [point_budget], interval_budget,
                    spread, details, before)


def _budget(data, share: float | None) -> tuple[PrivacyGuarantee, PrivacyGuarantee | None]:
    """The quantiles' part of the budget and the intervals' (``None``: no intervals)."""
    total = data.guarantee("add-remove")
    if share is None:
        return total, None
    point, intervals = split(total, [1 - share, share])
    return point, intervals


def _release(data, q: np.ndarray, level: float, method: str, grid: tuple, values: np.ndarray, point_steps: list,
             interval_budget: PrivacyGuarantee | None, spread: float, details: dict, before: tuple = ()) -> QuantileRelease:
    """The :class:`QuantileRelease`, with the intervals of :mod:`._quantile_intervals` when they have a budget.

    ``grid`` is ``(sorted cells, grid cells, released points)``; ``spread`` the point release's typical miss in
    ranks (it places the brackets, :func:`~._quantile_intervals.bracket_offsets`); ``before`` the steps already spent
    on the same data (the default's choice), stated with the release's own.
    """
    low = high = None
    steps = [*before, *point_steps]
    if interval_budget is not None:
        sorted_cells, cells, points = grid
        brackets, counts = split(interval_budget, split_interval_budget(q, level, interval_budget.epsilon, spread))
        steps += [brackets, counts]
        found = bracket_intervals(sorted_cells, cells, points, q, level, brackets.epsilon, counts.epsilon, spread,
                                  data.rng)
        low, high = cell_points(found.low, data.bounds, cells), cell_points(found.high, data.bounds, cells)
        details = {**details, "intervals": (
            "brackets released beside each quantile, certified below or above it by noisy counts "
            "(central._quantile_intervals); they cover the data's empirical quantile"),
            "interval_budget": {"quantiles": sum(step.epsilon for step in point_steps),
                                "brackets": brackets.epsilon, "counts": counts.epsilon},
            "brackets": {"lower": json_value(cell_points(found.lower_brackets, data.bounds, cells)),
                         "upper": json_value(cell_points(found.upper_brackets, data.bounds, cells)),
                         "reserves": json_value(cell_points(found.reserves, data.bounds, cells)),
                         "noisy_counts": json_value(found.noisy_counts)}}
    spent = data.stated(sequential(steps))
    details = {**details, "bounds": list(data.bounds)}
    return QuantileRelease(q, values, low, high, level, method, spent.epsilon, data.details(**details), spent)


def _slice_quantiles(data, q: np.ndarray, level: float) -> QuantileRelease:
    plan = slice_plan(data.x.size, q, data.epsilon, data.delta)
    cells = np.sort(to_cells(data.x, data.bounds))
    values = cell_points(slice_quantile_points(cells, plan, data.rng), data.bounds)
    error = plan.rank_error_bound(1 - level)
    details = {
        "half_width": plan.half_width,
        "noise_bound": plan.noise_bound,
        "branching": plan.tree.k,
        "tree_height": plan.tree.height,
        "budget": {"step": plan.epsilon_step, "counting": plan.epsilon_counting,
                   "exponential": plan.epsilon_exponential, "ramp": plan.ramp, "delta_step": plan.delta_step},
        "grid_cells": GRID_CELLS,
        "sampler": "exact: discrete Laplace tree noise, exponential mechanism on the public grid with certified "
        "Gumbel-max (central.slice_quantiles)",
        "rank_error_bound": {"probability": level, "ranks": error,
                             "applies": bool(plan.exponential_error(1 - level) <= plan.half_width)},
        "secure": data.secure,
        "bounds": list(data.bounds),
    }
    stated = data.stated(plan.guarantee)
    return QuantileRelease(q, values, None, None, level, "slice", stated.epsilon, data.details(**details), stated)


def _tree_quantiles(tree: TreeHistogram, q: np.ndarray, level: float, se: np.ndarray | None = None,
                    lattice: Lattice | None = None) -> QuantileRelease:
    """Quantiles and intervals read off one tree; ``se`` is its :meth:`~TreeHistogram.cdf_standard_error` if known,
    ``lattice`` the data's heap lattice released beside it (the quantiles read on it: :mod:`._lattice`)."""
    distribution = tree.to_distribution()
    edges, cdf = tree.leaf_cdf()  # the band holds at the leaf edges
    z = normal_quantile(level)
    se = tree.cdf_standard_error() if se is None else se
    upper_band = np.maximum.accumulate(np.clip(cdf + z * se, 0, 1))
    lower_band = np.maximum.accumulate(np.clip(cdf - z * se, 0, 1))
    values = distribution.quantile(q)
    if lattice is not None:
        step = (tree.public_bounds[1] - tree.public_bounds[0]) * 2.0**-_GRID_BITS  # the grid of _snap
        values = lattice_quantiles(*tree.cells(), q, values, lattice, step)
        distribution = replace(distribution, details={**distribution.details, "lattice": lattice.details()})
    values = _snap(values, tree.public_bounds)
    # the data may sit anywhere inside a leaf (or beyond a zoomed tree): the interval runs to the edges of the
    # crossing leaves (or to the bounds asked for)
    low = _snap(_crossing_leaf(edges, upper_band, q, side="left"), tree.public_bounds)
    high = _snap(_crossing_leaf(edges, lower_band, q, side="right"), tree.public_bounds)
    details = {**distribution.details, "bounds": list(tree.public_bounds), "z": z, "intervals": (
        "the pointwise band of the release's noise (z standard errors of its CDF) inverted, to the edges of the "
        "leaves where it crosses q")}
    return QuantileRelease(
        q, values, np.minimum(low, values), np.maximum(high, values), level, "tree", tree.epsilon, details,
        tree.guarantee,
    )


def _crossing_leaf(edges: np.ndarray, band: np.ndarray, q: np.ndarray, *, side: str) -> np.ndarray:
    """Left or right edge of the leaf in which the non-decreasing ``band`` first reaches each ``q``."""
    first = np.searchsorted(band, q, side="left")  # first edge index with band >= q
    first = np.clip(first, 1, edges.size - 1)
    return edges[first - 1] if side == "left" else edges[first]


def _approximate_quantiles(data, q: np.ndarray, level: float, share: float | None = None) -> QuantileRelease:
    levels = math.ceil(math.log2(q.size + 1))
    point_budget, interval_budget = _budget(data, share)
    # one release per level of the recursion, in sequence; within a level the intervals are
    # disjoint, so the releases of one level compose in parallel (value-dependent parts: add/remove)
    per_level = split(point_budget, levels)
    epsilon_each = per_level[0].epsilon
    points = np.empty(q.size, dtype=np.int64)
    cells = np.sort(to_cells(data.x, data.bounds))

    def recurse(inside: np.ndarray, lo: int, hi: int, targets: np.ndarray, positions: np.ndarray) -> None:
        if targets.size == 0:
            return
        middle = targets.size // 2
        target = targets[middle]
        point = exponential_quantile(inside, lo, hi, float(target), epsilon_each, data.rng)
        points[positions[middle]] = point
        below = int(np.searchsorted(inside, point, side="left"))  # cells < point: the records below it
        recurse(inside[:below], lo, point, targets[:middle] / target, positions[:middle])
        recurse(inside[below:], point, hi, (targets[middle + 1 :] - target) / (1 - target), positions[middle + 1 :])

    recurse(cells, 0, GRID_CELLS, q, np.arange(q.size))
    values = cell_points(points, data.bounds)
    # Smith's EM: Pr[|rank - qk| > OPT + (2/eps')(ln(G + 1) + t)] <= e^-t on a grid of G + 1 points
    details = {
        "levels": levels,
        "epsilon_per_release": epsilon_each,
        "grid_cells": GRID_CELLS,
        "sampler": "exact: exponential mechanism on the public grid, certified Gumbel-max (central._exact_choice)",
        "rank_error_bound": {
            "probability": level,
            "ranks": "2/eps' * (ln(grid points) + ln(1 / (1 - level))) per release beyond its best rank (OPT: 1/2 on "
            "distinct values, up to an atom's size with ties), added over the levels (a release's whole miss moves "
            "its halves' targets)",
        },
        "budget": {"per_level": epsilon_each, "levels": levels},
        "secure": data.secure,
    }
    # a release's typical miss (2/eps' per e-fold), its ancestors' added in quadrature
    spread = math.sqrt(levels) * 2 / epsilon_each * math.log(2 / (1 - level))
    return _release(data, q, level, "aq", (cells, GRID_CELLS, points), values, per_level, interval_budget, spread,
                    details)


@validate_params({"beta": Interval(1.0, 2.0, closed="right"), "lower": Described(Interval(), "a finite number")})
def unbounded_quantile(
    x: ArrayLike, epsilon: float, q: float = 0.5, *, lower: float = 0.0, beta: float = 1.001, rng: Seed = None,
    secure: bool = False, missing: str | float = "refuse", privacy_id: ArrayLike | None = None,
    max_contributions: int | str | None = None,
) -> float:
    r"""One quantile with no upper bound (Durfee 2023; see the module docstring).

    Parameters
    ----------
    x : array_like of float
        The data, any reals, possibly none: values below ``lower`` (``-inf`` included) count as
        below every candidate, ``+inf`` as above every one.
    epsilon : float
    q : float
        Probability in (0, 1).
    lower : float
        Where the geometric candidates start (0 for non-negative data).
    beta : float
        Growth factor of the candidates, > 1 (Durfee uses 1.001: the answer is
        within a factor :math:`\beta` of a point of the right rank).
    missing : {"refuse", "drop"} or float
        Missing values (NaN, None) in ``x``: refused with their count (the default), left out
        (``"drop"``; add/remove neighbours) or each counted as the number given (:mod:`dpdist._missing`;
        the answer is a number: the policy is the caller's to state).
    privacy_id, max_contributions
        Whose row each value is and the rows kept per person: the answer is then epsilon-DP per person
        (:mod:`dpdist.central._contributions`; the answer is a number: the unit is the caller's to state).
    """
    owner = "unbounded_quantile"
    probability = float(check_q(owner, q)[0])
    lower, beta = float(lower), float(beta)
    # no bounds (nothing is clipped: -inf lies below every candidate, +inf above)
    data = check_central_input(owner, x, epsilon=epsilon, bounds=None, rng=rng, secure=secure, missing=missing,
                               neighbouring="add-remove", privacy_id=privacy_id, max_contributions=max_contributions,
                               bounded=False)
    ordered = np.sort(data.x)
    threshold_share, counts_share = split(data.guarantee("add-remove"), 2)  # AboveThreshold: noisy threshold, noisy counts
    # candidates up to the largest double: i <= log(max float) / log(beta)
    last = int(math.log(np.finfo(np.float64).max / 4) / math.log(beta))
    block = 4096

    def queries():  # f_i = #{x < c_i} - q n, block by block; sensitivity 1 (add/remove and replacement)
        for start in range(0, last, block):
            indices = np.arange(start, min(start + block, last))
            candidates = lower + np.expm1(indices * math.log(beta))
            yield np.searchsorted(ordered, candidates, side="left").astype(np.float64) - probability * ordered.size

    hit = above_threshold(queries(), 1.0, threshold_share.epsilon, counts_share.epsilon, data.rng)
    if hit is not None:
        return float(lower + np.expm1(hit * math.log(beta)))
    return float(lower + np.expm1(last * math.log(beta)))
