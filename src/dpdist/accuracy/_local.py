r"""Expected errors of a local protocol at ``n`` users: analytic where the variance is known, else simulated.

* Frequency oracles with an unbiased estimator and an analytic variance
  (``protocol.variance(n, f)``, with ``f`` the shape's item probabilities): the
  per-item MSE is the mean of the variances and the 95% half-width
  :math:`1.96\sqrt{\overline{\mathrm{Var}}}`.  Other frequency protocols (sketches, CP's
  decoder): simulated, the unbiased estimate against the data's frequencies.
* Key-value protocols (``privkv``, ``pckv-ue``, ``pckv-grr``): the same analytic variance of the keys'
  frequencies, each user holding one pair whose key is drawn from the shape (frequencies = the shape's
  item probabilities); the means of the keys are not predicted.
* Mean protocols (``pm``, ``sr``): the exact variance of the mean estimate,
  :math:`\overline{\mathrm{Var}_1(x)}/n` with the per-report variance averaged over
  the shape (at 1,024 of its quantiles, ``(k + 1/2)/1024``).
* Distribution protocols (``sw``, ``gw``, ``hh``, ``haar-hrr``, ``binning``, ``wavelet``):
  simulated W1, KS, the mean's RMSE and the median's 95% half-width of the default
  estimate against the data of each run.
"""

from __future__ import annotations

import math

import numpy as np

from .. import local
from ..errors import InvalidParameterError
from ..estimates import Distribution, MeanEstimate
from ._result import Expected, Prediction
from ._shapes import Shape
from ._simulation import (
    Z95,
    data_generator,
    distribution_errors,
    interval_of,
    mean_of,
    run_generator,
)

__all__ = ["protocol_at", "local_predictions"]

#: Quantiles of the shape at which a mean protocol's per-report variance is averaged (a midpoint rule in
#: probability: the per-report variance is smooth in the value).
_MEAN_POINTS = 1024


def protocol_at(protocol, epsilon: float, n: int):
    """``protocol`` with budget ``epsilon`` (a longitudinal protocol's ``epsilon_1`` scaled alike) and, for a
    protocol sized by its population, ``n_users = n``."""

    params = {key: value for key, value in protocol.config().items() if key not in ("protocol", "version")}
    if "epsilon_1" in params:
        params["epsilon_1"] = params["epsilon_1"] * epsilon / params["epsilon"]
    params["epsilon"] = epsilon
    if "n_users" in params:
        params["n_users"] = n
    return local.make(protocol.name, **params)


def _analytic_variance(protocol, n: int, frequencies: np.ndarray) -> np.ndarray | None:
    if not protocol.tags.unbiased:
        return None
    try:
        variance = np.asarray(protocol.variance(n, frequencies), dtype=np.float64)
    except NotImplementedError:
        return None
    return variance if variance.shape == frequencies.shape and np.all(np.isfinite(variance)) else None


def _frequency_prediction(protocol, n, shape: Shape, repeats: int, seed: int) -> dict[str, Expected]:
    d = protocol.domain_size
    variance = _analytic_variance(protocol, n, shape.item_probabilities(d))
    if variance is not None:
        mean_variance = float(variance.mean())
        return {"mse": Expected(mean_variance, 0.0, "analytic"),
                "interval": Expected(Z95 * math.sqrt(mean_variance), 0.0, "analytic")}
    if protocol.tags.kind == "key_value":
        raise InvalidParameterError(f"explain: {protocol.display_name} states no analytic variance of its key frequencies.")
    squared, errors = [], []
    for run in range(repeats):
        items = shape.draw_items(n, d, data_generator(seed, run))
        estimate = protocol.estimate(protocol.simulate(items, rng=run_generator(seed, protocol.name, protocol.epsilon, run)))
        error = np.asarray(estimate.frequencies) - np.bincount(items, minlength=d) / n
        squared.append(float(np.mean(error**2)))
        errors.append(float(np.sqrt(np.mean(error**2))))
    return {"mse": mean_of(squared), "interval": interval_of(errors)}


def _numerical_prediction(protocol, n, shape: Shape, repeats: int, seed: int) -> dict[str, Expected]:
    bounds = protocol.bounds
    if hasattr(protocol, "mean_variance"):
        points = shape.at_quantiles((np.arange(_MEAN_POINTS) + 0.5) / _MEAN_POINTS, bounds)
        variance = float(protocol.report_variance(points).mean()) / n
        return {"mean_rmse": Expected(math.sqrt(variance), 0.0, "analytic"),
                "interval": Expected(Z95 * math.sqrt(variance), 0.0, "analytic")}
    runs = []
    for run in range(repeats):
        data = shape.draw(n, bounds, data_generator(seed, run))
        estimate = protocol.estimate(protocol.simulate(data, rng=run_generator(seed, protocol.name, protocol.epsilon, run)))
        if isinstance(estimate, MeanEstimate) or not isinstance(estimate, Distribution):
            raise InvalidParameterError(f"explain: {protocol.display_name} estimates no distribution.")
        runs.append((estimate, data))
    return distribution_errors(runs)


def local_predictions(protocol, n: int, epsilons, shape: Shape, repeats: int, seed: int) -> tuple[str, list, list]:
    """``(kind, predictions, notes)`` of ``protocol`` at each epsilon."""
    kind = protocol.tags.kind
    if kind == "heavy_hitters":
        raise InvalidParameterError(
            f"explain covers frequency and numerical protocols and central releases; {protocol.name} finds heavy "
            "hitters of an unbounded domain (its accuracy is which items it finds: see docs/explanation/frequency-oracles.md)."
        )
    predictions = []
    for epsilon in epsilons:
        at = protocol_at(protocol, epsilon, n)
        if kind in ("frequency", "key_value"):
            errors = _frequency_prediction(at, n, shape, repeats, seed)
        else:
            errors = _numerical_prediction(at, n, shape, repeats, seed)
        predictions.append(Prediction(float(epsilon), n, errors))
    sources = {e.source for p in predictions for e in p.errors.values()}
    kind = "mean" if hasattr(protocol, "mean_variance") else kind
    notes = [_NOTES[kind, source] for source in sorted(sources)]
    return kind, predictions, notes


_NOTES = {
    ("frequency", "analytic"): "analytic: the unbiased estimator's variance at the shape's item frequencies",
    ("key_value", "analytic"): "analytic: the key frequencies' unbiased estimator variance, each user holding one key "
    "drawn from the shape (the keys' means are not predicted)",
    ("frequency", "simulation"): "simulated: the estimate against the data's item frequencies, mean of the runs ± se",
    ("mean", "analytic"): "analytic: the exact variance of the mean estimate, averaged over the shape",
    ("numerical", "simulation"): "simulated: the default estimate against each run's data, mean of the runs ± se",
}
