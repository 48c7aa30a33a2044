"""The data shapes ``explain`` predicts errors on: public laws on ``[0, 1]``, scaled to the bounds or binned into items.

Nothing here looks at anyone's data: a prediction is made before any data exist,
on a shape the analyst chooses as a stand-in for what they expect.

========== ================================================================ =====================
name       law on [0, 1]                                                    items (d of them)
========== ================================================================ =====================
uniform    Uniform(0, 1)                                                    1/d each
normal     Normal(0.5, 0.15^2) truncated to [0, 1] (the default)            its mass in d equal bins
skewed     Beta(2, 5)                                                       its mass in d equal bins
bimodal    0.5 Normal(0.3, 0.07^2) + 0.5 Normal(0.7, 0.07^2), truncated     its mass in d equal bins
zipf       (items only)                                                     p_i proportional to (i+1)^-1.1
========== ================================================================ =====================
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._validation import Options
from ..errors import InvalidParameterError

__all__ = ["SHAPES", "SHAPE", "DEFAULT_SHAPE", "Shape"]

DEFAULT_SHAPE = "normal"
_ZIPF_EXPONENT = 1.1


@dataclass(frozen=True)
class Shape:
    """A law on [0, 1]: its CDF (None for a shape of items only) and its item probabilities over d items."""

    name: str
    description: str
    cdf: Callable[[np.ndarray], np.ndarray] | None

    def draw(self, n: int, bounds: tuple[float, float], rng: np.random.Generator) -> np.ndarray:
        """``n`` values of the law scaled to ``bounds``: uniform draws through the inverse CDF, linear between
        4097 points of it (its error in CDF is below 1e-6 for these smooth laws)."""
        return self.at_quantiles(rng.random(n), bounds)

    def at_quantiles(self, probabilities: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
        """The law's quantiles at ``probabilities``, scaled to ``bounds``."""
        return bounds[0] + (bounds[1] - bounds[0]) * self._quantile(probabilities)

    def item_probabilities(self, d: int) -> np.ndarray:
        """The law's mass in ``d`` equal bins of [0, 1] (zipf: its own law on ``d`` items)."""
        if self.cdf is None:
            weights = np.arange(1, d + 1, dtype=np.float64) ** -_ZIPF_EXPONENT
            return weights / weights.sum()
        masses = np.diff(self.cdf(np.linspace(0.0, 1.0, d + 1)))
        masses = np.clip(masses, 0.0, None)
        return masses / masses.sum()

    def draw_items(self, n: int, d: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` items drawn from :meth:`item_probabilities` (counts from one multinomial, then repeated)."""
        counts = rng.multinomial(n, self.item_probabilities(d))
        return np.repeat(np.arange(d, dtype=np.int64), counts)

    def _quantile(self, u: np.ndarray) -> np.ndarray:
        if self.cdf is None:
            raise InvalidParameterError(
                f"The shape {self.name!r} is a law of items; numerical methods need one of "
                f"{[name for name, shape in SHAPES.items() if shape.cdf is not None]}."
            )
        grid = np.linspace(0.0, 1.0, 4097)  # the CDF inverted on a fine grid (linear between its points)
        values = self.cdf(grid)
        return np.interp(u, values, grid)


def _truncated_normal_cdf(mean: float, std: float) -> Callable[[np.ndarray], np.ndarray]:
    # scipy.stats is imported at the first call, not when SHAPES is built (it costs ~2 s of every CLI start)
    def cdf(x) -> np.ndarray:
        from scipy import stats  # lazy: loads scipy (0.4-2 s)

        low, high = stats.norm.cdf(0.0, mean, std), stats.norm.cdf(1.0, mean, std)
        return (stats.norm.cdf(np.asarray(x, dtype=np.float64), mean, std) - low) / (high - low)

    return cdf


def _beta_cdf(a: float, b: float) -> Callable[[np.ndarray], np.ndarray]:
    def cdf(x) -> np.ndarray:
        from scipy import stats  # lazy: loads scipy (0.4-2 s)

        return stats.beta.cdf(np.asarray(x, dtype=np.float64), a, b)

    return cdf


def _bimodal_cdf():
    first, second = _truncated_normal_cdf(0.3, 0.07), _truncated_normal_cdf(0.7, 0.07)
    return lambda x: 0.5 * first(x) + 0.5 * second(x)


SHAPES: dict[str, Shape] = {
    "uniform": Shape("uniform", "Uniform(0, 1) on the bounds", lambda x: np.clip(np.asarray(x, dtype=np.float64), 0, 1)),
    "normal": Shape("normal", "Normal(0.5, 0.15^2) truncated to the bounds (scaled)", _truncated_normal_cdf(0.5, 0.15)),
    "skewed": Shape("skewed", "Beta(2, 5) on the bounds (scaled): right-skewed", _beta_cdf(2.0, 5.0)),
    "bimodal": Shape("bimodal", "0.5 Normal(0.3, 0.07^2) + 0.5 Normal(0.7, 0.07^2), truncated (scaled)", _bimodal_cdf()),
    "zipf": Shape("zipf", f"items only: p_i proportional to (i+1)^-{_ZIPF_EXPONENT}", None),
}


#: the ``shape`` parameter of explain, explain_plan and explain_ladder (their tables)
SHAPE = Options(tuple(SHAPES))

