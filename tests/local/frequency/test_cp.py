"""Compressive privatization (paper 004): matrix, privacy calibration, measurement model, recovery."""

import importlib.util
import math
import warnings

import numpy as np
import pytest

from dpdist import local, metrics
from dpdist.errors import InvalidPrivacyParameterError


def test_matrix_depends_only_on_the_public_seed():
    first = local.make("cp", epsilon=1.0, domain_size=50, measurements=20, matrix_seed=5)
    second = local.make("cp", epsilon=1.0, domain_size=50, measurements=20, matrix_seed=5)
    other = local.make("cp", epsilon=1.0, domain_size=50, measurements=20, matrix_seed=6)
    np.testing.assert_array_equal(first.channel(), second.channel())
    assert not np.array_equal(first.channel(), other.channel())


def test_medium_regime_entries_are_plus_one_with_probability_e_minus_epsilon():
    protocol = local.make("cp", epsilon=2.0, domain_size=2000, measurements=100, regime="medium")
    share = protocol.column_counts.sum() / (2000 * 100)
    rho = math.exp(-2.0)
    assert abs(share - rho) < 5 * math.sqrt(rho * (1 - rho) / (2000 * 100))  # 5 standard errors


@pytest.mark.parametrize("regime, epsilon", [("high", 0.5), ("high", 1.0), ("medium", 2.0)])
def test_exact_calibration_spends_exactly_epsilon_and_reports_the_lemma_bound(regime, epsilon):
    protocol = local.make("cp", epsilon=epsilon, domain_size=300, measurements=64, regime=regime)
    channel = protocol.channel()
    loss = np.max(np.log(channel.max(axis=0) / channel.min(axis=0)))
    assert loss <= epsilon * (1 + 1e-9)
    assert loss == pytest.approx(protocol.exact_privacy_loss(protocol.mechanism_epsilon), rel=1e-12)
    assert protocol.exact_privacy_loss(protocol.mechanism_epsilon * (1 + 1e-6)) > epsilon  # largest eps0
    report = protocol.privacy_report()
    center = (0.5 if regime == "high" else math.exp(-epsilon)) * 64
    assert report["column_balance_beta"] == pytest.approx(np.max(np.abs(protocol.column_counts - center)) / center)
    if report["column_balance_beta"] < 1:  # Lemma 2.1 / 4.1 is an upper bound on the exact loss
        assert report["exact_epsilon"] <= report["lemma_epsilon"] + 1e-12


def test_uncalibrated_mechanism_is_refused_or_warned_when_it_exceeds_epsilon():
    with pytest.raises(InvalidPrivacyParameterError, match="epsilon"):
        local.make("cp", epsilon=0.5, domain_size=200, measurements=40, calibration="none")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        protocol = local.make(
            "cp", epsilon=0.5, domain_size=200, measurements=40, calibration="none", on_privacy_excess="warn"
        )
    assert protocol.mechanism_epsilon == 0.5 and protocol.effective_epsilon > 0.5
    assert any("LDP" in str(w.message) for w in caught)


@pytest.mark.parametrize("regime, epsilon", [("high", 0.8), ("medium", 2.5)])
def test_measurement_model_of_eq_3_to_5_is_exact_up_to_the_offset_term(regime, epsilon):
    # y = B D'p + c (sum(D'p) - 1) 1 with the exact q: the e1 term of eq. (5) is this offset
    protocol = local.make("cp", epsilon=epsilon, domain_size=40, measurements=16, regime=regime)
    p = np.random.default_rng(0).dirichlet(np.ones(40))
    q = p @ protocol.channel()
    m, e, rho = 16, math.exp(protocol.mechanism_epsilon), protocol._rho
    kappa, sigma = (e - 1) * rho + 1, 2 * math.sqrt(rho * (1 - rho))
    gain = 2 * kappa * math.sqrt(m) / ((e - 1) * sigma)
    y = (q - 1 / m) * gain
    x = m * kappa / protocol._denominators * p  # D' p
    np.testing.assert_allclose(y - protocol.measurement_matrix() @ x, gain / m * (x.sum() - 1), atol=1e-12)


