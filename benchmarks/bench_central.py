"""Central-DP CDF release: dpdist against OpenDP and diffprivlib.

Task: the CDF of n = 10,000 N(0, 1) samples clipped to [-4, 4] at
epsilon = 0.5; median KS and W1 distance to the *empirical* CDF over 20 runs,
and the median wall-clock time per release.  Every run draws fresh data
(seeded) and every method gets its own keyed stream
``default_rng([crc32(method name), run, root_seed])``, so adding or reordering
methods never changes another one's numbers.  OpenDP samples from its own CSPRNG (not
seedable), so its rows vary between invocations within their Monte-Carlo error.

Neighbouring relation: OpenDP's ``symmetric_distance`` (d_in = 1) and
diffprivlib's histogram are epsilon-DP for *adding or removing* one record.
The paper's (and dpdist's default) relation is *replacing* one record with n
public, under which the same histogram needs twice the noise; dpdist rows say
which relation they use, and the like-for-like comparison is "add-remove".

Usage::

    uv run --extra bench python benchmarks/bench_central.py [--runs 20] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import time
import zlib

import numpy as np

from dpdist import Distribution, central

try:
    from dpdist.metrics import ks, wasserstein
except ImportError:  # metrics not available: exact fallbacks for a piecewise-linear CDF against samples
    ks = wasserstein = None

BOUNDS = (-4.0, 4.0)


def _exact_ks_w1(dist: Distribution, x: np.ndarray) -> tuple[float, float]:
    """Exact KS and W1 between a piecewise-linear CDF and the empirical CDF of ``x`` (fallback only)."""
    xs = np.sort(x)
    values, first = np.unique(xs, return_index=True)
    upper = np.searchsorted(xs, values, side="right") / xs.size
    at = dist.cdf(values)
    ks_value = max(np.max(np.abs(at - upper)), np.max(np.abs(at - first / xs.size)))
    points = np.unique(np.concatenate([dist.edges, xs]))
    left, right = points[:-1], points[1:]
    level = np.searchsorted(xs, left, side="right") / xs.size
    a, b = dist.cdf(left) - level, dist.cdf(right) - level
    width = right - left
    same = a * b >= 0
    denominator = np.where(same, 1.0, np.abs(a) + np.abs(b))
    area = np.where(same, width * (np.abs(a) + np.abs(b)) / 2, width * (a * a + b * b) / (2 * denominator))
    return float(ks_value), float(area.sum())


def distances(dist: Distribution, x: np.ndarray) -> tuple[float, float]:
    if ks is None:
        return _exact_ks_w1(dist, x)
    return float(ks(dist, x)), float(wasserstein(dist, x))


# ---------------------------------------------------------------- peers
def diffprivlib_histogram(bins):
    def release(x, epsilon, seed):
        from diffprivlib.tools import histogram  # on the first release: a run --without diffprivlib never imports it

        counts, edges = histogram(x, epsilon=epsilon, bins=bins, range=BOUNDS, random_state=seed)
        counts = np.maximum(np.asarray(counts, dtype=float), 0.0)
        return Distribution(edges, counts / counts.sum())

    return release


def opendp_histogram(bins):
    import opendp.prelude as dp

    dp.enable_features("contrib")
    edges = np.linspace(*BOUNDS, bins + 1)
    cache = {}

    def release(x, epsilon, seed):
        if epsilon not in cache:
            space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.symmetric_distance()
            counting = (
                space
                >> dp.t.then_find_bin(edges=list(edges[1:-1]))
                >> dp.t.then_count_by_categories(categories=list(range(bins)), null_category=False)
            )
            cache[epsilon] = dp.binary_search_chain(
                lambda scale: counting >> dp.m.then_laplace(scale=scale), d_in=1, d_out=epsilon
            )
        counts = np.maximum(np.asarray(cache[epsilon](list(map(float, x))), dtype=float), 0.0)
        return Distribution(edges, counts / counts.sum())

    return release


# ---------------------------------------------------------------- dpdist
def dpdist_method(function, **kwargs):
    def release(x, epsilon, seed):
        rng = None if kwargs.get("secure") else seed  # secure mode draws from the CSPRNG, never a seed
        return function(x, epsilon=epsilon, bounds=BOUNDS, rng=rng, **kwargs)

    return release


def methods(n):
    delta = n**-1.5  # the paper's delta
    return [
        ("OpenDP", "64-bin Laplace histogram (add-remove)", opendp_histogram(64)),
        ("diffprivlib", "32-bin histogram (add-remove)", diffprivlib_histogram(32)),
        ("diffprivlib", "64-bin histogram (add-remove)", diffprivlib_histogram(64)),
        ("diffprivlib", "128-bin histogram (add-remove)", diffprivlib_histogram(128)),
        ("dpdist", "histogram_queries 40 bins, clip (paper, replace)", dpdist_method(central.histogram_queries, bins=40)),
        ("dpdist", "histogram_queries 64 bins, clip (add-remove)",
         dpdist_method(central.histogram_queries, bins=64, neighbouring="add-remove")),
        ("dpdist", "histogram_queries 64 bins, isotonic (add-remove) [recommended]",
         dpdist_method(central.histogram_queries, bins=64, neighbouring="add-remove", postprocess="isotonic")),
        ("dpdist", "same, secure=True (discrete Laplace, CSPRNG)",
         dpdist_method(central.histogram_queries, bins=64, neighbouring="add-remove", postprocess="isotonic",
                       secure=True)),
        ("dpdist", "histogram_queries 48 bins, isotonic (add-remove)",
         dpdist_method(central.histogram_queries, bins=48, neighbouring="add-remove", postprocess="isotonic")),
        ("dpdist", "histogram_queries 64 bins, isotonic (replace)",
         dpdist_method(central.histogram_queries, bins=64, postprocess="isotonic")),
        ("dpdist", "adaptive_quantiles 80 iterations (paper, replace)",
         dpdist_method(central.adaptive_quantiles, iterations=80)),
        ("dpdist", "polynomial_projection m=6, monomial (paper Alg. 1, replace)",
         dpdist_method(central.polynomial_projection, delta=delta, degree=6)),
        ("dpdist", "polynomial_projection m=12, legendre moments (replace)",
         dpdist_method(central.polynomial_projection, delta=delta, degree=12, moments="legendre")),
        ("dpdist", "matching_pursuit legendre m=40 s=6 (paper Alg. 2, replace)",
         dpdist_method(central.matching_pursuit, dictionary="legendre", size=40, sparsity=6)),
        ("dpdist", "matching_pursuit legendre+bspline1 m=40 s=8 (replace)",
         dpdist_method(central.matching_pursuit, dictionary="legendre+bspline1", size=40, sparsity=8)),
    ]


def run(runs: int, n: int, epsilon: float, root_seed: int, without: frozenset = frozenset()):
    table = [method for method in methods(n) if method[0] not in without]
    results = {index: {"ks": [], "w1": [], "seconds": []} for index in range(len(table))}
    for trial in range(runs):
        x = np.clip(np.random.default_rng([trial, root_seed]).normal(size=n), *BOUNDS)
        for index, (library, name, release) in enumerate(table):
            seed = np.random.default_rng([zlib.crc32(f"{library}/{name}".encode()), trial, root_seed])
            start = time.perf_counter()
            dist = release(x, epsilon, seed if library == "dpdist" else int(seed.integers(2**31)))
            results[index]["seconds"].append(time.perf_counter() - start)
            ks_value, w1_value = distances(dist, x)
            results[index]["ks"].append(ks_value)
            results[index]["w1"].append(w1_value)
    rows = []
    for index, (library, name, _) in enumerate(table):
        r = results[index]
        rows.append((library, name, np.median(r["ks"]), np.median(r["w1"]), 1e3 * np.median(r["seconds"])))
    return rows


def markdown(rows, runs, n, epsilon, root_seed) -> str:
    lines = [
        f"n = {n} N(0,1) clipped to [-4, 4], epsilon = {epsilon}, delta = n^-1.5 where used; "
        f"median over {runs} runs (root seed {root_seed}); distances to the empirical CDF (exact).",
        "",
        "| library | release | median KS | median W1 | ms / release |",
        "|---|---|---:|---:|---:|",
    ]
    lines += [f"| {lib} | {name} | {k:.4f} | {w:.4f} | {t:.2f} |" for lib, name, k, w, t in rows]
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--epsilon", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--markdown", help="also write the table to this file")
    parser.add_argument("--without", default="", help="comma-separated peer libraries to leave out (not installed)")
    args = parser.parse_args()
    rows = run(args.runs, args.n, args.epsilon, args.seed, frozenset(filter(None, args.without.split(","))))
    text = markdown(rows, args.runs, args.n, args.epsilon, args.seed)
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as handle:
            handle.write(text + "\n")


if __name__ == "__main__":
    main()
