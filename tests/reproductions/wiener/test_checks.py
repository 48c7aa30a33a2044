"""The ``wiener`` reproduction's claim checks under their old names (``dpdist.reproductions.wiener.checks``)."""

import math

from dpdist import experiments
from dpdist.experiments import UNDERPOWERED
from dpdist.experiments._claims import DOES_NOT_HOLD, HOLDS, INCONCLUSIVE
from dpdist.experiments._table import ResultsTable

UNDECIDED = (INCONCLUSIVE, UNDERPOWERED)  # no decision


def _rows_table(rows):
    columns = ["dataset", "method", "epsilon", "dataset_bins", "metric_iteration", "metric", "mean", "std", "se",
               "count", "failed"]
    base = dict.fromkeys(columns) | {"std": 0.01, "count": 10, "failed": 0, "epsilon": 4.0, "dataset": "d"}
    return ResultsTable([base | row for row in rows], columns)

def test_converged_compares_an_early_iterate_with_the_last():
    from dpdist.reproductions.wiener.checks import Converged

    def table(early, se=0.001):
        return _rows_table([{"method": "p", "metric": "mse_iter", "metric_iteration": 5, "mean": early, "se": se},
                            {"method": "p", "metric": "mse_iter", "metric_iteration": 200, "mean": 1.0, "se": se}])

    check = Converged(("p",), 5, 200)
    assert check(table(1.02))[0] == HOLDS  # 2% above the last: inside 10%, many SE
    outcome, text = check(table(1.5))
    assert outcome == DOES_NOT_HOLD and "1.5" in text
    assert check(table(1.09, se=0.05))[0] == INCONCLUSIVE

def test_gain_grows_compares_log_gains_at_two_domain_sizes():
    from dpdist.reproductions.wiener.checks import GainGrows

    def table(gain_low, gain_high, se=0.001):
        rows = []
        for bins, gain in ((100, gain_low), (1000, gain_high)):
            rows += [{"method": "K", "metric": "mse", "dataset_bins": bins, "mean": 1.0, "se": se},
                     {"method": "K-DW", "metric": "mse", "dataset_bins": bins, "mean": 1.0 / gain, "se": se / gain}]
        return _rows_table(rows)

    check = GainGrows((("K", "K-DW"),), "dataset_bins", 100, 1000)
    assert check(table(1.5, 3.0))[0] == HOLDS
    assert check(table(3.0, 1.5))[0] == DOES_NOT_HOLD
    assert check(table(2.0, 2.001, se=0.05))[0] in UNDECIDED

def test_stuck_is_a_band_around_the_initial_value():
    from dpdist.reproductions.wiener.checks import Stuck

    def table(final, se=0.001):
        return _rows_table([{"method": "p", "metric": "mse_iter", "metric_iteration": 0, "mean": 1.0, "se": se},
                            {"method": "p", "metric": "mse_iter", "metric_iteration": 200, "mean": final, "se": se}])

    check = Stuck("p", {"epsilon": 4.0})
    assert check(table(1.02))[0] == HOLDS  # +2%, inside 10% by many SE
    assert check(table(0.98))[0] == HOLDS
    outcome, text = check(table(0.5))
    assert outcome == DOES_NOT_HOLD and "ratio 0.5 " in text
    assert check(table(1.5))[0] == DOES_NOT_HOLD
    assert check(table(1.09, se=0.05))[0] in UNDECIDED
    assert check(_rows_table([]))[0] == INCONCLUSIVE

def test_dw_helps_little_compares_log_gains_per_epsilon_with_holm():
    from dpdist.reproductions.wiener.checks import DwHelpsLittle

    def table(gains, se=0.01):
        """``gains``: {epsilon: (gain on the smooth data, gain on the permuted data)}; relative SE ``se``."""
        rows = []
        for epsilon, pair in gains.items():
            for dataset, gain in zip(("s", "p"), pair):
                rows += [{"method": "K", "metric": "mse", "dataset": dataset, "epsilon": epsilon, "mean": 1.0, "se": se},
                         {"method": "K-DW", "metric": "mse", "dataset": dataset, "epsilon": epsilon,
                          "mean": 1.0 / gain, "se": se / gain}]
        return _rows_table(rows)

    both = DwHelpsLittle("K", "s", "p", (1.0, 2.0))
    assert both(table({1.0: (3.0, 1.2), 2.0: (2.5, 1.1)}))[0] == HOLDS
    outcome, text = both(table({1.0: (1.2, 3.0), 2.0: (2.5, 1.1)}))
    assert outcome == DOES_NOT_HOLD and "epsilon=1.0, s vs p: 1.2 vs 3): 0.4 " in text
    assert both(table({1.0: (2.0, 2.0), 2.0: (2.0, 2.0)}))[0] == INCONCLUSIVE
    # the permuted gain 1.8 SE above the smooth one (SE of the log difference 2 x 0.01): p = 0.036 alone ...
    up = (2.0, 2.0 * math.exp(1.8 * 0.02))
    assert 0.025 < experiments.normal_p_values(-1.8)[1] < 0.05
    assert DwHelpsLittle("K", "s", "p", (1.0,))(table({1.0: up}))[0] == DOES_NOT_HOLD
    # ... and not significant after Holm over two epsilons (needs p < 0.025)
    assert both(table({1.0: up, 2.0: (2.0, 2.0)}))[0] == INCONCLUSIVE
    # like every check of the library, it judges the settings the run has (a partial run's missing
    # cells are listed in its report): epsilon 2 missing, epsilon 1 decides
    assert both(table({1.0: (3.0, 1.2)}))[0] == HOLDS
