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
"""

from . import spark
from .blocks import simulate_blocks
from .dask import aggregate, aggregate_files, simulate

__all__ = ["aggregate", "aggregate_files", "simulate", "simulate_blocks", "spark"]
