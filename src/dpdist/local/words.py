r"""Words as bit strings for the heavy-hitter protocol ``pem``: :class:`StringCodec`, :func:`encode_strings`.

Strings (words, URLs) become bit strings: a public alphabet,
:math:`\lceil\log_2(|A| + 1)\rceil` bits per character and code 0 for the end,
so every prefix of the bits is a prefix of the word; words are cut to
``max_chars``.  The encoding is public, so candidates no word can start with (a
symbol beyond the alphabet, anything but the end code after the end) are
dropped before they are estimated: fewer candidates, fewer false heavy hitters.
Prefixes are mapped to FLH's domain :math:`[0, 2^{31} - 1)` by
:func:`mix_prefixes`, a fixed public SplitMix64.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._validation import Alphabet, Described, Integer, check_param, refused_values, validate_params
from ..errors import InvalidParameterError, OutOfDomainError
from .._types import ArrayLike

__all__ = ["MAX_BITS", "StringCodec", "encode_strings", "mix_prefixes", "words_in_alphabet"]

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

    def encode(self, words: ArrayLike, *, owner: str = "StringCodec.encode") -> np.ndarray:
        """Integers of the words (cut to ``max_chars``); a character outside the alphabet raises.

        ``owner`` names the caller in the error (e.g. ``"PEM.privatize"``).

        Vectorized: the words become a fixed-width array of code points (code point 0 is
        the padding, i.e. the end code), mapped to symbols through the sorted alphabet.
        """
        points = np.ascontiguousarray(words, dtype=f"<U{self.max_chars}").view(np.uint32).reshape(-1, self.max_chars)
        alphabet = np.array([ord(char) for char in self.alphabet], dtype=np.uint32)
        order = np.argsort(alphabet)
        position = np.minimum(np.searchsorted(alphabet[order], points), alphabet.size - 1)
        known = alphabet[order][position] == points
        unknown = (points != 0) & ~known
        if unknown.any():
            refused = np.any(unknown, axis=1)
            raise refused_values(OutOfDomainError, f"The 'values' argument of {owner} must hold words over the alphabet "
                                 f"{self.alphabet!r}", int(refused.sum()), "with other characters", int(np.flatnonzero(refused)[0]))
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

    def decode(self, items: ArrayLike) -> list[str]:
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


@validate_params({"alphabet": Described(Alphabet(max_size=2**31), "a non-empty string of distinct characters")})
def encode_strings(words: ArrayLike, *, alphabet: str = StringCodec.alphabet, max_chars: int = 12) -> tuple[np.ndarray, StringCodec]:
    """``(items, codec)``: the words as ``codec.bits``-bit integers, and the codec that decodes them."""
    max_chars = check_param("encode_strings", "max_chars", max_chars, Integer(low=1, high=MAX_BITS))
    codec = StringCodec(alphabet=alphabet, max_chars=max_chars)
    if codec.bits > MAX_BITS:
        raise InvalidParameterError(
            f"encode_strings needs max_chars x {codec.bits_per_char} bits <= {MAX_BITS}. "
            f"Got max_chars={max_chars!r} ({codec.bits} bits)."
        )
    return codec.encode(words, owner="encode_strings"), codec


def mix_prefixes(prefixes: ArrayLike) -> np.ndarray:
    """SplitMix64 of each prefix, mod the Mersenne prime :math:`2^{31}-1`: its FLH item (public, fixed)."""
    with np.errstate(over="ignore"):
        state = np.asarray(prefixes, dtype=np.int64).astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        state = (state ^ (state >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        state = (state ^ (state >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        state = state ^ (state >> np.uint64(31))
    return (state % np.uint64(_MERSENNE_31)).astype(np.int64)


def words_in_alphabet(words: ArrayLike, alphabet: str) -> np.ndarray:
    """Whether each word uses only characters of ``alphabet`` (the words ``pem`` can encode), vectorized."""
    array = np.asarray(words, dtype=np.str_)
    if array.size == 0:
        return np.zeros(0, dtype=bool)
    width = max(array.dtype.itemsize // 4, 1)
    points = np.ascontiguousarray(array, dtype=f"<U{width}").view(np.uint32).reshape(-1, width)
    allowed = np.array(sorted({0, *map(ord, alphabet)}), dtype=np.uint32)
    return np.asarray(np.isin(points, allowed).all(axis=1))
