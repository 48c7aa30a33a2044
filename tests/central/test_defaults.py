"""Central releases need no hyperparameter: defaults from n and epsilon."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import central, metrics
from dpdist.central._defaults import (
    SIZE_BUDGET_SHARE,
    histogram_bins,
    polynomial_degree,
    pursuit_sparsity,
    quantile_iterations,
)


@pytest.fixture(scope="module")
def x():
    return np.random.default_rng(0).beta(2, 5, 10_000)


def test_rules_grow_with_epsilon_n_and_stay_in_their_ranges():
    for rule, low, high in [
        (histogram_bins, 16, 2**20),
        (quantile_iterations, 10, 1000),
        (pursuit_sparsity, 2, 16),
        (lambda n, e: polynomial_degree(n, e, "legendre"), 4, 32),
        (lambda n, e: polynomial_degree(n, e, "monomial"), 2, 8),
    ]:
        values = [rule(n, 1.0) for n in (1, 10**2, 10**3, 10**4, 10**5, 10**7, 10**12)]
        assert values == sorted(values) and values[0] == low and values[-1] == high, (rule, values)
        assert rule(10**4, 0.1) <= rule(10**4, 1.0)
    assert histogram_bins(10**4, 0.5) == 63  # eps * sqrt(1.6 n), the docs' balance point


def test_every_release_runs_without_its_hyperparameter_and_records_the_choice(x):
    n, epsilon = x.size, 0.5
    assert central.histogram_queries(x, epsilon, (0, 1), rng=1).details["bins"] == histogram_bins(n, epsilon)
    assert central.adaptive_quantiles(x, epsilon, (0, 1), rng=1).details["iterations"] == quantile_iterations(n, epsilon)
    assert central.matching_pursuit(x, epsilon, (0, 1), rng=1).details["sparsity"] == pursuit_sparsity(n, epsilon)
    for moments in ("monomial", "legendre"):
        release = central.polynomial_projection(x, epsilon, 1e-6, (0, 1), rng=1, moments=moments)
        assert release.details["degree"] == polynomial_degree(n, epsilon, moments)
    given = central.histogram_queries(x, epsilon, (0, 1), 40, rng=1)
    assert given.details["bins"] == 40 and "size" not in given.details


def test_a_default_under_add_remove_spends_part_of_the_budget_on_a_noisy_count(x):
    release = central.histogram_queries(x, 0.5, (0, 1), rng=1, neighbouring="add-remove")
    size = release.details["size"]
    assert size["epsilon"] == pytest.approx(SIZE_BUDGET_SHARE * 0.5)
    assert release.details["budget"]["histogram"] == pytest.approx((1 - SIZE_BUDGET_SHARE) * 0.5)
    assert release.guarantee.epsilon == pytest.approx(0.5) and release.n is None  # n itself is not released
    assert release.details["bins"] == histogram_bins(size["noisy_n"], (1 - SIZE_BUDGET_SHARE) * 0.5)
    assert abs(size["noisy_n"] - x.size) < 2000  # Laplace of scale 1 / 0.025 = 40


# 24 releases, 16 of them at n = 10**5 (0.35 CPU-s): the whole suite; the fast loop keeps the same rules' choices
# (test_rules_grow_with_epsilon_n_and_stay_in_their_ranges) and every release run without its hyperparameter
# (test_every_release_runs_without_its_hyperparameter_and_records_the_choice)
@pytest.mark.slow
def test_defaults_beat_the_papers_fixed_settings_where_the_grid_says_so():
    # fitted grid (docs/explanation/central-release.md "Defaults"): at n = 10^5, eps = 1 on lognormal data the paper's
    # m = 6 leaves KS 0.042 (Legendre moments) where the rule's m = 32 gives 0.0017; at n = 10^3,
    # eps = 0.5 the paper's 80 AQ rounds give 3x the KS of the rule's 10.  Means of 4 seeded runs;
    # the margins are 10x and 3x the run-to-run spread
    rng = np.random.default_rng(3)
    big = np.clip(rng.lognormal(0, 1, 10**5), 0, 20)
    rule = [metrics.ks(central.polynomial_projection(big, 1.0, 1e-10, (0, 20), rng=s, moments="legendre"), big)
            for s in range(4)]
    paper = [metrics.ks(central.polynomial_projection(big, 1.0, 1e-10, (0, 20), 6, rng=s, moments="legendre"), big)
             for s in range(4)]
    assert np.mean(rule) < 0.2 * np.mean(paper)
    small = rng.normal(size=1000).clip(-4, 4)
    rule = [metrics.ks(central.adaptive_quantiles(small, 0.5, (-4, 4), rng=s), small) for s in range(8)]
    paper = [metrics.ks(central.adaptive_quantiles(small, 0.5, (-4, 4), 80, rng=s), small) for s in range(8)]
    assert np.mean(rule) < 0.7 * np.mean(paper)
