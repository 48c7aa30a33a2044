"""docs/explanation/odds.md: its tables are what dpdist computes now."""

from __future__ import annotations

from pathlib import Path

from dpdist import local
from dpdist.accounting import guess_bound, guess_odds
from dpdist.local.ledger import PrivacyLedger

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "explanation" / "odds.md").read_text()
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
SIX = {"grr": {"domain_size": 8}, "oue": {"domain_size": 8}, "olh": {"domain_size": 8, "hash_prime": 11},
       "ss": {"domain_size": 8}, "hr": {"domain_size": 8}, "sw": {"bounds": (0.0, 1.0), "bins": 8}}


def _percent(value: float, exact: bool = True) -> str:
    return f"{'' if exact else '≤ '}{100 * value:.3g}%"


def test_the_one_report_table_is_computed_again():
    for name, params in SIX.items():
        cells = [_percent(guess_odds(local.make(name, epsilon=e, **params)).probability[0]) for e in EPSILONS]
        assert f"| {name} | {' | '.join(cells)} |" in PAGE
    assert f"| bound | {' | '.join(_percent(guess_bound(e, chance=1 / 8)) for e in EPSILONS)} |" in PAGE


def test_the_year_table_is_computed_again():
    for name in ("grr", "oue", "ss", "hr"):
        odds = guess_odds(local.make(name, epsilon=1.0, domain_size=8), [1, 7, 30, 365])
        cells = [_percent(p, exact) for p, exact in zip(odds.probability, odds.exact)]
        assert f"| {name}, fresh | {' | '.join(cells)} |" in PAGE
    memo = guess_odds(local.make("l-grr", epsilon=2.0, epsilon_1=1.0, domain_size=8), [1, 7, 30, 365])
    assert f"| l-grr | {' | '.join(_percent(p, exact) for p, exact in zip(memo.probability, memo.exact))} |" in PAGE
    ledger = guess_odds(local.make("grr", epsilon=1.0, domain_size=8), 365, ledger=PrivacyLedger())
    assert ledger.sent == (10,) and f"admits ten GRR reports at ε = 1: {_percent(ledger.probability[0])}" in PAGE
