"""What ``explain`` returns: the expected errors of one method at each epsilon, with where each number comes from."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .._documents import read_dataclass

__all__ = ["Expected", "Prediction", "Explanation", "METRICS"]

#: The metrics, what each measures and in which unit.
METRICS = {
    "mse": "mean over the items of the squared error of each item's frequency (unbiased estimate, no post-processing)",
    "w1": "1-Wasserstein distance between the estimated and the data's CDF, in the data's units",
    "ks": "Kolmogorov-Smirnov distance between the estimated and the data's CDF (0 to 1)",
    "mean_rmse": "root mean squared error of the estimated mean, in the data's units",
    "quantile_mae": "mean absolute error of the released quantiles, in the data's units",
    "interval": "half-width of the 95% interval of one item's frequency (frequency protocols), of the median "
                "(distributions) or of the mean (mean estimates)",
}


@dataclass(frozen=True)
class Expected:
    """One expected error: its value, the standard error of that value (0 when analytic) and its source."""

    value: float
    standard_error: float
    source: str  # "analytic" or "simulation"

    def to_dict(self) -> dict[str, Any]:
        return {"value": _finite(self.value), "standard_error": _finite(self.standard_error), "source": self.source}

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> "Expected":
        """The error whose :meth:`to_dict` is ``document`` (``null``: NaN, not computed); refused by field name
        otherwise (:class:`~dpdist.errors.MalformedDocumentError`)."""
        return read_dataclass(cls, document)


@dataclass(frozen=True)
class Prediction:
    """The expected errors of one release at one epsilon (and, per person, one ``max_contributions``)."""

    epsilon: float
    n: int
    errors: dict[str, Expected]
    max_contributions: int | None = None

    def to_dict(self) -> dict[str, Any]:
        document = {"epsilon": self.epsilon, "n": self.n, "errors": {k: v.to_dict() for k, v in self.errors.items()}}
        if self.max_contributions is not None:
            document["max_contributions"] = self.max_contributions
        return document

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> "Prediction":
        """The prediction whose :meth:`to_dict` is ``document``; refused by field name otherwise."""
        return read_dataclass(cls, document)


@dataclass(frozen=True, repr=False)
class Explanation:
    """Expected errors of a release before any data are touched: one :class:`Prediction` per epsilon.

    Attributes
    ----------
    method : str
        The protocol (``"oue"``) or release (``"central.cdf"``).
    model : {"local", "central"}
    kind : {"frequency", "numerical", "mean", "key_value"}
        ``"key_value"``: the errors of the keys' frequencies.
    n : int
        Users (local), records, or persons (a release per person: ``max_contributions`` predicted).
    shape : str
        The data shape of the simulations and of the analytic variances (:data:`dpdist.accuracy.SHAPES`).
    predictions : tuple of Prediction
        In increasing epsilon (and, per person, increasing ``max_contributions`` at each epsilon).
    parameters : dict
        The method's other parameters (a protocol's config without epsilon, a release's arguments).
    repeats, seed : int
        The simulation's runs per epsilon and root seed (stored so the numbers can be reproduced).
    notes : tuple of str
        How each number was obtained.
    """

    method: str
    model: str
    kind: str
    n: int
    shape: str
    predictions: tuple
    parameters: dict = field(default_factory=dict)
    repeats: int = 0
    seed: int = 0
    notes: tuple = ()

    @property
    def epsilons(self) -> np.ndarray:
        return np.array([p.epsilon for p in self.predictions])

    @property
    def bounds(self) -> np.ndarray | None:
        """Each prediction's ``max_contributions`` (a release per person), else ``None``."""
        if all(p.max_contributions is None for p in self.predictions):
            return None
        return np.array([p.max_contributions for p in self.predictions])

    @property
    def metrics(self) -> list[str]:
        return list(dict.fromkeys(name for p in self.predictions for name in p.errors))

    def __getitem__(self, metric: str) -> np.ndarray:
        """The expected values of ``metric`` at each epsilon."""
        return np.array([p.errors[metric].value if metric in p.errors else math.nan for p in self.predictions])

    def table(self) -> dict[str, np.ndarray | list]:
        """Named columns: ``epsilon``, ``n``, and per metric its value, ``<metric>_se`` and ``<metric>_source``."""
        columns: dict[str, Any] = {"epsilon": self.epsilons, "n": np.array([p.n for p in self.predictions])}
        if self.bounds is not None:
            columns["max_contributions"] = self.bounds
        for metric in self.metrics:
            cells = [p.errors.get(metric) for p in self.predictions]
            columns[metric] = np.array([c.value if c else math.nan for c in cells])
            columns[f"{metric}_se"] = np.array([c.standard_error if c else math.nan for c in cells])
            columns[f"{metric}_source"] = [c.source if c else "" for c in cells]
        return columns

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe form (what ``dpdist explain --json`` prints and the service's explain endpoint returns)."""
        return {
            "method": self.method, "model": self.model, "kind": self.kind, "n": self.n, "shape": self.shape,
            "parameters": self.parameters, "repeats": self.repeats, "seed": self.seed, "notes": list(self.notes),
            "metrics": {name: METRICS[name] for name in self.metrics},
            "predictions": [p.to_dict() for p in self.predictions],
        }

    @classmethod
    def from_dict(cls, document: dict[str, Any]) -> "Explanation":
        """The explanation whose :meth:`to_dict` is ``document`` (what the cache of :func:`~dpdist.accuracy.explain`
        holds); a field missing, of another type or NaN, or a ``metrics`` entry other than :data:`METRICS` says, is
        refused by name (:class:`~dpdist.errors.MalformedDocumentError`)."""
        return read_dataclass(cls, document, types_of={"predictions": tuple[Prediction, ...], "notes": tuple[str, ...]})

    def describe(self) -> str:
        """A text table: epsilon, then each metric as ``value ±se`` (``±`` only for simulated values)."""
        per_person = self.bounds is not None
        header = ["epsilon"] + (["max_contributions"] if per_person else []) + self.metrics
        rows = []
        for p in self.predictions:
            row = [f"{p.epsilon:g}"] + ([str(p.max_contributions)] if per_person else [])
            for metric in self.metrics:
                cell = p.errors.get(metric)
                row.append("-" if cell is None else _cell(cell))
            rows.append(row)
        widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
        who = " persons" if per_person else ""
        lines = [f"{self.method} ({self.model}), n = {self.n:,}{who}, data shape {self.shape!r}"]
        lines += ["  ".join(text.rjust(width) for text, width in zip(row, widths)) for row in [header] + rows]
        return "\n".join(lines + [f"  {note}" for note in self.notes])

    def __repr__(self):
        return f"Explanation(method={self.method!r}, n={self.n}, epsilons={self.epsilons.tolist()}, metrics={self.metrics})"

    def bar_label(self, metric: str) -> str:
        """What a panel's line and bars are: a simulated mean with bars of 2 standard errors, or an analytic value."""
        sources = {p.errors[metric].source for p in self.predictions if metric in p.errors}
        if sources == {"analytic"}:
            return "analytic: exact, no bars"
        return f"mean of {self.repeats} runs;\nbars ±2 se of it (≈95%)"

    def plot(self, ax: Any = None, metrics: Sequence[str] | None = None) -> Any:
        """Expected error against epsilon (log-log), one panel per metric, with the simulation's 2-se bars.

        Each panel's legend says what its line and its bars are (:meth:`bar_label`); the y axis names the metric.
        """
        import matplotlib.pyplot as plt  # lazy: loads matplotlib (1-2 s)

        metrics = [m for m in (metrics or self.metrics) if m in self.metrics]
        if ax is None:
            figure, grid = plt.subplots(1, len(metrics), figsize=(3.6 * len(metrics), 3.2), squeeze=False)
            axes = list(grid[0])
        else:
            axes, figure = [ax], ax.figure
            metrics = metrics[:1]
        for axis, metric in zip(axes, metrics):
            self._panel(axis, metric)
        figure.suptitle(f"{self.method}: expected error at n = {self.n:,} ({self.shape} data)", fontsize=10)
        figure.tight_layout()
        return axes[0]


    def _panel(self, axis: Any, metric: str) -> None:
        """One metric against epsilon (a line), or against max_contributions (a line per epsilon, per person)."""
        values = self[metric]
        errors = 2 * np.array([p.errors[metric].standard_error if metric in p.errors else 0 for p in self.predictions])
        bounds = self.bounds
        x, lines = (self.epsilons, [np.ones(values.size, dtype=bool)]) if bounds is None else \
            (bounds, [self.epsilons == epsilon for epsilon in np.unique(self.epsilons)])
        for line in lines:
            label = self.bar_label(metric) if bounds is None else f"epsilon {self.epsilons[line][0]:g}"
            axis.errorbar(x[line], values[line], yerr=errors[line], marker="o", ms=3, capsize=2, label=label)
        axis.legend(fontsize=6, loc="best")
        axis.set_ylabel(f"expected {metric}", fontsize=8)
        axis.set_xscale("log", base=2)
        ticks = np.unique(x)
        axis.set_xticks(ticks, [f"{e:g}" for e in ticks])
        axis.minorticks_off()
        if np.all(values[np.isfinite(values)] > 0):
            axis.set_yscale("log")
        axis.set_xlabel("epsilon" if bounds is None else "max_contributions (rows kept per person)")
        axis.set_title(metric, fontsize=9)


def _cell(expected: Expected) -> str:
    if expected.source == "analytic" or not expected.standard_error:
        return f"{expected.value:.4g}"
    return f"{expected.value:.4g} ±{expected.standard_error:.2g}"


def _finite(value: float):
    return float(value) if math.isfinite(value) else None
