"""The device's privacy ledger, and memo hygiene.

The device, not the collector, owns its budget: a ledger keeps the memos per
collector and config without budgets (a rotated epsilon cannot re-draw them),
charges every report from public quantities only, and refuses what would
overspend the owner's budget.
"""

import json
import math

import numpy as np
import pytest

from dpdist import io, local
from dpdist.errors import IncompatibleStateError, InvalidParameterError, PrivacyBudgetError
from dpdist.local.frequency.longitudinal import MemoizedClient
from dpdist.local.ledger import DEFAULT_BUDGET, NO_CHARGE_ASSUMPTION, PrivacyLedger, _js_number, budget_scope, window_assumption

L_GRR = {"protocol": "l-grr", "epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 8}


def test_a_rotated_budget_cannot_reset_the_memo():
    """The audit's attack: epsilon_1 varied by 1e-12 per round gave 20 fresh permanent responses in 20 rounds."""
    ledger = PrivacyLedger(budget=1000)
    refused = 0
    for round_ in range(20):
        protocol = local.from_config({**L_GRR, "epsilon_1": 1.0 + round_ * 1e-12})
        try:
            ledger.report(protocol, [3], collector="https://collector.example")
        except PrivacyBudgetError as error:
            assert "does not report under the new parameters" in error.reason
            refused += 1
    assert refused == 19
    (stream,) = ledger.to_dict()["streams"].values()
    assert stream["reports"] == 1 and list(stream["memo"]) == ["3"]
    # another collector is another scope: its own memo, charged from the same budget
    ledger.report(local.from_config(L_GRR), [3], collector="https://other.example")
    assert len(ledger.to_dict()["streams"]) == 2


def test_charges_follow_the_history_bound_and_refusals_do_not_depend_on_the_values():
    protocol = local.from_config(L_GRR)

    def sent_before_refusal(values):
        ledger = PrivacyLedger(budget=6.0)
        for index, value in enumerate(values):
            try:
                ledger.report(protocol, [value], now=1000.0 + index)
            except PrivacyBudgetError as error:
                assert error.remaining == pytest.approx(6.0 - protocol.epsilon_over_changes(index))
                assert "budget of 6" in error.reason and "Nothing was sent" in error.reason
                return index, ledger
        return len(values), ledger

    steady, ledger = sent_before_refusal([3] * 10)
    changing, _ = sent_before_refusal([3, 5, 3, 5, 1, 2, 7, 0, 4, 6])
    assert steady == changing and 2 <= steady < 10
    assert ledger.spent(now=2000.0) == pytest.approx(protocol.epsilon_over_changes(steady))
    # a refused run is refused whole: nothing drawn, nothing charged
    before = ledger.to_dict()
    with pytest.raises(PrivacyBudgetError):
        ledger.report(protocol, [1, 2, 3])
    assert ledger.to_dict() == before


def test_memoryless_protocols_compose_sequentially_and_windows_recover():
    grr = local.make("grr", epsilon=1.0, domain_size=4)
    ledger = PrivacyLedger(budget=2.5, window=86400)
    ledger.report(grr, [1, 2], now=0.0)
    assert ledger.spent(now=1.0) == pytest.approx(2.0)
    with pytest.raises(PrivacyBudgetError):
        ledger.report(grr, [1], now=10.0)
    ledger.report(grr, [1, 2], now=86401.0)  # the first day's charges left the window
    assert ledger.remaining(now=86402.0) == pytest.approx(0.5)
    assert [charge["reports"] for charge in ledger.charges()] == [2, 2]


def test_a_windowed_ledgers_statement_says_it_covers_its_window_only():
    """A year of two reports of 0.5 a day under a per-day budget spends 365; the statement at its end covers the last
    day (1) and says so, and once the window is empty it says that nothing is charged."""
    grr = local.make("grr", epsilon=0.5, domain_size=4)
    ledger = PrivacyLedger(budget=2.0, window=86400)
    for day in range(365):
        ledger.report(grr, [1, 2], now=day * 86400.0)
    last_day = ledger.statement(1e-8, now=364 * 86400.0 + 10)
    assert last_day.epsilon == pytest.approx(1.0, abs=1e-6) and window_assumption(86400) in last_day.assumptions
    assert NO_CHARGE_ASSUMPTION not in last_day.assumptions
    later = ledger.statement(1e-8, now=400 * 86400.0)
    assert later.epsilon <= 1e-300 and {NO_CHARGE_ASSUMPTION, window_assumption(86400)} <= set(later.assumptions)
    all_time = PrivacyLedger().statement(0.0)
    assert all_time.assumptions == (NO_CHARGE_ASSUMPTION,)
    assert not any(text.startswith("the charges of the last") for text in PrivacyLedger(budget=5.0).statement(1e-8).assumptions)


def test_a_windowed_ledgers_statement_names_its_window_in_its_one_line():
    """``print(statement.describe())`` after a year of a per-day ledger states the last day's total and says that it is
    the last day's: the window's assumption ends the line, after the composition's own."""
    grr = local.make("grr", epsilon=0.5, domain_size=4)
    ledger = PrivacyLedger(budget=2.0, window=86400)
    for day in range(365):
        ledger.report(grr, [1, 2], now=day * 86400.0)
    line = ledger.statement(1e-8, now=364 * 86400.0 + 10).describe()
    assert line.startswith("(1, 1e-08)-DP (local, replace) over 2 mechanism(s) by ") and "; assuming: (1) " in line
    assert line.endswith(f"; (2) {window_assumption(86400)}") and "the charges of the last 86400 s only" in line
    pure = ledger.statement(0.0, "basic", now=364 * 86400.0 + 10).describe()
    assert pure.endswith(window_assumption(86400))
    assert "the ledger's window" not in PrivacyLedger(budget=5.0).statement(1e-8).describe()


def test_a_windows_seconds_are_written_as_the_javascript_ledger_writes_them():
    """The two ledgers state a window in the same words (String(x) in node)."""
    values = [1e-5, 1.5e-5, 1e-7, 1.5e-7, 0.1, 3600.5, 1e6, 1e15, 1e16, 1e20, 1e21, 1.5e21, 123456.789, 5e-324, 86400,
              48237702445694128.0, 2.0**53 + 2]
    node = ["0.00001", "0.000015", "1e-7", "1.5e-7", "0.1", "3600.5", "1000000", "1000000000000000", "10000000000000000",
            "100000000000000000000", "1e+21", "1.5e+21", "123456.789", "5e-324", "86400", "48237702445694130",
            "9007199254740994"]
    assert [_js_number(value) for value in values] == node


def test_stable_accounting_charges_eps_inf_once_per_memo_and_dbitflippm_needs_it():
    dbit = local.make("dbitflippm", epsilon=2.0, domain_size=8, sampled_bits=2)
    strict = PrivacyLedger()
    strict.report(dbit, [3])
    with pytest.raises(PrivacyBudgetError, match="inf"):
        strict.report(dbit, [3])  # no second randomization: a second report shows whether the value changed
    stable = PrivacyLedger(budget=100.0, accounting="stable")
    stable.report(dbit, [3, 3, 5])
    stable.report(dbit, [3] * 20)
    # eps_inf for each of the first K = b reports (a memo holds up to b permanent responses), nothing after
    assert stable.spent() == pytest.approx(dbit.memo_keys * dbit.stable_guarantee.epsilon)


def test_stable_accounting_covers_a_history_with_the_same_pattern_of_changes():
    """Review finding: charging eps_inf once per scope undercharged a value that changes (exact loss 3.998 vs 2)."""
    from dpdist.testing._over_time import history_log_laws, largest_loss, memo_channels

    protocol = local.make("l-grr", epsilon=2.0, epsilon_1=1.0, domain_size=3)
    ledger = PrivacyLedger(budget=100.0, accounting="stable")
    history = [0] * 6 + [1] * 6
    ledger.report(protocol, history)
    permanent, instantaneous = memo_channels(protocol)
    exact = largest_loss(history_log_laws(permanent, instantaneous, np.array([history, [1] * 6 + [0] * 6])))
    assert exact == pytest.approx(3.998, abs=0.01) and exact <= ledger.spent()


def test_the_accounting_cannot_change_under_existing_charges_and_a_nan_never_passes(tmp_path):
    """Review finding: stable -> history on dBitFlipPM gave cost inf - inf = NaN, which passed every later check."""
    dbit = local.make("dbitflippm", epsilon=1.0, domain_size=8, sampled_bits=2)
    path = tmp_path / "ledger.json"
    with io.open_ledger(path, accounting="stable", budget=100.0) as ledger:
        ledger.report(dbit, [3, 3])
    with pytest.raises(IncompatibleStateError, match="accounting"):
        with io.open_ledger(path, accounting="history"):
            pass
    ledger = PrivacyLedger.from_dict(json.loads(path.read_text()))
    ledger.accounting = "history"  # forced by hand: the cost is infinite, never NaN, and is refused
    assert ledger.cost(dbit, 1) == math.inf
    with pytest.raises(PrivacyBudgetError):
        ledger.report(dbit, [3])
    assert ledger.cost(dbit, 0) == 0.0


def test_collectors_round_trip_and_trailing_slashes_are_one_collector():
    protocol = local.from_config(L_GRR)
    ledger = PrivacyLedger(budget=100.0)
    ledger.report(protocol, [3], collector="my app")
    ledger.report(protocol, [3], collector="https://c.example/")
    ledger.report(protocol, [3], collector="https://c.example")
    state = json.loads(json.dumps(ledger.to_dict()))
    assert sorted(stream["collector"] for stream in state["streams"].values()) == ["https://c.example", "my app"]
    assert PrivacyLedger.from_dict(state).reports_sent(protocol, "https://c.example/") == 2
    labelled = budget_scope("c", {"protocol": "l-grr", "labels": ["café", "b"], "epsilon": 1.0})
    assert "café" in labelled  # as JavaScript writes it (no \u escapes)
    bad = {**state, "charges": [{**state["charges"][0], "reports": 0}]}
    with pytest.raises(IncompatibleStateError):
        PrivacyLedger.from_dict(bad)


#: spellings of collectors and how the ledger (Python and JavaScript alike) names them
COLLECTORS = {
    "https://C.Example:443/": "https://c.example", "http://c.example:80": "http://c.example",
    "http://c.example:8080/x/": "http://c.example:8080/x", "https://[::1]:443/": "https://[::1]", "local": "local",
    "HTTPS://c.example/p//": "https://c.example/p", "https://u@c.example/": "https://u@c.example",
    "http://c.example?x=1": "http://c.example?x=1", "https://c.example:80/": "https://c.example:80",
    "ftp://c.example/": "ftp://c.example", "http://C.EXAMPLE/A/": "http://c.example/A",
}


def test_spellings_of_one_collector_are_one_collector_and_older_keys_are_read_under_the_new_name():
    """A device's budget and its one answer per campaign in rounds must not split over ``https://c.example`` and
    ``https://C.example:443/``; the JavaScript client names them alike."""
    from dpdist.local.ledger import normal_collector

    assert {spelling: normal_collector(spelling) for spelling in COLLECTORS} == COLLECTORS
    protocol = local.from_config(L_GRR)
    ledger = PrivacyLedger(budget=100.0)
    ledger.report(protocol, [3], collector="https://c.example")
    ledger.report(protocol, [3], collector="https://C.EXAMPLE:443/")
    threshold = local.make("threshold", epsilon=1.0, cuts=[512], round=1)
    ledger.report(threshold, [0.3], collector="https://c.example", once="q")
    with pytest.raises(PrivacyBudgetError, match="already answered"):
        ledger.report(threshold, [0.3], collector="https://c.example:443", once="q")
    state = json.loads(json.dumps(ledger.to_dict()))
    assert [stream["reports"] for stream in state["streams"].values()] == [2]
    # a ledger written under the earlier normalization (trailing slashes only): two spellings, read as one
    scope, stream = next(iter(state["streams"].items()))
    spelled = {**stream, "collector": "https://C.example:443", "reports": 1}
    older = {**state, "streams": {scope: {**stream, "reports": 1}, "https://C.example:443" + scope[len("https://c.example"):]: spelled},
             "answered": {"https://C.EXAMPLE q": state["answered"]["https://c.example q"]}}
    read = PrivacyLedger.from_dict(older)
    assert read.reports_sent(protocol, "https://c.example") == 2 and read.answered("q", "https://c.example:443/")


def test_the_ledger_round_trips_and_damage_is_refused():
    ledger = PrivacyLedger(budget=50.0, window=3600.0)
    ledger.report(local.from_config(L_GRR), [3, 5], collector="https://c.example", rng=1)
    ledger.report(local.make("loloha", epsilon=4.0, epsilon_1=1.0, domain_size=8), [2])
    state = json.loads(json.dumps(ledger.to_dict()))
    assert PrivacyLedger.from_dict(state).to_dict() == state
    damaged = [
        {**state, "format": "other"},
        {**state, "budget": -1},
        {**state, "accounting": "optimistic"},
        {**state, "charges": [{"at": 1.0, "epsilon": -2.0, "collector": "", "protocol": "grr", "reports": 1}]},
        {**state, "streams": {"wrong scope": next(iter(state["streams"].values()))}},
        {**state, "streams": {k: {**v, "reports": -1} for k, v in state["streams"].items()}},
    ]
    for bad in damaged:
        with pytest.raises(IncompatibleStateError):
            PrivacyLedger.from_dict(bad)


def test_settings_are_checked():
    for settings, name in [({"budget": 0}, "budget"), ({"budget": math.inf}, "budget"), ({"window": -1}, "window"),
                           ({"accounting": "none"}, "accounting")]:
        with pytest.raises(InvalidParameterError, match=name):
            PrivacyLedger(**settings)
    assert PrivacyLedger().budget == DEFAULT_BUDGET


def test_scopes_ignore_budgets_and_write_integral_floats_as_javascript_does():
    a = budget_scope("c", {"protocol": "l-grr", "version": 1, "epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 8})
    b = budget_scope("c", {"protocol": "l-grr", "version": 1, "epsilon": 3.0, "epsilon_1": 2.0, "domain_size": 8.0})
    assert a == b == 'c {"domain_size":8,"protocol":"l-grr","version":1}'


def test_an_old_memo_file_is_read_as_a_ledger_holding_it(tmp_path):
    protocol = local.from_config(L_GRR)
    client = protocol.client()
    client.report(3)
    path = tmp_path / "memo.json"
    path.write_text(json.dumps(client.to_dict()))
    with io.open_ledger(path, budget=100.0) as ledger:
        before = ledger.to_dict()["streams"]
        ledger.report(protocol, [3])
    (stream,) = json.loads(path.read_text())["streams"].values()
    assert stream["memo"] == client.to_dict()["memo"] and stream["reports"] == 1
    assert next(iter(before.values()))["reports"] == 0


# ---------------------------------------------------------------------- memo hygiene (item 5)
def test_a_memo_drawn_from_a_seed_is_marked_and_refuses_the_csprng():
    protocol = local.from_config(L_GRR)
    client = protocol.client()
    client.report(3, np.random.default_rng(1))
    state = client.to_dict()
    assert state["seeded"] is True
    again = MemoizedClient.from_dict(json.loads(json.dumps(state)))
    with pytest.raises(IncompatibleStateError, match="seeded"):
        again.report(3)
    loloha = local.make("loloha", epsilon=4.0, epsilon_1=1.0, domain_size=8).client()
    loloha.report(2, 5)
    assert loloha.to_dict()["seeded"] is True
    fresh = protocol.client()
    fresh.report(3)
    assert "seeded" not in fresh.to_dict()


@pytest.mark.parametrize("key", ["01", "001", "+1", "-0", " 1"])
def test_memo_keys_must_be_canonical(key):
    protocol = local.from_config(L_GRR)
    with pytest.raises(IncompatibleStateError, match="canonical"):
        MemoizedClient.from_dict({"config": protocol.config(), "memo": {key: 1}})


def test_a_new_value_costs_the_same_work_as_a_known_one(monkeypatch):
    """Client timing must not tell a change: a permanent response is drawn for every report (and kept if new)."""
    protocol = local.from_config(L_GRR)
    calls = []
    original = type(protocol).permanent_response
    monkeypatch.setattr(type(protocol), "permanent_response", lambda self, *a: calls.append(1) or original(self, *a))
    client = protocol.client()
    for value in (3, 3, 5, 3):
        client.report(value)
    assert len(calls) == 4 and sorted(client.memo) == [3, 5]


def test_a_question_asked_once_is_answered_once_per_collector_and_survives_a_round_trip():
    """A campaign in rounds holds its epsilon per user only if each device answers one round."""
    ledger = PrivacyLedger()
    round_one = local.make("threshold", epsilon=1.0, cuts=[512], round=1)
    round_two = local.make("threshold", epsilon=1.0, cuts=[300, 700], round=2)
    ledger.report(round_one, [0.3], collector="https://c.example/", once="med", rng=1)
    assert ledger.answered("med", "https://c.example") and not ledger.answered("med", "https://other.example")
    for protocol in (round_two, round_one):  # a later round, or the same round again: refused before any draw
        with pytest.raises(PrivacyBudgetError, match="already answered 'med'") as refused:
            ledger.report(protocol, [0.9], collector="https://c.example", once="med")
        assert refused.value.remaining == pytest.approx(DEFAULT_BUDGET - 1.0)
    assert len(ledger.charges()) == 1
    ledger.report(round_two, [0.9], collector="https://other.example", once="med")  # another collector's question
    with pytest.raises(InvalidParameterError, match="takes one value"):
        ledger.report(round_one, [0.1, 0.2], collector="https://c.example", once="next")
    with pytest.raises(InvalidParameterError, match="'once'"):
        ledger.report(round_one, [0.1], once="")
    state = json.loads(json.dumps(ledger.to_dict()))
    assert state["version"] == 2 and PrivacyLedger().to_dict()["version"] == 1  # version 1 readers refuse, not erase
    assert sorted(state["answered"]) == ["https://c.example med", "https://other.example med"]
    again = PrivacyLedger.from_dict(state)
    assert again.to_dict() == state and again.answered("med", "https://c.example")
    older = {**{key: value for key, value in state.items() if key != "answered"}, "version": 1}  # before rounds
    assert PrivacyLedger.from_dict(older).to_dict()["answered"] == {}
    for damaged in ({"med": {"at": 1.0, "protocol": "threshold"}}, {"c med": {"at": "x", "protocol": "threshold"}},
                    {"c med": {"at": 1.0}}, []):
        with pytest.raises(IncompatibleStateError, match="answer"):
            PrivacyLedger.from_dict({**state, "answered": damaged})


# ---------------------------------------------------------------------------------------------- its statement at a delta
@pytest.mark.parametrize("name", ["grr", "oue", "ss"])
@pytest.mark.slow  # 0.79 CPU-s: a campaign end to end
def test_the_ledger_states_a_campaigns_reports_as_the_budget_session_charges_them(name):
    """1, 20 and 365 reports of one protocol (eps 0.1, d = 16): the statement at 1e-8 is the session's campaign figure
    (it was 1.996 for 20 GRR reports where the session charged 0.919: each report counted as binary randomized
    response), never below the exact composition (the lattice rounded down bounds it from below), never above the
    sum the budget refuses by."""
    from dpdist.accounting._randomized_response import composed_randomized_response, randomized_response_share
    from dpdist.budget import BudgetSession

    protocol = local.make(name, epsilon=0.1, domain_size=16)
    share = randomized_response_share(protocol)
    assert 0 < share < 1
    for reports in (1, 20, 365):
        ledger = PrivacyLedger(budget=40)
        for day in range(reports):
            ledger.report(protocol, [day % 16], now=1000.0 + day, rng=day)
        session = BudgetSession(1000.0, 1e-8)
        session.campaign(protocol, reports=reports)
        statement = ledger.statement(1e-8, now=5000.0)
        assert statement.epsilon == pytest.approx(session.spent.epsilon, rel=1e-7), reports
        assert statement.epsilon >= composed_randomized_response([(0.1, reports, share)], 1e-8, rounding="down")
        assert ledger.statement(1e-8, "basic", now=5000.0).epsilon == pytest.approx(ledger.spent(5000.0)) == pytest.approx(0.1 * reports)
    assert 0.918 < PrivacyLedger.from_dict({**ledger.to_dict(), "charges": ledger.to_dict()["charges"][:20]}).statement(
        1e-8, now=5000.0).epsilon < (0.92 if name == "grr" else 1.6)


def test_a_charge_that_keeps_no_share_counts_each_report_as_randomized_response():
    """A charge written without a share (an earlier ledger, or a protocol with no such structure) counts each report
    as the worst 0.1-LDP randomizer: 365 of them state 11.952 at 1e-8; a damaged share is refused."""
    charges = [{"at": 1000.0 + day, "epsilon": 0.1, "collector": "c", "protocol": "olh", "reports": 1} for day in range(365)]
    state = {**PrivacyLedger(budget=40).to_dict(), "charges": charges}
    assert PrivacyLedger.from_dict(state).statement(1e-8).epsilon == pytest.approx(11.952, abs=1e-3)
    for share in (0, 1.5, "0.5", True, None):
        with pytest.raises(IncompatibleStateError, match="charge is damaged"):
            PrivacyLedger.from_dict({**state, "charges": [{**charges[0], "share": share}]})


def test_a_memos_charges_are_stated_as_one_mechanism():
    """Reports through a memo share its permanent response: their charges (increments of epsilon_over_changes) are
    one mechanism of their sum, never fresh mechanisms composed (which would state far less)."""
    from dpdist import accounting
    from dpdist.privacy import local_guarantee

    ledger = PrivacyLedger(budget=100)
    memo = local.make("l-grr", epsilon=2.0, epsilon_1=0.1, domain_size=8)
    for day in range(100):
        ledger.report(memo, [day % 8], now=1000.0 + day, rng=day)
    total = memo.epsilon_over_changes(100)
    assert ledger.spent() == pytest.approx(total)
    one = accounting.state(accounting.PrivacyLoss.of_guarantee(local_guarantee(total)), 1e-8, "pld").epsilon
    increments = [charge["epsilon"] for charge in ledger.charges()]
    as_fresh = accounting.sequential([accounting.PrivacyLoss.of_guarantee(local_guarantee(e)) for e in increments])
    assert ledger.statement(1e-8).epsilon == pytest.approx(one, rel=1e-6)
    assert accounting.state(as_fresh, 1e-8).epsilon < 0.7 * one  # 13.3 against 21.5: fresh would undercount


@pytest.mark.parametrize("accountant", ["tightest", "basic", "pld", "zcdp"])
def test_a_stable_ledgers_statement_names_the_stable_relation_and_privacy_convert_refuses_it(accountant):
    """50 reports of changing values through dBitFlipPM (d = 16, one bucket) under "stable" accounting
    were stated (8, 1e-8)-DP (local, replace), whose loss over changing values is infinite from the second report."""
    from dpdist.errors import InvalidParameterError
    from dpdist.privacy import PrivacyGuarantee, convert

    flip = local.make("dbitflippm", epsilon=1.0, domain_size=16, sampled_bits=1)
    stable, history = PrivacyLedger(budget=10, accounting="stable"), PrivacyLedger(budget=10)
    for day in range(50):
        stable.report(flip, [day % 16], collector="https://c.example", now=1000.0 + day, rng=day)
    history.report(flip, [0], collector="https://c.example", now=1000.0, rng=0)
    statement = stable.statement(1e-8, accountant)
    assert statement.neighbouring == "stable" and "same pattern of changes" in statement.assumptions[-1]
    assert "(local, stable)" in statement.describe()
    assert history.statement(1e-8, accountant).neighbouring == "replace"
    with pytest.raises(InvalidParameterError, match="stable"):
        convert(PrivacyGuarantee(statement.epsilon, statement.delta, statement.neighbouring, statement.model), "replace")
