"""A campaign's estimate as JSON (the estimate's own ``to_dict``, ``docs/reference/results.md``) and as a PNG (its ``figure``).

Query parameters other than ``level`` (the confidence level of the intervals,
default 0.95), ``width`` (the target width of the "stop when narrower" readout of
the confidence sequence) and ``replicates`` (bootstrap replicates of a distribution's
fixed-n band, default 100, 0 for none; :mod:`._uncertainty`) are passed to the
protocol's ``estimate`` as options, e.g.
``?postprocess=norm-sub`` for frequency oracles or ``?method=ems`` for the
square wave; values are read as JSON when they parse (numbers, ``true``,
``null``) and as strings otherwise.  An option the protocol does not take, or a
value it refuses, is a 400 ``invalid_option`` naming it; so is an iteration count
above :data:`MAX_ITERATIONS` or a tolerance below :data:`MIN_TOLERANCE` (one
estimator process serves every campaign; each estimate also has a time limit,
:data:`dpdist.serve._estimator.TIME_LIMIT_S`), and so is what would grow the estimator's memory
without bound within that time: ``keep_path`` (every iterate kept, never served) and ``bootstrap``
above :data:`MAX_BOOTSTRAP` replicates or :data:`MAX_BOOTSTRAP_VALUES` kept values (docs/how-to/run-a-campaign.md, "Estimates": memory the time limit does not bound).
"""

from __future__ import annotations

import io
import json
import math

import numpy as np

from .. import _json, plotting
from ..errors import DPDistError
from ..estimates import Distribution
from ._campaigns import Campaign
from ._diagnostics import diagnostics
from .._guard._refusals import Conflict, InvalidRequest
from ._uncertainty import guarantee_text, served_estimate

__all__ = ["estimate_options", "estimate_body", "estimate_json", "estimate_png", "json_body", "view_parameters"]

#: Query parameters about what the document shows, not options of the estimator.
VIEW_PARAMETERS = ("width", "replicates")
#: Bootstrap replicates of a distribution's fixed-n band by default (the cost is that many estimates).
DEFAULT_REPLICATES = 100
#: The most iterations an estimate query may ask for (``max_iterations``, any ``*iterations`` option): 10x the largest
#: default of dpdist's iterative estimators (EM, EMS: 10,000). One estimator process serves every campaign of a
#: server, one estimate at a time (:mod:`._estimator`): a query asking 10^8 would hold it for every campaign.
MAX_ITERATIONS = 100_000
#: The smallest convergence tolerance an estimate query may ask for (``tolerance``, any ``*tolerance`` option): the
#: smallest default of dpdist's estimators (1e-12); below it the iterations run to ``max_iterations``.
MIN_TOLERANCE = 1e-12
#: The most replicates of an estimator's own bootstrap (``bootstrap``) a query may ask for, as ``replicates``: each
#: replicate's estimate is kept until the interval is read (100,000 x 1,024 items held 1.3 GB at 40,000, R45-3).
MAX_BOOTSTRAP = 1000
#: The most values the replicates of ``bootstrap`` may keep (replicates x the aggregate's size): 256 MB of float64.
MAX_BOOTSTRAP_VALUES = 2**25


def view_parameters(query) -> tuple[float | None, int]:
    """``width`` (target width of the stop readout, or None) and ``replicates`` from the query string."""
    width, replicates = None, DEFAULT_REPLICATES
    if "width" in query:
        try:
            width = float(query["width"])
        except ValueError:
            width = math.nan
        if not (math.isfinite(width) and width > 0):
            raise InvalidRequest("invalid_option", f"The 'width' parameter must be a number > 0. Got {query['width']!r}.")
    if "replicates" in query:
        text = query["replicates"]
        digits = text.lstrip("0") or "0"  # at most 4 read: int() of 4,301 digits raised ValueError, a 500
        if not (text.isascii() and text.isdigit() and len(digits) <= 4) or not (int(digits) == 0 or 20 <= int(digits) <= 1000):
            raise InvalidRequest("invalid_option", f"The 'replicates' parameter must be 0 or an integer in [20, 1000]. Got {text!r}.")
        replicates = int(digits)
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
                raise InvalidRequest("invalid_option", f"The 'level' parameter must be a number in (0, 1). Got {text!r}.")
            continue
        try:
            options[key] = _json.loads(text)
        except ValueError:
            options[key] = text
        if _not_finite(options[key]):  # 1e999, NaN: an answer echoing it is no JSON (a 500 and two tracebacks)
            raise InvalidRequest("invalid_option", f"The '{key}' option must hold finite numbers only. Got {text!r}.")
        _check_cost(key, options[key], text)
    return options, level


def _not_finite(value) -> bool:
    """Whether ``value`` (an option's parsed JSON, its size bounded by :mod:`dpdist._json`) holds an infinite or NaN
    number; walked without recursion (nested 500 deep, the recursive walk raised RecursionError, a 500)."""
    waiting = [value]
    while waiting:
        item = waiting.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return True
        if isinstance(item, list):
            waiting.extend(item)
        elif isinstance(item, dict):
            waiting.extend(item.values())
    return False


