r"""Private group keys: each person in at most ``max_groups`` groups, and which groups a release may show.

A group-by whose keys are not public (the merchants a customer bought from, the words a user typed)
cannot release "every key that occurs": a key held by one person tells that person's presence.  Two
steps make it private (the construction of PipelineDP and of Google's differential-privacy libraries):

1. **Cross-group bounding** (:func:`bounded_groups`).  Each person keeps the rows of at most :math:`m` =
   ``max_groups`` of their groups: those they hold most rows of, ties broken uniformly at random (a sort of the
   distinct (person, group) pairs by person, rows and a random key: no loop over persons).  The choice reads the
   person's own rows only, so adding or removing a person changes at most :math:`m` groups; it keeps more of the
   rows than a uniform choice does.
2. **Partition selection** (:func:`selected_groups`): the *truncated geometric* thresholding of
   Desfontaines, Voss, Gipson & Mandayam ("Differentially private partition selection", PoPETs 2022,
   Thm. 1; PipelineDP's and PyDP's default, ``TRUNCATED_GEOMETRIC``).  A group of :math:`n` distinct persons
   is kept with probability :math:`\pi(n)`, independently of the others, where :math:`\pi(0) = 0` and

   .. math::

       \pi(n) = \min\bigl(e^{\varepsilon'}\pi(n-1) + \delta',\ 1 - e^{-\varepsilon'}(1 - \pi(n-1) - \delta'),\ 1\bigr),

   the largest keep probabilities for which adding one person to one group is
   :math:`(\varepsilon', \delta')`-indistinguishable (a group absent from a data set is never kept:
   :math:`\pi(1) = \delta'`).  A person touches at most :math:`m` groups, each decided independently at
   :math:`(\varepsilon', \delta') = (\varepsilon/m, \delta/m)`, so the selection is :math:`(\varepsilon,
   \delta)`-DP per person (basic composition; the paper's sec. 5).

**Exact arithmetic.**  :func:`keep_probabilities` computes :math:`\hat\pi(n)` from :math:`\hat\pi(n-1)` by the
same two bounds with the true :math:`e^{\varepsilon'}` and :math:`\delta'`, each shrunk by a relative
:math:`2^{-45}` and an absolute :math:`2^{-50}` (far above the few roundings of a double) and rounded down to a
multiple of :math:`2^{-53}`: every :math:`\hat\pi` meets both inequalities exactly, and the draw, a uniform
53-bit integer below :math:`2^{53}\hat\pi(n)`, keeps a group with probability :math:`\hat\pi(n)` exactly.  So
:math:`\delta/m` must be at least :math:`2^{-40}` (a public refusal otherwise).  The recursion stops where
:math:`\hat\pi` reaches 1 (about :math:`2\ln(1/\delta')/\varepsilon'` persons).
"""

from __future__ import annotations

import functools
import inspect
import math
from typing import Callable

import numpy as np

from .._guarantee import PrivacyGuarantee, sequential
from .._validation import Interval, validate_params
from ..errors import InvalidParameterError, InvalidPrivacyParameterError
from ._selection import GAUSSIAN_METHODS, GaussianThresholding, bounded_pairs, person_key_pairs
from .many_quantiles import quantiles

__all__ = ["bounded_groups", "keep_probabilities", "selected_groups", "selection_guarantee", "grouped_guarantee",
           "refuse_replace_first", "replace_refused", "select_keys", "select_pairs", "default_selection",
           "selection_reason", "selection_rule", "MIN_DELTA_PER_GROUP", "SELECTION_RULE", "SELECTIONS"]

#: the smallest delta per group (delta / max_groups) the exact keep probabilities take
MIN_DELTA_PER_GROUP = 2.0**-40
#: what a release states about the rule it selected its groups by
SELECTION_RULE = ("truncated geometric thresholding of the number of distinct persons per group (Desfontaines, Voss, "
                  "Gipson & Mandayam, PoPETs 2022, Thm. 1), at (epsilon/max_groups, delta/max_groups) per group")
_SCALE = 2.0**53
#: the ways of choosing private keys: truncated geometric thresholding (here) and the Gaussian thresholdings of
#: :mod:`dpdist.central._selection`
SELECTIONS = ("truncated_geometric", *GAUSSIAN_METHODS)
#: what a release states about each rule
_RULES = {
    "truncated_geometric": SELECTION_RULE,
    "gaussian": ("Gaussian thresholding of the number of distinct persons per key over sqrt(max_groups) (Gopi et al., "
                 "ICML 2020; PipelineDP's GAUSSIAN_THRESHOLDING), one Gaussian budget over all keys"),
    "weighted_gaussian": ("the weighted Gaussian mechanism: each person adds 1/sqrt(d) to each of their d <= max_groups "
                          "keys, Gaussian noise, a threshold (Gopi et al., ICML 2020, Thm. 5.1)"),
    "adaptive": ("two rounds of the weighted Gaussian mechanism; in the second each person's weight goes to their keys "
                 "the first did not show (adaptive weighting, after MAD2R of Chen et al., ICML 2025)"),
}


