"""Two generated parts of a reproduction page that come from its spec: "What is run" (the datasets, methods,
sweeps and metrics: :func:`spec_lines`) and "Numbers the text quotes" (:func:`quote_lines`, the spec's
:class:`~dpdist.experiments.Quote` values from the run's summary).

So the page states the parameters the code runs and the values the prose quotes from the generated block,
instead of restating them by hand.
"""

from __future__ import annotations

from typing import Any

from ._claims import STAT_COLUMNS, describe_setting
from ._spec import SWEEP_DATASETS, SWEEP_METHODS, ExperimentSpec
from ._table import ResultsTable

__all__ = ["spec_lines", "quote_lines"]


def spec_lines(spec: ExperimentSpec) -> list[str]:
    """Markdown lines: the run's datasets (with their descriptions), methods (with their parameters), the
    sweeps of its grid, its metrics and repeats."""
    lines = ["### What is run", "", *([spec.description, ""] if spec.description else []),
             f"{spec.repeats} repeats" + (f" (the full run: {spec.full_repeats})" if spec.run == "quick" else "")
             + "; metrics " + ", ".join(_metric(metric) for metric in spec.metrics) + ".", "",
             "| dataset | what it is |", "|---|---|"]
    lines += [f"| `{dataset.key}` | {_escape(_description(dataset))} |" for dataset in spec.datasets]
    lines += ["", "| method | code and parameters | only on |", "|---|---|---|"]
    for method in spec.methods:
        parameters = ", ".join(f"{key}={_value(value)}" for key, value in sorted(method.params.items()))
        grid = ", ".join(f"{key} in {_values(values)}" for key, values in sorted(method.grid.items()))
        lines.append(f"| {_escape(method.label)} | `{_escape(method.reference)}`"
                     + (f" ({_escape(parameters)})" if parameters else "") + (f"; grid {_escape(grid)}" if grid else "")
                     + f" | {_escape(', '.join(method.datasets))} |")
    lines += ["", "| sweep | datasets | methods | parameters |", "|---|---|---|---|"]
    for index, sweep in enumerate(spec.sweeps(), 1):
        datasets = sweep.get(SWEEP_DATASETS)
        methods = sweep.get(SWEEP_METHODS)
        values = "; ".join(f"{key} in {_values(values)}" for key, values in sorted(sweep.items())
                           if key not in (SWEEP_DATASETS, SWEEP_METHODS))
        lines.append(f"| s{index} | {_escape(', '.join(datasets)) if datasets else 'all'} | "
                     f"{_escape(', '.join(methods)) if methods else 'all'} | {_escape(values)} |")
    return lines + [""]


def quote_lines(spec: ExperimentSpec, summary: ResultsTable) -> list[str]:
    """Markdown lines: every row of the run's ``summary`` each of the spec's quotes names (mean and
    standard error over repeats); nothing when the spec has no quote."""
    if not spec.quotes:
        return []
    lines = ["### Numbers the text quotes", "",
             "Means over repeats (standard error) of the rows the prose below quotes, from this run's cells.", "",
             "| quote | method | setting | metric | mean | se |", "|---|---|---|---|---|---|"]
    for quote in spec.quotes:
        rows = summary.select(metric=quote.metric, **quote.where)
        if quote.methods:
            rows = rows.select(method=list(quote.methods))
        if len(rows) == 0:
            lines.append(f"| {_escape(quote.text)} | (no row) | | {_escape(quote.metric)} | | |")
        for row in rows:
            setting = {key: value for key, value in row.items()
                       if key not in STAT_COLUMNS and key not in ("method", "metric") and value is not None}
            lines.append(f"| {_escape(quote.text)} | {_escape(row['method'])} | {_escape(describe_setting(setting))} | "
                         f"{_escape(quote.metric)} | {row['mean']:.4g} | {row['se']:.2g} |")
    return lines + [""]


def _description(dataset) -> str:
    try:
        return dataset.resolve().description
    except Exception as error:  # a dataset that cannot be described here (e.g. a missing file) is named
        return f"(not described: {type(error).__name__})"


def _metric(metric) -> str:
    options = ", ".join(f"{key}={_value(value)}" for key, value in sorted(metric.params.items()))
    name = metric.key if metric.key == metric.name else f"{metric.key} ({metric.name})"
    return name + (f" [{options}]" if options else "")


def _values(values: Any) -> str:
    return "{" + ", ".join(_value(value) for value in values) + "}"


def _value(value: Any) -> str:
    if isinstance(value, (list, tuple)):
        return _values(value)
    return str(value)


def _escape(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
