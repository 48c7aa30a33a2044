"""A campaign's estimate as served: its fixed-n intervals and its confidence sequence side by side (docs/explanation/uncertainty.md).

The estimate's JSON (``Estimate.to_dict``, ``docs/reference/results.md``) lists its intervals, each
saying whether it is ``anytime_valid``.  The service adds, for every campaign kind:

* the **fixed-n** ones (``anytime_valid: false``): valid for one look at a number of
  reports fixed in advance (a frequency oracle's per-item normal interval; the heavy
  hitters' Bonferroni band over the candidates; a mean's normal interval; for a
  distribution the parametric-bootstrap CDF band of :func:`dpdist.uncertainty.cdf_band`,
  ``?replicates=`` of them, with its quantile and mean intervals).  Read at whatever
  moment looks good on a page polled every 3 s, such an interval is not a 95 %
  interval: under peeking it held 0.60-0.77 of the time (``docs/explanation/uncertainty.md``);
* the **anytime** ones (``anytime_valid: true``): the confidence sequence of
  :mod:`dpdist.confidence_sequences`, which holds at every number of reports at once;
  or, in ``uncertainty.sequence_unavailable``, why the protocol has none.  A recovered estimate
  (``recover="ldprecover"``, :func:`dpdist.local.recover_frequencies`) has none either: the sequence
  bounds the frequencies of everyone who reported (fake users included), around the plain unbiased
  estimate, and no sequence is derived for the genuine users' recovered frequencies, which lie
  outside it where the recovery moved them (:data:`NO_RECOVERED_SEQUENCE`).

``uncertainty`` also holds the sequence's tuning (``target_n``: the campaign's
``max_reports`` when it states one, else 10,000, fixed before the first report),
with ``?width=w``, the "stop when narrower than w" readout, and ``bootstrap``: the
level and number of replicates of the fixed-n band of a distribution, whose stream is
keyed by the campaign's state (:func:`dpdist.uncertainty.band_generator`: config,
aggregate, estimate options), so the API, the dashboard, ``dpdist campaign estimate``
and the Python client show one interval for one state (docs/explanation/uncertainty.md, "What determines a band": they showed
three, each drawn afresh).
"""

from __future__ import annotations

from ..errors import DPDistError
from ..uncertainty import cdf_band

__all__ = ["guarantee_text", "served_estimate"]

#: What the fixed-n intervals are, in every document.
FIXED_N_NOTE = ("fixed-n intervals are valid for one look at a number of reports fixed in advance; a page watched "
                "while reports arrive needs the anytime ones")


#: How the fixed-n band's replicates are drawn, in every document that has one.
BOOTSTRAP_STREAM = ("keyed by the campaign's config, aggregate (statistic and n) and estimate options: one campaign state "
                    "gives one interval in every view")


#: Why a recovered estimate is served without anytime intervals (module docstring).
NO_RECOVERED_SEQUENCE = (
    "no anytime interval is derived for the recovered (LDPRecover) estimate: the confidence sequence bounds the "
    "frequencies of every report's user, fake ones included, around the plain unbiased estimate, not the genuine "
    "users' recovered frequencies"
)


def guarantee_text(protocol) -> str:
    """The campaign's privacy guarantee in words, with its neighbouring relation (over time for a memo)."""
    if protocol.tags.memoized and hasattr(protocol, "describe_over_time"):
        return protocol.describe_over_time()
    return protocol.guarantee.describe()


def served_estimate(protocol, aggregator, estimate, *, level: float, width: float | None, replicates: int,
                    target_n: float, options: dict) -> dict:
    """The estimate's JSON with the fixed-n band of a distribution and the anytime intervals (module docstring)."""
    from ..confidence_sequences import confidence_sequence, why_no_sequence  # lazy: loads scipy (0.7 s); only the estimator's child computes estimates

    banded = _with_fixed_band(protocol, aggregator, estimate, level, replicates, options)
    bootstrap = None
    if banded is not estimate:
        bootstrap = {"level": banded.band.level, "replicates": banded.band.replicates, "stream": BOOTSTRAP_STREAM}
    estimate = banded
    document = estimate.to_dict(level)
    display = estimate.display_density()  # the density as its figure draws it (the dashboard's), if it draws one
    if display is not None:
        document["display"] = display
    sequence, reason = None, why_no_sequence(protocol)
    if reason is None and options.get("recover", "none") != "none":
        reason = NO_RECOVERED_SEQUENCE
    if reason is None:
        try:
            sequence = confidence_sequence(protocol, aggregator, level=level, target_n=target_n)
        except DPDistError as error:
            reason = str(error)
    if sequence is not None:
        document["intervals"] = [*document["intervals"], *(interval.to_dict() for interval in sequence.intervals(estimate))]
    note = None if sequence is None else sequence.centring_note(options)
    document["uncertainty"] = {
        "fixed_n_note": FIXED_N_NOTE,
        "sequence_method": None if sequence is None else sequence.method,
        "sequence_unavailable": reason,
        "target_n": target_n,
        "stop": None if sequence is None or width is None else sequence.stop_readout(width).to_dict(),
        "note": note,
        "bootstrap": bootstrap,
    }
    return document


def _with_fixed_band(protocol, aggregator, estimate, level: float, replicates: int, options: dict):
    """A distribution with its bootstrap CDF band (``replicates`` of them; 0: as it is); other kinds as they are."""
    if replicates == 0 or not estimate.needs_band():
        return estimate

    try:
        return cdf_band(protocol, aggregator, level=level, replicates=replicates, **options)
    except DPDistError:
        return estimate  # (a protocol whose estimate cdf_band refuses keeps its own intervals)
