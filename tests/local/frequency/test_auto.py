"""``local.make("auto", ...)`` (dpdist.local.frequency.auto): the lowest-variance frequency oracle within deployment
limits; with ``ocms`` and ``max_frequency``, the worst-case variance over items of frequency at most f* is ranked."""

import math

import numpy as np
import pytest

from dpdist import local
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError
from dpdist.local.frequency.auto import CANDIDATES, TIE, choose_protocol, compare_protocols, lower_variance_oracle
from dpdist.local.frequency.flh import FLH
from dpdist.local.frequency.hr import HR

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


N = 10**6


def _worst_case(name, epsilon, d, f_star):
    """Worst-case variance over items with frequency in [0, f*], from each oracle's own law."""
    params = {"epsilon": epsilon, "domain_size": d}
    if name == "ocms":
        params["max_frequency"] = f_star
    protocol = local.make(name, **params)
    if isinstance(protocol, HR):  # its variance grows with its block's mass: the rest of the mass shares the block
        frequencies = np.r_[f_star, 1.0 - f_star, np.zeros(d - 2)]
        return max(float(np.mean(protocol.variance(N))), float(protocol.variance(N, frequencies)[0]))
    p, q = protocol.support_probabilities()  # pure oracles: linear in the item's own frequency
    worst = max(q * (1 - q), f_star * p * (1 - p) + (1 - f_star) * q * (1 - q)) / (N * (p - q) ** 2)
    if isinstance(protocol, FLH):
        worst += 1.0 / (protocol.hash_count * (protocol.hash_range - 1))
    return worst


@pytest.mark.parametrize("epsilon, d, f_star", [(eps, d, f) for eps in (0.5, 1.0, 2.0, 4.0, 8.0) for d in (2, 16, 256, 4096)
                                                for f in (1.0, 0.5, 0.1) if f * d >= 1])  # f* < 1/d: refused
def test_the_choice_is_within_the_tie_of_the_lowest_worst_case(epsilon, d, f_star):
    chosen = local.make("auto", epsilon=epsilon, domain_size=d, max_frequency=f_star)
    best = min(_worst_case(name, epsilon, d, f_star) for name in CANDIDATES)
    assert _worst_case(chosen.name, epsilon, d, f_star) <= best * (1 + TIE)
    assert "worst-case variance (frequencies <= " in chosen.auto_choice["reason"]


def test_ocms_is_chosen_where_its_worst_case_is_lowest():
    protocol = local.make("auto", epsilon=2.0, domain_size=1024, max_frequency=0.5)
    assert protocol.name == "ocms" and protocol.max_frequency == 0.5
    rows = {row["protocol"]: row for row in protocol.auto_choice["candidates"]}
    assert rows["ocms"]["variance"] == pytest.approx(protocol.worst_case_variance(N), rel=1e-12)
    for name, row in rows.items():  # lower only for an oracle within the tie with a larger report (SUE, d bits)
        if name != "ocms" and row["variance"] <= rows["ocms"]["variance"]:
            assert rows["ocms"]["variance"] <= row["variance"] * (1 + TIE) and row["report_bits"] > 128


def test_with_no_prior_bound_sue_leads_and_a_report_size_limit_leaves_pgr():
    # f* = 1: symmetric unary encoding reaches the continuous optimum e^(eps/2)/(e^(eps/2)-1)^2 (Pan, Table 1, s-RP)
    # with d bits; PGR's 16-bit point and OCMS's 128-bit report are within 6 % of it, PGR the smaller
    free = local.make("auto", epsilon=1.0, domain_size=1024, max_frequency=1.0)
    assert free.name == "sue"
    small = local.make("auto", epsilon=1.0, domain_size=1024, max_frequency=1.0, max_report_bits=128)
    assert small.name == "pgr"
    rows = {row["protocol"]: row for row in small.auto_choice["candidates"]}
    assert rows["pgr"]["report_bits"] == 16 and rows["ocms"]["report_bits"] == 128 and rows["sue"]["report_bits"] == 1024
    assert rows["pgr"]["variance"] < 1.06 * rows["sue"]["variance"] and rows["ocms"]["variance"] < 1.06 * rows["sue"]["variance"]


