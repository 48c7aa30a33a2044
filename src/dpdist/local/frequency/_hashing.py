r"""The Carter–Wegman universal hash family used by OLH, with its exact collision law.

.. math::

    h_{a,b}(x) = ((a x + b) \bmod P) \bmod g, \qquad a \in [1, P),\; b \in [0, P),

for a prime :math:`P` and inputs :math:`0 \le x < P`.  A seed
:math:`s \in [0, (P-1)P)` names one function: :math:`a = 1 + \lfloor s/P \rfloor`,
:math:`b = s \bmod P`.

Exact collision probability (derived here).  For :math:`x \ne x'` the map
:math:`(a, b) \mapsto (ax + b, ax' + b) \bmod P` is a bijection from
:math:`[1,P) \times [0,P)` onto the pairs :math:`(r, t)` with :math:`r \ne t`,
so :math:`(r, t)` is uniform on those :math:`P(P-1)` pairs.  Writing
:math:`P = Qg + R`, the residue classes mod :math:`g` have :math:`Q+1`
members (:math:`R` classes) or :math:`Q` members (:math:`g-R` classes), hence

.. math::

    c = \Pr[h(x) = h(x')] = \frac{R (Q+1) Q + (g - R) Q (Q - 1)}{P (P - 1)},

the same for every pair :math:`x \ne x'` (about :math:`1/g`).  All
arithmetic is in ``int64``: :math:`a x + b < 2^{62}` for :math:`P \le 2^{31}-1`.
"""

from __future__ import annotations

import numpy as np

from ..._validation import Below, is_prime
from .._report_kinds import Column, IntegerRowReports

__all__ = ["is_prime", "PRIME_ABOVE_DOMAIN", "collision_probability", "seed_count", "split_seeds", "hash_items", "support_counts", "seed_value_format"]

#: elements per block when hashing a chunk of users against all items: 2**16 int64 (512 KB) keeps a block's
#: temporaries in the CPU cache (the same counts as larger blocks, about twice as fast as blocks of 2**21)
_BLOCK_ELEMENTS = 1 << 16


#: The relation of a hashing protocol's parameters: items are hashed modulo ``hash_prime`` (a prime by its rule,
#: :class:`~dpdist._validation.Prime`), so ``domain_size`` is at most it.
PRIME_ABOVE_DOMAIN = Below("domain_size", "hash_prime", strict=False, why="items are hashed modulo that prime",
                           counterexample={"domain_size": 8, "hash_prime": 7})


def seed_count(prime: int) -> int:
    """Number of functions in the family, :math:`(P-1)P`."""
    return (prime - 1) * prime


def collision_probability(prime: int, hash_range: int) -> float:
    """Exact :math:`\\Pr[h(x) = h(x')]` for :math:`x \\ne x'` over a uniform seed (module docstring)."""
    quotient, remainder = divmod(prime, hash_range)
    same = remainder * (quotient + 1) * quotient + (hash_range - remainder) * quotient * (quotient - 1)
    return same / (prime * (prime - 1))


def split_seeds(seeds: np.ndarray, prime: int) -> tuple[np.ndarray, np.ndarray]:
    """The coefficients ``(a, b)`` (int64) of each seed."""
    seeds = seeds.astype(np.int64, copy=False)
    return 1 + seeds // prime, seeds % prime


def hash_items(seeds: np.ndarray, items: np.ndarray, prime: int, hash_range: int) -> np.ndarray:
    """``h_seed(item)`` elementwise (broadcasting), as int64."""
    a, b = split_seeds(np.asarray(seeds), prime)
    hashed = a * np.asarray(items, dtype=np.int64)  # then in place: one array of the broadcast shape, not four
    if not isinstance(hashed, np.ndarray):
        return (hashed + b) % prime % hash_range
    hashed += b
    hashed %= prime
    if hash_range & (hash_range - 1):
        hashed %= hash_range
    else:  # a power of two: the low bits of a non-negative int, the same values at a tenth of the cost of %
        hashed &= hash_range - 1
    return hashed


def support_counts(seeds: np.ndarray, values: np.ndarray, domain_size: int, prime: int, hash_range: int) -> np.ndarray:
    """For every item ``v``, the number of reports ``(seed, value)`` with ``h_seed(v) == value``.

    Vectorized over blocks of users x all items, so memory stays near
    ``_BLOCK_ELEMENTS`` int64 whatever the number of reports.
    """
    counts = np.zeros(domain_size, dtype=np.int64)
    items = np.arange(domain_size, dtype=np.int64)[None, :]
    a, b = split_seeds(seeds, prime)
    values = values.astype(np.int64, copy=False)
    chunk = max(1, _BLOCK_ELEMENTS // domain_size)
    for start in range(0, seeds.size, chunk):
        stop = start + chunk
        hashed = a[start:stop, None] * items
        hashed += b[start:stop, None]
        hashed %= prime
        hashed %= hash_range
        counts += np.count_nonzero(hashed == values[start:stop, None], axis=0)
    return counts


def seed_value_format(n_seeds: int, hash_range: int) -> IntegerRowReports:
    """The reports of OLH and LOLOHA: ``uint64`` rows ``(seed, value)``, seed in ``[0, n_seeds)`` and
    value in ``[0, hash_range)`` (out-of-range rows are counted as ``seed_out_of_range`` or
    ``value_out_of_range``)."""
    return IntegerRowReports([Column("seed", n_seeds), Column("value", hash_range)], dtype=np.uint64)

