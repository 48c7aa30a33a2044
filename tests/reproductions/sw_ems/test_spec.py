"""The ``sw-ems`` spec (paper 003, Figs. 2-7): a tiny end-to-end run and its claim checks."""

import csv
import dataclasses

import numpy as np
import pytest

from dpdist import Distribution, datasets, experiments, metrics
from dpdist.experiments import CHECK_CRASHED, OUTCOMES, cell_key
from dpdist.reproductions.sw_ems import methods as paper_methods, spec as paper


def _tiny_spec():
    """Beta(5,2), 4,000 users, eps = 0.5, 1, 4, 2 repeats, two b values and two granularities."""
    spec = experiments.get_spec("sw-ems")
    return dataclasses.replace(
        spec,
        datasets=[paper.BETA],
        grid={"epsilon": [0.5, 1.0, 4.0], "metric_grid": [256], "n": [4000]},
        methods=paper._methods([0.1, 0.3], [256, 512]),
        repeats=2,
    )


@pytest.mark.slow
def test_tiny_run_writes_report_figures_tables_and_evaluates_every_claim(tmp_path):
    spec = _tiny_spec()
    result = experiments.reproduce(spec, tmp_path, jobs=1, progress=False)
    assert result.failures == []
    report = (tmp_path / "report.md").read_text()
    for claim in spec.claims:
        assert claim.text in report
    for figure in spec.figures:
        assert (tmp_path / "figures" / f"{figure.name}.png").stat().st_size > 0
    assert (tmp_path / "results" / "summary.csv").exists()
    with (tmp_path / "results" / "claims.csv").open() as handle:
        claims = list(csv.DictReader(handle))
    assert [row["text"] for row in claims] == [claim.text for claim in spec.claims]
    assert {row["outcome"] for row in claims} <= set(OUTCOMES)
    crashed = [row["text"] for row in claims if row["explanation"].startswith(CHECK_CRASHED)]
    assert crashed == []  # evaluate_claims turns a crashing check into "inconclusive"
    # every claim found its rows (no "no setting has both ..." / "no rows" explanation), except
    # those about the real datasets, which this run leaves out
    empty = {row["text"] for row in claims if "no setting" in row["explanation"] or "no rows" in row["explanation"]}
    only_real = ("flights", "income data", "real datasets", "retirement data")
    about_real_data = {c.text for c in spec.claims if any(word in c.text for word in only_real)}
    assert empty <= about_real_data and len(empty) >= 15
    assert all(c.data for c in spec.claims)  # every claim states the data it is about
    # per-method metric lists: PM/SR only get the moments, HH only range queries
    summary = result.summary
    assert set(summary.select(method="PM").unique("metric")) == {"mean", "variance"}
    assert set(summary.select(method="HH").unique("metric")) == {"rq-0.1", "rq-0.4"}
    assert set(summary.select(method="SW-EMS").unique("metric")) == set(paper._DISTRIBUTION_METRICS)
    # the general waves run at eps = 1 only, on the b grid
    shapes = summary.select(method="GW triangle")
    assert set(shapes.unique("epsilon")) == {1.0} and set(shapes.unique("b")) == {0.1, 0.3}


def test_methods_restricted_to_metrics_change_the_cell_key_only_then():
    spec = _tiny_spec()
    cell = next(c for c in spec.cells() if c.method.label == "PM")
    unrestricted = dataclasses.replace(cell, method=dataclasses.replace(cell.method, metrics=()))
    assert cell_key(cell, spec) != cell_key(unrestricted, spec)


def test_paper_granularity_is_256_for_beta_and_1024_for_real_data():
    rng = np.random.default_rng(0)
    beta = datasets.get(paper.BETA)
    flights = datasets.get("flights-departure")
    params = {"protocol": "binning", "epsilon": 1.0}
    assert paper_methods.at_paper_granularity(beta.load(500, rng=rng), beta, params, rng).probabilities.size == 256
    assert paper_methods.at_paper_granularity(flights.load(500, rng=rng), flights, params, rng).probabilities.size == 1024
    explicit = paper_methods.at_paper_granularity(beta.load(500, rng=rng), beta, {**params, "bins": 64}, rng)
    assert explicit.probabilities.size == 64


