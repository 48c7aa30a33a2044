"""The result of a group-by: one result per public key, their composed guarantee and what it covers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ItemsView, Iterator, KeysView

import numpy as np

from .._guarantee import PrivacyGuarantee
from ._tables import Engine

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
    engine : Engine
        The engine of the frame the data came from (``engine.name``: ``"pandas"``, ``"polars"``, ``"pyspark"``,
        ...), in which :meth:`table` and :meth:`summary` make their frames.
    dropped : int or None
        Rows left out because their key is missing (``missing_keys="drop"``; 0 with ``"group"``, where they form a
        group of key ``None``).  ``None`` where the count is private (a central group-by: the caller's
        :class:`~dpdist.errors.MissingValuesWarning` holds it, no result does).
    """

    by: tuple[str, ...]
    results: dict[Any, Any]
    guarantee: PrivacyGuarantee
    covers: str
    engine: Engine
    details: dict = field(default_factory=dict)
    dropped: int | None = None

    @property
    def library(self) -> str:
        """The name of the input's engine (``engine.name``)."""
        return self.engine.name

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
        dropped = "" if self.dropped is None else f", dropped={self.dropped}"
        return (f"GroupedResult(by={self.by!r}, groups={len(self.results)}{dropped}, "
                f"guarantee={self.guarantee.describe()!r})")

    def _key_columns(self, key, rows: int) -> dict[str, list]:
        values = key if len(self.by) > 1 else (key,)
        return {name: [value] * rows for name, value in zip(self.by, values)}

    def table(self) -> Any:
        """Every group's ``table()`` stacked, with the key column(s) first: a DataFrame of the input's engine."""
        parts: dict[str, list] = {}
        for key, result in self.results.items():
            if result is None:
                continue
            table = result.table()
            rows = len(next(iter(table.values()))) if table else 0
            for name, column in {**self._key_columns(key, rows), **table}.items():
                parts.setdefault(name, []).extend(np.asarray(column).tolist())
        return self.engine.frame(parts)

    def summary(self) -> Any:
        """One row per group: the key(s), the headline numbers of its result (``summary_row()``), each followed by its
        interval (``"<name> low"``, ``"<name> high"``, and a ``level`` column) where the result has one, and ``n``
        where released."""
        rows = []
        for key, result in self.results.items():
            row: dict[str, Any] = {name: column[0] for name, column in self._key_columns(key, 1).items()}
            if result is not None:
                row.update({str(name): value for name, value in result.summary_row().items()})
                if result.n is not None:  # a count is shown where the release made it public
                    row["n"] = result.n
            rows.append(row)
        names = list(dict.fromkeys(name for row in rows for name in row))
        return self.engine.frame({name: [row.get(name) for row in rows] for name in names})
