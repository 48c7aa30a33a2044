"""Scale-out on Dask: aggregate report collections and simulate very large populations.

Every function builds per-partition aggregator states and merges them with a
tree reduction (``split_every`` states per merge), so the client only ever
holds one small state.  Install with ``pip install dpdist[dask]``.

>>> from dpdist import distributed, local                          # doctest: +SKIP
>>> proto = local.make("grr", epsilon=1.0, domain_size=100)
>>> agg = distributed.aggregate_files(["r1.parquet", "r2.parquet"], proto)
>>> agg = distributed.simulate(proto, dask_array_of_values, seed=7)
"""

from .dask import aggregate, aggregate_files, simulate
from .blocks import simulate_blocks

__all__ = ["aggregate", "aggregate_files", "simulate", "simulate_blocks"]
