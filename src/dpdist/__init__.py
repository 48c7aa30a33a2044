"""dpdist: estimate distributions under local and central differential privacy."""

from . import errors, local, metrics, postprocess
from .estimates import Distribution, FrequencyEstimate, MeanEstimate, MeanVarianceEstimate

__version__ = "0.1.0"

__all__ = [
    "local",
    "metrics",
    "postprocess",
    "errors",
    "Distribution",
    "FrequencyEstimate",
    "MeanEstimate",
    "MeanVarianceEstimate",
    "__version__",
]
