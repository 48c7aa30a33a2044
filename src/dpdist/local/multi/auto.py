r"""Choice of a multi-attribute protocol without spending budget: ``local.make("multi-auto", ...)``.

Given the public schema (``attributes``), the record-level ``epsilon``, the
expected number of reports ``n`` (``expected_reports``, default :data:`EXPECTED_REPORTS`)
and optionally a cap on the attribute-level guarantee (``attribute_epsilon``: the
loss for two records that differ in one attribute), ``multi-auto`` builds each
candidate (:data:`CANDIDATES`: ``spl``, ``smp``, ``rsfd``) at the largest budget that
meets both guarantees and ranks them by analytic variance:

* the score of a candidate is the mean over attributes of the mean per-item variance of
  its unbiased frequency estimates at uniform frequencies :math:`f_v = 1/d` (the
  "averaged MSE" of Arcolezi et al., CIKM 2021, sec. 5; uniform rather than :math:`f = 0`
  so that SMP's sampling variance, :math:`f(1-f)` per item, counts);
* a numerical attribute whose protocol has no analytic variance (``sw``, ``hh``, ...) is
  scored by a proxy, the variance of ``binning`` with the same number of bins (32 if the
  protocol has none) at the same budget and the same number of reports, and the
  explanation says so;
* the budgets: SPL gives each attribute :math:`\varepsilon/k` (its attribute-level loss),
  so under a cap :math:`\varepsilon_a` it runs at :math:`\min(\varepsilon, k\varepsilon_a)`;
  SMP's attribute-level loss is its budget, so :math:`\min(\varepsilon, \varepsilon_a)`;
  RS+FD runs at the largest budget :math:`\le \varepsilon` whose exact attribute-level loss
  (:mod:`.rsfd`) is :math:`\le \varepsilon_a` (bisection; the loss grows with the budget).
  RS+FD applies to categorical attributes only.

Without a cap, SMP's variance is below RS+FD's at every budget (the fake reports
only add noise at equal record-level budget), so RS+FD is chosen only when the
attribute-level guarantee matters.  Candidates within :data:`TIE` (2 %) of the lowest
score are equivalent; among them the smallest report wins.  The chosen protocol is an
ordinary instance (its config names it) with ``protocol.auto_choice`` holding the
reason and the whole ranking, copied into every estimate's ``details["auto_choice"]``.
"""

from __future__ import annotations

import math
from typing import Any, cast

import numpy as np

from ..._validation import EPSILON, Given, Integer, Interval, Optional, check_param, check_relations, unknown_names_error
from ...errors import DPDistError, InvalidParameterError
from .._registry import register_chooser, registered_class
from ._record import RecordProtocol
from ._sampling import inverse_count_mean
from ._schema import Attributes

__all__ = ["CANDIDATES", "EXPECTED_REPORTS", "TIE", "SUMMARY", "compare_multi_protocols", "choose_multi_protocol"]

SUMMARY = "the lowest-variance multi-attribute protocol (spl, smp, rsfd) for the schema, epsilon and n"
CANDIDATES = ("smp", "spl", "rsfd")
TIE = 0.02
EXPECTED_REPORTS = 10**6
_OWNER = "local.make('multi-auto')"
_PARAMETERS = {
    "epsilon": EPSILON,
    "attributes": Attributes(),
    "expected_reports": Optional(Integer(low=2)),
    "attribute_epsilon": Optional(Interval(0.0, math.inf, closed="neither", privacy=True)),
}

#: The parameters without a default.
_REQUIRED = tuple(Given(name, why=_PARAMETERS[name].describe()) for name in ("epsilon", "attributes"))

