"""The ``cp`` spec (paper 004): method, metrics, claim check, and a tiny end-to-end run."""

import math

import numpy as np
import pytest

from dpdist import experiments
from dpdist.datasets import get as get_dataset
from dpdist.experiments import OUTCOMES, UNDERPOWERED
from dpdist.experiments._claims import CHECK_CRASHED, DOES_NOT_HOLD, HOLDS, INCONCLUSIVE
from dpdist.experiments._table import ResultsTable
from dpdist.reproductions.cp import methods as paper_methods, spec as paper

UNDECIDED = (INCONCLUSIVE, UNDERPOWERED)  # no decision: the split is tested in test_verdict_power.py


def test_spec_is_registered_with_the_paper_settings():
    spec = experiments.get_spec("cp")
    assert spec.name == "cp" and spec.repeats == 10
    assert [d.key for d in spec.datasets] == ["geo-0.8", "geo-0.6", "unif-10", "unif-25", "unif-10-k1000",
                                              "unif-10-k50000"]
    fig2, fig3, universes = spec.grid
    assert fig2["epsilon"] == [0.5] and fig2["n"] == list(range(50_000, 1_000_001, 50_000))
    assert fig2["datasets"] == fig3["datasets"] == paper.PAPER_DATASETS  # the paper's k = 10,000
    assert paper.CP_HIGH not in fig2["methods"]  # the Rademacher-at-every-eps line is Fig. 3 only
    # the universe size: Unif(10) at k = 1,000, 10,000, 50,000
    assert [get_dataset(name).domain_size for name in universes["datasets"]] == [1_000, 10_000, 50_000]
    names = set(spec.figure_names())
    assert {"fig2_projected", "fig2_normalized", "fig3_normalized", "fig3_projected"} <= names
    assert spec.claims and all(claim.figure in names or claim.figure is None for claim in spec.claims)
    assert all(claim.data for claim in spec.claims)  # every claim states the data it is about
    # Fig. 3's n is one of Fig. 2's, so that point is one cell shared by both sweeps (full and quick)
    quick = spec.with_options(quick=True)
    for variant in (spec, quick):
        keys = [(c.dataset.key, c.method.label, c.params, c.repeat) for c in variant.cells()]
        assert len(keys) == len(set(keys))
        sweep_n = variant.grid[1]["n"][0]
        assert sweep_n in variant.grid[0]["n"]
        assert all(figure.where.get("n", sweep_n) == sweep_n for figure in variant.figures)
        checks = [part for claim in variant.claims for part in getattr(claim.check, "checks", (claim.check,))]
        assert all(check.where.get("n", sweep_n) in (sweep_n, paper.K_SWEEP_N) for check in checks)


def test_theorem_1_1_is_read_as_a_bound_on_the_exactly_sparse_data():
    # an upper bound: falling faster than n^(-1/2) is consistent with it, a plateau on approximately sparse data
    # is outside its scope (Theorem 3.6)
    (claim,) = [c for c in experiments.get_spec("cp").claims if c.text.startswith("Theorem 1.1")]
    assert claim.check.low == 0.0 and claim.check.high == 1.25
    assert claim.check.where["dataset"] == ["unif-10", "unif-25"] and "approximately sparse" in claim.data

    def rows(errors):
        return ResultsTable([{"dataset": "unif-10", "method": paper.CP_PAPER, "metric": paper.PROJECTED,
                              "epsilon": 0.5, "n": n, "mean": e, "std": 0.001, "se": 0.0005, "count": 4, "failed": 0}
                             for n, e in errors.items()])

    assert claim.check(rows({50_000: 0.3, 200_000: 0.05}))[0] == HOLDS  # 0.33x the n^(-1/2) prediction: within the bound
    assert claim.check(rows({50_000: 0.3, 200_000: 0.3}))[0] == DOES_NOT_HOLD  # flat: above it


def _table(cp_mean, baseline_mean, se):
    rows = []
    for method, mean in (("CP", cp_mean), ("B1", baseline_mean), ("B2", 2 * baseline_mean)):
        for n in (1000, 2000):
            rows.append({"dataset": "d", "method": method, "n": n, "metric": "l1", "mean": mean, "se": se, "count": 10})
    return ResultsTable(rows)


