"""Experiment specs as data: datasets x methods x parameter grid x metrics x repeats.

A spec is a frozen :class:`ExperimentSpec`, written in Python or read from TOML by
:func:`load_spec`.  Its cells (one dataset, one method, one point of the grid, one
repeat) are enumerated by :meth:`ExperimentSpec.cells`; each cell's random streams
come from :func:`cell_seeds`, keyed by stable ids of the names, never by position, so
adding a method, a dataset or a grid value never changes another cell's numbers.
"""

from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Callable, Sequence

from .. import datasets
from .. import metrics as metric_module
from .._rng import canonical_numbers, stable_id  # noqa: F401  (part of this module's API)
from .._validation import (CallableRule, Described, Dict, Distinct, Registered, Satisfies, Integer, InstanceOf, Interval, Items, OneOf, Optional,
                           Options, Text, check_param, validate_params)
from ..errors import InvalidParameterError
from ._checks import better_than
from ._grid_check import (DATASET_PREFIX, GRID, METRIC_PREFIX, SWEEP_DATASETS, SWEEP_KEYS,  # noqa: F401  (names of this module)
                          SWEEP_METHODS, check_grid)
from ._methods import available_methods

if TYPE_CHECKING:
    from ..datasets import Dataset

__all__ = [
    "DatasetRef",
    "MethodSpec",
    "MetricSpec",
    "FigureSpec",
    "Claim",
    "Quote",
    "ExperimentSpec",
    "Cell",
    "stable_id",
    "canonical_numbers",
    "load_spec",
]

# Tags of the three independent streams of a cell (see cell_seeds).
DATA_STREAM, METHOD_STREAM, METRIC_STREAM = 1, 2, 3


def _normalize_sweep(sweep) -> dict:
    out: dict[str, Any] = {key: list(values) for key, values in sweep.items() if key not in SWEEP_KEYS}
    for key in SWEEP_KEYS:
        if key in sweep:
            out[key] = tuple(sweep[key])
    return out


def _normalize_grid(grid):
    """A grid (a mapping, or a non-empty sequence of them: the table of ExperimentSpec) with lists of values."""
    if isinstance(grid, Mapping):
        return _normalize_sweep(dict(grid))
    return [_normalize_sweep(sweep) for sweep in grid]


def _merge_grids(grid, override):
    """``--quick`` grid: a list replaces the grid; a dict updates every sweep."""
    if isinstance(override, (list, tuple)):
        return list(override)
    if isinstance(grid, list):
        return [{**sweep, **override} for sweep in grid]
    return {**grid, **override}


@validate_params({}, relations=(
    Satisfies("name", Registered(datasets.available, "a registered dataset name"), "file", absent=True,
              why="or a file: {file = ..., column = ...}", counterexample={"name": "no-such-dataset"}),))
@dataclass(frozen=True)
class DatasetRef:
    """A dataset by name (registry), or by file and column, with optional binning/permutation."""

    name: str | None = None
    bins: int | None = None
    permute: int | None = None
    file: str | None = None
    column: str | None = None
    bounds: tuple[float, float] | None = None
    label: str | None = None
    spread: float | None = None

    @classmethod
    def of(cls, value: Any) -> "DatasetRef":
        if isinstance(value, DatasetRef):
            return value
        if isinstance(value, str):
            return cls(name=value)
        value = dict(value)  # a dict of DatasetRef's fields: ExperimentSpec's table (_DATASET)
        if value.get("bounds") is not None:
            value["bounds"] = tuple(float(v) for v in value["bounds"])
        return cls(**value)

    @property
    def key(self) -> str:
        """The name the results table uses."""
        if self.label:
            return self.label
        base = str(self.name) if self.file is None else f"{Path(self.file).name}:{self.column}"
        if self.spread is not None:
            base += f"[spread={self.spread:g}]"
        if self.bins is not None:
            base += f"[bins={self.bins}]"
        if self.permute is not None:
            base += f"[permuted={self.permute}]"
        return base

    def resolve(self) -> Dataset:
        """The :class:`~dpdist.datasets.Dataset` (loaded lazily by the caller)."""

        if self.file is None:
            return datasets.get(str(self.name), bins=self.bins, permute=self.permute, spread=self.spread)
        base = datasets.from_file(self.file, str(self.column), bounds=self.bounds)
        return datasets.get(base, bins=self.bins, permute=self.permute, spread=self.spread)


