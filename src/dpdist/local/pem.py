r"""Heavy hitters of an unknown domain: the prefix extending method, ``heavy_hitters``.

PEM (Wang, Li, Lin, Jha & Li, "Locally Differentially Private Heavy Hitter
Identification", IEEE TDSC 2021 / arXiv:1708.06674, sec. V) finds the
:math:`k` most frequent items of a domain of :math:`2^L` bit strings without
enumerating it:

1. users are split uniformly at random into :math:`g` groups; group
   :math:`i = 1..g` reports the first :math:`s_i = \gamma + i\eta` bits of its
   item (:math:`s_g = L`), :math:`\gamma = \lceil\log_2 k\rceil`, with a
   frequency oracle at the full :math:`\varepsilon`.  Every user reports once,
   so the whole run is :math:`\varepsilon`-LDP (parallel composition);
2. the collector estimates, from group 1, the frequency of all
   :math:`2^{s_1}` prefixes and keeps the top :math:`k`; from group
   :math:`i > 1`, of the :math:`k 2^\eta` one-step extensions of the
   survivors, and keeps the top :math:`k`; group :math:`g` ranks full items.

The paper's oracle is OLH; dpdist uses FLH (:mod:`~dpdist.local.frequency.flh`,
OLH with a public family of hash functions: the same variance, and each round
costs :math:`O(n_i + S\,|C_i|)` instead of :math:`O(n_i |C_i|)`).  Prefixes of
up to 62 bits are mapped to FLH's domain :math:`[0, P)` by a fixed public
mixing (SplitMix64 mod :math:`P`): two candidates of a round collide with
probability about :math:`|C_i|^2/(2P) \approx 10^{-4}`, which only merges their
counts (privacy does not depend on it).

Strings (words, URLs) become bit strings with :func:`encode_strings`: a public
alphabet, :math:`\lceil\log_2(|A| + 1)\rceil` bits per character and code 0 for
the end, so every prefix of the bits is a prefix of the word; words are cut to
``max_chars``.  The encoding is public, so candidates no word can start with (a
symbol beyond the alphabet, anything but the end code after the end) are
dropped before they are estimated: fewer candidates, fewer false heavy hitters.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._rng import check_rng
from .._validation import EPSILON, Integer, check_param
from ..errors import InvalidParameterError, InvalidValueTypeError, OutOfDomainError
from ..privacy import PrivacyGuarantee

__all__ = ["HeavyHitters", "StringCodec", "encode_strings", "heavy_hitters"]

_MERSENNE_31 = 2**31 - 1
#: longest item, in bits (prefixes are handled as int64)
MAX_BITS = 62


@dataclass(frozen=True)
class StringCodec:
    """Strings over a public ``alphabet`` as ``bits``-bit integers (see the module docstring)."""

    alphabet: str = "abcdefghijklmnopqrstuvwxyz"
    max_chars: int = 12

    @property
    def bits_per_char(self) -> int:
        return math.ceil(math.log2(len(self.alphabet) + 1))

    @property
    def bits(self) -> int:
        return self.bits_per_char * self.max_chars

    def encode(self, words) -> np.ndarray:
        """Integers of the words (cut to ``max_chars``); a character outside the alphabet raises.

        Vectorized: the words become a fixed-width array of code points (code point 0 is
        the padding, i.e. the end code), mapped to symbols through the sorted alphabet.
        """
        points = np.asarray(words, dtype=f"<U{self.max_chars}").view(np.uint32).reshape(-1, self.max_chars)
        alphabet = np.array([ord(char) for char in self.alphabet], dtype=np.uint32)
        order = np.argsort(alphabet)
        position = np.minimum(np.searchsorted(alphabet[order], points), alphabet.size - 1)
        known = alphabet[order][position] == points
        unknown = (points != 0) & ~known
        if unknown.any():
            raise OutOfDomainError(
                f"The words given to heavy_hitters must use the alphabet {self.alphabet!r}. "
                f"Got the character {chr(int(points[unknown][0]))!r}."
            )
        symbols = np.where(known, order[position] + 1, 0).astype(np.int64)
        shifts = self.bits_per_char * np.arange(self.max_chars - 1, -1, -1, dtype=np.int64)
        return np.bitwise_or.reduce(symbols << shifts, axis=1) if symbols.size else np.zeros(0, dtype=np.int64)

    def valid_prefixes(self, prefixes: np.ndarray, length: int) -> np.ndarray:
        """Whether each ``length``-bit prefix can start an encoded word (public structure, no data).

        A symbol beyond the alphabet, or a non-zero symbol (or partial symbol)
        after the end code 0, is impossible; PEM drops such candidates.
        """
        width, mask = self.bits_per_char, (1 << self.bits_per_char) - 1
        prefixes = np.asarray(prefixes, dtype=np.int64)
        valid = np.ones(prefixes.size, dtype=bool)
        ended = np.zeros(prefixes.size, dtype=bool)
        full, rest = divmod(length, width)
        for column in range(full):
            symbol = (prefixes >> (length - (column + 1) * width)) & mask
            valid &= (symbol <= len(self.alphabet)) & ~(ended & (symbol != 0))
            ended |= symbol == 0
        if rest:
            valid &= ~(ended & ((prefixes & ((1 << rest) - 1)) != 0))
        return valid

    def decode(self, items) -> list[str]:
        """Words of the integers (the inverse of :meth:`encode` on words of at most ``max_chars``)."""
        width, mask = self.bits_per_char, (1 << self.bits_per_char) - 1
        words = []
        for item in np.asarray(items, dtype=np.int64).tolist():
            chars = []
            for column in range(self.max_chars):
                symbol = (item >> (width * (self.max_chars - 1 - column))) & mask
                if symbol == 0:
                    break
                chars.append(self.alphabet[symbol - 1] if symbol <= len(self.alphabet) else "?")
            words.append("".join(chars))
        return words


def encode_strings(words, *, alphabet: str = StringCodec.alphabet, max_chars: int = 12):
    """``(items, codec)``: the words as ``codec.bits``-bit integers, and the codec that decodes them."""
    max_chars = check_param("encode_strings", "max_chars", max_chars, Integer(low=1, high=MAX_BITS))
    if not isinstance(alphabet, str) or not alphabet or len(set(alphabet)) != len(alphabet):
        raise InvalidParameterError(
            f"The 'alphabet' parameter of encode_strings must be a non-empty string of distinct characters. "
            f"Got {alphabet!r} instead."
        )
    codec = StringCodec(alphabet=alphabet, max_chars=max_chars)
    if codec.bits > MAX_BITS:
        raise InvalidParameterError(
            f"encode_strings needs max_chars x {codec.bits_per_char} bits <= {MAX_BITS}. "
            f"Got max_chars={max_chars!r} ({codec.bits} bits)."
        )
    return codec.encode(words), codec


@dataclass(frozen=True)
class HeavyHitters:
    """The ``k`` items PEM found, most frequent first, with their estimated frequencies."""

    items: np.ndarray
    frequencies: np.ndarray
    n: int
    epsilon: float
    labels: list[str] | None = None
    guarantee: PrivacyGuarantee | None = None
    details: dict = field(default_factory=dict)
    method: str = "pem"

    def summary(self) -> dict[str, float]:
        names = self.labels if self.labels is not None else [str(i) for i in self.items.tolist()]
        return {name: float(f) for name, f in zip(names, self.frequencies)}

    def table(self) -> dict[str, np.ndarray]:
        table = {"item": self.items, "frequency": self.frequencies}
        if self.labels is not None:
            table["label"] = np.array(self.labels)
        return table


def _mix(prefixes: np.ndarray) -> np.ndarray:
    """SplitMix64 of each prefix, mod the Mersenne prime: FLH's item (public, fixed)."""
    with np.errstate(over="ignore"):
        state = prefixes.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        state = (state ^ (state >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        state = (state ^ (state >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        state = state ^ (state >> np.uint64(31))
    return (state % np.uint64(_MERSENNE_31)).astype(np.int64)


def _prefix_lengths(bits: int, k: int, step: int) -> list[int]:
    start = min(bits, max(1, math.ceil(math.log2(k))))
    lengths = list(range(start + step, bits, step)) + [bits]
    return lengths if lengths[0] <= bits else [bits]


def heavy_hitters(values, epsilon: float, *, k: int = 10, bits: int | None = None, step: int | None = None,
                  alphabet: str | None = None, max_chars: int = 12, codec: StringCodec | None = None,
                  hash_count: int = 4096, rng=None) -> HeavyHitters:
    r"""Find the ``k`` most frequent items with PEM under ``epsilon``-LDP (simulated collection).

    Parameters
    ----------
    values : array of int or sequence of str
        The users' items: integers in ``[0, 2**bits)``, or words (then encoded
        with :func:`encode_strings`, ``alphabet`` and ``max_chars``).
    epsilon : float
        Each user's budget (one report per user).
    k : int
        Number of heavy hitters to return (1..4096).
    bits : int, optional
        Item length :math:`L` in bits (1..62); required for integer values
        unless ``codec`` is given.
    codec : StringCodec, optional
        For integer values that are encoded words (:func:`encode_strings`):
        prunes impossible candidates and decodes the result.
    step : int, optional
        Bits added per round :math:`\eta`; default the paper's rule of thumb,
        so that :math:`k 2^\eta \le 4096` candidates per round (at most 8).
    hash_count : int
        Size :math:`S` of FLH's public family (default 4096): each round costs
        :math:`O(n_i + S |C_i|)`; the family's bias has mean square about
        :math:`\lVert f\rVert_2^2/(S(g-1))` (``flh``).
    rng : seed or Generator, optional
        Randomness of the group split and of every report; default the CSPRNG.

    Returns
    -------
    HeavyHitters
        Items (and their words, for strings) with the frequencies estimated
        in the last round, and ``details["rounds"]``: prefix length, group
        size and number of candidates of each round.
    """
    from .frequency.flh import FLH

    epsilon = check_param("heavy_hitters", "epsilon", epsilon, EPSILON)
    k = check_param("heavy_hitters", "k", k, Integer(low=1, high=4096))
    array = np.asarray(values)
    if array.dtype.kind in "USO":
        items, codec = encode_strings(array, alphabet=alphabet or StringCodec.alphabet, max_chars=max_chars)
        bits = codec.bits
    else:
        if array.ndim != 1 or array.dtype.kind not in "iu":
            raise InvalidValueTypeError(
                f"The 'values' argument of heavy_hitters must be a 1-D array of integers or a sequence of "
                f"strings. Got dtype {array.dtype} and shape {array.shape}."
            )
        if codec is not None:
            bits = codec.bits
        bits = check_param("heavy_hitters", "bits", bits, Integer(low=1, high=MAX_BITS))
        items = array.astype(np.int64)
        if items.size and (items.min() < 0 or items.max() >= 1 << bits):
            raise OutOfDomainError(f"The 'values' of heavy_hitters must lie in [0, 2**{bits}). Got {items.min()}..{items.max()}.")
    if step is None:
        step = max(1, min(8, int(math.log2(4096 / k)) if k < 4096 else 1))
    step = check_param("heavy_hitters", "step", step, Integer(low=1, high=16))
    if items.size == 0:
        raise InvalidParameterError("heavy_hitters needs at least one value.")
    generator = check_rng(rng, owner="heavy_hitters")
    lengths = _prefix_lengths(bits, k, step)
    groups = generator.integers(0, len(lengths), size=items.size)
    oracle = FLH(epsilon=epsilon, domain_size=_MERSENNE_31, hash_count=hash_count)
    p_star, q_star = oracle.support_probabilities()
    if lengths[0] > 20:
        raise InvalidParameterError(
            f"heavy_hitters' first round would enumerate 2**{lengths[0]} prefixes; lower 'step' or raise 'k'."
        )
    candidates = np.arange(1 << lengths[0], dtype=np.int64)
    rounds, previous = [], 0
    for index, length in enumerate(lengths):
        if index > 0:  # extend the survivors by the new bits
            extra = length - previous
            candidates = (candidates[:, None] << extra | np.arange(1 << extra)[None, :]).ravel()
        if codec is not None:
            candidates = candidates[codec.valid_prefixes(candidates, length)]
        members = items[groups == index] >> (bits - length)
        aggregator = oracle.aggregator().add(oracle.privatize(_mix(members), rng=generator))
        size = max(aggregator.n, 1)
        support = oracle.support_counts_of(aggregator, _mix(candidates))
        estimate = (support / size - q_star) / (p_star - q_star)
        order = np.argsort(-estimate, kind="stable")[:k]
        rounds.append({"prefix_bits": length, "users": int(aggregator.n), "candidates": int(candidates.size)})
        candidates, frequencies, previous = candidates[order], estimate[order], length
    return HeavyHitters(
        items=candidates,
        frequencies=frequencies,
        n=int(items.size),
        epsilon=epsilon,
        labels=codec.decode(candidates) if codec is not None else None,
        guarantee=oracle.guarantee,
        details={"rounds": rounds, "bits": bits, "step": step, "oracle": "flh", "hash_count": oracle.hash_count},
    )
