r"""The estimate of a marginal protocol: consistent marginals, any marginal of their attributes, and intervals.

:class:`MarginalsEstimate` holds the reported marginals made consistent
(:mod:`._consistency`) and answers

* :meth:`~MarginalsEstimate.marginal` -- the marginal of any attributes: the projection of a
  reported marginal containing them, or else the maximum-entropy table matching the
  reported marginals on them (:mod:`dpdist.estimates._maxent`, CALM sec. 5);
* :meth:`~MarginalsEstimate.probability` -- the share of records in a set of cells (e.g. "aged
  30-40 and earning 20-40k"), with a confidence interval.

Intervals.  With ``postprocess="none"`` the consistent marginals are an affine function of
the groups' unbiased estimates, so a linear query :math:`w` of them is unbiased with
variance :math:`\sum_g u_g^\top \Sigma_g u_g`, :math:`u = C^\top w`
(:meth:`Consistency.adjoint`, :func:`._covariance.quadratic_form`): normal intervals,
whose coverage ``tests/local/multi/test_calm.py`` measures by simulation.  After
Norm-Sub, and for maximum-entropy answers, the point estimate is no longer linear; their
intervals are those of the linear estimate of the same query (projection answers) or none
(maximum entropy, ``details["no_interval"]``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

import numpy as np

from ..._validation import Dict, Distinct, Items, Options, check_param, validate_params
from ...errors import InvalidParameterError
from ...estimates import FrequencyEstimate, Interval, Presented
from ...estimates._drawing import draw_heatmap, panel_grid
from ...estimates._intervals import SHARE_CLIPPED, check_level, json_value, normal_quantile, percent, share_limits
from ...estimates._text import MAX_ROWS, limits, text_table
from ..._guarantee import PrivacyGuarantee
from ._consistency import Consistency
from ._covariance import quadratic_form
from ...estimates._maxent import fit_table
from ._schema import Attribute

__all__ = ["MarginalsEstimate", "GroupNoise"]

#: the largest table a maximum-entropy answer builds
MAX_TABLE_CELLS = 1 << 22


@dataclass(frozen=True)
class GroupNoise:
    """What the covariance of one group's unbiased estimate needs: its randomizer and its report count."""

    unary: bool
    p: float
    q: float
    count: int


