"""Slice quantiles (Imola et al., NeurIPS 2025) as ``quantiles(method="slice")``."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from dpdist import central
from dpdist.central import slice_quantiles as sq
from dpdist.central.noise import _dyadic_epsilon
from dpdist.errors import InvalidParameterError, InvalidPrivacyParameterError


# ---------------------------------------------------------------- the counting tree
@pytest.mark.parametrize("m,k", [(1, 2), (2, 3), (7, 2), (9, 10), (49, 8), (99, 10), (100, 3)])
def test_tree_prefixes_and_the_shift_of_one_leaf(m, k):
    tree = sq.CountingTree(m, 1.0, branching=k)
    matrix = tree.matrix()
    sizes = np.concatenate([np.full(m // k ** (tree.height - level), k ** (tree.height - level))
                            for level in range(1, tree.height + 1)])
    assert np.array_equal(matrix @ sizes, np.arange(1, m + 1))  # row i covers exactly the leaves 1..i
    assert np.array_equal(matrix.sum(axis=1), tree.terms)
    for leaf in range(1, m + 1):  # the nodes holding the leaf: at most H, and they move Z by the step at it
        starts = np.concatenate([np.arange(m // s) * s for s in (k ** (tree.height - level)
                                                                  for level in range(1, tree.height + 1))])
        holding = ((starts < leaf) & (leaf <= starts + sizes)).astype(np.int64)
        assert holding.sum() <= tree.sensitivity
        assert np.array_equal(matrix @ holding, (np.arange(1, m + 1) >= leaf).astype(np.int64))


@pytest.mark.parametrize("m", [2, 9, 49])
def test_tree_noise_has_the_scale_of_its_sensitivity(m):
    # Var Z_i = T_i Var(node), node ~ discrete Laplace exp(-eps'|z|/H); a halved scale has a quarter of the variance
    tree = sq.CountingTree(m, 0.5)
    draws = tree.sample(np.random.default_rng(3), 4000)
    b = math.exp(-float(_dyadic_epsilon(0.5)) / tree.height)
    expected = tree.terms * 2 * b / (1 - b) ** 2
    # standard error of a sample variance: sqrt((kurtosis - 1) / N) of it, kurtosis <= 6 for a discrete Laplace sum
    tolerance = 5 * math.sqrt(5 / draws.shape[0])
    assert np.all(np.abs(draws.var(axis=0) / expected - 1) < tolerance)


def test_tail_bound_holds_empirically():
    tree = sq.CountingTree(49, 0.5)
    bound = tree.bound_for(0.05)
    exceed = np.mean(np.abs(tree.sample(np.random.default_rng(4), 2000)).max(axis=1) > bound)
    # the Chernoff-union bound is loose: far fewer than 5% exceed it (binomial sd at 5% of 2000 draws: 0.5%)
    assert exceed <= 0.05
    assert tree.tail_probability(bound) <= 0.05 < tree.tail_probability(bound - 1)


# ---------------------------------------------------------------- the exact law of a tiny release
def _em_laws(window, grid, h, epsilon):
    """Row ``hi``: the exponential mechanism's law over the points ``0 .. hi`` for the slice ``window``."""
    gamma = float(_dyadic_epsilon(epsilon)) / 2
    points = np.arange(grid + 1)
    target = (2 * h + 1) / 2
    # closed ranks: point k stands for the records of cell k, [#{c < k}, #{c <= k}]; the range's last point hi
    # for none (the records from cell hi on lie outside the range [lo, hi))
    below = np.searchsorted(np.sort(window), points, side="left")
    through = np.searchsorted(np.sort(window), points, side="right")
    inner = np.exp(-gamma * np.maximum(0, np.maximum(below - target, target - through)))
    last = np.exp(-gamma * np.abs(below - target))
    laws = np.tril(np.broadcast_to(inner, (grid + 1, grid + 1))).copy()
    laws[points, points] = last
    return laws / laws.sum(axis=1, keepdims=True)


