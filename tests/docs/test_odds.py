"""docs/explanation/odds.md: its tables are what dpdist computes now."""

from __future__ import annotations

import itertools
from pathlib import Path

from dpdist import local
from dpdist.accounting import guess_bound, guess_odds
from dpdist.accounting._odds import percent
from dpdist.local.ledger import PrivacyLedger
from odds_support import FRESH, over_eight

PAGE = (Path(__file__).resolve().parents[2] / "docs" / "explanation" / "odds.md").read_text()
EPSILONS = (0.5, 1.0, 2.0, 4.0, 8.0)
ONE_REPORT = "| protocol | " + " | ".join(f"ε = {e:g}" for e in EPSILONS) + " |"


def _percent(value: float, exact: bool = True) -> str:
    """An attacker's odds as dpdist says them: rounded up, never shown below them."""
    return f"{'' if exact else '≤ '}{percent(value, bound=True)}"


def _rows(header: str) -> list[list[str]]:
    """The cells of each row of the page's table under ``header``."""
    table = itertools.takewhile(lambda line: line.startswith("|"), PAGE[PAGE.index(header):].splitlines()[2:])
    return [[cell.strip() for cell in line.strip("|").split("|")] for line in table]


def test_the_one_report_table_is_computed_again():
    """Each protocol the table lists (fresh reports over 8 values, tests/odds_support.py), every cell exact as dpdist
    computes it now, and the bound of any report."""
    rows = _rows(ONE_REPORT)
    named = [row for row in rows if row[0] != "bound"]
    assert len(named) == len(rows) - 1 and named and {row[0] for row in named} <= set(FRESH), [row[0] for row in rows]
    for name, *cells in named:
        odds = [guess_odds(over_eight(name, e)) for e in EPSILONS]
        assert cells == [_percent(o.probability[0], o.exact[0]) for o in odds], name
    assert rows[-1] == ["bound", *(_percent(guess_bound(e, chance=1 / 8)) for e in EPSILONS)]


def test_the_year_table_is_computed_again():
    for name in ("grr", "oue", "ss", "hr"):
        odds = guess_odds(local.make(name, epsilon=1.0, domain_size=8), [1, 7, 30, 365])
        cells = [_percent(p, exact) for p, exact in zip(odds.probability, odds.exact)]
        assert f"| {name}, fresh | {' | '.join(cells)} |" in PAGE
    memo = guess_odds(local.make("l-grr", epsilon=2.0, epsilon_1=1.0, domain_size=8), [1, 7, 30, 365])
    assert f"| l-grr | {' | '.join(_percent(p, exact) for p, exact in zip(memo.probability, memo.exact))} |" in PAGE
    ledger = guess_odds(local.make("grr", epsilon=1.0, domain_size=8), 365, ledger=PrivacyLedger())
    assert ledger.sent == (10,) and f"admits ten GRR reports at ε = 1: {_percent(ledger.probability[0])}" in PAGE
