"""Methods of an experiment: callables ``(values, dataset, params, rng) -> estimate``.

A method returns a :class:`~dpdist.Distribution` (numerical datasets) or a
:class:`~dpdist.FrequencyEstimate` (categorical datasets).  Every registered local
protocol is a method with no extra code, through :func:`run_local_protocol`:

* frequency protocol on a categorical dataset: ``local.make(name, epsilon=...,
  domain_size=dataset.domain_size, **params)``;
* frequency protocol on a numerical dataset: the values are bucketized into ``bins``
  equal bins over the bounds (a required parameter), the protocol runs on the bins and
  the post-processed frequencies (``postprocess``, default ``"norm-sub"``) become a
  piecewise-uniform :class:`~dpdist.Distribution` ("CFO with binning", paper 003 sec. 2.3);
  ``bins`` is ignored on categorical datasets, so one method can serve both kinds;
* numerical protocol: ``local.make(name, epsilon=..., bounds=dataset.bounds, **params)``.

The aggregate comes from ``proto.simulate(values, rng)``, which samples the aggregate
exactly where the protocol allows and otherwise privatizes and aggregates in chunks
(the same law).  Parameters named in :data:`ESTIMATE_OPTIONS`, or prefixed with
``estimate_``, go to ``proto.estimate``; the rest go to ``local.make``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import local
from ..datasets import bucketize
from .._validation import CallableRule, OneOf, Registered, validate_params
from ..errors import InvalidParameterError

__all__ = ["register_method", "resolve_method", "available_methods", "run_local_protocol", "ESTIMATE_OPTIONS"]

ESTIMATE_OPTIONS = frozenset({"postprocess", "significance", "deconvolve", "method"})

_METHODS: dict[str, Callable] = {}


def register_method(name: str, function: Callable | None = None) -> Callable:
    """Register ``function(values, dataset, params, rng)`` under ``name`` (usable as a decorator).

    The function must be defined at module top level so worker processes can import it.
    """

    def decorate(func):
        if name in _METHODS:
            raise InvalidParameterError(f"A method named {name!r} is already registered.")
        _METHODS[name] = func
        return func

    return decorate if function is None else decorate(function)


def available_methods() -> list[str]:
    """Names usable as a method: registered methods and every local protocol."""
    return sorted(set(_METHODS) | set(local.available()))


@validate_params({"reference": OneOf((CallableRule(), Registered(available_methods, "a registered method or protocol")),
                                      "a callable, or a registered method or a local protocol's name "
                                      "(experiments.available_methods())")}, owner="experiments.resolve_method")
def resolve_method(reference: str | Callable) -> Callable:
    """A method callable from a registry name, a local protocol name or a callable."""
    if callable(reference):
        return reference
    if reference in _METHODS:
        return _METHODS[reference]
    return _ProtocolMethod(reference)  # a local protocol's name: the table


class _ProtocolMethod:
    """Picklable adapter: a local protocol name bound to :func:`run_local_protocol`."""

    def __init__(self, protocol: str):
        self.protocol = protocol

    def __call__(self, values, dataset, params, rng):
        return run_local_protocol(self.protocol, values, dataset, params, rng)

    def __repr__(self):
        return f"local protocol {self.protocol!r}"


def _split(params: dict[str, Any]) -> tuple[dict, dict]:
    make_params, estimate_params = {}, {}
    for key, value in params.items():
        if key in ESTIMATE_OPTIONS:
            estimate_params[key] = value
        elif key.startswith("estimate_"):
            estimate_params[key[len("estimate_") :]] = value
        else:
            make_params[key] = value
    return make_params, estimate_params


def run_local_protocol(protocol: str, values: np.ndarray, dataset: Any, params: dict, rng: Any) -> Any:
    """Run one LDP collection of ``values`` with the registered protocol ``protocol``.

    Parameters
    ----------
    protocol : str
        A name of :func:`dpdist.local.available`.
    values : ndarray
        The users' values (float in ``dataset.bounds`` or int items).
    dataset : Dataset
        Supplies ``kind``, ``bounds`` / ``domain_size``.
    params : dict
        ``epsilon`` and any other protocol parameters; ``bins`` for a frequency protocol
        on numerical data; estimate options (see module docstring).
    rng : numpy.random.Generator
    """
    make_params, estimate_params = _split(dict(params))
    if estimate_params.get("deconvolve") == "amrp":
        estimate_params.setdefault("rng", rng)  # the permutations come from the cell's stream, not the CSPRNG
    if local.needs_population_size(protocol) and make_params.get("levels") is None:
        make_params.setdefault("n_users", int(np.asarray(values).size))
    kind = "numerical" if protocol in local.available("numerical") else "frequency"
    if kind == "numerical":
        if dataset.kind != "numerical":
            raise InvalidParameterError(
                f"The numerical protocol {protocol!r} needs a numerical dataset; {dataset.name!r} is categorical."
            )
        proto = local.make(protocol, bounds=dataset.bounds, **make_params)
        return proto.estimate(proto.simulate(values, rng=rng), **estimate_params)
    if dataset.kind == "categorical":
        make_params.pop("bins", None)  # binning applies to numerical datasets only
        proto = local.make(protocol, domain_size=dataset.domain_size, **make_params)
        return proto.estimate(proto.simulate(values, rng=rng), **estimate_params)
    bins = make_params.pop("bins", None)
    if bins is None:
        raise InvalidParameterError(
            f"The frequency protocol {protocol!r} on the numerical dataset {dataset.name!r} needs a "
            "'bins' parameter (number of equal bins over the bounds). Got none."
        )
    estimate_params.setdefault("postprocess", "norm-sub")
    proto = local.make(protocol, domain_size=bins, **make_params)
    items = bucketize(values, dataset.bounds, bins)
    estimate = proto.estimate(proto.simulate(items, rng=rng), **estimate_params)
    return estimate.as_distribution(dataset.bounds)  # the bins as a Distribution (refused unless a probability vector)
