"""Consistent marginals (dpdist.local.multi.calm): CALM's reports, PriView consistency, maximum entropy, and intervals
that cover (measured here by simulation)."""

from __future__ import annotations


import numpy as np
import pytest
from scipy import stats

from dpdist import local
from dpdist.errors import InvalidParameterError

SCHEMA = [{"name": "a", "domain_size": 3}, {"name": "b", "labels": ["x", "y"]}, {"name": "c", "domain_size": 4}]


def _records(n, rng=0):
    generator = np.random.default_rng(rng)
    a = generator.choice(3, size=n, p=[0.5, 0.3, 0.2])
    b = (a + generator.integers(0, 2, n) * (generator.random(n) < 0.4)) % 2
    c = (a + 2 * b + generator.integers(0, 2, n)) % 4
    return np.stack([a, b, c], axis=1)


def _truth(records, columns):
    shape = [[3, 2, 4][j] for j in columns]
    cells = np.ravel_multi_index(tuple(records[:, j] for j in columns), shape)
    return np.bincount(cells, minlength=int(np.prod(shape))) / records.shape[0]


def test_calm_marginals_are_consistent_and_norm_sub_makes_them_distributions():
    proto = local.make("calm", epsilon=1.0, attributes=SCHEMA)
    aggregator = proto.simulate(_records(20_000), rng=1)
    linear = proto.estimate(aggregator)
    assert linear.consistency.violation(linear.tables) < 1e-12
    one_way = [linear.marginal(["a"]).frequencies] + [
        linear.marginal(pair).frequencies.reshape(3, -1).sum(axis=1) for pair in (["a", "b"], ["a", "c"])
    ]
    assert np.allclose(one_way[0], one_way[1]) and np.allclose(one_way[0], one_way[2])
    cleaned = proto.estimate(aggregator, postprocess="norm-sub")
    for table in cleaned.tables:
        assert table.min() >= 0 and table.sum() == pytest.approx(1.0)
    assert cleaned.details["consistency_violation"] < 1e-6


@pytest.mark.slow
def test_calm_intervals_cover_at_their_level():
    """Coverage of the 95% intervals of every cell of the pair (a, b), of a one-way cell and of a count query, over
    300 simulated collections (n = 20,000, epsilon = 1).  Pooled over the 6 + 1 + 1 quantities, 2,400 trials: the
    coverage's standard error is 0.0045, so a correct 95% interval lands in [0.93, 0.97] (4.5 sigma) at a false-alarm
    rate below 1e-5; the normal approximation at these n adds < 0.5%."""
    proto = local.make("calm", epsilon=1.0, attributes=SCHEMA)
    records = _records(20_000, rng=2)
    truth_ab, truth_a = _truth(records, [0, 1]), _truth(records, [0])
    truth_query = np.mean(np.isin(records[:, 0], [0, 1]) & (records[:, 2] == 2))
    generator = np.random.default_rng(3)
    hits, estimates = [], []
    for _ in range(300):
        estimate = proto.estimate(proto.simulate(records, rng=generator))
        pair = estimate.marginal(["a", "b"])
        low, high = pair.confidence_interval(0.95)
        hits.extend((low <= truth_ab) & (truth_ab <= high))
        low, high = estimate.marginal(["a"]).confidence_interval(0.95)
        hits.append(low[0] <= truth_a[0] <= high[0])
        query = estimate.probability({"a": [0, 1], "c": 2})
        hits.append(query.low <= truth_query <= query.high)
        estimates.append(pair.frequencies)
    coverage = np.mean(hits)
    assert 0.93 <= coverage <= 0.97, coverage
    # unbiased: the mean of 300 estimates within 5 standard errors of the truth in every cell
    estimates = np.array(estimates)
    assert np.all(np.abs(estimates.mean(axis=0) - truth_ab) < 5 * estimates.std(axis=0) / np.sqrt(300))


