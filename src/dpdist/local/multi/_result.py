"""The estimate of a multi-attribute protocol: one estimate per attribute, presented together."""

from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..._validation import InstanceOf, Optional, validate_params
from ...errors import InvalidParameterError
from ...estimates import Interval, Presented
from ...estimates._drawing import panel_grid
from ...estimates._intervals import check_level
from ...estimates._presented import document_lines
from ...estimates._reading import Header
from ..._documents import read_part
from ..._guarantee import PrivacyGuarantee

__all__ = ["MultiAttributeEstimate"]


#: the ``truth`` of :meth:`MultiAttributeEstimate.describe` and ``figure``
_TRUTH = Optional(InstanceOf(dict, "a dict {attribute: the truth its estimate takes}"))


def _union_table(tables: dict[str, dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """The attributes' tables one under another, with an ``attribute`` column; a column an attribute lacks is NaN."""
    names: list[str] = []
    for table in tables.values():
        names.extend(name for name in table if name not in names)
    columns: dict[str, list] = {"attribute": []}
    for attribute, table in tables.items():
        rows = len(next(iter(table.values()))) if table else 0
        columns["attribute"].extend([attribute] * rows)
        for name in names:
            column = table.get(name)
            columns.setdefault(name, []).extend(np.asarray(column).tolist() if column is not None else [np.nan] * rows)
    out: dict[str, np.ndarray] = {}
    for name, values in columns.items():
        array = np.asarray(values, dtype=object)
        try:
            out[name] = array.astype(np.float64) if name != "attribute" else array
        except (TypeError, ValueError):
            out[name] = array
    return out


@dataclass(frozen=True, repr=False)
class MultiAttributeEstimate(Presented):
    """What a multi-attribute protocol estimates: each attribute's estimate, by name.

    Attributes
    ----------
    attributes : dict[str, estimate]
        Each attribute's estimate, in the schema's order: a
        :class:`~dpdist.estimates.FrequencyEstimate` for a categorical attribute, whatever its
        protocol returns for a numerical one (a :class:`~dpdist.estimates.Distribution` or
        :class:`~dpdist.estimates.MeanEstimate`).  Each states the protocol's record-level
        ``guarantee`` (its own budget is in ``details["attribute_epsilon"]``).
    n : int
        Reports behind the estimate (records).
    epsilon : float
    method : str
        The protocol's registry name.
    guarantee : PrivacyGuarantee
        The record-level guarantee (``"replace"``: any two records of one user).
    details : dict
        ``attribute_guarantee`` (records differing in one attribute) and the protocol's extras.
    """

    kind: ClassVar[str] = "multi"

    attributes: dict
    n: int
    epsilon: float
    method: str
    guarantee: PrivacyGuarantee
    details: dict = field(default_factory=dict)

    def __getitem__(self, name: str):
        """The estimate of attribute ``name``."""
        try:
            return self.attributes[name]
        except KeyError:
            raise KeyError(f"{name!r} is not an attribute of this estimate (attributes: {list(self.attributes)})") from None

    def __repr__(self) -> str:
        kinds = ", ".join(f"{name}: {type(estimate).__name__}" for name, estimate in self.attributes.items())
        return f"MultiAttributeEstimate({self.method}, n={self.n}, epsilon={self.epsilon:g}, {{{kinds}}})"

    def _item_frequencies(self, part: int) -> np.ndarray:
        """The categorical attributes' frequencies (``part`` 0) or their variance (1), one after another (schema order),
        as each estimate gives them (:meth:`~dpdist.estimates.FrequencyEstimate.item_frequencies`)."""
        parts = [found[part] for estimate in self.attributes.values() if (found := estimate.item_frequencies()) is not None]
        if not parts:
            raise InvalidParameterError(f"{self.method} has no categorical attribute: it estimates no frequencies.")
        return np.concatenate(parts)

    @property
    def frequencies(self) -> np.ndarray:
        """The frequency estimates of the categorical attributes, one after another (schema order)."""
        return self._item_frequencies(0)

    @property
    def variance(self) -> np.ndarray:
        """The analytic variance of each entry of :attr:`frequencies`."""
        return self._item_frequencies(1)

    def summary(self) -> dict[str, float]:
        """Each attribute's headline numbers, named ``"<attribute>: <name>"``."""
        return {
            f"{name}: {key}": value
            for name, estimate in self.attributes.items()
            for key, value in estimate.summary().items()
        }

    def table(self) -> dict[str, np.ndarray]:
        """The attributes' own tables one under another, with a first column ``attribute``."""
        return _union_table({name: estimate.table() for name, estimate in self.attributes.items()})

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """Every attribute's intervals, each ``quantity`` named ``"<attribute>: <quantity>"``."""
        check_level(level, "MultiAttributeEstimate.intervals")
        out = []
        for name, estimate in self.attributes.items():
            for interval in estimate.intervals(level):
                out.append(Interval(f"{name}: {interval.quantity}", interval.estimate, interval.low, interval.high,
                                    interval.level, interval.method, interval.at, interval.simultaneous,
                                    interval.anytime_valid))
        return tuple(out)

    def _json_fields(self, level: float) -> dict[str, Any]:
        return {
            "attributes": {name: estimate.to_dict(level) for name, estimate in self.attributes.items()},
            "attribute_guarantee": self.details["attribute_guarantee"].to_dict()
            if "attribute_guarantee" in self.details else None,
        }

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> "MultiAttributeEstimate":
        """The estimate of a checked document (:meth:`Presented.from_dict`): each attribute's estimate read as its own
        kind, the guarantee of one attribute from ``attribute_guarantee``."""
        attributes = {name: read_part(Presented.from_dict, part, header.owner, f"attributes.{name}")
                      for name, part in document["attributes"].items()}
        details = header.details()
        if document["attribute_guarantee"] is not None:
            details["attribute_guarantee"] = read_part(PrivacyGuarantee.from_dict, document["attribute_guarantee"],
                                                       header.owner, "attribute_guarantee")
        return cls(attributes, header.n, header.epsilon, header.method, header.guarantee, details)  # type: ignore[arg-type]

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """Each attribute's own table (its kind's), under its name."""
        lines = []
        for name, attribute in document["attributes"].items():
            lines.append(f"attribute {name}:")
            lines.extend("  " + line for line in document_lines(attribute))
        return lines

    def _truth(self, truth, name: str):
        """The truth of attribute ``name`` (``truth``: None or a dict, as the tables of the public methods say)."""
        return None if truth is None else truth.get(name)

    @validate_params({"truth": _TRUTH})
    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """Each attribute's description (its estimate's ``describe``), under its name."""
        blocks = []
        for name, estimate in self.attributes.items():
            inner = estimate.describe(self._truth(truth, name), level)
            blocks.append(f"  {name}:\n" + "\n".join("  " + line for line in inner.splitlines()))
        return "\n".join(blocks)

    @validate_params({"truth": _TRUTH})
    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """One panel per attribute, each its estimate's own plot."""
        names = list(self.attributes)
        figure, axes = panel_grid(len(names))
        for axis, name in zip(axes, names):
            estimate = self.attributes[name]
            accepted = inspect.signature(estimate.plot).parameters  # each kind's plot takes its own options
            options = {"level": level, "truth": self._truth(truth, name)}
            estimate.plot(axis, **{key: value for key, value in options.items() if key in accepted})
            axis.set_title(name if label is None else f"{label}: {name}", fontsize=9)
        figure.tight_layout()
        return figure

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The first attribute's plot on ``ax`` (:meth:`figure` draws them all)."""
        name = next(iter(self.attributes))
        axes = self.attributes[name].plot(ax, **kwargs)
        axes.set_title(name, fontsize=9)
        return axes
