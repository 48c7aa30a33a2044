r"""Fast local hashing, ``flh`` (Cormode, Maddock & Maple, VLDB 2021, sec. 3.4).

OLH (:mod:`dpdist.local.frequency.olh`) lets every user draw a fresh hash
function, so the collector must hash each report against every item:
:math:`O(nd)` work.  FLH fixes a *public* family of :math:`S` functions
:math:`h_0, \dots, h_{S-1}` drawn once from the same Carter–Wegman family
(:mod:`dpdist.local.frequency._hashing`); a user with item :math:`v` picks
:math:`j` uniformly in :math:`[S]` and reports :math:`(j, y)` with :math:`y`
the :math:`g`-ary randomized response of :math:`h_j(v)`
(:math:`\Pr[y = h_j(v)] = p = e^\varepsilon/(e^\varepsilon + g - 1)`).

Aggregation in :math:`O(n + S d)`.  The aggregator keeps the :math:`S \times g`
table :math:`T[j, y]` of report counts (one ``bincount``: :math:`O(n)`,
mergeable by addition).  The support count of item :math:`v` is
:math:`C_v = \sum_j T[j, h_j(v)]`, one gather per function: :math:`O(Sd)`.

Privacy.  The output :math:`(j, y)` has probability
:math:`\frac1S \mathrm{GRR}_g(y \mid h_j(v))`, so every likelihood ratio is at
most :math:`e^\varepsilon` whatever the family; ``channel()`` enumerates these
:math:`S g` outputs exactly (column :math:`j g + y`).

Estimator and its bias (derived here).  The default estimator is OLH's,
:math:`\hat f_v = (C_v/n - q^*)/(p - q^*)` with
:math:`q^* = p c + (1-p)(1-c)/(g-1)` and :math:`c` the family's exact collision
probability.  Over the random draw of the family it is unbiased, with OLH's
variance.  For one *fixed* family, with :math:`A_{vv'}` the fraction of the
:math:`S` functions under which :math:`v, v'` collide,

.. math::

    \mathbb E[\hat f_v \mid \text{family}] - f_v
      = \sum_{v' \ne v} f_{v'} \frac{A_{vv'} - c}{1 - c},

and since :math:`A_{vv'}` averages :math:`S` independent indicators of mean
:math:`c`, this bias has mean square about
:math:`\frac{c}{S(1-c)} \sum_{v' \ne v} f_{v'}^2 \approx
\lVert f \rVert_2^2 / (S (g-1))` — the price of the fixed family (the
"heuristic" of the paper).  It does not shrink with :math:`n`, so ``S`` must
grow with :math:`n \lVert f\rVert_2^2`; ``tags.unbiased`` is therefore False.
The estimators on the exact channel (``estimator="ibu"``) use the family's
actual :math:`A` and have no such bias.

Family.  ``family_seed`` (public, part of the config) names the :math:`S`
Carter–Wegman seeds: :math:`s_j = \mathrm{splitmix64}(\text{family\_seed}, j)
\bmod (P-1)P`, a fixed integer recipe that does not depend on NumPy's
generators, so clients and collectors on any platform agree.  The reduction
mod :math:`(P-1)P` puts the seeds within total-variation distance
:math:`(2^{64} \bmod (P-1)P)/2^{64}` of uniform (about :math:`1.4 \cdot 10^{-9}`
for the default prime); privacy does not depend on it.

Exact aggregate sampler.  A user keeps :math:`h_j(v)` with probability
:math:`\lambda = (e^\varepsilon - 1)/(e^\varepsilon + g - 1)` (in fact the largest multiple of
:math:`2^{-53}` with ratio at most :math:`e^\varepsilon`, which ``U < lambda`` realizes exactly:
:mod:`dpdist.local._bernoulli`), otherwise
reports a uniform :math:`y`; since :math:`j` is uniform and independent of
:math:`v`, the re-drawn users fill the table as one uniform multinomial over
its :math:`Sg` cells, and the kept users of item :math:`v` as a multinomial
over the cells :math:`(j, h_j(v))`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._docs import shared_parameters
from ...errors import InvalidParameterError
from ..._validation import Integer, Optional, Prime, check_allocation
from .._protocol import ProtocolTags, register
from .._report_kinds import Column, IntegerRowReports
from . import _hashing
from ._local_hashing import LocalHashingOracle
from ._oracle import FrequencyOracle
from ..._types import ArrayLike
from .._aggregator import Aggregator

__all__ = ["FLH"]

_MERSENNE_31 = 2**31 - 1
#: largest table (S x g cells) an aggregator keeps
_MAX_TABLE_CELLS = 1 << 24
#: default family size, and the default table's largest size
_DEFAULT_HASH_COUNT, _DEFAULT_TABLE_CELLS = 1 << 16, 1 << 22
#: largest hash range g (given, or the default's cap)
MAX_HASH_RANGE = 1 << 20
#: elements per block when hashing the family against all items (bounds memory at ~16 MB); the channel operator's
#: float sums are grouped by these blocks, so its results depend on this size
_BLOCK_ELEMENTS = 1 << 21
#: the same for the support counts of an integer table, sums that no block size changes: 2**16 int64 (512 KB) keeps
#: a block's temporaries in the CPU cache, about 1.4 times faster than blocks of 2**21
_COUNT_BLOCK_ELEMENTS = 1 << 16
#: at most this many (item, function) cells for the per-item multinomial path of ``simulate``
_MULTINOMIAL_CELLS = 1 << 22


def _count_blocks(table: np.ndarray) -> int:
    """Elements per block for sums over a table: cache-sized for integer counts (exact in any grouping), else the
    operator's blocks (float sums whose rounding follows the grouping)."""
    return _COUNT_BLOCK_ELEMENTS if table.dtype.kind in "iub" else _BLOCK_ELEMENTS