@pytest.mark.slow  # 0.33 CPU-s: a variance from repeated estimates
def test_calm_analytic_variance_matches_the_spread_of_repeated_estimates():
    """The standard errors (the exact variance of the consistent estimate) against the empirical spread of 200
    repeats: the chi-square bounds of the variance ratio at level 1e-6 (Bonferroni over the 6 cells)."""
    proto = local.make("calm", epsilon=2.0, attributes=SCHEMA)
    records = _records(10_000, rng=4)
    generator = np.random.default_rng(5)
    runs = [proto.estimate(proto.simulate(records, rng=generator)).marginal(["a", "b"]) for _ in range(200)]
    estimates = np.array([run.frequencies for run in runs])
    analytic = np.mean([run.variance for run in runs], axis=0)
    ratio = estimates.var(axis=0, ddof=1) / analytic
    low, high = (stats.chi2.ppf(q, 199) / 199 for q in (1e-6 / 12, 1 - 1e-6 / 12))
    assert np.all((ratio > low) & (ratio < high)), ratio


def test_a_marginal_no_group_reported_is_the_maximum_entropy_table():
    independent = np.random.default_rng(6).integers(0, [3, 2, 4], size=(60_000, 3))
    proto = local.make("calm", epsilon=4.0, attributes=SCHEMA)
    estimate = proto.estimate(proto.simulate(independent, rng=7), postprocess="norm-sub")
    three = estimate.marginal(["a", "b", "c"])
    assert three.details["method"] == "maximum entropy" and not three.has_intervals
    table = three.frequencies.reshape(3, 2, 4)
    for axes, names in (((2,), ["a", "b"]), ((1,), ["a", "c"]), ((0,), ["b", "c"])):
        np.testing.assert_allclose(table.sum(axis=axes).ravel(), estimate.marginal(names).frequencies, atol=1e-8)
    assert np.abs(three.frequencies - 1 / 24).max() < 0.02
    labelled = estimate.marginal(["b", "a"])
    assert labelled.labels[0] == "b=x|a=0" and labelled.details["shape"] == [2, 3]


def test_a_marginal_without_reports_has_infinite_variance_and_the_estimate_serializes():
    """One report (a campaign's first): two of the three marginals have none. Their variance used to fail to
    broadcast (the batch's shape was taken from the table's second axis), so the service answered 500."""
    proto = local.make("calm", epsilon=2.0, attributes=SCHEMA)
    aggregator = proto.aggregator().add(proto.privatize(np.array([[2, 1, 3]]), rng=1))
    estimate = proto.estimate(aggregator)
    counts = estimate.details["marginal_counts"]
    assert sorted(counts.values()) == [0, 0, 1]
    sizes = {"a": 3, "b": 2, "c": 4}
    for names in proto.marginal_sets:
        variance = estimate.marginal(names).variance
        assert variance.shape == (sizes[names[0]] * sizes[names[1]],)
        assert np.all(np.isinf(variance))  # no interval while a marginal it is made consistent with has no report
    assert estimate.to_dict()["n"] == 1


@pytest.mark.slow
def test_more_than_65536_marginals_are_indexed_without_wrapping():
    """Every 4-way marginal of 40 attributes is 91,390 groups: the index field was uint16, so a user drawn past
    65,535 was written as another marginal's report (index mod 2^16)."""
    proto = local.make("calm", epsilon=1.0, order=4, attributes=[{"name": f"a{i}", "domain_size": 2} for i in range(40)])
    assert len(proto.marginal_sets) == 91_390 and proto.report_format.dtype["marginal"] == np.uint32
    reports = proto.privatize(np.ones((20_000, 40), dtype=np.int64), rng=1)
    assert reports["marginal"].max() > 65_535  # P(all 20,000 below) = (65536 / 91390)^20000: nil


def test_calm_refuses_what_it_cannot_estimate():
    with pytest.raises(InvalidParameterError, match="categorical attributes"):
        local.make("calm", epsilon=1.0, attributes=[{"name": "x", "bounds": [0, 1]}, SCHEMA[0]])
    with pytest.raises(InvalidParameterError, match="'order' parameter"):
        local.make("calm", epsilon=1.0, order=3, attributes=SCHEMA[:2])
    with pytest.raises(InvalidParameterError, match="cells"):
        local.make("calm", epsilon=1.0, attributes=[{"name": "a", "domain_size": 300}, {"name": "b", "domain_size": 300}])
    estimate = local.make("calm", epsilon=1.0, attributes=SCHEMA).estimate(
        local.make("calm", epsilon=1.0, attributes=SCHEMA).simulate(_records(500), rng=0))
    with pytest.raises(InvalidParameterError, match="condition on attribute 'b'"):
        estimate.probability({"b": "w"})
    with pytest.raises(InvalidParameterError, match="distinct attribute names"):
        estimate.marginal(["a", "a"])
