"""The estimate of a key-value protocol: each key's frequency (with its analytic variance) and mean value."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from ..._guarantee import PrivacyGuarantee
from ...estimates import FrequencyEstimate, Interval, Presented
from ...estimates._intervals import json_value
from ..._documents import read_part
from ...estimates._presented import document_lines
from ...estimates._reading import Header, numbers

__all__ = ["KeyValueEstimate"]


@dataclass(frozen=True, repr=False)
class KeyValueEstimate(Presented):
    """What a key-value protocol estimates: the frequency of each key and the mean value of its holders.

    Attributes
    ----------
    frequency : FrequencyEstimate
        Each key's frequency (the share of users holding it), unbiased where every user holds at
        most ``padding_length`` pairs (PCKV) or always (PrivKV), with its analytic variance and
        intervals.
    means : ndarray
        Each key's estimated mean value, in [-1, 1] (the protocol's corrected estimator; ``details``
        says which); NaN (not estimated) for a key whose frequency is not clearly above zero
        (below ``MEAN_MIN_Z`` = 2 standard errors of its estimate: no holders clearly present, so its
        mean would be noise alone), listed in ``details["means_withheld"]`` and said in :meth:`notes`.
    n : int
        Reports behind the estimate (users).
    epsilon : float
    method : str
        The protocol's registry name.
    guarantee : PrivacyGuarantee
        Pure epsilon-LDP for any two sets of one user.
    details : dict
    """

    kind: ClassVar[str] = "key_value"

    frequency: FrequencyEstimate
    means: np.ndarray
    n: int
    epsilon: float
    method: str
    guarantee: PrivacyGuarantee
    details: dict = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"KeyValueEstimate({self.method}, n={self.n}, epsilon={self.epsilon:g}, keys={self.means.size})"

    @property
    def frequencies(self) -> np.ndarray:
        """Each key's estimated frequency."""
        return self.frequency.frequencies

    @property
    def variance(self) -> np.ndarray:
        """The analytic variance of each entry of :attr:`frequencies`."""
        return self.frequency.variance

    def summary(self) -> dict[str, Any]:
        """The most frequent key (an int), its frequency and its mean (NaN where not estimated)."""
        top = int(np.argmax(self.frequencies))
        return {"top key": top, "top key frequency": float(self.frequencies[top]), "top key mean": float(self.means[top])}

    def table(self) -> dict[str, np.ndarray]:
        """``key``, ``frequency``, ``standard_error`` and ``mean`` of every key."""
        return {
            "key": np.arange(self.means.size),
            "frequency": self.frequencies,
            "standard_error": np.sqrt(self.variance),
            "mean": self.means,
        }

    def intervals(self, level: float = 0.95) -> tuple[Interval, ...]:
        """The frequencies' pointwise normal intervals (the means have none)."""
        return self.frequency.intervals(level)

    def _json_fields(self, level: float) -> dict[str, Any]:
        """The keys as the categories of a frequency document (``items``, ``frequencies``, ``standard_error``: what a
        page draws bars of) with each key's ``means`` alongside, and the whole frequency document."""
        return {
            "items": list(range(self.means.size)),
            "labels": None,
            "frequencies": [json_value(value) for value in self.frequencies],
            "standard_error": [json_value(value) for value in np.sqrt(self.variance)],
            "means": [json_value(value) for value in self.means],
            "frequency": self.frequency.to_dict(level),
        }

    @classmethod
    def _from_document(cls, document: dict[str, Any], header: Header) -> "KeyValueEstimate":
        """The estimate of a checked document (:meth:`Presented.from_dict`): the keys' frequencies from ``frequency``
        (a frequency estimate of its own), their means from ``means``."""
        frequency = read_part(FrequencyEstimate.from_dict, document["frequency"], header.owner, "frequency")
        return cls(frequency, numbers(document, "means", header), header.n, header.epsilon, header.method,  # type: ignore[arg-type]
                   header.guarantee, header.details())  # type: ignore[arg-type]

    @classmethod
    def _document_lines(cls, document: dict[str, Any], intervals: list[dict], level: str) -> list[str]:
        """The frequencies' own table, then each key's mean."""
        lines = ["key frequencies:"]
        lines.extend("  " + line for line in document_lines(document["frequency"]))
        lines.append("key means: " + ", ".join("not estimated" if m is None else f"{m:.4g}"
                                                  for m in document["means"]))
        return lines

    def describe(self, truth: Any = None, level: float = 0.95) -> str:
        """The frequencies' description, then the means."""
        means = ", ".join("not estimated" if np.isnan(m) else f"{m:.3f}" for m in self.means[:20]) + (" ..." if self.means.size > 20 else "")
        notes = "".join(f"\n  note: {note}" for note in self.notes() if note.startswith("means not estimated"))
        return self.frequency.describe(truth, level) + f"\n  means of the keys: {means}" + notes

    def figure(self, *, label: str | None = None, truth: Any = None, xlabel: str | None = None, level: float = 0.95) -> Any:
        """The frequencies' figure (the means are in :meth:`table`)."""
        return self.frequency.figure(label=label, truth=truth, xlabel=xlabel or "key", level=level)

    def plot(self, ax: Any = None, **kwargs: Any) -> Any:
        """The frequencies' plot on ``ax``."""
        return self.frequency.plot(ax, **kwargs)