def _check_cost(key: str, value, text: str) -> None:
    """Refuse an option that would hold the server's one estimator process unboundedly (400 ``invalid_option``)."""
    number = value if isinstance(value, (int, float)) and not isinstance(value, bool) else None
    if key.endswith("iterations") and number is not None and not number <= MAX_ITERATIONS:
        raise InvalidRequest("invalid_option", f"The '{key}' option must be at most {MAX_ITERATIONS} on the service (one "
                             f"estimator serves every campaign). Got {text!r}.")
    if key.endswith("tolerance") and number is not None and not number >= MIN_TOLERANCE:
        raise InvalidRequest("invalid_option", f"The '{key}' option must be at least {MIN_TOLERANCE:g} on the service (one "
                             f"estimator serves every campaign). Got {text!r}.")
    if key.endswith("keep_path") and value not in (False, None, 0):  # iterations x d floats, never served
        raise InvalidRequest("invalid_option", f"The '{key}' option is not taken on the service: it keeps every iterate "
                             f"in the estimator's memory and the served estimate does not show them. Got {text!r}.")
    if key == "bootstrap" and number is not None and not number <= MAX_BOOTSTRAP:
        raise InvalidRequest("invalid_option", f"The 'bootstrap' option must be at most {MAX_BOOTSTRAP} on the service "
                             f"(each replicate is kept in the estimator's memory). Got {text!r}.")


def _estimate(campaign: Campaign, options: dict):
    """The protocol's estimate of the campaign's aggregate (None before the first report); computed once per change
    of the campaign and kept by :mod:`._estimate_cache`, in the estimator process."""
    return _compute_estimate(campaign, options)


def _compute_estimate(campaign: Campaign, options: dict):
    protocol = campaign.protocol
    aggregator = campaign.aggregator()
    if aggregator.n == 0:
        return None
    replicates = options.get("bootstrap")
    size = int(np.size(aggregator.statistic))
    if isinstance(replicates, int) and not isinstance(replicates, bool) and replicates * size > MAX_BOOTSTRAP_VALUES:
        raise InvalidRequest("invalid_option", f"The 'bootstrap' option must be at most {MAX_BOOTSTRAP_VALUES // size} "
                             f"for campaign {campaign.id!r} (replicates x its {size} counts kept in the estimator's memory "
                             f"at most {MAX_BOOTSTRAP_VALUES}). Got {replicates!r}.")
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


def estimate_body(campaign: Campaign, query) -> bytes:
    """:func:`estimate_json` as the answer's body (:func:`json_body`), made where it is computed, in the estimator
    process: rendering a document of a large domain took the server's event loop 3.7 us a domain item (7.5 s for GRR
    at d = 2*10^6, a 321 MB document), every campaign's batches waiting."""
    return json_body(estimate_json(campaign, query))


def json_body(document) -> bytes:
    """``document`` as Starlette's ``JSONResponse`` renders it (the same bytes the route answered before)."""
    return json.dumps(document, ensure_ascii=False, allow_nan=False, indent=None, separators=(",", ":")).encode("utf-8")


def _served(campaign: Campaign, estimate, options: dict, level: float, width, replicates: int) -> dict:
    """The estimate's JSON with its fixed-n band and confidence sequence (:mod:`._uncertainty`); the whole document
    is computed once per change of the campaign (:mod:`._estimate_cache`)."""
    from ..confidence_sequences import DEFAULT_TARGET_N  # lazy: loads scipy (0.7 s); only the estimator's child computes estimates

    return served_estimate(campaign.protocol, campaign.aggregator(), estimate, level=level, width=width, replicates=replicates,
                           target_n=campaign.max_reports or DEFAULT_TARGET_N, options=options)


def estimate_png(campaign: Campaign, query, served: dict | bytes | None = None) -> bytes:
    """``GET /api/campaigns/{id}/estimate.png``: the estimate's figure (409 before the first report).

    A distribution is drawn as ``served``, the estimate document of the same query (:func:`estimate_json`, or its
    body, :func:`estimate_body`): with the fixed-n CDF band the JSON, ``dpdist campaign estimate`` and the dashboard
    show (the figure is not drawn from the bare estimate, without it).
    """
    options, level = estimate_options(query)
    document: dict = json.loads(served) if isinstance(served, bytes) else served or {}
    shown = document.get("estimate")
    if shown is not None and shown.get("kind") == "distribution":
        estimate, n = Distribution.from_dict(shown), document["n"]
    else:
        estimate, n = _estimate(campaign, options), campaign.n
    if estimate is None:
        raise Conflict("no_reports", f"Campaign {campaign.id!r} has no report yet; there is nothing to plot.")
    protocol = campaign.protocol
    buffer = io.BytesIO()
    try:
        plotting.save_estimate(estimate, buffer, label=f"{campaign.id}: {protocol.name}, eps={protocol.epsilon:g}, "
                               f"n={n}", level=level)
    except DPDistError as error:
        raise InvalidRequest("invalid_option", str(error)) from None
    return buffer.getvalue()