def test_sparse_distribution_is_recovered_better_than_hadamard_response():
    # paper 004 sec. 5: on sparse distributions CP's l1 error is below HR's (both projected on the simplex)
    k, n, epsilon = 2000, 200_000, 0.5
    generator = np.random.default_rng(11)
    truth = np.zeros(k)
    truth[generator.choice(k, 5, replace=False)] = [0.4, 0.25, 0.15, 0.12, 0.08]
    values = generator.choice(k, n, p=truth)
    cp = local.make("cp", epsilon=epsilon, domain_size=k, measurements=200)
    hr = local.make("hr", epsilon=epsilon, domain_size=k)
    cp_estimate = cp.estimate(cp.simulate(values, rng=1), sparsity=5)
    hr_estimate = hr.estimate(hr.simulate(values, rng=1), postprocess="simplex")
    assert set(cp_estimate.details["support"].tolist()) == set(np.flatnonzero(truth).tolist())
    assert metrics.l1(cp_estimate, truth) < metrics.l1(hr_estimate, truth)
    np.testing.assert_allclose(cp_estimate.frequencies.sum(), 1.0)
    assert np.all(cp_estimate.frequencies >= 0)
    # the plug-in standard error is honest: the error on the support is within 5 of them
    on = cp_estimate.details["support"]
    assert np.all(np.abs(cp.estimate(cp.simulate(values, rng=1), sparsity=5, postprocess="none").frequencies[on]
                         - truth[on]) < 5 * np.sqrt(cp_estimate.details["support_variance"][on]))


def test_simulate_is_exact_for_few_items_and_for_many():
    protocol = local.make("cp", epsilon=1.0, domain_size=30, measurements=10)
    generator = np.random.default_rng(5)
    repeats = 500
    for values in (np.repeat([0, 1], 200), np.arange(30).repeat(2)):  # multinomial / per-user branch
        channel = protocol.channel(values)
        sample = np.array([protocol.simulate(values, rng=generator).statistic for _ in range(repeats)])
        sd = np.sqrt((channel * (1 - channel)).sum(axis=0) / repeats)
        assert np.all(np.abs(sample.mean(axis=0) - channel.sum(axis=0)) < 5 * sd)  # 5 standard errors


def _geometric(lam, k):
    p = (1 - lam) ** np.arange(k) * lam
    return p / p.sum()


# 0.4-0.6 CPU-s each (three campaigns of 10^6 users): the whole suite; the fast loop keeps the same choice of the
# sparsity from the aggregate in test_sparsity_from_the_aggregate_finds_an_exactly_sparse_support and
# test_with_no_item_above_the_noise_the_sparsity_is_zero_not_a_noise_spike
@pytest.mark.parametrize("lam, fixed", [pytest.param(0.8, 2, marks=pytest.mark.slow),
                                        pytest.param(0.6, 3, marks=pytest.mark.slow)])
def test_sparsity_from_the_aggregate_beats_the_fixed_choices_on_geometric_data(lam, fixed):
    # k = 10^4, m = 500, epsilon = 0.5, n = 10^6; the fixed sparsities 2 and 3 of
    # the reproduction lost to RAPPOR (l1 0.083 and 0.140); the criterion picks s from the data
    proto = local.make("cp", epsilon=0.5, domain_size=10_000, measurements=500, matrix_seed=1)
    rng = np.random.default_rng(7)
    p = _geometric(lam, 10_000)
    chosen, fixed_l1, blind_l1 = [], [], []
    for _ in range(3):
        aggregate = proto.simulate(rng.choice(10_000, size=10**6, p=p), rng=rng)
        auto = proto.estimate(aggregate)
        assert auto.details["sparsity_rule"] == "risk inflation criterion"
        chosen.append(np.abs(auto.frequencies - p).sum())
        fixed_l1.append(np.abs(proto.estimate(aggregate, sparsity=fixed).frequencies - p).sum())
        blind = proto.estimate(aggregate, sparsity=proto.default_sparsity())
        assert blind.details["sparsity_rule"] == "given"
        blind_l1.append(np.abs(blind.frequencies - p).sum())
    # measured (lam 0.8 / 0.6): 0.023 / 0.077 against fixed 0.083 / 0.151 and the matrix-only bound
    # (s = 20) 0.071 / 0.126-0.135; the means of three runs spread by about 0.003 (chosen, fixed) and
    # 0.012 (the matrix-only bound, whose single runs range 0.10-0.15 at lam 0.6)
    assert np.mean(chosen) < 0.6 * np.mean(fixed_l1)
    assert np.mean(chosen) < 0.75 * np.mean(blind_l1)


