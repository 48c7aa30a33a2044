"""The statistical and exact privacy assertions behind :mod:`dpdist.testing`.

Each returns normally or raises ``AssertionError`` with a message naming what is
wrong.  dpdist's ``tests/testing/test_checks.py`` shows that
each of them fails on a deliberately broken randomizer, so none can pass
vacuously.
"""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING

import numpy as np
from scipy import special, stats

from .._types import ArrayLike, Seed
from ..errors import EachValueANewUserWarning
from ._inputs import population, true_frequencies

if TYPE_CHECKING:
    from ..local import LocalProtocol


def privatize_population(protocol, values, **options):
    """``protocol.privatize(values, **options)``: each value a different user, on purpose.

    The checks draw populations, so the warning of a longitudinal protocol that each
    value is a new user (:class:`~dpdist.errors.EachValueANewUserWarning`) is not shown.
    """


    with warnings.catch_warnings():
        warnings.simplefilter("ignore", EachValueANewUserWarning)
        return protocol.privatize(values, **options)

__all__ = [
    "ALPHA",
    "CHANNEL_SLACK",
    "max_privacy_loss",
    "chi_square_pvalue",
    "two_sample_agreement",
    "assert_channel_is_stochastic",
    "assert_epsilon_ldp",
    "assert_privatize_samples_channel",
    "assert_unbiased_with_analytic_variance",
    "assert_simulate_matches_privatize",
]

#: Relative slack on e^epsilon for floating-point rounding of channel entries.
CHANNEL_SLACK = 1e-9
#: Per-test false-alarm probability of the seeded statistical checks.  The tests
#: are seeded, so they are deterministic; this level makes a spurious failure of
#: a correct implementation for a given seed a one-in-a-million event.
ALPHA = 1e-6


def max_privacy_loss(channel: np.ndarray) -> float:
    """``max_y max_{i,j} log(P[i, y] / P[j, y])`` (inf if some column has both 0 and > 0)."""
    channel = np.asarray(channel, dtype=np.float64)
    if channel.ndim == 2 and channel.shape[1] > _LOSS_COLUMNS:
        return _max_privacy_loss_by_columns(channel)
    high = channel.max(axis=0)
    low = channel.min(axis=0)
    used = high > 0
    if np.any(low[used] <= 0):
        return math.inf
    return float(np.max(np.log(high[used]) - np.log(low[used])))


#: columns of a channel read at a time by :func:`max_privacy_loss` (a block of a few rows stays in cache)
_LOSS_COLUMNS = 1 << 14


def _max_privacy_loss_by_columns(channel: np.ndarray) -> float:
    """:func:`max_privacy_loss` of a wide channel, a block of columns at a time: the same numbers (the loss is a
    maximum over columns), read once from memory instead of once per pass (FLH's capped channels have millions of
    columns)."""
    worst, used_any = -math.inf, False
    for start in range(0, channel.shape[1], _LOSS_COLUMNS):
        block = channel[:, start : start + _LOSS_COLUMNS]
        high = block.max(axis=0)
        low = block.min(axis=0)
        used = high > 0
        if np.any(low[used] <= 0):
            return math.inf
        if used.any():
            used_any = True
            worst = np.maximum(worst, np.max(np.log(high[used]) - np.log(low[used])))  # a NaN is kept, as np.max
    if not used_any:  # no output is possible: np.max of nothing refuses, as for a narrow channel
        np.max(np.zeros(0))
    return float(worst)


def assert_channel_is_stochastic(channel: np.ndarray) -> None:
    """A channel is a matrix of non-negative rows summing to one."""
    channel = np.asarray(channel)
    assert channel.ndim == 2, f"channel must be a matrix, got shape {channel.shape}"
    assert np.all(channel >= 0), "channel has negative entries"
    np.testing.assert_allclose(channel.sum(axis=1), 1.0, atol=1e-9, err_msg="channel rows must sum to 1")


def assert_epsilon_ldp(channel: np.ndarray, epsilon: float) -> None:
    """Exact check: every output's probability ratio across inputs is at most e^epsilon."""
    loss = max_privacy_loss(channel)
    assert loss <= epsilon * (1 + CHANNEL_SLACK) + CHANNEL_SLACK, (
        f"privacy loss {loss!r} exceeds epsilon {epsilon!r}"
    )


def chi_square_pvalue(observed: np.ndarray, expected_probabilities: np.ndarray) -> float:
    """Pearson chi-square p-value, pooling outputs with expected count < 5 into one cell.

    An output of probability 0 that was observed gives 0.  When the pooled cell still expects
    fewer than 5 outputs it is merged into the smallest other cell, so every cell of the test
    expects at least 5 (Cochran 1954's rule for the chi-square approximation): a pooled cell
    expecting 0.02 outputs that sees one would otherwise alone give p ~ 1e-11.
    """
    observed = np.asarray(observed, dtype=np.float64)
    expected = np.asarray(expected_probabilities, dtype=np.float64) * observed.sum()
    if np.any((expected == 0) & (observed > 0)):
        return 0.0
    small = expected < 5
    if small.any():
        observed = np.append(observed[~small], observed[small].sum())
        expected = np.append(expected[~small], expected[small].sum())
        if expected[-1] < 5 and observed.size > 1:
            smallest = int(np.argmin(expected[:-1]))
            observed[smallest] += observed[-1]
            expected[smallest] += expected[-1]
            observed, expected = observed[:-1], expected[:-1]
    if observed.size < 2:
        return 1.0
    statistic = np.sum((observed - expected) ** 2 / expected)
    return float(special.chdtrc(observed.size - 1, statistic))  # stats.chi2.sf's own kernel, without its overhead


