"""JointExp (Gillenwater, Joseph & Kulesza 2021) in ``central.quantiles(method="jointexp")``.

The mechanism runs on the public grid with an exact sampler (no FFT, certified error bounds, certified
Gumbel races): the tests of its law use the grid's base measure
(``1 / prod r_p!`` on sorted point tuples, the grid version of the paper's Lebesgue measure).  The
law is checked against the mechanism written out by brute force on tiny grids (every sorted tuple
of points), the sampler's decimal and long-double paths against the same law, and privacy by the
exact density ratio of neighbouring data sets (add or remove one record) at every output.
"""

import decimal
import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from dpdist import central
from dpdist.central import _exact_choice
from dpdist.central import joint_exp as je
from dpdist.central._grid_quantile import rank_groups, to_cells
from dpdist.central.many_quantiles import joint_exp_grid
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError, OutOfDomainError

BOUNDS = (0.0, 1.0)


def _brute_force_points(cells, grid, q, epsilon):
    """{sorted point tuple: log weight} of the mechanism on a tiny grid, by enumeration (normalized)."""
    cells = np.sort(np.asarray(cells))
    n, m = cells.size, len(q)
    gaps = np.diff(np.concatenate([[0.0], q, [1.0]]))
    beta = je.joint_exp_beta(np.asarray(q), epsilon)
    logs = {}
    for points in itertools.combinations_with_replacement(range(grid + 1), m):
        below = np.array([0, *(np.sum(cells < p) for p in points), n])
        utility = -np.sum(np.abs(np.diff(below) - n * gaps))
        base = -sum(gammaln(points.count(p) + 1) for p in set(points))
        logs[points] = beta * utility + base
    total = logsumexp(list(logs.values()))
    return {key: value - total for key, value in logs.items()}


def _group_law(tables, cells, grid, q, epsilon):
    """{tuple of groups: probability} of the brute-force law."""
    starts = tables.starts
    law = {}
    for points, log_p in _brute_force_points(cells, grid, q, epsilon).items():
        groups = tuple(int(np.searchsorted(starts, p, side="right") - 1) for p in points)
        law[groups] = law.get(groups, 0.0) + math.exp(log_p)
    return law


def _sampler_log_probability(tables, groups):
    """log probability that the backward sampler of ``tables`` draws the tuple of groups ``groups``."""
    j, last, first, total = tables.m - 1, tables.size - 1, True, 0.0
    while j >= 0:
        weights, _ = tables.step_log_weights(j, last, first)
        group = groups[j]
        k = 0
        while j - k - 1 >= 0 and groups[j - k - 1] == group:
            k += 1
        total += weights[k, group] - logsumexp(weights)
        j, last, first = j - k - 1, group, False
    return total


CASES = [
    ([1, 3, 3, 7], 10, [0.25, 0.5, 0.75], 1.0),  # a tie
    ([0, 2, 6, 9, 9], 10, [0.1, 0.7], 0.1),  # small epsilon: repeats are likely
    ([0, 3, 6, 9, 9], 10, [0.3, 0.4, 0.5, 0.9], 3.0),  # records in the first and the last cell
    ([], 6, [0.3, 0.6], 1.0),  # no record: one group, every target 0 (a run may not link a group to itself)
    ([4], 6, [0.2, 0.5, 0.7], 0.5),
]


@pytest.mark.parametrize("cells, grid, q, epsilon", CASES)
def test_sampler_law_is_the_exponential_mechanism(cells, grid, q, epsilon):
    q = np.array(q)
    tables = je.JointExpTables(np.sort(cells), grid, q, epsilon)
    exact = _group_law(tables, cells, grid, q, epsilon)
    sampler = {groups: math.exp(_sampler_log_probability(tables, groups)) for groups in exact}
    assert sum(sampler.values()) == pytest.approx(1.0, abs=1e-12)
    for groups, probability in exact.items():
        assert sampler[groups] == pytest.approx(probability, rel=1e-9, abs=1e-15), groups


