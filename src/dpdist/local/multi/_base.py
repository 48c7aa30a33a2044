r"""Base of the multi-attribute protocols: records of ``k`` attributes, one report per record.

A multi-attribute protocol holds a public schema (``attributes``, see
:mod:`._schema`) and a budget ``epsilon``; each attribute is randomized by an
*inner* registered protocol (:mod:`._inner`) whose budget the subclass decides
(SPL: :math:`\varepsilon/k` each; SMP and RS+FD: :math:`\varepsilon`).  This base
owns what they share:

* the records and the guarantees (from :class:`~._record.RecordProtocol`);
* the aggregator statistic: the inner statistics, one after another
  (:attr:`statistic_offsets`), preceded by whatever the subclass counts first;
* the estimate: a :class:`~._result.MultiAttributeEstimate` of one estimate per attribute;
* the exact channel of small instances, over the product of the attributes' outputs.

Each subclass states its ``attribute_guarantee`` from its design.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from ... import postprocess as _postprocess
from ..._guarantee import PrivacyGuarantee
from ..._types import ArrayLike
from ..._validation import Options
from ...errors import InvalidParameterError
from .._protocol import ParameterDependentTags, ProtocolTags
from .._registry import available, registered_class
from .._state_validation import statistic_problem
from ..frequency.auto import lower_variance_oracle
from ..numerical._composite import inner_aggregator
from ._groups import client_entry
from ._inner import InnerCodec, build_inner
from ._record import RecordProtocol
from ._records import record_columns
from ._result import MultiAttributeEstimate
from ._schema import Attribute

__all__ = ["MultiAttributeProtocol", "categorical_protocols", "numerical_protocols"]


def categorical_protocols() -> list[str]:
    """Registered frequency oracles an attribute may use: every one without a device memo."""

    return [name for name in available("frequency") if not getattr(registered_class(name), "tags").memoized]


def numerical_protocols() -> list[str]:
    return available("numerical")


def _refine_tags(protocol, base: ProtocolTags) -> ProtocolTags:
    inners = protocol.inner_protocols
    finite = all(inner.tags.finite_channel for inner in inners)
    unbiased = any(attribute.categorical for attribute in protocol.attributes) and protocol._unbiased_inners()
    return dataclasses.replace(base, finite_channel=finite, unbiased=unbiased)


class MultiAttributeProtocol(RecordProtocol):
    """Base of protocols whose users each hold a record of several attributes (see the module docstring).

    Subclasses set :meth:`_budgets`, the report format and ``_privatize``,
    ``_accumulate``, ``_simulate``, :meth:`_attribute_estimate`,
    :meth:`_combine_channel` and :meth:`_categorical_variance`.
    """

    tags = ParameterDependentTags(
        ProtocolTags(kind="multi", finite_channel=True, exact_simulate=True, unbiased=True), _refine_tags
    )
    estimate_options = {"postprocess": Options(tuple(_postprocess.METHODS))}
    #: the statistic entries before the inner statistics (SMP: the count of each attribute's reports)
    _prefix_size: int = 0

    # ------------------------------------------------------------------ set-up
    def _budgets(self, k: int) -> list[float]:
        """The budget of each attribute's inner protocol."""
        raise NotImplementedError

    def _allowed(self, attribute: Attribute) -> list[str]:
        """Registry names the attribute's protocol may be."""
        return categorical_protocols() if attribute.categorical else numerical_protocols()

    def _default_protocol(self, attribute: Attribute, epsilon: float) -> str:
        """The inner protocol of an attribute given none: the GRR/OUE variance rule, or SW."""

        return lower_variance_oracle(epsilon, attribute.size) if attribute.categorical else "sw"

    def _setup(self) -> None:
        attributes = [Attribute.from_dict(spec) for spec in self._params["attributes"]]
        resolved, inners = [], []
        for attribute, epsilon in zip(attributes, self._budgets(len(attributes))):
            allowed = self._allowed(attribute)
            name = attribute.protocol or self._default_protocol(attribute, epsilon)
            inner = build_inner(self.display_name, attribute, name, epsilon, allowed)
            inners.append(inner)
            resolved.append(attribute.with_protocol(inner.name, attribute.options))
        self._attributes = tuple(resolved)
        self._inner = tuple(inners)
        self._params["attributes"] = tuple(attribute.to_dict() for attribute in resolved)
        sizes = [self._prefix_size] + [inner.statistic_size for inner in inners]
        self._offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        self._setup_reports()

    def _setup_reports(self) -> None:
        """Build what the report format needs (codecs); called at the end of set-up."""
        self._codecs = tuple(InnerCodec(inner, attribute.name) for inner, attribute in zip(self._inner, self._attributes))

    # ------------------------------------------------------------------ identity
    @property
    def inner_protocols(self) -> tuple:
        """The protocol of each attribute (at the budget this protocol gives it)."""
        return self._inner

    def _client_design(self) -> dict[str, Any]:
        """Each attribute's randomizer as a client derives it: name, protocol, budget, report format and design.

        The JavaScript client builds each attribute's protocol from the config at the budget this
        protocol gives it and refuses a view whose entry differs (``clients/js/src/protocols/_multi.js``).
        """
        return {"attributes": [client_entry(attribute.name, inner) for attribute, inner in zip(self._attributes, self._inner)]}

    def _circular(self, index: int) -> bool:
        return bool(getattr(self._inner[index], "circular", False))

    def _into_attribute_bounds(self, index: int, column, owner: str) -> tuple[np.ndarray, int]:
        """As the attribute's protocol brings a value into its bounds (``clip=True``): clipped, or wrapped around the
        circle (``opm-circular``), so a record's attribute is randomized as that protocol randomizes the value alone."""
        into = getattr(self._inner[index], "_into_bounds", None)
        return super()._into_attribute_bounds(index, column, owner) if into is None else into(column, owner)

    def _unbiased_inners(self) -> bool:
        return all(inner.tags.unbiased for inner, a in zip(self._inner, self._attributes) if a.categorical)

    @property
    def statistic_offsets(self) -> np.ndarray:
        """Where each attribute's inner statistic starts in the aggregator's statistic (and where the last ends)."""
        return self._offsets[1:].copy()

    @property
    def statistic_size(self) -> int:
        return int(self._offsets[-1])

    @property
    def statistic_dtype(self) -> type:
        """float64 if an inner statistic is float, else int64."""
        dtypes = {np.dtype(inner.statistic_dtype) for inner in self._inner}
        return np.float64 if np.dtype(np.float64) in dtypes else np.int64

    def attribute_statistic(self, statistic: np.ndarray, index: int) -> np.ndarray:
        """Attribute ``index``'s part of a statistic."""
        return statistic[self._offsets[index + 1] : self._offsets[index + 2]]

    # ------------------------------------------------------------------ records
    def _check_fields(self, reports, rows: np.ndarray, invalid: dict[str, np.ndarray]) -> None:
        """Each attribute's field of ``reports[rows]`` checked by its inner format; reasons ``"<attribute>.<reason>"``."""
        for codec in self._codecs:
            _, inner_invalid = codec.inner.check_reports(codec.decode(reports[codec.name][rows]))
            for reason, mask in inner_invalid.items():
                target = invalid.setdefault(f"{codec.name}.{reason}", np.zeros(reports.shape[0], dtype=bool))
                target[rows[mask]] = True

    def _accumulate(self, reports):
        """Each attribute's field through its inner protocol's statistic (SMP, whose reports carry one, overrides)."""
        statistic: np.ndarray = np.zeros(self.statistic_size, dtype=self.statistic_dtype)
        for index, codec in enumerate(self._codecs):
            start, stop = self._offsets[index + 1], self._offsets[index + 2]
            statistic[start:stop] = codec.inner.statistic(codec.decode(reports[codec.name]))
        return statistic

    def _check_statistic(self, statistic, n):
        for index, inner in enumerate(self._inner):
            problem = statistic_problem(inner, self.attribute_statistic(statistic, index), self._attribute_count(statistic, index, n))
            if problem is not None:
                return f"attribute {self._attributes[index].name!r} ({inner.name}): {problem}"
        return None

    def _attribute_count(self, statistic: np.ndarray, index: int, n: int) -> int:
        """How many reports attribute ``index``'s inner statistic was made from."""
        return int(n)

    # ------------------------------------------------------------------ estimation
    def _estimate(self, aggregator, *, postprocess: str = "none") -> MultiAttributeEstimate:
        """One estimate per attribute.

        Parameters
        ----------
        postprocess : str
            Post-processing of the categorical attributes' frequencies (:data:`dpdist.postprocess.METHODS`;
            default ``"none"``: the unbiased estimates whose variance :meth:`variance` gives).
        """
        statistic = aggregator.statistic
        estimates = {}
        for index, attribute in enumerate(self._attributes):
            estimate = self._attribute_estimate(index, statistic, aggregator.n, postprocess)
            estimates[attribute.name] = _restate(estimate, self.epsilon, self.guarantee)
        return MultiAttributeEstimate(
            estimates,
            aggregator.n,
            self.epsilon,
            self.name,
            self.guarantee,
            {"attribute_guarantee": self.attribute_guarantee, **self._estimate_details(statistic, aggregator.n)},
        )

    def _estimate_details(self, statistic: np.ndarray, n: int) -> dict[str, Any]:
        return {}

    def _attribute_estimate(self, index: int, statistic: np.ndarray, n: int, postprocess: str):
        raise NotImplementedError

    def _inner_estimate(self, index: int, statistic: np.ndarray, count: int, postprocess: str):
        """The inner protocol's own estimate from its part of the statistic (``count`` reports)."""

        inner = self._inner[index]
        options = {"postprocess": postprocess} if self._attributes[index].categorical else {}
        return inner.estimate(inner_aggregator(inner, self.attribute_statistic(statistic, index), count), **options)

    def variance(self, n: int, frequencies: ArrayLike | None = None) -> np.ndarray:
        """Analytic variance of the categorical attributes' unbiased frequency estimates, one after another.

        ``frequencies``: the true frequencies in the same layout (``None``: 0 everywhere).
        """
        parts, start = [], 0
        frequencies = None if frequencies is None else np.asarray(frequencies, dtype=np.float64)
        for index, attribute in enumerate(self._attributes):
            if attribute.categorical:
                size = attribute.size
                f = np.zeros(size) if frequencies is None else frequencies[start : start + size]
                parts.append(self._categorical_variance(index, int(n), f))
                start += size
        if not parts:
            raise InvalidParameterError(f"{self.display_name} has no categorical attribute: no frequency variance.")
        return np.concatenate(parts)

    def _categorical_variance(self, index: int, n: int, frequencies: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    # ------------------------------------------------------------------ channel
    def _channel_rows(self, values) -> list[np.ndarray]:
        """Each attribute's inner channel rows for the records ``values`` (every record when ``None``)."""
        if values is None:
            if not all(attribute.categorical for attribute in self._attributes):
                raise InvalidParameterError(
                    f"{self.display_name}.channel needs the input records (it has numerical attributes)."
                )
            grids = np.meshgrid(*[np.arange(a.size) for a in self._attributes], indexing="ij")
            values = np.stack([grid.ravel() for grid in grids], axis=1)
        columns = record_columns(values, self.attribute_names, f"{self.display_name}.channel")
        rows = []
        for index, (attribute, inner) in enumerate(zip(self._attributes, self._inner)):
            column = self._column(index, columns[index], f"{self.display_name}.channel")
            if attribute.categorical:
                rows.append(inner.channel(None)[column.astype(np.int64)])
            else:
                rows.append(inner.channel(inner.from_unit(column)))
        return rows

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Exact ``P[i, y] = Pr[report y | record values[i]]`` for small instances (outputs as :meth:`report_index`)."""
        return self._combine_channel(self._channel_rows(values))

    def _combine_channel(self, rows: list[np.ndarray]) -> np.ndarray:
        raise NotImplementedError

    def _output_counts(self) -> list[int]:
        """The number of outputs of each attribute's inner channel."""
        counts = []
        for attribute, inner in zip(self._attributes, self._inner):
            if attribute.categorical:
                counts.append(inner.channel(np.zeros(1, dtype=np.int64)).shape[1])
            else:
                counts.append(inner.channel(np.array([attribute.interval[0]])).shape[1])
        return counts

    def _inner_report_index(self, index: int, field_values) -> np.ndarray:
        return self._inner[index].report_index(self._codecs[index].decode(field_values))


def _restate(estimate, epsilon: float, guarantee: PrivacyGuarantee):
    """An attribute's estimate stating the record-level guarantee (its own budget kept in ``details``)."""
    details = dict(getattr(estimate, "details", {}) or {})
    details.setdefault("attribute_epsilon", getattr(estimate, "epsilon", None))
    try:
        return dataclasses.replace(estimate, epsilon=epsilon, guarantee=guarantee, details=details)
    except TypeError:  # an estimate without these fields
        return estimate


def _kron_rows(rows: list[np.ndarray]) -> np.ndarray:
    """Row-wise Kronecker products (attribute 0 slowest), shape ``(m, prod of widths)``."""
    out = rows[0]
    for row in rows[1:]:
        out = (out[:, :, None] * row[:, None, :]).reshape(out.shape[0], -1)
    return out


def _mixed_radix(indices: list[np.ndarray], counts: list[int]) -> np.ndarray:
    """The joint output index of per-attribute indices (attribute 0 slowest, as :func:`_kron_rows`)."""
    joint = np.zeros(indices[0].shape[0], dtype=np.int64)
    for index, count in zip(indices, counts):
        joint = joint * count + index
    return joint
