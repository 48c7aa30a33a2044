"""The ``wavelet`` reproduction spec (paper 000, figures 2-7): a tiny end-to-end run and its checks."""

from __future__ import annotations

import csv
from dataclasses import replace

import numpy as np
import pytest

from dpdist import datasets, local, metrics
from dpdist.experiments import (
    CHECK_CRASHED,
    OUTCOMES,
    ResultsTable,
    get_spec,
    reproduce,
)
from dpdist.reproductions.wavelet import spec as paper

# A quick spec cut to seconds: 2 synthetic datasets (100,000 users), 1 repeat, eps = 1,
# J in 1..3, the large-n sweep of Fig. 5 at 3000 users.
_DATASETS = ("beta-5-2", paper.STEPS[-1])
_METHODS = (paper.WAVELET, "Binning-8", "SW-EMS", "DW-32", paper.J_SWEEP)
_FIGURES = ("fig2", "fig4", "fig5")  # one of each kind: metric vs eps, metrics vs J, step densities


def _tiny_spec():
    spec = get_spec("wavelet").with_options(quick=True, repeats=1)
    grid = paper.build_grid([1.0], [1.0], [1, 2, 3], large_n=(3000,))
    return replace(
        spec,
        grid=grid,
        datasets=[d for d in spec.datasets if d.key in _DATASETS],
        methods=[m for m in spec.methods if m.label in _METHODS],
        figures=[f for f in spec.figures if f.name in _FIGURES],
    )


@pytest.mark.slow
def test_tiny_run_writes_report_figures_tables_and_claims(tmp_path):
    tiny = _tiny_spec()
    result = reproduce(tiny, tmp_path, jobs=1, progress=False, command="dpdist reproduce wavelet (tiny)")
    assert result.failures == []
    report = (tmp_path / "report.md").read_text()
    for figure in _FIGURES:
        assert (tmp_path / "figures" / f"{figure}.png").stat().st_size > 0, figure
    with open(tmp_path / "results" / "claims.csv") as handle:
        claims = list(csv.DictReader(handle))
    assert len(claims) == len(tiny.claims) == len(paper.SPEC.claims)
    assert {c["outcome"] for c in claims} <= set(OUTCOMES)
    crashed = [c["text"] for c in claims if c["explanation"].startswith(CHECK_CRASHED)]
    assert crashed == []  # evaluate_claims turns a crashing check into "inconclusive"
    # the claims that have data in this cut are decided with numbers, not "no setting"
    decided = [c for c in claims if c["figure"] == "fig4" and "spiky" not in c["text"]]  # Beta(5,2) only here
    assert all(any(ch.isdigit() for ch in c["explanation"]) for c in decided)
    assert "## Claims" in report and "Failed cells" not in report
    summary = ResultsTable.read_csv(tmp_path / "results" / "summary.csv")
    bound = summary.select(metric=paper.BOUND, method=paper.J_SWEEP)
    assert len(bound) == 3  # J = 1, 2, 3 on Beta(5,2) (the J sweep runs on the Fig. 2 datasets only)


def test_binning_8_floor_on_step_16_is_h_over_4():
    # The floor of the Fig. 5 claim: 8 equal bins on the h = 1/16 step density give the
    # uniform density; its exact W1 to the step density is h/4 = 1/64.
    step = datasets.get("step-16").load(200_000, rng=np.random.default_rng(5))
    uniform = local.make("binning", epsilon=1.0, bins=8)._distribution(np.full(8, 1 / 8))
    # sampling error of W1 on 200,000 points is ~ 1e-3; the floor itself is 0.0156
    assert metrics.wasserstein(uniform, step, grid=256) == pytest.approx(1 / 64, abs=1.5e-3)