def assert_privatize_samples_channel(protocol: LocalProtocol, inputs: ArrayLike, n_per_input: int, rng: Seed) -> None:
    """Privatize ``n_per_input`` copies of each input; chi-square against its channel row.

    Bonferroni over the inputs: each test at level ``ALPHA / len(inputs)``.
    """
    inputs = np.asarray(inputs)
    channel = protocol.channel(inputs)
    generator = np.random.default_rng(rng)
    for row, value in zip(channel, inputs):
        copies = np.broadcast_to(np.asarray(value), (n_per_input, *np.shape(value))).copy()  # a record: rows of it
        reports = privatize_population(protocol, copies, rng=generator)
        observed = np.bincount(protocol.report_index(reports), minlength=channel.shape[1])
        assert observed.size == channel.shape[1], "report_index out of the channel's range"
        pvalue = chi_square_pvalue(observed, row)
        assert pvalue > ALPHA / len(inputs), (
            f"privatize does not sample the channel for input {value!r}: chi-square p-value {pvalue:.3g}"
        )


def two_sample_agreement(first: np.ndarray, second: np.ndarray) -> tuple[float, float]:
    """Smallest p-values of per-coordinate tests that two samples of vectors share mean and variance.

    Means: Welch z-test per coordinate (rows are independent repeats).  Variances:
    Levene-type test via scipy's ``levene`` (robust to non-normality).
    """
    first = np.asarray(first, dtype=np.float64)
    second = np.asarray(second, dtype=np.float64)
    mean_p, var_p = 1.0, 1.0
    for column in range(first.shape[1]):
        a, b = first[:, column], second[:, column]
        if a.std() == 0 and b.std() == 0:
            if a.mean() != b.mean():
                return 0.0, 0.0
            continue
        mean_p = min(mean_p, stats.ttest_ind(a, b, equal_var=False).pvalue)
        var_p = min(var_p, stats.levene(a, b).pvalue)
    return float(mean_p), float(var_p)


def _aggregate(protocol, values, rng):
    return protocol.aggregator().add(privatize_population(protocol, values, rng=rng), on_invalid="raise")


def assert_unbiased_with_analytic_variance(
    protocol: LocalProtocol, rng: Seed, *, repeats: int | None = None, n: int | None = None
) -> None:
    """Repeated estimates: per-item mean equals the truth, per-item variance equals ``protocol.variance``.

    Mean: ``|mean - f| <= z sqrt(Var / R)`` with ``z`` at ``ALPHA / (2d)`` two-sided
    (Bonferroni over items).  Variance: ``(R-1) s^2 / sigma^2 ~ chi2(R-1)`` for
    near-normal estimates (``n`` is large), bounds at the same level.
    """
    exact = protocol.tags.exact_simulate
    repeats = repeats or (2000 if exact else 400)
    n = n or (2000 if exact else 1000)
    values = population(protocol, n)
    truth = true_frequencies(protocol, values)
    generator = np.random.default_rng(rng)
    estimates = np.array(
        [
            protocol.estimate(
                protocol.simulate(values, rng=generator) if exact else _aggregate(protocol, values, generator)
            ).frequencies
            for _ in range(repeats)
        ]
    )
    variance = protocol.variance(n, truth)
    d = truth.size
    z = stats.norm.isf(ALPHA / (2 * d))
    bias = np.abs(estimates.mean(axis=0) - truth)
    limit = z * np.sqrt(variance / repeats)
    assert np.all(bias < limit), f"biased estimate: |mean - truth| = {bias} exceeds {limit}"
    ratio = estimates.var(axis=0, ddof=1) / variance
    low = stats.chi2.ppf(ALPHA / (2 * d), repeats - 1) / (repeats - 1)
    high = stats.chi2.isf(ALPHA / (2 * d), repeats - 1) / (repeats - 1)
    assert np.all((ratio > low) & (ratio < high)), f"variance ratio {ratio} outside [{low:.3f}, {high:.3f}]"


def assert_simulate_matches_privatize(protocol: LocalProtocol, rng: Seed, *, repeats: int = 400, n: int = 400) -> None:
    """``simulate`` and privatize + aggregate give statistics with equal means and variances."""
    values = population(protocol, n)
    generator = np.random.default_rng(rng)
    simulated = np.array([protocol.simulate(values, rng=generator).statistic for _ in range(repeats)])
    aggregated = np.array([_aggregate(protocol, values, generator).statistic for _ in range(repeats)])
    mean_p, var_p = two_sample_agreement(simulated, aggregated)
    tests = 2 * simulated.shape[1]
    assert mean_p > ALPHA / tests and var_p > ALPHA / tests, (
        f"simulate disagrees with privatize + aggregate: mean p={mean_p:.3g}, variance p={var_p:.3g}"
    )
