"""Confidence sequences (dpdist.confidence_sequences): the boundary, the wiring per protocol, and peeking.

The peeking simulation: a campaign is looked at after every batch
of reports; an interval "covers over the whole path" when the truth is inside it at
*every* look.  A fixed-n 95 % interval read at every look must fail that (coverage
well below 0.95), the confidence sequence must hold it (>= 0.95 - 3 SE), and a
sequence half as wide must fail (the check has power).  SE = sqrt(0.95 * 0.05 / M)
is the binomial standard error of a coverage of 0.95 over M independent paths.

The paths are vectorized: all M collections' batch is privatized by the real
protocol in one call, counted per path, and fed to the same building blocks
``confidence_sequence`` uses (``oracle_means``, ``mean_source``, ``prefix_means``);
``test_building_blocks_are_what_confidence_sequence_reports`` checks they agree.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import beta as beta_law

from dpdist import local
from dpdist.confidence_sequences import (
    CDFSequence,
    FrequencySequence,
    MeanSequence,
    confidence_sequence,
    mixture_interval,
    why_no_sequence,
)
from dpdist.confidence_sequences._boundary import _log_mixture, mixture_precision
from dpdist.confidence_sequences._frequency import decoded_means, mean_source, oracle_means
from dpdist.confidence_sequences._distribution import prefix_means
from dpdist.errors import InvalidParameterError

Z95 = 1.959963984540054
PATHS = 300
SE = math.sqrt(0.95 * 0.05 / PATHS)  # 0.0126
BOUND = 0.95 - 3 * SE  # 0.912


# ---------------------------------------------------------------------------- the boundary
# a property of every interval, on random (successes, n, alpha): the fast loop checks the first 100 draws (the same
# ones, from the same seed), the whole suite all 300
@pytest.mark.parametrize("cases", [100, pytest.param(300, marks=pytest.mark.slow)])
def test_interval_is_the_set_where_the_mixture_stays_below_one_over_alpha(cases):
    rng = np.random.default_rng(0)
    grid = np.linspace(0, 1, 20_001)[1:-1]
    for _ in range(cases):
        n = int(rng.integers(1, 10**6))
        successes = min(float(rng.binomial(n, rng.uniform() ** 3) + rng.uniform()), n)
        alpha = 10 ** rng.uniform(-4, -1)
        low, high = mixture_interval(successes, n, alpha)
        inside = grid[_log_mixture(grid, successes, n, mixture_precision(alpha, 10_000)) < math.log(1 / alpha)]
        assert low <= successes / n <= high
        if inside.size:  # (narrower than the grid's step otherwise)
            assert inside.min() >= low - 1e-4 and inside.max() <= high + 1e-4  # the bisection found the whole set


def test_interval_edge_cases():
    low, high = mixture_interval([0.0, 100.0, 37.5], 100, 0.05)
    assert low[0] == 0.0 and high[1] == 1.0 and 0 < low[2] < 0.375 < high[2] < 1
    assert mixture_interval(0.0, 0, 0.05) == (0.0, 1.0)


def test_anytime_coverage_of_the_boundary_on_bernoulli_paths():
    # 1,000 paths of 20,000 coin flips with p = 0.1, looked at after every 400: the truth stays inside
    rng = np.random.default_rng(1)
    flips = rng.binomial(400, 0.1, size=(1000, 50)).cumsum(axis=1)
    n = np.arange(1, 51) * 400
    low, high = mixture_interval(flips, n, 0.05)
    cover = np.mean(np.all((low <= 0.1) & (0.1 <= high), axis=1))
    assert cover >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 1000), cover


# ---------------------------------------------------------------------------- wiring per protocol
@pytest.mark.parametrize("name, params", [
    ("grr", {}), ("oue", {}), ("sue", {}), ("olh", {}), ("ss", {}), ("hr", {}),
    ("dbitflippm", {"sampled_bits": 4}), ("l-grr", {"epsilon_1": 0.8}), ("l-osue", {"epsilon_1": 0.8}),
    ("loloha", {"epsilon_1": 0.8}),
])
def test_frequency_sequences_are_centred_on_the_unbiased_estimate_and_cover(name, params):
    protocol = local.make(name, epsilon=2.0, domain_size=8, **params)
    truth = np.array([0.3, 0.2, 0.15, 0.1, 0.1, 0.1, 0.05, 0.0])
    values = np.random.default_rng(2).choice(8, 20_000, p=truth)
    aggregate = protocol.aggregator()
    with pytest.warns(Warning) if protocol.tags.memoized else _nothing():
        aggregate.add(protocol.privatize(values, rng=3))
    sequence = confidence_sequence(protocol, aggregate)
    assert isinstance(sequence, FrequencySequence)
    assert np.allclose(sequence.estimate, protocol.estimate(aggregate).frequencies)
    shares = np.bincount(values, minlength=8) / values.size
    assert np.all((sequence.simultaneous_low <= shares) & (shares <= sequence.simultaneous_high))
    assert np.all(sequence.simultaneous_low <= sequence.low) and np.all(sequence.high <= sequence.simultaneous_high)
    assert sequence.width < 0.2
    readout = sequence.stop_readout(sequence.width / 2)
    assert not readout.reached and 3 * sequence.n < readout.n < 6 * sequence.n  # width ~ 1/sqrt(n) (and a log)
    assert sequence.stop_readout(1.0).reached


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@pytest.mark.parametrize("name", ["pm", "sr"])
def test_mean_sequence_covers_and_is_centred_on_the_estimate(name):
    protocol = local.make(name, epsilon=1.0, bounds=(10.0, 20.0))
    values = 10 + 10 * np.random.default_rng(4).beta(2, 5, 20_000)
    aggregate = protocol.aggregator()
    aggregate.add(protocol.privatize(values, rng=5))
    sequence = confidence_sequence(protocol, aggregate)
    assert isinstance(sequence, MeanSequence)
    assert sequence.estimate == pytest.approx(protocol.estimate(aggregate).mean)
    assert sequence.low < values.mean() < sequence.high < sequence.low + 1.5


@pytest.mark.parametrize("name, params", [
    ("binning", {"bins": 32, "oracle": "grr"}), ("binning", {"bins": 32, "oracle": "oue"}),
    ("binning", {"bins": 16, "oracle": "olh"}), ("hh", {"bins": 64}), ("hh-admm", {"bins": 64}),
    ("sw", {"bins": 32}), ("gw", {"bins": 32}),
])
def test_cdf_sequence_covers_the_cdf_and_its_quantiles_and_mean(name, params):
    protocol = local.make(name, epsilon=2.0, **params)
    values = np.random.default_rng(6).beta(5, 2, 20_000)
    aggregate = protocol.aggregator()
    aggregate.add(protocol.privatize(values, rng=7))
    sequence = confidence_sequence(protocol, aggregate, cells=16)
    assert isinstance(sequence, CDFSequence)
    cdf = np.mean(values[None, :] < sequence.edges[:, None], axis=1)
    assert np.all((sequence.low <= cdf + 1e-12) & (cdf <= sequence.high + 1e-12))
    assert np.all(np.diff(sequence.low) >= 0) and np.all(np.diff(sequence.high) >= 0)
    low, high = sequence.quantile_interval([0.1, 0.5, 0.9])
    assert np.all((low <= np.quantile(values, [0.1, 0.5, 0.9])) & (np.quantile(values, [0.1, 0.5, 0.9]) <= high))
    assert sequence.mean_low <= values.mean() <= sequence.mean_high
    assert sequence.width < 0.9


def test_the_envelope_of_prefix_intervals_is_the_linear_programs_answer():
    from dpdist.confidence_sequences import _distribution

    protocol = local.make("hh", epsilon=1.0, bins=64)
    aggregate = protocol.simulate(np.random.default_rng(8).beta(2, 5, 5000), rng=9)
    edges = np.arange(17) * 4
    constraints = _distribution._tree_constraints(protocol, aggregate, 0.05, 10_000, edges)
    fast = _distribution._extremes(constraints, edges / 64)
    below = np.tril(np.ones((17, 16)), k=-1)[1:-1]
    lp_low = _distribution._solve(constraints, np.vstack([below, edges[None, :-1] / 64]), maximize=False)
    lp_high = _distribution._solve(constraints, np.vstack([below, edges[None, 1:] / 64]), maximize=True)
    assert np.allclose(fast[0], lp_low[:-1], atol=1e-7) and np.allclose(fast[1], lp_high[:-1], atol=1e-7)
    assert fast[2] == pytest.approx(lp_low[-1], abs=1e-7) and fast[3] == pytest.approx(lp_high[-1], abs=1e-7)


def test_protocols_without_a_sequence_say_why():
    for name, params in [("cms", {"domain_size": 16}), ("flh", {"domain_size": 16}), ("cp", {"domain_size": 16})]:
        protocol = local.make(name, epsilon=1.0, **params)
        assert why_no_sequence(protocol)
        with pytest.raises(InvalidParameterError, match="confidence_sequence"):
            confidence_sequence(protocol, protocol.aggregator())
    assert "pem" in why_no_sequence(local.make("pem", epsilon=2.0, bits=16)).lower()
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    with pytest.raises(InvalidParameterError, match="level"):
        confidence_sequence(grr, grr.aggregator(), level=1.5)


# ---------------------------------------------------------------------------- peeking
BATCH, LOOKS = 200, 40  # looks after every 200 reports, up to n = 8,000


def _path_counts(protocol, draw, cells: int, rng):
    """Per look, the (PATHS, cells) report counts of PATHS independent collections (one privatize per look)."""
    counts = np.zeros((PATHS, cells))
    owner = np.repeat(np.arange(PATHS), BATCH)
    for _ in range(LOOKS):
        reports = np.asarray(protocol.privatize(draw(PATHS * BATCH, rng), rng=rng), dtype=np.int64)
        counts += np.bincount(owner * cells + reports, minlength=PATHS * cells).reshape(PATHS, cells)
        yield counts


def _whole_path(inside_per_look) -> float:
    """Share of the paths whose truth was inside at every look."""
    return float(np.mean(np.all(np.array(inside_per_look), axis=0)))


def _verdicts(fixed, sequence, half):
    print(f"whole-path coverage over {PATHS} paths, {LOOKS} looks: fixed-n {fixed:.3f}, sequence {sequence:.3f}, "
          f"half-width sequence {half:.3f}")
    assert sequence >= BOUND, f"the sequence covered {sequence:.3f} of the paths (bound {BOUND:.3f})"
    assert fixed < BOUND, f"the fixed-n interval covered {fixed:.3f} of the paths under peeking (bound {BOUND:.3f})"
    assert half < BOUND, f"a sequence half as wide covered {half:.3f} (bound {BOUND:.3f}): no power"


@pytest.mark.slow  # 0.27 CPU-s: repeated sequences
def test_peeking_frequency():
    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    truth = np.array([0.5, 0.3, 0.15, 0.05])
    item = 1
    fixed, sequence, half = [], [], []
    for look, counts in enumerate(_path_counts(protocol, lambda size, rng: rng.choice(4, size, p=truth), 4,
                                                np.random.default_rng(10)), start=1):
        n = look * BATCH
        p, q = protocol.support_probabilities()
        estimate = (counts / n - q) / (p - q)
        radius = Z95 * np.sqrt(protocol.variance(n, np.clip(estimate, 0.0, 1.0)))  # what FrequencyEstimate prints
        fixed.append(np.abs(estimate[:, item] - truth[item]) <= radius[:, item])
        low, high = oracle_means(protocol, counts, n, 0.05, 10_000).interval()
        sequence.append((low[:, item] <= truth[item]) & (truth[item] <= high[:, item]))
        centre = estimate[:, item]
        half.append((centre - (centre - low[:, item]) / 2 <= truth[item])
                    & (truth[item] <= centre + (high[:, item] - centre) / 2))
    _verdicts(_whole_path(fixed), _whole_path(sequence), _whole_path(half))


@pytest.mark.parametrize("name", ["sr", pytest.param("pm", marks=pytest.mark.slow)])  # PM's Bennett mixture: ~5 s
def test_peeking_mean(name):
    protocol = local.make(name, epsilon=1.0)
    truth = 2 / 7  # Beta(2, 5)
    decoded = protocol.decoded_values
    fixed, sequence, half = [], [], []
    for look, counts in enumerate(_path_counts(protocol, lambda size, rng: rng.beta(2, 5, size), decoded.size,
                                                np.random.default_rng(11 if name == "sr" else 17)), start=1):
        n = look * BATCH
        mean_g = counts @ decoded / n
        spread = (counts * (decoded[None, :] - mean_g[:, None]) ** 2).sum(axis=1) / (n - 1)
        estimate = (mean_g + 1) / 2  # bounds (0, 1): what MeanEstimate computes, with its normal interval
        fixed.append(np.abs(estimate - truth) <= Z95 * np.sqrt(spread / 4 / n))
        low, high = mean_source(protocol, counts, n, 0.05, 10_000).interval()  # SR: beta-binomial; PM: Bennett
        sequence.append((low <= truth) & (truth <= high))
        half.append((estimate - (estimate - low) / 2 <= truth) & (truth <= estimate + (high - estimate) / 2))
    _verdicts(_whole_path(fixed), _whole_path(sequence), _whole_path(half))


# 0.7 CPU-s (a 15-edge band at every look): the whole suite; the fast loop keeps the same code in
# test_peeking_frequency (the paths and verdicts), test_cdf_sequence_covers_the_cdf_and_its_quantiles_and_mean and
# test_building_blocks_are_what_confidence_sequence_reports (prefix_means, the band's bounds)
@pytest.mark.slow
def test_peeking_cdf_band():
    bins = 16
    protocol = local.make("binning", epsilon=2.0, bins=bins, oracle="grr")
    oracle = protocol.oracle
    edges = np.arange(1, bins)
    truth = beta_law(5, 2).cdf(edges / bins)
    middle = bins // 2 - 1
    fixed, sequence, half = [], [], []
    for look, counts in enumerate(_path_counts(protocol, lambda size, rng: rng.beta(5, 2, size), bins,
                                                np.random.default_rng(12)), start=1):
        n = look * BATCH
        p, q = oracle.support_probabilities()
        prefix = np.cumsum(counts, axis=1)[:, :-1]
        estimate = (prefix / n - q * edges) / (p - q)
        theta = prefix / n
        fixed_radius = Z95 * np.sqrt(theta * (1 - theta) / n) / (p - q)  # the fixed-n 95 % interval of F at the median
        fixed.append(np.abs(estimate[:, middle] - truth[middle]) <= fixed_radius[:, middle])
        low, high = prefix_means(oracle, counts, n, 0.05 / edges.size, 10_000, edges).interval()
        sequence.append(np.all((low <= truth) & (truth <= high), axis=1))  # the whole band, every edge
        half.append(np.all((estimate - (estimate - low) / 2 <= truth) & (truth <= estimate + (high - estimate) / 2),
                           axis=1))
    _verdicts(_whole_path(fixed), _whole_path(sequence), _whole_path(half))


def test_building_blocks_are_what_confidence_sequence_reports():
    rng = np.random.default_rng(13)
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    aggregate = grr.simulate(rng.choice(4, 3000, p=[0.5, 0.3, 0.15, 0.05]), rng=14)
    low, high = oracle_means(grr, grr.support_counts(aggregate)[None, :], 3000, 0.05, 10_000).interval()
    sequence = confidence_sequence(grr, aggregate)
    assert np.allclose(np.clip(low[0], 0, 1), sequence.low) and np.allclose(np.clip(high[0], 0, 1), sequence.high)
    sr = local.make("sr", epsilon=1.0)
    aggregate = sr.aggregator()
    aggregate.add(sr.privatize(rng.beta(2, 5, 3000), rng=15))
    low, high = decoded_means(sr, aggregate.statistic[None, :], 3000, 0.05, 10_000).interval()
    assert (low[0], high[0]) == pytest.approx((confidence_sequence(sr, aggregate).low,
                                               confidence_sequence(sr, aggregate).high))
    binning = local.make("binning", epsilon=2.0, bins=16, oracle="grr")
    aggregate = binning.simulate(rng.beta(5, 2, 3000), rng=16)
    low, high = prefix_means(binning.oracle, aggregate.statistic[None, :], 3000, 0.05 / 15, 10_000,
                             np.arange(1, 16)).interval()
    band = confidence_sequence(binning, aggregate, cells=16)
    envelope_low = np.maximum.accumulate(np.clip(low[0], 0, 1))
    assert np.allclose(band.low[1:-1], envelope_low)
