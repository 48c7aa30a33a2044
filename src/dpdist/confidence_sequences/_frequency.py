r"""Confidence sequences of item frequencies (pure frequency oracles) and of means (PM, SR).

Frequencies.  A pure oracle (Wang et al., USENIX Security 2017) makes each
report add a bounded term :math:`Y_{i,v}` to item :math:`v`'s support count
(:math:`\{0, 1\}` for most: the report supports :math:`v` or not;
:meth:`~dpdist.local.frequency.FrequencyOracle.support_range` gives the range),
with mean :math:`q^* + (p^* - q^*) f_v` for a user drawn from a population
with frequencies :math:`f`.  The support count :math:`C_v = \sum_i Y_{i,v}` is
what the aggregate keeps, so the beta-binomial mixture sequence
(:mod:`._boundary`) applies to each item's :math:`Y`, rescaled to
:math:`[0, 1]`, and maps to :math:`f_v` through the same affine inverse as the
unbiased estimator :math:`\hat f_v = (C_v/n - q^*)/(p^* - q^*)`: a
confidence sequence for the mean of the privatized views, debiased by the
known channel, as Waudby-Smith, Wu & Ramdas do for their randomized response of
bounded values ("Nonparametric extensions of randomized response for private
confidence sets", ICML 2023), here with the mixture boundary of the sum alone.  Per item at level :math:`1-\alpha`; all items at once with
:math:`\alpha/d` each (union bound), intersected with the simplex (every
frequency in :math:`[0, 1]`, :math:`f_v \le 1 - \sum_{u \ne v} \ell_u`,
:math:`f_v \ge 1 - \sum_{u \ne v} h_u`), which keeps every :math:`f` it held.  When the box misses the
simplex (the clipped lower limits sum above 1, or the upper ones below 1) the intersection is empty: no
distribution is consistent with the support counts at that level, which honest reports produce with
probability at most :math:`\alpha` (a poisoning signal); the band is then reported as empty
(``simultaneous_empty``, :attr:`dpdist.estimates.Interval.empty`), never as limits with low above high.

Means.  PM and SR report one of finitely many public outputs whose decoded
value :math:`g_k` has :math:`E[g_K \mid v] = v` exactly; the aggregate is the
histogram of outputs, so :math:`\sum_i g_{K_i}` is known and the sequence of
the bounded mean of :math:`g` is the sequence of the population's mean.

What is covered: the population the users are drawn from, independently and
each reporting once (the model behind the fixed-n intervals too).
"""

from __future__ import annotations

import numpy as np

from ._bennett import BennettMean, largest_second_moment
from ._boundary import BoundedMeans
from ._results import FrequencySequence, MeanSequence

__all__ = ["decoded_means", "frequency_sequence", "mean_sequence", "mean_source", "oracle_means"]


def oracle_means(oracle, support_counts, n: int, alpha, target_n: float) -> BoundedMeans:
    """The frequencies of ``oracle``'s items as bounded means (module docstring): ``f_v = offset + scale * theta_v``."""
    p, q = oracle.support_probabilities()
    low, high = oracle.support_range()
    counts = np.asarray(support_counts, dtype=np.float64)
    span = high - low
    return BoundedMeans(
        successes=(counts - n * low) / span,
        n=float(n),
        alpha=np.asarray(alpha, dtype=np.float64),
        offset=np.full(counts.shape, (low - q) / (p - q)),
        scale=np.full(counts.shape, span / (p - q)),
        target_n=float(target_n),
    )


