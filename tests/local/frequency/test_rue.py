"""RUE (dpdist.local.frequency.rue; Fang, Chen & Liu, USENIX Security 2025): its probabilities against the paper's
rule, and what RUE, RLH and RWS share: each estimator's empirical variance against its analytic mean MSE (seeded,
tolerance from the variance of a sample variance) and bad input named.  RLH's and RWS's own constants:
test_rlh.py, test_rws.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError
from dpdist.local.frequency.rue import rue_probabilities


def _paper_mean_mse(p_star: float, q_star: float, d: int) -> float:
    """The paper's mean MSE times n (the authors' ``get_ana_MSE``)."""
    gap = p_star - q_star
    return q_star * (1 - q_star) / gap**2 + (1 - p_star - q_star) / (d * gap)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 4.0, 10.0])
@pytest.mark.parametrize("d", [2, 3, 10, 1000])
def test_rue_probabilities_have_ratio_e_epsilon_and_minimize_the_mean_mse(epsilon, d):
    p, q = rue_probabilities(epsilon, d)
    assert p * (1 - q) / ((1 - p) * q) == pytest.approx(math.exp(epsilon), rel=1e-12)
    best = _paper_mean_mse(p, q, d)
    # any other unary encoding at ratio e^eps (p moved either way along the curve) has a larger mean MSE
    e = math.exp(epsilon)
    for factor in (0.9, 0.99, 1.01, 1.1):
        other_p = min(p * factor, 0.999)
        other_q = other_p / (other_p + e * (1 - other_p))
        assert _paper_mean_mse(other_p, other_q, d) >= best * (1 - 1e-12)


def test_rue_is_sue_at_two_items_and_tends_to_oue():
    sue = local.make("sue", epsilon=1.5, domain_size=2).support_probabilities()
    assert local.make("rue", epsilon=1.5, domain_size=2).support_probabilities() == pytest.approx(sue, abs=1e-9)
    oue = local.make("oue", epsilon=1.5, domain_size=100_000).support_probabilities()
    assert local.make("rue", epsilon=1.5, domain_size=100_000).support_probabilities() == pytest.approx(oue, abs=1e-3)


def _empirical_against_analytic(name, params, n, repeats, seed):
    protocol = local.make(name, **params)
    d = protocol.domain_size
    rng = np.random.default_rng(seed)
    frequencies = rng.dirichlet(np.ones(d))
    values = rng.choice(d, size=n, p=frequencies)
    truth = np.bincount(values, minlength=d) / n
    estimates = np.array([protocol.estimate(protocol.simulate(values, rng)).frequencies for _ in range(repeats)])
    empirical = estimates.var(axis=0, ddof=1)
    analytic = protocol.variance(n, truth)
    # a sample variance of `repeats` near-normal estimates has sd sigma^2 sqrt(2/(repeats-1)); the mean over
    # items of correlated ones has at most the mean of those sds (Minkowski)
    standard_error = float(np.mean(analytic) * math.sqrt(2.0 / (repeats - 1)))
    bias = np.abs(estimates.mean(axis=0) - truth).max()
    return float(empirical.mean()), float(analytic.mean()), standard_error, bias, float(np.sqrt(analytic.max() / repeats))


CASES = [
    ("rue", {"epsilon": 1.0, "domain_size": 12}),
    ("rlh", {"epsilon": 2.0, "domain_size": 12}),
    ("rws", {"epsilon": 1.0, "domain_size": 12}),  # m = 13
    ("rws", {"epsilon": 0.5, "domain_size": 11}),  # prime: the paper's protocol
]


# 10,000 repeats: a variance formula off by 4.2 % or more is refused (3 and 4 standard errors, computed at the
# repeats); the first 500 of them alone (19 %) are no check the whole 10,000 leave out
@pytest.mark.parametrize("name, params", CASES)
@pytest.mark.slow  # a variance from repeated estimates
def test_empirical_variance_matches_the_analytic_mean_mse(name, params):
    empirical, analytic, standard_error, bias, bias_error = _empirical_against_analytic(name, params, 2000, 10_000, 50)
    assert abs(empirical - analytic) <= 3 * standard_error, (empirical, analytic, standard_error)
    assert bias <= 4 * bias_error, (bias, bias_error)  # max over 12 items of |mean error| / its sd


def test_the_mean_mse_is_the_papers_formula():
    for name, params in CASES:
        protocol = local.make(name, **params)
        d = protocol.domain_size
        p_star, q_star = protocol.support_probabilities()
        mean = float(np.mean(protocol.variance(1, np.full(d, 1.0 / d))))
        assert mean == pytest.approx(_paper_mean_mse(p_star, q_star, d), rel=1e-12)


@pytest.mark.parametrize(
    "name, params, error, words",
    [
        ("rue", {"epsilon": 0.0, "domain_size": 4}, InvalidPrivacyParameterError, ["epsilon", "0.0"]),
        ("rws", {"epsilon": 1.0, "domain_size": 1}, InvalidParameterError, ["domain_size", "1"]),
        ("rws", {"epsilon": 1.0, "domain_size": 2**31}, InvalidParameterError, ["domain_size", str(2**31)]),
        ("rlh", {"epsilon": 1.0, "domain_size": 4, "hash_range": 3}, InvalidParameterError, ["hash_range"]),
        ("rlh", {"epsilon": 1.0, "domain_size": 9, "hash_prime": 7}, InvalidParameterError, ["domain_size", "9", "7"]),
    ],
)
def test_bad_input_names_the_argument_the_value_and_the_rule(name, params, error, words):
    with pytest.raises(error) as raised:
        local.make(name, **params)
    for word in words:
        assert word in str(raised.value)
