"""The ``central`` reproduction (paper 002): spec shape, runner methods, claim checks, a tiny end-to-end run."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from dpdist import central, datasets, metrics
from dpdist.errors import InvalidParameterError
from dpdist.experiments import CHECK_CRASHED, DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, ResultsTable, get_spec, reproduce
from dpdist.reproductions.central import checks as paper_checks
from dpdist.reproductions.central import methods as paper_methods
from dpdist.reproductions.central import spec as paper


def _summary(rows):
    columns = ["dataset", "method", "epsilon", "metric", "mean", "std", "se", "count", "failed"]
    return ResultsTable([{"std": 0.0, "count": 4, "failed": 0, **row} for row in rows], columns)


def test_spec_has_every_paper_figure_and_its_settings():
    spec = get_spec("central")
    names = spec.figure_names()
    for figure in ("fig2-m", "fig2-n", "fig3-s", "fig3-m", "fig3-n", "fig5", "fig6", "fig7", "fig9"):
        assert {f"{figure}-ks", f"{figure}-w1", f"{figure}-energy"} <= set(names)
    comparison = [s for s in spec.sweeps() if s.get("setting") == ["central"] and s.get("n") == [10_000]][0]
    assert comparison["epsilon"] == [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
    assert spec.repeats == 25  # the paper repeats 50 times; 25 fit in an hour on 2 cores
    assert datasets.get("normal").bounds == (-4.0, 4.0)  # the paper clips N(0, 1) to [-4, 4]


def test_step_cdf_is_the_staircase_of_the_histogram():
    x = np.random.default_rng(0).normal(size=2_000).clip(-4, 4)
    dataset = datasets.get("normal")
    linear = paper_methods.histogram_method(x, dataset, {"epsilon": 1.0, "bins": 8}, np.random.default_rng(1))
    step = paper_methods.histogram_method(x, dataset, {"epsilon": 1.0, "bins": 8, "cdf": "step"},
                                        np.random.default_rng(1))
    inside = linear.edges[:-1] + 0.5 * np.diff(linear.edges)  # bin midpoints
    # the staircase holds the CDF of the left edge inside a bin; the linear CDF interpolates
    np.testing.assert_allclose(step.cdf(inside), linear.cumulative[:-1], atol=1e-9)
    np.testing.assert_allclose(step.cdf(linear.edges), linear.cumulative, atol=1e-9)


def test_split_settings_pool_all_parts_and_keep_a_valid_cdf():
    x = np.random.default_rng(2).beta(10, 2, size=3_000)
    dataset = datasets.get("beta-10-2")
    for method in (paper_methods.histogram_method, paper_methods.adaptive_quantiles_method,
                   paper_methods.polynomial_method, paper_methods.matching_pursuit_method):
        for setting in ("decentralized", "streaming"):
            estimate = method(x, dataset, {"epsilon": 1.0, "setting": setting, "parts": 3}, np.random.default_rng(3))
            assert np.all(np.diff(estimate.cumulative) >= -1e-12)
            assert estimate.cumulative[0] == 0 and estimate.cumulative[-1] == 1
    pooled = paper_methods.polynomial_method(x, dataset, {"epsilon": 1.0, "setting": "decentralized", "parts": 3},
                                           np.random.default_rng(4))
    releases = pooled.details["releases"]
    assert [r["n"] for r in releases] == [1_000, 1_000, 1_000]
    assert all(r["delta"] == pytest.approx(1_000 ** -1.5) for r in releases)  # delta = n_site^-3/2
    with pytest.raises(InvalidParameterError, match="'parts'"):
        paper_methods.histogram_method(x, dataset, {"epsilon": 1.0, "setting": "streaming", "parts": 0}, None)
    with pytest.raises(InvalidParameterError, match="'setting'"):
        paper_methods.histogram_method(x, dataset, {"epsilon": 1.0, "setting": "federated"}, None)


def test_nonprivate_references_match_the_noise_free_limit():
    x = np.random.default_rng(5).normal(size=20_000).clip(-4, 4)
    dataset = datasets.get("normal")
    projection = paper_methods.polynomial_method(x, dataset, {"degree": 12, "private": False}, None)
    # with a budget so large the noise is negligible, the private release is the same projection
    private = central.polynomial_projection(x, 1e4, 1e-6, (-4, 4), 12, rng=0, moments="legendre")
    assert metrics.ks(projection, x) == pytest.approx(metrics.ks(private, x), abs=1e-3)
    pursuit = paper_methods.matching_pursuit_method(x, dataset, {"sparsity": 12, "private": False}, None)
    assert metrics.ks(pursuit, x) < metrics.ks(
        paper_methods.matching_pursuit_method(x, dataset, {"sparsity": 2, "private": False}, None), x
    )


def test_ranked_check_outcomes():
    rows = [
        {"dataset": "d", "method": "A", "epsilon": 1.0, "metric": "ks", "mean": 0.9, "se": 0.01},
        {"dataset": "d", "method": "B", "epsilon": 1.0, "metric": "ks", "mean": 0.5, "se": 0.01},
        {"dataset": "d", "method": "C", "epsilon": 1.0, "metric": "ks", "mean": 0.1, "se": 0.01},
    ]
    table = _summary(rows)
    assert paper_checks.RankedCheck("A", ("ks",), "worst")(table)[0] == HOLDS
    assert paper_checks.RankedCheck("C", ("ks",), "best")(table)[0] == HOLDS
    outcome, text = paper_checks.RankedCheck("B", ("ks",), "worst")(table)
    assert outcome == DOES_NOT_HOLD and "0.9" in text
    close = _summary([{**rows[1], "mean": 0.105}, rows[2]])
    assert paper_checks.BestOrCloseCheck("B", ("ks",), tolerance=0.25)(close)[0] == HOLDS
    assert paper_checks.BestOrCloseCheck("B", ("ks",))(table)[0] == DOES_NOT_HOLD
    assert paper_checks.GroupBeatsCheck(("C",), ("A", "B"), ("ks",))(table)[0] == HOLDS


def test_relative_error_check_compares_ratios_across_dataset_groups():
    def table(aq_hard, aq_easy, se=0.001):
        rows = []
        for dataset, aq in (("hard", aq_hard), ("easy", aq_easy)):
            rows += [{"dataset": dataset, "method": "AQ", "epsilon": 1.0, "metric": "ks", "mean": aq, "se": se},
                     {"dataset": dataset, "method": "MP", "epsilon": 1.0, "metric": "ks", "mean": 0.01, "se": se / 10}]
        return _summary(rows)

    check = paper_checks.RelativeErrorCheck("AQ", "MP", ("ks",), harder=("hard",), easier=("easy",))
    assert check(table(0.03, 0.01))[0] == HOLDS  # 3x MP on the hard data, 1x on the easy
    outcome, text = check(table(0.01, 0.03))
    assert outcome == DOES_NOT_HOLD and "0.333" in text
    assert check(table(0.0201, 0.02, se=0.002))[0] == INCONCLUSIVE
    assert check(_summary([]))[0] == INCONCLUSIVE


def test_trend_and_minimum_checks():
    means = {2: 0.5, 4: 0.2, 6: 0.1, 8: 0.3, 12: 0.6}
    rows = [{"dataset": "d", "method": "P", "degree": m, "metric": "ks", "mean": v, "se": 0.01}
            for m, v in means.items()]
    table = ResultsTable([{"std": 0.0, "count": 4, "failed": 0, **r} for r in rows],
                         ["dataset", "method", "degree", "metric", "mean", "std", "se", "count", "failed"])
    assert paper_checks.MinimumWithinCheck("P", ("ks",), "degree", 5, 8)(table)[0] == HOLDS
    assert paper_checks.MinimumWithinCheck("P", ("ks",), "degree", 10, 12)(table)[0] == DOES_NOT_HOLD
    assert paper_checks.TrendCheck("P", ("ks",), "degree")(table)[0] == DOES_NOT_HOLD  # rises after m = 6


@pytest.mark.slow
def test_tiny_reproduction_writes_report_figures_and_claims(tmp_path):
    spec = get_spec("central").with_options(quick=True, repeats=1)
    small = {"epsilon": [1.0], "n": [400], "degree": [2, 6], "sparsity": [2, 6], "size": [10, 40]}
    grid = [{k: (small[k] if k in small and k != "n" else v) for k, v in sweep.items()} for sweep in spec.grid]
    grid = [{**sweep, "n": [400]} for sweep in grid]
    methods = [m for m in spec.methods if m.label not in paper.DICTIONARIES]
    figures = [f for f in spec.figures if f.name in ("fig2-m-ks", "fig5-ks", "fig7-w1")]  # drawing costs ~0.5 s each
    spec = replace(spec, datasets=spec.datasets[:1], methods=methods, grid=grid, figures=figures)
    result = reproduce(spec, tmp_path, jobs=1, progress=False)
    assert not result.failures
    report = (tmp_path / "report.md").read_text()
    assert "Histogram queries is the worst method" in report
    assert (tmp_path / "figures" / "fig5-ks.png").exists() and (tmp_path / "figures" / "fig7-w1.png").exists()
    assert (tmp_path / "results" / "summary.csv").exists()
    outcomes = {claim["outcome"] for claim in result.claims}
    assert outcomes <= {HOLDS, DOES_NOT_HOLD, INCONCLUSIVE} and len(result.claims) == len(spec.claims)
    crashed = [c["text"] for c in result.claims if c["explanation"].startswith(CHECK_CRASHED)]
    assert crashed == []  # evaluate_claims turns a crashing check into "inconclusive"


def test_mp_with_the_papers_selection_scale_is_a_labelled_comparison_only_variant():
    spec = get_spec("central")
    (method,) = [method for method in spec.methods if method.label == paper.MP_PAPER]
    assert "not eps-DP" in method.label and method.params["selection_scale"] == "paper"
    assert [claim for claim in spec.claims if getattr(claim.check, "method", None) == paper.MP_PAPER]
