""":class:`HeavyHitters`: the most frequent items a ``pem`` collection found, with simultaneous intervals."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..errors import InvalidParameterError
from .._guarantee import PrivacyGuarantee
from ._presented import Presented
from ._reading import Header, numbers
from ._drawing import axes, pyplot
from ._intervals import (SHARE_CLIPPED, ConfidenceInterval, Interval, check_level, json_value, normal_quantile, percent,
                         share_limits)
from ._text import frequency_lines

__all__ = ["HeavyHitters", "draw_heavy_hitters", "heavy_hitters_figure"]


@dataclass(frozen=True)
class HeavyHitters(Presented):
    """The heavy hitters a ``pem`` collection found, most frequent first, with their estimated frequencies.

    ``labels`` are the words (for a protocol over words), ``standard_error`` the
    last round's (FLH's variance at the estimate), ``details`` the rounds.
    """

    kind: ClassVar[str] = "heavy_hitters"

    items: np.ndarray
    frequencies: np.ndarray
    n: int
    epsilon: float
    labels: list[str] | None = None
    guarantee: PrivacyGuarantee | None = None
    standard_error: np.ndarray | None = None
    details: dict = field(default_factory=dict)
    method: str = "pem"

    @property
    def names(self) -> list[str]:
        """The items' words (for words) or their integers as text."""
        return self.labels if self.labels is not None else [str(i) for i in self.items.tolist()]

    @property
    def candidates(self) -> int:
        """The candidates of the last round, among which the items shown were selected."""
        rounds = self.details.get("rounds") or []
        return max(int(rounds[-1]["candidates"]) if rounds else 1, 1)

    def confidence_interval(self, level: float = 0.95) -> ConfidenceInterval:
        """Intervals that hold for every item found at once with probability at least ``level``.

        The items shown are the top k of the last round's C candidates, estimated on the
        same reports: a pointwise interval (z = 1.96) around a selected maximum is not a
        95% interval (n = 5,000, eps = 2: 16 of the 18 noise words found had an interval
        above 0).  Bonferroni over the C candidates covers all of them at once with
        probability at least ``level`` (normal approximation), hence also the ones selected.
        No standard errors: ``(-inf, inf)``.
        """
        level = check_level(level, "HeavyHitters.confidence_interval")
        frequencies = np.asarray(self.frequencies, dtype=np.float64)
        if self.standard_error is None:
            return ConfidenceInterval(np.full(frequencies.shape, -np.inf), np.full(frequencies.shape, np.inf))
        half = normal_quantile(level, self.candidates) * np.asarray(self.standard_error, dtype=np.float64)
        return share_limits(frequencies - half, frequencies + half)

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """:meth:`confidence_interval`, simultaneous (none without standard errors)."""
        if self.standard_error is None:
            check_level(level, "HeavyHitters.intervals")
            return ()
        low, high = self.confidence_interval(level)
        method = (f"normal approximation with FLH's variance, Bonferroni over the last round's {self.candidates} "
                  f"candidates (so it holds for the items selected among them); {SHARE_CLIPPED}")
        return (Interval("frequency", np.asarray(self.frequencies, dtype=np.float64), low, high, level, method,
                         at=np.asarray(self.items), simultaneous=True),)

    def summary(self) -> dict[str, float]:
        return {name: float(f) for name, f in zip(self.names, self.frequencies)}

    def table(self) -> dict[str, np.ndarray]:
        """Columns ``item`` (and ``label`` for words), ``frequency``, and with standard errors ``standard_error``
        and the 95% simultaneous interval ``low``, ``high`` (:meth:`confidence_interval`)."""
        table = {"item": self.items}
        if self.labels is not None:
            table["label"] = np.array(self.labels)
        table["frequency"] = self.frequencies
        if self.standard_error is not None:
            low, high = self.confidence_interval(0.95)
            table.update(standard_error=self.standard_error, low=low, high=high)
        return table

    def _json_fields(self, level: float) -> dict[str, Any]:
        band = None
        if self.standard_error is not None:
            low, high = self.confidence_interval(level)
            band = {"level": level, "low": json_value(low), "high": json_value(high), "simultaneous_over": self.candidates}
        return {
            "items": json_value(self.items),
            "labels": self.names,
            "frequencies": json_value(self.frequencies),
            "standard_error": json_value(self.standard_error),
            "k": self.details.get("k"),
            "threshold": self.details.get("threshold"),
            "rounds": self.details.get("rounds"),
            "band": band,
        }

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> "HeavyHitters":
        """The heavy hitters of a checked document (:meth:`Presented.from_dict`): labels where they are not the items'
        numbers, the rounds (and the candidates the intervals hold over) from ``rounds``."""
        items = np.asarray(document["items"], dtype=np.int64)
        labels = list(document["labels"])
        details = header.details(**{name: document[name] for name in ("k", "threshold", "rounds")
                                    if document[name] is not None})
        return cls(items, numbers(document, "frequencies", header), header.n, header.epsilon,  # type: ignore[arg-type]
                   None if labels == [str(item) for item in items.tolist()] else labels, header.guarantee,
                   numbers(document, "standard_error", header), details, header.method)  # type: ignore[arg-type]

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """The items found, most frequent first, with their intervals and over how many candidates they hold."""
        lines = frequency_lines(document, intervals, level)
        over = (document.get("band") or {}).get("simultaneous_over")
        if over:
            lines.append(f"fixed-n intervals hold for all {over} candidates of the last round at once")
        return lines

    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """One line per item found: its frequency and simultaneous interval at ``level``, beside its true frequency
        when ``truth`` (a dict from each name of :attr:`names` to its true frequency; 0 for a name not in it) is given."""
        if truth is not None and not isinstance(truth, dict):
            raise InvalidParameterError(
                "The 'truth' parameter of HeavyHitters.describe must be a dict from names to true frequencies. "
                f"Got {type(truth).__name__} instead."
            )
        low, high = self.confidence_interval(level)
        width = max([len(name) for name in self.names] + [4])
        lines = []
        for index, name in enumerate(self.names):
            true = "" if truth is None else f"   (true {truth.get(name, 0.0):.4f})"
            lines.append(f"  {name:<{width}}  {self.frequencies[index]:9.4f}  {percent(level)} "
                         f"[{low[index]:.4f}, {high[index]:.4f}]{true}")
        return "\n".join(lines)

    def plot(self, ax: Any = None, *, level: float = 0.95, **kwargs: Any) -> Any:
        """Horizontal bars of the items found, most frequent on top, with their simultaneous intervals."""
        return draw_heavy_hitters(self, ax, level=level, **kwargs)

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """:meth:`plot` on a figure of its own (``truth`` and ``xlabel`` are not drawn)."""
        return heavy_hitters_figure(self, label=label, level=level)