@dataclass(frozen=True, repr=False)
class MarginalsEstimate(Presented):
    """Consistent marginals of categorical attributes (see the module docstring).

    Attributes
    ----------
    schema : tuple of Attribute
        The attributes (names, domain sizes, labels).
    sets : tuple of tuple of int
        The attributes of each reported marginal.
    tables : tuple of ndarray
        Each reported marginal, consistent (and non-negative after ``"norm-sub"``).
    linear : tuple of ndarray
        The consistent marginals before any post-processing (what the intervals are about).
    n, epsilon, method, guarantee, details
        As every estimate; ``details["attribute_guarantee"]``, ``details["postprocess"]``,
        ``details["marginal_counts"]``.
    """

    kind: ClassVar[str] = "marginals"
    not_read_back: ClassVar[str | None] = (
        "its JSON lists the reported marginals with their limits, not the noise model and consistency map its other "
        "marginals, queries and intervals are computed from")

    schema: tuple
    sets: tuple
    tables: tuple
    linear: tuple
    noise: tuple
    consistency: Consistency
    n: int
    epsilon: float
    method: str
    guarantee: PrivacyGuarantee
    details: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ queries
    def _indices(self, names: Sequence[str]) -> list[int]:
        known = [attribute.name for attribute in self.schema]
        what = f"distinct attribute names of {known}"
        names = check_param("MarginalsEstimate", "attributes", names,
                            Distinct(Items(Options(tuple(known)), what, min_length=1), what))
        return [known.index(name) for name in names]

    def _container(self, wanted: Sequence[int]) -> int | None:
        for index, attributes in enumerate(self.sets):
            if set(wanted) <= set(attributes):
                return index
        return None

    def _project(self, tables: Sequence[np.ndarray], group: int, wanted: Sequence[int]) -> np.ndarray:
        """Group ``group``'s table summed onto ``wanted`` (axes in ``wanted``'s order)."""
        attributes = self.sets[group]
        others = tuple(position for position, a in enumerate(attributes) if a not in wanted)
        projected = tables[group].sum(axis=others) if others else tables[group]
        kept = [a for a in attributes if a in wanted]
        return np.transpose(projected, [kept.index(a) for a in wanted] + list(range(len(kept), projected.ndim)))

    def _query_weights(self, group: int, wanted: Sequence[int], weights: np.ndarray) -> list[np.ndarray]:
        """The queries ``weights`` (shape ``(*wanted shape, batch)``) of the projection of ``group``, as weights on
        every group's cells (zero outside ``group``)."""
        attributes = self.sets[group]
        batch = weights.shape[len(wanted):]
        order = [wanted.index(a) for a in attributes if a in wanted]
        moved = np.transpose(weights, order + list(range(len(wanted), weights.ndim)))
        for position, a in enumerate(attributes):
            if a not in wanted:
                moved = np.expand_dims(moved, position)
        full = np.broadcast_to(moved, self.consistency.shapes[group] + batch)
        return [full if index == group else np.zeros(shape + batch) for index, shape in enumerate(self.consistency.shapes)]

    def _variance(self, group: int, wanted: Sequence[int], weights: np.ndarray) -> np.ndarray:
        """Variance of the linear queries ``weights`` of the consistent marginal of ``wanted`` (from ``group``), one
        per query of the batch (0 for a query constant in the reports, e.g. the sum of every cell)."""
        pulled = self.consistency.adjoint(self._query_weights(group, wanted, weights))
        total: np.ndarray = np.zeros(weights.shape[len(wanted):])
        for index, (noise, u) in enumerate(zip(self.noise, pulled)):
            if not np.any(u):
                continue
            total = total + quadratic_form(noise.unary, noise.p, noise.q, self.linear[index], u, noise.count, self.n)
        return np.asarray(total, dtype=np.float64)

    def _maximum_entropy(self, wanted: Sequence[int]) -> np.ndarray:
        shape = [self.schema[a].domain_size for a in wanted]
        if int(np.prod(shape, dtype=np.int64)) > MAX_TABLE_CELLS:
            raise InvalidParameterError(
                f"MarginalsEstimate.marginal of {[self.schema[a].name for a in wanted]} would build a table of "
                f"{int(np.prod(shape, dtype=np.int64)):,} cells; at most {MAX_TABLE_CELLS:,}."
            )
        constraints = []
        for index, attributes in enumerate(self.sets):
            common = [a for a in wanted if a in attributes]
            if common:
                target = np.clip(self._project(self.tables, index, common), 0.0, None)
                constraints.append((tuple(wanted.index(a) for a in common), target / max(target.sum(), 1e-300)))
        table, iterations, gap = fit_table(shape, constraints)
        return table

    def marginal(self, attributes: Sequence[str]) -> FrequencyEstimate:
        """The marginal of ``attributes`` (names, in the order wanted) as frequencies of its cells.

        Cells are in C order (the first attribute slowest), labelled ``"a=x|b=y"``;
        ``details["shape"]`` is the table's shape.  A marginal within a reported one is its
        projection, with intervals (see the module docstring); any other is the
        maximum-entropy table matching the reported marginals, without intervals.
        """
        wanted = self._indices(attributes)
        group = self._container(wanted)
        shape = tuple(self.schema[a].domain_size for a in wanted)
        cells = int(np.prod(shape))
        details: dict[str, Any] = {"attributes": list(attributes), "shape": list(shape)}
        if group is None:
            frequencies = self._maximum_entropy(wanted).ravel()
            variance = np.full(cells, np.inf)
            details.update(method="maximum entropy", no_interval="a maximum-entropy answer has no analytic variance")
            center = None
        else:
            frequencies = self._project(self.tables, group, wanted).ravel()
            center = self._project(self.linear, group, wanted).ravel()
            variance = self._variance(group, wanted, np.eye(cells).reshape(shape + (cells,)))
            details.update(method="projection of a reported marginal")
        return FrequencyEstimate(
            frequencies, self.n, variance, self.epsilon, self.method, self.details.get("postprocess", "none"), details,
            self.guarantee, self._cell_labels(wanted), None if center is None or np.array_equal(center, frequencies) else center,
        )

    def _cell_labels(self, wanted: Sequence[int]) -> tuple[str, ...]:
        axes = [[f"{self.schema[a].name}={name}" for name in _item_names(self.schema[a])] for a in wanted]
        grids = np.meshgrid(*[np.arange(len(axis)) for axis in axes], indexing="ij")
        flat = [grid.ravel() for grid in grids]
        return tuple("|".join(axes[j][flat[j][cell]] for j in range(len(axes))) for cell in range(flat[0].size))

    @validate_params({"conditions": Dict("a dict {attribute: item(s)}", min_size=1)})
    def probability(self, conditions: dict, level: float = 0.95) -> Interval:
        """The share of records meeting every condition, with its interval at ``level``.

        ``conditions`` maps attribute names to an item, a label or a list of them, e.g.
        ``{"age": [3, 4], "income": "20-40k"}``.  Within one reported marginal the answer is a
        linear query of it (normal interval, clipped to [0, 1]); otherwise it comes from the maximum-entropy table
        (no interval: infinite limits).
        """
        level = check_level(level, "MarginalsEstimate.probability")
        names = list(conditions)
        wanted = self._indices(names)
        shape = tuple(self.schema[a].domain_size for a in wanted)
        mask = np.ones(shape)
        for axis, (a, chosen) in enumerate(zip(wanted, conditions.values())):
            keep = np.zeros(shape[axis])
            keep[_items(self.schema[a], chosen)] = 1.0
            mask = mask * keep.reshape([-1 if j == axis else 1 for j in range(len(shape))])
        group = self._container(wanted)
        if group is None:
            value = float((self._maximum_entropy(wanted) * mask).sum())
            return Interval("probability", value, -np.inf, np.inf, level, "maximum entropy: no analytic interval")
        value = float((self._project(self.tables, group, wanted) * mask).sum())
        center = float((self._project(self.linear, group, wanted) * mask).sum())
        half = normal_quantile(level) * float(np.sqrt(self._variance(group, wanted, mask[..., None])[0]))
        low, high = share_limits(center - half, center + half)
        return Interval("probability", value, low, high, level,
                        f"normal approximation with the exact variance of the consistent marginals' linear query; {SHARE_CLIPPED}")

    # ------------------------------------------------------------------ the result contract
    def _reported(self) -> list[FrequencyEstimate]:
        return [self.marginal([self.schema[a].name for a in attributes]) for attributes in self.sets]

    def summary(self) -> dict[str, float]:
        """Each attribute's most frequent item (consistent one-way marginals)."""
        out = {}
        for attribute in self.schema:
            estimate = self.marginal([attribute.name])
            label, share = estimate.top_labels(1)[0]
            out[label] = share
        return out

    def table(self) -> dict[str, np.ndarray]:
        """Every reported marginal's cells: ``marginal``, ``cell``, ``label``, ``frequency``, ``standard_error``,
        ``low``, ``high`` (95 %)."""
        columns: dict[str, list] = {key: [] for key in ("marginal", "cell", "label", "frequency", "standard_error", "low", "high")}
        for estimate in self._reported():
            low, high = estimate.confidence_interval(0.95)
            size = estimate.domain_size
            columns["marginal"].extend([",".join(estimate.details["attributes"])] * size)
            columns["cell"].extend(range(size))
            columns["label"].extend(estimate.item_names())
            columns["frequency"].extend(estimate.frequencies.tolist())
            columns["standard_error"].extend(estimate.standard_error.tolist())
            columns["low"].extend(low.tolist())
            columns["high"].extend(high.tolist())
        return {key: np.asarray(values, dtype=object if key in ("marginal", "label") else None) for key, values in columns.items()}

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """Each reported marginal's cells, pointwise."""
        level = check_level(level, "MarginalsEstimate.intervals")
        out = []
        for estimate in self._reported():
            (interval,) = estimate.intervals(level)
            out.append(Interval(f"frequency of {','.join(estimate.details['attributes'])}", interval.estimate,
                                interval.low, interval.high, level, interval.method, interval.at))
        return tuple(out)

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """Each reported marginal's largest cells with their fixed-n intervals (marginals have no anytime ones)."""
        lines = []
        for marginal in document["marginals"]:
            values = marginal["frequencies"]
            cells = np.unravel_index(np.arange(len(values)), marginal["shape"])
            names = ["|".join(f"{a}={marginal['labels'][j][int(cells[j][i])]}" for j, a in enumerate(marginal["attributes"]))
                     for i in range(len(values))]
            order = sorted(range(len(values)), key=lambda i: -(values[i] if values[i] is not None else -1))
            interval = {"low": marginal["low"], "high": marginal["high"]}
            rows = [(names[i], values[i], limits(interval, i), "-") for i in order[:MAX_ROWS]]
            lines.append(f"marginal {','.join(marginal['attributes'])}:")
            lines.extend("  " + line for line in text_table(rows, level, "none"))
            if len(order) > MAX_ROWS:
                lines.append(f"  ... {len(order) - MAX_ROWS} more cell(s) in --json")
        return lines

    def _json_fields(self, level: float) -> dict[str, Any]:
        marginals = []
        for estimate in self._reported():
            low, high = estimate.confidence_interval(level)
            marginals.append({
                "attributes": estimate.details["attributes"],
                "shape": estimate.details["shape"],
                "labels": [list(_item_names(self.schema[self._indices([name])[0]])) for name in estimate.details["attributes"]],
                "frequencies": json_value(estimate.frequencies),
                "standard_error": json_value(estimate.standard_error),
                "low": json_value(low),
                "high": json_value(high),
            })
        guarantee = self.details.get("attribute_guarantee")
        return {
            "marginals": marginals,
            "postprocess": self.details.get("postprocess", "none"),
            "attribute_guarantee": None if guarantee is None else guarantee.to_dict(),
        }

    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """Each reported marginal's largest cells with their intervals (``truth``: ``{"a,b": true frequencies}``)."""
        blocks = []
        for estimate in self._reported():
            key = ",".join(estimate.details["attributes"])
            true = None if truth is None else truth.get(key)
            inner = estimate.describe(true, level, k=5)
            blocks.append(f"  marginal {key} ({percent(level)} intervals):\n" + "\n".join("  " + line for line in inner.splitlines()))
        return "\n".join(blocks)

    def heatmap(self, first: str, second: str) -> tuple[np.ndarray, np.ndarray]:
        """The two-way marginal of ``first`` x ``second`` as a table and its standard errors (rows: ``first``)."""
        estimate = self.marginal([first, second])
        shape = tuple(estimate.details["shape"])
        return estimate.frequencies.reshape(shape), estimate.standard_error.reshape(shape)

    def plot(self, ax: Any = None, *, pair: Sequence[str] | None = None, **kwargs: Any) -> Any:
        """The heat map of a two-way marginal (the first reported pair unless ``pair``), cells annotated ``f +- se``."""
        if pair is None:
            two_way = [attributes for attributes in self.sets if len(attributes) >= 2]
            if not two_way:
                return self.marginal([self.schema[0].name]).plot(ax, **kwargs)
            pair = [self.schema[a].name for a in two_way[0][:2]]
        table, error = self.heatmap(*pair)
        labels = [list(_item_names(self.schema[self._indices([name])[0]])) for name in pair]
        return draw_heatmap(table, error, ax, row_labels=labels[0], column_labels=labels[1],
                            row_name=pair[0], column_name=pair[1], **kwargs)

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """Heat maps of the reported two-way marginals (at most six)."""
        pairs = [attributes[:2] for attributes in self.sets if len(attributes) >= 2][:6] or [self.sets[0]]
        figure, axes = panel_grid(len(pairs))
        for axis, attributes in zip(axes, pairs):
            names = [self.schema[a].name for a in attributes]
            if len(names) == 1:
                self.marginal(names).plot(axis)
            else:
                self.plot(axis, pair=names)
            if label:
                axis.set_title(f"{label}: {' x '.join(names)}", fontsize=9)
        figure.tight_layout()
        return figure


def _item_names(attribute: Attribute) -> tuple[str, ...]:
    return attribute.labels if attribute.labels is not None else tuple(str(i) for i in range(attribute.size))


def _items(attribute: Attribute, chosen) -> list[int]:
    values = chosen if isinstance(chosen, (list, tuple, set, np.ndarray)) else [chosen]
    out = []
    for value in values:
        if isinstance(value, str) and attribute.labels is not None and value in attribute.labels:
            out.append(attribute.labels.index(value))
        elif isinstance(value, (int, np.integer)) and not isinstance(value, bool) and 0 <= value < attribute.size:
            out.append(int(value))
        else:
            raise InvalidParameterError(
                f"The condition on attribute {attribute.name!r} must name its items or labels "
                f"({attribute.domain_text()}). Got {value!r} instead."
            )
    return out