@dataclass(frozen=True)
class MethodSpec:
    """A method under a label: ``method`` (registry or protocol name, or a top-level callable)
    with fixed ``params``, an optional method-specific ``grid`` (crossed with the spec's), an
    optional list of the dataset keys it runs on (``datasets``; empty means all) and an
    optional list of the metric keys computed on its estimates (``metrics``; empty means
    all), e.g. a mean-only protocol scored only by mean and variance errors."""

    label: str
    method: Any = None
    params: dict = field(default_factory=dict)
    grid: dict = field(default_factory=dict)
    datasets: tuple = ()
    metrics: tuple = ()

    @classmethod
    def of(cls, value: Any) -> "MethodSpec":
        if isinstance(value, MethodSpec):
            return value
        if isinstance(value, str):
            return cls(label=value, method=value)
        value = dict(value)  # a dict with 'label' or 'method': ExperimentSpec's table (_METHOD)
        label = value.pop("label", None) or str(value.get("method"))
        method = value.pop("method", label)
        params = dict(value.pop("params", {}))
        grid = {key: list(values) for key, values in dict(value.pop("grid", {})).items()}
        datasets = tuple(value.pop("datasets", ()))
        metrics = tuple(value.pop("metrics", ()))
        params.update(value)  # remaining keys are fixed parameters
        return cls(label=label, method=method, params=params, grid=grid, datasets=datasets, metrics=metrics)

    def __post_init__(self):
        if self.method is None:
            object.__setattr__(self, "method", self.label)

    @property
    def reference(self) -> str:
        """What identifies the method's code in cache keys."""
        method = self.method
        if isinstance(method, str):
            return method
        return f"{getattr(method, '__module__', '?')}.{getattr(method, '__qualname__', repr(method))}"


#: Metrics of :mod:`dpdist.metrics` that compare frequency vectors; the others compare
#: numerical distributions.  A metric runs only on datasets of its ``kind``.
FREQUENCY_METRICS = frozenset({"mse", "mse_top_k", "l1", "l2", "true_false_positives"})


def _metric_functions() -> list[str]:
    """The functions of dpdist.metrics a metric may name."""
    return sorted(name for name in getattr(metric_module, "__all__", []) if name[0].islower())


@validate_params({"kind": Optional(Options(("numerical", "categorical"))),
                  "name": OneOf((Registered(_metric_functions, "a function of dpdist.metrics"),
                                 Described(Text(pattern=r"(?s)[^:]+:.+"), "a 'module:function' reference")),
                                f"a function of dpdist.metrics, one of {_metric_functions()}, or a "
                                "'module:function' reference")})
@dataclass(frozen=True)
class MetricSpec:
    """A metric of :mod:`dpdist.metrics` by name, with keyword ``params``, a column ``label``
    and the dataset ``kind`` it applies to (inferred from the name by default)."""

    name: str
    params: dict = field(default_factory=dict)
    label: str | None = None
    kind: str | None = None

    def __post_init__(self):
        if self.kind is None:
            kind = "categorical" if self.name in FREQUENCY_METRICS else "numerical"
            object.__setattr__(self, "kind", kind)

    @classmethod
    def of(cls, value: Any) -> "MetricSpec":
        if isinstance(value, MetricSpec):
            return value
        if isinstance(value, str):
            return cls(name=value)
        value = dict(value)  # a dict with 'name': ExperimentSpec's table (_METRIC)
        name = value.pop("name")
        label = value.pop("label", None)
        kind = value.pop("kind", None)
        params = dict(value.pop("params", {}))
        params.update(value)
        return cls(name=name, params=params, label=label, kind=kind)

    @property
    def key(self) -> str:
        if self.label:
            return self.label
        if not self.params:
            return self.name
        return self.name + "[" + ",".join(f"{k}={v}" for k, v in sorted(self.params.items())) + "]"