def _release_law(cells, ranks, z_range, tree_decay, plan, grid):
    """P(outputs, noise in z_range) of a two-quantile release on a grid of `grid` cells (noise of a k = 3 tree:
    Z_1 = a, Z_2 = a + b); entry [o0, o1]."""
    h = plan.half_width

    def node(v):  # discrete Laplace pmf
        return math.tanh(tree_decay / 2) * math.exp(-tree_decay * abs(v))

    law = np.zeros((grid + 1, grid + 1))
    cells = np.sort(cells)
    laws = {c: _em_laws(cells[c - h: c + h + 1], grid, h, plan.epsilon_exponential)
            for c in range(h, cells.size - h)}
    for z1, z2 in itertools.product(z_range, z_range):
        weight = node(z1) * node(z2 - z1)
        low, high = np.clip(np.array(ranks) + [z1, z2], h, cells.size - 1 - h)
        law += weight * laws[low].T * laws[high][grid][None, :]  # o1 first on [0, grid], then o0 on [0, o1]
    return law


def _tiny_plan(epsilon_counting=0.5, epsilon_exponential=0.5, h=1, bound=3):
    tree = sq.CountingTree(2, epsilon_counting)
    assert tree.k == 3 and tree.height == 1
    ramp = math.log1p(1 / (2 * h + 2))
    return sq.SlicePlan(np.array([8, 21]), h, bound, tree, epsilon_counting, epsilon_exponential, ramp,
                        tree.tail_probability(bound), None)


CELLS = np.random.default_rng(5).integers(0, 8, 30)
GRID = 8


def _worst_log_ratio(cells, grid, plan):
    """max over inserted values and outputs of log P_{X'}(o, good noise) / P_X(o), and of the removal, ranks fixed."""
    decay = float(_dyadic_epsilon(plan.epsilon_counting)) / plan.tree.height
    good = range(-plan.noise_bound, plan.noise_bound + 1)
    wide = range(-plan.noise_bound - 1, plan.noise_bound + 2)  # the proof maps good noise into these
    base_good = _release_law(cells, plan.ranks, good, decay, plan, grid)
    base_wide = _release_law(cells, plan.ranks, wide, decay, plan, grid)
    worst = -math.inf
    for inserted in range(grid):
        bigger = np.append(cells, inserted)
        for numerator, denominator in ((_release_law(bigger, plan.ranks, good, decay, plan, grid), base_wide),
                                       (base_good, _release_law(bigger, plan.ranks, wide, decay, plan, grid))):
            possible = denominator > 0
            assert np.all(numerator[~possible] == 0)  # o0 > o1 never happens
            worst = max(worst, float(np.max(np.log(numerator[possible] / denominator[possible]))))
    return worst


@pytest.mark.parametrize("cells,grid,epsilons", [
    (CELLS, GRID, (0.5, 0.5)),  # ties: slices share values
    (np.random.default_rng(6).permutation(32)[:30], 32, (1.0, 2.0)),  # distinct cells, a sharp mechanism
])
def test_one_insertion_costs_at_most_epsilon_step_on_good_noise(cells, grid, epsilons):
    # the module docstring's bound, pointwise on every output, computed exactly for every inserted value
    plan = _tiny_plan(*epsilons)
    assert _worst_log_ratio(cells, grid, plan) <= plan.epsilon_step + 1e-9


def _tree_law(tree, decay, reach):
    """P(Z = z) for every z reached by node values within +-reach (a dict), from the tree's matrix."""
    matrix = tree.matrix()
    values = np.arange(-reach, reach + 1)
    pmf = math.tanh(decay / 2) * np.exp(-decay * np.abs(values))
    nodes = np.indices((values.size,) * matrix.shape[1]).reshape(matrix.shape[1], -1).T  # itertools.product's order
    z = (nodes - reach) @ matrix.T
    # P(z) sums the node vectors reaching z: one bincount over z's rows (as base-span numbers), in the order of the
    # node vectors (the same sums, bit for bit, as a dict updated vector by vector), keyed in first-seen order
    low, span = z.min(), int(z.max() - z.min()) + 1
    _, first, owner = np.unique((z - low) @ span ** np.arange(z.shape[1] - 1, -1, -1), return_index=True,
                                return_inverse=True)
    sums = np.bincount(owner, weights=np.prod(pmf[nodes], axis=1))
    order = np.argsort(first)
    return dict(zip(map(tuple, z[first[order]].tolist()), sums[order].tolist()))


