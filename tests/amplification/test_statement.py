"""A relayed campaign's statement (dpdist.amplification._statement): the central guarantee counted in reports."""

from __future__ import annotations

import math

import pytest

from dpdist import local, privacy
from dpdist._guarantee import with_assumptions
from dpdist.amplification._statement import ASSUMPTIONS, RELAY_TRACES, Admission, relayed_assumptions, relayed_statement
from shuffle_support import exact_device_delta

PROTOCOL = local.make("grr", epsilon=2.0, domain_size=100)


def test_the_central_guarantee_is_stated_at_the_batch_minus_colluding_devices_times_their_tokens():
    statement = relayed_statement(PROTOCOL, 10, 40, 1e-8, Admission("https://issuer", True, 2, 3))
    assert statement["admission"] == {"issuer": "https://issuer", "issuer_independent": True, "colluding": 2,
                                      "tokens_each": 3, "colluding_reports": 6}
    assert statement["central"]["n"] == 4
    assert statement["central"]["epsilon"] == pytest.approx(privacy.shuffled(PROTOCOL, n=4, delta=1e-8).epsilon)


@pytest.mark.parametrize(("smallest", "colluding", "tokens_each", "reports"), [(100, 1, 99, 99), (10, 3, 3, 9), (6, 2, 3, 6)])
def test_a_statement_is_refused_when_the_colluding_reports_leave_fewer_than_two_honest_ones(smallest, colluding, tokens_each,
                                                                                            reports):
    """The issue's example: 1 credential of 99 tokens in a batch of 100 (GRR, eps0 = 2, K = 100) stated (1.156, 1e-8)."""
    central = relayed_statement(PROTOCOL, smallest, smallest, 1e-8, Admission("https://issuer", True, colluding, tokens_each))["central"]
    assert "epsilon" not in central and central["code"] == "colluding_reports_fill_batch"
    assert (f"{colluding} colluding device(s) x {tokens_each} tokens each = {reports} reports" in central["reason"]
            and f"batch of {smallest}" in central["reason"])


def test_an_identity_without_the_issuers_tokens_each_states_nothing_beyond_colluding_zero():
    """A campaign created before identities carried ``tokens_each``: its colluding devices' reports are not bounded."""
    unknown = relayed_statement(PROTOCOL, 10, 10, 1e-8, Admission("https://issuer", True, 1, None))["central"]
    assert "epsilon" not in unknown and unknown["code"] == "tokens_each_unknown"
    none_colluding = relayed_statement(PROTOCOL, 10, 10, 1e-8, Admission("https://issuer", True, 0, None))
    assert none_colluding["central"]["n"] == 10 and none_colluding["admission"]["colluding_reports"] == 0


def test_a_devices_reports_are_bounded_by_group_privacy_and_the_report_target_meets_it():
    from dpdist.amplification._statement import device_bound, report_target

    assert device_bound(0.5, 1e-8, 1) == (0.5, 1e-8)
    epsilon, delta = device_bound(0.1, 1e-9, 3)
    assert epsilon == pytest.approx(0.3) and delta == pytest.approx(1e-9 * (1 + math.exp(0.1) + math.exp(0.2)))
    one, one_delta = report_target(1.0, 1e-8, 10)
    assert device_bound(one, one_delta, 10) == pytest.approx((1.0, 1e-8))


def test_the_central_guarantee_says_per_report_and_states_a_device_that_spends_all_its_tokens():
    """GRR eps0 = 4, d = 8, a smallest batch of 1000, tokens_each 10: the campaign stated (2.143, 1e-8)
    'replace one record', but one device's 10 reports of its value had delta 0.67 at that epsilon (2 reports: 3.1e-4),
    and 1.2e-6 even at 21.4.  Now the statement says 'per report' and states the device's own bound, which holds."""
    grr = local.make("grr", epsilon=4.0, domain_size=8)
    for tokens_each in (2, 10):
        statement = relayed_statement(grr, 1000, 5000, 1e-8, Admission("https://issuer", True, 0, tokens_each))
        central, device = statement["central"], statement["central"]["per_device"]
        assert ", per report; assuming: (1) relay: " in central["describe"]
        assert any(a.startswith("per report") for a in statement["assumptions"])
        assert exact_device_delta(4.0, 8, 1000, tokens_each, central["epsilon"]) > 1e-8  # per report is not per device
        assert device["tokens_each"] == tokens_each and device["delta"] <= 1e-8
        assert exact_device_delta(4.0, 8, 1000, tokens_each, device["epsilon"]) <= device["delta"]
        assert device["epsilon"] <= tokens_each * 4.0
    assert device["epsilon"] > 21.4  # at 21.4 the exact delta of 10 reports is 1.2e-6
    one = relayed_statement(grr, 1000, 1000, 1e-8, Admission("https://issuer", True, 0, 1))["central"]
    assert (one["per_device"]["epsilon"], one["per_device"]["delta"]) == (one["epsilon"], one["delta"])
    assert relayed_statement(grr, 1000, 1000, 1e-8, Admission("https://issuer", True, 0, None))["central"]["per_device"] is None


