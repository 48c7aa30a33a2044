"""Confidence bands of an LDP CDF estimate (``dpdist.uncertainty.cdf_band``).

Coverage is checked against the population CDF over M independent collections
(fixed seeds).  A band at level 0.95 passes when its coverage is at least
``0.95 - 3 * sqrt(0.95 * 0.05 / M)`` (a one-sided binomial bound at about
0.1 % error), and the same runs show that half-width bands would fail: the
check has power.
"""

import math

import numpy as np
import pytest
from scipy import stats

from dpdist import io, local
from dpdist.errors import InvalidParameterError
from dpdist.uncertainty import CDFBand, cdf_band

LEVEL = 0.95
TRUTH = stats.beta(5, 2)


def _lower_bound(runs: int) -> float:
    return LEVEL - 3 * math.sqrt(LEVEL * (1 - LEVEL) / runs)


def _coverage(protocol, runs: int, replicates: int, n: int = 20_000):
    pointwise, simultaneous, halved, median, mean = [], [], [], [], []
    for run in range(runs):
        rng = np.random.default_rng(run)
        values = TRUTH.rvs(size=n, random_state=rng)
        estimate = cdf_band(protocol, protocol.simulate(values, rng=rng), replicates=replicates, rng=rng)
        band, truth = estimate.band, TRUTH.cdf(estimate.edges)
        inside = (truth >= band.lower - 1e-12) & (truth <= band.upper + 1e-12)
        pointwise.append(inside.mean())
        simultaneous.append(np.all((truth >= band.simultaneous_lower - 1e-12) & (truth <= band.simultaneous_upper + 1e-12)))
        center, radius = (band.upper + band.lower) / 2, (band.upper - band.lower) / 4
        halved.append(np.mean(np.abs(truth - center) <= radius))
        low, high = band.quantile_interval([0.5])
        median.append(low[0] <= TRUTH.ppf(0.5) <= high[0])
        mean_low, mean_high = band.mean_interval()
        mean.append(mean_low <= TRUTH.mean() <= mean_high)
    return {name: float(np.mean(value)) for name, value in
            dict(pointwise=pointwise, simultaneous=simultaneous, halved=halved, median=median, mean=mean).items()}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["binning", "hh"])
def test_bands_of_projected_linear_estimates_cover_at_their_level(name):
    runs = 100
    coverage = _coverage(local.make(name, epsilon=1.0, bounds=(0.0, 1.0)), runs, replicates=200)
    bound = _lower_bound(runs)
    for key in ("pointwise", "simultaneous", "median", "mean"):
        assert coverage[key] >= bound, (key, coverage)
    assert coverage["halved"] < 0.8, coverage  # half-width bands miss: the check can fail


@pytest.mark.slow
def test_bands_of_smoothed_em_are_conservative():
    runs = 30
    protocol = local.make("sw", epsilon=1.0, bounds=(0.0, 1.0), bins=128)
    coverage = _coverage(protocol, runs, replicates=100)
    bound = _lower_bound(runs)
    for key in ("pointwise", "simultaneous", "median", "mean"):
        assert coverage[key] >= bound, (key, coverage)


def test_a_band_is_attached_ordered_monotone_and_pinned_at_the_bounds():
    protocol = local.make("hh", epsilon=2.0, bounds=(0.0, 10.0))
    values = np.random.default_rng(1).uniform(2, 8, 5000)
    estimate = cdf_band(protocol, protocol.simulate(values, rng=2), replicates=40, rng=3)
    band = estimate.band
    assert isinstance(band, CDFBand) and band.level == LEVEL and band.replicates == 40
    assert "unbiased linear estimate" in band.method
    np.testing.assert_array_equal(band.edges, estimate.edges)
    for low, high in ((band.lower, band.upper), (band.simultaneous_lower, band.simultaneous_upper)):
        assert np.all(low <= high) and low[0] == high[0] == 0.0 and low[-1] == high[-1] == 1.0
        assert np.all((low >= 0) & (high <= 1))
    assert np.all(np.diff(band.simultaneous_lower) >= 0) and np.all(np.diff(band.simultaneous_upper) >= 0)
    low, high = band.quantile_interval([0.25, 0.5, 0.75])
    assert np.all(low <= high) and np.all(np.diff(low) >= 0)
    mean_low, mean_high = band.mean_interval()
    assert mean_low <= estimate.mean() <= mean_high
    assert estimate.to_dict()["band"]["replicates"] == 40


