"""Local differential privacy: client randomizers, mergeable aggregators, estimators.

>>> from dpdist import local
>>> proto = local.make("grr", epsilon=1.0, domain_size=8)
>>> estimate = proto.estimate(proto.simulate([0, 1, 1, 2] * 250, rng=0))

Protocol authors subclass :class:`LocalProtocol`, declare :class:`ProtocolTags` and
their reports (``_report_format``: :class:`ItemReports`, :class:`PackedBitReports`, ...),
:func:`register` the class, and prove it with :mod:`dpdist.testing`.
"""

from . import frequency, keyvalue, multi, numerical  # noqa: F401  (registers the protocols)
from .._validation import MAX_ALLOCATION_BYTES
from ._protocol import (
    Aggregator,
    LocalProtocol,
    ProtocolTags,
    ReportBatch,
    ReportFormat,
    available,
    describe,
    from_config,
    make,
    needs_population_size,
    register,
    parameter_names,
)
from ._report_kinds import (
    Column,
    EmbeddedReports,
    Field,
    IntegerRowReports,
    ItemReports,
    PackedBitReports,
    RecordReports,
)
from ..estimates import HeavyHitters
from .heavy_hitters import heavy_hitters
from .frequency._feasibility import FeasibilityTest, feasibility_test, set_bits_test
from .frequency._recovery import recover_frequencies
from .frequency._top_excess import TopExcessTest, top_excess_test
from .adaptive_quantiles import AdaptiveQuantiles, adaptive_quantiles
from .joint import estimate_jointly
from .words import StringCodec, encode_strings

__all__ = [
    "make",
    "adaptive_quantiles",
    "AdaptiveQuantiles",
    "estimate_jointly",
    "available",
    "from_config",
    "describe",
    "needs_population_size",
    "register",
    "parameter_names",
    "Aggregator",
    "LocalProtocol",
    "ProtocolTags",
    "ReportFormat",
    "ReportBatch",
    "ItemReports",
    "PackedBitReports",
    "IntegerRowReports",
    "Column",
    "RecordReports",
    "Field",
    "EmbeddedReports",
    "heavy_hitters",
    "feasibility_test",
    "set_bits_test",
    "FeasibilityTest",
    "top_excess_test",
    "TopExcessTest",
    "recover_frequencies",
    "encode_strings",
    "HeavyHitters",
    "StringCodec",
    "MAX_ALLOCATION_BYTES",
]
