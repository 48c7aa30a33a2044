"""The names the claim checks of the ``central`` reproduction had before they moved to the claims
library of :mod:`dpdist.experiments`: each builds the library's check.  The spec uses the
library directly (docs/how-to/run-experiments.md, "Writing a spec")."""

from __future__ import annotations

from ...experiments import (
    ALPHA,
    EFFECT,
    BeatsRivals,
    Decreasing,
    GapShrinks,
    GroupBeats,
    MinimumWithin,
    RatioContrast,
)

__all__ = ["RankedCheck", "BestOrCloseCheck", "GroupBeatsCheck", "TrendCheck", "MinimumWithinCheck",
           "GapShrinksCheck", "RelativeErrorCheck"]

GroupBeatsCheck = GroupBeats
TrendCheck = Decreasing
GapShrinksCheck = GapShrinks


def RankedCheck(method: str, metric: tuple, position: str = "worst", where: dict | None = None, methods: tuple = (),
                alpha: float = ALPHA, effect: float = EFFECT) -> BeatsRivals:
    """``method`` is the best (lowest mean) or the worst of ``methods`` (default: all) in every setting."""
    return BeatsRivals(metric, method, tuple(m for m in methods if m != method), where=dict(where or {}),
                       lower=position == "best", alpha=alpha, effect=effect)


def BestOrCloseCheck(method: str, metric: tuple, where: dict | None = None, methods: tuple = (),
                     tolerance: float = 0.25, alpha: float = ALPHA, effect: float = EFFECT) -> BeatsRivals:
    """``method``'s mean is at most ``1 + tolerance`` times every other method's, in every setting."""
    return BeatsRivals(metric, method, tuple(m for m in methods if m != method), where=dict(where or {}),
                       factor=1 + tolerance, alpha=alpha, effect=effect)


def MinimumWithinCheck(method: str, metric: tuple, x: str, low: float, high: float, where: dict | None = None,
                       alpha: float = ALPHA) -> MinimumWithin:
    """The error of ``method`` over ``x`` first falls, then rises, with its minimum in ``[low, high]``."""
    return MinimumWithin(method, metric, x, low, high, rise_after=True, where=dict(where or {}), alpha=alpha)


def RelativeErrorCheck(method: str, reference: str, metric: tuple, harder: tuple, easier: tuple,
                       where: dict | None = None, alpha: float = ALPHA, unmatched: tuple = (),
                       effect: float = EFFECT) -> RatioContrast:
    """``method``'s error relative to ``reference``'s is larger on ``harder`` datasets than on ``easier``."""
    return RatioContrast(metric, method, reference, harder, easier, where=dict(where or {}), unmatched=unmatched,
                         alpha=alpha, effect=effect)
