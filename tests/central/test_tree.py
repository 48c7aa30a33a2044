"""The tree CDF, many quantiles at once (tree, AQ), the unbounded quantile, `dpdist release`."""

import json
import math

import numpy as np
import pytest

from dpdist import central, metrics
from dpdist.central.tree import TreeHistogram, choose_shape
from dpdist.cli import main
from dpdist.errors import IncompatibleStateError, InvalidParameterError


def test_shape_rule_is_16_ary_with_at_least_256_leaves():
    assert choose_shape(1000, 1.0) == (16, 2)  # at least 256 leaves
    assert choose_shape(10**4, 0.5) == (16, 2)  # 16^3 = 4096 > 5000 / 16
    assert choose_shape(10**5, 1.0) == (16, 3)  # 4096 <= 100000 / 16 < 65536
    assert choose_shape(2 * 10**6, 1.0) == (16, 4)  # 65536 <= 125000 < 16^5
    assert choose_shape(10**8, 1.0) == (16, 5)  # 16^5 = 2^20 leaves, the cap
    assert choose_shape(10**9, 10.0) == (16, 5)
    assert choose_shape(10**5, 1.0, branching=4) == (4, 6)  # 4^6 = 4096 <= 6250 < 4^7


@pytest.mark.parametrize("neighbouring, sensitivity", [("add-remove", 3), ("replace", 6)])
def test_sensitivity_is_one_node_per_released_level(neighbouring, sensitivity):
    tree = TreeHistogram.release(np.linspace(0, 1, 100), 1.0, (0, 1), branching=4, height=3, neighbouring=neighbouring, rng=0)
    assert tree.releases[0]["sensitivity_l1"] == sensitivity
    assert tree.noise_variance == pytest.approx(2 * (sensitivity / 1.0) ** 2)
    # the claim behind it: neighbouring data sets differ by at most `height` in each released level's l1 norm
    rng = np.random.default_rng(0)
    x = rng.random(50)
    for _ in range(50):
        y = np.append(x, rng.random()) if neighbouring == "add-remove" else np.where(np.arange(50) == 3, rng.random(), x)
        diff = np.abs(_exact_levels(x) - _exact_levels(y)).sum()
        assert diff <= sensitivity


def _exact_levels(x, branching=4, height=3):
    leaves = np.bincount(np.minimum((np.asarray(x) * branching**height).astype(int), branching**height - 1), minlength=branching**height)
    levels = [leaves]
    for _ in range(height - 1):
        levels.append(levels[-1].reshape(-1, branching).sum(axis=1))
    return np.concatenate(levels)


def test_noisy_counts_are_integers_and_the_cdf_is_monotone():
    x = np.random.default_rng(1).beta(2, 5, 5000)
    tree = TreeHistogram.release(x, 1.0, (0, 1), branching=16, height=2, rng=0)
    assert all(level.dtype == np.int64 for level in tree.levels)
    distribution = tree.to_distribution()
    assert np.all(np.diff(distribution.cumulative) >= 0)
    assert distribution.cumulative[0] == 0 and distribution.cumulative[-1] == 1
    assert distribution.n is None  # add/remove: n is private


def test_secure_mode_runs_on_the_csprng():
    distribution = central.tree_cdf(np.random.default_rng(2).random(2000), 1.0, (0, 1), secure=True)
    assert distribution.details["secure"]


def test_sites_merge_into_the_tree_of_the_union():
    rng = np.random.default_rng(3)
    a, b = rng.beta(2, 5, 20000), rng.beta(2, 5, 30000)
    left = TreeHistogram.release(a, 1.0, (0, 1), branching=16, height=2, rng=1)
    right = TreeHistogram.release(b, 0.5, (0, 1), branching=16, height=2, rng=2)
    merged = left + right
    assert merged.epsilon == 1.0 and len(merged.releases) == 2
    assert np.array_equal(merged.levels[2], left.levels[2] + right.levels[2])
    assert metrics.ks(merged.to_distribution(), np.concatenate([a, b])) < 0.01
    with pytest.raises(IncompatibleStateError, match="height"):
        left + TreeHistogram.release(b, 1.0, (0, 1), branching=16, height=3, rng=2)


