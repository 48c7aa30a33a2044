"""A campaign's estimate as JSON and as a PNG plot.

Query parameters other than ``level`` (the confidence level of the bands,
default 0.95), ``width`` (the target width of the "stop when narrower" readout of
the confidence sequence) and ``replicates`` (bootstrap replicates of a distribution's
fixed-n band, default 100, 0 for none; :mod:`._uncertainty`) are passed to the
protocol's ``estimate`` as options, e.g.
``?postprocess=norm-sub`` for frequency oracles or ``?method=ems`` for the
square wave; values are read as JSON when they parse (numbers, ``true``,
``null``) and as strings otherwise.  An option the protocol does not take, or a
value it refuses, is a 400 ``invalid_option`` naming it.
"""

from __future__ import annotations

import io
import json
import math
import threading

import numpy as np

from .. import _json
from ..errors import DPDistError
from ._store import Campaign, ServiceError
from ._uncertainty import QUANTILES

__all__ = ["estimate_options", "estimate_json", "estimate_png"]

_PYPLOT = threading.Lock()  # pyplot keeps global state: one plot at a time
#: Query parameters about what the document shows, not options of the estimator.
VIEW_PARAMETERS = ("width", "replicates")
#: Bootstrap replicates of a distribution's fixed-n band by default (the cost is that many estimates).
DEFAULT_REPLICATES = 100


def view_parameters(query) -> tuple[float | None, int]:
    """``width`` (target width of the stop readout, or None) and ``replicates`` from the query string."""
    width, replicates = None, DEFAULT_REPLICATES
    if "width" in query:
        try:
            width = float(query["width"])
        except ValueError:
            width = math.nan
        if not (math.isfinite(width) and width > 0):
            raise ServiceError(400, "invalid_option", f"The 'width' parameter must be a number > 0. Got {query['width']!r}.")
    if "replicates" in query:
        text = query["replicates"]
        if not text.isdigit() or not (int(text) == 0 or 20 <= int(text) <= 1000):
            raise ServiceError(400, "invalid_option", f"The 'replicates' parameter must be 0 or an integer in [20, 1000]. Got {text!r}.")
        replicates = int(text)
    return width, replicates


def estimate_options(query) -> tuple[dict, float]:
    """Estimator options and the band's confidence level from the query string."""
    options = {}
    level = 0.95
    for key, text in query.items():
        if key in VIEW_PARAMETERS:
            continue
        if key == "level":
            try:
                level = float(text)
            except ValueError:
                level = math.nan
            if not 0 < level < 1:
                raise ServiceError(400, "invalid_option", f"The 'level' parameter must be a number in (0, 1). Got {text!r}.")
            continue
        try:
            options[key] = _json.loads(text)
        except ValueError:
            options[key] = text
    return options, level


class _EstimateCache:
    """Estimates computed once per change of a campaign, not once per viewer (issue 28, item 4).

    Keyed by the campaign's identity and state of its aggregate (id, creation time, n, batches,
    CRC-32 of the statistic) and the options; a dashboard polled by many tabs asks for the same
    key until a batch arrives. Concurrent requests for one key wait for one computation
    (single flight). Bounded (:data:`SIZE` entries, least recently used dropped); one per
    process, so each worker of a multi-worker server computes each estimate once.
    """

    SIZE = 256

    def __init__(self):
        from collections import OrderedDict

        self._entries: "OrderedDict[tuple, object]" = OrderedDict()
        self._locks: dict[tuple, threading.Lock] = {}
        self._guard = threading.Lock()
        self.computed = 0  # estimates actually computed (for tests and metrics)

    def get(self, key: tuple, compute):
        with self._guard:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                if key in self._entries:
                    return self._entries[key]
            value = compute()
            with self._guard:
                self.computed += 1
                self._entries[key] = value
                while len(self._entries) > self.SIZE:
                    self._entries.popitem(last=False)
                self._locks.pop(key, None)
            return value


ESTIMATES = _EstimateCache()
#: The estimates' fixed-n bands and confidence sequences (:mod:`._uncertainty`), also once per change.
UNCERTAINTIES = _EstimateCache()


