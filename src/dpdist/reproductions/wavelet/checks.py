"""The names the claim checks of the ``wavelet`` reproduction had before they moved to the claims
library of :mod:`dpdist.experiments`: each builds the library's check.  The spec uses the
library directly (docs/how-to/run-experiments.md, "Writing a spec")."""

from __future__ import annotations

from ...experiments import ALPHA, EFFECT, BeatsRivals, MinimumWithin, RatioContrast, RatioWithin, Threshold

__all__ = ["BeatsBest", "BelowBound", "BestLevelNearBound", "StaysAbove", "FallsLess"]


def BeatsBest(metric: str, method: str, rivals: tuple, where: dict | None = None, alpha: float = ALPHA,
              share: float = 1.0, effect: float = EFFECT) -> BeatsRivals:
    """``method`` is below every one of ``rivals`` (so below the best) in each setting (or a ``share``)."""
    return BeatsRivals(metric, method, tuple(rivals), where=dict(where or {}), share=share, alpha=alpha, effect=effect)


def BelowBound(empirical: str, bound: str, method: str, alpha: float = ALPHA, effect: float = EFFECT) -> RatioWithin:
    """``method``'s mean ``empirical`` metric is below its computed ``bound`` metric in every setting."""
    return RatioWithin(method, bound, (method,), empirical, high=1.0, alpha=alpha, effect=effect)


def BestLevelNearBound(empirical: str, bound: str, method: str, datasets: tuple, tolerance: int = 1,
                       level_column: str = "levels", alpha: float = ALPHA, effect: float = EFFECT) -> MinimumWithin:
    """The level with the lowest ``empirical`` error is within ``tolerance`` of the ``bound``'s best level."""
    return MinimumWithin(method, empirical, level_column, near=bound, tolerance=tolerance,
                         where={"dataset": list(datasets)}, alpha=alpha, effect=effect)


def StaysAbove(metric: str, method: str, floor: float, where: dict | None = None, share: float = 0.9,
               alpha: float = ALPHA, effect: float = EFFECT) -> Threshold:
    """``method``'s mean ``metric`` stays above ``share * floor`` in every setting (a bias no budget removes)."""
    return Threshold(metric, method, share * floor, where=dict(where or {}), alpha=alpha, effect=effect)


def FallsLess(metric: str, methods: tuple, flat: tuple, falling: tuple, low: float, high: float, x: str = "epsilon",
              where: dict | None = None, alpha: float = ALPHA, effect: float = EFFECT) -> RatioContrast:
    """Each method's error falls less from ``x = low`` to ``high`` on ``flat`` datasets than on ``falling`` ones."""
    return RatioContrast(metric, high, low, tuple(flat), tuple(falling), column=x,
                         where={**(where or {}), "method": list(methods)}, alpha=alpha, effect=effect)
