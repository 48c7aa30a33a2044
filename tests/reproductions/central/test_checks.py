"""The ``central`` reproduction's claim checks under their old names (``dpdist.reproductions.central.checks``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from dpdist.errors import InvalidParameterError
from dpdist.experiments import (
    DOES_NOT_HOLD,
    HOLDS,
    INCONCLUSIVE,
    UNDERPOWERED,
    ResultsTable,
    linear_p_values,
    welch_p_values,
)
from dpdist.reproductions.central import checks as paper_checks

UNDECIDED = (INCONCLUSIVE, UNDERPOWERED)  # no decision: the split is tested in test_verdict_power.py

def _summary(rows):
    columns = ["dataset", "method", "epsilon", "metric", "mean", "std", "se", "count", "failed"]
    return ResultsTable([{"std": 0.0, "count": 4, "failed": 0, **row} for row in rows], columns)

def test_ranked_check_outcomes():
    rows = [
        {"dataset": "d", "method": "A", "epsilon": 1.0, "metric": "ks", "mean": 0.9, "se": 0.01},
        {"dataset": "d", "method": "B", "epsilon": 1.0, "metric": "ks", "mean": 0.5, "se": 0.01},
        {"dataset": "d", "method": "C", "epsilon": 1.0, "metric": "ks", "mean": 0.1, "se": 0.01},
    ]
    table = _summary(rows)
    assert paper_checks.RankedCheck("A", ("ks",), "worst")(table)[0] == HOLDS
    assert paper_checks.RankedCheck("C", ("ks",), "best")(table)[0] == HOLDS
    outcome, text = paper_checks.RankedCheck("B", ("ks",), "worst")(table)
    assert outcome == DOES_NOT_HOLD and "0.9" in text
    assert paper_checks.GroupBeatsCheck(("C",), ("A", "B"), ("ks",))(table)[0] == HOLDS

def _two_methods(means_by_epsilon, se=0.01):
    """Rows of methods B and C at each epsilon: ``{epsilon: (mean of B, mean of C)}``."""
    return _summary([{"dataset": "d", "method": method, "epsilon": eps, "metric": "ks", "mean": mean, "se": se}
                     for eps, pair in means_by_epsilon.items() for method, mean in zip("BC", pair)])

def test_ranked_check_names_only_the_settings_holm_rejects():
    # one strong reversal, one with a raw p in (alpha/3 .. alpha/2] (not rejected by Holm), one tie
    table = _two_methods({1.0: (0.1, 0.2), 2.0: (0.1, 0.1 + 2.2 * 0.01 * 2**0.5), 3.0: (0.1, 0.1)})
    raw = welch_p_values(table.select(epsilon=2.0, method="C").rows[0], table.select(epsilon=2.0, method="B").rows[0])
    assert 0.05 / 2 < raw[2] < 0.05  # "C is not higher than B" rejected alone, not after Holm over 3
    outcome, text = paper_checks.RankedCheck("B", ("ks",), "worst")(table)
    assert outcome == DOES_NOT_HOLD and "(Holm over settings, Bonferroni over rivals) in 1" in text
    assert "epsilon=1.0" in text.split("e.g.")[1] and "epsilon=2.0" not in text.split("e.g.")[1]

def test_best_or_close_check_outcomes_and_holm():
    check = paper_checks.BestOrCloseCheck("B", ("ks",), tolerance=0.25)
    assert check(_two_methods({1.0: (0.105, 0.1)}, se=0.001))[0] == HOLDS  # 5% above the best, many SE
    assert check(_two_methods({1.0: (0.09, 0.1)}, se=0.001))[0] == HOLDS  # the best
    outcome, text = check(_two_methods({1.0: (0.5, 0.1)}))
    assert outcome == DOES_NOT_HOLD and "ratio 5," in text
    assert check(_two_methods({1.0: (0.12, 0.1)}))[0] in UNDECIDED  # 20% above, t = 0.3 against 25%
    # B at 1.6x C: t = 2.2 beyond 1.25x, one-sided p about 0.036: alone it does not hold ...
    alone = _two_methods({1.0: (0.1602, 0.1)})
    scaled = {**alone.select(method="C").rows[0], "mean": 0.125, "se": 0.0125}
    assert 0.05 / 2 < welch_p_values(scaled, alone.select(method="B").rows[0])[1] < 0.05
    assert check(alone)[0] == DOES_NOT_HOLD
    # ... with a second setting exactly at 1.25x, Holm (0.036 > 0.05 / 2) leaves it inconclusive
    assert check(_two_methods({1.0: (0.1602, 0.1), 2.0: (0.125, 0.1)}))[0] in UNDECIDED

def test_relative_error_check_compares_ratios_across_dataset_groups():
    def table(aq_hard, aq_easy, se=0.001):
        rows = []
        for dataset, aq in (("hard", aq_hard), ("easy", aq_easy)):
            rows += [{"dataset": dataset, "method": "AQ", "epsilon": 1.0, "metric": "ks", "mean": aq, "se": se},
                     {"dataset": dataset, "method": "MP", "epsilon": 1.0, "metric": "ks", "mean": 0.01, "se": se / 10}]
        return _summary(rows)

    check = paper_checks.RelativeErrorCheck("AQ", "MP", ("ks",), harder=("hard",), easier=("easy",))
    assert check(table(0.03, 0.01))[0] == HOLDS  # 3x MP on the hard data, 1x on the easy
    outcome, text = check(table(0.01, 0.03))
    assert outcome == DOES_NOT_HOLD and "0.333" in text
    assert check(table(0.0201, 0.02, se=0.002))[0] in UNDECIDED
    assert check(_summary([]))[0] == INCONCLUSIVE

def test_relative_error_check_pairs_datasets_across_an_unmatched_column():
    def rows(dataset, n, aq, se=0.001):
        return [{"dataset": dataset, "method": m, "epsilon": 1.0, "n": n, "metric": "ks", "mean": v, "se": s}
                for m, v, s in (("AQ", aq, se), ("MP", 0.01, se / 10))]

    def table(*groups):
        return ResultsTable([{"std": 0.0, "count": 4, "failed": 0, **r} for g in groups for r in g],
                            ["dataset", "method", "epsilon", "n", "metric", "mean", "std", "se", "count", "failed"])

    synthetic_vs_real = table(rows("hard", 10_000, 0.03), rows("real", 22_603, 0.01))
    matched = paper_checks.RelativeErrorCheck("AQ", "MP", ("ks",), harder=("hard",), easier=("real",))
    assert matched(synthetic_vs_real)[0] == INCONCLUSIVE  # no setting has both at one n
    paired = replace(matched, unmatched=("n",))
    outcome, text = paired(synthetic_vs_real)
    assert outcome == HOLDS and "hard (n=10000) vs real (n=22603)" in text and "for the claim in 1 of 1" in text
    assert paired(table(rows("hard", 10_000, 0.01), rows("real", 22_603, 0.03)))[0] == DOES_NOT_HOLD
    with pytest.raises(InvalidParameterError, match="unmatched"):  # two n of one dataset in one paired setting
        paired(table(rows("hard", 10_000, 0.03), rows("hard", 1_000, 0.03), rows("real", 22_603, 0.01)))

def _curves_table(curves, x="degree", se=0.01):
    """Rows of method P: ``{dataset: {x: mean}}``."""
    rows = [{"dataset": d, "method": "P", x: xv, "metric": "ks", "mean": v, "se": se}
            for d, points in curves.items() for xv, v in points.items()]
    return ResultsTable([{"std": 0.0, "count": 4, "failed": 0, **r} for r in rows],
                        ["dataset", "method", x, "metric", "mean", "std", "se", "count", "failed"])

_T22 = 2.2 * 0.01 * 2**0.5  # Welch t = 2.2 between two rows of se 0.01 and 4 repeats: one-sided p about 0.035

def test_trend_check_outcomes_and_holm():
    check = paper_checks.TrendCheck("P", ("ks",), "degree")
    assert check(_curves_table({"d": {2: 0.5, 4: 0.3, 6: 0.2}}))[0] == HOLDS
    assert check(_curves_table({"d": {2: 0.5, 4: 0.3, 6: 0.6}}))[0] == DOES_NOT_HOLD
    assert check(_curves_table({"d": {2: 0.5, 4: 0.49, 6: 0.48}}, se=0.02))[0] == INCONCLUSIVE
    # a rise with raw p about 0.035 < alpha: one of three comparisons, so Holm needs p < 0.05 / 3
    outcome, text = check(_curves_table({"d": {2: 0.5, 4: 0.3, 6: 0.3 + _T22}}))
    assert outcome == HOLDS and "0 significant rise" in text and "p = 0.035" in text

def test_minimum_within_check_outcomes_and_holm():
    check = paper_checks.MinimumWithinCheck("P", ("ks",), "degree", 5, 8)
    assert check(_curves_table({"d": {2: 0.2, 4: 0.2, 6: 0.19, 8: 0.2, 12: 0.2}}))[0] == INCONCLUSIVE
    # the minimum at 4, just outside [5, 8], below both points inside with one-sided p about 0.035
    low_at_4 = {4: 0.1, 6: 0.1 + _T22, 8: 0.3}
    assert check(_curves_table({"d1": low_at_4}))[0] == DOES_NOT_HOLD
    # with a second curve tied between 4 and 6, Holm over two curves needs p < 0.025; undecided, and below 80 %
    # power: "holds" is tested at alpha / 2 per curve (two points inside [5, 8]), and so is its power
    assert check(_curves_table({"d1": low_at_4, "d2": {4: 0.1, 6: 0.1, 8: 0.3}}))[0] == UNDERPOWERED
    # a last point inside the range must be above the minimum: the error rises again
    assert paper_checks.MinimumWithinCheck("P", ("ks",), "degree", 5, 12)(
        _curves_table({"d": {2: 0.5, 6: 0.1, 12: 0.1}}))[0] == INCONCLUSIVE
    assert paper_checks.MinimumWithinCheck("P", ("ks",), "degree", 5, 12)(
        _curves_table({"d": {2: 0.5, 6: 0.1, 12: 0.3}}))[0] == HOLDS

def test_gap_shrinks_check_outcomes_and_holm():
    def table(curves, se=0.01):
        rows = [{"dataset": d, "method": m, "n": n, "metric": "ks", "mean": v, "se": se}
                for d, (p0, p1) in curves.items() for m, points in (("P", (p0, p1)), ("R", (0.1, 0.1)))
                for n, v in zip((100, 10_000), points)]
        return ResultsTable([{"std": 0.0, "count": 4, "failed": 0, **r} for r in rows],
                            ["dataset", "method", "n", "metric", "mean", "std", "se", "count", "failed"])

    check = paper_checks.GapShrinksCheck("P", "R", ("ks",), "n", fraction=0.5)
    assert check(table({"d": (0.5, 0.12)}))[0] == HOLDS  # gap 0.4 -> 0.02
    outcome, text = check(table({"d": (0.5, 0.45)}))  # gap 0.4 -> 0.35, not below 0.2
    assert outcome == DOES_NOT_HOLD and "0.35" in text
    assert check(table({"d": (0.5, 0.3)}))[0] in UNDECIDED  # gap 0.4 -> 0.2 exactly
    assert check(table({"d": (0.1, 0.1)}))[0] in UNDECIDED  # no gap to shrink
    # gap 0.4 -> 0.2 + 2.1 SE (SE of D = 0.01 sqrt(2.5)): one-sided p of Student's t on Welch-Satterthwaite's
    # 8.8 degrees of freedom (four means of 4 repeats) about 0.033
    over = 0.3 + 2.1 * 0.01 * 2.5**0.5
    terms = [(0.5 * 0.01, 4), (0.5 * 0.01, 4), (0.01, 4), (0.01, 4)]
    assert 0.025 < linear_p_values(-2.1 * 0.01 * 2.5**0.5, terms)[3] < 0.05
    assert check(table({"d1": (0.5, over)}))[0] == DOES_NOT_HOLD
    assert check(table({"d1": (0.5, over), "d2": (0.5, 0.3)}))[0] in UNDECIDED  # Holm: 0.033 > 0.025

def test_trend_and_minimum_checks():
    means = {2: 0.5, 4: 0.2, 6: 0.1, 8: 0.3, 12: 0.6}
    rows = [{"dataset": "d", "method": "P", "degree": m, "metric": "ks", "mean": v, "se": 0.01}
            for m, v in means.items()]
    table = ResultsTable([{"std": 0.0, "count": 4, "failed": 0, **r} for r in rows],
                         ["dataset", "method", "degree", "metric", "mean", "std", "se", "count", "failed"])
    assert paper_checks.MinimumWithinCheck("P", ("ks",), "degree", 5, 8)(table)[0] == HOLDS
    assert paper_checks.MinimumWithinCheck("P", ("ks",), "degree", 10, 12)(table)[0] == DOES_NOT_HOLD
    assert paper_checks.TrendCheck("P", ("ks",), "degree")(table)[0] == DOES_NOT_HOLD  # rises after m = 6