@pytest.mark.slow  # 10 releases of each at n = 2e5 (0.45 CPU-s); the fast loop keeps the tree's own cdf tests above
def test_tree_is_never_worse_than_the_flat_histogram_on_ks_at_large_n():
    rng = np.random.default_rng(4)
    tree_ks, flat_ks = [], []
    for seed in range(10):
        x = rng.beta(2, 5, 2 * 10**5)
        tree_ks.append(metrics.ks(central.cdf(x, 1.0, (0, 1), rng=seed), x))
        flat = central.histogram_queries(x, 1.0, (0, 1), 566, rng=seed, neighbouring="add-remove", postprocess="isotonic")
        flat_ks.append(metrics.ks(flat, x))
    # mean KS over 10 seeds; the spread of either mean is below 1e-4 here
    assert np.mean(tree_ks) <= np.mean(flat_ks) + 1e-4


@pytest.mark.slow  # 0.50 CPU-s: coverage over repeated releases
def test_tree_quantile_intervals_cover_the_empirical_quantiles():
    rng = np.random.default_rng(5)
    q = np.linspace(0.1, 0.9, 9)
    covered = total = 0
    for seed in range(40):
        x = rng.lognormal(10, 1, 10**4)
        release = central.quantiles(x, 0.5, (0, 300000), q, rng=seed, clip=True)
        truth = np.quantile(np.clip(x, 0, 300000), q)
        covered += int(np.sum((release.low <= truth) & (truth <= release.high)))
        total += q.size
        assert np.all(np.diff(release.values) >= 0)
    # nominal 0.95; three binomial standard errors below it
    assert covered / total >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / total)


def test_aq_rank_error_and_budget_split():
    rng = np.random.default_rng(6)
    x = rng.normal(0, 1, 10**4)
    q = np.linspace(0.01, 0.99, 99)
    release = central.quantiles(x, 1.0, (-10, 10), q, method="aq", rng=0)
    assert release.details["levels"] == 7 and release.details["epsilon_per_release"] == pytest.approx(1 / 7)
    ranks = np.searchsorted(np.sort(x), release.values) / x.size
    assert np.mean(np.abs(ranks - q)) < 0.02
    assert release.low is None and np.all(np.diff(release.values) >= 0)


def test_unbounded_quantile_needs_no_upper_bound():
    rng = np.random.default_rng(7)
    x = rng.lognormal(12, 1, 10**4)
    errors = []
    for seed in range(10):
        value = central.unbounded_quantile(x, 1.0, 0.5, rng=seed)
        errors.append(abs(np.mean(x < value) - 0.5))
    assert np.median(errors) < 0.02


@pytest.mark.parametrize(
    "kwargs, match",
    [({"q": [0.5, 0.5]}, "increasing"), ({"q": [0, 0.5]}, "between 0 and 1"), ({"method": "bogus"}, "method"), ({"level": 1.5}, "level")],
)
def test_bad_quantile_arguments_are_named(kwargs, match):
    with pytest.raises(InvalidParameterError, match=match):
        central.quantiles(np.random.default_rng(0).random(100), 1.0, (0, 1), **kwargs)


@pytest.mark.slow
def test_release_command_prints_the_guarantee_and_quantiles(tmp_path, capsys):
    data = tmp_path / "income.csv"
    values = np.random.default_rng(8).lognormal(10.5, 0.8, 5000)
    data.write_text("income\n" + "\n".join(f"{v:.2f}" for v in values) + "\n")
    plot = tmp_path / "income.png"
    argv = ["release", str(data), "--column", "income", "--epsilon", "1", "--bounds", "0,200000", "--quantiles", "0.1,0.5,0.9"]
    assert main([*argv, "--plot", str(plot)]) == 0
    out = capsys.readouterr().out
    assert "1-differential privacy" in out and "OS CSPRNG" in out and plot.stat().st_size > 0
    assert main([*argv, "--json", "--seed", "3"]) == 0
    release = json.loads(capsys.readouterr().out)
    assert "NOT for publication" in release["guarantee"] and len(release["quantiles"]["values"]) == 3
    assert main(["release", str(data), "--column", "nope", "--epsilon", "1", "--bounds", "0,1"]) == 2
    assert "--column 'nope'" in capsys.readouterr().err


