"""The ``uncertainty`` of a campaign's estimate: its fixed-n band and its confidence sequence (issue 30 item 2).

Every campaign kind gets both, side by side, labelled for what they are:

* ``fixed_n``: the 95 % interval or band of one look at a number of reports fixed in
  advance (a frequency oracle's per-item normal interval; the heavy hitters' Bonferroni
  band over the candidates; a distribution's parametric-bootstrap CDF band,
  :func:`dpdist.uncertainty.cdf_band`, with its quantile and mean intervals; a mean's
  normal interval).  Read at whatever moment looks good on a page polled every 3 s,
  it is not a 95 % interval: under peeking it covered 0.64-0.74 of the paths
  (``docs/uncertainty.md``);
* ``sequence``: the confidence sequence (:mod:`dpdist.confidence_sequences`), valid at
  every number of reports at once, with the "stop when narrower than ``width``"
  readout when the query asks for one (``?width=0.02``); ``null`` with the reason in
  ``sequence_unavailable`` for protocols that have none.

The sequence is tuned for the campaign's ``max_reports`` when it states one, else
10,000 reports: a constant fixed before the first report, as the guarantee requires.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DPDistError

__all__ = ["QUANTILES", "uncertainty"]

#: Quantiles whose intervals a distribution's uncertainty lists.
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)
#: What ``fixed_n`` means, in every document.
FIXED_N_NOTE = ("fixed-n: valid for one look at a number of reports fixed in advance; a page watched while "
                "reports arrive needs the sequence")


def _floats(values) -> list:
    return [float(v) if math.isfinite(v) else None for v in np.asarray(values, dtype=np.float64).ravel()]


def guarantee_text(protocol) -> str:
    """The campaign's privacy guarantee in words, with its neighbouring relation (over time for a memo)."""
    if protocol.tags.memoized and hasattr(protocol, "describe_over_time"):
        return protocol.describe_over_time()
    return protocol.guarantee.describe()


def uncertainty(protocol, aggregator, estimate, described: dict, *, level: float, width: float | None,
                replicates: int, target_n: float, options: dict) -> dict:
    """The ``uncertainty`` field of ``GET /api/campaigns/{id}/estimate`` (module docstring)."""
    from ..confidence_sequences import confidence_sequence, why_no_sequence

    kind = described["kind"]
    fixed = _fixed_n(protocol, aggregator, estimate, described, level, replicates, options)
    sequence, reason = None, why_no_sequence(protocol)
    if reason is None:
        try:
            sequence = confidence_sequence(protocol, aggregator, level=level, target_n=target_n)
        except DPDistError as error:
            reason = str(error)
    stop = None
    if sequence is not None and width is not None:
        stop = sequence.stop_readout(width).to_dict()
    document = sequence.to_dict() if sequence is not None else None
    if document is not None and kind == "distribution":
        low, high = sequence.quantile_interval(QUANTILES)
        document["quantiles"] = {"q": list(QUANTILES), "low": _floats(low), "high": _floats(high)}
    if document is not None and kind == "frequency" and options.get("postprocess", "none") != "none":
        document["note"] = "centred on the unbiased estimate, not on the post-processed one"
    return {
        "level": level,
        "fixed_n": fixed,
        "fixed_n_note": FIXED_N_NOTE,
        "sequence": document,
        "sequence_unavailable": reason,
        "stop": stop,
    }


def _fixed_n(protocol, aggregator, estimate, described, level, replicates, options) -> dict | None:
    """The fixed-n interval or band of the estimate's kind (module docstring)."""
    kind = described["kind"]
    if kind in ("frequency", "heavy_hitters", "mean", "mean_variance"):
        band = described.get("band")
        return None if band is None else {key: band[key] for key in band if key != "level"}
    if kind != "distribution" or replicates == 0:
        return None
    from ..uncertainty import cdf_band

    estimate_options = {key: value for key, value in options.items() if key != "rng"}
    try:
        band = cdf_band(protocol, aggregator, level=level, replicates=replicates, **estimate_options).band
    except DPDistError as error:
        return {"unavailable": str(error)}
    low, high = band.quantile_interval(QUANTILES)
    mean_low, mean_high = band.mean_interval()
    return {
        "method": band.method,
        "replicates": band.replicates,
        "edges": _floats(band.edges),
        "low": _floats(band.simultaneous_lower),
        "high": _floats(band.simultaneous_upper),
        "pointwise_low": _floats(band.lower),
        "pointwise_high": _floats(band.upper),
        "quantiles": {"q": list(QUANTILES), "low": _floats(low), "high": _floats(high)},
        "mean": {"low": mean_low, "high": mean_high},
    }
