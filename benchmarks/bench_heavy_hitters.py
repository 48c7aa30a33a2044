"""Heavy hitters of an unknown domain: PEM (``dpdist.local.heavy_hitters``, the ``pem`` protocol's exact simulation) on real word frequencies.

Data: ``wiki-words`` (word occurrences of English Wikipedia, PyPI ``wikiwords``), n occurrences
drawn with replacement; words encoded over a..z with 5 bits per letter, cut to 12 letters
(60-bit items; the truth is computed on the same encoding).  Metric: precision of the k items
found against the true top k (the sets have equal size, so precision = recall = F1), median over
``--runs`` seeded runs, and the wall time of one run: the exact simulation of the groups' tables
(``heavy_hitters``) and, for the deployment path, ``privatize`` + ``aggregator().add`` of the
same words on the ``pem`` protocol (k = 10, first run), each followed by the rounds (``estimate``).

Usage::

    uv run --extra data python benchmarks/bench_heavy_hitters.py [--quick] [--runs 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from dpdist import datasets
from dpdist.datasets.real import wiki_words
from dpdist.local import encode_strings, heavy_hitters

EPSILONS, KS = (1.0, 2.0, 4.0), (10, 20)  # the table's epsilons and numbers of heavy hitters k


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="n = 10^6 only, one run")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default=None, help="comma-separated n (default 10^6 and 10^7; --quick: 10^6)")
    args = parser.parse_args()
    sizes = [10**6] if args.quick else [10**6, 10**7]
    if args.sizes:
        sizes = [int(size) for size in args.sizes.split(",")]
    runs = 1 if args.quick else args.runs
    codes, codec = encode_strings(wiki_words())
    dataset = datasets.get("wiki-words")
    print("| n | eps | k | precision = recall = F1 (median) | seconds per run (simulate) | privatize + add + estimate |")
    print("|---|---|---|---|---|---|")
    for n in sizes:
        for epsilon in EPSILONS:
            for k in KS:
                scores, seconds = [], []
                for run in range(runs):
                    items = codes[dataset.load(n, rng=np.random.default_rng([run, n]))]
                    unique, counts = np.unique(items, return_counts=True)
                    truth = set(unique[np.argsort(-counts, kind="stable")[:k]].tolist())
                    start = time.perf_counter()
                    found = heavy_hitters(items, epsilon, k=k, codec=codec, rng=np.random.default_rng([run, 1]))
                    seconds.append(time.perf_counter() - start)
                    scores.append(len(truth & set(found.items.tolist())) / k)
                deployed = _deployment_seconds(items, epsilon, codec) if k == 10 else None
                column = "" if deployed is None else f"{deployed:.1f}"
                print(f"| {n:.0e} | {epsilon:g} | {k} | {np.median(scores):.2f} | {np.median(seconds):.1f} | {column} |")


def _deployment_seconds(items, epsilon, codec) -> float:
    """Wall time of the deployment path: every report privatized, added, then the rounds."""
    from dpdist import local

    protocol = local.make("pem", epsilon=epsilon, alphabet=codec.alphabet, max_chars=codec.max_chars, k=10)
    start = time.perf_counter()
    aggregator = protocol.aggregator()
    for block in np.array_split(items, max(1, items.size // 1_000_000)):
        aggregator.add(protocol.privatize(block, rng=0))
    protocol.estimate(aggregator)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
