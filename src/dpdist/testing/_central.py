"""Central releases per person, checked: one person's many rows reach the mechanism as at most ``max_contributions``.

A central release that takes ``privacy_id`` and ``max_contributions`` (every release of :mod:`dpdist.central` does)
claims epsilon-DP per person: neighbouring tables differ in all of one person's rows, however many.  Two checks:

* :func:`check_release_bounds_persons` (any such release, as a black box): a person of many rows, all at one value
  near the top of the range, among persons of one row each.  At a large epsilon (the mechanism's noise far below the
  differences read), the release with the person's 24 rows must read as it does with ``k`` of them, and not as with
  24 persons of one row there: the person reaches the mechanism as ``k`` rows, whatever their number.  A release that
  bounds rows rather than persons (every row its own person, a cap on the table's rows) gives the output of all 24.
  Its statement must be per person, at the epsilon given.
* :func:`check_median_per_person_exactly`: the exact law of dpdist's exponential-mechanism median
  (``quantiles(method="aq", q=[0.5])``) with and without the person (six distinct rows among eight persons of one
  row), point by point on the grid: a mixture over every bounding the release's own bounding
  (``central._common.bounded_rows``, called with each of the 720 permutations its uniform draw can return, each
  equally likely) makes, at the per-row epsilon the release reports.  Its worst log-ratio must be at most epsilon
  per person (0.27 of 1 at k = 1).  Bounding rows instead of persons keeps all six rows: at k = 1 the worst log-ratio
  is then 1.52 (at larger k the six rows at epsilon/k can stay within epsilon: the first check sees them).

Neither check draws anything from the CSPRNG that it does not seed; both need NumPy only.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any, Callable, cast

import numpy as np

from ..central import _common, quantiles
from ..central._grid_quantile import to_cells
from ..central.noise import _dyadic_epsilon
from ..errors import ContributionBoundWarning
from ..estimates import Distribution, QuantileRelease

__all__ = ["check_release_bounds_persons", "check_median_per_person_exactly"]

#: the person's rows in the black-box check, all at one value; the persons of one row each beside them
PERSON_ROWS, BACKGROUND, TOP = 24, 30, 0.95


def _reading(result: Any, points: np.ndarray) -> np.ndarray:
    """What the check compares of a result: quantiles as the number of ``points`` below each (where they fall among
    the data, not where inside a gap the mechanism drew them), a distribution as its CDF between the points, a count."""
    if isinstance(result, (QuantileRelease, float, np.floating)):  # quantiles, or one quantile as a number
        values = np.atleast_1d(np.asarray(getattr(result, "values", result), dtype=float))
        return np.searchsorted(points, values) / points.size
    if hasattr(result, "to_distribution"):
        result = result.to_distribution()
    if isinstance(result, Distribution):
        return np.asarray(result.cdf((points[:-1] + points[1:]) / 2), dtype=float)
    if hasattr(result, "count"):
        return np.array([float(result.count)])
    raise AssertionError(f"the check reads distributions, quantiles and counts, not a {type(result).__name__}")


def _quiet(call: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ContributionBoundWarning)
        return call()


def check_release_bounds_persons(release: Callable[..., Any], *, max_contributions: int = 2, epsilon: float = 1.0,
                                 large_epsilon: float = 600.0, tolerance: float = 0.05) -> None:
    r"""One person's rows reach ``release`` as at most ``max_contributions`` rows, and its statement is per person.

    Parameters
    ----------
    release : callable
        ``release(x, epsilon, privacy_id=ids, max_contributions=k)`` returning a result of :mod:`dpdist.central` (a
        distribution, quantiles, a tree or polynomial release, a count) on values in [0, 1]; its seed, if any, its
        own (``lambda x, e, **unit: central.cdf(x, e, (0, 1), rng=1, **unit)``).
    max_contributions : int
        :math:`k` (at least 1, below 24).
    epsilon : float
        The epsilon per person whose statement is checked.
    large_epsilon : float
        The epsilon per person of the read-out: the noise must be far below ``tolerance`` there.  At 600 the releases
        that spend a delta can still divide it over ``k`` rows (:math:`\delta/e^{(k-1)600/k}` stays a float).
    tolerance : float
        Readings closer than this are the same (a CDF between the data's values; quantiles as the share of the values
        below them); the readings with ``k`` rows at the top and with 24 rows of 24 persons there must be more than
        four times further apart.

    Raises
    ------
    AssertionError
        The statement is not per person at ``epsilon``, the person's rows beyond ``k`` move the output, or this
        release cannot tell ``k`` rows from ``k + 1`` on this instance (the check would then prove nothing).
    """
    k = int(max_contributions)
    background = (np.arange(BACKGROUND) + 0.5) / BACKGROUND * 0.6
    stated = _quiet(lambda: release(background, epsilon, privacy_id=np.arange(BACKGROUND), max_contributions=k))
    guarantee = getattr(stated, "guarantee", None)
    if guarantee is None:  # a bare number (unbounded_quantile): nothing stated to check
        assert isinstance(stated, (float, np.floating)), f"a {type(stated).__name__} without a guarantee"
    else:
        assert guarantee.unit == "person", f"the guarantee is not per person: {guarantee}"
        assert math.isclose(guarantee.epsilon, epsilon, rel_tol=1e-9), \
            f"the guarantee per person is {guarantee.epsilon}, not the epsilon given ({epsilon})"

    points = np.append(background, TOP)

    def with_rows(rows: int, persons: int) -> np.ndarray:
        """The reading with ``rows`` rows at the top, of ``persons`` persons (one holds the rows left over)."""
        x = np.concatenate([background, np.full(rows, TOP)])
        ids = np.concatenate([np.arange(BACKGROUND), BACKGROUND + np.minimum(np.arange(rows), persons - 1)])
        return _reading(_quiet(lambda: release(x, large_epsilon, privacy_id=ids, max_contributions=k)), points)

    person, within, beyond = with_rows(PERSON_ROWS, 1), with_rows(k, 1), with_rows(PERSON_ROWS, PERSON_ROWS)
    assert np.max(np.abs(within - beyond)) > 4 * tolerance, (
        f"this release reads nearly the same with {k} and {PERSON_ROWS} rows at the top at epsilon {large_epsilon} "
        f"({np.max(np.abs(within - beyond)):.3g} apart): the check cannot tell whether it bounds persons")
    assert np.max(np.abs(person - within)) <= tolerance, (
        f"a person of {PERSON_ROWS} rows moves the release beyond what {k} of their rows do (by "
        f"{np.max(np.abs(person - within)):.3g}; {PERSON_ROWS} persons of a row against {k}: "
        f"{np.max(np.abs(within - beyond)):.3g}): the release does not bound each person's rows")


class _Permutation:
    """A generator whose ``permutation`` returns one given permutation (the bounding's one draw, enumerated)."""

    def __init__(self, order: tuple[int, ...]):
        self.order = np.array(order, dtype=np.int64)

    def permutation(self, n: int) -> np.ndarray:
        assert n == self.order.size, f"the bounding permuted {n} rows, not the person's {self.order.size}"
        return self.order.copy()


def _kept_laws(values: np.ndarray, ids: np.ndarray, k: int, person: int) -> dict[tuple[float, ...], float]:
    """Each multiset of the person's rows the release's bounding keeps, with its probability: the bounding called with
    every permutation of the rows it permutes (its draw is a uniform permutation: each equally likely)."""
    heavy = int(np.count_nonzero(ids == person))
    orders = list(itertools.permutations(range(heavy)))
    laws: dict[tuple[float, ...], float] = {}
    for order in orders:
        # the bounding every release runs, looked up when called (a mutant of it is what this check must catch)
        # _Permutation stands in for the one method of a Generator the bounding calls (permutation)
        kept = _common.bounded_rows(ids, k, cast(np.random.Generator, _Permutation(order)))
        chosen = tuple(sorted(values[kept][ids[kept] == person].tolist()))
        laws[chosen] = laws.get(chosen, 0.0) + 1.0 / len(orders)
    return laws


def _median_log_law(datasets: list[np.ndarray], weights: list[float], epsilon: float,
                    boundaries: np.ndarray) -> np.ndarray:
    """log P(point) for one point of each segment between ``boundaries`` under the exponential mechanism for the
    median that ``quantiles(method="aq", q=[0.5])`` runs (the 2**32 grid's cells, utility -|#{cell < point} - K/2|,
    weight exp(-epsilon' u / 2), epsilon' rounded down to a dyadic rational), the data drawn among ``datasets``
    (sorted cells) with ``weights``."""
    gamma = float(_dyadic_epsilon(epsilon)) / 2
    starts, lengths = boundaries[:-1], np.diff(boundaries)
    laws = []
    for cells, weight in zip(datasets, weights):
        score = -gamma * np.abs(np.searchsorted(cells, starts, side="left") - 0.5 * cells.size)
        laws.append(score - np.logaddexp.reduce(score + np.log(lengths)) + math.log(weight))
    return np.logaddexp.reduce(np.array(laws), axis=0)


def check_median_per_person_exactly(*, max_contributions: int = 2, epsilon: float = 1.0) -> float:
    """The median of ``quantiles(method="aq")`` per person is epsilon-DP for adding or removing one person, exactly.

    Eight persons of one row in [0.05, 0.45]; one person of six distinct rows in [0.55, 0.95].  The law of the
    released median with the person is the mixture, over each set of rows the release's bounding keeps (with its
    exact probability), of the exponential mechanism's law on those rows at the per-row epsilon the release reports;
    without the person, the law on the eight.  Both are computed exactly on every segment of the 2**32 grid.

    Parameters
    ----------
    max_contributions : int
        :math:`k`, from 1 to 6.
    epsilon : float
        The epsilon per person.

    Returns
    -------
    float
        The worst log-ratio of the two laws over the grid (at most ``epsilon``).

    Raises
    ------
    AssertionError
        The worst log-ratio is above ``epsilon`` (e.g. the bounding keeps more than ``k`` of the person's rows).
    """
    k = int(max_contributions)
    background = np.linspace(0.05, 0.45, 8)
    person = np.array([0.55, 0.6, 0.7, 0.8, 0.9, 0.95])
    values = np.concatenate([background, person])
    ids = np.concatenate([np.arange(8), np.full(6, 8)])
    release = _quiet(lambda: quantiles(values, [0.5], epsilon=epsilon, bounds=(0, 1), method="aq", rng=0,
                                       privacy_id=ids, max_contributions=k))
    assert release.details.get("levels") == 1, "the median is released by one exponential mechanism"
    each_row = float(release.details["epsilon_per_release"])
    cells = np.sort(to_cells(background, (0.0, 1.0)))
    laws = _kept_laws(values, ids, k, 8)
    datasets = [np.sort(np.concatenate([cells, to_cells(np.array(chosen, dtype=float), (0.0, 1.0))]))
                for chosen in laws]
    boundaries = np.unique(np.concatenate([[0, 2**32 + 1], *(data + 1 for data in datasets), cells + 1]))
    worst = float(np.max(np.abs(_median_log_law(datasets, list(laws.values()), each_row, boundaries)
                                - _median_log_law([cells], [1.0], each_row, boundaries))))
    assert worst <= epsilon * (1 + 1e-12), (
        f"adding a person of 6 rows moves the median's law by a factor e^{worst:.4g}, above e^{epsilon} per person "
        f"(the bounding kept {max(len(chosen) for chosen in laws)} of their rows, at most {k} allowed)")
    return worst
