"""``dpdist campaign estimate`` as text: a campaign's estimate with its fixed-n and anytime intervals, by label.

Reads the service's estimate document (``GET /api/campaigns/{id}/estimate``; its
``uncertainty`` field is :mod:`dpdist.serve._uncertainty`) and prints one table:
the value's label (never an item number when the campaign has labels), the
estimate, the fixed-n interval (one look at a planned n) and the confidence
sequence's (every look), then what each means and the stop readout.
"""

from __future__ import annotations

__all__ = ["estimate_lines"]

#: Rows of a frequency table printed (the most frequent first); the rest are in --json.
MAX_ROWS = 20


def _interval(low, high) -> str:
    if low is None or high is None:
        return "-"
    return f"[{low:.4g}, {high:.4g}]"


def _table(rows: list[tuple[str, float | None, str, str]], level: float, anytime_title: str) -> list[str]:
    percent = f"{100 * level:g}%"
    width = max([len("value")] + [len(name) for name, *_ in rows])
    lines = [f"{'value':<{width}}  {'estimate':>10}  {'fixed-n ' + percent:<24}  anytime {percent} ({anytime_title})"]
    for name, value, fixed, anytime in rows:
        shown = "-" if value is None else f"{value:.4g}"
        lines.append(f"{name:<{width}}  {shown:>10}  {fixed:<24}  {anytime}")
    return lines


def _sequence_rows(estimate: dict, sequence: dict | None) -> tuple[list, list, str]:
    """(low, high, title) of the anytime column, per row, for the estimate's kind."""
    kind = estimate["kind"]
    if sequence is None:
        return [], [], "none"
    if kind == "frequency":
        return sequence["simultaneous_low"], sequence["simultaneous_high"], "every look, all values at once"
    return [], [], "every look"


def estimate_lines(estimate: dict | None) -> list[str]:
    """The lines of the table and its notes (module docstring)."""
    if estimate is None:
        return ["no report yet"]
    uncertainty = estimate.get("uncertainty") or {}
    level = uncertainty.get("level", 0.95)
    fixed = uncertainty.get("fixed_n") or {}
    sequence = uncertainty.get("sequence")
    kind = estimate["kind"]
    if kind in ("frequency", "heavy_hitters"):
        lines = _frequency_lines(estimate, fixed, sequence, level)
    elif kind == "distribution":
        lines = _distribution_lines(estimate, fixed, sequence, level)
    else:
        lines = _table([("mean", estimate["mean"], _interval(fixed.get("low"), fixed.get("high")),
                         _interval(*(sequence["low"], sequence["high"]) if sequence else (None, None)))],
                       level, "every look")
    lines.append("fixed-n: valid for one look at a number of reports fixed in advance; anytime: holds at every n, "
                 "however often it is looked at")
    if sequence is None and uncertainty.get("sequence_unavailable"):
        lines.append(f"anytime: none, {uncertainty['sequence_unavailable']}")
    stop = uncertainty.get("stop")
    if stop:
        if stop["reached"]:
            lines.append(f"stop: the anytime band is narrower than {stop['target_width']:g} (width {stop['width']:.4g})")
        elif stop["n"] is None:
            lines.append(f"stop: width {stop['width']:.4g}; not narrower than {stop['target_width']:g} within 10^10 reports")
        else:
            lines.append(f"stop: width {stop['width']:.4g}; narrower than {stop['target_width']:g} at about "
                         f"n = {stop['n']:,} if the estimate stays where it is")
    return lines


def _frequency_lines(estimate, fixed, sequence, level) -> list[str]:
    values = estimate["frequencies"]
    names = estimate.get("labels") or [str(item) for item in estimate["items"]]
    lows, highs, title = _sequence_rows(estimate, sequence)
    order = sorted(range(len(values)), key=lambda i: -(values[i] if values[i] is not None else -1))
    rows = [(names[i], values[i], _interval(fixed.get("low", [None] * len(values))[i], fixed.get("high", [None] * len(values))[i]),
             _interval(lows[i], highs[i]) if lows else "-") for i in order[:MAX_ROWS]]
    if estimate["kind"] == "heavy_hitters" and fixed.get("simultaneous_over"):
        title = "none"
    lines = _table(rows, level, title)
    if len(order) > MAX_ROWS:
        lines.append(f"... {len(order) - MAX_ROWS} more value(s) in --json")
    if estimate["kind"] == "heavy_hitters" and fixed.get("simultaneous_over"):
        lines.append(f"fixed-n intervals hold for all {fixed['simultaneous_over']} candidates of the last round at once")
    return lines


def _distribution_lines(estimate, fixed, sequence, level) -> list[str]:
    rows = [("mean", estimate["mean"], _interval(*(fixed["mean"]["low"], fixed["mean"]["high"]) if "mean" in fixed else (None, None)),
             _interval(*(sequence["mean"]["low"], sequence["mean"]["high"]) if sequence else (None, None)))]
    quantiles = estimate.get("quantiles") or {"q": [], "values": []}
    for index, (q, value) in enumerate(zip(quantiles["q"], quantiles["values"])):
        fixed_q = fixed.get("quantiles")
        sequence_q = sequence.get("quantiles") if sequence else None
        rows.append((f"quantile {q:g}", value,
                     _interval(fixed_q["low"][index], fixed_q["high"][index]) if fixed_q else "-",
                     _interval(sequence_q["low"][index], sequence_q["high"][index]) if sequence_q else "-"))
    lines = _table(rows, level, "every look")
    widths = []
    if fixed.get("low"):
        widths.append(f"fixed-n {max(h - l for l, h in zip(fixed['low'], fixed['high'])):.3g} ({len(fixed['low'])} points)")
    if sequence:
        widths.append(f"anytime {max(h - l for l, h in zip(sequence['low'], sequence['high'])):.3g} "
                      f"({len(sequence['low'])} points)")
    if widths:
        lines.append("CDF band, widest: " + ", ".join(widths))
    return lines
