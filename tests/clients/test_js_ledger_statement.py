"""The JavaScript ledger states the same total as Python's for the same charges, and the same
assumptions in the same words and order.

Python writes ledgers of fresh reports (one protocol and several), a memo's increments, a window and an unknown
protocol; node reads each with ``Ledger.fromJSON`` and states it at several deltas with every accountant both
implement; the two totals must agree within 1e-9 relative (one lattice, the same steps in the same order: only
the last bits of exp and log may differ between the engines).  Node runs once for every case (slow: a subprocess).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from dpdist import local
from dpdist.accounting import FRESH_RANDOMNESS, MEMO_ASSUMPTION
from dpdist.local import available
from dpdist.local._registry import registered_class
from dpdist.local.ledger import NO_CHARGE_ASSUMPTION, STABLE_ASSUMPTION, PrivacyLedger, window_assumption
from js_support import node_path

CLIENT = Path(__file__).resolve().parents[2] / "clients" / "js" / "src" / "ledger.js"
DELTAS = (1e-8, 1e-5, 0.0)


def ledgers() -> dict[str, PrivacyLedger]:
    daily = PrivacyLedger(budget=400)
    grr = local.make("grr", epsilon=0.1, domain_size=16)
    for day in range(365):
        daily.report(grr, [day % 16], now=1000.0 + day, rng=day)
    mixed = PrivacyLedger(budget=100)
    for index, (name, epsilon) in enumerate([("oue", 0.5), ("grr", 1.3), ("olh", 0.37), ("oue", 0.5)] * 6):
        mixed.report(local.make(name, epsilon=epsilon, domain_size=8), [index % 8, (index + 1) % 8],
                     collector=f"https://c{index % 3}.example", now=2000.0 + index, rng=index)
    memo = PrivacyLedger(budget=100)
    lgrr = local.make("l-grr", epsilon=2.0, epsilon_1=0.1, domain_size=8)
    for day in range(60):
        memo.report(lgrr, [day % 8], now=3000.0 + day, rng=day)
        memo.report(grr, [day % 16], now=3000.5 + day, rng=day)
    windowed = PrivacyLedger(budget=10, window=30 * 86400.0)
    for day in range(90):
        windowed.report(grr, [day % 16], now=86400.0 * day, rng=day)
    unknown = PrivacyLedger.from_dict({**mixed.to_dict(), "charges": [
        *mixed.to_dict()["charges"], {"at": 9000.0, "epsilon": 0.8, "collector": "x", "protocol": "not-a-protocol",
                                      "reports": 4}]})
    stable = PrivacyLedger(budget=100, window=3600.5, accounting="stable")
    for hour in range(5):
        stable.report(lgrr, [hour % 8], now=4000.0 * hour, rng=hour)
    memo_stable = PrivacyLedger(budget=100, accounting="stable")  # a memo's ledger under stable accounting, no window
    for day in range(30):
        memo_stable.report(lgrr, [day % 8], now=5000.0 + day, rng=day)
        memo_stable.report(grr, [day % 16], now=5000.5 + day, rng=day)
    return {"daily": daily, "mixed": mixed, "memo": memo, "windowed": windowed, "unknown": unknown,
            "emptied": PrivacyLedger.from_dict(windowed.to_dict()), "stable": stable, "memo_stable": memo_stable}


SCRIPT = """
import { Ledger, MEMOIZED_PROTOCOLS } from %s;
const cases = JSON.parse(process.argv[2]);
const out = { memoized: [...MEMOIZED_PROTOCOLS], statements: {} };
for (const [name, { state, now, deltas }] of Object.entries(cases)) {
  const ledger = Ledger.fromJSON(state);
  out.statements[name] = deltas.flatMap((delta) => ['tightest', 'basic', 'pld'].map((accountant) => {
    const stated = ledger.statement(delta, accountant, now);
    return [stated.accountant, stated.epsilon, stated.assumptions];
  }));
}
console.log(JSON.stringify(out));
"""


@pytest.mark.slow
def test_node_and_python_ledgers_state_the_same_total(tmp_path):
    cases = ledgers()
    now = {"daily": 2000.0, "mixed": 3000.0, "memo": 4000.0, "windowed": 86400.0 * 90, "unknown": 9999.0,
           "emptied": 86400.0 * 200, "stable": 16001.0, "memo_stable": 6000.0}
    script = tmp_path / "statement.mjs"
    script.write_text(SCRIPT % json.dumps(CLIENT.as_uri()))
    payload = {name: {"state": ledger.to_dict(), "now": now[name], "deltas": list(DELTAS)} for name, ledger in cases.items()}
    result = subprocess.run([node_path(), str(script), json.dumps(payload)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    answer = json.loads(result.stdout)
    assert sorted(answer["memoized"]) == sorted(name for name in available() if registered_class(name).tags.memoized)
    for name, ledger in cases.items():
        expected = [ledger.statement(delta, accountant, now=now[name])
                    for delta in DELTAS for accountant in ("tightest", "basic", "pld")]
        for (accountant, epsilon, assumptions), statement in zip(answer["statements"][name], expected):
            assert accountant == statement.accountant, (name, accountant, statement)
            assert epsilon == pytest.approx(statement.epsilon, rel=1e-9, abs=1e-200), (name, statement)
            # every assumption, in the same words and order (JS left out fresh randomness and the memo's)
            assert assumptions == list(statement.assumptions), (name, accountant, statement)
    assert cases["daily"].statement(1e-8).epsilon == pytest.approx(3.8975, abs=1e-4)  # 365 GRR d = 16 at 0.1 composed
    assert cases["memo"].statement(1e-8).accountant == "pld"
    assert NO_CHARGE_ASSUMPTION in cases["emptied"].statement(1e-8, now=now["emptied"]).assumptions
    assert window_assumption(3600.5) in cases["stable"].statement(1e-8, now=now["stable"]).assumptions
    stated = {name: cases[name].statement(1e-8, now=now[name]).assumptions
              for name in ("daily", "memo", "memo_stable", "windowed")}
    assert stated["daily"] == (FRESH_RANDOMNESS,)  # plain charges
    assert stated["memo"] == (MEMO_ASSUMPTION, FRESH_RANDOMNESS)  # a memo, history accounting
    assert stated["memo_stable"] == (MEMO_ASSUMPTION, FRESH_RANDOMNESS, STABLE_ASSUMPTION)  # a memo, stable accounting
    assert stated["windowed"] == (FRESH_RANDOMNESS, window_assumption(30 * 86400.0))


CAMPAIGNS = """
import { Ledger, responseShare } from %s;
import { fromConfig } from %s;
const out = [];
for (const name of ['grr', 'oue', 'ss']) {
  const protocol = fromConfig({ protocol: name, epsilon: 0.1, domain_size: 16 });
  for (const reports of [1, 20, 365]) {
    const ledger = new Ledger({ budget: 1000 });
    for (let day = 0; day < reports; day += 1) ledger.report(protocol, [day %% 16], { now: 1000 + day });
    out.push([name, reports, responseShare(protocol), ledger.statement(1e-8, 'tightest', 5000).epsilon,
              ledger.statement(0, 'tightest', 5000).epsilon]);
  }
}
console.log(JSON.stringify(out));
"""


@pytest.mark.slow
def test_node_ledger_charges_a_campaigns_reports_as_the_budget_session(tmp_path):
    """Reports drawn and charged by the JavaScript ledger (GRR, OUE, SS at 0.1, d = 16; 1, 20 and 365 of them) state at
    1e-8 what BudgetSession.campaign charges the same reports, each at or above it (the session's figure is the exact
    channel's; the ledger's share of randomized response is Python's, formula for formula), and their sum at 0."""
    from dpdist.accounting._randomized_response import randomized_response_share
    from dpdist.budget import BudgetSession

    script = tmp_path / "campaigns.mjs"
    script.write_text(CAMPAIGNS % (json.dumps(CLIENT.as_uri()), json.dumps((CLIENT.parent / "index.js").as_uri())))
    result = subprocess.run([node_path(), str(script)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    for name, reports, share, stated, pure in json.loads(result.stdout):
        protocol = local.make(name, epsilon=0.1, domain_size=16)
        assert share == pytest.approx(randomized_response_share(protocol), rel=1e-12), name
        session = BudgetSession(1000.0, 1e-8)
        session.campaign(protocol, reports=reports)
        assert session.spent.epsilon * (1 - 1e-12) <= stated <= session.spent.epsilon * (1 + 1e-7), (name, reports)
        assert pure == pytest.approx(0.1 * reports, rel=1e-12)
