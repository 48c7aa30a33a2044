"""Each conformance check must fail on a deliberately broken protocol.

A privacy test that cannot fail proves nothing: here GRR and OUE variants that
keep the true value 30% more often, claim a channel they do not sample, report
a wrong variance or simulate the wrong law are run through the same checks the
suite applies, and every check must reject them.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpdist.local.frequency.grr import GRR
from dpdist.local.frequency.oue import OUE

from ._checks import (
    assert_epsilon_ldp,
    assert_privatize_samples_channel,
    assert_simulate_matches_privatize,
    assert_unbiased_with_analytic_variance,
)


class GRRKeepsTooOften(GRR):
    """Keeps the true item with probability 1.3 * lambda, but claims the honest channel."""

    def _privatize(self, values, rng):
        keep = rng.random(values.size) < 1.3 * self._keep
        uniform = rng.integers(0, self.domain_size, size=values.size, dtype=self._report_dtype)
        return np.where(keep, values.astype(self._report_dtype), uniform)


class GRRWithLeakyChannel(GRR):
    """Honestly describes a randomizer that reports the truth 30% more often than allowed."""

    def _setup(self):
        super()._setup()
        d = self.domain_size
        self._p = min(1.3 * self._p, 0.99)
        self._q = (1 - self._p) / (d - 1)
        self._keep = self._p - self._q


class OUETrueBitTooOften(OUE):
    """Sets the true bit with probability 0.65 instead of 1/2, claiming 1/2."""

    def _setup(self):
        super()._setup()
        self._p_threshold = int(0.65 * 2**32)


class OUEWithLeakyChannel(OUETrueBitTooOften):
    """Honestly describes the 0.65 true-bit probability: its channel must fail the epsilon check."""

    def _setup(self):
        super()._setup()
        self._p = self._p_threshold / 2**32


class GRRWrongVariance(GRR):
    def variance(self, n, frequencies=None):
        return 2 * super().variance(n, frequencies)


class GRRBiasedEstimate(GRR):
    def support_probabilities(self):
        p, q = super().support_probabilities()
        return p * 1.05, q


class OUEWrongSimulate(OUE):
    def _simulate(self, values, rng):
        true_counts = np.bincount(values, minlength=self.domain_size)
        # forgets that the true bit is itself random: every user supports their item
        return (true_counts + rng.binomial(values.size - true_counts, self._q)).astype(np.int64)


def test_epsilon_check_rejects_a_leaky_channel():
    protocol = GRRWithLeakyChannel(epsilon=1.0, domain_size=5)
    with pytest.raises(AssertionError, match="privacy loss"):
        assert_epsilon_ldp(protocol.channel(), protocol.epsilon)
    with pytest.raises(AssertionError, match="privacy loss"):
        assert_epsilon_ldp(OUEWithLeakyChannel(epsilon=1.0, domain_size=3).channel(), 1.0)


@pytest.mark.parametrize(
    "protocol", [GRRKeepsTooOften(epsilon=1.0, domain_size=5), OUETrueBitTooOften(epsilon=1.0, domain_size=5)]
)
def test_sampling_check_rejects_a_randomizer_that_keeps_the_truth_too_often(protocol):
    with pytest.raises(AssertionError, match="does not sample the channel"):
        assert_privatize_samples_channel(protocol, np.arange(protocol.domain_size), n_per_input=20_000, rng=3)


def test_variance_check_rejects_a_wrong_variance_formula():
    with pytest.raises(AssertionError, match="variance ratio"):
        assert_unbiased_with_analytic_variance(GRRWrongVariance(epsilon=1.0, domain_size=5), rng=5)


def test_bias_check_rejects_a_biased_estimator():
    with pytest.raises(AssertionError, match="biased"):
        assert_unbiased_with_analytic_variance(GRRBiasedEstimate(epsilon=1.0, domain_size=5), rng=5)


def test_simulate_check_rejects_a_wrong_aggregate_sampler():
    with pytest.raises(AssertionError, match="simulate disagrees"):
        assert_simulate_matches_privatize(OUEWrongSimulate(epsilon=1.0, domain_size=5), rng=9)
