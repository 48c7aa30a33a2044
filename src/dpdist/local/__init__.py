"""Local differential privacy: client randomizers, mergeable aggregators, estimators.

>>> from dpdist import local
>>> proto = local.make("grr", epsilon=1.0, domain_size=8)
>>> estimate = proto.estimate(proto.simulate([0, 1, 1, 2] * 250, rng=0))
"""

from . import frequency, numerical  # noqa: F401  (registers the protocols)
from ._protocol import Aggregator, LocalProtocol, available, describe, from_config, make, needs_population_size

__all__ = [
    "make",
    "available",
    "from_config",
    "describe",
    "needs_population_size",
    "Aggregator",
    "LocalProtocol",
]
