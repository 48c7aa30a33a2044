"""A campaign's estimate as served: its fixed-n intervals and its confidence sequence side by side (issue 30 item 2).

The estimate's JSON (``Estimate.to_dict``, ``docs/results.md``) lists its intervals, each
saying whether it is ``anytime_valid``.  The service adds, for every campaign kind:

* the **fixed-n** ones (``anytime_valid: false``): valid for one look at a number of
  reports fixed in advance (a frequency oracle's per-item normal interval; the heavy
  hitters' Bonferroni band over the candidates; a mean's normal interval; for a
  distribution the parametric-bootstrap CDF band of :func:`dpdist.uncertainty.cdf_band`,
  ``?replicates=`` of them, with its quantile and mean intervals).  Read at whatever
  moment looks good on a page polled every 3 s, such an interval is not a 95 %
  interval: under peeking it held 0.60-0.77 of the time (``docs/uncertainty.md``);
* the **anytime** ones (``anytime_valid: true``): the confidence sequence of
  :mod:`dpdist.confidence_sequences`, which holds at every number of reports at once;
  or, in ``uncertainty.sequence_unavailable``, why the protocol has none.

``uncertainty`` also holds the sequence's tuning (``target_n``: the campaign's
``max_reports`` when it states one, else 10,000, fixed before the first report) and,
with ``?width=w``, the "stop when narrower than w" readout.
"""

from __future__ import annotations

from ..errors import DPDistError

__all__ = ["guarantee_text", "served_estimate"]

#: What the fixed-n intervals are, in every document.
FIXED_N_NOTE = ("fixed-n intervals are valid for one look at a number of reports fixed in advance; a page watched "
                "while reports arrive needs the anytime ones")


def guarantee_text(protocol) -> str:
    """The campaign's privacy guarantee in words, with its neighbouring relation (over time for a memo)."""
    if protocol.tags.memoized and hasattr(protocol, "describe_over_time"):
        return protocol.describe_over_time()
    return protocol.guarantee.describe()


def served_estimate(protocol, aggregator, estimate, *, level: float, width: float | None, replicates: int,
                    target_n: float, options: dict) -> dict:
    """The estimate's JSON with the fixed-n band of a distribution and the anytime intervals (module docstring)."""
    from ..confidence_sequences import CDFSequence, confidence_sequence, why_no_sequence

    estimate = _with_fixed_band(protocol, aggregator, estimate, level, replicates, options)
    document = estimate.to_dict(level)
    if document["kind"] == "distribution":  # the density as its figure draws it (the dashboard's)
        from ._display import display_density

        document["display"] = display_density(estimate)
    sequence, reason = None, why_no_sequence(protocol)
    if reason is None:
        try:
            sequence = confidence_sequence(protocol, aggregator, level=level, target_n=target_n)
        except DPDistError as error:
            reason = str(error)
    if sequence is not None:
        anytime = sequence.intervals(estimate) if isinstance(sequence, CDFSequence) else sequence.intervals()
        document["intervals"] = [*document["intervals"], *(interval.to_dict() for interval in anytime)]
    note = None
    if sequence is not None and document["kind"] == "frequency" and options.get("postprocess", "none") != "none":
        note = "the anytime intervals are centred on the unbiased estimate, not on the post-processed one"
    document["uncertainty"] = {
        "fixed_n_note": FIXED_N_NOTE,
        "sequence_method": None if sequence is None else sequence.method,
        "sequence_unavailable": reason,
        "target_n": target_n,
        "stop": None if sequence is None or width is None else sequence.stop_readout(width).to_dict(),
        "note": note,
    }
    return document


def _with_fixed_band(protocol, aggregator, estimate, level: float, replicates: int, options: dict):
    """A distribution with its bootstrap CDF band (``replicates`` of them; 0: as it is); other kinds as they are."""
    if getattr(estimate, "kind", None) != "distribution" or replicates == 0 or estimate.band is not None:
        return estimate
    from ..uncertainty import cdf_band

    try:
        return cdf_band(protocol, aggregator, level=level, replicates=replicates, **options)
    except DPDistError:
        return estimate  # (a protocol whose estimate cdf_band refuses keeps its own intervals)
