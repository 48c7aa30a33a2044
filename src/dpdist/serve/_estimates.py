"""A campaign's estimate as JSON (the estimate's own ``to_dict``, ``docs/results.md``) and as a PNG (its ``figure``).

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

from .. import _json
from ..errors import DPDistError
from ._campaigns import Campaign
from ._refusals import Conflict, InvalidRequest

__all__ = ["estimate_options", "estimate_json", "estimate_png"]


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
        "estimate": None if estimate is None else estimate.to_dict(level),
        "diagnostics": diagnostics(protocol, campaign.aggregator()),
    }


def estimate_png(campaign: Campaign, query) -> bytes:
    """``GET /api/campaigns/{id}/estimate.png``: the estimate's figure (409 before the first report)."""
    from .. import plotting

    options, level = estimate_options(query)
    estimate = _estimate(campaign, options)
    if estimate is None:
        raise Conflict("no_reports", f"Campaign {campaign.id!r} has no report yet; there is nothing to plot.")
    protocol = campaign.protocol
    buffer = io.BytesIO()
    try:
        plotting.save_estimate(estimate, buffer, label=f"{campaign.id}: {protocol.name}, eps={protocol.epsilon:g}, "
                               f"n={campaign.n}", level=level)
    except DPDistError as error:
        raise InvalidRequest("invalid_option", str(error)) from None
    return buffer.getvalue()
