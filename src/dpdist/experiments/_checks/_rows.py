"""Rows and curves of a summary table as the checks read them, and the test of a ratio band."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .._claims import group_settings, linear_p_values, noncentrality, one_sample_p_values, standard_error
from .._table import ResultsTable


def select_metrics(table: ResultsTable, metric: str | tuple | list, where: Mapping[str, Any]) -> ResultsTable:
    """The rows of ``metric`` (one name, or several: each is then part of a setting) matching ``where``."""
    metrics = list(metric) if isinstance(metric, (list, tuple)) else [metric]
    return table.select(metric=metrics, **where)


def metric_name(metric: str | tuple | list) -> str:
    """``"ks"``, or ``"ks/w1/energy"`` for several metrics."""
    return "/".join(metric) if isinstance(metric, (list, tuple)) else str(metric)


def curves(table: ResultsTable, method: str, metric: str | tuple, x: str, where: Mapping[str, Any]) -> dict:
    """``{setting without x: [(x, row)] sorted by x}`` of one method, curves of at least two points
    (the setting keeps the metric, so several metrics give several curves)."""
    rows = select_metrics(table, metric, where).select(method=method)
    out = {}
    for setting, group in group_settings(rows, ("method", x)).items():
        points = sorted(((float(r[x]), r) for r in group if r.get(x) is not None), key=lambda item: item[0])
        if len(points) >= 2:
            out[setting] = points
    return out


def count(row: Mapping[str, Any]) -> float:
    """The repeats behind a row's mean (2 when unknown: the fewest that give a standard error)."""
    return row.get("count") or 2


def band_test(row: Mapping[str, Any], reference: Mapping[str, Any], low: float, high: float,
              effect: float) -> tuple[float, float, float, float, float]:
    r"""``(p_inside, p_outside, noncentrality, df, t)`` of "``row``'s mean / ``reference``'s is in [low, high]".

    Each finite end is a linear claim of two independent means, :math:`\bar e - low \cdot \bar r > 0`
    and :math:`high \cdot \bar r - \bar e > 0`, with Welch's t on Welch-Satterthwaite's degrees of
    freedom (:func:`~dpdist.experiments.linear_p_values`; the end ``low`` is tested when positive or
    when ``high`` is infinite).  "Inside" needs both ends (the larger p: intersection-union),
    "outside" either (the smaller p times the number of ends: Bonferroni).  The noncentrality is
    the weaker end's t if the ratio were ``effect`` (relative) beyond that end; ``df`` and ``t``
    are the weaker end's.

    A ``reference`` without spread is a computed constant (a bound on the expected error): each end is
    then a one-sample claim about the mean of ``row``'s repeats against ``factor`` times the constant,
    significant only when Student's t on the raw errors and the generalized test of a lognormal mean
    on the log errors agree (:func:`~dpdist.experiments.one_sample_p_values`: t on the raw values
    alone is not valid against a constant on skewed errors); the row must have log statistics (the
    callers check it with :func:`is_computed_constant`).
    """
    ends = []
    finite_high = math.isfinite(high)
    constant = is_computed_constant(reference)
    for factor, sign in ((low, 1.0), (high, -1.0)):
        if (sign > 0 and not (low > 0 or not finite_high)) or (sign < 0 and not finite_high):
            continue
        if constant and factor > 0:
            test = one_sample_p_values(row, factor * reference["mean"])
            if test is None:
                raise ValueError("a row compared with a computed constant needs its log statistics")
            t = sign * min(test.t_log, test.t_raw, key=lambda value: sign * value)  # the weaker scale's
            up, down = (test.p_above, test.p_below) if sign > 0 else (test.p_below, test.p_above)
            ends.append((t, test.df, up, down, test.noncentrality(effect)))
            continue
        terms = [(standard_error(row), count(row)), (factor * standard_error(reference), count(reference))]
        t, df, up, down = linear_p_values(sign * (row["mean"] - factor * reference["mean"]), terms)
        scale = math.sqrt(sum(se**2 for se, _ in terms)) if all(math.isfinite(se) for se, _ in terms) else math.inf
        ends.append((t, df, up, down, noncentrality(effect * max(factor, 1e-12) * reference["mean"], scale)))
    weakest = min(ends, key=lambda end: end[0])
    p_inside = max(end[2] for end in ends)
    p_outside = min(1.0, len(ends) * min(end[3] for end in ends))
    return p_inside, p_outside, min(end[4] for end in ends), weakest[1], weakest[0]


def band_effect(effect: float, low: float, high: float) -> float:
    """The effect a band claim is about: at most the way from an edge to the band's geometric centre."""
    if math.isfinite(high) and low > 0:
        return min(effect, math.sqrt(high / low) - 1)
    return effect


def is_computed_constant(row: Mapping[str, Any]) -> bool:
    """A summary row without spread over at least 2 repeats and with a positive mean: a computed
    constant (a bound), not a sampled error."""
    count = row.get("count")
    return (count is not None and count >= 2 and row.get("se") == 0 and (row.get("std") or 0) == 0
            and row["mean"] > 0)
