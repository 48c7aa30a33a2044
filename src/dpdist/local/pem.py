r"""Heavy hitters of an unknown domain: words as bit strings, the result, and ``heavy_hitters``.

The method, PEM (Wang et al., IEEE TDSC 2021, sec. V), and its privacy are
the protocol ``pem`` (:mod:`dpdist.local.frequency.pem`), which a deployment
runs on devices and a collector; :func:`heavy_hitters` simulates one
collection with it.

Strings (words, URLs) become bit strings with :func:`encode_strings`: a public
alphabet, :math:`\lceil\log_2(|A| + 1)\rceil` bits per character and code 0 for
the end, so every prefix of the bits is a prefix of the word; words are cut to
``max_chars``.  The encoding is public, so candidates no word can start with (a
symbol beyond the alphabet, anything but the end code after the end) are
dropped before they are estimated: fewer candidates, fewer false heavy hitters.
Prefixes are mapped to FLH's domain :math:`[0, 2^{31} - 1)` by
:func:`mix_prefixes`, a fixed public SplitMix64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._rng import check_rng
from .._validation import Integer, check_param
from ..errors import InvalidParameterError, InvalidValueTypeError, OutOfDomainError
from ..privacy import PrivacyGuarantee

__all__ = ["HeavyHitters", "StringCodec", "encode_strings", "heavy_hitters", "mix_prefixes"]

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
    standard_error: np.ndarray | None = None
    details: dict = field(default_factory=dict)
    method: str = "pem"

    @property
    def names(self) -> list[str]:
        """The items' words (for words) or their integers as text."""
        return self.labels if self.labels is not None else [str(i) for i in self.items.tolist()]

    def summary(self) -> dict[str, float]:
        return {name: float(f) for name, f in zip(self.names, self.frequencies)}

    def table(self) -> dict[str, np.ndarray]:
        table = {"item": self.items, "frequency": self.frequencies}
        if self.standard_error is not None:
            table["standard_error"] = self.standard_error
        if self.labels is not None:
            table["label"] = np.array(self.labels)
        return table


def mix_prefixes(prefixes) -> np.ndarray:
    """SplitMix64 of each prefix, mod the Mersenne prime :math:`2^{31}-1`: its FLH item (public, fixed)."""
    with np.errstate(over="ignore"):
        state = np.asarray(prefixes, dtype=np.int64).astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        state = (state ^ (state >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        state = (state ^ (state >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        state = state ^ (state >> np.uint64(31))
    return (state % np.uint64(_MERSENNE_31)).astype(np.int64)


def heavy_hitters(values, epsilon: float, *, k: int = 10, bits: int | None = None, step: int | None = None,
                  alphabet: str | None = None, max_chars: int = 12, codec: StringCodec | None = None,
                  hash_count: int = 4096, rng=None) -> HeavyHitters:
    r"""Find the ``k`` most frequent items with PEM under ``epsilon``-LDP (simulated collection).

    The same protocol a deployment runs (``local.make("pem", ...)``,
    :class:`~dpdist.local.frequency.pem.PEM`): its exact aggregate sampler
    draws the groups' FLH tables, then its estimator runs the rounds.

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
        in the last round and their standard errors, and ``details["rounds"]``:
        prefix length, group size and number of candidates of each round.
    """
    from .frequency.pem import PEM

    array = np.asarray(values)
    if array.dtype.kind in "USO":
        params = {"alphabet": alphabet or StringCodec.alphabet, "max_chars": max_chars}
    elif codec is not None:
        params = {"alphabet": codec.alphabet, "max_chars": codec.max_chars}
    else:
        if array.ndim != 1 or array.dtype.kind not in "iu":
            raise InvalidValueTypeError(
                f"The 'values' argument of heavy_hitters must be a 1-D array of integers or a sequence of "
                f"strings. Got dtype {array.dtype} and shape {array.shape}."
            )
        if bits is None:
            raise InvalidParameterError("heavy_hitters needs 'bits' (the item length) for integer values, or a 'codec'.")
        params = {"bits": bits}
    if array.size == 0:
        raise InvalidParameterError("heavy_hitters needs at least one value.")
    protocol = PEM(epsilon=epsilon, k=k, step=step, hash_count=hash_count, **params)
    return protocol.estimate(protocol.simulate(array, rng=check_rng(rng, owner="heavy_hitters")))
