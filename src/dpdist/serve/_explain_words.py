"""What a campaign's epsilon buys, in plain words (docs/how-to/predict-accuracy.md, "In the collection service"): the sentences the pages show.

Built from the explain route's document (:func:`._explain.explain_json`, itself
:func:`dpdist.accuracy.explain` on the campaign's public config), so the dashboard
and the participate page say the same thing and a client can show it too:

1. at the campaign's own epsilon and n, how close the estimate is expected to be
   to the truth: the 95 % half-width of one answer's share (frequency), of the
   median (a distribution, with the expected KS distance of its CDF) or of the mean;
2. the trade: the same number at half and at twice the epsilon;
3. what epsilon protects: a report is at most :math:`e^\\varepsilon` times as likely
   under one value as under any other;
4. where the numbers come from (analytic or simulated, on which data shape): a
   prediction before any data, not this campaign's own interval.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["plain_words"]

_WHAT = {
    "frequency": "each answer's share of the population",
    "numerical": "the median",
    "mean": "the mean",
}


def _number(value: float) -> str:
    """Three significant digits, no exponent for everyday sizes."""
    return f"{value:.3g}" if 1e-4 <= abs(value) < 1e6 else f"{value:.2e}"


def _epsilon(value: float) -> str:
    return f"{value:g}"


def _half_width(prediction: dict[str, Any]) -> float | None:
    interval = prediction["errors"].get("interval")
    value = None if interval is None else interval.get("value")
    return value if value is not None and math.isfinite(value) else None


def _give_or_take(prediction: dict[str, Any]) -> str:
    """A simulated half-width's own spread (its standard error over the simulated collections), or ''."""
    interval = prediction["errors"].get("interval") or {}
    spread = interval.get("standard_error")
    if interval.get("source") != "simulation" or spread is None or not math.isfinite(spread) or spread <= 0:
        return ""
    return f" (give or take {_number(spread)}: a prediction from simulations)"


def _accuracy(document: dict[str, Any], own: dict[str, Any], half_width: float) -> str:
    n, kind = document["n"], document["kind"]
    unit = f" ({_number(100 * half_width)} percentage points)" if kind == "frequency" else " (in the data's units)"
    text = (f"With ε = {_epsilon(own['epsilon'])} and {n:,} reports, {_WHAT[kind]} is expected to be within "
            f"±{_number(half_width)}{unit} of the truth, 95 times in 100{_give_or_take(own)}")
    if kind == "frequency":  # the interval of the mean variance over the items (a common answer's is wider)
        text += " on average over the answers (a common answer's share varies a little more)"
    ks = own["errors"].get("ks", {}).get("value") if kind == "numerical" else None
    if ks is not None:
        text += (f"; the estimated share of people below a value is off by up to {_number(ks)} "
                 "(the largest error over all values, on average)")
    return text + "."


def _trade(document: dict[str, Any], own_epsilon: float) -> str | None:
    others = []
    for prediction in document["predictions"]:
        half_width = _half_width(prediction)
        if half_width is not None and prediction["epsilon"] in (own_epsilon / 2, own_epsilon * 2):
            others.append(f"at ε = {_epsilon(prediction['epsilon'])}, ±{_number(half_width)}{_give_or_take(prediction)}")
    if not others:
        return None
    return "A smaller ε protects each person more and costs accuracy: " + "; ".join(others) + "."


def _source(document: dict[str, Any]) -> str:
    simulated = any(error.get("source") == "simulation" for prediction in document["predictions"]
                    for error in prediction["errors"].values())
    how = (f"from {document.get('repeats', 0)} simulated collections" if simulated
           else "from the estimator's exact variance")
    text = (f"These are predictions from the protocol alone, before any data ({how}, on data shaped like a "
            f"{document['shape']} distribution), not this campaign's own intervals")
    requested = document.get("n_requested")
    if requested is not None and requested != document["n"]:
        text += f"; simulated predictions stop at {document['n']:,} reports"
    return text + "."


def plain_words(document: dict[str, Any]) -> list[str]:
    """The sentences of what the campaign's epsilon buys (module docstring), from the explain route's document.

    Parameters
    ----------
    document : dict
        :meth:`dpdist.accuracy.Explanation.to_dict` with the campaign's ``epsilon``
        (and ``n_requested``), as :func:`._explain.explain_json` builds it.

    Returns
    -------
    list of str
        Empty when the prediction has no interval at the campaign's own epsilon.
    """
    own_epsilon = float(document["epsilon"])
    own = next((p for p in document["predictions"] if p["epsilon"] == own_epsilon), None)
    half_width = None if own is None else _half_width(own)
    if own is None or half_width is None or document["kind"] not in _WHAT:
        return []
    ratio = math.exp(own_epsilon)
    privacy = (f"ε = {_epsilon(own_epsilon)} is what each person gives up: whatever their true value, what they "
               f"send is at most e^ε = {_number(ratio)} times as likely as it would be with any other value.")
    trade = _trade(document, own_epsilon)
    return [_accuracy(document, own, half_width), *([trade] if trade else []), privacy, _source(document)]
