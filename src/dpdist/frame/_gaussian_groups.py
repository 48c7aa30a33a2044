"""A group-by's statistic as one Gaussian vector over its keys: :func:`dpdist.frame.group_release` with
``noise="gaussian"``.

``dpdist.central.count``, ``sum``, ``mean`` and ``histogram_queries`` released per group charge a person of
``max_groups`` groups ``epsilon / max_groups`` per group (Laplace noise on each).  With ``noise="gaussian"`` the
group-by releases the statistic of every group shown at once, with Gaussian noise calibrated to the l2 distance a
person moves the vector of the groups' values (:mod:`dpdist.central._grouped_gaussian`): ``epsilon`` and
``noise_delta`` are then the whole release's, per person, over all its groups.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .._missing import missing_mask, missing_policy
from .._validation import CENTRAL_EPSILON, Bounds, Described, Integer, Interval, check_param
from ..errors import InvalidParameterError
from .._guarantee import PrivacyGuarantee

__all__ = ["GaussianRequest", "gaussian_request", "gaussian_results", "NOISES"]

#: how a group-by's statistic is noised: per group (Laplace, each group's own release) or one Gaussian vector
NOISES = ("laplace", "gaussian")
#: the rows kept per person and group with noise="gaussian" (its sensitivity)
_ROWS = Described(Integer(low=1), "the rows kept per person and group, an int >= 1, with noise='gaussian' (a bound "
                  "chosen privately is not supported)")


@dataclass(frozen=True)
class GaussianRequest:
    """A release's public arguments, as the Gaussian vector runs them."""

    statistic: str  # "count", "sum", "mean" or "histogram"
    epsilon: float
    delta: float
    max_contributions: int
    bounds: tuple[float, float] | None
    bins: int | None
    level: float
    missing: Any

    def guarantee(self, unit: str) -> PrivacyGuarantee:
        return PrivacyGuarantee(self.epsilon, self.delta, "add-remove", "central", unit=unit)


def gaussian_request(owner: str, function: Callable, kwargs: dict, delta: Any, per_person: bool) -> GaussianRequest:
    """The Gaussian vector's arguments from the release ``function`` and its keyword arguments, checked (public
    arguments only: a refusal names the argument)."""
    from .. import central  # lazy: loads scipy (0.4-2 s)

    inner = function.func if isinstance(function, functools.partial) else function
    given = {**(function.keywords if isinstance(function, functools.partial) else {}), **kwargs}
    statistics = {central.count: "count", central.sum: "sum", central.mean: "mean",
                  central.histogram_queries: "histogram"}
    statistic = statistics.get(inner)
    if statistic is None:
        raise InvalidParameterError(f"The 'noise' argument of {owner} is 'gaussian' for central.count, central.sum, "
                                    f"central.mean and central.histogram_queries. Got {getattr(inner, '__qualname__', inner)}.")
    if statistic == "histogram" and given.get("neighbouring", "replace") != "add-remove":
        raise InvalidParameterError(f"{owner} with noise='gaussian' releases histograms under add/remove neighbours: "
                                    "pass neighbouring='add-remove' (the groups' sizes stay private).")
    delta = check_param(owner, "noise_delta", delta, Interval(0.0, 1.0, closed="neither"))
    k = check_param(owner, "max_contributions", given.get("max_contributions", None if per_person else 1), _ROWS)
    epsilon = check_param(owner, "epsilon", given.get("epsilon"), CENTRAL_EPSILON)
    level = check_param(owner, "level", given.get("level", 0.95), Interval(0.0, 1.0, closed="neither"))
    bounds = given.get("bounds")
    if statistic != "count":
        low, high = check_param(owner, "bounds", bounds, Bounds())
        bounds = (float(low), float(high))
    bins = given.get("bins")
    if statistic == "histogram":
        bins = check_param(owner, "bins", bins, Integer(low=1, high=2**16))
    return GaussianRequest(statistic, float(epsilon), float(delta), int(k), bounds if statistic != "count" else None,
                           bins, float(level), given.get("missing", "refuse"))


def gaussian_results(owner: str, request: GaussianRequest, values: np.ndarray, persons: np.ndarray,
                     codes: np.ndarray, chosen: list[int], max_groups: int, unit: str, column: str,
                     rng: np.random.Generator) -> tuple[list, dict]:
    """``(one release per chosen group, details)``: the Gaussian vector over the chosen groups' rows (``codes``:
    each row's group, -1 outside), each person bounded to ``max_groups`` of them (those of most rows)."""
    from ..central._grouped_gaussian import grouped_gaussian  # lazy: loads scipy (0.4-2 s)

    policy = missing_policy(owner, request.missing)
    rows = np.arange(values.size)
    if request.statistic != "count" or policy.how != "value":  # a count reads no value
        what = f"Column {column!r}"
        if policy.how == "drop":
            rows = policy.apply(rows, owner, what, mask=missing_mask(values), private=True)
        else:
            values = policy.apply(values, owner, what, private=True)
    index = np.full(int(max(codes.max(initial=-1), max(chosen, default=-1))) + 2, -1, dtype=np.int64)
    index[np.asarray(chosen, dtype=np.int64)] = np.arange(len(chosen))
    keys = index[codes[rows]]
    numeric = None if request.statistic == "count" else np.asarray(values[rows], dtype=float)
    release = grouped_gaussian(request.statistic, keys, persons[rows], numeric, len(chosen), epsilon=request.epsilon,
                               delta=request.delta, max_groups=max_groups, max_contributions=request.max_contributions,
                               bounds=request.bounds, bins=request.bins, level=request.level, rng=rng, unit=unit)
    return release.results, {"noise": "gaussian", **release.details}