def test_error_ratio_judges_the_band_with_standard_errors():
    at_least_two = experiments.RatioWithin("CP", "l1", ("B1", "B2"), "l1", low=2.0)
    assert at_least_two(_table(0.1, 0.5, 0.001))[0] == HOLDS  # ratios 5 and 10, tight
    assert at_least_two(_table(0.1, 0.15, 0.001))[0] == DOES_NOT_HOLD  # ratio 1.5 for B1
    assert at_least_two(_table(0.1, 0.21, 0.02))[0] in UNDECIDED  # 2.1 +- 0.4
    two_to_ten = experiments.RatioWithin("CP", "l1", ("B1", "B2"), "l1", low=2.0, high=10.0)
    outcome, explanation = two_to_ten(_table(0.1, 0.6, 0.001))  # B2's ratio is 12
    assert outcome == DOES_NOT_HOLD and "12" in explanation and "B2" in explanation
    assert at_least_two(_table(0.1, 0.5, 0.001).select(method="CP"))[0] == INCONCLUSIVE


@pytest.mark.slow
def test_tiny_end_to_end_run(tmp_path):
    spec = paper.make_spec(
        n_values=[1_000, 2_000], epsilons=[0.5, 1.0], sweep_n=2_000, datasets=["geo-0.8"], repeats=1
    )
    result = experiments.reproduce(spec, tmp_path, jobs=1, progress=False)
    assert not result.failures
    assert (tmp_path / "report.md").exists()
    assert (tmp_path / "results" / "summary.csv").exists() and (tmp_path / "results" / "claims.csv").exists()
    for figure in spec.figure_names():
        assert (tmp_path / "figures" / f"{figure}.png").exists()
    assert len(result.claims) == len(spec.claims)
    assert {claim["outcome"] for claim in result.claims} <= set(OUTCOMES)
    crashed = [c["text"] for c in result.claims if c["explanation"].startswith(CHECK_CRASHED)]
    assert crashed == []  # evaluate_claims turns a crashing check into "inconclusive"
    # every claim reads a ratio, except those about data this tiny spec lacks (the universes, the sparse Unif)
    assert all("ratio" in claim["explanation"] or "no s" in claim["explanation"] or "no c" in claim["explanation"]
               for claim in result.claims)
    assert sum("ratio" in claim["explanation"] for claim in result.claims) >= len(result.claims) - 3
    as_printed = result.summary.select(method=paper.CP_PAPER, metric=paper.PRIVACY, epsilon=0.5)
    assert len(as_printed) and all(row["mean"] > 0.5 for row in as_printed)  # eps0 = eps is not 0.5-LDP
    exact = result.summary.select(method=paper.CP_EXACT, metric=paper.PRIVACY)
    assert all(row["mean"] <= row["epsilon"] * (1 + 1e-9) for row in exact)
    assert not math.isnan(result.summary.select(method="SS", metric=paper.PROJECTED).rows[0]["mean"])


def test_larger_sparsity_variant_takes_s_per_dataset():
    # the per-dataset dict picks s = 5 on Geo(0.8) and falls back to SPARSITY elsewhere
    geo, unif = get_dataset("geo-0.8"), get_dataset("unif-10")
    params = {"epsilon": 0.5, "calibration": "exact", "matrix_seed": 7, "sparsity": dict(paper.LARGER_SPARSITY)}
    on_geo = paper_methods.compressive_privatization(geo.load(5_000, rng=0), geo, params, np.random.default_rng(1))
    on_unif = paper_methods.compressive_privatization(unif.load(5_000, rng=0), unif, params, np.random.default_rng(1))
    assert on_geo.details["sparsity"] == 5 and on_unif.details["sparsity"] == 10
    spec = experiments.get_spec("cp")
    assert paper.CP_LARGER_S in spec.grid[0]["methods"]
    assert any(paper.CP_LARGER_S in claim.text for claim in spec.claims)