def _check(params: dict[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(params) - set(_PARAMETERS))
    if unknown:
        raise unknown_names_error(_OWNER, unknown, _PARAMETERS)
    check_relations(_OWNER, dict.fromkeys(params, True), _REQUIRED)  # named, whatever its value (its rule reads it)
    return {name: check_param(_OWNER, name, params.get(name), rule) for name, rule in _PARAMETERS.items()}


def _rsfd_budget(attributes, epsilon: float, cap: float | None) -> float:
    """The largest budget <= epsilon whose RS+FD attribute-level loss is <= cap."""
    if cap is None or _build("rsfd", epsilon=epsilon, attributes=attributes).attribute_guarantee.epsilon <= cap:
        return epsilon
    low, high = min(cap, epsilon), epsilon  # at budget cap the loss is at most cap (it never exceeds the budget)
    for _ in range(60):
        middle = 0.5 * (low + high)
        if _build("rsfd", epsilon=middle, attributes=attributes).attribute_guarantee.epsilon <= cap:
            low = middle
        else:
            high = middle
    return low


def _build(name: str, **params: Any) -> RecordProtocol:
    """The registered multi-attribute protocol ``name`` with ``params``."""
    return cast(RecordProtocol, cast(Any, registered_class(name))(**params))


def _budget(name: str, attributes, epsilon: float, cap: float | None) -> float:
    if cap is None:
        return epsilon
    if name == "spl":
        return min(epsilon, len(attributes) * cap)
    if name == "smp":
        return min(epsilon, cap)
    return _rsfd_budget(attributes, epsilon, cap)


def _proxy(inner, attribute) -> tuple[Any, str | None]:
    """The protocol whose variance scores a numerical attribute (itself, or a binning proxy)."""
    if hasattr(inner, "oracle") and hasattr(inner, "bins"):  # binning: its own variance
        return inner, None
    bins = getattr(inner, "bins", 32)
    proxy = cast(Any, registered_class("binning"))(epsilon=inner.epsilon, bins=bins, bounds=attribute.interval)
    return proxy, f"{attribute.name!r}: {inner.name} has no analytic variance; scored as binning with {bins} bins"


def _per_report_variance(protocol, index: int, n: int) -> tuple[float, str | None]:
    """Mean per-item variance of attribute ``index``'s estimate at uniform frequencies, and a note if a proxy."""
    attribute, inner = protocol.attributes[index], protocol.inner_protocols[index]
    if attribute.categorical:
        size = attribute.size
        return float(np.mean(protocol._categorical_variance(index, n, np.full(size, 1.0 / size)))), None
    scorer, note = _proxy(inner, attribute)
    size = scorer.bins
    uniform = np.full(size, 1.0 / size)
    if protocol.name == "spl":
        return float(np.mean(scorer.variance(n, uniform))), note
    m = inverse_count_mean(n, len(protocol.attributes))  # smp: the reports of the users who sampled it
    sampling = uniform * (1 - uniform)
    return float(np.mean(m * (scorer.variance(1, uniform) + sampling * n / (n - 1)) - sampling / (n - 1))), note


def _row(name: str, settings: dict[str, Any]) -> dict[str, Any]:
    attributes, epsilon, cap = settings["attributes"], settings["epsilon"], settings["attribute_epsilon"]
    n = settings["expected_reports"] or EXPECTED_REPORTS
    row: dict[str, Any] = {"protocol": name}
    try:
        budget = _budget(name, attributes, epsilon, cap)
        protocol = _build(name, epsilon=budget, attributes=attributes)
    except DPDistError as error:
        row.update(eligible=False, reason=f"not applicable: {error}")
        return row
    scores = [_per_report_variance(protocol, index, n) for index in range(len(protocol.attributes))]
    row.update(
        eligible=True,
        reason="",
        epsilon=protocol.epsilon,
        attribute_epsilon=protocol.attribute_guarantee.epsilon,
        variance=float(np.mean([score for score, _ in scores])),
        attribute_variances={a.name: score for a, (score, _) in zip(protocol.attributes, scores)},
        notes=[note for _, note in scores if note],
        report_bytes=protocol.report_format.row_bytes,
        protocol_object=protocol,
    )
    return row


def _rank(settings: dict[str, Any]) -> list[dict[str, Any]]:
    return [_row(name, settings) for name in CANDIDATES]


def _choose(rows: list[dict[str, Any]], n: int) -> tuple[str, str]:
    eligible = [row for row in rows if row["eligible"]]
    if not eligible:
        raise InvalidParameterError(
            f"{_OWNER} found no applicable protocol: " + "; ".join(f"{row['protocol']}: {row['reason']}" for row in rows)
        )
    best = min(row["variance"] for row in eligible)
    tied = [row for row in eligible if row["variance"] <= best * (1 + TIE)]
    chosen = min(tied, key=lambda row: (row["report_bytes"], CANDIDATES.index(row["protocol"])))
    others = ", ".join(
        f"{row['protocol']} {row['variance'] / chosen['variance']:.3g}x" for row in eligible if row is not chosen
    )
    reason = (
        f"{chosen['protocol']}: mean per-item variance {chosen['variance'] * n:.4g}/n at n = {n} "
        f"(record epsilon {chosen['epsilon']:.4g}, attribute epsilon {chosen['attribute_epsilon']:.4g})"
        + (f"; the others: {others}" if others else "")
    )
    if len(tied) > 1:
        reason += f"; within {TIE:.0%} of {', '.join(r['protocol'] for r in tied if r is not chosen)}, the smallest report"
    notes = sorted({note for row in eligible for note in row["notes"]})
    if notes:
        reason += "; " + "; ".join(notes)
    return chosen["protocol"], reason


def _public(rows):
    return [{key: value for key, value in row.items() if key != "protocol_object"} for row in rows]


def compare_multi_protocols(**params: Any) -> list[dict[str, Any]]:
    """The table ``multi-auto`` ranks: one row per candidate (``protocol``, ``eligible``, ``reason``, ``epsilon``,
    ``attribute_epsilon``, ``variance``, ``attribute_variances``, ``notes``, ``report_bytes``)."""
    return _public(_rank(_check(params)))


def choose_multi_protocol(**params: Any) -> str:
    """Registry name of the protocol ``local.make("multi-auto", **params)`` builds."""
    settings = _check(params)
    return _choose(_rank(settings), settings["expected_reports"] or EXPECTED_REPORTS)[0]


def make_choice(**params):
    """Build the chosen protocol and attach the explanation (``protocol.auto_choice``)."""
    settings = _check(params)
    n = settings["expected_reports"] or EXPECTED_REPORTS
    rows = _rank(settings)
    name, reason = _choose(rows, n)
    protocol = next(row["protocol_object"] for row in rows if row["protocol"] == name)
    protocol.auto_choice = {
        "chosen": name,
        "reason": reason,
        "expected_reports": n,
        "attribute_epsilon": settings["attribute_epsilon"],
        "candidates": _public(rows),
    }
    return protocol


register_chooser("multi-auto", make_choice)