def test_sparsity_from_the_aggregate_finds_an_exactly_sparse_support():
    proto = local.make("cp", epsilon=1.0, domain_size=2_000, measurements=300, matrix_seed=2)
    rng = np.random.default_rng(8)
    items = rng.choice(2_000, size=8, replace=False)
    aggregate = proto.simulate(np.repeat(items, 50_000), rng=rng)
    estimate = proto.estimate(aggregate)
    assert estimate.details["sparsity"] == 8
    assert set(estimate.details["support"]) == set(items)


def test_intervals_are_never_zero_width_and_name_their_centre():
    # the standard error of OMP given its support is 0 for the items it drops, which
    # printed "snow 0.0000 95% [0.0000, 0.0000]"; the intervals are now the unbiased linear inverse's
    protocol = local.make("cp", epsilon=2.0, domain_size=5)
    values = np.repeat(np.arange(5), [53, 101, 641, 26, 640])
    estimate = protocol.estimate(protocol.simulate(values, rng=1))
    low, high = estimate.confidence_interval(0.95)
    half = 1.959964 * estimate.standard_error  # around the unbiased estimate, kept in [0, 1] and at least half wide
    assert estimate.has_intervals and np.all(2 * half > 0.05) and np.all(high - low >= half - 1e-9)
    unbiased = estimate.details["unbiased_frequencies"]
    assert unbiased[3] + half[3] < half[3] == pytest.approx(high[3])  # snow: below 0, its upper limit is the half-width
    np.testing.assert_allclose(low, np.clip(np.minimum(unbiased - half, 1 - half), 0, 1), atol=1e-6)
    np.testing.assert_allclose(high, np.clip(np.maximum(unbiased + half, half), 0, 1), atol=1e-6)
    # W Q^T = I: the inverse is exact, so its estimate is unbiased
    np.testing.assert_allclose(protocol.linear_inverse() @ protocol.channel().T, np.eye(5), atol=1e-9)
    ibu = protocol.estimate(protocol.simulate(values, rng=1), estimator="ibu")
    np.testing.assert_allclose(ibu.variance, estimate.variance)


def test_fewer_measurements_than_items_give_no_interval_and_say_why():
    protocol = local.make("cp", epsilon=1.0, domain_size=300, measurements=64)
    estimate = protocol.estimate(protocol.simulate(np.arange(300).repeat(5), rng=0))
    assert not estimate.has_intervals and np.all(np.isinf(estimate.variance))
    assert "m=64 measurements cannot identify k=300" in estimate.details["no_interval"]
    low, high = estimate.confidence_interval(0.95)
    assert np.all(np.isneginf(low)) and np.all(np.isposinf(high))
    with pytest.raises(NotImplementedError, match="sparsity"):
        protocol.variance(1000)


def test_the_cli_prints_no_zero_width_interval_for_cp(tmp_path, capsys):
    from dpdist.cli import main

    names = ["drizzle", "fog", "rain", "snow", "sun"]
    column = np.repeat(names, [53, 101, 641, 26, 640])
    (tmp_path / "w.csv").write_text("weather\n" + "\n".join(column) + "\n")
    (tmp_path / "labels.txt").write_text("\n".join(names) + "\n")
    args = ["estimate", str(tmp_path / "w.csv"), "--column", "weather", "--protocol", "cp", "--epsilon", "2",
            "--labels", str(tmp_path / "labels.txt"), "--seed", "1"]
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert printed.count("95% [") == 5 and "[0.0000, 0.0000]" not in printed


