"""Issue 18 item 2: JointExp (Gillenwater, Joseph & Kulesza 2021) in ``central.quantiles(method="jointexp")``.

The sampler's law is checked exactly against the exponential mechanism written out by brute
force on tiny data sets (every tuple of intervals), and its privacy by the exact density ratio
of neighbouring data sets (add or remove one record) on the common refinement of their intervals.
"""

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from dpdist import central
from dpdist.central import joint_exp as je
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError, OutOfDomainError

BOUNDS = (0.0, 1.0)


def _runs(tuple_):
    """(interval, multiplicity) of a sorted tuple of interval indices."""
    values, counts = np.unique(np.asarray(tuple_), return_counts=True)
    return zip(values.tolist(), counts.tolist())


def _log_volume(widths, tuple_):
    """log of the volume of sorted outputs with o_j in interval tuple_[j]: prod w^r / r!."""
    return sum(r * math.log(widths[i]) - gammaln(r + 1) for i, r in _runs(tuple_))


def _brute_force(x, q, epsilon):
    """{tuple: probability} of the exponential mechanism of the paper, by enumeration."""
    x = np.sort(np.asarray(x, dtype=float))
    n, m = x.size, len(q)
    widths = np.diff(np.concatenate([[BOUNDS[0]], x, [BOUNDS[1]]]))
    gaps = np.diff(np.concatenate([[0.0], q, [1.0]]))
    beta = epsilon / (2 * 2 * (1 - gaps.min()))
    logs = {}
    for tuple_ in itertools.combinations_with_replacement(range(n + 1), m):
        if any(widths[i] == 0 for i in tuple_):
            continue
        ranks = np.array([0, *tuple_, n])
        utility = -np.sum(np.abs(np.diff(ranks) - n * gaps))
        logs[tuple_] = beta * utility + _log_volume(widths, tuple_)
    total = logsumexp(list(logs.values()))
    return {key: math.exp(value - total) for key, value in logs.items()}


def _sampler_log_probability(tables, tuple_):
    """log probability that the backward sampler of ``tables`` draws the interval tuple ``tuple_``."""
    j, last, first, total = tables.m - 1, tables.size - 1, True, 0.0
    while j >= 0:
        ks, weights = tables.step_log_weights(j, last, first)
        interval = tuple_[j]
        k = 0
        while j - k - 1 >= 0 and tuple_[j - k - 1] == interval:
            k += 1
        rows = np.flatnonzero(ks == k)
        if rows.size == 0:
            return -np.inf
        total += weights[rows[0], interval] - logsumexp(weights)
        j, last, first = j - k - 1, interval, False
    return total


@pytest.mark.parametrize(
    "x, q, epsilon",
    [
        ([0.1, 0.35, 0.35, 0.8], [0.25, 0.5, 0.75], 1.0),  # a tie: a zero-width interval
        ([0.05, 0.2, 0.6, 0.9, 0.93], [0.1, 0.7], 0.1),  # small epsilon: repeats are likely
        ([0.0, 0.3, 0.6, 1.0, 1.0], [0.3, 0.4, 0.5, 0.9], 3.0),  # points on both bounds
    ],
)
def test_sampler_law_is_the_exponential_mechanism(x, q, epsilon):
    q = np.array(q)
    tables = je.JointExpTables(np.sort(x), BOUNDS, q, epsilon)
    exact = _brute_force(x, q, epsilon)
    sampler = {tuple_: math.exp(_sampler_log_probability(tables, tuple_)) for tuple_ in exact}
    assert sum(sampler.values()) == pytest.approx(1.0, abs=1e-12)
    for tuple_, probability in exact.items():
        assert sampler[tuple_] == pytest.approx(probability, rel=1e-9, abs=1e-15), tuple_


def test_draws_follow_the_law():
    """Monte Carlo: the drawn interval tuples have the exact frequencies (chi-square, 2e4 draws)."""
    x, q, epsilon = np.array([0.1, 0.35, 0.6, 0.8]), np.array([0.3, 0.6]), 1.0
    exact = _brute_force(x, q, epsilon)
    rng = np.random.default_rng(11)
    counts = dict.fromkeys(exact, 0)
    draws = 20000
    points = np.concatenate([[0.0], x, [1.0]])
    for _ in range(draws):
        outputs, _ = je.joint_exp(x, BOUNDS, q, epsilon, rng)
        counts[tuple(np.searchsorted(points, outputs, side="right") - 1)] += 1
    expected = np.array([exact[key] for key in exact]) * draws
    observed = np.array([counts[key] for key in exact])
    keep = expected >= 5
    statistic = np.sum((observed[keep] - expected[keep]) ** 2 / expected[keep])
    # chi-square with keep.sum() - 1 degrees of freedom: mean df, sd sqrt(2 df); 6 sd above the mean
    df = keep.sum() - 1
    assert statistic < df + 6 * math.sqrt(2 * df)
    assert observed[~keep].sum() <= expected[~keep].sum() + 6 * math.sqrt(expected[~keep].sum() + 1)


