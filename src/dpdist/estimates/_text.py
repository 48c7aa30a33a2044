"""The pieces of an estimate document's text table: the value, the estimate, its fixed-n and its anytime interval.

Each kind of result writes its own rows from these (its class's ``_document_lines``), and
:func:`~dpdist.estimates._presented.document_lines` finds the class from the document's
``kind``: what ``dpdist campaign estimate`` prints from the service's estimate document.
"""

from __future__ import annotations

from typing import Any

from ._intervals import SHARE_CLIPPED

__all__ = ["pick", "limits", "text_table", "frequency_lines", "MAX_ROWS"]

#: Rows of a frequency table printed (the most frequent first); the rest are in the JSON.
MAX_ROWS = 20


def pick(intervals: list[dict], quantity: str, anytime: bool, simultaneous: bool | None = None) -> dict | None:
    """The first interval of ``quantity`` that is (or is not) anytime-valid, and simultaneous if asked."""
    for interval in intervals:
        if interval["quantity"] == quantity and interval["anytime_valid"] == anytime and (
                simultaneous is None or interval["simultaneous"] == simultaneous):
            return interval
    return None


def limits(interval: dict | None, index: int | None = None) -> str:
    """``[low, high]`` of an interval document (of its ``index``-th point), ``-`` where there is none, ``empty`` for an
    empty confidence set (``Interval.empty``: the data fit no value at that level)."""
    if interval is None:
        return "-"
    if interval.get("empty"):
        return "empty"
    low, high = interval["low"], interval["high"]
    if index is not None:
        low, high = low[index], high[index]
    return "-" if low is None or high is None else f"[{low:.4g}, {high:.4g}]"


def text_table(rows: list[tuple[str, float | None, str, str]], level: str, anytime_title: str) -> list[str]:
    """Rows ``(value, estimate, fixed-n interval, anytime interval)`` under their header, in aligned columns."""
    width = max([len("value")] + [len(name) for name, *_ in rows])
    lines = [f"{'value':<{width}}  {'estimate':>10}  {'fixed-n ' + level:<24}  anytime {level} ({anytime_title})"]
    for name, value, fixed, anytime in rows:
        shown = "-" if value is None else f"{value:.4g}"
        lines.append(f"{name:<{width}}  {shown:>10}  {fixed:<24}  {anytime}")
    return lines


def frequency_lines(document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
    """The most frequent values (at most :data:`MAX_ROWS`, by label), each with both intervals."""
    values = document["frequencies"]
    names = document.get("labels") or [str(item) for item in document["items"]]
    fixed = pick(intervals, "frequency", False)
    anytime = pick(intervals, "frequency", True, simultaneous=True)
    order = sorted(range(len(values)), key=lambda i: -(values[i] if values[i] is not None else -1))
    rows = [(names[i], values[i], limits(fixed, i), limits(anytime, i)) for i in order[:MAX_ROWS]]
    lines = text_table(rows, level, "every look, all values at once" if anytime else "none")
    if len(order) > MAX_ROWS:
        lines.append(f"... {len(order) - MAX_ROWS} more value(s) in --json")
    if fixed is not None and SHARE_CLIPPED in fixed.get("method", ""):
        lines.append("(the intervals of a share are " + SHARE_CLIPPED + ")")
    return lines
