"""Experiment runner: specs, datasets x methods x grids, results, plots and reports.

>>> from dpdist import experiments
>>> spec = experiments.get_spec("toy")
>>> result = experiments.reproduce(spec, "out/toy", jobs=2)
>>> result.summary.select(metric="mse", epsilon=1.0).rows

A spec is data (:class:`ExperimentSpec`, or TOML read by :func:`load_spec`); every
registered local protocol is a method; metrics are named functions of
:mod:`dpdist.metrics`; claims are checks of the summary table, built on one claims
library (:func:`better_than`, :func:`lowest_of`, :class:`RatioWithin`, :func:`z_score`,
:func:`group_settings`, ...).  This package runs specs; the papers' specs live in
:mod:`dpdist.reproductions`, one package each.  See ``docs/experiments.md``.
"""

from ._claims import (
    CHECK_CRASHED,
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    STAT_COLUMNS,
    ALPHA,
    AllOf,
    BetterThan,
    RatioWithin,
    better_than,
    combine_outcomes,
    decide,
    describe_setting,
    evaluate_claims,
    group_settings,
    holm_rejected,
    holm_rejections,
    lowest_of,
    minimum_in_p_values,
    normal_p_values,
    rows_by,
    sign_test,
    standard_error,
    welch_p_values,
    z_score,
    z_value,
)
from ._methods import available_methods, register_method, resolve_method, run_local_protocol
from ._registry import SPEC_MODULES, SpecNotWrittenError, available_specs, get_spec
from ._reproduce import reproduce
from ._plan import RunPlan, plan_run
from ._runner import RunResult, cell_key, execute_cell, run_spec
from ._spec import (
    Cell,
    Claim,
    DatasetRef,
    ExperimentSpec,
    FigureSpec,
    MethodSpec,
    MetricSpec,
    canonical_numbers,
    cell_seeds,
    load_spec,
    stable_id,
)
from ._table import ResultsTable, summarize

__all__ = [
    "ExperimentSpec",
    "DatasetRef",
    "MethodSpec",
    "MetricSpec",
    "FigureSpec",
    "Claim",
    "Cell",
    "load_spec",
    "cell_seeds",
    "stable_id",
    "canonical_numbers",
    "run_spec",
    "plan_run",
    "RunPlan",
    "reproduce",
    "RunResult",
    "cell_key",
    "execute_cell",
    "ResultsTable",
    "summarize",
    "better_than",
    "BetterThan",
    "evaluate_claims",
    "HOLDS",
    "DOES_NOT_HOLD",
    "INCONCLUSIVE",
    "CHECK_CRASHED",
    "STAT_COLUMNS",
    "lowest_of",
    "AllOf",
    "RatioWithin",
    "combine_outcomes",
    "standard_error",
    "z_score",
    "z_value",
    "ALPHA",
    "decide",
    "holm_rejections",
    "holm_rejected",
    "minimum_in_p_values",
    "normal_p_values",
    "sign_test",
    "welch_p_values",
    "group_settings",
    "rows_by",
    "describe_setting",
    "register_method",
    "resolve_method",
    "available_methods",
    "run_local_protocol",
    "get_spec",
    "available_specs",
    "SPEC_MODULES",
    "SpecNotWrittenError",
]