@dataclass(frozen=True)
class FigureSpec:
    """One figure of a paper: ``y`` (a metric key) against ``x`` (a parameter), one line per
    ``series`` value, one panel per ``panels`` value, rows restricted by ``where``."""

    name: str
    title: str = ""
    x: str = "epsilon"
    y: str | tuple[str, ...] = ""  # a metric key, or several (one line each, series = "metric")
    series: str = "method"
    panels: str | None = "dataset"
    where: dict = field(default_factory=dict)
    logx: bool = False
    logy: bool = False
    xlabel: str | None = None
    ylabel: str | None = None
    datasets: tuple = ()
    methods: tuple = ()

    @classmethod
    def of(cls, value: Any) -> "FigureSpec":
        if isinstance(value, FigureSpec):
            return value
        value = dict(value)  # a dict of FigureSpec's fields: ExperimentSpec's table (_FIGURE)
        for key in ("datasets", "methods"):
            if key in value:
                value[key] = tuple(value[key])
        return cls(**value)


@validate_params({"check": CallableRule("a callable check(table) -> (outcome, explanation)")})
@dataclass(frozen=True)
class Claim:
    """A claim of the paper: ``check(table) -> (outcome, explanation)``.

    ``outcome`` is one of :data:`~dpdist.experiments.OUTCOMES`; ``table`` is the summary
    :class:`~dpdist.experiments.ResultsTable`.  ``check`` must be picklable data-like
    (e.g. :func:`~dpdist.experiments.better_than`) or a top-level function.

    What the claim is about, for the report (docs/explanation/verdicts.md, "Scope of a claim"):

    ``data``
        The data the paper states the claim for, in its words, and the stand-in the check reads
        ("smooth data (Taxi pickup times); stand-in: flights-departure in 1000 bins").
    ``artefact``
        A known artefact of that stand-in that bears on the claim, with its reason (empty: none
        known); such a claim is reported beside the same claim on a stand-in without it.
    ``group``
        A key shared by the claims that check one paper claim on different stand-ins; the report
        shows them side by side.
    """

    text: str
    check: Callable
    figure: str | None = None
    data: str = ""
    artefact: str = ""
    group: str = ""


@dataclass(frozen=True)
class Quote:
    """Summary values a reproduction page's prose quotes: the mean (and standard error) of ``metric`` of
    every row that matches ``where`` (``{column: value or list of values}``) and, when given, of the
    ``methods``.  The page's generated block lists them under ``text`` (:mod:`._pages`), so the prose
    quotes numbers the code computes from the recorded cells instead of copying them by hand."""

    text: str
    metric: str
    where: dict = field(default_factory=dict)
    methods: tuple = ()


@dataclass(frozen=True)
class Cell:
    """One unit of work: a dataset, a method, a grid point and a repeat."""

    dataset: DatasetRef
    method: MethodSpec
    params: tuple  # sorted (name, value) pairs
    repeat: int

    @property
    def param_dict(self) -> dict:
        return dict(self.params)


_DATASET_FIELDS = tuple(item.name for item in fields(DatasetRef))
#: a dataset of an experiment (DatasetRef.of)
_DATASET = OneOf((Text(), InstanceOf(DatasetRef, "a DatasetRef"),
                  Dict(allowed=_DATASET_FIELDS, values=(("bounds", Optional(Items(Interval(), "two numbers"))),))),
                 f"a name, a DatasetRef or a dict with keys among {', '.join(_DATASET_FIELDS)}")
#: a method of an experiment (MethodSpec.of)
_METHOD = OneOf((Text(), InstanceOf(MethodSpec, "a MethodSpec"), Dict(required=("method",)), Dict(required=("label",))),
                "a name, a MethodSpec or a dict with 'method' (or 'label')")
#: a metric of an experiment (MetricSpec.of)
_METRIC = OneOf((Text(), InstanceOf(MetricSpec, "a MetricSpec"), Dict(required=("name",))),
                "a name, a MetricSpec or a dict with 'name'")
_FIGURE_FIELDS = tuple(item.name for item in fields(FigureSpec))
#: a figure of an experiment (FigureSpec.of)
_FIGURE = OneOf((InstanceOf(FigureSpec, "a FigureSpec"), Dict(allowed=_FIGURE_FIELDS)),
                f"a FigureSpec or a dict with keys among {', '.join(_FIGURE_FIELDS)}")


