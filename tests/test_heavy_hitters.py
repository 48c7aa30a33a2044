"""``dpdist.local.heavy_hitters`` (module ``dpdist.local.pem``): PEM over an unknown domain of bit strings / words."""

import numpy as np
import pytest

from dpdist.errors import InvalidParameterError, OutOfDomainError
from dpdist.local import StringCodec, encode_strings, heavy_hitters


def test_planted_heavy_hitters_are_found_among_a_huge_domain():
    rng = np.random.default_rng(0)
    heavy = np.array([3, 2**40 + 7, 2**47 - 1, 123456789012, 2**39])
    shares = np.array([0.12, 0.10, 0.08, 0.07, 0.06])
    n = 200_000
    counts = (shares * n).astype(int)
    background = rng.integers(0, 2**48, size=n - counts.sum())
    values = np.concatenate([np.repeat(heavy, counts), background])
    result = heavy_hitters(values, 4.0, k=5, bits=48, rng=1)
    assert set(result.items.tolist()) == set(heavy.tolist())
    order = np.argsort(-shares)
    np.testing.assert_array_equal(result.items, heavy[order])
    # the last round's estimates: unbiased up to the FLH noise of its ~n/rounds users
    users = result.details["rounds"][-1]["users"]
    assert np.all(np.abs(result.frequencies - shares[order]) < 6 * np.sqrt(0.2 / users))
    assert result.guarantee.epsilon == 4.0 and sum(r["users"] for r in result.details["rounds"]) == n


def test_words_are_encoded_decoded_and_found():
    words = ["apple"] * 3000 + ["banana"] * 2000 + ["cherry"] * 1500 + [f"w{'abcdefghij'[i % 10]}x" for i in range(3000)]
    result = heavy_hitters(words, 6.0, k=3, max_chars=6, alphabet="abcdefghijklmnopqrstuvwxyz", rng=2)
    assert result.labels == ["apple", "banana", "cherry"]
    items, codec = encode_strings(["a", "zz", "abc"], max_chars=4)
    assert codec.decode(items) == ["a", "zz", "abc"] and codec.bits == 20
    assert codec.decode(encode_strings(["abcdefgh"], max_chars=4)[0]) == ["abcd"]  # cut to max_chars


def test_impossible_prefixes_are_pruned():
    codec = StringCodec(alphabet="ab", max_chars=3)  # 2 bits per symbol: 0 = end, 1 = a, 2 = b, 3 = impossible
    prefixes = np.array([0b01, 0b11, 0b0001, 0b0100, 0b1000])
    np.testing.assert_array_equal(codec.valid_prefixes(prefixes[:2], 2), [True, False])
    # "end" then "a" is impossible; "a" then "end" is fine; "b" then "end" is fine
    np.testing.assert_array_equal(codec.valid_prefixes(prefixes[2:], 4), [False, True, True])
    np.testing.assert_array_equal(codec.valid_prefixes(np.array([0b000, 0b001]), 3), [True, False])


def test_bad_input_names_the_argument():
    with pytest.raises(InvalidParameterError, match="'bits'"):
        heavy_hitters(np.arange(10), 1.0)
    with pytest.raises(OutOfDomainError, match="2\\*\\*4"):
        heavy_hitters(np.array([1, 16]), 1.0, bits=4)
    with pytest.raises(OutOfDomainError, match="'A'"):
        heavy_hitters(["Apple"], 1.0)
    with pytest.raises(InvalidParameterError, match="'k'"):
        heavy_hitters(np.arange(10), 1.0, bits=8, k=0)
    with pytest.raises(InvalidParameterError, match="max_chars"):
        encode_strings(["a"], max_chars=20)


def test_a_list_of_integers_is_read_as_items_and_bad_alphabets_are_refused():
    result = heavy_hitters([5] * 3000 + [9] * 2000 + list(range(16, 64)) * 20, 4.0, k=2, bits=6, rng=0)
    assert set(result.items.tolist()) == {5, 9} and result.labels is None
    with pytest.raises(InvalidParameterError, match="'alphabet'"):
        encode_strings(["ab"], alphabet="aab")
    with pytest.raises(InvalidParameterError, match="'max_chars'"):
        encode_strings(["ab"], max_chars=0)