def test_the_central_guarantees_describe_ends_with_the_relay_assumptions_it_rests_on():
    """A reader of the central guarantee's one line alone learns it holds only if the relay does not collude (and the
    rest of the campaign's assumptions), and not that the relay forwards the reports devices sealed: each token is
    bound to its report, so a report the relay drops costs data, not privacy; the local guarantee, which holds against
    the collector whatever the relay does, names none."""
    admission = Admission("https://issuer", True, 0, 2)
    statement = relayed_statement(PROTOCOL, 1000, 100, 1e-8, admission)  # (at 100: 2, the local epsilon, no assumption)
    central, device = statement["central"], statement["central"]["per_device"]
    assert statement["assumptions"] == list(relayed_assumptions(admission, 1000))
    line = privacy.PrivacyGuarantee(central["epsilon"], central["delta"], "replace", "central").describe()
    assert central["describe"] == with_assumptions(f"{line}, per report", statement["assumptions"])
    assert "forwards the reports" not in central["describe"] and "(data, not privacy)" in central["describe"]
    assert "; assuming: (1) relay: does not collude with the collector" in central["describe"]
    assert device["describe"].endswith(with_assumptions("", device["assumptions"]))  # (none: its local reports composed)
    assert "assuming" not in statement["local"]["describe"]


def test_the_per_device_line_is_not_per_report_and_a_devices_local_reports_rest_on_no_party():
    """The per-device line drops the "per report" assumption (it is per device); when it is the device's
    own reports composed locally it holds whatever the relay, issuer or collector do, and says so instead of listing
    their assumptions; the devices' assumption states the campaign's colluding, tokens_each and n."""
    grr = local.make("grr", epsilon=4.0, domain_size=8)  # the threat model page: 2 reports in a batch of 1000 get (4.81, 1e-8)
    group = relayed_statement(grr, 1000, 1000, 1e-8, Admission("https://issuer", True, 1, 2))
    central, device = group["central"], group["central"]["per_device"]
    assert device["how"].startswith("group privacy") and device["assumptions"] == group["assumptions"][:-1]
    assert group["assumptions"][-1].startswith("per report:") and "per report:" not in device["describe"]
    assert device["describe"].endswith(with_assumptions("", device["assumptions"]))
    devices = group["assumptions"][2]
    assert "at most 1 device(s) (`colluding`" in devices and "at most 2 token(s) (`tokens_each`" in devices
    assert "at most 2 (`colluding_reports` = 1 x 2)" in devices and f"n = {central['n']} honest reports" in devices
    assert central["n"] == 998 and f"(3) {devices}; (4) collector" in central["describe"]
    assert "(up to 2 per credential, `tokens_each`)" in group["assumptions"][-1]
    local_only = relayed_statement(PROTOCOL, 4, 4, 1e-8, Admission("https://issuer", True, 1, 2))["central"]["per_device"]
    assert (local_only["epsilon"], local_only["delta"], local_only["assumptions"]) == (4.0, 0.0, [])
    assert local_only["describe"] == ("4-differential privacy (central, replace one record), per device sending 2 "
                                      "report(s) into one batch: its 2 local report(s) composed, which holds whatever "
                                      "the relay, the issuer, the collector or other devices do")
    before = relayed_statement(PROTOCOL, None, 0, 1e-8, Admission("https://issuer", True, 1, 2))
    assert before["central"] is None and "n = " not in before["assumptions"][2]
    assert [a.split(":")[0] for a in before["assumptions"]] == [a.split(":")[0] for a in ASSUMPTIONS]
    unknown = relayed_statement(PROTOCOL, 10, 10, 1e-8, Admission("https://issuer", True, 1, None))["assumptions"][2]
    assert "not stated by this campaign's identity" in unknown and "not bounded" in unknown
    traced = relayed_statement(grr, 1000, 1000, 1e-8, Admission("https://issuer", True, 1, 2), traces=True)
    assert traced["assumptions"][3] == f"{ASSUMPTIONS[3]}, and {RELAY_TRACES}"
    assert f"(4) {ASSUMPTIONS[3]}, and {RELAY_TRACES}; (5)" in traced["central"]["describe"]
    assert [a for a in traced["assumptions"] if "traces" not in a] == group["assumptions"][:3] + group["assumptions"][4:]


def test_a_ceiling_of_10000_tokens_states_the_local_composition_without_overflow():
    """An issuer key of 10,000 tokens per credential (tests/cli/test_relay.py's): the group bound's sum of e^(j eps)
    overflows a double, and the service answered 500; the device's bound is then its local reports composed."""
    device = relayed_statement(PROTOCOL, 50, 50, 1e-8, Admission("https://issuer", True, 0, 10_000))["central"]["per_device"]
    assert (device["epsilon"], device["delta"]) == (20_000.0, 0.0) and "local report(s) composed" in device["how"]


def test_a_central_line_not_amplified_is_the_reports_local_guarantee_resting_on_no_party():
    """Batches of 4 to 20 with 2 colluding reports gave (4, 1e-8) per report "assuming" six parties'
    behaviour; the amplified epsilon is the report's own epsilon0 there, which holds with delta 0 whatever they do:
    stated as the per-device line's local case is (4101f9b3)."""
    grr = local.make("grr", epsilon=4.0, domain_size=8)
    for batch in (4, 20):
        central = relayed_statement(grr, batch, 50, 1e-8, Admission("https://issuer", True, 1, 2))["central"]
        assert (central["epsilon"], central["delta"], central["assumptions"]) == (4.0, 0.0, [])
        assert central["describe"] == ("4-differential privacy (central, replace one record), per report: its local "
                                       "report, which holds whatever the relay, the issuer, the collector or other "
                                       "devices do")
        assert central["per_device"]["assumptions"] == []
    amplified = relayed_statement(grr, 1000, 1000, 1e-8, Admission("https://issuer", True, 1, 2))
    assert amplified["central"]["epsilon"] < 4.0
    assert amplified["central"]["assumptions"] == amplified["assumptions"]
    assert amplified["central"]["describe"].endswith(with_assumptions("", amplified["assumptions"]))