def _worst_step_ratio(tree, decay):
    law, inner = _tree_law(tree, decay, 12), 5  # node values beyond 12 move P(z) by < e^-6 of itself inside 5
    worst = 0.0
    for z, p in law.items():
        if max(map(abs, z)) > inner:
            continue
        for j in range(tree.m):
            shifted = tuple(v + (i >= j) for i, v in enumerate(z))
            worst = max(worst, abs(math.log(law[shifted] / p)))
    return worst


@pytest.mark.parametrize("m,k", [(3, 2), (2, 2), (3, 4)])  # at most 4 nodes: 25^4 node vectors
def test_a_step_in_the_ranks_costs_epsilon_counting(m, k):
    # exact law of the tree noise: P(Z = z + s_j) / P(Z = z) reaches e^eps' and never exceeds it
    tree = sq.CountingTree(m, 1.0, branching=k)
    decay = float(_dyadic_epsilon(1.0)) / tree.sensitivity
    assert _worst_step_ratio(tree, decay) == pytest.approx(float(_dyadic_epsilon(1.0)), abs=1e-9)


def test_the_ratio_check_catches_a_halved_noise_scale():
    tree = sq.CountingTree(3, 1.0, branching=2)
    decay = 2 * float(_dyadic_epsilon(1.0)) / tree.sensitivity  # a scale of H / (2 eps)
    assert _worst_step_ratio(tree, decay) > 1.9


@pytest.mark.slow  # 3000 releases, ~9 s
def test_the_sampler_follows_the_exact_law():
    plan = _tiny_plan(epsilon_counting=1.0, epsilon_exponential=1.0, bound=2)
    decay = float(_dyadic_epsilon(1.0))
    law = _release_law(CELLS, plan.ranks, range(-40, 41), decay, plan, GRID)
    rng = np.random.default_rng(21)
    draws = 3000
    observed = np.zeros_like(law)
    for _ in range(draws):
        o0, o1 = sq.slice_quantile_points(np.sort(CELLS), plan, rng, grid_cells=GRID)
        observed[o0, o1] += 1
    expected = (law / law.sum()).ravel() * draws
    observed = observed.ravel()
    assert observed[expected == 0].sum() == 0  # o0 > o1 never drawn
    observed, expected = observed[expected > 0], expected[expected > 0]
    keep = expected >= 5
    if not keep.all():  # pool the rare outputs so the chi-square approximation holds
        observed = np.append(observed[keep], observed[~keep].sum())
        expected = np.append(expected[keep], expected[~keep].sum())
    # seeded: a fixed p-value; 1e-3 is the false-alarm rate over seeds
    assert stats.chisquare(observed, expected).pvalue > 1e-3


# ---------------------------------------------------------------- the release
Q49 = np.arange(1, 50) / 50


def test_guarantee_is_replace_one_with_delta():
    x = np.random.default_rng(0).normal(size=100_000)
    release = central.quantiles(x, Q49, epsilon=1.0, bounds=(-5, 5), method="slice", delta=1e-9, rng=1)
    guarantee = release.guarantee
    assert guarantee.neighbouring == "replace" and guarantee.model == "central"
    assert guarantee.epsilon <= 1.0 and 0 < guarantee.delta <= 1e-9
    plan = sq.slice_plan(x.size, Q49, 1.0, 1e-9)
    assert 2 * plan.epsilon_step <= 1.0 * (1 + 1e-12)
    assert (1 + math.exp(plan.epsilon_step)) * plan.delta_step <= 1e-9
    # the slices are kept 2h + 4 apart under noise within K
    assert np.diff(plan.ranks).min() - 2 * plan.noise_bound >= 2 * plan.half_width + 4
    assert release.method == "slice" and np.all(np.diff(release.values) >= 0)