def test_the_table_exports_the_intervals_around_their_own_centre():
    protocol = local.make("cp", epsilon=2.0, domain_size=5)
    estimate = protocol.estimate(protocol.simulate(np.repeat(np.arange(5), [53, 101, 641, 26, 640]), rng=3))
    table = estimate.table()
    low, high = estimate.confidence_interval(0.95)
    np.testing.assert_array_equal(table["low"], low)
    np.testing.assert_array_equal(table["high"], high)
    half = 1.959964 * estimate.standard_error  # around their own centre, clipped to [0, 1]
    np.testing.assert_allclose(table["low"], np.clip(estimate.interval_center - half, 0, 1), atol=1e-6)


def test_with_no_item_above_the_noise_the_sparsity_is_zero_not_a_noise_spike():
    # uniform data over k = 2000 items hold no item that stands out of the noise
    # (each item's decoded coefficient is 0.0013 against a noise sd of 0.022 at n = 10^4, eps = 1).
    # The rule before kept s >= 1, the column with the largest noise; now the pre-test at the
    # Bonferroni threshold passes pure noise with probability at most 0.05, so of 20 runs at most
    # 1 is expected to keep an item; 5 is the 0.999 quantile of Binomial(20, 0.05).
    proto = local.make("cp", epsilon=1.0, domain_size=2_000, measurements=300, matrix_seed=3)
    rng = np.random.default_rng(35)
    kept, before = 0, []
    for _ in range(20):
        aggregate = proto.simulate(rng.integers(0, 2_000, size=10_000), rng=rng)
        estimate = proto.estimate(aggregate)
        kept += estimate.details["sparsity"] > 0
        before.append(proto.estimate(aggregate, sparsity_rule="risk").details["sparsity"])
        if estimate.details["sparsity"] == 0:
            assert estimate.details["support"].size == 0
            np.testing.assert_allclose(estimate.frequencies, 1 / 2_000)  # the simplex projection of 0
    assert kept <= 5
    assert min(before) >= 1


def test_risk_criterion_may_choose_the_empty_model():
    from dpdist.local.frequency._matching_pursuit import omp_sparsity, stands_out_of_noise

    rng = np.random.default_rng(4)
    matrix = rng.standard_normal((200, 1_000)) / np.sqrt(200)
    noise = rng.standard_normal(200)  # sigma^2 = 1
    assert omp_sparsity(matrix, noise, 1.0, 50)[0] == 0  # each noise column lowers ||r||^2 by < 2 ln(k)
    signal = noise + 12.0 * matrix[:, 7]  # 12 sigma, above the Bonferroni threshold 4.06 sigma (k = 1000)
    assert stands_out_of_noise(matrix, signal, 1.0)
    assert omp_sparsity(matrix, signal, 1.0, 50)[0] >= 1
    assert not stands_out_of_noise(matrix, noise, 1.0)


@pytest.mark.slow
@pytest.mark.skipif(importlib.util.find_spec("wikiwords") is None, reason="wikiwords not installed")
def test_on_heavy_tailed_words_cp_is_no_worse_than_the_zero_estimate():
    # on the top 10^4 words of wiki-words at eps = 1, n = 10^4 (the collapse cell
    # of docs/explanation/frequency-oracles.md): the rule before kept the noisiest column (MSE 1.56 +- 0.27 times the
    # zero estimate's in the benchmark); the pre-test returns the uniform (0.990) unless an item
    # stands out.  Tolerances: 3 standard errors of the mean over the runs (new), and of the
    # paired difference (before - new).
    from dpdist.datasets import real

    counts = np.asarray(real._word_counts()[:10_000], dtype=np.float64)
    p = counts / counts.sum()
    zero = float(p @ p) / p.size
    proto = local.make("cp", epsilon=1.0, domain_size=10_000, measurements=500, matrix_seed=1)
    rng = np.random.default_rng(2035)
    new, before = [], []
    for _ in range(24):  # the paired gain's sd is about 0.55 and its mean 0.4: 24 runs put it at ~3.5 SE
        aggregate = proto.simulate(rng.choice(10_000, size=10_000, p=p), rng=rng)
        new.append(np.mean((proto.estimate(aggregate).frequencies - p) ** 2) / zero)
        before.append(np.mean((proto.estimate(aggregate, sparsity_rule="risk").frequencies - p) ** 2) / zero)
    new, gain = np.array(new), np.array(before) - np.array(new)
    assert new.mean() + 3 * new.std(ddof=1) / np.sqrt(new.size) < 1.0
    assert gain.mean() > 3 * gain.std(ddof=1) / np.sqrt(gain.size)