def _simplex(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Box ``[low, high]`` intersected with the probability simplex, per coordinate; NaN everywhere when empty."""
    low, high = np.clip(low, 0.0, 1.0), np.clip(high, 0.0, 1.0)
    if low.sum() > 1.0 or high.sum() < 1.0:  # no point of the box sums to 1 (module docstring)
        return np.full(low.shape, np.nan), np.full(high.shape, np.nan)
    low, high = np.maximum(low, 1.0 - (high.sum() - high)), np.minimum(high, 1.0 - (low.sum() - low))
    return low, np.maximum(high, low)  # (equal up to rounding where the box touches the simplex at one point)


def sequence_stamp(level: float, n: int, target_n: float) -> dict:
    """The level, count and tuning every sequence carries."""
    return {"level": float(level), "n": int(n), "target_n": float(target_n)}


def frequency_sequence(protocol, aggregator, level: float, target_n: float) -> FrequencySequence:
    """Per-item and simultaneous sequences of a pure, unbiased frequency oracle's frequencies."""
    alpha = 1.0 - level
    n = aggregator.n
    counts = protocol.support_counts(aggregator)
    both = oracle_means(protocol, counts, n, np.array([[alpha], [alpha / counts.size]]), target_n)
    (low, band_low), (high, band_high) = both.interval()  # per item, and all items (one bisection)
    band_low, band_high = _simplex(band_low, band_high)
    band = oracle_means(protocol, counts, n, alpha / counts.size, target_n)
    p, q = protocol.support_probabilities()
    return FrequencySequence(
        estimate=(counts / max(n, 1) - q) / (p - q),
        low=np.clip(low, 0.0, 1.0),
        high=np.clip(high, 0.0, 1.0),
        simultaneous_low=band_low,
        simultaneous_high=band_high,
        simultaneous_empty=bool(np.isnan(band_low).any()),
        **sequence_stamp(level, n, target_n),
        method=f"beta-binomial mixture on {protocol.display_name}'s support counts (Howard et al. 2021); "
        f"simultaneous: union over {counts.size} items, intersected with the simplex",
        labels=getattr(protocol, "labels", None),
        _band=band,
    )


def decoded_means(protocol, output_counts, n: int, alpha, target_n: float) -> BoundedMeans:
    """The mean of a PM or SR population as a bounded mean of its decoded reports (``output_counts``: the aggregate).

    ``output_counts`` may have leading axes (independent aggregates, e.g. many
    simulated collections): the result is elementwise over them.
    """
    decoded = protocol.decoded_values  # on [-1, 1]
    counts = np.asarray(output_counts, dtype=np.float64)
    low_g, high_g = float(decoded.min()), float(decoded.max())
    lo, hi = protocol.bounds
    half = (hi - lo) / 2.0
    # v = lo + half (g + 1): an affine image of the bounded mean of g
    return BoundedMeans(
        successes=np.atleast_1d(counts @ ((decoded - low_g) / (high_g - low_g))),
        n=float(n),
        alpha=np.asarray(alpha, dtype=np.float64),
        offset=np.asarray(lo + half * (low_g + 1.0)),
        scale=np.asarray(half * (high_g - low_g)),
        target_n=float(target_n),
    )


def mean_source(protocol, output_counts, n: int, alpha: float, target_n: float):
    """The sequence behind a PM/SR mean: the bounded-range mixture when a report decodes to one of two values
    (SR: the mixture is then exact), else Bennett's with the variance bounded by the channel and the reports
    (:mod:`._bennett`; PM: 0.55-0.6 times as wide as the bounded-range mixture at eps = 1 to 2).

    The choice depends on the protocol's constants only, never on the reports.
    """

    decoded = protocol.decoded_values
    bound = float(np.max(np.abs(decoded)))
    if np.unique(decoded).size == 2:
        return decoded_means(protocol, output_counts, n, alpha, target_n)
    second = largest_second_moment(protocol)
    lo, hi = protocol.bounds
    counts = np.asarray(output_counts, dtype=np.float64)
    return BennettMean(np.atleast_1d(counts @ decoded), np.atleast_1d(counts @ decoded**2), float(n), float(alpha),
                       bound, second, float(target_n), offset=(lo + hi) / 2.0, scale=(hi - lo) / 2.0)


def mean_sequence(protocol, aggregator, level: float, target_n: float) -> MeanSequence:
    """Sequence of the population's mean from a PM or SR aggregate (histogram of decoded outputs)."""

    counts = np.asarray(aggregator.statistic, dtype=np.float64)
    n = aggregator.n
    source = mean_source(protocol, counts, n, 1.0 - level, target_n)
    lo, hi = protocol.bounds
    low, high = (float(np.clip(value[0], lo, hi)) for value in source.interval())
    decoded = protocol.decoded_values
    bound = f"reports in [{decoded.min():.4g}, {decoded.max():.4g}]"
    method = (f"Bennett mixture on {protocol.display_name}'s decoded {bound}, variance bounded by the channel"
              if isinstance(source, BennettMean) else f"beta-binomial mixture on {protocol.display_name}'s decoded {bound}")
    return MeanSequence(
        estimate=float(lo + (hi - lo) / 2.0 * (counts @ decoded / max(n, 1) + 1.0)),
        low=low,
        high=high,
        **sequence_stamp(level, n, target_n),
        method=method + " (Howard et al. 2021)",
        _mean=source,
    )