# 200 draws of a 16**4-leaf tree under tracemalloc (0.3 CPU-s): the whole suite; the fast loop keeps the numbers
# (test_cdf_standard_error_is_the_spread_of_the_stored_draws, the same streaming code on a small tree) and
# test_cdf_standard_error_includes_the_noise_of_the_total
@pytest.mark.slow
def test_cdf_standard_error_keeps_memory_linear_in_the_leaves():
    # the band is the spread of 200 noise draws; holding them all would take 200 x leaves doubles
    # (1.7 GB at the 2**20 leaves the shape rule picks for skewed data at large epsilon * n)
    import tracemalloc

    tree = TreeHistogram.release(np.random.default_rng(3).random(500), 1.0, (0, 1), branching=16, height=4, rng=0)
    tracemalloc.start()
    se = tree.cdf_standard_error(draws=200, rng=0)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    leaves = 16**4
    assert peak < 40 * 8 * leaves  # a few dozen leaf-sized arrays, not 200 (105 MB here)
    assert se.shape == (leaves + 1,) and se[0] == 0


def test_cdf_standard_error_is_the_spread_of_the_stored_draws():
    """The streaming standard error gives the same numbers as the population sd of the stored draws."""
    reference = np.random.default_rng(0)
    small = TreeHistogram.release(np.random.default_rng(3).random(500), 1.0, (0, 1), branching=4, height=3, rng=0)
    leaves_small, total = small.consistent_leaves()
    scale = math.sqrt(small.noise_variance / 2.0)
    draws = []
    from dpdist.postprocess import hay_consistency

    counts = np.concatenate([[0.0], np.cumsum(leaves_small)])
    for _ in range(50):
        noise = [reference.laplace(0.0, scale, level.size) for level in small.levels]
        noise[0] = np.array([noise[1].sum()])
        consistent = hay_consistency(noise, 4, root=None)
        moved = counts + np.concatenate([[0.0], np.cumsum(consistent[-1])])  # the total moves with the noise
        draws.append(moved / moved[-1] - counts / total)
    np.testing.assert_allclose(small.cdf_standard_error(draws=50, rng=0), np.std(draws, axis=0), rtol=1e-10, atol=1e-15)


def test_quantile_arguments_of_any_type_raise_dpdist_errors():
    x = np.random.default_rng(0).random(200)
    for kwargs in ({"level": "abc"}, {"level": None}, {"level": True}, {"q": ["a"]}, {"q": [object()]}):
        with pytest.raises(InvalidParameterError):
            central.quantiles(x, 1.0, (0, 1), **kwargs)


def test_unbounded_quantile_takes_any_finite_lower_point():
    # the check of epsilon once used the bounds (lower, lower + 1), which collapse for |lower| >= 2**53
    x = 1e17 + np.random.default_rng(1).random(2000) * 1e3
    assert central.unbounded_quantile(x, 1.0, 0.5, lower=1e17, rng=0) >= 1e17
    assert central.unbounded_quantile(np.arange(1.0, 101.0), 1.0, 0.5, lower=np.int64(0), beta=np.float64(1.01), rng=0) > 0
    with pytest.raises(InvalidParameterError, match="'lower'"):
        central.unbounded_quantile(x, 1.0, lower=True)


def test_cdf_standard_error_includes_the_noise_of_the_total():
    # the CDF is divided by the noisy total, whose noise moves every edge by about -F e_T / T;
    # leaving it out made the standard error 1.7x too small just above an atom at the lower bound
    # (half the data at 0), where the pointwise interval covered 0.77
    x = np.concatenate([np.zeros(1000), np.random.default_rng(0).random(1000)])
    truth = np.concatenate([[0.0], np.cumsum(np.bincount(np.minimum((x * 256).astype(int), 255), minlength=256))])
    truth /= x.size
    runs, edge = 200, 3  # F = 0.5 there
    se = TreeHistogram.release(x, 1.0, (0, 1), branching=16, height=2, rng=0).cdf_standard_error()[edge]
    errors = np.array([
        TreeHistogram.release(x, 1.0, (0, 1), branching=16, height=2, rng=seed).leaf_cdf()[1][edge]  # the leaf edges
        for seed in range(runs)
    ]) - truth[edge]
    bound = 0.95 - 3 * math.sqrt(0.95 * 0.05 / runs)
    assert np.mean(np.abs(errors) <= 1.96 * se) >= bound
    assert np.mean(np.abs(errors) <= 0.98 * se) < bound  # a half-width interval fails the same check