@pytest.mark.parametrize("name, key", [("hh", "consistent_leaves"), ("binning", "unbiased_frequencies")])
def test_the_bootstraps_block_refit_is_each_estimates_unbiased_masses(name, key):
    # cdf_band refits its replicates as one block (_linear_estimator): bit for bit the masses each estimate keeps,
    # a level without reports (uniform) included: 3 values over HH's 4 levels leave one empty
    protocol = local.make(name, epsilon=1.0, bounds=(0.0, 1.0))
    aggregators = [protocol.simulate(np.random.default_rng(seed).random(size), rng=seed)
                   for seed, size in ((0, 3), (1, 3), (2, 500), (3, 500))]
    assert name != "hh" or any(np.any(protocol.level_counts(aggregator) == 0) for aggregator in aggregators)
    estimator = protocol._linear_estimator({})
    for n in (3, 500):
        group = [aggregator for aggregator in aggregators if aggregator.n == n]
        rows = estimator(np.stack([aggregator.statistic for aggregator in group]), n)
        for row, aggregator in zip(rows, group):
            np.testing.assert_array_equal(row, protocol.estimate(aggregator).details[key])
    assert local.make("binning", epsilon=1.0)._linear_estimator({"estimator": "mle"}) is None


def test_the_bootstraps_block_em_is_each_estimates_cdf():
    # SW's bands bootstrap plain EM (_bin_masses_estimator): a block of aggregates fitted together, each row the
    # CDF of its own estimate bit for bit; EMS is estimated one aggregate at a time
    from dpdist.estimates import Distribution

    protocol = local.make("sw", epsilon=1.0, bounds=(0.0, 1.0), bins=64)
    aggregators = [protocol.simulate(np.random.default_rng(seed).beta(2, 5, 500), rng=seed) for seed in range(3)]
    rows = protocol._bin_masses_estimator({"method": "em"})(np.stack([a.statistic for a in aggregators]), 500)
    for row, aggregator in zip(rows, aggregators):
        estimate = protocol.estimate(aggregator, method="em")
        np.testing.assert_array_equal(Distribution(estimate.edges, row).cumulative, estimate.cumulative)
    assert protocol._bin_masses_estimator({}) is None


def test_unbiased_rows_estimates_an_oracle_with_its_own_support_counts_row_by_row():
    from dpdist.local.numerical._composite import inner_aggregator, unbiased_rows

    oracle = local.make("hr", epsilon=1.0, domain_size=6)
    aggregators = [oracle.simulate(np.random.default_rng(seed).integers(0, 6, 300), rng=seed) for seed in range(3)]
    rows = unbiased_rows(oracle, np.stack([a.statistic for a in aggregators] + [np.zeros(oracle.statistic_size)]),
                         np.array([300, 300, 300, 0]))
    for row, aggregator in zip(rows, aggregators):
        np.testing.assert_array_equal(row, oracle.estimate(inner_aggregator(oracle, aggregator.statistic, 300)).frequencies)
    np.testing.assert_array_equal(rows[3], np.full(6, 1 / 6))


def test_the_same_seed_gives_the_same_band_and_no_seed_uses_the_csprng():
    protocol = local.make("binning", epsilon=1.0, bounds=(0.0, 1.0))
    aggregator = protocol.simulate(np.random.default_rng(0).random(2000), rng=0)
    first = cdf_band(protocol, aggregator, replicates=20, rng=5).band
    np.testing.assert_array_equal(first.upper, cdf_band(protocol, aggregator, replicates=20, rng=5).band.upper)
    assert cdf_band(protocol, aggregator, replicates=20).band.replicates == 20


def test_smoothed_em_bands_say_how_they_were_made():
    protocol = local.make("sw", epsilon=1.0, bounds=(0.0, 1.0), bins=64)
    aggregator = protocol.simulate(np.random.default_rng(0).beta(2, 5, 3000), rng=0)
    estimate = cdf_band(protocol, aggregator, replicates=20, rng=1)
    assert estimate.details["method"] == "ems" and "without smoothing" in estimate.band.method


