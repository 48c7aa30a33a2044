"""Local hashing audited conditioned on its stated hash family: dpdist's OLH, RLH, OCMS, FLH and PEM certified near
their claims, a wrong keep probability and an input-dependent hash certified as violations."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdist import audit, local
from dpdist.audit import HashFamily, Randomizer
from dpdist.local.frequency import _hashing

PRIME = 2**31 - 1


def olh(d, epsilon, g, keep=None, avoid_bucket=None, parity_seed=False):
    """OLH over ``d`` items with its Carter-Wegman family: the item's hash kept w.p. ``keep`` (right:
    e^eps / (e^eps + g - 1)), else another bucket.  ``avoid_bucket``: a broken client redrawing the seed until item 0
    does not land in that bucket (the seed then depends on the input).  ``parity_seed``: a broken client whose
    seed's lowest bit is the item's parity (a seed derived from the value)."""
    keep = math.exp(epsilon) / (math.exp(epsilon) + g - 1) if keep is None else keep
    seeds_count = (PRIME - 1) * PRIME

    def sample(values, rng):
        values = np.asarray(values, dtype=np.int64)
        seeds = rng.integers(0, seeds_count, values.size)
        if avoid_bucket is not None:
            for _ in range(64):  # redraw while item 0 hashes to the avoided bucket
                redo = (values == 0) & (_hashing.hash_items(seeds, values, PRIME, g) == avoid_bucket)
                if not redo.any():
                    break
                seeds[redo] = rng.integers(0, seeds_count, int(redo.sum()))
        if parity_seed:
            seeds = seeds // 2 * 2 + values % 2
        hashed = _hashing.hash_items(seeds, values, PRIME, g)
        other = (hashed + rng.integers(1, g, values.size)) % g
        return np.column_stack([seeds, np.where(rng.random(values.size) < keep, hashed, other)])

    def hashes(outputs, items):
        outputs = np.asarray(outputs, dtype=np.int64)
        return _hashing.hash_items(outputs[:, :1], np.asarray(items)[None, :], PRIME, g), outputs[:, 1]

    return Randomizer(sample, name="olh", epsilon=epsilon, domain=d, hash_family=HashFamily(hashes, f"CW, g = {g}"))


@pytest.mark.slow  # 0.35 CPU-s: a seeded audit
def test_a_correct_local_hashing_is_certified_near_its_claim_not_above():
    result = audit.audit(olh(8, 1.0, 4), samples=20_000, rng=0)
    assert result.verdict == "no violation found" and 0.8 < result.certified_epsilon <= 1.0
    assert any("hash family" in note for note in result.notes)


def test_without_its_hash_family_local_hashing_is_invisible():
    """The reason for conditioning: the same randomizer's raw (seed, value) outputs certify nothing."""
    plain = audit.audit(Randomizer(olh(8, 1.0, 4).sample, epsilon=1.0, domain=8), samples=20_000, rng=0)
    assert plain.certified_epsilon == 0.0


def test_a_wrong_keep_probability_is_certified():
    """Binary local hashing's keep probability e^eps / (e^eps + 1) used with g = 4: loss ln(3 e) = 2.10."""
    result = audit.audit(olh(8, 1.0, 4, keep=math.e / (math.e + 1)), samples=50_000, rng=1)
    assert result.violates and 1.0 < result.certified_epsilon < 1 + math.log(3)


def test_a_hash_chosen_by_the_input_is_certified():
    """Item 0's seed redrawn until its bucket is not 0: 'item 0 is in bucket 0 under the report's hash' never
    happens for item 0 and happens w.p. 1/4 for the others (an infinite loss, shown by the bucket columns)."""
    result = audit.audit(olh(4, 1.0, 4, avoid_bucket=0), samples=20_000, rng=2)
    assert result.violates and result.certified_epsilon > 3.0


@pytest.mark.parametrize("family", [True, False])
def test_a_seed_carrying_the_item_is_certified(family):
    """The seed's lowest bit is the item's parity ('no violation found', certified 0.95 with the
    family and 0.35 without): the seed column's bit planes show it, hash family stated or not."""
    randomizer = olh(8, 1.0, 4, parity_seed=True)
    if not family:
        randomizer = Randomizer(randomizer.sample, epsilon=1.0, domain=8)
    result = audit.audit(randomizer, samples=20_000, rng=0)
    assert result.violates and result.certified_epsilon > 3.0
    assert "bit 0 of column 0" in result.witness["event"]


@pytest.mark.parametrize("name, params", [
    ("olh", {"domain_size": 8}),
    pytest.param("rlh", {"domain_size": 8}, marks=pytest.mark.slow),
    pytest.param("ocms", {"domain_size": 8}, marks=pytest.mark.slow),
    pytest.param("flh", {"domain_size": 8}, marks=pytest.mark.slow),
    pytest.param("pem", {"bits": 8, "k": 4}, marks=pytest.mark.slow),
])
@pytest.mark.slow  # 0.37 CPU-s: a seeded audit
def test_dpdist_local_hashing_is_certified_near_its_claim(name, params):
    """These certified 0.0 without the hash (a report's seed is uniform over 2^62 values)."""
    result = audit.audit(local.make(name, epsilon=1.0, **params), samples=20_000, rng=0)
    assert result.verdict == "no violation found" and 0.75 < result.certified_epsilon <= 1.0, result.text()


@pytest.mark.slow  # 0.51 CPU-s: a seeded audit
def test_key_value_sets_need_no_domain():
    """PCKV-UE over 4 keys has 256 records in its grid; the audit compares 64 of them instead of refusing a 'domain'
    the caller never passed (the subject is the grid and the refusal, not the certificate's power: 200 samples an
    input show the same 64 inputs as 800, at a third of the CPU)."""
    result = audit.audit(local.make("pckv-ue", epsilon=1.0, domain_size=4), samples=200, rng=0)
    assert result.verdict == "no violation found" and "64" in result.inputs
