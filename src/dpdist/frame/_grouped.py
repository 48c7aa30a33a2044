"""The result of a group-by: one result per public key, their composed guarantee and what it covers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ItemsView, Iterator, KeysView

import numpy as np

from ..privacy import PrivacyGuarantee
from ._tables import new_frame

__all__ = ["GroupedResult"]


@dataclass(frozen=True, repr=False)
class GroupedResult:
    """One release or estimate per group of a public key, composed in parallel.

    Attributes
    ----------
    by : tuple of str
        The key column(s).
    results : dict
        ``{key: result}`` in the order of the keys given (a key is a value, or a tuple for several
        ``by`` columns); ``None`` for a group with no row where the method needs rows (local estimates).
    guarantee : PrivacyGuarantee
        The parallel composition of the groups' guarantees (:func:`dpdist.privacy.parallel`): the
        groups hold disjoint records, so a record's presence or value touches one group's result.
    covers : str
        What the guarantee covers and what it does not (the key, the groups' sizes).
    library : {"pandas", "polars"}
        The library of the frame the data came from, used by :meth:`table` and :meth:`summary`.
    """

    by: tuple[str, ...]
    results: dict[Any, Any]
    guarantee: PrivacyGuarantee
    covers: str
    library: str
    details: dict = field(default_factory=dict)

    def __getitem__(self, key):
        return self.results[key]

    def __iter__(self) -> Iterator:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def keys(self) -> KeysView[Any]:
        return self.results.keys()

    def items(self) -> ItemsView[Any, Any]:
        return self.results.items()

    def __repr__(self):
        return (f"GroupedResult(by={self.by!r}, groups={len(self.results)}, "
                f"guarantee={self.guarantee.describe()!r})")

    def _key_columns(self, key, rows: int) -> dict[str, list]:
        values = key if len(self.by) > 1 else (key,)
        return {name: [value] * rows for name, value in zip(self.by, values)}

    def table(self) -> Any:
        """Every group's ``table()`` stacked, with the key column(s) first: a DataFrame of the input's library."""
        parts: dict[str, list] = {}
        for key, result in self.results.items():
            if result is None:
                continue
            table = _table_of(result)
            rows = len(next(iter(table.values()))) if table else 0
            for name, column in {**self._key_columns(key, rows), **table}.items():
                parts.setdefault(name, []).extend(np.asarray(column).tolist())
        return new_frame(self.library, parts)

    def summary(self) -> Any:
        """One row per group: the key(s), the headline numbers of its result (``summary()``), each followed by its
        pointwise interval (``"<name> low"``, ``"<name> high"``, and a ``level`` column) where the result has one,
        and ``n`` where released."""
        rows = []
        for key, result in self.results.items():
            row: dict[str, Any] = {name: column[0] for name, column in self._key_columns(key, 1).items()}
            if result is not None:
                row.update(_summary_of(result))
                released_n = getattr(result, "n", None)
                if released_n is not None:
                    row["n"] = released_n
            rows.append(row)
        names = list(dict.fromkeys(name for row in rows for name in row))
        return new_frame(self.library, {name: [row.get(name) for row in rows] for name in names})


def _table_of(result) -> dict:
    table = dict(result.table())
    labels = getattr(result, "labels", None)
    if labels is not None and "item" in table:
        table = {"item": table.pop("item"), "label": [labels[int(i)] for i in np.asarray(result.table()["item"])],
                 **table}
    return table


#: Frequency estimates of at most this many items are summarized by every item's frequency (the same columns in
#: every group); larger domains by their summary() (the top items).
_ALL_ITEMS = 64


def _summary_of(result) -> dict[str, float]:
    """The headline numbers of ``result``, each followed by its pointwise interval (``"<name> low"``,
    ``"<name> high"``) where the result has one, and the intervals' ``level``."""
    frequencies = getattr(result, "frequencies", None)
    if frequencies is not None and len(frequencies) <= _ALL_ITEMS:
        names = result.item_names() if getattr(result, "labels", None) is not None else [f"item {i}" for i in range(len(frequencies))]
        headline = {str(name): float(value) for name, value in zip(names, frequencies)}
    else:
        headline = {str(name): value for name, value in result.summary().items()}
    limits, level = _interval_limits(result, headline)
    row: dict[str, Any] = {}
    for name, value in headline.items():
        row[name] = value
        if name in limits:
            row[f"{name} low"], row[f"{name} high"] = limits[name]
    if level is not None:
        row["level"] = level
    return row


def _interval_limits(result, headline: dict) -> tuple[dict[str, tuple[float, float]], float | None]:
    """``({headline name: (low, high)}, level)`` from the result's pointwise intervals of its headline numbers."""
    limits, level = {}, None
    for interval in result.intervals():
        if getattr(interval, "simultaneous", False):
            continue
        lows, highs = np.atleast_1d(interval.low), np.atleast_1d(interval.high)
        for name, low, high in zip(_point_names(result, interval), lows, highs):
            if name in headline and np.isfinite(low) and np.isfinite(high):
                limits[name], level = (float(low), float(high)), float(interval.level)
    return limits, level


def _point_names(result, interval) -> list[str]:
    """The headline names of an interval's points: items (by label), ``"<q> quantile"`` (a median is ``"median"``
    in a distribution's summary), or ``"mean"``."""
    if interval.quantity == "mean":
        return ["mean"]
    at = np.atleast_1d(interval.at)
    if interval.quantity == "frequency":
        labels = getattr(result, "labels", None)
        return [str(labels[int(item)]) if labels is not None else f"item {int(item)}" for item in at]
    if interval.quantity == "quantile":
        return ["median" if q == 0.5 and "median" in result.summary() else f"{q:g} quantile" for q in at]
    return []