def default_selection(max_groups: int) -> str:
    """The selection a group-by with ``max_groups`` uses unless told: truncated geometric thresholding for one key per
    person (optimal there), the two-round weighted Gaussian for more (``benchmarks/bench_many_keys.py``)."""
    return selection_reason(max_groups, None)[0]


def selection_reason(max_groups: int, given: str | None) -> tuple[str, str]:
    """The selection a group-by uses (``given``, or :func:`default_selection`) and why, for a plan's text."""
    if given is not None:
        return given, "as asked"
    if max_groups == 1:
        return "truncated_geometric", ("the default with one key per person: thresholding each key's noisy number of "
                                       "persons, optimal there")
    return "adaptive", (f"the default beyond one key per person (max_groups {max_groups}): one Gaussian budget over all "
                        "the keys, a person's weight moved in a second round from the keys the first showed to the "
                        "others; it showed the most keys on the synthetic table it was chosen on, and more than "
                        "PipelineDP's strategies on a real one (benchmarks/bench_many_keys.py)")


def selection_rule(method: str) -> str:
    """What a release states about the rule it selected its keys by."""
    return _RULES[method]


def select_keys(persons: np.ndarray, keys: np.ndarray, method: str, epsilon: float, delta: float, max_groups: int,
                rng: np.random.Generator) -> np.ndarray:
    """The keys shown (sorted codes) by ``method`` at ``(epsilon, delta)`` per person of the rows' (person, key)
    pairs, each person counted in at most ``max_groups`` keys: those they hold most rows of, ties at random."""
    return select_pairs(person_key_pairs(persons, keys), method, epsilon, delta, max_groups, rng)


def select_pairs(pairs: np.ndarray, method: str, epsilon: float, delta: float, max_groups: int,
                 rng: np.random.Generator) -> np.ndarray:
    """:func:`select_keys` of the distinct ``(person, key, rows)`` pairs
    (:func:`~dpdist.central._selection.person_key_pairs`: sorted by person then key)."""
    if method != "truncated_geometric":
        return GaussianThresholding.of(method, epsilon, delta, max_groups).select_pairs(pairs, rng)
    kept = pairs[bounded_pairs(pairs, max_groups, rng)]
    return selected_groups(kept[:, 0], kept[:, 1], epsilon, delta, max_groups, rng)


def check_selection(owner: str, epsilon, delta, max_groups: int) -> tuple[float, float]:
    """``(epsilon, delta)`` of a selection, checked (public arguments: refused by name)."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not 0 < epsilon < math.inf:
        raise InvalidPrivacyParameterError(f"The 'selection_epsilon' parameter of {owner} must be a finite float > 0 "
                                           f"(the budget of choosing the groups privately). Got {epsilon!r} instead.")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not 0 < delta < 1:
        raise InvalidPrivacyParameterError(f"The 'selection_delta' parameter of {owner} must be a float in (0, 1): a "
                                           f"group held by one person is kept with probability delta. Got {delta!r}.")
    if delta / max_groups < MIN_DELTA_PER_GROUP:
        raise InvalidPrivacyParameterError(
            f"The 'selection_delta' parameter of {owner} over 'max_groups' must be at least 2**-40 (the exact keep "
            f"probabilities' resolution). Got selection_delta={delta!r} with max_groups={max_groups}.")
    return float(epsilon), float(delta)


def keep_probabilities(largest: int, epsilon: float, delta: float) -> np.ndarray:
    r""":math:`\hat\pi(0), \dots, \hat\pi(\text{largest})` of one group at ``(epsilon, delta)`` (the module docstring):
    multiples of :math:`2^{-53}`, each within both bounds of the recursion exactly; 1 from the first :math:`n` with
    :math:`1 - \hat\pi(n-1) \le \delta` (then both bounds allow it)."""
    growth, shrink = math.exp(epsilon), math.exp(-epsilon)
    values = [0.0]
    while len(values) <= largest and values[-1] < 1.0:
        before = values[-1]
        if 1.0 - before <= delta * (1 - 2.0**-40):  # 1 - pi(n-1) <= delta: pi(n) = 1 meets both bounds
            values.append(1.0)
            continue
        bound = min(growth * before + delta, 1.0 - shrink * (1.0 - before - delta))
        values.append(math.floor(max(0.0, bound * (1 - 2.0**-45) - 2.0**-50) * _SCALE) / _SCALE)
    table = np.ones(largest + 1)
    table[: len(values)] = values[: largest + 1]
    return table


def bounded_groups(persons: np.ndarray, groups: np.ndarray, max_groups: int, rng: np.random.Generator) -> np.ndarray:
    """The rows kept (ascending positions): each person's rows in at most ``max_groups`` of their groups, those they
    hold most rows of (ties broken uniformly at random: every choice among groups of as many rows equally likely)."""
    persons, groups = np.asarray(persons, dtype=np.int64), np.asarray(groups, dtype=np.int64)
    if persons.size == 0:
        return np.zeros(0, dtype=np.int64)
    pairs = person_key_pairs(persons, groups)
    kept = pairs[bounded_pairs(pairs, max_groups, rng)]
    owners, pair_of_row = _distinct_pairs(persons, groups)  # the rows' pairs, in the order of ``pairs``
    chosen = np.zeros(owners.size, dtype=bool)
    chosen[_positions(pairs, kept)] = True
    return np.flatnonzero(chosen[pair_of_row])


def _positions(pairs: np.ndarray, kept: np.ndarray) -> np.ndarray:
    """The positions in ``pairs`` (sorted by person then key) of the pairs ``kept``."""
    span = int(pairs[:, 1].max()) + 1
    return np.searchsorted(pairs[:, 0] * span + pairs[:, 1], kept[:, 0] * span + kept[:, 1])


def _distinct_pairs(persons: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The person of each distinct (person, group) pair in ascending order, and each row's pair: what
    ``np.unique(np.column_stack([persons, groups]), axis=0, return_inverse=True)`` gives, by one lexsort (2x faster on
    small inputs)."""
    order = np.lexsort((groups, persons))
    sorted_persons, sorted_groups = persons[order], groups[order]
    first = np.empty(order.size, dtype=bool)
    first[:1] = True
    np.logical_or(sorted_persons[1:] != sorted_persons[:-1], sorted_groups[1:] != sorted_groups[:-1], out=first[1:])
    pair_of_row = np.empty(order.size, dtype=np.int64)
    pair_of_row[order] = np.cumsum(first) - 1
    return sorted_persons[first], pair_of_row