def test_without_max_frequency_ocms_is_ranked_for_the_l2_loss_and_is_not_chosen_over_olh():
    # the mean ranked without max_frequency is the mean over items for any data: the l2 loss / d (Pan, eq. 21)
    for epsilon, d in [(1.0, 4096), (2.0, 1024), (4.0, 16), (0.5, 8)]:
        rows = {row["protocol"]: row for row in compare_protocols(epsilon=epsilon, domain_size=d)}
        l2 = local.make("ocms", epsilon=epsilon, domain_size=d, objective="l2")
        assert rows["ocms"]["variance"] == pytest.approx(l2.l2_loss(N) / d, rel=1e-12)
        assert rows["ocms"]["variance"] <= rows["olh"]["variance"] * (1 + 1e-9)  # its width is the l2-optimal integer
        assert rows["ocms"]["report_bits"] == rows["olh"]["report_bits"] == 128
        if d >= 1024:  # d >> e^eps: l-OCMS+RR's width tends to OLH's
            assert rows["ocms"]["variance"] == pytest.approx(rows["olh"]["variance"], rel=1e-3)
        assert local.make("auto", epsilon=epsilon, domain_size=d).name != "ocms"


@pytest.mark.parametrize("name", ["ocms", "auto"])
@pytest.mark.parametrize("value", [0.0, 1e-9, 0.0624])
def test_a_max_frequency_below_one_over_d_is_refused_with_the_allowed_range(name, value):
    """The d frequencies sum to 1, so a bound f* < 1/d holds for no data set (f* = 1e-9 at epsilon = 30 took the widest
    sketch, m = 2^20): refused naming max_frequency, the value and [1/d, 1]; 1/d itself is allowed."""
    with pytest.raises(InvalidParameterError) as refused:
        local.make(name, epsilon=30.0, domain_size=16, max_frequency=value)
    message = str(refused.value)
    assert "'max_frequency'" in message and repr(float(value)) in message and "[1/d, 1] = [0.0625, 1]" in message
    assert local.make(name, epsilon=30.0, domain_size=16, max_frequency=1 / 16) is not None
    if name == "ocms":
        with pytest.raises(InvalidParameterError, match="'max_frequency'.*worst_case_variance"):
            local.make("ocms", epsilon=1.0, domain_size=16).worst_case_variance(1000, max_frequency=value)


@pytest.mark.parametrize("value", [1.5, -0.2, "high"])
def test_a_bad_max_frequency_names_the_argument(value):
    with pytest.raises(InvalidParameterError, match=r"'max_frequency'.*local.make\('auto'\)|local.make\('auto'\).*'max_frequency'"):
        local.make("auto", epsilon=1.0, domain_size=10, max_frequency=value)


def test_the_smallest_report_within_the_variance_tie_is_chosen():
    # SS, RWS and PGR within 1 % of the least variance: PGR's point is 16 bits, RWS's pair index 32, SS's subset d
    protocol = local.make("auto", epsilon=0.5, domain_size=1024)
    rows = {row["protocol"]: row for row in protocol.auto_choice["candidates"]}
    best = min(row["variance"] for row in rows.values())
    assert all(rows[name]["variance"] <= 1.01 * best for name in ("ss", "rws", "pgr"))
    assert protocol.name == "pgr" and rows["pgr"]["report_bits"] == 16 < rows["rws"]["report_bits"] == 32
    assert rows["ss"]["report_bits"] == 1024 and "smallest report (16 bits)" in protocol.auto_choice["reason"]


@pytest.mark.parametrize("d", [16, 128, 1024, 16384])
def test_auto_sends_at_most_32_bits_within_1_01x_of_the_optimum_in_every_setting_of_the_grid(d):
    """docs/reference/benchmarks/frequency-optimum.md's grid: SS or GRR at d = 16, RWS's pair index or PGR's point above."""
    from dpdist.local.frequency.ss import optimal_subset_size, subset_variance

    for epsilon in (0.5, 1.0, 2.0, 4.0):
        protocol = local.make("auto", epsilon=epsilon, domain_size=d)
        optimum = subset_variance(epsilon, d, d, optimal_subset_size(epsilon, d))
        assert protocol.ranked_variance(1) <= 1.01 * optimum, (epsilon, protocol.name)
        assert 8 * protocol.report_format.row_bytes <= 32, (epsilon, protocol.name)
        assert protocol.name in (("ss", "grr") if d == 16 else ("rws", "pgr"))


def test_reports_stay_within_128_kib_unless_the_caller_allows_more():
    from dpdist.local.frequency.auto import DEFAULT_MAX_REPORT_BITS

    # the worst case's best is SUE's d-bit report: 256 KiB a value at d = 2^21
    bounded = local.make("auto", epsilon=1.0, domain_size=2**21, max_frequency=1.0)
    assert bounded.auto_choice["limits"]["max_report_bits"] == DEFAULT_MAX_REPORT_BITS == 2**20
    rows = {row["protocol"]: row for row in bounded.auto_choice["candidates"]}
    assert not rows["sue"]["eligible"] and "report_bits" in rows["sue"]["reason"]
    assert rows[bounded.name]["report_bits"] <= 2**20
    unbounded = local.make("auto", epsilon=1.0, domain_size=2**21, max_frequency=1.0, max_report_bits=None)
    assert unbounded.name == "sue" and "max_report_bits" not in unbounded.auto_choice["limits"]


