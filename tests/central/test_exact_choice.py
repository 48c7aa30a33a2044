"""The exponential mechanism for a quantile on the public grid is sampled exactly."""

import decimal
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpdist.central import _exact_choice, _grid_quantile
from dpdist.central.noise import _dyadic_epsilon


def exact_group_law(cells, lo, hi, q, epsilon):
    """The mechanism's law over the groups of points sharing a rank, from the rationals at 40 digits."""
    starts, sizes, ranks = _grid_quantile.rank_groups(np.sort(cells), lo, hi)
    gamma = _dyadic_epsilon(epsilon) / 2
    target = Fraction(q) * len(cells)
    with decimal.localcontext(decimal.Context(prec=40)) as context:
        weights = []
        for size, rank in zip(sizes, ranks):
            exponent = gamma * abs(int(rank) - target)
            weights.append(int(size) * context.exp(-context.divide(exponent.numerator, exponent.denominator)))
        total = sum(weights)
        return starts, sizes, np.array([float(w / total) for w in weights])


INSTANCE = dict(cells=np.array([2, 2, 5, 9, 9, 9, 12, 15]), lo=0, hi=20, q=0.3, epsilon=1.3)


def test_groups_cover_every_point_once_with_its_rank():
    starts, sizes, ranks = _grid_quantile.rank_groups(np.sort(INSTANCE["cells"]), 0, 20)
    points = np.concatenate([np.arange(s, s + n) for s, n in zip(starts, sizes)])
    assert np.array_equal(points, np.arange(21))
    for start, size, rank in zip(starts, sizes, ranks):  # every point of a group has the group's rank
        for k in range(start, start + size):
            assert np.sum(INSTANCE["cells"] < k) == rank


@pytest.mark.parametrize("path", ["doubles", "refinement", "pooled"])
@pytest.mark.slow  # a law checked from repeated draws
def test_draws_follow_the_exact_law(path, monkeypatch):
    force_refinement = path == "refinement"
    if force_refinement:  # every group contends: the decimal path decides every draw
        monkeypatch.setattr(_exact_choice, "FLOAT_MARGIN", 1e6)
    if path == "pooled":  # groups more than 0.5 below the best race as one (and then among themselves)
        monkeypatch.setattr(_exact_choice, "FAR", 0.5)
    starts, sizes, law = exact_group_law(**INSTANCE)
    rng = np.random.default_rng(11)
    draws = 4000 if not force_refinement else 800
    points = np.array([_grid_quantile.exponential_quantile(np.sort(INSTANCE["cells"]), 0, 20, 0.3, 1.3, rng)
                       for _ in range(draws)])
    group = np.searchsorted(starts, points, side="right") - 1
    observed = np.bincount(group, minlength=starts.size)
    expected = law * draws
    keep = expected >= 5  # pool the rare groups so the chi-square approximation holds
    if not keep.all():
        observed = np.append(observed[keep], observed[~keep].sum())
        expected = np.append(expected[keep], expected[~keep].sum())
    # seeded: the p-value is a fixed number; 1e-3 is the test's false-alarm rate over seeds
    assert stats.chisquare(observed, expected).pvalue > 1e-3
    # within a group the point is uniform
    biggest = int(np.argmax(law * (sizes > 1)))
    inside = points[group == biggest] - starts[biggest]
    assert inside.min() >= 0 and inside.max() < sizes[biggest]


def test_refinement_separates_scores_that_doubles_cannot():
    # two groups with weights 1 and 1 + 1e-30: equal in doubles, and the decimal path orders them exactly
    def exact_score(index, context):
        return context.ln(decimal.Decimal(1) + (decimal.Decimal("1e-30") if index == 1 else 0))

    wins = sum(_exact_choice.certified_gumbel_max(np.zeros(2), 0.0, exact_score, np.random.default_rng(seed))
               for seed in range(400))
    assert abs(wins - 200) <= 4 * 10  # a fair coin up to 1e-30: 4 binomial standard errors


def test_float_margin_dominates_rounding():
    # the doubles of the scores against the 40-digit values of a hard instance: far inside the margin
    cells = np.sort(np.random.default_rng(3).integers(0, 2**32, 5000))
    starts, sizes, ranks = _grid_quantile.rank_groups(cells, 0, 2**32)
    gamma = _dyadic_epsilon(0.37) / 2
    target = Fraction(0.4375) * cells.size
    doubles = np.log(sizes.astype(float)) - float(gamma) * np.abs(ranks - float(target))
    with decimal.localcontext(decimal.Context(prec=40)) as context:
        worst = 0.0
        for index in range(0, sizes.size, 97):
            exponent = gamma * abs(int(ranks[index]) - target)
            exact = context.ln(int(sizes[index])) - context.divide(exponent.numerator, exponent.denominator)
            worst = max(worst, abs(float(exact - decimal.Decimal(doubles[index]))) / (abs(doubles[index]) + 1))
    assert worst < 2.0**-48 < _exact_choice.FLOAT_MARGIN * 2**5