def _log_density(x, q, epsilon, refined_left):
    """log density of JointExp on ``x`` at outputs in each sorted tuple of refined cells (by left end)."""
    x = np.sort(np.asarray(x, dtype=float))
    tables = je.JointExpTables(x, BOUNDS, q, epsilon)
    points = np.concatenate([[BOUNDS[0]], x, [BOUNDS[1]]])
    widths = np.diff(points)
    # the interval of x holding each refined cell (the last of tied points: the one with width)
    owner = np.minimum(np.searchsorted(points, refined_left, side="right") - 1, x.size)
    out = {}
    for cells in itertools.combinations_with_replacement(range(refined_left.size), len(q)):
        intervals = tuple(owner[list(cells)].tolist())
        out[cells] = _sampler_log_probability(tables, intervals) - _log_volume(widths, intervals)
    return out


def _worst_log_ratio(q, epsilon):
    x = np.array([0.2, 0.5, 0.5, 0.7])
    neighbours = [np.append(x, y) for y in (0.0, 0.05, 0.2, 0.5, 0.6, 0.95, 1.0)]
    neighbours += [np.delete(x, i) for i in range(x.size)]
    worst = 0.0
    for y in neighbours:
        breaks = np.unique(np.concatenate([[0.0, 1.0], x, y]))
        left = breaks[:-1]  # cells of positive width of the common refinement
        dx, dy = _log_density(x, q, epsilon, left), _log_density(y, q, epsilon, left)
        worst = max(worst, max(abs(dx[key] - dy[key]) for key in dx))
    return worst


@pytest.mark.parametrize("q", [[0.5], [0.25, 0.6], [0.2, 0.5, 0.9]])
@pytest.mark.parametrize("epsilon", [0.5, 2.0])
def test_neighbouring_densities_differ_by_at_most_e_epsilon(q, epsilon):
    worst = _worst_log_ratio(np.array(q), epsilon)
    assert worst <= epsilon * (1 + 1e-9)
    # the constant is not loose by a factor 2: some pair comes within a third of the bound
    assert worst >= epsilon / 3


def test_the_ratio_check_catches_a_sensitivity_too_small(monkeypatch):
    """With half of 2(1 - min gap) (the median: 0.5 instead of 1) the same check fails."""
    monkeypatch.setattr(je, "joint_exp_sensitivity", lambda q: 0.5)
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


def test_fft_product_matches_the_direct_sum(monkeypatch):
    x = np.sort(np.random.default_rng(4).beta(2, 5, 700))
    q = np.linspace(0.1, 0.9, 5)
    fast = je.JointExpTables(x, BOUNDS, q, 0.3)
    monkeypatch.setattr(je, "_DIRECT_LIMIT", 10**6)
    direct = je.JointExpTables(x, BOUNDS, q, 0.3)
    for row_fast, row_direct in zip(fast.start, direct.start):
        top = row_direct.max()
        # the FFT is accurate in absolute terms, to ~ n log2(n) 2^-52 of its largest term (~1e-12 here)
        np.testing.assert_allclose(np.exp(row_fast - top), np.exp(row_direct - top), rtol=0, atol=1e-10)
        relevant = row_direct > top - 10  # and to 1e-9 relative within e^-10 of the row maximum
        np.testing.assert_allclose(row_fast[relevant], row_direct[relevant], rtol=1e-9)


def test_rank_error_within_the_exponential_mechanism_bound():
    """At n = 10^4 every output's rank error is below the utility bound of the mechanism.

    With o_j in the interval I_{r_j} at the target rank r_j = n q_j (deciles of 10^4 points:
    integer, distinct) the utility is 0, so the normalizing constant is at least prod_j w_{r_j}
    (widths as shares of the bounds), while the sorted outputs of utility <= -s have mass at most
    e^{-beta s} / m!.  Hence Pr[-u >= s] <= e^{-beta s} / (m! prod_j w_{r_j}), and each rank
    error |#{x < o_j} - n q_j| is at most -u.  s is set for probability 1e-6 per release.
    """
    rng = np.random.default_rng(5)
    q = np.linspace(0.1, 0.9, 9)
    epsilon, bounds, n = 1.0, (-10.0, 10.0), 10**4
    for seed in range(5):
        x = np.sort(rng.normal(size=n))
        points = np.concatenate([[bounds[0]], x, [bounds[1]]])
        widths = np.diff(points) / (bounds[1] - bounds[0])
        ranks = np.rint(n * q).astype(int)
        beta = epsilon / (2 * je.joint_exp_sensitivity(q))
        s = (-np.sum(np.log(widths[ranks])) - gammaln(q.size + 1) + math.log(1e6)) / beta
        release = central.quantiles(x, epsilon, bounds, q, method="jointexp", rng=seed)
        below = np.searchsorted(x, release.values, side="left")
        assert np.max(np.abs(below - n * q)) <= s + 1  # +1: the snap to the grid may cross one point
        assert np.all(np.diff(release.values) >= 0)
        # and far better than the bound in practice: the mean rank error is under 0.5% (bound: s / n)
        assert s / n > 0.005 > np.mean(np.abs(below / n - q))