def selected_groups(persons: np.ndarray, groups: np.ndarray, epsilon: float, delta: float, max_groups: int,
                    rng: np.random.Generator) -> np.ndarray:
    """The groups kept (sorted codes) among those of the rows (already bounded to ``max_groups`` per person), each
    with probability :math:`\\hat\\pi` of its number of distinct persons at ``(epsilon, delta) / max_groups``."""
    persons, groups = np.asarray(persons, dtype=np.int64), np.asarray(groups, dtype=np.int64)
    if groups.size == 0:
        return np.zeros(0, dtype=np.int64)
    pairs = np.unique(np.column_stack([persons, groups]), axis=0)
    present, distinct = np.unique(pairs[:, 1], return_counts=True)
    table = keep_probabilities(int(distinct.max()), epsilon / max_groups, delta / max_groups)
    thresholds = (table[distinct] * _SCALE).astype(np.uint64)  # exact: the table holds multiples of 2**-53
    draws = rng.integers(0, 2**53, size=present.size, dtype=np.uint64)
    return present[draws < thresholds]


@validate_params({"delta": Interval(0.0, 1.0, closed="neither")}, owner="a selection of groups")
def selection_guarantee(epsilon: float, delta: float, unit: str) -> PrivacyGuarantee:
    """What choosing the groups states: ``(epsilon, delta)`` under add/remove of one person (or record)."""
    return PrivacyGuarantee(epsilon, delta, "add-remove", "central", unit=unit)


def replace_refused(owner: str, got: str) -> InvalidParameterError:
    """The refusal of a release under replace neighbours in a group-by per person or with private keys (``got``: what
    was given, from its public arguments only: never a count of the data)."""
    return InvalidParameterError(
        f"{owner} per person or with private keys composes releases under add/remove neighbours (central.cdf, "
        "quantiles other than method='slice', tree_cdf, count, ...): a release under replace neighbours publishes "
        f"each group's number of records. Got {got}.")


def refuse_replace_first(owner: str, function: Callable, kwargs: dict) -> None:
    """A release under replace neighbours refused from its function and public arguments, before any data is read:
    ``central.quantiles(method="slice")`` (whose dry run reads the rows kept, public under replace, private here) and
    any release given or defaulting to ``neighbouring="replace"``.  Other replace releases are refused by their dry
    run on no records (:func:`grouped_guarantee`), which reads no data either: no refusal depends on a count of the data."""
    inner = function.func if isinstance(function, functools.partial) else function
    given = {**(function.keywords if isinstance(function, functools.partial) else {}), **kwargs}
    parameters = inspect.signature(inner).parameters
    if inner is quantiles and given.get("method", parameters["method"].default) == "slice":
        raise replace_refused(owner, "central.quantiles with method='slice' (replace neighbours, n public)")
    default = parameters["neighbouring"].default if "neighbouring" in parameters else None
    if given.get("neighbouring", default) == "replace":
        raise replace_refused(owner, f"{getattr(inner, '__qualname__', inner)} with neighbouring='replace'")


def grouped_guarantee(owner: str, each_group: PrivacyGuarantee, max_groups: int,
                      selection: tuple[float, float] | None) -> PrivacyGuarantee:
    """A group-by's guarantee per person (or record): the selection (private keys), then ``max_groups`` groups'
    releases, sequentially (a person touches at most ``max_groups`` groups).  Releases under add/remove only."""
    if each_group.neighbouring != "add-remove":
        raise replace_refused(owner, f"one stating {each_group.describe()}")
    steps = [each_group] * max_groups
    if selection is not None:
        steps = [selection_guarantee(*selection, each_group.unit), *steps]
    return sequential(steps)
