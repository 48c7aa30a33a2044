r"""What Apple's two count-mean sketches share (``cms``, ``hcms``): the public family, the queries.

A sketch oracle hashes items with :math:`k` public Carter–Wegman functions into
:math:`[m]` (:func:`~dpdist.local.frequency.flh.family_seeds`) and keeps a
table whose size does not depend on :math:`d`.  Subclasses say how a report
supports an item, :meth:`SketchOracle.support_counts_of`; this base validates
the family, answers :meth:`frequencies_of` for any items, and ranks every item
in ``estimate`` only for domains of at most :data:`MAX_ESTIMATED_ITEMS`.
"""

from __future__ import annotations

import numpy as np

from ..._validation import Integer, PowerOfTwo, Prime, check_integer_values
from ...errors import EmptyAggregateError, InvalidParameterError
from . import _hashing
from ._oracle import FrequencyOracle
from .flh import family_seeds
from ..._types import ArrayLike
from .._aggregator import Aggregator

__all__ = ["MAX_ESTIMATED_ITEMS", "SketchOracle"]

_MERSENNE_31 = 2**31 - 1
#: largest table (counts) a sketch aggregator keeps
MAX_TABLE_CELLS = 1 << 24
#: largest domain whose every item ``estimate`` ranks; beyond it, query items with ``frequencies_of``
MAX_ESTIMATED_ITEMS = 1 << 24
#: elements per block when hashing functions against items (bounds memory)
BLOCK_ELEMENTS = 1 << 21


class SketchOracle(FrequencyOracle):
    """Base of the sketch oracles: parameters ``hash_count`` (k), ``width`` (m), ``hash_prime``, ``family_seed``."""

    _constraints = {
        **FrequencyOracle._constraints,
        "hash_count": Integer(low=1, high=MAX_TABLE_CELLS // 2),
        "width": PowerOfTwo(low=2, high=1 << 20),
        "hash_prime": Prime(low=3, high=_MERSENNE_31),
        "family_seed": Integer(low=0, high=2**63 - 1),
    }
    _relations = (*FrequencyOracle._relations, _hashing.PRIME_ABOVE_DOMAIN)
    _defaults = {"hash_count": 2048, "width": 1024, "hash_prime": _MERSENNE_31, "family_seed": 0}
    _p: float  # support probabilities, set by the subclass's _setup
    _q: float
    #: reports and the table do not grow with d; ``estimate`` ranks at most MAX_ESTIMATED_ITEMS items
    _bytes_per_item = 0

    def _setup_family(self, table_cells: int) -> None:
        """Validate the family and the table of ``table_cells`` counts; set ``_prime``, ``_k``, ``_m``, ``_seeds``."""
        prime, k, m = self._params["hash_prime"], self._params["hash_count"], self._params["width"]
        owner = self.display_name
        if table_cells > MAX_TABLE_CELLS:
            raise InvalidParameterError(
                f"{owner} would keep a table of {table_cells} counts for hash_count = {k} and width = {m}; it must "
                f"be <= {MAX_TABLE_CELLS}. Lower 'hash_count' (or 'width')."
            )
        self._prime, self._k, self._m = prime, k, m
        self._seeds = family_seeds(self._params["family_seed"], k, prime)
        self._collision = _hashing.collision_probability(prime, m)

    @property
    def hash_count(self) -> int:
        """The number :math:`k` of hash functions."""
        return self._k

    @property
    def width(self) -> int:
        """The sketch width :math:`m`."""
        return self._m

    def support_probabilities(self) -> tuple[float, float]:
        return self._p, self._q

    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        prime = self._prime
        return {"p": self._p, "coefficients": [[int(seed // prime) + 1, int(seed % prime)] for seed in self._seeds]}

    def _hashed(self, functions, items) -> np.ndarray:
        return _hashing.hash_items(self._seeds[functions], items, self._prime, self._m)

    def _function_blocks(self, items: np.ndarray):
        """``(functions, h_functions(items))`` blocks over all ``k`` functions, memory-bounded."""
        rows = max(1, BLOCK_ELEMENTS // max(items.size, 1))
        for start in range(0, self._k, rows):
            functions = np.arange(start, min(start + rows, self._k))
            yield functions, self._hashed(functions[:, None], items[None, :])

    def support_counts_of(self, aggregator: Aggregator, items: ArrayLike) -> np.ndarray:  # pragma: no cover - subclasses
        raise NotImplementedError

    def support_counts(self, aggregator: Aggregator) -> np.ndarray:
        """Support counts of every item (``d`` <= :data:`MAX_ESTIMATED_ITEMS`; see :meth:`frequencies_of`)."""
        if self.domain_size > MAX_ESTIMATED_ITEMS:
            raise InvalidParameterError(
                f"{self.display_name}.estimate ranks every item of the domain; domain_size = {self.domain_size} "
                f"is over {MAX_ESTIMATED_ITEMS}. Query the items you want with "
                f"protocol.frequencies_of(aggregator, items), or find them with dpdist.local.heavy_hitters."
            )
        return self.support_counts_of(aggregator, np.arange(self.domain_size, dtype=np.int64))

    def frequencies_of(self, aggregator: Aggregator, items: ArrayLike) -> np.ndarray:
        """Unbiased frequency estimates of the given ``items`` (any domain size: the sketch is queried)."""
        items = check_integer_values(items, self.domain_size, owner=f"{self.display_name}.frequencies_of")
        if aggregator.n == 0:
            raise EmptyAggregateError(f"{self.display_name}.frequencies_of needs at least one report.")
        return (self.support_counts_of(aggregator, items) / aggregator.n - self._q) / (self._p - self._q)