def test_release_fields_and_the_csprng():
    x = np.random.default_rng(6).lognormal(0, 1, 2000)
    release = central.quantiles(x, 0.5, (0, 50), [0.1, 0.5, 0.9], method="jointexp", clip=True)  # rng=None
    assert release.method == "jointexp" and release.low is None and release.high is None
    assert release.guarantee.neighbouring == "add-remove" and release.guarantee.epsilon == 0.5
    assert release.details["sensitivity"] == pytest.approx(2 * (1 - 0.1))
    assert np.all((release.values >= 0) & (release.values <= 50)) and np.all(np.diff(release.values) >= 0)
    step = 50 * 2.0**-32
    assert np.allclose(np.round(release.values / step) * step, release.values, rtol=0, atol=0)
    secure = central.quantiles(x, 0.5, (0, 50), [0.5], method="jointexp", clip=True, secure=True)
    assert secure.details["secure"]
    with pytest.raises(InvalidParameterError, match="rng"):
        central.quantiles(x, 0.5, (0, 50), [0.5], method="jointexp", clip=True, secure=True, rng=1)


def test_seeded_releases_repeat():
    x = np.random.default_rng(7).random(300)
    a = central.quantiles(x, 1.0, BOUNDS, [0.2, 0.8], method="jointexp", rng=9)
    b = central.quantiles(x, 1.0, BOUNDS, [0.2, 0.8], method="jointexp", rng=9)
    assert np.array_equal(a.values, b.values)


def test_the_memory_guard_reads_public_inputs_only(monkeypatch):
    # issue 27: with a budget of 1000 cells JointExp released at n = 101 and refused at n = 102 (m (n + 1) cells):
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
        release = central.quantiles(rng.random(n), 1.0, BOUNDS, q, method="jointexp", rng=n)
        assert release.details["grid_cells"] == 1024 and np.all(np.diff(release.values) >= 0)
    assert all(t.start.size <= 9 * (1024 + 2) for t in tables) and tables[-1].n == 5000
    monkeypatch.setattr(many_quantiles, "_JOINT_EXP_CELLS", 1000)  # fewer than 1024 cells per quantile: refused,
    for n in (0, 200):  # whatever the data
        with pytest.raises(InvalidParameterError, match="'q'.*at most 0 probabilities"):
            central.quantiles(np.linspace(0.1, 0.9, n), 1.0, BOUNDS, q, method="jointexp")


@pytest.mark.parametrize(
    "x, q, epsilon",
    [
        ([0.1, 0.35, 0.35, 0.8], [0.25, 0.5, 0.75], 1.0),
        ([0.0, 0.3, 0.3, 0.3, 0.6, 1.0, 1.0], [0.3, 0.4, 0.5, 0.9], 3.0),
        ([0.05, 0.2, 0.2, 0.9, 0.93], [0.1, 0.7], 0.1),
    ],
)
def test_distinct_values_give_the_same_law(x, q, epsilon, monkeypatch):
    """One interval per distinct value (the snapped release's tables) has the law of one per record."""
    x, q = np.sort(x), np.array(q)
    raw = je.JointExpTables(x, BOUNDS, q, epsilon)
    exact = _brute_force(x, q, epsilon)
    # raw interval i (positive width) is the distinct interval holding its left point
    values = np.unique(x)
    to_distinct = np.searchsorted(values, np.concatenate([[BOUNDS[0]], x]), side="right")
    for direct_limit in (512, 0):  # the direct sum over distinct values, and the FFT on the lattice of counts
        monkeypatch.setattr(je, "_DIRECT_LIMIT", direct_limit)
        distinct = je.JointExpTables(x, BOUNDS, q, epsilon, distinct=True)
        assert distinct.size == values.size + 1 and not distinct._on_lattice
        for tuple_, probability in exact.items():
            mapped = tuple(to_distinct[list(tuple_)].tolist())
            assert math.exp(_sampler_log_probability(distinct, mapped)) == pytest.approx(probability, rel=1e-9), tuple_
    assert raw.size == x.size + 1


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
