"""``dpdist.local.heavy_hitters`` and the ``pem`` protocol: PEM over an unknown domain of bit strings / words."""

import numpy as np
import pytest

from dpdist.errors import InvalidParameterError, OutOfDomainError
from dpdist.local import StringCodec, encode_strings, heavy_hitters


@pytest.mark.slow  # 0.27 CPU-s: a huge domain
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
    # a family of 256 hash functions (the default 4,096 drew 1.65 M-cell tables, 0.4 CPU-s): the family only adds a
    # bias of sd sqrt(sum f^2 / (S (g - 1))) = 0.0013 here (g = 404), beside standard errors of 0.008-0.012 and gaps
    # of 0.06 (banana, cherry) to 0.12 (cherry, the next word) between the shares ranked
    result = heavy_hitters(words, 6.0, k=3, max_chars=6, alphabet="abcdefghijklmnopqrstuvwxyz", hash_count=256, rng=2)
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
    with pytest.raises(OutOfDomainError, match=r"with other characters, the first at position 0 \(not shown") as refused:
        heavy_hitters(["Apple"], 1.0)
    assert "'A'" not in str(refused.value)  # a person's word, not shown
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


WORDS = ["apple", "banana", "cherry", "damson"]
SHARES = np.array([0.25, 0.15, 0.10, 0.05])


def _word_sample(n, seed):
    rng = np.random.default_rng(seed)
    background = np.array(["".join(rng.choice(list("klmnopqrst"), 4)) for _ in range(500)])
    planted = rng.random(n) < SHARES.sum()
    words = np.where(planted, rng.choice(WORDS, size=n, p=SHARES / SHARES.sum()), background[rng.integers(0, 500, n)])
    return words


def test_the_pem_protocol_merges_sites_and_matches_heavy_hitters():
    from dpdist import local

    protocol = local.make("pem", epsilon=4.0, alphabet="abcdefghijklmnopqrstuvwxyz", max_chars=6, k=4, hash_count=512)
    words = _word_sample(60_000, 1)
    sites = [protocol.aggregator().add(protocol.privatize(part, rng=seed)) for seed, part in enumerate(np.array_split(words, 3))]
    merged = sites[0].merge(sites[1]).merge(sites[2])
    found = protocol.estimate(merged)
    assert found.labels == WORDS and merged.n == words.size and found.guarantee.epsilon == 4.0
    assert [r["prefix_bits"] for r in found.details["rounds"]] == protocol.prefix_lengths
    simulated = heavy_hitters(words, 4.0, k=4, max_chars=6, hash_count=512, rng=3)
    assert simulated.labels == WORDS
    assert protocol.estimate(merged, threshold=0.12).labels == WORDS[:2]


@pytest.mark.slow
def test_the_standard_errors_match_the_spread_over_repeated_collections():
    """z = (estimate - truth) / SE over 200 exact simulations: mean ~ 0 and sd ~ 1 (FLH's variance).

    Each collection draws its own public family (``family_seed``), so the family's bias
    (mean square c/(S(1-c)) sum_{v' != v} f_v'^2, module flh) becomes a zero-mean error
    of at most 0.07 of the variance here: the expected sd of z is at most 1.03.  The sample
    sd of 200 such values has SE about 0.05 and the mean about 0.07; the bounds are 4-5 of those.
    """
    from dpdist import local

    rng = np.random.default_rng(5)
    pool = rng.integers(0, 1 << 16, 200)
    values = np.concatenate([np.full(9000, 0xBEEF), np.full(6000, 0x1234), pool[rng.integers(0, 200, 15_000)]])
    truth = {0xBEEF: np.mean(values == 0xBEEF), 0x1234: np.mean(values == 0x1234)}
    z = []
    for seed in range(200):
        protocol = local.make("pem", epsilon=2.0, bits=16, k=2, hash_count=4096, family_seed=seed)
        found = protocol.estimate(protocol.simulate(values, rng=seed))
        z.extend((share - truth[int(item)]) / error for item, share, error in zip(found.items, found.frequencies, found.standard_error))
    z = np.array(z)
    assert z.size == 400
    assert abs(z.mean()) < 0.3 and 0.8 < z.std(ddof=1) < 1.25


# the pipeline end to end through the CLI (privatize, aggregate, estimate, a CSV and a plot): the full suite; the
# fast loop keeps the same PEM protocol on the same words in test_the_pem_protocol_merges_sites_and_matches_heavy_hitters
@pytest.mark.slow
def test_words_through_the_cli_privatize_aggregate_estimate(tmp_path, capsys):
    import csv
    import json

    from dpdist.cli import main

    config = {"protocol": "pem", "epsilon": 4.0, "alphabet": "abcdefghijklmnopqrstuvwxyz", "max_chars": 6, "k": 4,
              "hash_count": 512}
    (tmp_path / "pem.json").write_text(json.dumps(config))
    words = _word_sample(40_000, 2)
    (tmp_path / "words.csv").write_text("word\n" + "\n".join(words) + "\n")
    assert main(["privatize", "--config", str(tmp_path / "pem.json"), "--column", "word", str(tmp_path / "words.csv"),
                 "--out", str(tmp_path / "r.dpr"), "--no-progress"]) == 0
    assert main(["aggregate", str(tmp_path / "r.dpr"), "--state", str(tmp_path / "s.bin"), "--no-progress"]) == 0
    assert main(["estimate", "--state", str(tmp_path / "s.bin"), "--out", str(tmp_path / "hh.csv"),
                 "--plot", str(tmp_path / "hh.png")]) == 0
    printed = capsys.readouterr().out
    assert "guarantee" in printed and all(word in printed for word in WORDS)
    with open(tmp_path / "hh.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [row["label"] for row in rows] == WORDS and (tmp_path / "hh.png").stat().st_size > 5_000


def test_pem_refuses_bad_configs_and_values():
    from dpdist import local
    from dpdist.errors import InvalidValueTypeError

    with pytest.raises(InvalidParameterError, match=r"The 'bits' parameter of PEM must be given exactly when 'alphabet' is None .*Got None"):
        local.make("pem", epsilon=1.0)
    with pytest.raises(InvalidParameterError, match=r"The 'bits' parameter of PEM must be given exactly when 'alphabet' is None .*Got 8"):
        local.make("pem", epsilon=1.0, bits=8, alphabet="ab")
    with pytest.raises(InvalidParameterError, match="'alphabet'"):
        local.make("pem", epsilon=1.0, alphabet="aa")
    with pytest.raises(InvalidParameterError, match="first round"):
        local.make("pem", epsilon=1.0, bits=40, k=4096, step=16)
    with pytest.raises(InvalidParameterError, match="hash_count"):
        local.make("pem", epsilon=4.0, bits=62, step=1, hash_count=1 << 20)
    with pytest.raises(InvalidValueTypeError, match="alphabet"):
        local.make("pem", epsilon=1.0, bits=8).privatize(["word"])
    with pytest.raises(OutOfDomainError, match="2\\*\\*8"):
        local.make("pem", epsilon=1.0, bits=8).privatize([256])


def test_a_strided_array_of_words_is_encoded_like_a_copy():
    words = np.array(["apple", "fig", "kiwi", "plum"] * 3)
    np.testing.assert_array_equal(encode_strings(words[::2], max_chars=5)[0], encode_strings(words[::2].copy(), max_chars=5)[0])