def default_hash_range(epsilon: float, largest: int = MAX_HASH_RANGE) -> int:
    r"""OLH's range :math:`g = \operatorname{round}(e^\varepsilon + 1)`, capped at ``largest`` (and at least 2).

    The cap keeps a table of :math:`S g` counts within its limit at every supported
    :math:`\varepsilon` (up to 30, where :math:`e^\varepsilon + 1 \approx 10^{13}`).  Any
    :math:`g \ge 2` gives an :math:`\varepsilon`-LDP report (the GRR over :math:`g` values has
    ratio :math:`e^\varepsilon`); a :math:`g` below OLH's only costs variance, through the
    collisions :math:`\approx 1/g` of the hash, which at :math:`g \ge 2^{10}` are negligible.
    """
    return max(2, min(int(round(math.exp(epsilon) + 1.0)), largest))


def family_seeds(family_seed: int, hash_count: int, prime: int) -> np.ndarray:
    """The Carter–Wegman seeds of the public family: splitmix64 of ``(family_seed, j)`` mod ``(P-1)P``.

    SplitMix64 (Steele, Lea & Flood, OOPSLA 2014) in wrapping ``uint64`` arithmetic.
    """
    with np.errstate(over="ignore"):
        state = np.uint64(family_seed) + (np.arange(1, hash_count + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15))
        state = (state ^ (state >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        state = (state ^ (state >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        state = state ^ (state >> np.uint64(31))
    return (state % np.uint64(_hashing.seed_count(prime))).astype(np.int64)


@register
@shared_parameters
class FLH(LocalHashingOracle):
    r"""Fast local hashing: OLH with a public family of ``hash_count`` functions.

    Parameters
    ----------
    {epsilon}
    {hashed_domain_size}
    hash_count : int, optional
        Size :math:`S` of the public family; default
        :math:`\min(2^{16}, \lfloor 2^{22}/g \rfloor)` (a table of at most
        :math:`2^{22}` counts).  The collector's
        cost is :math:`O(n + Sd)`; the fixed family adds a bias of mean square
        about :math:`\lVert f\rVert_2^2/(S(g-1))` per item (module docstring).
    hash_range : int, optional
        Range :math:`g`; default :math:`\operatorname{round}(e^\varepsilon + 1)` (OLH's), capped at
        :math:`2^{20}` and at the table's limit :math:`2^{24}/S` (:func:`default_hash_range`), so every
        :math:`\varepsilon` of the supported range works.
    {family_prime}
    {family_seed}

    Notes
    -----
    Reports are ``(n, 2)`` unsigned arrays: column 0 the function index
    :math:`j \in [0, S)`, column 1 the perturbed hash value in :math:`[0, g)`.
    """

    name = "flh"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    @property
    def statistic_total_per_report(self) -> int:
        """1: one (function, hash value) cell per report."""
        return 1
    summary = "fast local hashing: OLH over a public family of S hash functions; aggregation O(n + S d)"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=True, unbiased=False)
    output_histogram = True
    _constraints = {
        **FrequencyOracle._constraints,
        "hash_count": Optional(Integer(low=1, high=_MAX_TABLE_CELLS)),
        "hash_range": Optional(Integer(low=2, high=MAX_HASH_RANGE)),
        "hash_prime": Prime(low=3, high=_MERSENNE_31),
        "family_seed": Integer(low=0, high=2**63 - 1),
    }
    _defaults = {"hash_count": None, "hash_range": None, "hash_prime": _MERSENNE_31, "family_seed": 0}
    #: reports and the S x g table do not grow with d (``pem`` runs FLH over 2^31 - 1 items);
    #: an estimate of every item does, and is checked when it is asked for (:meth:`estimate`)
    _bytes_per_item = 0

    def _setup(self):
        self._prime = prime = self._checked_prime()
        given_count = self._params["hash_count"]
        self._g = self._params["hash_range"] or default_hash_range(
            self.epsilon, MAX_HASH_RANGE if given_count is None else min(MAX_HASH_RANGE, _MAX_TABLE_CELLS // given_count)
        )
        self._S = given_count or max(1, min(_DEFAULT_HASH_COUNT, _DEFAULT_TABLE_CELLS // self._g))
        if self._S * self._g > _MAX_TABLE_CELLS:
            raise InvalidParameterError(
                f"FLH keeps a table of hash_count x hash_range = {self._S} x {self._g} counts; "
                f"the product must be <= {_MAX_TABLE_CELLS}. Lower 'hash_count' (or 'hash_range')."
            )
        self._seeds = family_seeds(self._params["family_seed"], self._S, prime)
        self._setup_hashed_grr()

    @property
    def hash_range(self) -> int:
        """The range :math:`g` actually used."""
        return self._g

    @property
    def hash_count(self) -> int:
        """The size :math:`S` of the public family."""
        return self._S

    @property
    def statistic_size(self) -> int:
        return self._S * self._g

    def support_probabilities(self) -> tuple[float, float]:
        """``(p*, q*)`` averaged over the family draw (as OLH's, see the module docstring)."""
        return self._p, self._q

    def _report_seeds(self, column: np.ndarray) -> np.ndarray:
        return self._seeds[column]

    def hash_table(self, functions: np.ndarray | None = None) -> np.ndarray:
        """``h_j(v)`` for the functions ``j`` (default all) and every item: shape ``(len(functions), d)``."""
        seeds = self._seeds if functions is None else self._seeds[functions]
        items = np.arange(self.domain_size, dtype=np.int64)
        return _hashing.hash_items(seeds[:, None], items[None, :], self._prime, self._g)

    def _function_blocks(self, elements: int = _BLOCK_ELEMENTS):
        rows = max(1, elements // self.domain_size)
        for start in range(0, self._S, rows):
            functions = np.arange(start, min(start + rows, self._S))
            yield functions, self.hash_table(functions)

    # ------------------------------------------------------------------ client
    def _privatize(self, values, rng):
        functions = rng.integers(0, self._S, size=values.size, dtype=np.int64)
        perturbed = self._perturb(_hashing.hash_items(self._seeds[functions], values, self._prime, self._g), rng)
        return np.column_stack([functions, perturbed]).astype(self._report_dtype)

    # ------------------------------------------------------------------ server
    def _report_format(self):
        return IntegerRowReports([Column("function", self._S, label="function index"), Column("value", self._g)])

    def _accumulate(self, reports):
        cells = reports[:, 0].astype(np.int64) * self._g + reports[:, 1].astype(np.int64)
        return np.bincount(cells, minlength=self.statistic_size).astype(np.int64, copy=False)

    def support_counts(self, aggregator: Aggregator) -> np.ndarray:
        """:math:`C_v = \\sum_j T[j, h_j(v)]`, in :math:`O(Sd)` (blocks of functions)."""
        table = aggregator.statistic.reshape(self._S, self._g)
        support = np.zeros(self.domain_size, dtype=np.float64)
        for functions, hashed in self._function_blocks(_count_blocks(table)):
            support += np.take_along_axis(table[functions], hashed, axis=1).sum(axis=0)
        return support

    def support_counts_of(self, aggregator: Aggregator, items: ArrayLike) -> np.ndarray:
        """Support counts of the given ``items`` only, in :math:`O(S m)` for :math:`m` items (for huge domains)."""
        return self.support_counts_in_table(aggregator.statistic, items)

    def support_counts_in_table(self, statistic: np.ndarray, items: ArrayLike) -> np.ndarray:
        """:math:`C_v` of the given ``items`` in a table of report counts (an aggregator's statistic)."""
        items = np.asarray(items, dtype=np.int64)
        table = np.asarray(statistic).reshape(self._S * self._g)
        support = np.zeros(items.size, dtype=np.float64)
        rows = max(1, _count_blocks(table) // max(items.size, 1))
        for start in range(0, self._S, rows):
            stop = min(start + rows, self._S)
            cells = _hashing.hash_items(self._seeds[start:stop, None], items[None, :], self._prime, self._g)
            cells += np.arange(start * self._g, stop * self._g, self._g)[:, None]  # cell j g + h_j(v) of the table
            support += table[cells].sum(axis=0)
        return support

    def estimate(self, data: Aggregator | ArrayLike, **options: Any) -> Any:
        """As :meth:`FrequencyOracle.estimate`; refused when ``d`` floats exceed ``MAX_ALLOCATION_BYTES``."""
        check_allocation(
            f"{self.display_name}.estimate", "domain_size", self.domain_size, 8,
            "an estimate of every item (a float64 per item; query some items with support_counts_of)",
        )
        return super().estimate(data, **options)

    def _simulate(self, values, rng):
        if self.domain_size > values.size:  # huge domains: only the items present (the same draws)
            items, counts = np.unique(values, return_counts=True)
        else:
            items, counts = np.arange(self.domain_size), np.bincount(values, minlength=self.domain_size)
        kept = rng.binomial(counts, self._keep)  # binomial(0, p) draws nothing: the stream is the same
        held = kept > 0
        return self.sample_table(items[held], kept[held], values.size - kept.sum(), rng)

    def sample_table(self, items: np.ndarray, kept: np.ndarray, redrawn: int, rng: np.random.Generator) -> np.ndarray:
        """The report table of ``kept[i]`` users who kept item ``items[i]``'s hash and ``redrawn`` who did not.

        Exact (module docstring): the redrawn users fill the table as one uniform
        multinomial, the kept users of each item spread uniformly over the
        functions, at cells :math:`(j, h_j(v))`.
        """
        table = rng.multinomial(redrawn, np.full(self.statistic_size, 1.0 / self.statistic_size))
        if items.size * self._S <= _MULTINOMIAL_CELLS:
            per_function = rng.multinomial(kept, np.full(self._S, 1.0 / self._S))  # (items, S)
            # only the (item, function) pairs with a user are hashed: at most sum(kept) of the items x S
            owner, function = np.nonzero(per_function)
            hashed = _hashing.hash_items(self._seeds[function], items[owner], self._prime, self._g)
            table += np.bincount(function * self._g + hashed, weights=per_function[owner, function],
                                 minlength=self.statistic_size).astype(np.int64)
        else:
            owners = np.repeat(items, kept)
            for start in range(0, owners.size, self._simulate_chunk):
                chunk = owners[start : start + self._simulate_chunk]
                functions = rng.integers(0, self._S, size=chunk.size, dtype=np.int64)
                hashed = _hashing.hash_items(self._seeds[functions], chunk, self._prime, self._g)
                table += np.bincount(functions * self._g + hashed, minlength=self.statistic_size)
        return table.astype(np.int64, copy=False)

    # ------------------------------------------------------------------ exact channel
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Output law over ``(j, y)``, column ``j * g + y``: :math:`\\frac1S \\mathrm{GRR}_g(y \\mid h_j(v))`."""
        hashed = self._hashed(values)
        return self._grr_law(hashed, self._S).reshape(hashed.shape[0], self.statistic_size)

    def _hashed(self, values: ArrayLike | None) -> np.ndarray:
        """``h_j(v)`` of each item (default: the domain) and each of the ``S`` functions: shape ``(items, S)``."""
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        return _hashing.hash_items(self._seeds[None, :], items[:, None], self._prime, self._g)

    def channel_operator(self) -> Any:
        """:math:`Q^\\top f` over the :math:`S g` table cells and its adjoint, :math:`O(Sd)` each."""
        return _TableOperator(self)


class _TableOperator:
    r"""Products with FLH's channel :math:`Q[v, (j, y)] = \frac1S(o + (p - o)[h_j(v) = y])`.

    :math:`(Q^\top f)_{jy} = \frac1S(o \textstyle\sum f + (p-o)\sum_{v: h_j(v) = y} f_v)`
    (a weighted ``bincount``) and :math:`(Qw)_v = \frac1S(o \sum w + (p - o)\sum_j w_{j, h_j(v)})`
    (a gather), with :math:`o = (1-p)/(g-1)`.  The cell of every (function, item) pair is
    computed once and kept when it fits in ``_CACHED_CELLS`` entries.
    """

    _CACHED_CELLS = 1 << 23

    def __init__(self, protocol: FLH):
        self._protocol = protocol
        self.shape = (protocol.statistic_size, protocol.domain_size)
        self._other = (1.0 - protocol._p) / (protocol._g - 1)
        self._cells = None
        if protocol.hash_count * protocol.domain_size <= self._CACHED_CELLS:
            self._cells = [self._block_cells(functions, hashed) for functions, hashed in protocol._function_blocks()]

    def _block_cells(self, functions, hashed):
        return (functions[:, None] * self._protocol.hash_range + hashed).astype(np.int32)

    def _blocks(self):
        if self._cells is not None:
            yield from self._cells
        else:
            for functions, hashed in self._protocol._function_blocks():
                yield self._block_cells(functions, hashed)

    def matvec(self, f):
        flh = self._protocol
        mass = np.zeros(self.shape[0])
        for cells in self._blocks():
            mass += np.bincount(cells.ravel(), weights=np.broadcast_to(f, cells.shape).ravel(), minlength=self.shape[0])
        return (self._other * f.sum() + (flh._p - self._other) * mass) / flh.hash_count

    def rmatvec(self, w):
        flh = self._protocol
        gathered = np.zeros(self.shape[1])
        for cells in self._blocks():
            gathered += w[cells].sum(axis=0)
        return (self._other * w.sum() + (flh._p - self._other) * gathered) / flh.hash_count