@pytest.mark.parametrize("cells, grid, q, epsilon", CASES)
def test_decimal_and_long_double_tables_agree_within_their_bounds(cells, grid, q, epsilon):
    q = np.array(q)
    tables = je.JointExpTables(np.sort(cells), grid, q, epsilon)
    long = je.JointExpTables(np.sort(cells), grid, q, epsilon, dtype=np.longdouble)
    exact = je._DecimalJointExp(tables, 40)
    for j in range(tables.m):
        for i in range(tables.size):
            truth = float(exact.total[j][i].ln()) if exact.total[j][i] > 0 else -np.inf
            if np.isfinite(truth):
                assert abs(tables.total[j, i] - truth) <= tables.radius[j]
                assert abs(float(long.total[j, i]) - truth) <= long.radius[j] + 1e-15 * (abs(truth) + 1)
    assert np.all(long.radius < tables.radius)


def _chi_square_of_draws(cells, grid, q, epsilon, draws, seed):
    q = np.array(q)
    tables = je.JointExpTables(np.sort(cells), grid, q, epsilon)
    exact = _group_law(tables, cells, grid, q, epsilon)
    rng = np.random.default_rng(seed)
    counts = dict.fromkeys(exact, 0)
    for _ in range(draws):
        points, _ = je.joint_exp(np.sort(cells), grid, q, epsilon, rng)
        assert np.all(np.diff(points) >= 0)
        counts[tuple(int(np.searchsorted(tables.starts, p, side="right") - 1) for p in points)] += 1
    expected = np.array([exact[key] for key in exact]) * draws
    observed = np.array([counts[key] for key in exact])
    keep = expected >= 5
    statistic = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
    # chi-square with keep.sum() - 1 degrees of freedom: mean df, sd sqrt(2 df); 6 sd above the mean
    df = keep.sum() - 1
    assert statistic < df + 6 * math.sqrt(2 * df)
    assert observed[~keep].sum() <= expected[~keep].sum() + 6 * math.sqrt(expected[~keep].sum() + 1)


# the fast loop draws a quarter as many (the same chi-square bound, at its own draws); the full suite all of them
FULL = pytest.mark.slow


@pytest.mark.parametrize("draws", [1000, pytest.param(4000, marks=FULL)])
@pytest.mark.slow  # 0.47 CPU-s: a law checked from repeated draws
def test_draws_follow_the_law(draws):
    """Monte Carlo: the drawn tuples of groups have the exact frequencies (chi-square)."""
    _chi_square_of_draws([1, 3, 6, 8], 10, [0.3, 0.6], 1.0, draws, 11)


@pytest.mark.parametrize("share", [0.25, pytest.param(1.0, marks=FULL)], ids=["quarter", "full"])
@pytest.mark.parametrize("path", ["long double", "decimal"])
@pytest.mark.slow  # 0.88 CPU-s: a law checked from repeated draws
def test_draws_follow_the_law_on_the_refinement_paths(path, share, monkeypatch):
    """Every race goes past the doubles: to the long-double tables, or also to the decimal ones."""
    original = je.JointExpTables.step_error

    def loose(self, j, first, largest):  # the doubles' bound made useless: every candidate contends
        return 1e6 if self.dtype == np.float64 else original(self, j, first, largest)

    monkeypatch.setattr(je.JointExpTables, "step_error", loose)
    if path == "decimal":
        monkeypatch.setattr(_exact_choice, "FLOAT_MARGIN", 1e6)
    _chi_square_of_draws([1, 3, 6, 8], 10, [0.3, 0.6], 1.0, int(share * (600 if path == "decimal" else 1500)), 12)


def _worst_log_ratio(q, epsilon):
    x = [2, 5, 5, 7]
    grid = 10
    neighbours = [x + [y] for y in (0, 1, 2, 5, 6, 9)] + [x[:i] + x[i + 1 :] for i in range(len(x))]
    here = _brute_force_points(x, grid, q, epsilon)
    worst = 0.0
    for y in neighbours:
        there = _brute_force_points(y, grid, q, epsilon)
        worst = max(worst, max(abs(here[key] - there[key]) for key in here))
    return worst


@pytest.mark.parametrize("q", [[0.5], [0.25, 0.6], [0.2, 0.5, 0.9]])
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_neighbouring_densities_differ_by_at_most_e_epsilon(q, epsilon):
    worst = _worst_log_ratio(np.array(q), epsilon)
    assert worst <= epsilon * (1 + 1e-9)
    # the constant is not loose by a factor 2: some pair comes within a third of the bound
    assert worst >= epsilon / 3


def test_the_ratio_check_catches_a_sensitivity_too_small(monkeypatch):
    """With twice the beta (half of 2(1 - min gap)) the same check fails."""
    original = je.joint_exp_beta
    monkeypatch.setattr(je, "joint_exp_beta", lambda q, epsilon: 2 * original(q, epsilon))
    assert _worst_log_ratio(np.array([0.5]), 1.0) > 1.0


