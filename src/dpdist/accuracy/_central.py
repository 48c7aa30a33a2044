"""Expected errors of a central release at ``n`` records: a seeded simulation on data of the chosen shape.

Every run draws ``n`` values of the shape on the bounds, releases them, and
measures the release against those values: W1, KS, the mean's RMSE and the
median's 95% half-width for a CDF; for ``quantiles`` the mean absolute error of
the released quantiles and the 95% half-width of the median's error.
"""

from __future__ import annotations

import inspect

import numpy as np

from .._validation import Bounds, Given, Options, check_param, check_relations
from ..errors import InvalidParameterError
from ._result import Prediction
from ._shapes import Shape
from ._simulation import (
    data_generator,
    distribution_errors,
    interval_of,
    mean_of,
    run_generator,
)

__all__ = ["RELEASES", "central_predictions", "check_release_parameters", "release_named"]


def _releases() -> dict:
    from .. import central  # lazy: loads scipy (0.4-2 s)

    return {
        "cdf": central.cdf,
        "tree": central.tree_cdf,
        "histogram": central.histogram_queries,
        "adaptive-quantiles": central.adaptive_quantiles,
        "polynomial": central.polynomial_projection,
        "pursuit": central.matching_pursuit,
        "quantiles": central.quantiles,
    }


#: A central release needs its public bounds (explain draws data in them).
BOUNDS_GIVEN = Given("bounds", why="the public bounds (lo, hi) of a central release")


#: The names ``explain`` and ``dpdist explain --release`` know the central releases by.
RELEASES = ("cdf", "tree", "histogram", "adaptive-quantiles", "polynomial", "pursuit", "quantiles")


def release_named(name: str):
    releases = _releases()
    return releases[check_param("explain", "release", name, Options(tuple(releases)))]


def release_name(function) -> str:
    for name, candidate in _releases().items():
        if candidate is function:
            return name
    raise InvalidParameterError(
        f"explain knows the central releases {list(_releases())}. Got {getattr(function, '__qualname__', function)!r}."
    )


#: the arguments explain gives every run of a central release itself (the ids: per person, from its model)
_SUPPLIED = ("epsilon", "rng", "privacy_id")


def check_release_parameters(function, params: dict) -> None:
    """Refuse ``params`` that ``function(data, epsilon=..., rng=..., **params)`` would not take, before any run."""
    name = release_name(function)
    signature = inspect.signature(function)
    data, *parameters = list(signature.parameters)
    variadic = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)
    taken = [name for name in parameters if name not in _SUPPLIED and signature.parameters[name].kind not in variadic]
    supplied = sorted(set(params) & {data, *_SUPPLIED})
    if supplied:
        raise InvalidParameterError(
            f"explain gives central.{function.__name__} ({name!r}) its data, epsilon and rng itself (epsilons= sets the "
            f"epsilons). Got {supplied} among its parameters; its others are {taken}."
        )
    if "bounds" in params:
        params["bounds"] = check_param(f"explain ({name!r})", "bounds", params["bounds"], Bounds())
    try:
        signature.bind(None, epsilon=1.0, rng=0, **params)
    except TypeError as error:
        unknown = sorted(set(params) - set(taken))
        what = f"unknown parameter(s) {unknown}" if unknown else str(error)
        required = [name for name in taken if signature.parameters[name].default is inspect.Parameter.empty]
        raise InvalidParameterError(
            f"The parameters of explain for the central release {name!r} are central.{function.__name__}'s {taken} "
            f"({', '.join(map(repr, required))} required). Got {what}."
        ) from None


def central_predictions(function, n: int, epsilons, shape: Shape, repeats: int, seed: int, params: dict):
    """``(kind, predictions, notes)`` of ``function(x, epsilon=e, **params)`` at each epsilon."""
    from .. import central  # lazy: loads scipy (0.4-2 s)

    check_relations("explain", params, (BOUNDS_GIVEN,))
    bounds = params["bounds"]
    name = release_name(function)
    predictions = []
    for epsilon in epsilons:
        runs, quantile_errors, median_errors = [], [], []
        for run in range(repeats):
            data = shape.draw(n, bounds, data_generator(seed, run))
            released = function(data, epsilon=epsilon, rng=run_generator(seed, name, epsilon, run), **params)
            if function is central.quantiles:
                truth = np.quantile(data, released.q)
                quantile_errors.append(float(np.mean(np.abs(released.values - truth))))
                median_errors.append(float(np.interp(0.5, released.q, released.values) - np.median(data)))
            else:
                runs.append((released, data))
        if runs:
            errors = distribution_errors(runs)
        else:
            errors = {"quantile_mae": mean_of(quantile_errors), "interval": interval_of(median_errors)}
        predictions.append(Prediction(float(epsilon), n, errors))
    notes = ["simulated: each run's release against its own data, mean of the runs ± se"]
    return ("quantiles" if function is central.quantiles else "numerical"), predictions, notes
