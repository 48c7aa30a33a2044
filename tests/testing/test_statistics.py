"""The kit's statistics (dpdist.testing._statistics): the chi-square test keeps its level when the pooled cell is
small and still rejects an output of probability zero."""

from __future__ import annotations


import numpy as np

from dpdist.testing import chi_square_pvalue


# the white-box fit's chi-square pooled the outputs of expected count < 5 into one cell whose
# expected count could itself be far below 5 (high epsilon: OUE's rare bit patterns), so a correct
# randomizer got "channel mismatch" far more often than alpha.
def test_chi_square_keeps_its_level_when_the_pooled_cell_is_small():
    # outputs of probability 1e-4 at n = 200: the pooled cell expects 0.02 outputs
    probabilities = np.array([0.5, 0.4998, 1e-4, 1e-4])
    counts = np.random.default_rng(0).multinomial(200, probabilities, size=4000)
    pvalues = np.array([chi_square_pvalue(row, probabilities) for row in counts])
    # under the null Pr[p < 0.01] <= 0.01; 4000 draws: sd 0.0016, so 0.016 is 3.8 sd above the level
    assert np.mean(pvalues < 0.01) <= 0.016


def test_chi_square_still_rejects_an_output_of_probability_zero():
    assert chi_square_pvalue(np.array([100, 99, 1]), np.array([0.5, 0.5, 0.0])) == 0.0
    # a zero-probability cell seen, next to small cells whose pooled expected count is positive
    assert chi_square_pvalue(np.array([100, 98, 1, 1]), np.array([0.5, 0.4995, 0.0, 5e-4])) == 0.0