def test_sensitivity_is_the_largest_utility_change():
    """2(1 - min gap) bounds |u(X, o) - u(X', o)| under add/remove, and is attained."""
    rng = np.random.default_rng(3)
    q = np.array([0.2, 0.5, 0.9])
    gaps = np.diff(np.concatenate([[0.0], q, [1.0]]))
    largest = 0.0
    for _ in range(300):
        x = rng.random(rng.integers(3, 12))
        y = np.append(x, rng.random())
        o = np.sort(rng.random(q.size))
        utilities = []
        for data in (x, y):
            below = np.array([0, *np.searchsorted(np.sort(data), o), data.size])
            utilities.append(-np.sum(np.abs(np.diff(below) - data.size * gaps)))
        largest = max(largest, abs(utilities[0] - utilities[1]))
    assert largest <= je.joint_exp_sensitivity(q) + 1e-12
    assert largest >= je.joint_exp_sensitivity(q) - 1e-12  # attained on this sample
    assert je.joint_exp_beta(q, 1.0) <= 1.0 / (2 * je.joint_exp_sensitivity(q))


def test_sums_add_positive_terms_only_and_keep_relative_accuracy():
    rng = np.random.default_rng(4)
    values = rng.normal(0, 200, 5000)
    values[::7] = -np.inf
    with decimal.localcontext(decimal.Context(prec=40)):
        exact = [decimal.Decimal(float(v)).exp() if np.isfinite(v) else decimal.Decimal(0) for v in values]
        left = np.sort(rng.integers(0, 5000, 300))
        right = np.minimum(left + rng.integers(-3, 4000, 300), 4999)
        got = je._range_logsumexp(values, left, right)
        for lo, hi, g in zip(left, right, got):
            total = sum(exact[lo : hi + 1], decimal.Decimal(0)) if lo <= hi else decimal.Decimal(0)
            if total == 0:
                assert g == -np.inf
            else:
                # relative accuracy, not accuracy relative to the array's largest term
                assert abs(g - float(total.ln())) < 1e-9
        cumulative = je._cumulative_log_sum(values)
        running = decimal.Decimal(0)
        for index in range(0, 5000, 37):
            running = sum(exact[: index + 1], decimal.Decimal(0))
            if running > 0:
                assert abs(cumulative[index] - float(running.ln())) < 1e-9


@pytest.mark.slow  # 0.38 CPU-s: repeated releases
def test_rank_error_within_the_exponential_mechanism_bound():
    """At n = 10^4 every output's rank error is below the utility bound of the mechanism.

    With o_j in the group of points at the target rank r_j = n q_j (deciles of 10^4 points:
    integer, distinct) the utility is 0, so the normalizing constant is at least prod_j s_{r_j}
    (the groups' numbers of points), while the sorted outputs of utility <= -s have mass at most
    e^{-beta s} (G + 1)^m / m!.  Hence Pr[-u >= s] <= e^{-beta s} (G + 1)^m / (m! prod_j s_{r_j}),
    and each rank error |#{x < o_j} - n q_j| is at most -u.  s is set for probability 1e-6 per release.
    """
    rng = np.random.default_rng(5)
    q = np.linspace(0.1, 0.9, 9)
    epsilon, bounds, n = 1.0, (-10.0, 10.0), 10**4
    grid = joint_exp_grid(bounds, q.size)
    for seed in range(5):
        x = np.sort(rng.normal(size=n))
        _, sizes, group_ranks = rank_groups(np.sort(to_cells(x, bounds, grid)), 0, grid)
        ranks = np.rint(n * q).astype(int)
        beta = je.joint_exp_beta(q, epsilon)
        at_target = sizes[np.searchsorted(group_ranks, ranks)]
        s = (q.size * math.log(grid + 1) - gammaln(q.size + 1) - np.sum(np.log(at_target)) + math.log(1e6)) / beta
        release = central.quantiles(x, q, epsilon=epsilon, bounds=bounds, method="jointexp", rng=seed)
        below = np.searchsorted(x, release.values, side="left")
        assert np.max(np.abs(below - n * q)) <= s + 1  # +1: the snap to the grid may cross one point
        assert np.all(np.diff(release.values) >= 0)
        # and far better than the bound in practice: the mean rank error is under 0.5% (bound: s / n)
        assert s / n > 0.005 > np.mean(np.abs(below / n - q))


