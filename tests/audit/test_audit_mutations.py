"""The issue's mutation set: single-probability bugs injected into copies of dpdist protocols, each certified to violate.

Every mutant claims epsilon 1 and is audited at alpha 1e-3 (seed 1, at most 50,000 outputs per input); its true
epsilon is computed from its (wrong) channel.  docs/how-to/audit-a-randomizer.md, "Mutations", lists the certified bounds and the outputs
each needed (regenerate with ``python tests/audit/test_audit_mutations.py``).
"""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from dpdist import audit

EPSILON = 1.0
E = math.exp(EPSILON)


def grr(d, keep, other_includes_item=False):
    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        if other_includes_item:
            other = rng.integers(0, d, values.size)
        else:
            other = (values + rng.integers(1, d, values.size)) % d
        return np.where(rng.random(values.size) < keep, values, other)

    return sample


def unary(d, p, q, item_bit=None):
    """Unary encoding: the item's bit is 1 w.p. ``p``, every other bit w.p. ``q`` (``item_bit``: a fixed value)."""

    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        bits = (rng.random((values.size, d)) < q).astype(np.uint8)
        bits[np.arange(values.size), values] = rng.random(values.size) < p if item_bit is None else item_bit
        return bits

    return sample


def rr_bits_last_kept(d):
    keep = math.exp(EPSILON / 2) / (math.exp(EPSILON / 2) + 1)

    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        bits = np.zeros((values.size, d), dtype=np.uint8)
        bits[np.arange(values.size), values] = 1
        flip = rng.random(bits.shape) >= keep
        flip[:, -1] = False
        return bits ^ flip

    return sample


def memo_redrawn(d, reports):
    keep = E / (E + d - 1)

    def sample(histories, rng):
        return np.stack([grr(d, keep)(histories, rng) for _ in range(reports)], axis=1)

    return sample


def length_leak(d):
    """A correct GRR report, padded to a length that depends on the value (a framing bug)."""
    keep = E / (E + d - 1)

    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        reports = grr(d, keep)(values, rng)
        return [np.full(1 + int(v) % 2, r) for v, r in zip(values.tolist(), reports.tolist())]

    return sample


def subset_selection(d, k, epsilon):
    """Subset selection (Wang et al. 2016; Ye & Barg 2018): the item in the k-subset w.p.
    k e^eps / (k e^eps + d - k), the rest of the subset uniform over the other items.  Its epsilon is
    ln(p / (1 - p) x (d - k) / k) = ``epsilon``: a mutant passes another epsilon."""
    p = k * math.exp(epsilon) / (k * math.exp(epsilon) + d - k)

    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        n = values.size
        keys = rng.random((n, d))
        keys[np.arange(n), values] = 2.0  # never among the "others"
        others = np.argsort(keys, axis=1)[:, :k]
        include = rng.random(n) < p
        subset = np.zeros((n, d), dtype=np.uint8)
        rows = np.repeat(np.arange(n), k).reshape(n, k)
        take = np.where(include[:, None], np.concatenate([values[:, None], others[:, : k - 1]], axis=1), others)
        subset[rows, take] = 1
        return subset

    return sample


def _log_ratio(p, q):
    return math.log(p / q)


# name, randomizer, domain, the mutant's true epsilon
MUTANTS = [
    ("grr: p from d-2 (off by one)", grr(8, E / (E + 6)), 8, _log_ratio(E / (E + 6), (1 - E / (E + 6)) / 7)),
    ("grr: q = (1-p)/d (the item among the others)", grr(8, E / (E + 7), other_includes_item=True), 8,
     math.log((E / (E + 7) + (1 - E / (E + 7)) / 8) / ((1 - E / (E + 7)) / 8))),
    ("grr: p from 2 eps", grr(4, E**2 / (E**2 + 3)), 4, 2 * EPSILON),
    ("oue: q halved", unary(16, 0.5, 0.5 / (E + 1)), 16,
     math.log(0.5 * (1 - 0.5 / (E + 1)) / (0.5 * 0.5 / (E + 1)))),
    ("oue: p = 3/4", unary(8, 0.75, 1 / (E + 1)), 8, math.log(3 * E)),
    ("sue: eps per bit instead of eps/2", unary(8, E / (E + 1), 1 / (E + 1)), 8, 2 * EPSILON),
    ("unary: the item's bit unrandomized", unary(8, 1.0, 1 / (E + 1), item_bit=1), 8, math.inf),
    ("rr bits: the last bit never randomized", rr_bits_last_kept(32), 32, math.inf),
    ("l-grr: the memo redrawn at every report (4 reports)", memo_redrawn(4, 4), 4, 4 * EPSILON),
    ("grr: output length depends on the value", length_leak(4), 4, math.inf),
    ("ss: inclusion from 2 eps", subset_selection(8, 2, 2 * EPSILON), 8, 2 * EPSILON),
]


def _audit(randomizer, d):
    return audit.audit(randomizer, EPSILON, d, samples=50_000, rng=1)


@pytest.mark.slow
@pytest.mark.parametrize("name, randomizer, d, true_epsilon", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_every_mutant_is_certified_to_violate(name, randomizer, d, true_epsilon):
    result = _audit(randomizer, d)
    assert result.verdict == "violates", result.text()
    assert EPSILON < result.certified_epsilon
    if true_epsilon is not None:
        assert result.certified_epsilon <= true_epsilon


@pytest.mark.slow
def test_the_unmutated_copies_hold():
    """The same code with the right probabilities is not flagged (the mutants' violations are the mutations')."""
    for randomizer, d in [(grr(8, E / (E + 7)), 8), (unary(8, 0.5, 1 / (E + 1)), 8),
                          (unary(8, math.exp(0.5) / (math.exp(0.5) + 1), 1 / (math.exp(0.5) + 1)), 8),
                          (subset_selection(8, 2, EPSILON), 8)]:
        result = _audit(randomizer, d)
        assert result.verdict == "no violation found", result.text()


if __name__ == "__main__":  # the table of docs/how-to/audit-a-randomizer.md, "Mutations"
    print("| mutation | true epsilon | certified | outputs per input | CPU s |")
    print("|---|---|---|---|---|")
    for name, randomizer, d, true_epsilon in MUTANTS:
        started = time.process_time()
        result = _audit(randomizer, d)
        seconds = time.process_time() - started
        shown = "inf" if math.isinf(true_epsilon) else f"{true_epsilon:.2f}"
        print(f"| {name} | {shown} | {result.certified_epsilon:.2f} ({result.verdict}) | "
              f"{result.samples_per_input:,} | {seconds:.2f} |")