@validate_params({
    "repeats": Integer(low=1),
    "seed": Integer(low=0),
    "datasets": Items(_DATASET, "a non-empty sequence of datasets (names, dicts or DatasetRefs)", min_length=1),
    "methods": Items(_METHOD, "a non-empty sequence of methods (names, dicts or MethodSpecs)", min_length=1),
    "metrics": Items(_METRIC, "a non-empty sequence of metrics (names, dicts or MetricSpecs)", min_length=1),
    "figures": Items(_FIGURE, "a sequence of figures (FigureSpecs or dicts)"),
    "grid": GRID,
    "claims": Items(InstanceOf(Claim, "a Claim(text, check)"), "a sequence of Claim(text, check)"),
})
@dataclass(frozen=True)
class ExperimentSpec:
    """An experiment as data.

    Parameters
    ----------
    name : str
        Short name (``dpdist reproduce NAME``).
    datasets : sequence of str, dict or DatasetRef
    methods : sequence of str, dict or MethodSpec
    grid : dict of name -> list, or list of such dicts
        Parameters crossed for every method (e.g. ``{"epsilon": [0.5, 1, 2]}``).  The
        parameter ``n`` is the number of users drawn from the dataset (default: all).
        A list of dicts is a union of sweeps (one per paper figure, e.g. epsilon at a
        fixed d and d at a fixed epsilon); a point in several sweeps is one cell.  A
        sweep may hold ``"datasets": [keys]`` and ``"methods": [labels]`` to run only
        on those datasets / methods.  Grid
        parameters ``dataset_bins`` / ``dataset_permute`` override the dataset's
        ``bins`` / ``permute`` (same users for every value); ``metric_<name>`` parameters
        go to the metrics that take ``<name>`` (not to the method, and not into the
        method's random stream, so one randomization is scored at every value).
    metrics : sequence of str, dict or MetricSpec
    repeats : int
    seed : int
        Root seed of every cell's streams.
    figures, claims : sequences of FigureSpec and Claim
    quick : dict
        Overrides for ``--quick`` (e.g. ``{"repeats": 2, "grid": {...}}``).
    title, paper, description : str
    run : str
        ``"full"``, or ``"quick"`` once :meth:`with_options` applied the ``--quick``
        overrides (reports mark quick runs: their verdicts rest on fewer repeats and a
        smaller grid than the paper's).
    full_repeats : int, optional
        The full spec's repeats, set by :meth:`with_options` on a quick spec (the report says which
        claims the quick run cannot decide and whether the full run can).
    quotes : sequence of Quote
        Summary values the page of the reproduction quotes (listed in its generated block).
    """

    name: str
    datasets: Sequence[Any]  # given as str, dict or DatasetRef; held as a tuple of DatasetRef
    methods: Sequence[Any]  # str, dict or MethodSpec; held as MethodSpec
    grid: Any  # a dict of name -> list, or a list of such dicts (normalized)
    metrics: Sequence[Any]  # str, dict or MetricSpec; held as MetricSpec
    repeats: int = 10
    seed: int = 0
    figures: Sequence[Any] = ()  # FigureSpec or dict; held as FigureSpec
    claims: Sequence[Claim] = ()
    quick: dict = field(default_factory=dict)
    title: str = ""
    paper: str = ""
    description: str = ""
    run: str = "full"
    full_repeats: int | None = None
    quotes: Sequence[Quote] = ()

    def __post_init__(self):
        object.__setattr__(self, "datasets", tuple(DatasetRef.of(d) for d in self.datasets))
        object.__setattr__(self, "methods", tuple(MethodSpec.of(m) for m in self.methods))
        object.__setattr__(self, "metrics", tuple(MetricSpec.of(m) for m in self.metrics))
        object.__setattr__(self, "figures", tuple(FigureSpec.of(f) for f in self.figures))
        # the grid's keys and values, now, not in every cell (its table checked a dict or a list of dicts)
        check_grid(self.name, [self.grid] if isinstance(self.grid, Mapping) else list(self.grid), list(self.methods))
        object.__setattr__(self, "grid", _normalize_grid(self.grid))
        for kind, keys in (
            ("dataset", [d.key for d in self.datasets]),
            ("method", [m.label for m in self.methods]),
            ("metric", [m.key for m in self.metrics]),
        ):
            check_param(f"ExperimentSpec {self.name!r}", f"{kind}s", keys, Distinct(Items(None, ""), f"{kind}s of "
                                                                                     "distinct names (no duplicate)"))
        # at least one dataset, one method and one metric: the table
        self._check_names()

    def _check_names(self) -> None:
        """Fail now, not in every cell: datasets, methods and metrics must exist, claims be Claims."""

        # the datasets: registered names or files (DatasetRef's table)
        methods = available_methods()
        for method in self.methods:
            if not callable(method.method) and method.method not in methods:
                raise InvalidParameterError(
                    f"The method {method.label!r} of ExperimentSpec {self.name!r} names {method.method!r}; "
                    f"allowed: a top-level callable or one of {methods}."
                )
        # the metrics: functions of dpdist.metrics or 'module:function' (MetricSpec's table)
        for index, quote in enumerate(self.quotes, 1):
            if not isinstance(quote, Quote) or quote.metric.split(".")[0] not in {m.key for m in self.metrics}:
                raise InvalidParameterError(
                    f"The quote {index} of ExperimentSpec {self.name!r} must be a Quote(text, metric, where) of one of "
                    f"the spec's metric keys {[m.key for m in self.metrics]}. Got {quote!r} instead."
                )
        # the claims are Claims, whose check is callable: the tables of ExperimentSpec and Claim

    # ------------------------------------------------------------------ variants
    def with_options(self, *, quick: bool = False, repeats: int | None = None, seed: int | None = None) -> ExperimentSpec:
        """The spec with the ``quick`` overrides and/or another number of repeats or root seed."""
        spec = self
        if quick and self.quick:
            overrides = dict(self.quick)
            if "grid" in overrides:
                overrides["grid"] = _merge_grids(self.grid, overrides["grid"])
            spec = replace(spec, **overrides)
        if quick:
            spec = replace(spec, run="quick", full_repeats=self.full_repeats or self.repeats)
        if repeats is not None:
            spec = replace(spec, repeats=repeats)
        if seed is not None:
            spec = replace(spec, seed=seed)
        return spec

    def figure_names(self) -> list[str]:
        return [figure.name for figure in self.figures]

    def for_figure(self, figure: str) -> "ExperimentSpec":
        """Only what ``figure`` needs: its datasets/methods (when it lists them) and claims."""
        chosen = [f for f in self.figures if f.name == figure]
        if not chosen:
            raise InvalidParameterError(
                f"The spec {self.name!r} has no figure {figure!r}; its figures are {self.figure_names()}."
            )
        (fig,) = chosen
        datasets = [d for d in self.datasets if not fig.datasets or d.key in fig.datasets]
        methods = [m for m in self.methods if not fig.methods or m.label in fig.methods]
        claims = [c for c in self.claims if c.figure == figure]
        return replace(
            self, name=f"{self.name}:{figure}", datasets=datasets, methods=methods, figures=[fig], claims=claims
        )

    # ------------------------------------------------------------------ cells
    def cells(self) -> list[Cell]:
        """Every cell, in spec order (datasets, methods, grid, repeats)."""
        out = []
        for dataset in self.datasets:
            for method in self.methods:
                if method.datasets and dataset.key not in method.datasets:
                    continue
                seen = set()
                for sweep in self.sweeps():
                    only = sweep.get(SWEEP_DATASETS)
                    if only is not None and dataset.key not in only:
                        continue
                    only = sweep.get(SWEEP_METHODS)
                    if only is not None and method.label not in only:
                        continue
                    grid = {k: v for k, v in sweep.items() if k not in SWEEP_KEYS}
                    grid.update(method.grid)
                    names = sorted(grid)
                    for point in itertools.product(*(grid[name] for name in names)):
                        params = tuple(zip(names, point))
                        if params in seen:  # the same point in two sweeps is one cell
                            continue
                        seen.add(params)
                        for repeat in range(self.repeats):
                            out.append(Cell(dataset, method, params, repeat))
        return out

    def sweeps(self) -> list[dict]:
        """The grid as a list of sweeps (a dict grid is one sweep)."""
        return list(self.grid) if isinstance(self.grid, list) else [self.grid]

    def parameter_names(self) -> list[str]:
        names = set()
        for sweep in self.sweeps():
            names |= set(sweep) - set(SWEEP_KEYS)
        for method in self.methods:
            names |= set(method.grid)
        return sorted(names)