def _state_key(campaign: Campaign, options: dict) -> tuple:
    import zlib

    statistic = np.ascontiguousarray(campaign.statistic)
    return (campaign.id, campaign.created_ms, campaign.n, campaign.batches, zlib.crc32(statistic.view(np.uint8)),
            json.dumps(campaign.config, sort_keys=True), json.dumps(options, sort_keys=True, default=str))


def _estimate(campaign: Campaign, options: dict):
    return ESTIMATES.get(_state_key(campaign, options), lambda: _compute_estimate(campaign, options))


def _compute_estimate(campaign: Campaign, options: dict):
    protocol = campaign.protocol
    aggregator = campaign.aggregator()
    if aggregator.n == 0:
        return None
    try:
        return protocol.estimate(aggregator, **options)
    except TypeError as error:
        raise ServiceError(
            400, "invalid_option", f"{protocol.display_name}.estimate does not take the given options {sorted(options)}: {error}"
        ) from None
    except DPDistError as error:
        raise ServiceError(400, "invalid_option", str(error)) from None


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
            "labels": None if estimate.labels is None else list(estimate.labels),
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
            "quantiles": {"q": list(QUANTILES), "values": _floats(estimate.quantile(list(QUANTILES)))},
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
    raise ServiceError(500, "internal", f"An estimate of type {type(estimate).__name__} has no JSON form.")


def estimate_json(campaign: Campaign, query) -> dict:
    """``GET /api/campaigns/{id}/estimate``: the estimate (``null`` before the first report), n, rejections
    and the poisoning ``diagnostics`` of the campaign's aggregate (:mod:`._diagnostics`)."""
    from ._diagnostics import diagnostics

    from ._uncertainty import guarantee_text

    options, level = estimate_options(query)
    width, replicates = view_parameters(query)
    estimate = _estimate(campaign, options)
    protocol = campaign.protocol
    described = None if estimate is None else describe_estimate(estimate, level)
    if described is not None:
        described["uncertainty"] = _uncertainty(campaign, estimate, described, options, level, width, replicates)
        if described["kind"] == "distribution" and described["uncertainty"]["fixed_n"]:
            fixed = described["uncertainty"]["fixed_n"]
            if "edges" in fixed:
                described["band"] = {"level": level, "edges": fixed["edges"], "low": fixed["low"], "high": fixed["high"]}
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
        "guarantee": guarantee_text(protocol),
        "estimate": described,
        "diagnostics": diagnostics(protocol, campaign.aggregator()),
    }


def _uncertainty(campaign: Campaign, estimate, described: dict, options: dict, level: float, width, replicates: int):
    """The estimate's fixed-n band and confidence sequence (:mod:`._uncertainty`), once per change of the campaign."""
    from ..confidence_sequences import DEFAULT_TARGET_N
    from ._uncertainty import uncertainty

    key = ("uncertainty", *_state_key(campaign, options), level, width, replicates)
    target_n = campaign.max_reports or DEFAULT_TARGET_N
    return UNCERTAINTIES.get(key, lambda: uncertainty(
        campaign.protocol, campaign.aggregator(), estimate, described, level=level, width=width,
        replicates=replicates, target_n=target_n, options=options,
    ))


def estimate_png(campaign: Campaign, query) -> bytes:
    """``GET /api/campaigns/{id}/estimate.png``: the estimate's plot (409 before the first report)."""
    from ..cli._deploy import _plot_estimate

    options, _ = estimate_options(query)
    estimate = _estimate(campaign, options)
    if estimate is None:
        raise ServiceError(409, "no_reports", f"Campaign {campaign.id!r} has no report yet; there is nothing to plot.")
    protocol = campaign.protocol
    buffer = io.BytesIO()
    with _PYPLOT:
        try:
            _plot_estimate(estimate, f"{campaign.id}: {protocol.name}, eps={protocol.epsilon:g}, n={campaign.n}", buffer)
        except DPDistError as error:
            raise ServiceError(400, "invalid_option", str(error)) from None
    return buffer.getvalue()