def draw_heavy_hitters(found: HeavyHitters, ax: Any = None, *, level: float = 0.95, **kwargs: Any) -> Any:
    """Horizontal bars of the items found, most frequent on top, with their simultaneous intervals."""
    ax = axes(ax, (7, max(2.5, 0.3 * found.items.size + 1.2)))
    rows = np.arange(found.items.size)[::-1]
    frequencies = np.asarray(found.frequencies, dtype=np.float64)
    errors = None
    if found.standard_error is not None:
        low, high = found.confidence_interval(level)
        errors = np.vstack([frequencies - low, high - frequencies])
    label = kwargs.pop("label", found.method)
    ax.barh(rows, frequencies, xerr=errors, color=kwargs.pop("color", "C0"), ecolor="0.3",
            label=f"{label} ({percent(level)} simultaneous interval)", **kwargs)
    ax.set_yticks(rows, found.names)
    ax.set_xlabel("estimated frequency")
    ax.legend(fontsize=8)
    return ax


def heavy_hitters_figure(found: HeavyHitters, *, label: str | None = None, level: float = 0.95) -> Any:
    """:func:`draw_heavy_hitters` on a figure sized to the items found."""
    figure, ax = pyplot().subplots(figsize=(7, max(2.5, 0.3 * found.items.size + 1.2)))
    draw_heavy_hitters(found, ax, level=level, label=label or found.method)
    figure.tight_layout()
    return figure
