"""The ``toy`` spec: GRR against OUE on a categorical and a numerical dataset, each claim on the side of the crossover
(``d = 3 e^eps + 2``, Wang et al. 2017) its protocol should win, each claim drawn on a figure of its dataset."""

from __future__ import annotations

import math

from dpdist import datasets, experiments
from dpdist.reproductions.toy.spec import SPEC


def test_the_toy_spec_is_registered_and_its_claims_sit_on_either_side_of_the_crossover():
    assert experiments.get_spec("toy") is SPEC
    assert [datasets.get(ref.name).kind for ref in SPEC.datasets] == ["categorical", "numerical"]
    figures = {figure.name: figure for figure in SPEC.figures}
    items = datasets.get("zipf-1.1").domain_size
    bins = {method.params["bins"] for method in SPEC.methods}
    assert items > 3 * math.exp(0.5) + 2 and bins == {32} and 32 < 3 * math.exp(4.0) + 2
    for claim in SPEC.claims:
        assert set(figures[claim.figure].datasets) <= {ref.name for ref in SPEC.datasets}
    assert [figure.datasets for figure in SPEC.figures] == [("zipf-1.1",), ("beta-5-2",)]
