"""A campaign's estimate as JSON (the estimate's own ``to_dict``, ``docs/results.md``) and as a PNG (its ``figure``).

Query parameters other than ``level`` (the confidence level of the intervals,
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

__all__ = ["estimate_options", "estimate_json", "estimate_png", "view_parameters"]

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
#: The estimates as served, with their fixed-n bands and confidence sequences (:mod:`._uncertainty`): once per change.
UNCERTAINTIES = _EstimateCache()


def _state_key(campaign: Campaign, options: dict) -> tuple:
    import zlib

    statistic = np.ascontiguousarray(campaign.statistic)
    return (campaign.id, campaign.created_ms, campaign.n, campaign.batches, zlib.crc32(statistic.view(np.uint8).tobytes()),
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


def estimate_json(campaign: Campaign, query) -> dict:
    """``GET /api/campaigns/{id}/estimate``: the estimate (``null`` before the first report), n, rejections
    and the poisoning ``diagnostics`` of the campaign's aggregate (:mod:`._diagnostics`)."""
    from ._diagnostics import diagnostics
    from ._uncertainty import guarantee_text

    options, level = estimate_options(query)
    width, replicates = view_parameters(query)
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
        "guarantee": guarantee_text(protocol),
        "estimate": None if estimate is None else _served(campaign, estimate, options, level, width, replicates),
        "diagnostics": diagnostics(protocol, campaign.aggregator()),
    }


def _served(campaign: Campaign, estimate, options: dict, level: float, width, replicates: int) -> dict:
    """The estimate's JSON with its fixed-n band and confidence sequence (:mod:`._uncertainty`), once per change."""
    from ..confidence_sequences import DEFAULT_TARGET_N
    from ._uncertainty import served_estimate

    key = ("served", *_state_key(campaign, options), level, width, replicates)
    return UNCERTAINTIES.get(key, lambda: served_estimate(
        campaign.protocol, campaign.aggregator(), estimate, level=level, width=width, replicates=replicates,
        target_n=campaign.max_reports or DEFAULT_TARGET_N, options=options,
    ))


def estimate_png(campaign: Campaign, query) -> bytes:
    """``GET /api/campaigns/{id}/estimate.png``: the estimate's figure (409 before the first report)."""
    from .. import plotting

    options, level = estimate_options(query)
    estimate = _estimate(campaign, options)
    if estimate is None:
        raise ServiceError(409, "no_reports", f"Campaign {campaign.id!r} has no report yet; there is nothing to plot.")
    protocol = campaign.protocol
    buffer = io.BytesIO()
    try:
        plotting.save_estimate(estimate, buffer, label=f"{campaign.id}: {protocol.name}, eps={protocol.epsilon:g}, "
                               f"n={campaign.n}", level=level)
    except DPDistError as error:
        raise ServiceError(400, "invalid_option", str(error)) from None
    return buffer.getvalue()
