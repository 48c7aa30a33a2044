"""The probabilities the randomizers really draw satisfy the stated epsilon exactly.

NumPy's ``Generator.random()`` returns ``k 2^-53``, so ``random() < t`` happens with
probability ``ceil(t 2^53) / 2^53``, not ``t``.  Thresholds computed in floating point
(GRR's keep probability, OLH's, HR's, SS's p_in, the longitudinal rounds, the wave's
weight, PM's, SR's, HCMS's, CMS's, Haar-HRR's, CP's, the wavelet's signed subsets) realized
ratios up to ~1e-14 above e^eps.  Each test below rebuilds, from the thresholds a protocol
actually compares with, the realized probabilities in exact rational arithmetic and checks
the largest log-ratio of its channel against epsilon with no tolerance: ``ln(ratio) <= eps``
at 60 significant digits (``decimal``, correctly rounded).  The 32-bit thresholds of the unary
protocols (``oue``, ``sue``, ``l-osue``, ``dbitflippm``) are checked the same way.
"""

from __future__ import annotations

import math
from decimal import Decimal, localcontext
from fractions import Fraction

import numpy as np
import pytest

from dpdist import local

GRID = 2**53
EPSILONS = (1e-6, 0.01, 0.1, 0.5, math.log(2), 1.0, math.log(3), 2.0, 3.0, 5.0, 8.0, 12.0, 20.0, 30.0)
DOMAINS = (2, 3, 7, 100, 1023)


def realized(threshold) -> Fraction:
    """Probability of ``Generator.random() < threshold`` (exact)."""
    t = min(max(Fraction(float(threshold)), Fraction(0)), Fraction(1))
    return Fraction(math.ceil(t * GRID), GRID)


def log_exceeds(ratio: Fraction, epsilon: float) -> bool:
    """Whether ln(ratio) > epsilon, at 60 significant digits."""
    with localcontext() as context:
        context.prec = 60
        return (Decimal(ratio.numerator) / Decimal(ratio.denominator)).ln() > Decimal(epsilon)


def mixture_ratio(keep: Fraction, kept, outputs) -> Fraction:
    """Ratio of "keep (uniform over ``kept``), else uniform over ``outputs``": 1 + keep m / (s (1 - keep))."""
    return 1 + keep * Fraction(outputs) / (Fraction(kept) * (1 - keep))


def odds(p: Fraction) -> Fraction:
    return p / (1 - p)


def unary_ratio(p: Fraction, q: Fraction) -> Fraction:
    return p * (1 - q) / ((1 - p) * q)


def keeps(protocol):
    """The keep probabilities the longitudinal GRR rounds compare with (main drew ``p - q``)."""
    if hasattr(protocol, "_keep1"):
        return protocol._keep1, protocol._keep2
    return protocol._p1 - protocol._q1, protocol._p2 - protocol._q2


