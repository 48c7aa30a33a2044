"""The ``sw_ems`` reproduction's claim checks: their old names (``dpdist.reproductions.sw_ems.checks``) and the library's checks its claims use."""


import numpy as np

from dpdist import experiments
from dpdist.experiments import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE, ResultsTable
from dpdist.reproductions.sw_ems import checks as paper_checks


def test_within_factor_holds_fails_and_is_inconclusive_by_standard_errors():
    grid = [_row("grid", m, b=b) for b, m in ((0.1, 1.0), (0.2, 0.8), (0.4, 1.3))]
    check = paper_checks.WithinFactor("w", "mi", ("grid",), 1.1)
    assert check(_table([*grid, _row("mi", 0.85)]))[0] == HOLDS  # 0.85 <= 1.1 * 0.8
    outcome, explanation = check(_table([*grid, _row("mi", 1.2)]))  # 0.32 above, SE ~ 0.015
    assert outcome == DOES_NOT_HOLD and "b=0.2" in explanation
    assert check(_table([*grid, _row("mi", 0.89)]))[0] == INCONCLUSIVE  # 0.01 above: < 2 SE

def test_argmin_is_with_quorum():
    rows = [_row("m", 1.0, bins=256), _row("m", 2.0, bins=1024)]
    rows += [_row("m", 1.5, epsilon=2.0, bins=256), _row("m", 1.0, epsilon=2.0, bins=1024)]
    assert paper_checks.ArgminIs("w", "m", "bins", 256)(_table(rows))[0] == DOES_NOT_HOLD
    assert paper_checks.ArgminIs("w", "m", "bins", 256, quorum=0.5)(_table(rows))[0] == HOLDS

def _sampled_settings(rng, means, settings, repeats=5):
    """Summary rows of ``repeats`` unit-variance normal draws around each mean (``bins`` labels) in each of
    ``settings`` (epsilon 0, 1, ...).  One draw of every setting's numbers, setting by setting and mean by mean: the
    same numbers as a draw per row (the false-alarm check builds 9,600 rows)."""
    draws = rng.normal(0.0, 1.0, (settings, len(means), repeats)) + np.array(list(means.values()))[:, None]
    averages, stds = draws.mean(axis=2), draws.std(axis=2, ddof=1)
    errors = stds / np.sqrt(repeats)
    return [_row("m", averages[e, i], epsilon=float(e), bins=bins, se=errors[e, i], count=repeats, std=stds[e, i])
            for e in range(settings) for i, bins in enumerate(means)]

def test_argmin_is_false_alarm_rate_on_ties_is_at_most_alpha():
    # every bins value ties in all 8 settings: "does not hold" is a false alarm, kept <= 5 %
    # (Bonferroni within a setting, Holm across settings; binomial bound, 3 SE)
    rng = np.random.default_rng(5)
    check = paper_checks.ArgminIs("w", "m", "bins", 256)
    claims, false_alarms = 400, 0
    for _ in range(claims):
        false_alarms += check(_table(_sampled_settings(rng, {64: 0.0, 256: 0.0, 1024: 0.0}, 8)))[0] == DOES_NOT_HOLD
    assert false_alarms / claims <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / claims)
    # and a clear argmin (4 SD below the others, 5 repeats) holds in every setting
    assert check(_table(_sampled_settings(rng, {64: 4.0, 256: 0.0, 1024: 4.0}, 8)))[0] == HOLDS

def test_more_variable_decides_by_the_f_test_with_a_quorum():
    def rows(std_em, std_ems, settings=4, count=20):
        out = []
        for e in range(settings):
            out += [_row("em", 1.0, epsilon=float(e), std=std_em, count=count),
                    _row("ems", 1.0, epsilon=float(e), std=std_ems, count=count)]
        return out

    check = paper_checks.MoreVariable("w", "em", "ems")
    assert check(_table(rows(0.3, 0.1)))[0] == HOLDS  # F = 9 on (19, 19) df: p ~ 1e-5 in every setting
    assert check(_table(rows(0.1, 0.3)))[0] == DOES_NOT_HOLD
    # equal spread: no evidence either way (and 20 repeats cannot show a 1.5x spread in 2 of 4 settings)
    assert check(_table(rows(0.1, 0.1)))[0] in (INCONCLUSIVE, experiments.UNDERPOWERED)
    # quorum: twice the spread in 2 of 4 settings is "most" with quorum 0.5
    mixed = rows(0.3, 0.1, settings=2) + [_row(m, 1.0, epsilon=e, std=0.1, count=20) for e in (5.0, 6.0) for m in ("em", "ems")]
    assert check(_table(mixed))[0] == HOLDS
    assert paper_checks.MoreVariable("w", "em", "ems", quorum=1.0)(_table(mixed))[0] in (INCONCLUSIVE,
                                                                                      experiments.UNDERPOWERED)


_COLUMNS = ["dataset", "method", "epsilon", "b", "bins", "metric", "mean", "std", "se", "count", "failed"]

def _table(rows):
    """A summary table with standard error 0.01 in every row."""
    base = dict.fromkeys(_COLUMNS) | {"se": 0.01, "std": 0.1, "count": 100, "failed": 0}
    return ResultsTable([base | row for row in rows], _COLUMNS)

def _row(method, mean, epsilon=1.0, **extra):
    return {"dataset": "d", "method": method, "epsilon": epsilon, "metric": "w", "mean": mean, **extra}

def test_all_of_combines_outcomes():
    table = _table([_row("a", 1.0), _row("b", 2.0), _row("c", 1.0)])
    assert experiments.lowest_of("w", "a", ["b"])(table)[0] == HOLDS
    assert experiments.lowest_of("w", "a", ["b", "c"])(table)[0] == INCONCLUSIVE
    assert experiments.lowest_of("w", "b", ["a", "c"])(table)[0] == DOES_NOT_HOLD

def test_better_than_in_at_least_k_settings():
    table = _table([_row("a", 1.0), _row("b", 2.0), _row("a", 2.0, epsilon=2.0), _row("b", 1.0, epsilon=2.0),
                    _row("a", 2.0, epsilon=3.0), _row("b", 1.0, epsilon=3.0)])
    assert experiments.better_than("w", "a", "b", min_wins=1)(table)[0] == HOLDS  # a wins at eps = 1
    assert experiments.better_than("w", "a", "b")(table)[0] == DOES_NOT_HOLD
    assert experiments.better_than("w", "a", "b", min_wins=2)(table)[0] == DOES_NOT_HOLD  # loses 2 of 3: > 3 - 2
    never = _table([_row("a", 2.0, epsilon=float(e)) for e in range(3)] + [_row("b", 1.0, epsilon=float(e)) for e in range(3)])
    assert experiments.better_than("w", "a", "b", min_wins=1)(never)[0] == DOES_NOT_HOLD