def test_pm_two_phase_variance_is_close_to_the_truth_at_large_n():
    # PM at eps = 4 on 100,000 users.  PM's per-user variance on [-1, 1] is at most
    # 1/(e^2 - 1) + (e^2 + 3)/(3 (e^2 - 1)^2) = 0.24 (Wang et al., Lemma 1): the mean (all users,
    # bounds (0, 1), scale 1/4) has SE <= sqrt(0.06 / 1e5) = 7.7e-4, so 0.005 is 6.5 SE; the
    # variance (50,000 users, bounds (0, <= 0.5), scale <= 1/16) has SE <= sqrt(0.015 / 5e4) =
    # 5.5e-4 plus a phase-1 bias (mu - c)^2 ~ 1e-6, so 0.005 is 9 SE.
    data = datasets.get(paper.BETA)
    rng = np.random.default_rng(3)
    values = data.load(100_000, rng=rng)
    estimate = paper_methods.mean_and_variance(values, data, {"protocol": "pm", "epsilon": 4.0}, rng)
    assert abs(estimate.mean - values.mean()) < 0.005
    assert abs(estimate.var - values.var()) < 0.005


def test_signed_leaves_answer_range_queries_like_a_distribution_with_the_same_masses():
    # non-negative leaves: the signed path must give the runner's range_query_mae exactly
    rng = np.random.default_rng(5)
    data = datasets.get(paper.BETA)
    truth = data.load(2000, rng=rng)
    masses = rng.dirichlet(np.ones(16))
    signed = paper_methods.SignedHistogram(masses=masses, bounds=(0.0, 1.0))
    distribution = Distribution.uniform_bins(masses, (0.0, 1.0))
    for alpha in (0.1, 0.4):
        mine = paper_methods.range_query_error(signed, truth, alpha=alpha, rng=np.random.default_rng(9))
        reference = metrics.range_query_mae(distribution, truth, alpha=alpha, rng=np.random.default_rng(9))
        assert mine == pytest.approx(reference, rel=1e-12, abs=1e-15)


def test_hh_signed_leaves_are_the_consistent_tree():
    rng = np.random.default_rng(2)
    data = datasets.get(paper.BETA)
    values = data.load(3000, rng=rng)
    signed = paper_methods.signed_leaves(values, data, {"protocol": "hh", "epsilon": 0.5, "branching": 4}, rng)
    assert signed.masses.size == 256 and signed.masses.min() < 0  # unbiased, not clipped
    assert signed.masses.sum() == pytest.approx(1.0, abs=1e-9)


def test_taxi_claims_have_a_smooth_stand_in_beside_them_and_the_decile_claim_reads_n():
    # the minute grid of the taxi stand-ins aliases 1024 buckets; each such claim is reported
    # beside the same claim on the departures spread over 5-minute blocks
    spec = experiments.get_spec("sw-ems")
    groups = {}
    for claim in spec.claims:
        groups.setdefault(claim.group, []).append(claim)
    flagged = [claim for claim in spec.claims if claim.artefact]
    assert len(flagged) == 6
    for claim in flagged:
        partners = [c for c in groups[claim.group] if c is not claim]
        assert partners and all(not c.artefact and "smooth" in c.text for c in partners)
    # "1-2 orders of magnitude" depends on n: its check reads the n sweep's own labels, at three n
    (deciles,) = [c for c in spec.claims if "orders of magnitude" in c.text]
    assert "depends on n" not in deciles.text and "grows with n" in deciles.text
    sweep = [s for s in spec.grid if "n" in s]
    assert len(sweep) == 1 and sweep[0]["n"] == paper.INCOME_NS and set(sweep[0]["methods"]) == set(paper._N_SWEEP)
    assert not any(set(paper._N_SWEEP) & set(s["methods"]) for s in spec.grid if s is not sweep[0])