def test_sparsity_rule_is_checked():
    from dpdist.errors import InvalidParameterError

    proto = local.make("cp", epsilon=1.0, domain_size=50, measurements=40)
    aggregate = proto.simulate(np.arange(50).repeat(4), rng=0)
    with pytest.raises(InvalidParameterError, match="sparsity_rule"):
        proto.estimate(aggregate, sparsity_rule="largest")
    with pytest.raises(InvalidParameterError, match=r"The 'sparsity_rule' parameter of CP.estimate must be None when estimator='ibu' \(an option of estimator='omp'\). Got 'risk'"):
        proto.estimate(aggregate, estimator="ibu", sparsity_rule="risk")
    assert proto.estimate(aggregate, sparsity_rule="risk").details["sparsity"] >= 1


def _cp_without_a_standout(n=2_000):
    protocol = local.make("cp", epsilon=1.0, domain_size=64)
    return protocol, protocol.simulate(np.random.default_rng(0).integers(0, 64, n), rng=1)


def test_an_estimate_of_sparsity_zero_says_it_is_the_uniform_default():
    # with no item above the noise CP returned exactly the uniform distribution without a word
    protocol, aggregate = _cp_without_a_standout()
    estimate = protocol.estimate(aggregate)
    assert estimate.details["sparsity"] == 0
    np.testing.assert_allclose(estimate.frequencies, 1 / 64)
    (note,) = estimate.notes()
    assert "no item stands out of the noise" in note and "uniform distribution (1/64 per item)" in note
    assert 0 < estimate.details["noise_ratio"] <= 1 and f"{estimate.details['noise_ratio']:.2g} of the" in note
    assert estimate.to_dict()["notes"] == [note] and estimate.to_json().count("no item stands out") == 1
    assert "note               no item stands out" in estimate.describe()
    none = protocol.estimate(aggregate, postprocess="none")  # the empty model itself
    assert "all zeros" in none.notes()[0]
    sparse = protocol.simulate(np.random.default_rng(0).choice(64, 20_000, p=np.r_[0.5, 0.3, np.full(62, 0.2 / 62)]), rng=1)
    found = protocol.estimate(sparse)
    assert found.details["sparsity"] >= 1 and found.notes() == [] and found.to_dict()["notes"] == []


def test_the_note_reaches_the_cli_from_a_state_file(tmp_path, capsys):
    from dpdist.cli import main

    protocol, aggregate = _cp_without_a_standout()
    from dpdist import io

    io.save_state(tmp_path / "cp.state", aggregate)
    assert main(["estimate", "--state", str(tmp_path / "cp.state")]) == 0
    assert "note       no item stands out of the noise" in capsys.readouterr().out


@pytest.mark.parametrize("block_cells", [64, 200])  # one value a block; three values a block
def test_a_large_matrix_orders_only_the_rows_of_the_values_randomized(monkeypatch, block_cells):
    """A device sending a few values of a 4096 x 8192 matrix built its whole (k, m) row order (268 MB;
    526 MB at its peak, 1.7 s); past :data:`_KEPT_ORDER_CELLS` only the distinct values' rows are ordered: the same
    reports from the same draws, and no (k, m) order kept."""
    import dpdist.local.frequency.cp as cp_module

    kept = local.make("cp", epsilon=1.0, domain_size=32, measurements=64, matrix_seed=3)
    kept._rows_by_sign()  # the whole order, as before
    monkeypatch.setattr(cp_module, "_KEPT_ORDER_CELLS", block_cells)
    lean = local.make("cp", epsilon=1.0, domain_size=32, measurements=64, matrix_seed=3)
    values = np.random.default_rng(1).integers(0, 32, 500)
    np.testing.assert_array_equal(lean.privatize(values, rng=7), kept.privatize(values, rng=7))
    assert lean._order is None