@pytest.mark.parametrize("name", CANDIDATES)
def test_the_ranked_variance_is_the_mean_and_worst_case_over_the_whole_domain(name):
    # what auto ranks, in closed form, against its definition over arrays of the domain's size
    n = 10**6
    for epsilon, d in [(0.1, 2), (0.5, 3), (1.0, 17), (2.0, 255), (4.0, 256), (8.0, 4096), (1.0, 5000)]:
        params = {"epsilon": epsilon, "domain_size": d, **({"objective": "l2"} if name == "ocms" else {})}
        protocol = local.make(name, **params)
        assert protocol.ranked_variance(n) == pytest.approx(float(np.mean(protocol.variance(n, np.full(d, 1 / d)))),
                                                             rel=1e-12)
        for f_star in sorted({1.0, 0.5, 2.0 / d, 1.0 / d}):
            frequencies = np.zeros(d)
            frequencies[0], frequencies[1] = f_star, 1.0 - f_star
            worst = max(float(np.mean(protocol.variance(n))), float(protocol.variance(n, frequencies)[0]))
            assert protocol.ranked_variance(n, f_star) == pytest.approx(worst, rel=1e-12), (epsilon, d, f_star)


def test_a_domain_of_a_hundred_million_is_chosen_for_in_little_memory():
    # every candidate was built with arrays of the domain's size and one report of each drawn: 23 s and 4.6 GB
    import tracemalloc

    tracemalloc.start()
    try:
        protocol = local.make("auto", epsilon=1.0, domain_size=10**8)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert protocol.name == "rws" and peak < 32 << 20, peak
    rows = {row["protocol"]: row for row in protocol.auto_choice["candidates"]}
    assert rows["sue"]["report_bits"] == 10**8 and not rows["sue"]["eligible"]  # d bits a value, without drawing one


@pytest.mark.parametrize("n", [0, -5, 0.5, True, float("nan"), "10", None])
def test_the_ranked_variance_refuses_a_bad_number_of_reports(n):
    with pytest.raises(InvalidParameterError, match=r"'n' parameter of GRR.ranked_variance must be an int >= 1"):
        local.make("grr", epsilon=1.0, domain_size=64).ranked_variance(n)


@pytest.mark.parametrize("name", ["grr", "hr"])
@pytest.mark.parametrize("f_star", [float("nan"), float("inf"), -0.1, 1.5, 1e-9, "0.5"])
def test_the_ranked_variance_refuses_a_bound_no_data_meets(name, f_star):
    # nan and -0.1 gave the optimistic value at f = 0; 1.5 a larger one
    with pytest.raises(InvalidParameterError, match=r"'max_frequency' parameter of .*ranked_variance must be in \[1/d, 1\]"):
        local.make(name, epsilon=4.0, domain_size=64).ranked_variance(10**6, f_star)


def test_past_the_allocation_limit_no_candidate_estimates_every_item_and_auto_says_so():
    # flh alone was built there and chosen, though its estimate of every item is refused
    with pytest.raises(InvalidParameterError, match=r"has no candidate that estimates every item .* The largest allowed "
                                                    r"domain_size is 268,435,456\. \(flh is built, but .*support_counts_of"):
        local.make("auto", epsilon=1.0, domain_size=2**28 + 1)
    assert local.make("auto", epsilon=1.0, domain_size=2**28).name == "rws"


def test_parameters_no_candidate_takes_are_said_once_not_as_a_limit():
    with pytest.raises(InvalidParameterError) as refused:
        local.make("auto", epsilon=1.0, labels=["a", "b", "c"], domain_size=4)
    message = str(refused.value)
    assert "limits given" not in message and message.count("'labels' parameter") == 1 and len(message) < 300


@pytest.mark.parametrize("d, epsilon", [(128, 4.0), (16, 1.0), (1024, 0.5)])
def test_an_auto_config_ranks_the_candidates_of_today_as_make_does(d, epsilon):
    # a config naming "auto" is a config of reports still to be made: its ss candidate takes today's k, not the k
    # stored configs without subset_size meant
    built = local.from_config({"protocol": "auto", "epsilon": epsilon, "domain_size": d})
    made = local.make("auto", epsilon=epsilon, domain_size=d)
    assert built.config() == made.config()
    assert built.auto_choice["candidates"] == made.auto_choice["candidates"]