# ---------------------------------------------------------------------- realized channels
def ratios(protocol) -> list[tuple[Fraction, float]]:
    """``(realized max ratio, budget)`` pairs of a protocol's channel (and of its longitudinal rounds)."""
    name, eps = protocol.name, protocol.epsilon
    if name == "grr":
        return [(mixture_ratio(realized(protocol._keep), 1, protocol.domain_size), eps)]
    if name in ("olh", "flh"):
        return [(mixture_ratio(realized(protocol._keep), 1, protocol.hash_range), eps)]
    if name == "pem":
        return [(mixture_ratio(realized(protocol.oracle._keep), 1, protocol.oracle.hash_range), eps)]
    if name == "hr":
        return [(mixture_ratio(realized(protocol._keep), Fraction(protocol.block_size, 2), protocol.output_size), eps)]
    if name == "ss":
        k, d = protocol.subset_size, protocol.domain_size
        return [(odds(realized(protocol._p_in)) * Fraction(d - k, k), eps)]
    if name == "hcms":
        return [(odds(realized(protocol._p)), eps)]
    if name == "cms":
        return [(odds(realized(protocol._p)) ** 2, eps)]
    if name in ("l-grr", "loloha"):
        first, second = (realized(keep) for keep in keeps(protocol))
        g = protocol.domain_size if name == "l-grr" else protocol.hash_range
        return [(mixture_ratio(first, 1, g), eps), (mixture_ratio(first * second, 1, g), protocol.params["epsilon_1"])]
    if name in ("oue", "sue", "dbitflippm"):
        p, q = Fraction(protocol._p_threshold, 2**32), Fraction(protocol._q_threshold, 2**32)
        return [(unary_ratio(p, q), eps)]
    if name == "l-osue":
        p1, q1 = Fraction(protocol._p_threshold, 2**32), Fraction(protocol._q_threshold, 2**32)
        p2, q2 = Fraction(protocol._p2_threshold, 2**32), Fraction(protocol._q2_threshold, 2**32)
        chain_p, chain_q = p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2
        return [(unary_ratio(p1, q1), eps), (unary_ratio(chain_p, chain_q), protocol.params["epsilon_1"])]
    if name == "haar-hrr":
        return [(odds(realized(protocol._keep)), eps)]
    if name == "sw" and protocol.params.get("discrete"):
        mechanism = protocol._mechanism
        return [(mixture_ratio(realized(mechanism.weight), mechanism.window, mechanism.buckets), eps)]
    if name in ("sw", "gw"):
        # mixture of a uniform bucket and a bump of peak density 1 / (2 a1) on [-b, 1 + b]
        shape = protocol._mechanism.shape
        measure = 1 + 2 * Fraction(shape.b)
        return [(mixture_ratio(realized(shape.weight), 2 * Fraction(shape.half_widths[0]), measure), eps)]
    if name == "pm":
        # density inside the window (length w) and outside (length fl(2s - w), as sampled)
        window, outside = Fraction(protocol._window), Fraction(2.0 * protocol._s - protocol._window)
        return [(odds(realized(protocol._inside)) * outside / window, eps)]
    if name == "sr":
        v = np.concatenate([[-1.0, 1.0], np.linspace(-1.0, 1.0, 2001)])
        plus = [realized(t) for t in np.asarray(protocol._plus_probability(v), dtype=np.float64)]
        low, high = min(plus), max(plus)
        return [(max(high / low, (1 - low) / (1 - high)), eps)]
    raise KeyError(name)


def cp_ratio(protocol) -> Fraction:
    """CP's exact loss from its realized per-item inside probabilities (small instances)."""
    counts = protocol.column_counts
    m = protocol.measurements
    thresholds = getattr(protocol, "_inside_thresholds", None)
    if thresholds is None:  # main drew U < n_x e / (n_x e + m - n_x) per report
        thresholds = counts * protocol._e / protocol._denominators
    inside = [realized(t) for t in thresholds]
    worst = Fraction(1)
    for y in range(m):
        column = [inside[x] / int(counts[x]) if protocol._plus[y, x] else (1 - inside[x]) / int(m - counts[x])
                  for x in range(protocol.domain_size)]
        worst = max(worst, max(column) / min(column))
    return worst


def wavelet_ratios(d: int, m: int, epsilon: float) -> Fraction:
    """Signed subset selection (eq. 45/66) from its realized three-way thresholds."""
    from dpdist.local.numerical import _signed_subset

    if hasattr(_signed_subset, "signed_thresholds"):
        t1, t2 = _signed_subset.signed_thresholds(d, m, epsilon)
    else:  # main: U < p, U < p (1 + e^-eps)
        p = float(_signed_subset.support_probabilities(d, m, epsilon)[0])
        t1, t2 = p, p * (1.0 + math.exp(-epsilon))
    held, flipped = realized(t1), realized(t2) - realized(t1)
    dropped = 1 - realized(t2)
    per_held = Fraction(1, math.comb(d - 1, m - 1) * 2 ** (m - 1))
    values = [held * per_held, flipped * per_held]
    if m < d:
        values.append(dropped / (math.comb(d - 1, m) * 2**m))
    else:
        assert dropped == 0, "with m = d every output holds the user's coordinate"
    return max(values) / min(values)


