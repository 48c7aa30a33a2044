from __future__ import annotations

import numpy as np
import pytest

from dpdist import audit
from dpdist.central._partitions import default_selection
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


#: the keys the audited person holds, with their rows: three shared, then three of their own (one of 40 rows)
_HELD, _ROWS = np.array([0, 1, 2, 20, 21, 22]), np.array([1, 2, 1, 40, 3, 2])


def _neighbours() -> tuple[tuple, tuple]:
    """40 persons of 3 rows over keys 0, 1, 2, and the same with one more person of :data:`_HELD` (more keys than
    ``max_groups``, their most rows in keys nobody else holds)."""
    rng = np.random.default_rng(13)
    background = (np.repeat(np.arange(40), 3), rng.integers(0, 3, size=120))
    person = (np.full(_ROWS.sum(), 99), np.repeat(_HELD, _ROWS))
    return background, (np.append(background[0], person[0]), np.append(background[1], person[1]))


def _shown(method: str, epsilon: float, delta: float, max_groups: int, rows_are_persons: bool = False):
    def release(dataset, generator):
        persons, keys = dataset
        persons = np.arange(persons.size) if rows_are_persons else persons
        pairs = key_pairs(persons.astype(np.uint64), keys.astype(str), [keys])
        return np.isin(_HELD, list(shown_keys(pairs, method, epsilon, delta, max_groups, generator).values()))

    return release


@pytest.mark.slow  # 12,000 selections: 25 s at max_groups 1, 95 s at 4 (two rounds of discrete Gaussian noise)
@pytest.mark.parametrize("max_groups", [1, 4])
def test_an_audit_finds_no_violation_when_a_person_of_more_keys_than_max_groups_is_added(max_groups):
    """The keys shown by a query's selection (its default at ``max_groups``: truncated geometric at 1, two rounds of
    the weighted Gaussian at 4), as indicators, with and without a person of 6 keys and 49 rows: no event certifies
    an epsilon above the claim (dpdist.audit.central, Clopper-Pearson bounds)."""
    epsilon, delta = 1.0, 1e-3
    release = _shown(default_selection(max_groups), epsilon, delta, max_groups)
    result = audit.central(release, epsilon, [_neighbours()], delta=delta, samples=6000, rng=14)
    assert result.verdict == "no violation found"


@pytest.mark.slow
def test_the_audit_finds_the_violation_of_a_selection_that_counts_rows_as_persons():
    """The check above fails on a broken wiring: each row counted as a person, the key of the person's 40 rows is
    shown nearly always with them and never without."""
    release = _shown("truncated_geometric", 1.0, 1e-3, 1, rows_are_persons=True)
    result = audit.central(release, 1.0, [_neighbours()], delta=1e-3, samples=2000, rng=14)
    assert result.verdict != "no violation found"
