"""An outsider's check of ``dpdist audit`` (issue 49): findings N49-1.. as tests.

Each test was written failing against the audit as merged (4306b9b); the ones still marked
``xfail`` are findings not fixed on this branch.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import audit, local
from dpdist.audit import Randomizer
from dpdist.cli import main
from dpdist.errors import InvalidParameterError
from dpdist.testing import chi_square_pvalue


# N49-1: the white-box fit's chi-square pooled the outputs of expected count < 5 into one cell whose
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


def test_a_correct_oue_at_high_epsilon_is_no_channel_mismatch():
    protocol = local.make("oue", epsilon=7.7, domain_size=8)
    # seeds 17, 29, 32, 45 of 0..99 gave "channel mismatch" (fit p down to 1.6e-4 < alpha 0.001)
    verdicts = [audit.audit(protocol, samples=200, rng=seed).verdict for seed in (17, 29, 32, 45)]
    assert verdicts == ["no violation found"] * 4


# N49-2: real outputs (Laplace noise) on few inputs at a small budget: the pilot's distinct reals fit in
# max_cells, so every event was a set of exact floats that fresh outputs never hit: certified 0, no power.
def _laplace(scale):
    def randomize(values, rng):
        values = np.asarray(values, dtype=np.float64)
        return values + rng.laplace(0.0, scale, values.size)
    return randomize


@pytest.mark.parametrize("domain, samples", [((0.0, 1.0), 1000), (2, 4000), (8, 1000)])
def test_real_outputs_on_few_inputs_are_binned(domain, samples):
    result = audit.audit(_laplace(1 / 3), epsilon=1.0, domain=domain, samples=samples, rng=0)  # true epsilon 3
    assert result.verdict == "violates"


# N49-3: errors of `dpdist audit` named an option the user did not type.
@pytest.mark.parametrize("argv, named", [
    (["--protocol", "grr", "--epsilon", "1", "--domain", "8", "--claim", "-1"], "--claim"),
    (["--protocol", "grr", "--epsilon", "1", "--domain", "8", "--claim", "nan"], "--claim"),
    (["--callable", "json:loads", "--epsilon", "1", "--domain", "1,0"], "--domain"),
    (["--protocol", "sw", "--epsilon", "1", "--domain", "a,b"], "--domain"),
])
def test_cli_errors_name_the_option_typed(argv, named, capsys):
    assert main(["audit", *argv]) == 2
    error = capsys.readouterr().err.strip()
    assert error.count("\n") == 0 and named in error and "--bounds" not in error
    if named == "--claim":
        assert "--epsilon" not in error


# N49-4: samples=1e5 (a float, as people write it) was reported as a bad 'pilot' of None; the int check
# takes an integral float, so it is accepted, and a fractional one is named as 'samples'.
def test_a_float_samples_is_taken_or_named_as_samples():
    result = audit.audit(lambda v, rng: np.asarray(v), epsilon=1.0, domain=4, samples=1e5, rng=0)
    assert result.violates and result.samples_per_input <= 100_000
    with pytest.raises(InvalidParameterError, match="'samples'") as caught:
        audit.audit(lambda v, rng: np.asarray(v), epsilon=1.0, domain=4, samples=1e5 + 0.5)
    assert "'pilot'" not in str(caught.value)


# N49-5: a stated channel that is not a channel (negative, or rows not summing to 1) was used as is:
# a raw ValueError, or a "channel mismatch" verdict about the randomizer.
def _grr(values, rng, d=4):
    values = np.asarray(values)
    keep = math.e / (math.e + d - 1)
    return np.where(rng.random(values.size) < keep, values, (values + rng.integers(1, d, values.size)) % d)


@pytest.mark.parametrize("channel", [
    lambda x: -np.ones((len(x), 4)),
    lambda x: np.ones((len(x), 4)),
])
def test_a_stated_channel_that_is_not_one_is_refused(channel):
    stated = Randomizer(_grr, epsilon=1.0, domain=4, channel=channel, output_index=np.asarray)
    with pytest.raises(InvalidParameterError, match="channel"):
        audit.audit(stated, samples=400, rng=0)


# N49-6: public helpers of dpdist.audit accept what they cannot mean.
def test_protocol_randomizer_refuses_a_non_protocol():
    with pytest.raises(InvalidParameterError, match="protocol"):
        audit.protocol_randomizer(42)


@pytest.mark.parametrize("k, n, a", [(5, 3, 0.01), (1, 3, 2.0), (-1, 3, 0.01)])
def test_clopper_pearson_refuses_impossible_counts_or_levels(k, n, a):
    with pytest.raises(InvalidParameterError):
        audit.clopper_pearson_lower(k, n, a)
