"""The ``wiener`` spec (paper 001): structure, custom metrics, and a tiny end-to-end run."""

from dataclasses import replace

import pytest

from dpdist import experiments
from dpdist.experiments import OUTCOMES, UNDERPOWERED
from dpdist.experiments._claims import CHECK_CRASHED, DOES_NOT_HOLD, HOLDS, INCONCLUSIVE
from dpdist.experiments._table import ResultsTable
from dpdist.reproductions.wiener import spec as paper

UNDECIDED = (INCONCLUSIVE, UNDERPOWERED)  # no decision: the split is tested in test_verdict_power.py


def test_spec_is_registered_and_has_every_paper_figure():
    spec = experiments.get_spec("wiener")
    names = set(spec.figure_names())
    for figure in ("fig3", "fig4", "fig5", "fig6_krr", "fig6_oue", "fig7_krr", "fig8_oue",
                   "fig9_true_positives", "fig9_false_positives", "fig10a_oue", "fig10b_krr", "fig10c_oue"):
        assert figure in names
    assert spec.claims and all(claim.figure in names for claim in spec.claims)


def test_sweeps_restrict_datasets_and_methods():
    spec = experiments.get_spec("wiener").with_options(quick=True, repeats=1)
    cells = spec.cells()
    # the d sweep never touches wiki-words; AMRP never runs on the smooth dataset
    assert not any(c.dataset.key == paper.SKEWED and "dataset_bins" in c.param_dict for c in cells)
    assert not any(c.dataset.key == paper.SMOOTH and "AMRP" in c.method.label for c in cells)
    # the shared point of two sweeps is one cell
    keys = [(c.dataset.key, c.method.label, c.params) for c in cells]
    assert len(keys) == len(set(keys))


def test_ratio_check_decides_with_the_standard_error():
    def table(base, improved, se):
        rows = [{"dataset": "a", "method": m, "epsilon": 5.0, "metric": "mse", "mean": v, "std": 0.0, "se": se,
                 "count": 4, "failed": 0} for m, v in (("B", base), ("I", improved))]
        return ResultsTable(rows, ["dataset", "method", "epsilon", "metric", "mean", "std", "se", "count", "failed"])

    check = experiments.RatioWithin("I", "mse", ("B",), "mse", low=3.0)  # MSE(B) / MSE(I) >= 3
    assert check(table(4.0, 1.0, 0.01))[0] == HOLDS
    assert check(table(2.0, 1.0, 0.01))[0] == DOES_NOT_HOLD
    assert check(table(3.05, 1.0, 0.2))[0] in UNDECIDED
    outcome, text = check(table(3.05, 1.0, 0.2))
    assert "inside [3, inf] in 1/1" in text and "direction: for the claim in 1 of 1" in text


@pytest.mark.slow
def test_tiny_run_writes_report_figures_tables_and_claims(tmp_path):
    spec = experiments.get_spec("wiener")
    tiny = replace(
        spec,
        repeats=2,
        datasets=[d for d in spec.datasets if d.key == paper.SMOOTH],
        grid=[
            {"epsilon": [1.0, 5.0], "methods": ("KRR", "KRR-IIW", "KRR-IIW-G", "OUE", "OUE-IIW")},
            {"epsilon": [4.0], "metric_band": [0, 1, 5], "methods": ("KRR noise", "OUE noise")},
            {"epsilon": [1.0], "metric_iteration": [0, 3], "methods": ("KRR-IIW-G path",)},
        ],
    )
    tiny = replace(tiny, methods=[replace(m, params={**m.params, "estimate_iterations": 3})
                                  if m.label == "KRR-IIW-G path" else m for m in tiny.methods])
    result = experiments.reproduce(tiny, tmp_path, jobs=1, progress=False)
    assert not result.failures
    assert (tmp_path / "report.md").exists()
    assert (tmp_path / "results" / "summary.csv").exists() and (tmp_path / "results" / "claims.csv").exists()
    for figure in ("fig3", "fig5", "fig6_krr"):
        assert (tmp_path / "figures" / f"{figure}.png").exists()
    outcomes = {claim["text"]: claim["outcome"] for claim in result.claims}
    assert len(outcomes) == len(spec.claims)
    assert set(outcomes.values()) <= set(OUTCOMES)
    crashed = [c["text"] for c in result.claims if c["explanation"].startswith(CHECK_CRASHED)]
    assert crashed == []  # evaluate_claims turns a crashing check into "inconclusive"
    report = (tmp_path / "report.md").read_text()
    assert "KRR-IIW-G is stuck" in report
    # claims with their rows present were evaluated on numbers, not skipped
    spectrum = next(c for c in result.claims if c["figure"] == "fig3")
    assert "band" in spectrum["explanation"]


def test_metric_parameters_share_the_method_stream_and_dataset_overrides_share_the_users():
    spec = experiments.get_spec("wiener").with_options(quick=True, repeats=1)
    cells = [c for c in spec.cells() if c.method.label == "OUE" and c.dataset.key == paper.SMOOTH]
    by_k = [c for c in cells if "metric_k" in c.param_dict]
    by_d = [c for c in cells if "dataset_bins" in c.param_dict]
    method_streams = {tuple(experiments.cell_seeds(c, spec.seed)["method"]) for c in by_k}
    data_streams = {tuple(experiments.cell_seeds(c, spec.seed)["data"]) for c in by_d}
    assert len(by_k) > 1 and len(method_streams) == 1  # one randomization scored at every k
    assert len(by_d) > 1 and len(data_streams) == 1  # the same users bucketized at every d
    assert len({tuple(experiments.cell_seeds(c, spec.seed)["method"]) for c in by_d}) == len(by_d)


def test_a_claim_on_a_stand_in_with_an_artefact_has_the_same_claim_beside_it_on_one_without():
    # flights' minute grid (a saw-tooth at d = 1000) and flights3m's 5-minute heaping bear on the
    # smooth-data claims; each such claim's group also holds a stand-in without a known artefact
    spec = experiments.get_spec("wiener")
    assert all(claim.data for claim in spec.claims)
    groups = {}
    for claim in spec.claims:
        if claim.group:
            groups.setdefault(claim.group, []).append(claim)
    with_artefact = [claim for claim in spec.claims if claim.artefact]
    assert len(with_artefact) >= 25
    for claim in with_artefact:
        assert claim.group and any(not other.artefact for other in groups[claim.group]), claim.text
    smooth = experiments.get_spec("wiener").datasets
    assert any(d.key == "flights-smooth" and d.spread == 5 and d.bins == 1000 for d in smooth)
    texts = " ".join(claim.text for claim in spec.claims)
    assert "decreases with increasing eps" in texts and "GF3 is worse than no filtering" in texts
