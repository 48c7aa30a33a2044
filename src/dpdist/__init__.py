"""dpdist: estimate distributions under local and central differential privacy."""

import importlib

from . import errors, local, metrics, postprocess
from .estimates import (
    Distribution,
    FrequencyEstimate,
    MeanEstimate,
    MeanVarianceEstimate,
)

__version__ = "0.1.0"

#: Sub-packages imported on first attribute access (PEP 562), to keep ``import dpdist`` light.
_LAZY_SUBPACKAGES = ("central", "datasets", "distributed", "experiments", "io", "testing", "accuracy", "accounting",
                     "budget", "frame", "queries")


def __getattr__(name):
    if name == "explain":  # dpdist.explain(...): what epsilon buys (dpdist.accuracy.explain)
        return importlib.import_module(f"{__name__}.accuracy").explain
    if name == "explain_plan":  # dpdist.explain_plan(...): a campaign repeated over a year (dpdist.accuracy)
        return importlib.import_module(f"{__name__}.accuracy").explain_plan
    if name == "explain_ladder":  # dpdist.explain_ladder(...): one campaign under each trust model (dpdist.accuracy)
        return importlib.import_module(f"{__name__}.accuracy").explain_ladder
    if name in ("query", "sql"):  # dpdist.query(table, ...), dpdist.sql("SELECT ..."): dpdist.queries
        return getattr(importlib.import_module(f"{__name__}.queries"), name)
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