def cell_seeds(cell: Cell, root_seed: int) -> dict[str, list[int]]:
    """Entropy lists for ``numpy.random.default_rng`` of a cell's three streams.

    * data: ``[1, id(dataset), n, repeat, root_seed]`` -- the users' values, shared by
      every method and every epsilon (paired comparisons);
    * method: ``[2, id(dataset), id(method label), id(params), repeat, root_seed]``, where
      ``params`` leaves out the ``metric_*`` parameters (they only change the scoring);
    * metric: ``[3, id(dataset), n, repeat, root_seed]`` -- e.g. the random range
      queries, the same for every method.

    Ids are :func:`stable_id` of names (32-bit BLAKE2b), so they do not depend on the
    order of datasets, methods or grid values in the spec.
    """
    params = cell.param_dict
    n = params.get("n", 0)
    dataset_id = stable_id("dataset", cell.dataset.key)
    method_params = {k: v for k, v in params.items() if not k.startswith(METRIC_PREFIX)}
    return {
        "data": [DATA_STREAM, dataset_id, int(n or 0), cell.repeat, root_seed],
        "method": [
            METHOD_STREAM,
            dataset_id,
            stable_id("method", cell.method.label),
            stable_id("params", sorted(method_params.items())),
            cell.repeat,
            root_seed,
        ],
        "metric": [METRIC_STREAM, dataset_id, int(n or 0), cell.repeat, root_seed],
    }