def test_bad_arguments_name_the_argument():
    protocol = local.make("binning", epsilon=1.0, bounds=(0.0, 1.0))
    aggregator = protocol.simulate(np.random.default_rng(0).random(500), rng=0)
    with pytest.raises(InvalidParameterError, match="'level'"):
        cdf_band(protocol, aggregator, level=1.5)
    with pytest.raises(InvalidParameterError, match="'replicates'"):
        cdf_band(protocol, aggregator, replicates=5)
    mean_only = local.make("pm", epsilon=1.0, bounds=(0.0, 1.0))
    with pytest.raises(InvalidParameterError, match="MeanEstimate"):
        cdf_band(mean_only, mean_only.simulate(np.random.default_rng(0).random(100), rng=0))


def test_a_cdf_plot_draws_both_bands():
    import matplotlib

    matplotlib.use("Agg")
    protocol = local.make("binning", epsilon=1.0, bounds=(0.0, 1.0))
    estimate = cdf_band(protocol, protocol.simulate(np.random.default_rng(0).random(2000), rng=0), replicates=20, rng=1)
    ax = estimate.plot(kind="cdf")
    labels = [text.get_text() for text in ax.get_legend().get_texts()]
    assert "95% simultaneous band" in labels and "95% pointwise band" in labels


def test_the_cli_prints_intervals_and_draws_bands(tmp_path, capsys):
    from dpdist.cli import main

    data = tmp_path / "x.csv"
    data.write_text("x\n" + "\n".join(f"{v:.4f}" for v in np.random.default_rng(0).beta(5, 2, 3000)))
    args = ["estimate", str(data), "--column", "x", "--protocol", "hh", "--epsilon", "2", "--bounds", "0,1"]
    assert main([*args, "--plot", str(tmp_path / "x.png"), "--replicates", "20", "--seed", "1"]) == 0
    printed = capsys.readouterr().out
    assert printed.count("95% [") == 6 and "bands" in printed and (tmp_path / "x.png").exists()
    assert main([*args, "--replicates", "0"]) == 0
    assert "95% [" not in capsys.readouterr().out
    assert main([*args, "--replicates", "5"]) == 2
    assert "--replicates" in capsys.readouterr().err


def test_the_state_mode_draws_bands_of_a_numerical_state(tmp_path, capsys, monkeypatch):
    import dpdist.uncertainty as uncertainty
    from dpdist.cli import main

    protocol = local.make("hh", epsilon=2.0, bounds=(0.0, 1.0))
    state = tmp_path / "state.bin"
    io.save_state(state, protocol.simulate(np.random.default_rng(0).beta(5, 2, 3000), rng=1))
    calls = []
    real = uncertainty.cdf_band
    monkeypatch.setattr(uncertainty, "cdf_band", lambda *a, **k: calls.append(k) or real(*a, **k))
    assert main(["estimate", "--state", str(state), "--plot", str(tmp_path / "s.png"), "--replicates", "20"]) == 0
    assert calls and calls[0]["replicates"] == 20 and (tmp_path / "s.png").exists()
    assert main(["estimate", "--state", str(state), "--replicates", "3"]) == 2
    assert "--replicates" in capsys.readouterr().err


def test_quantile_intervals_reach_the_bin_edges_so_an_atom_inside_a_bin_is_covered():
    # the band is known at the edges only; an atom at 0.6 inside the bin [0.5, 0.75) puts the
    # median at 0.6, which linear interpolation between the edges missed (integer data covered 0.1-0.4)
    edges = np.linspace(0, 1, 5)
    truth = np.array([0.0, 0.1, 0.2, 0.9, 1.0])  # P(X < edge): 0.7 of the mass at 0.6
    band = CDFBand(edges, truth, truth, truth, truth, 0.95, 20)
    low, high = band.quantile_interval([0.5, 0.2, 0.95])
    np.testing.assert_array_equal(low, [0.5, 0.25, 0.75])
    np.testing.assert_array_equal(high, [0.75, 0.5, 1.0])
    assert low[0] <= 0.6 <= high[0]
