"""Scale-out on Dask or Spark: aggregate report collections and simulate very large populations.

Every function builds per-partition aggregator states and merges them with a
tree reduction (``split_every`` states per merge on Dask, ``treeReduce`` on
Spark), so the client only ever holds one small state.  The functions below
run on Dask (``pip install dpdist[dask]``); :mod:`dpdist.distributed.spark`
has the same on Spark (``pip install dpdist[spark]``), with results equal to
Dask's and to one process's exactly.

>>> from dpdist import distributed, local                          # doctest: +SKIP
>>> proto = local.make("grr", epsilon=1.0, domain_size=100)
>>> agg = distributed.aggregate_files(["r1.parquet", "r2.parquet"], proto)
>>> agg = distributed.simulate(proto, dask_array_of_values, seed=7)
>>> agg = distributed.spark.aggregate_files(["r1.parquet", "r2.parquet"], proto, spark=session)

Central releases per person of a table too large for one process: each person's rows are bounded on the
cluster (per-person reservoirs keyed by a salted hash of the id, merged exactly) and released on the driver:

>>> kept = distributed.bound_contributions(amounts, customers, 5)                    # doctest: +SKIP
>>> kept.release(central.quantiles, [0.5, 0.9], epsilon=1.0, bounds=(0, 500))
>>> kept = distributed.spark.bound_contributions(frame, "amount", "customer", 5, groups="merchant", max_groups=3)
>>> distributed.group_release(kept, central.count, epsilon=1.0, selection_epsilon=1.0, selection_delta=1e-6)
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._groups import GroupedReleases, group_release
from ._reservoirs import Reservoir, bound_blocks
from .blocks import simulate_blocks

if TYPE_CHECKING:
    from . import spark
    from .dask import aggregate, aggregate_files, bound_contributions, simulate

__all__ = ["aggregate", "aggregate_files", "simulate", "simulate_blocks", "spark", "bound_contributions", "bound_blocks",
           "group_release", "Reservoir", "GroupedReleases"]


def __getattr__(name: str) -> Any:
    """The Dask functions and :mod:`~dpdist.distributed.spark` on first use (PEP 562): they read report files, whose
    formats load every local protocol (0.25 CPU-s), which a query bounding each person's rows (the reservoirs) does
    not need."""
    if name == "spark":
        return importlib.import_module(f"{__name__}.spark")
    if name in ("aggregate", "aggregate_files", "bound_contributions", "simulate"):
        return getattr(importlib.import_module(f"{__name__}.dask"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
