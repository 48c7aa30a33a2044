"""SQUAREM in the shared EM: same fixed point as plain EM/EMS, monotone likelihood, fewer steps."""

import numpy as np
import pytest

from dpdist import local
from dpdist.local._em import expectation_maximization


@pytest.mark.parametrize("name, params, method, tolerance", [
    ("sw", {"epsilon": 1.0, "bounds": (0.0, 1.0), "bins": 128}, "ems", 1e-9),
    ("sw", {"epsilon": 0.5, "bounds": (0.0, 1.0), "bins": 64}, "ems", 1e-9),
    ("gw", {"epsilon": 2.0, "bounds": (0.0, 1.0), "bins": 64}, "ems", 1e-9),
    # plain EM needs ~70,000 steps at this tolerance (SQUAREM ~1,000)
    pytest.param("sw", {"epsilon": 1.0, "bounds": (0.0, 1.0), "bins": 128}, "em", 1e-7, marks=pytest.mark.slow),
    pytest.param("gw", {"epsilon": 2.0, "bounds": (0.0, 1.0), "bins": 64}, "em", 1e-7, marks=pytest.mark.slow),
])
def test_accelerated_and_plain_em_converge_to_the_same_estimate(name, params, method, tolerance):
    """EMS is a contraction with one fixed point: the histograms agree.  EM's likelihood is concave
    in the output law M x but flat along the null space of M (the input grid is finer than the
    channel resolves), so for EM the output laws and the likelihoods agree."""
    protocol = local.make(name, **params)
    values = np.random.default_rng(0).beta(5, 2, size=20_000)
    aggregator = protocol.simulate(values, rng=1)
    tight = {"method": method, "tolerance": tolerance, "max_iterations": 400_000}
    plain = protocol.estimate(aggregator, accelerate=False, **tight)
    fast = protocol.estimate(aggregator, accelerate=True, **tight)
    assert plain.details["converged"] and fast.details["converged"]
    assert fast.details["iterations"] < plain.details["iterations"]
    if method == "ems":
        np.testing.assert_allclose(fast.probabilities, plain.probabilities, atol=1e-6)
    else:
        # the accelerated answer is a fixed point of plain EM within the stopping rule:
        # one plain step from it changes the likelihood by less than the tolerance
        operator = protocol._transition_operator()
        restart = expectation_maximization(
            aggregator.statistic.astype(float), operator, smoothing=False, tolerance=tolerance,
            max_iterations=1, start=fast.probabilities,
        )
        assert restart.converged
        np.testing.assert_allclose(
            operator.matvec(fast.probabilities), operator.matvec(plain.probabilities), atol=5e-5
        )
        # the paper's stopping rule (a step changes L by < tolerance) does not bound the distance to
        # the maximum, so neither answer need be the higher one (which one is depends on the BLAS
        # kernel's rounding).  The duality gap max_i g_i - sum_j n_j, g = M^T (n / Mx), does bound
        # it (L is concave): L(x) <= max L <= L(y) + gap(y), so the two likelihoods lie within the
        # larger certified gap of each other.
        counts = aggregator.statistic.astype(float)
        gaps = [operator.rmatvec(counts / operator.matvec(answer.probabilities)).max() - counts.sum()
                for answer in (fast, plain)]
        likelihoods = [answer.details["loglikelihood"][-1] for answer in (fast, plain)]
        assert abs(likelihoods[0] - likelihoods[1]) <= max(gaps)


# EM on 64 bins to a 1e-9 tolerance (0.35 CPU-s): the whole suite; the fast loop keeps the same accelerated EM
# (test_accelerated_and_plain_em_converge_to_the_same_estimate, test_the_rows_of_a_bootstrap_are_fitted_together_to_the_same_numbers)
@pytest.mark.slow
def test_accelerated_em_is_monotone_in_the_likelihood():
    protocol = local.make("sw", epsilon=0.5, bounds=(0.0, 1.0), bins=64)
    aggregator = protocol.simulate(np.random.default_rng(2).random(10_000), rng=3)
    result = expectation_maximization(
        aggregator.statistic.astype(float), protocol._transition_operator(), smoothing=False,
        tolerance=1e-9, max_iterations=100_000, accelerate=True,
    )
    # the trace lists the iterates the algorithm moved to: they never lose likelihood
    assert result.converged and result.extrapolations_accepted > 0
    trace = result.loglikelihood
    assert np.all(np.diff(trace) >= -1e-9 * abs(trace[-1]))  # float rounding of a sum of logs
    assert trace.size < result.iterations + 1  # rejected stabilization steps are computed, not moved to


def test_the_accelerate_option_is_checked():
    from dpdist.errors import InvalidParameterError

    protocol = local.make("sw", epsilon=1.0, bounds=(0.0, 1.0), bins=16)
    aggregator = protocol.simulate(np.linspace(0, 1, 100), rng=0)
    with pytest.raises(InvalidParameterError, match="'accelerate'"):
        protocol.estimate(aggregator, accelerate="yes")


@pytest.mark.parametrize("name, params, stopping, tight", [
    ("hr", {"epsilon": 1.0, "domain_size": 5}, "gap", True),
    ("hr", {"epsilon": 2.0, "domain_size": 64}, "gap", False),  # three blocks of 32
    ("hr", {"epsilon": 1.0, "domain_size": 40}, "gap", False),  # a block of 64: the butterflies' fallback
    ("sw", {"epsilon": 1.0, "bounds": (0.0, 1.0), "bins": 32}, "change", True),  # one banded block spanning the matrix
    ("sw", {"epsilon": 4.0, "bounds": (0.0, 1.0), "bins": 256}, "change", False),  # a band of two blocks
])
def test_the_rows_of_a_bootstrap_are_fitted_together_to_the_same_numbers(name, params, stopping, tight):
    """expectation_maximization_rows (the bootstrap refits of IBU on HR's channel and of SW's plain EM) is one run
    per row, byte for byte: every row's own SQUAREM path and stopping step, rows with zero counts, the iteration
    cap, plain EM too."""
    from dpdist.local._em import expectation_maximization_rows

    protocol = local.make(name, **params)
    operator = protocol.channel_operator() if name == "hr" else protocol._transition_operator()
    inputs = operator.shape[1]
    rng = np.random.default_rng(inputs)
    truth = rng.dirichlet(np.ones(inputs))
    truth[0] = 0.0
    law = operator.matvec(truth / truth.sum())
    counts = rng.multinomial(2000, law / law.sum(), size=12)
    counts[3] = 0
    counts[3, 0] = 7
    start = None if stopping == "change" else 0.5 * truth / truth.sum() + 0.5 / inputs
    runs = [(True, 1.0, 10_000), (True, 1e-9, 7), (False, 1e-3, 20)] + ([(True, 1e-6, 10_000)] if tight else [])
    for accelerate, tolerance, cap in runs:  # the tight tolerance's many SQUAREM cycles where they are cheap
        rows = expectation_maximization_rows(counts, operator, tolerance=tolerance, max_iterations=cap, start=start,
                                             accelerate=accelerate, stopping=stopping)
        alone = [expectation_maximization(row.astype(float), operator, smoothing=False, tolerance=tolerance,
                                          max_iterations=cap, start=start, accelerate=accelerate,
                                          stopping=stopping).probabilities for row in counts]
        assert rows.tobytes() == np.array(alone).tobytes(), (accelerate, tolerance, cap)