# ---------------------------------------------------------------------- TOML
_CLAIM_REQUIRED = ("text", "metric", "better", "worse")
_CLAIM_OPTIONAL = ("figure", "where", "margin", "column", "min_losses")
#: a ``[[claims]]`` table of a TOML spec: a :func:`better_than` rule with its text
_CLAIM = Dict("a table ([[claims]])", required=_CLAIM_REQUIRED, allowed=_CLAIM_REQUIRED + _CLAIM_OPTIONAL)
#: a TOML spec's top-level keys (:func:`load_spec`)
_SPEC = Dict("a TOML document", allowed=("name", "title", "paper", "description", "repeats", "seed", "datasets",
                                         "methods", "metrics", "grid", "quick", "figures", "claims"))


def load_spec(path: str | Path) -> ExperimentSpec:
    """Read an :class:`ExperimentSpec` from a TOML file.

    Top-level keys: ``name``, ``title``, ``paper``, ``description``, ``repeats``, ``seed``,
    ``datasets`` (names or inline tables), ``methods`` (names or tables with ``method``,
    ``label``, ``params``, ``grid``), ``metrics`` (names or tables with ``name``, ``label``
    and parameters), tables ``[grid]`` and ``[quick]``, arrays of tables ``[[figures]]``
    and ``[[claims]]`` (``text``, ``figure`` and a :func:`better_than` rule: ``metric``,
    ``better``, ``worse``, optional ``where`` and ``margin``).
    """
    if sys.version_info >= (3, 11):
        import tomllib  # lazy: which module is imported depends on this branch
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # pyright: ignore[reportMissingImports]  # lazy: tomli is the TOML reader before Python 3.11 only (not installed on 3.11)

    path = Path(path)
    try:
        with path.open("rb") as handle:
            data = tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise InvalidParameterError(f"Cannot read the experiment spec {str(path)!r}: {error}") from None
    owner = f"the spec {str(path)!r}"
    data = check_param(owner, "keys", data, _SPEC)
    claims = []
    for index, entry in enumerate(data.pop("claims", []), 1):
        entry = dict(check_param(owner, f"claim {index}", entry, _CLAIM))
        text, figure = entry.pop("text"), entry.pop("figure", None)
        claims.append(Claim(text=text, figure=figure, check=better_than(**entry)))
    data.setdefault("name", path.stem)
    data.setdefault("grid", {})
    return ExperimentSpec(claims=tuple(claims), **data)
