"""``local.make("auto", ...)``: GRR below d = 3 e^eps + 2, OUE above (Wang et al. 2017 sec. 4.4)."""

import math

import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError
from dpdist.local.frequency.auto import choose_protocol


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 2.0, 4.0])
def test_the_choice_switches_at_three_e_epsilon_plus_two(epsilon):
    boundary = 3 * math.exp(epsilon) + 2
    below, above = math.ceil(boundary) - 1, math.ceil(boundary)
    assert choose_protocol(epsilon=epsilon, domain_size=max(2, below)) == "grr"
    assert choose_protocol(epsilon=epsilon, domain_size=above) == "oue"


def test_the_choice_is_the_lower_variance_protocol():
    for epsilon, d in [(1.0, 5), (1.0, 50), (3.0, 40), (3.0, 100)]:
        grr = local.make("grr", epsilon=epsilon, domain_size=d).variance(1000)[0]
        oue = local.make("oue", epsilon=epsilon, domain_size=d).variance(1000)[0]
        chosen = local.make("auto", epsilon=epsilon, domain_size=d)
        assert chosen.variance(1000)[0] == pytest.approx(min(grr, oue), rel=1e-6)


def test_bad_parameters_name_the_argument():
    with pytest.raises(InvalidPrivacyParameterError, match="epsilon"):
        choose_protocol(epsilon=-1.0, domain_size=5)
    with pytest.raises(InvalidParameterError, match="domain_size"):
        choose_protocol(epsilon=1.0, domain_size=1)
