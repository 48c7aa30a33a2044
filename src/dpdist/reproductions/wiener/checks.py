"""The names the claim checks of the ``wiener`` reproduction had before they moved to the claims
library of :mod:`dpdist.experiments`: each builds the library's check.  The spec uses the
library directly (docs/how-to/run-experiments.md, "Writing a spec")."""

from __future__ import annotations

from collections.abc import Callable

from ...experiments import ALPHA, EFFECT, AllOf, MatchesKnown, RatioContrast, RatioWithin
from .methods import noise_ratio_se

__all__ = ["SpectrumMatches", "Stuck", "DwHelpsLittle", "Converged", "GainGrows"]


def SpectrumMatches(domain_size: Callable[[str], int], metric: str = "noise_ratio", zero_dc_methods: tuple = (),
                    margin: float = 4.0) -> MatchesKnown:
    """Fig. 3: the empirical / analytic noise power is 1 within ``margin`` known standard errors
    (:func:`~.methods.noise_ratio_se`) in every band, except band 0 of ``zero_dc_methods`` (P_0 = 0): 0."""
    def exact(row) -> bool:
        return row["method"] in zero_dc_methods and int(row["metric_band"]) == 0

    def known_se(row) -> float:
        return 0.0 if exact(row) else noise_ratio_se(domain_size(row["dataset"]), row["metric_band"], row["count"])

    return MatchesKnown(metric, known_se, lambda row: 0.0 if exact(row) else 1.0, margin)


def Stuck(method: str, where: dict, last: int = 200, tolerance: float = 0.1, alpha: float = ALPHA,
          effect: float = EFFECT) -> RatioWithin:
    """``method``'s MSE after ``last`` iterations is within ``tolerance`` (relative) of its initial value."""
    return RatioWithin.along(method, "mse_iter", "metric_iteration", 0, 1 - tolerance, 1 + tolerance,
                             where={**where, "metric_iteration": [0, last]}, alpha=alpha, effect=effect)


def DwHelpsLittle(protocol: str, smooth: str, permuted: str, epsilons: tuple, where: dict | None = None,
                  alpha: float = ALPHA, effect: float = EFFECT) -> RatioContrast:
    """DW's gain (MSE of ``protocol`` / MSE of ``protocol``-DW) is smaller on ``permuted`` than on ``smooth``."""
    return RatioContrast("mse", protocol, f"{protocol}-DW", (smooth,), (permuted,),
                         where={**(where or {}), "epsilon": list(epsilons)}, alpha=alpha, effect=effect)


def Converged(method: tuple, at: int, final: int, tolerance: float = 0.1, metric: str = "mse_iter",
              column: str = "metric_iteration", where: dict | None = None, alpha: float = ALPHA,
              effect: float = EFFECT) -> AllOf:
    """MSE at iteration ``at`` is at most ``1 + tolerance`` times the MSE at ``final``, each method, every setting."""
    return AllOf(tuple(RatioWithin.along(m, metric, column, final, high=1 + tolerance,
                                         where={**(where or {}), column: [at, final]}, alpha=alpha, effect=effect)
                       for m in method))


def GainGrows(pairs: tuple, x: str, low: float, high: float, metric: str = "mse", where: dict | None = None,
              alpha: float = ALPHA, effect: float = EFFECT) -> AllOf:
    """Each filter's gain MSE(plain) / MSE(filtered) is larger at ``x = high`` than at ``x = low``."""
    return AllOf(tuple(RatioContrast(metric, plain, filtered, (high,), (low,), across=x, where=dict(where or {}),
                                     alpha=alpha, effect=effect) for plain, filtered in pairs))
