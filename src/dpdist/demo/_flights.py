"""The demo's embedded dataset: the departure times of day of 100,000 flights from New York City in 2013.

Minutes after midnight, in :data:`BOUNDS`; where they come from and how they were drawn:
``_data/README.md``.
"""

from __future__ import annotations

from importlib import resources

import numpy as np

__all__ = ["BOUNDS", "load_departure_minutes"]

#: A day, in minutes.
BOUNDS = (0.0, 1440.0)


def load_departure_minutes() -> np.ndarray:
    """The embedded dataset: 100,000 departure times of day in minutes (float64)."""
    with resources.files("dpdist.demo").joinpath("_data").joinpath("departure_minutes.npz").open("rb") as handle:
        return np.load(handle)["minutes"].astype(np.float64)
