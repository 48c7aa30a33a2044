"""dpdist: estimate distributions under local and central differential privacy."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from . import errors

if TYPE_CHECKING:  # what type checkers see of the names below (the floors under this one's)
    from . import local, metrics, postprocess
    from .estimates import Distribution, FrequencyEstimate, MeanEstimate, MeanVarianceEstimate

__version__ = "0.1.0"

#: Sub-packages imported on first attribute access (PEP 562): ``import dpdist`` loads none of them, not even NumPy
#: (tests/package/test_import_graph.py lists what it loads).
_LAZY_SUBPACKAGES = ("local", "central", "datasets", "distributed", "experiments", "io", "testing", "accuracy",
                     "accounting", "budget", "frame", "queries", "metrics", "postprocess")
#: Names re-exported from a sub-package, imported on first access: ``dpdist.query(table, ...)``, ``dpdist.sql(...)``
#: (dpdist.queries), ``dpdist.explain(...)`` and its kin (dpdist.accuracy), the result classes (dpdist.estimates).
_LAZY_NAMES = {"query": "queries", "sql": "queries", "explain": "accuracy", "explain_plan": "accuracy",
               "explain_ladder": "accuracy", "Distribution": "estimates", "FrequencyEstimate": "estimates",
               "MeanEstimate": "estimates", "MeanVarianceEstimate": "estimates"}


def __getattr__(name):
    if name in _LAZY_NAMES:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY_NAMES[name]}"), name)
    if name in _LAZY_SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "local",
    "central",
    "datasets",
    "experiments",
    "io",
    "distributed",
    "testing",
    "accuracy",
    "accounting",
    "budget",
    "frame",
    "queries",
    "query",
    "sql",
    "explain",
    "explain_plan",
    "explain_ladder",
    "metrics",
    "postprocess",
    "errors",
    "Distribution",
    "FrequencyEstimate",
    "MeanEstimate",
    "MeanVarianceEstimate",
    "__version__",
]
