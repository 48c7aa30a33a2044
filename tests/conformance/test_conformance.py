"""The conformance suite: every registered local protocol, every check its tags call for.

The checks are dpdist's public conformance kit, :mod:`dpdist.testing`; this
module only feeds it the small instances of the ``examples_*.py`` files.
Tolerances: statistical checks are seeded (deterministic) and use the level
``ALPHA = 1e-6`` per check with Bonferroni corrections over items/coordinates,
so a correct implementation fails for a given seed with probability ~1e-6, while
the broken variants in ``tests/testing/test_checks.py`` fail by many orders of
magnitude.
"""

from __future__ import annotations

import pytest

import dpdist.local as local
from dpdist.testing import check_id, checks_for, parametrize_with_checks
from dpdist.testing._checks import check_unbiased_with_the_analytic_variance
from dpdist.testing._statistics import assert_simulate_matches_privatize, assert_unbiased_with_analytic_variance

from ._examples import CASES, EXAMPLES, lightest_cases, make
from .conftest import SHRUNK


def test_every_protocol_has_examples():
    missing = [name for name in local.available() if not EXAMPLES.get(name)]
    assert not missing, f"protocols without conformance examples: {missing}"


@parametrize_with_checks([make(case) for case in CASES])
def test_protocol_conforms(protocol, check):
    check(protocol)


def _lightest_examples() -> list:
    return [
        pytest.param(protocol, check, id=check_id(protocol, check))
        for protocol in (make(case) for case in lightest_cases())
        for check in checks_for(protocol)
        if check.__name__ in SHRUNK
    ]


@pytest.mark.parametrize("protocol, check", _lightest_examples())
def test_repeated_estimates_at_a_quarter_of_the_repeats(protocol, check):
    """The fast loop's bias/variance and simulate-vs-privatize checks: a quarter of the kit's repeats.

    The kit's own checks (full size, every example) run in the full suite (``conftest.py``); here the same
    assertions run on the lightest example of each protocol with a quarter of the repeats, their bounds computed at
    that size (the mean within ``z sqrt(Var / R)`` and the variance ratio within chi-square(R - 1) quantiles, both
    Bonferroni-corrected at ALPHA; the two-sample tests at ALPHA over the coordinates).
    """
    if check is check_unbiased_with_the_analytic_variance:
        repeats = (2000 if protocol.tags.exact_simulate else 400) // 4  # the kit's defaults, a quarter
        assert_unbiased_with_analytic_variance(protocol, rng=5, repeats=repeats)
    else:
        assert_simulate_matches_privatize(protocol, rng=9, repeats=100)