def test_release_fields_and_the_csprng():
    x = np.random.default_rng(6).lognormal(0, 1, 2000)
    release = central.quantiles(x, [0.1, 0.5, 0.9], epsilon=0.5, bounds=(0, 50), method="jointexp", clip=True)  # rng=None
    assert release.method == "jointexp" and release.low is None and release.high is None
    assert release.guarantee.neighbouring == "add-remove" and release.guarantee.epsilon == 0.5
    assert release.details["sensitivity"] == pytest.approx(2 * (1 - 0.1))
    assert np.all((release.values >= 0) & (release.values <= 50)) and np.all(np.diff(release.values) >= 0)
    step = 50 / release.details["grid_cells"]  # the outputs are points of the public grid
    assert np.allclose(np.round(release.values / step) * step, release.values, rtol=0, atol=1e-12)
    secure = central.quantiles(x, [0.5], epsilon=0.5, bounds=(0, 50), method="jointexp", clip=True, secure=True)
    assert secure.details["secure"]
    with pytest.raises(InvalidParameterError, match="rng"):
        central.quantiles(x, [0.5], epsilon=0.5, bounds=(0, 50), method="jointexp", clip=True, secure=True, rng=1)


def test_seeded_releases_repeat():
    x = np.random.default_rng(7).random(300)
    a = central.quantiles(x, [0.2, 0.8], epsilon=1.0, bounds=BOUNDS, method="jointexp", rng=9)
    b = central.quantiles(x, [0.2, 0.8], epsilon=1.0, bounds=BOUNDS, method="jointexp", rng=9)
    assert np.array_equal(a.values, b.values)


def test_the_memory_guard_reads_public_inputs_only(monkeypatch):
    # with a budget of 1000 cells JointExp released at n = 101 and refused at n = 102 (m (n + 1) cells):
    # a refusal that told the two data sets apart.  Now the data are snapped to a grid of budget // m - 2 cells
    # (public), the tables never exceed the budget, and only the number of quantiles can be refused.
    from dpdist.central import many_quantiles

    q = np.linspace(0.1, 0.9, 9)
    monkeypatch.setattr(many_quantiles, "_JOINT_EXP_CELLS", 9 * (1024 + 2))
    tables = []
    original = many_quantiles.joint_exp

    def spy(*args, **kwargs):
        outputs, table = original(*args, **kwargs)
        tables.append(table)
        return outputs, table

    monkeypatch.setattr(many_quantiles, "joint_exp", spy)
    rng = np.random.default_rng(2)
    for n in (0, 1, 101, 102, 5000):
        release = central.quantiles(rng.random(n), q, epsilon=1.0, bounds=BOUNDS, method="jointexp", rng=n)
        assert release.details["grid_cells"] == 1024 and np.all(np.diff(release.values) >= 0)
    assert all(t.start.size <= 9 * (1024 + 2) for t in tables) and tables[-1].n == 5000
    monkeypatch.setattr(many_quantiles, "_JOINT_EXP_CELLS", 1000)  # fewer than 1024 cells per quantile: refused,
    for n in (0, 200):  # whatever the data
        with pytest.raises(InvalidParameterError, match="'q'.*at most 0 probabilities"):
            central.quantiles(np.linspace(0.1, 0.9, n), q, epsilon=1.0, bounds=BOUNDS, method="jointexp")


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"q": [0.5, 0.3]}, InvalidParameterError, "increasing"),
        ({"q": [0.5, 1.0]}, InvalidParameterError, "between 0 and 1"),
        ({"epsilon": -1.0}, InvalidPrivacyParameterError, "epsilon"),
        ({"bounds": (1.0, 0.0)}, InvalidParameterError, "bounds"),
        ({"x": [0.5, 2.0], "clip": False}, OutOfDomainError, "x"),  # strict mode; the default clips
        ({"x": [0.5, np.nan], "clip": False}, OutOfDomainError, "x"),
    ],
)
def test_bad_input_is_named(kwargs, error, match):
    arguments = {"x": np.linspace(0.1, 0.9, 20), "epsilon": 1.0, "bounds": BOUNDS, "q": [0.5], **kwargs}
    with pytest.raises(error, match=match):
        central.quantiles(method="jointexp", **arguments)