# ---------------------------------------------------------------------- the grid of cases
def frequency_cases():
    for eps in EPSILONS:
        for d in DOMAINS:
            yield "grr", {"epsilon": eps, "domain_size": d}
            yield "olh", {"epsilon": eps, "domain_size": d}
            yield "hr", {"epsilon": eps, "domain_size": d}
            yield "ss", {"epsilon": eps, "domain_size": d}
            yield "oue", {"epsilon": eps, "domain_size": d}
            yield "sue", {"epsilon": eps, "domain_size": d}
            yield "dbitflippm", {"epsilon": eps, "domain_size": d}
            if eps > 1e-6:
                for share in (0.5, 0.9):
                    yield "l-grr", {"epsilon": eps, "epsilon_1": eps * share, "domain_size": d}
                    yield "l-osue", {"epsilon": eps, "epsilon_1": eps * share, "domain_size": d}
                    yield "loloha", {"epsilon": eps, "epsilon_1": eps * share, "domain_size": d}
        yield "flh", {"epsilon": eps, "domain_size": 100, "hash_count": 16}
        yield "pem", {"epsilon": eps, "bits": 12, "k": 4, "hash_count": 16}
        yield "hcms", {"epsilon": eps, "domain_size": 100, "hash_count": 4, "width": 16}
        yield "cms", {"epsilon": eps, "domain_size": 100, "hash_count": 4, "width": 16}


def numerical_cases():
    for eps in EPSILONS:
        yield "sr", {"epsilon": eps}
        yield "pm", {"epsilon": eps}
        yield "haar-hrr", {"epsilon": eps, "bins": 16}
        yield "sw", {"epsilon": eps, "bins": 16}
        yield "sw", {"epsilon": eps, "bins": 16, "discrete": True}
        yield "gw", {"epsilon": eps, "bins": 16}
        yield "gw", {"epsilon": eps, "bins": 16, "shape": "triangle"}


def _violations(cases) -> list[str]:
    found = []
    for name, params in cases:
        try:
            protocol = local.make(name, **params)
        except Exception as error:  # noqa: BLE001 - a case the protocol refuses is reported, not skipped
            found.append(f"{name} {params}: refused ({type(error).__name__}: {error})")
            continue
        for ratio, budget in ratios(protocol):
            if log_exceeds(ratio, budget):
                found.append(f"{name} {params}: realized log-ratio {math.log(ratio)!r} > {budget!r}")
    return found


def test_every_frequency_protocol_realizes_at_most_epsilon():
    cases = list(frequency_cases())
    assert len(cases) > 900
    violations = _violations(cases)
    assert not violations, f"{len(violations)} of {len(cases)} cases above epsilon:\n" + "\n".join(violations[:40])


def test_every_numerical_protocol_realizes_at_most_epsilon():
    cases = list(numerical_cases())
    violations = _violations(cases)
    assert not violations, f"{len(violations)} of {len(cases)} cases above epsilon:\n" + "\n".join(violations[:40])


@pytest.mark.parametrize("epsilon", (0.1, 0.5, 1.0, 2.0, 5.0))
@pytest.mark.parametrize("domain_size, measurements", [(6, 8), (12, 20)])
def test_cp_realizes_at_most_epsilon(epsilon, domain_size, measurements):
    protocol = local.make("cp", epsilon=epsilon, domain_size=domain_size, measurements=measurements, matrix_seed=3)
    assert not log_exceeds(cp_ratio(protocol), epsilon), math.log(cp_ratio(protocol))


