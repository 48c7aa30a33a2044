"""``dpdist campaign estimate`` as text: a campaign's estimate with its fixed-n and anytime intervals, by label.

Reads the service's estimate document (``GET /api/campaigns/{id}/estimate``): the
estimate's JSON (``docs/results.md``), whose ``intervals`` the service completes with the
confidence sequence's (``anytime_valid``, :mod:`dpdist.serve._uncertainty`), and prints one
table: the value's label (never an item number when the campaign has labels), the estimate,
the fixed-n interval (one look at a planned n) and the anytime one (every look), then what
each means and the stop readout.
"""

from __future__ import annotations

__all__ = ["estimate_lines"]

#: Rows of a frequency table printed (the most frequent first); the rest are in --json.
MAX_ROWS = 20


def pick(intervals: list[dict], quantity: str, anytime: bool, simultaneous: bool | None = None) -> dict | None:
    """The first interval of ``quantity`` that is (or is not) anytime-valid, and simultaneous if asked."""
    for interval in intervals:
        if interval["quantity"] == quantity and interval["anytime_valid"] == anytime and (
                simultaneous is None or interval["simultaneous"] == simultaneous):
            return interval
    return None


def _limits(interval: dict | None, index: int | None = None) -> str:
    if interval is None:
        return "-"
    low, high = interval["low"], interval["high"]
    if index is not None:
        low, high = low[index], high[index]
    return "-" if low is None or high is None else f"[{low:.4g}, {high:.4g}]"


def _table(rows: list[tuple[str, float | None, str, str]], level: str, anytime_title: str) -> list[str]:
    width = max([len("value")] + [len(name) for name, *_ in rows])
    lines = [f"{'value':<{width}}  {'estimate':>10}  {'fixed-n ' + level:<24}  anytime {level} ({anytime_title})"]
    for name, value, fixed, anytime in rows:
        shown = "-" if value is None else f"{value:.4g}"
        lines.append(f"{name:<{width}}  {shown:>10}  {fixed:<24}  {anytime}")
    return lines


def estimate_lines(estimate: dict | None) -> list[str]:
    """The lines of the table and its notes (module docstring)."""
    if estimate is None:
        return ["no report yet"]
    return _kind_lines(estimate) + _notes(estimate.get("uncertainty") or {})


def _kind_lines(estimate: dict) -> list[str]:
    intervals = estimate.get("intervals") or []
    levels = {interval["level"] for interval in intervals}
    level = f"{round(100 * min(levels), 6):g}%" if levels else "95%"
    kind = estimate["kind"]
    if kind in ("frequency", "heavy_hitters"):
        return _frequency_lines(estimate, intervals, level)
    if kind == "distribution":
        return _distribution_lines(estimate, intervals, level)
    if kind == "multi":  # several attributes: each attribute's own table
        lines = []
        for name, attribute in estimate["attributes"].items():
            lines.append(f"attribute {name}:")
            lines.extend("  " + line for line in _kind_lines(attribute))
        return lines
    if kind == "marginals":
        return _marginal_lines(estimate, level)
    return _table([("mean", estimate["mean"], _limits(pick(intervals, "mean", False)),
                    _limits(pick(intervals, "mean", True)))], level, "every look")


def _marginal_lines(estimate: dict, level: str) -> list[str]:
    """Each reported marginal's largest cells with their fixed-n intervals (marginals have no anytime ones)."""
    import numpy as np

    lines = []
    for marginal in estimate["marginals"]:
        values = marginal["frequencies"]
        cells = np.unravel_index(np.arange(len(values)), marginal["shape"])
        names = ["|".join(f"{a}={marginal['labels'][j][int(cells[j][i])]}" for j, a in enumerate(marginal["attributes"]))
                 for i in range(len(values))]
        order = sorted(range(len(values)), key=lambda i: -(values[i] if values[i] is not None else -1))
        interval = {"low": marginal["low"], "high": marginal["high"]}
        rows = [(names[i], values[i], _limits(interval, i), "-") for i in order[:MAX_ROWS]]
        lines.append(f"marginal {','.join(marginal['attributes'])}:")
        lines.extend("  " + line for line in _table(rows, level, "none"))
        if len(order) > MAX_ROWS:
            lines.append(f"  ... {len(order) - MAX_ROWS} more cell(s) in --json")
    return lines


def _notes(uncertainty: dict) -> list[str]:
    lines = ["fixed-n: valid for one look at a number of reports fixed in advance; anytime: holds at every n, "
             "however often it is looked at"]
    if uncertainty.get("sequence_unavailable"):
        lines.append(f"anytime: none, {uncertainty['sequence_unavailable']}")
    if uncertainty.get("note"):
        lines.append(uncertainty["note"])
    stop = uncertainty.get("stop")
    if stop and stop["reached"]:
        lines.append(f"stop: the anytime band is narrower than {stop['target_width']:g} (width {stop['width']:.4g})")
    elif stop and stop["n"] is None:
        lines.append(f"stop: width {stop['width']:.4g}; not narrower than {stop['target_width']:g} within 10^10 reports")
    elif stop:
        lines.append(f"stop: width {stop['width']:.4g}; narrower than {stop['target_width']:g} at about "
                     f"n = {stop['n']:,} if the estimate stays where it is")
    return lines


def _frequency_lines(estimate: dict, intervals: list[dict], level: str) -> list[str]:
    values = estimate["frequencies"]
    names = estimate.get("labels") or [str(item) for item in estimate["items"]]
    fixed = pick(intervals, "frequency", False)
    anytime = pick(intervals, "frequency", True, simultaneous=True)
    order = sorted(range(len(values)), key=lambda i: -(values[i] if values[i] is not None else -1))
    rows = [(names[i], values[i], _limits(fixed, i), _limits(anytime, i)) for i in order[:MAX_ROWS]]
    lines = _table(rows, level, "every look, all values at once" if anytime else "none")
    if len(order) > MAX_ROWS:
        lines.append(f"... {len(order) - MAX_ROWS} more value(s) in --json")
    over = (estimate.get("band") or {}).get("simultaneous_over")
    if estimate["kind"] == "heavy_hitters" and over:
        lines.append(f"fixed-n intervals hold for all {over} candidates of the last round at once")
    return lines


def _distribution_lines(estimate: dict, intervals: list[dict], level: str) -> list[str]:
    mean = "circular mean" if estimate.get("period") is not None else "mean"  # a circle (opm-circular): no interval
    rows = [(mean, estimate["mean"], _limits(pick(intervals, "mean", False)), _limits(pick(intervals, "mean", True)))]
    fixed_q, anytime_q = pick(intervals, "quantile", False), pick(intervals, "quantile", True)
    quantiles = estimate.get("quantiles") or {"q": [], "values": []}
    for index, (q, value) in enumerate(zip(quantiles["q"], quantiles["values"])):
        rows.append((f"quantile {q:g}", value, _limits(fixed_q, index), _limits(anytime_q, index)))
    lines = _table(rows, level, "every look")
    widths = []
    for name, band in (("fixed-n", pick(intervals, "cdf", False, simultaneous=True)), ("anytime", pick(intervals, "cdf", True))):
        if band is not None:
            widest = max(high - low for low, high in zip(band["low"], band["high"]) if low is not None and high is not None)
            widths.append(f"{name} {widest:.3g} ({len(band['low'])} points)")
    if widths:
        lines.append("CDF band, widest: " + ", ".join(widths))
    return lines
