"""A campaign's estimate as JSON and as a PNG plot.

Query parameters other than ``level`` (the confidence level of the band,
default 0.95) are passed to the protocol's ``estimate`` as options, e.g.
``?postprocess=norm-sub`` for frequency oracles or ``?method=ems`` for the
square wave; values are read as JSON when they parse (numbers, ``true``,
``null``) and as strings otherwise.  An option the protocol does not take, or a
value it refuses, is a 400 ``invalid_option`` naming it.
"""

from __future__ import annotations

import io
import math
import threading

import numpy as np

from .. import _json
from ..errors import DPDistError
from ._campaigns import Campaign
from ._refusals import Conflict, Failure, InvalidRequest

__all__ = ["estimate_options", "estimate_json", "estimate_png"]

_PYPLOT = threading.Lock()  # pyplot keeps global state: one plot at a time


def estimate_options(query) -> tuple[dict, float]:
    """Estimator options and the band's confidence level from the query string."""
    options = {}
    level = 0.95
    for key, text in query.items():
        if key == "level":
            try:
                level = float(text)
            except ValueError:
                level = math.nan
            if not 0 < level < 1:
                raise InvalidRequest("invalid_option", f"The 'level' parameter must be a number in (0, 1). Got {text!r}.")
            continue
        try:
            options[key] = _json.loads(text)
        except ValueError:
            options[key] = text
    return options, level


def _estimate(campaign: Campaign, options: dict):
    """The protocol's estimate of the campaign's aggregate (None before the first report); computed once per change
    of the campaign and kept by :mod:`._estimate_cache`, in the estimator process."""
    return _compute_estimate(campaign, options)


def _compute_estimate(campaign: Campaign, options: dict):
    protocol = campaign.protocol
    aggregator = campaign.aggregator()
    if aggregator.n == 0:
        return None
    try:
        return protocol.estimate(aggregator, **options)
    except TypeError as error:
        raise InvalidRequest("invalid_option", f"{protocol.display_name}.estimate does not take the given options {sorted(options)}: {error}"
        ) from None
    except DPDistError as error:
        raise InvalidRequest("invalid_option", str(error)) from None


def _floats(values) -> list:
    return [None if not math.isfinite(v) else float(v) for v in np.asarray(values, dtype=float).ravel()]


def describe_estimate(estimate, level: float) -> dict:
    """JSON-safe fields of any estimate type; ``band`` where the estimate has a confidence interval."""
    from ..estimates import Distribution, FrequencyEstimate, HeavyHitters, MeanEstimate, MeanVarianceEstimate

    if isinstance(estimate, FrequencyEstimate):
        interval = estimate.confidence_interval(level)
        return {
            "kind": "frequency",
            "items": list(range(estimate.domain_size)),
            "frequencies": _floats(estimate.frequencies),
            "standard_error": _floats(estimate.standard_error),
            "band": {"level": level, "low": _floats(interval.low), "high": _floats(interval.high)},
            "postprocess": estimate.postprocess,
        }
    if isinstance(estimate, Distribution):
        return {
            "kind": "distribution",
            "edges": _floats(estimate.edges),
            "probabilities": _floats(estimate.probabilities),
            "cdf": _floats(estimate.cumulative[1:]),
            "mean": float(estimate.mean()),
            "median": float(estimate.quantile(0.5)),
            "band": None,
            "method": estimate.method,
        }
    if isinstance(estimate, HeavyHitters):
        from statistics import NormalDist

        # The items shown are the top k of the last round's C candidates, estimated on the same reports:
        # a pointwise interval (z = 1.96) around a selected maximum is not a 95% interval (n = 5,000, eps = 2:
        # 16 of the 18 noise words found had a band above 0). Bonferroni over the C candidates covers all of
        # them at once with probability >= level, hence also the ones selected.
        rounds = estimate.details.get("rounds") or []
        candidates = max(int(rounds[-1]["candidates"]) if rounds else 1, 1)
        half = NormalDist().inv_cdf(1 - (1 - level) / (2 * candidates)) * np.asarray(estimate.standard_error)
        return {
            "kind": "heavy_hitters",
            "items": [int(item) for item in estimate.items],
            "labels": estimate.names,
            "frequencies": _floats(estimate.frequencies),
            "standard_error": _floats(estimate.standard_error),
            "band": {"level": level, "low": _floats(estimate.frequencies - half), "high": _floats(estimate.frequencies + half),
                     "simultaneous_over": candidates},
            "k": estimate.details["k"],
            "threshold": estimate.details["threshold"],
            "rounds": estimate.details["rounds"],
        }
    if isinstance(estimate, MeanEstimate):
        interval = estimate.confidence_interval(level)
        return {
            "kind": "mean",
            "mean": float(estimate.mean),
            "standard_error": float(estimate.standard_error),
            "band": {"level": level, "low": float(interval.low), "high": float(interval.high)},
        }
    if isinstance(estimate, MeanVarianceEstimate):
        interval = estimate.mean_estimate.confidence_interval(level)
        return {
            "kind": "mean_variance",
            "mean": float(estimate.mean),
            "var": float(estimate.var),
            "mean_standard_error": float(estimate.mean_standard_error),
            "var_standard_error": float(estimate.var_standard_error),
            "band": {"level": level, "low": float(interval.low), "high": float(interval.high)},
        }
    raise Failure("internal", f"An estimate of type {type(estimate).__name__} has no JSON form.")


def estimate_json(campaign: Campaign, query) -> dict:
    """``GET /api/campaigns/{id}/estimate``: the estimate (``null`` before the first report), n, rejections
    and the poisoning ``diagnostics`` of the campaign's aggregate (:mod:`._diagnostics`)."""
    from ._diagnostics import diagnostics

    options, level = estimate_options(query)
    estimate = _estimate(campaign, options)
    protocol = campaign.protocol
    return {
        "campaign": campaign.id,
        "state": campaign.state,
        "protocol": protocol.name,
        "epsilon": protocol.epsilon,
        "n": campaign.n,
        "rejected": dict(campaign.rejected),
        "refused_batches": dict(campaign.refused),
        "batches": campaign.batches,
        "options": options,
        "estimate": None if estimate is None else describe_estimate(estimate, level),
        "diagnostics": diagnostics(protocol, campaign.aggregator()),
    }


def estimate_png(campaign: Campaign, query) -> bytes:
    """``GET /api/campaigns/{id}/estimate.png``: the estimate's plot (409 before the first report)."""
    from ..cli._deploy import _plot_estimate

    options, _ = estimate_options(query)
    estimate = _estimate(campaign, options)
    if estimate is None:
        raise Conflict("no_reports", f"Campaign {campaign.id!r} has no report yet; there is nothing to plot.")
    protocol = campaign.protocol
    buffer = io.BytesIO()
    with _PYPLOT:
        try:
            _plot_estimate(estimate, f"{campaign.id}: {protocol.name}, eps={protocol.epsilon:g}, n={campaign.n}", buffer)
        except DPDistError as error:
            raise InvalidRequest("invalid_option", str(error)) from None
    return buffer.getvalue()
