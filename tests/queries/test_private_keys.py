from __future__ import annotations

import numpy as np

from dpdist.queries._private_keys import key_pairs, merged_pairs, shown_keys

RNG = np.random.default_rng(5)
HASHES = RNG.integers(0, 40, 600).astype(np.uint64)
WORDS = RNG.choice(["a", "b", "c", "d", "e"], 600)


def _pairs(stops: list[int]):
    bounds = [0, *stops, len(WORDS)]
    return merged_pairs([key_pairs(HASHES[i:j], WORDS[i:j], [WORDS[i:j]]) for i, j in zip(bounds, bounds[1:])])


def test_the_pairs_merged_from_blocks_are_the_pairs_of_all_the_rows_whatever_the_split():
    whole = _pairs([])
    for stops in ([1], [200, 201, 450], list(range(50, 600, 50))):
        split = _pairs(stops)
        for name in ("persons", "texts", "rows"):
            np.testing.assert_array_equal(getattr(split, name), getattr(whole, name))
    counted = {(int(p), str(t)) for p, t in zip(HASHES, WORDS)}
    assert len(whole.persons) == len(counted) and whole.rows.sum() == len(WORDS)
    order = np.lexsort((whole.texts, whole.persons))
    np.testing.assert_array_equal(order, np.arange(len(order)))  # sorted by person, then key


def test_the_keys_shown_are_the_same_for_a_seed_whatever_the_split_and_carry_their_values():
    """40 persons of 5 keys each, every key held by about 40 persons: shown at epsilon 4 by every method."""
    for method in ("truncated_geometric", "adaptive"):
        shown = [shown_keys(_pairs(stops), method, 4.0, 1e-6, 5, np.random.default_rng(1)) for stops in ([], [300])]
        assert shown[0] == shown[1] == {word: word for word in "abcde"}
