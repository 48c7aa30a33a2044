"""The estimate of a multi-attribute protocol: one estimate per attribute, and their concatenation."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ...errors import InvalidParameterError
from ...estimates import Distribution, FrequencyEstimate, MeanEstimate
from ...privacy import PrivacyGuarantee

__all__ = ["MultiAttributeEstimate"]


def _rows(name: str, estimate: Any) -> dict[str, list]:
    """The table rows of one attribute's estimate (columns of :meth:`MultiAttributeEstimate.table`)."""
    if isinstance(estimate, FrequencyEstimate):
        low, high = estimate.confidence_interval(0.95)
        size = estimate.domain_size
        return {
            "attribute": [name] * size, "item": list(range(size)), "label": estimate.item_names(),
            "estimate": estimate.frequencies.tolist(), "standard_error": estimate.standard_error.tolist(),
            "low": low.tolist(), "high": high.tolist(),
        }
    if isinstance(estimate, Distribution):
        edges = estimate.edges
        size = estimate.probabilities.size
        return {
            "attribute": [name] * size, "item": list(range(size)),
            "label": [f"[{edges[i]:g}, {edges[i + 1]:g})" for i in range(size)],
            "estimate": estimate.probabilities.tolist(), "standard_error": [np.nan] * size,
            "low": [np.nan] * size, "high": [np.nan] * size,
        }
    if isinstance(estimate, MeanEstimate):
        low, high = estimate.confidence_interval(0.95)
        return {
            "attribute": [name], "item": [0], "label": ["mean"], "estimate": [estimate.mean],
            "standard_error": [float(np.sqrt(estimate.variance))], "low": [low], "high": [high],
        }
    summary = estimate.summary()
    return {
        "attribute": [name] * len(summary), "item": list(range(len(summary))), "label": list(summary),
        "estimate": list(summary.values()), "standard_error": [np.nan] * len(summary),
        "low": [np.nan] * len(summary), "high": [np.nan] * len(summary),
    }


@dataclass(frozen=True, repr=False)
class MultiAttributeEstimate:
    """What a multi-attribute protocol estimates: each attribute's estimate, by name.

    Attributes
    ----------
    attributes : dict[str, estimate]
        Each attribute's estimate, in the schema's order: a
        :class:`~dpdist.FrequencyEstimate` for a categorical attribute, a
        :class:`~dpdist.Distribution` or :class:`~dpdist.MeanEstimate` for a
        numerical one (whatever its protocol returns).  Each states the
        protocol's ``guarantee`` (the reports are one record each).
    n : int
        Reports behind the estimate (records).
    epsilon : float
    method : str
        The protocol's registry name.
    guarantee : PrivacyGuarantee
        The record-level guarantee (``"replace"``: any two records of one user).
    details : dict
        ``attribute_guarantee`` (the guarantee for records differing in one
        attribute) and the protocol's extras.
    """

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

    def _categorical(self) -> list[FrequencyEstimate]:
        return [estimate for estimate in self.attributes.values() if isinstance(estimate, FrequencyEstimate)]

    @property
    def frequencies(self) -> np.ndarray:
        """The frequency estimates of the categorical attributes, one after another (schema order)."""
        parts = [estimate.frequencies for estimate in self._categorical()]
        if not parts:
            raise InvalidParameterError(f"{self.method} has no categorical attribute: it estimates no frequencies.")
        return np.concatenate(parts)

    @property
    def variance(self) -> np.ndarray:
        """The analytic variance of each entry of :attr:`frequencies`."""
        parts = [estimate.variance for estimate in self._categorical()]
        if not parts:
            raise InvalidParameterError(f"{self.method} has no categorical attribute: it estimates no frequencies.")
        return np.concatenate(parts)

    def summary(self) -> dict[str, float]:
        """Each attribute's headline numbers, named ``"<attribute>: <name>"``."""
        return {f"{name}: {key}": value for name, estimate in self.attributes.items() for key, value in estimate.summary().items()}

    def table(self) -> dict[str, np.ndarray]:
        """Columns ``attribute``, ``item``, ``label``, ``estimate``, ``standard_error``, ``low``, ``high``.

        One row per item of a categorical attribute (frequency, 95 % interval), per bin of a
        distribution (its mass; no interval) and one for a mean (with its interval).
        """
        columns: dict[str, list] = {}
        for name, estimate in self.attributes.items():
            for key, values in _rows(name, estimate).items():
                columns.setdefault(key, []).extend(values)
        return {
            key: np.asarray(values, dtype=object if key in ("attribute", "label") else None)
            for key, values in columns.items()
        }
