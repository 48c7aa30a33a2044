"""DataFrames in and out: columns of any engine narwhals reads through dpdist's local and central methods.

pandas, Polars (eager and lazy), PyArrow, DuckDB relations, PySpark and Dask DataFrames,
Ibis tables, ...: one layer (narwhals) reads them all.  Install ``dpdist[frame]``
(narwhals; ``dpdist[pandas]`` and ``dpdist[polars]`` bring that library too); neither
narwhals nor an engine is imported until a frame is passed (``import dpdist.frame``
stays light).  Results are dpdist's own result objects (``FrequencyEstimate``,
``Distribution``, ``QuantileRelease``); :func:`table` turns any of them into a
DataFrame of the input's engine, and a group-by returns a :class:`GroupedResult` whose
``table()`` and ``summary()`` are DataFrames of that engine.

Local DP (each row one user's value):

* :func:`privatize` -- a frame of reports, in a uniformly random order;
* :func:`aggregate` -- the aggregator of a column of reports;
* :func:`estimate` -- a one-shot local estimate of a column;
* :func:`group_estimate` -- one per group of a key (parallel composition).

Central DP (a trusted curator releases the column):

* :func:`release` -- any ``dpdist.central`` release of a column;
* :func:`group_release` -- one per group of a public key (parallel composition).

Every function takes ``session=`` (:class:`dpdist.budget.BudgetSession`), charged
before the data are read.  Errors are the array API's, naming the column.  See
``docs/how-to/dataframes.md``.
"""

from typing import TYPE_CHECKING, Any

from .._validation import HasMethod, validate_params

from ._central import group_release, release
from ._grouped import GroupedResult
from ._tables import engine_of

if TYPE_CHECKING:
    from ._local import aggregate, estimate, group_estimate, privatize

__all__ = ["privatize", "aggregate", "estimate", "group_estimate", "release", "group_release", "GroupedResult", "table"]


def __getattr__(name: str) -> Any:
    """The local functions, on first use (PEP 562): a central release or a query need not load the protocols."""
    if name in ("privatize", "aggregate", "estimate", "group_estimate"):
        from . import _local  # lazy: every local protocol loads with it (0.25 CPU-s)

        return getattr(_local, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@validate_params({"result": HasMethod("table", "a dpdist result with a table() (an estimate, a release, a GroupedResult)")},
                 owner="frame.table")
def table(result: Any, like: Any) -> Any:
    """``result.table()`` as a DataFrame of the engine of ``like`` (any frame :mod:`dpdist.frame` takes; lazy for a
    lazy ``like``: a Polars LazyFrame, a DuckDB relation, a Spark DataFrame of its session, ...).

    A :class:`GroupedResult` is its own ``table()``.  Frequency estimates with labels get a ``label`` column.
    """
    engine, _ = engine_of("frame.table", like, argument="like")
    if isinstance(result, GroupedResult):
        return result.table()
    return engine.frame({name: (list(column) if not hasattr(column, "dtype") else column)
                         for name, column in result.table().items()})
