"""Result objects: :class:`FrequencyEstimate` (categorical), :class:`Distribution` (numerical, with an optional
:class:`CDFBand`), :class:`MeanEstimate`, :class:`MeanVarianceEstimate`, :class:`HeavyHitters`,
:class:`QuantileRelease`, :class:`CountRelease`, :class:`ScalarRelease` (sums and means) and :class:`RangeEstimate` (range queries over numerical
attributes).

All are immutable, carry what produced them (method, n, epsilon and the privacy
guarantee) and meet one result contract, :class:`Estimate`, so a caller (the CLI,
the service, a plot, the runner) reports any of them without asking which one it
holds: its numbers (``summary``, ``table``), its :class:`Interval` values
(``intervals``), its JSON (``to_dict``, ``to_json``: the schema :data:`JSON_SCHEMA`,
described in ``docs/reference/results.md``), its text (``describe``) and its figure
(``figure``, ``plot``, drawn by :mod:`dpdist.plotting`).  The central releases
(:class:`~dpdist.central.TreeHistogram`, :class:`~dpdist.central.PolynomialMoments`) meet it
too.  Producers (local protocols, central releases) import their results from here, never the reverse.
"""

from ._band import CDFBand
from ._contract import Estimate
from ._count import CountRelease
from ._distribution import QUANTILES, Distribution
from ._frequency import FrequencyEstimate, TopK
from ._heavy_hitters import HeavyHitters
from ._intervals import ConfidenceInterval, Interval
from ._means import MeanEstimate, MeanVarianceEstimate
from ._presented import SCHEMA, Presented
from ._quantiles import QuantileRelease
from ._ranges import RangeEstimate
from ._scalar import ScalarRelease
from ._released import ReleasedDistribution
from ._schema import JSON_SCHEMA

__all__ = [
    "Estimate",
    "FrequencyEstimate",
    "Distribution",
    "MeanEstimate",
    "MeanVarianceEstimate",
    "HeavyHitters",
    "QuantileRelease",
    "CountRelease",
    "ScalarRelease",
    "RangeEstimate",
    "CDFBand",
    "Interval",
    "ConfidenceInterval",
    "TopK",
    "Presented",
    "ReleasedDistribution",
    "QUANTILES",
    "SCHEMA",
    "JSON_SCHEMA",
]


# One public name per class (docs, reprs, pickles): dpdist.estimates.X, not the private file it is written in.
def _name_publicly() -> None:
    for value in map(globals().get, __all__):
        if isinstance(value, type):
            value.__module__ = __name__


_name_publicly()
del _name_publicly