def test_wavelet_signed_subsets_realize_at_most_epsilon():
    violations = []
    for eps in EPSILONS:
        for d in (1, 2, 3, 8, 64, 1024):
            for m in sorted({1, max(1, d // 3), max(1, d // 2), d}):
                if log_exceeds(wavelet_ratios(d, m, eps), eps):
                    violations.append((eps, d, m))
    assert not violations, violations


def test_generators_draw_on_the_two_to_the_minus_53_grid():
    # the premise: random() is k 2^-53 for every bit generator a client or a seed may use
    from dpdist._rng import secure_generator

    for generator in (secure_generator(), np.random.default_rng(1), np.random.Generator(np.random.MT19937(2)),
                      np.random.Generator(np.random.Philox(3)), np.random.Generator(np.random.SFC64(4))):
        scaled = generator.random(100_000) * 2.0**53
        assert np.array_equal(scaled, np.floor(scaled))


def test_thresholds_are_grid_values_realized_exactly():
    # a threshold on the grid is realized exactly, so the channel and estimators see what is drawn
    from dpdist.local._bernoulli import mixture_keep, odds_probability, realized as realized_grid

    for eps in EPSILONS:
        for value in (mixture_keep(eps, 1, 5), odds_probability(Fraction(math.exp(eps)))):
            assert realized_grid(value) == value and Fraction(value) * GRID == int(Fraction(value) * GRID)
    protocol = local.make("grr", epsilon=1.0, domain_size=5)
    assert protocol._p == protocol._keep + (1 - protocol._keep) / 5


def _bump_counts(grid, u: float) -> dict[int, int]:
    """Exact number of 53-bit uniforms k whose bump draw lands in each bucket, for input u (square wave).

    The sampler's float64 operations (``OutputGrid.sample``), replayed on ``U = k 2^-53``; the
    bucket is non-decreasing in ``k``, so each bucket is a range of ``k`` found by bisection.
    """
    a1, b, width, buckets = grid.shape.half_widths[0], grid.shape.b, grid.width, grid.buckets

    def bucket(k: int) -> int:
        position = u + a1 * (2.0 * (k / float(GRID)) - 1.0)
        return min(max(math.floor((position + b) / width), 0), buckets - 1)

    def first_at_least(j: int) -> int:
        low, high = 0, GRID
        while low < high:
            middle = (low + high) // 2
            low, high = (low, middle) if bucket(middle) >= j else (middle + 1, high)
        return low

    counts, start = {}, 0
    for j in range(bucket(0), bucket(GRID - 1) + 1):
        stop = GRID if j == bucket(GRID - 1) else first_at_least(j + 1)
        counts[j], start = stop - start, stop
    return counts


@pytest.mark.parametrize("epsilon", (0.01, 0.5, 1.0, 3.0, 8.0))
def test_square_wave_buckets_as_sampled_in_float64_are_within_epsilon(epsilon):
    # the bump's bucket masses as the float64 sampler really draws them (not the real-arithmetic
    # integrals) with the realized weight: the margin of WaveShape covers the float rounding
    protocol = local.make("sw", epsilon=epsilon, bins=16, output_bins=24)
    grid = protocol._mechanism
    weight = realized(grid.shape.weight)
    inputs = [0.0, 1e-9, 0.1, 0.25, 0.5, 0.6180339887498949, 0.75, 1.0 - 1e-9, 1.0]
    inputs += np.random.default_rng(5).uniform(0, 1, 12).tolist()
    counts = [_bump_counts(grid, u) for u in inputs]  # once per input, not once per (input, bucket)
    masses = np.array([[((1 - weight) / grid.buckets + weight * Fraction(count.get(j, 0), GRID))
                         for j in range(grid.buckets)] for count in counts], dtype=object)
    worst = max(max(column) / min(column) for column in masses.T)
    assert not log_exceeds(worst, epsilon), math.log(worst)


@pytest.mark.parametrize("name", ["l-grr", "loloha"])
def test_a_per_report_budget_a_grid_step_below_epsilon_keeps_the_second_round_random(name):
    # keep1 is floored to the grid, so epsilon_1 just below epsilon could allow keep2 = 1 (q2 = 0):
    # it is capped at 1 - 2^-53, and both budgets still hold exactly
    protocol = local.make(name, epsilon=2.0, epsilon_1=math.nextafter(2.0, 0.0), domain_size=5)
    assert protocol._keep2 == 1 - 2**-53 and protocol._q2 > 0
    for ratio, budget in ratios(protocol):
        assert not log_exceeds(ratio, budget)