def test_seeded_releases_repeat():
    x = np.random.default_rng(0).normal(size=20_000)
    first = central.quantiles(x, [0.25, 0.5, 0.75], epsilon=1.0, bounds=(-5, 5), method="slice", rng=7)
    second = central.quantiles(x, [0.25, 0.5, 0.75], epsilon=1.0, bounds=(-5, 5), method="slice", rng=7)
    assert np.array_equal(first.values, second.values)


def test_rank_error_within_the_bound():
    # with probability 1 - beta every output is within K_{beta/2} + e_beta + 1 ranks (module docstring); over 5
    # seeded releases of 49 quantiles at beta = 1e-3 a single excess would be a 1-in-200 event
    n = 200_000
    x = np.sort(np.random.default_rng(2).uniform(0, 1, n))
    plan = sq.slice_plan(n, Q49, 1.0, 1e-10)
    bound = plan.rank_error_bound(1e-3)
    assert plan.exponential_error(1e-3) <= plan.half_width  # the bound applies
    ranks = np.floor(Q49 * n)
    for seed in range(5):
        release = central.quantiles(x, Q49, epsilon=1.0, bounds=(0, 1), method="slice", rng=seed)
        errors = np.abs(np.searchsorted(x, release.values) - ranks)
        assert errors.max() <= bound


def test_close_quantiles_are_refused_naming_q():
    x = np.zeros(10_000)
    with pytest.raises(InvalidParameterError, match=r"'q'.*99 quantiles.*n = 10000.*epsilon=1"):
        central.quantiles(x, np.arange(1, 100) / 100, epsilon=1.0, bounds=(0, 1), method="slice")
    with pytest.raises(InvalidParameterError, match="'q'"):  # a quantile too near the end for the slice
        central.quantiles(x, [0.001], epsilon=1.0, bounds=(0, 1), method="slice")


@pytest.mark.parametrize("kwargs,error,match", [
    (dict(method="slice", delta=0.0), InvalidPrivacyParameterError, "delta"),
    (dict(method="slice", delta=1.5), InvalidPrivacyParameterError, "delta"),
    (dict(method="aq", delta=1e-9), InvalidParameterError, "'delta'.*method='slice' only"),
    (dict(method="slices"), InvalidParameterError, "method"),
])
def test_bad_input_is_named(kwargs, error, match):
    with pytest.raises(error, match=match):
        central.quantiles(np.zeros(10_000), [0.5], epsilon=1.0, bounds=(0, 1), **kwargs)


def test_refusal_reads_public_inputs_only():
    # same n, q, epsilon, delta: the same answer (a release or a refusal) whatever the values
    q = [0.2, 0.5, 0.8]
    for x in (np.zeros(3000), np.linspace(0, 1, 3000), np.random.default_rng(1).uniform(size=3000)):
        release = central.quantiles(x, q, epsilon=1.0, bounds=(0, 1), method="slice", rng=0)
        assert release.details["half_width"] == sq.slice_plan(3000, np.array(q), 1.0, sq.DEFAULT_DELTA).half_width



def test_a_budget_session_charges_the_slice_release():
    from dpdist.budget import BudgetSession

    x = np.random.default_rng(3).normal(size=20_000)
    session = BudgetSession(3.0, 1e-6)
    release = session.release(central.quantiles, x, [0.25, 0.5, 0.75], epsilon=1.0, bounds=(-5, 5), method="slice")
    # the charge is what the release states (the session's accountant may state the total tighter at its own delta)
    assert session.charges[0].charged.epsilon == pytest.approx(release.guarantee.epsilon)
    assert session.charges[0].charged.delta == pytest.approx(release.guarantee.delta)
    assert session.spent.epsilon_at(release.guarantee.delta, "basic") == pytest.approx(release.guarantee.epsilon)
    assert session.spent.epsilon <= release.guarantee.epsilon
    assert release.guarantee.neighbouring == "replace"
