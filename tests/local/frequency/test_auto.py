"""``local.make("auto", ...)``: the lowest-variance frequency oracle within deployment limits."""

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError
from dpdist.local.frequency.auto import CANDIDATES, TIE, choose_protocol, compare_protocols, lower_variance_oracle

SETTINGS = [(eps, d) for eps in (0.5, 1.0, 2.0, 4.0, 8.0) for d in (2, 5, 16, 64, 256, 1024, 4096)]


def _mean_variance(name, epsilon, d, n=10**6):
    protocol = local.make(name, epsilon=epsilon, domain_size=d)
    variance = float(np.mean(protocol.variance(n, np.full(d, 1.0 / d))))  # the mean over items for any data
    if name == "flh":
        variance += 1.0 / (protocol.hash_count * (protocol.hash_range - 1))
    return variance


@pytest.mark.parametrize("epsilon, d", SETTINGS)
def test_the_choice_is_within_the_tie_of_the_lowest_variance_candidate(epsilon, d):
    chosen = local.make("auto", epsilon=epsilon, domain_size=d)
    best = min(_mean_variance(name, epsilon, d) for name in CANDIDATES)
    assert _mean_variance(chosen.name, epsilon, d) <= best * (1 + TIE)
    assert chosen.auto_choice["chosen"] == chosen.name


def test_grr_is_chosen_for_small_domains_and_a_cheap_oracle_for_large_ones():
    assert local.make("auto", epsilon=1.0, domain_size=4).name == "grr"
    assert local.make("auto", epsilon=8.0, domain_size=1024).name == "grr"  # d < 3e^8 + 2
    large = local.make("auto", epsilon=1.0, domain_size=4096)
    oue_server_ops = 4096
    row = next(r for r in large.auto_choice["candidates"] if r["protocol"] == large.name)
    assert row["server_ops"] < oue_server_ops  # among the tied d-bit oracles, the cheapest collector


def test_the_two_way_rule_of_binning_is_unchanged():
    for epsilon in (0.5, 1.0, 2.0, 4.0):
        boundary = 3 * math.exp(epsilon) + 2
        assert lower_variance_oracle(epsilon, max(2, math.ceil(boundary) - 1)) == "grr"
        assert lower_variance_oracle(epsilon, math.ceil(boundary)) == "oue"


def test_a_report_size_limit_excludes_the_unary_oracles_and_says_so():
    protocol = local.make("auto", epsilon=1.0, domain_size=1024, max_report_bits=64)
    rows = {row["protocol"]: row for row in protocol.auto_choice["candidates"]}
    assert protocol.name == "rws"  # 64-bit reports at SS's variance (within the tie): Fang et al.'s point
    assert rows[protocol.name]["report_bits"] <= 64
    over = [row for row in rows.values() if row.get("report_bits", 0) > 64]
    assert len(over) >= 6  # the unary oracles, SS, the 128-bit local hashing
    for row in over:
        assert not row["eligible"] and "report_bits" in row["reason"]
    assert "excluded by the limits" in protocol.auto_choice["reason"]
    assert protocol.auto_choice["limits"] == {"max_report_bits": 64}


def test_server_and_client_limits_are_respected():
    protocol = local.make("auto", epsilon=1.0, domain_size=4096, max_server_ops=10, max_client_ops=1)
    row = next(r for r in protocol.auto_choice["candidates"] if r["protocol"] == protocol.name)
    assert row["server_ops"] <= 10 and row["client_ops"] <= 1


def test_the_measured_report_size_is_what_privatize_sends():
    for row in compare_protocols(epsilon=1.0, domain_size=300):
        reports = local.make(row["protocol"], epsilon=1.0, domain_size=300).privatize(np.arange(10), rng=0)
        assert row["report_bits"] == reports.nbytes * 8 // 10


def test_the_explanation_reaches_every_estimate():
    protocol = local.make("auto", epsilon=1.0, labels=["a", "b", "c"])
    assert protocol.domain_size == 3
    estimate = protocol.estimate(protocol.privatize(["a"] * 60 + ["b"] * 30 + ["c"] * 10, rng=1))
    choice = estimate.details["auto_choice"]
    assert choice["chosen"] == protocol.name and len(choice["candidates"]) == len(CANDIDATES)
    assert estimate.by_label()["a"] == pytest.approx(estimate.frequencies[0])


def test_auto_through_a_config_rebuilds_the_chosen_protocol():
    protocol = local.from_config({"protocol": "auto", "epsilon": 2.0, "domain_size": 64})
    assert protocol.config()["protocol"] == protocol.name == choose_protocol(epsilon=2.0, domain_size=64)


def test_no_candidate_within_the_limits_is_a_clear_error():
    with pytest.raises(InvalidParameterError, match="no frequency oracle within the limits"):
        local.make("auto", epsilon=1.0, domain_size=10**5, max_report_bits=8)


def test_bad_parameters_name_the_argument():
    with pytest.raises(InvalidPrivacyParameterError, match="epsilon"):
        choose_protocol(epsilon=-1.0, domain_size=5)
    with pytest.raises(InvalidParameterError, match="domain_size"):
        choose_protocol(epsilon=1.0, domain_size=1)
    with pytest.raises(InvalidParameterError, match="max_report_bits"):
        local.make("auto", epsilon=1.0, domain_size=5, max_report_bits=0)
    with pytest.raises(InvalidParameterError, match="hash_range"):
        local.make("auto", epsilon=1.0, domain_size=5, hash_range=4)
