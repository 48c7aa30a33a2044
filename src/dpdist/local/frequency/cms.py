r"""Count-mean sketch, ``cms`` (Apple's Differential Privacy Team, 2017).

Apple's "Learning with Privacy at Scale" (2017, sec. 3, Algorithms 1-2 and 5)
for items of huge domains, with :math:`k` public hash functions
:math:`h_0, \dots, h_{k-1}: [d] \to [m]`:

* **client** (Alg. 1): draw :math:`j \in [k]` uniformly, let
  :math:`x \in \{-1, +1\}^m` be :math:`-1` everywhere but :math:`+1` at
  :math:`h_j(v)`, flip every coordinate independently with probability
  :math:`1/(e^{\varepsilon/2} + 1)` and send :math:`(j, \tilde x)`:
  :math:`m` bits and the function index;
* **server** (Alg. 2, 5): the sketch row :math:`j` adds
  :math:`k(\frac{c_\varepsilon}{2}\tilde x + \frac12)`, and the frequency of
  :math:`v` is :math:`\frac{m}{m-1}(\frac1k\sum_j M[j, h_j(v)] - \frac nm)/n`.

Privacy: two inputs change at most the two coordinates :math:`h_j(u),
h_j(v)` of :math:`x`, each flipped at :math:`\varepsilon/2`, so every
likelihood ratio is at most :math:`e^\varepsilon`; ``channel()`` enumerates the
:math:`k 2^m` outputs of small instances exactly.  Each coordinate is drawn as
``U < p`` with ``U`` a multiple of :math:`2^{-53}`, so :math:`p` is the largest such
multiple with :math:`p/(1-p) \le e^{\varepsilon/2}` (:mod:`dpdist.local._bernoulli`).

Support-count form (derived here, as for :mod:`~dpdist.local.frequency.hcms`):
a report supports :math:`v` when :math:`\tilde x_{h_j(v)} = +1`.  With
:math:`p = e^{\varepsilon/2}/(e^{\varepsilon/2} + 1)`,
:math:`\Pr[\text{support} \mid v] = p` and, for :math:`u \ne v`,
:math:`q^* = pc + (1-p)(1-c)` with :math:`c` the family's collision
probability.  The aggregate keeps :math:`S[j, l]`, the number of reports of
row :math:`j` with :math:`\tilde x_l = +1`, and :math:`N_j`, the reports of row
:math:`j` (:math:`km + k` counts, mergeable, independent of :math:`d`); then
:math:`C_v = \sum_j S[j, h_j(v)]` and :math:`\hat f_v = (C_v/n - q^*)/(p - q^*)`
is Apple's debiased estimate (with :math:`c = 1/m`), of variance
:math:`q^*(1-q^*)/(n(p-q^*)^2)` at :math:`f_v = 0` over the family draw (a
fixed family adds FLH's bias, mean square about :math:`\lVert f\rVert_2^2
c/(k(1-c))`).

Exact aggregate sampler: given the users' rows (uniform) and the number
:math:`A_{jl}` of users of row :math:`j` hashed to :math:`l`, the coordinates
are independent, so :math:`S[j, l] \sim \mathrm{Bin}(A_{jl}, p) +
\mathrm{Bin}(N_j - A_{jl}, 1 - p)`: :math:`O(n + km)`.

Defaults: ``width`` :math:`m = 1024` and ``hash_count`` :math:`k = 2048`, as
for HCMS.  CMS sends :math:`m` bits per report against HCMS's one, and its
collector unpacks :math:`nm` bits; in exchange its variance is lower
(:math:`n\operatorname{Var}^*` = 3.93, 0.92, 0.18 at :math:`\varepsilon` = 1, 2, 4
against HCMS's 4.69, 1.73, 1.08 and OLH's 3.69, 0.73, 0.08).
"""

from __future__ import annotations


import numpy as np

from .._docs import shared_parameters
from ...errors import InvalidParameterError
from .._bernoulli import exp_lower, odds_probability
from .._protocol import ProtocolTags, register
from .._report_kinds import Column, IntegerRowReports
from ._sketch import SketchOracle
from ..._types import ArrayLike
from .._aggregator import Aggregator

__all__ = ["CMS"]

#: reports unpacked at a time (bounds memory at 16 MB of bits)
_UNPACK_BITS = 1 << 24
#: largest output space ``channel()`` enumerates
_MAX_CHANNEL_COLUMNS = 1 << 20


@register
@shared_parameters
class CMS(SketchOracle):
    r"""Count-mean sketch: an ``width``-bit report per device, a ``hash_count`` x ``width`` sketch.

    Parameters
    ----------
    epsilon : float
        Privacy budget, finite and > 0 (each coordinate is flipped at epsilon / 2).
    domain_size : int
        Number of items ``d``, ``2 <= d <= hash_prime`` (the state is ``k(m + 1)``
        counts whatever ``d``).
    {sketch_family}

    Notes
    -----
    Reports are ``(n, 1 + ceil(m / 64))`` ``uint64`` arrays: column 0 the function
    index :math:`j`, then the bits of :math:`\tilde x` (+1 as 1), coordinate
    :math:`l` at bit ``l % 64`` of word ``l // 64``; unused high bits are 0.
    """

    name = "cms"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    summary = "count-mean sketch (Apple 2017): an m-bit one-hot of h_j(v), each bit flipped at eps/2"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=True, unbiased=False)

    def _setup(self):
        k, m = self._params["hash_count"], self._params["width"]
        self._setup_family(k * (m + 1))
        self._words = -(-m // 64)
        # per coordinate the largest grid probability with p / (1 - p) <= e^(eps/2) (_bernoulli): two
        # coordinates change with the item, a ratio of at most e^eps; U < p realizes p exactly
        self._p = odds_probability(exp_lower(self.epsilon / 2.0))
        self._q = self._p * self._collision + (1.0 - self._p) * (1.0 - self._collision)

    @property
    def statistic_size(self) -> int:
        return self._k * (self._m + 1)

    # ------------------------------------------------------------------ client
    def _privatize(self, values, rng):
        functions = rng.integers(0, self._k, size=values.size, dtype=np.int64)
        hashed = self._hashed(functions, values)
        reports = np.zeros((values.size, 1 + self._words), dtype=np.uint64)
        reports[:, 0] = functions
        rows = max(1, _UNPACK_BITS // self._m)
        for start in range(0, values.size, rows):
            stop = min(start + rows, values.size)
            bits = rng.random((stop - start, self._m)) >= self._p  # flipped -1 coordinates read +1
            own = np.arange(stop - start)
            bits[own, hashed[start:stop]] = ~bits[own, hashed[start:stop]]  # the +1 coordinate
            reports[start:stop, 1:] = _pack(bits, self._words)
        return reports

    # ------------------------------------------------------------------ server
    def _report_format(self):
        spare = 64 * self._words - self._m  # the unused high bits of the last word must be 0
        words = [Column("bits", None, count=self._words - 1)] if self._words > 1 else []
        last = Column("bits", 1 << (64 - spare) if spare else None)
        return IntegerRowReports([Column("function", self._k, label="function index"), *words, last], np.uint64, exact_dtype=True)

    def _accumulate(self, reports):
        functions = reports[:, 0].astype(np.int64)
        table = np.zeros((self._k, self._m), dtype=np.int64)
        rows = max(1, _UNPACK_BITS // self._m)
        for start in range(0, reports.shape[0], rows):
            block = slice(start, start + rows)
            bits = _unpack(reports[block, 1:], self._m)
            order = np.argsort(functions[block], kind="stable")
            sorted_functions = functions[block][order]
            starts = np.flatnonzero(np.r_[True, sorted_functions[1:] != sorted_functions[:-1]])
            table[sorted_functions[starts]] += np.add.reduceat(bits[order].astype(np.int64), starts, axis=0)
        rows_count = np.bincount(functions, minlength=self._k)
        return np.concatenate([table.ravel(), rows_count]).astype(np.int64)

    def _check_statistic(self, statistic, n):
        table = statistic[: self._k * self._m].reshape(self._k, self._m)
        rows = statistic[self._k * self._m :]
        if np.any(statistic < 0) or rows.sum() != n or np.any(table > rows[:, None]):
            return f"row counts must be >= 0 and sum to n={n}, and each bit count must be <= its row's count"
        return None

    def support_counts_of(self, aggregator: Aggregator, items: ArrayLike) -> np.ndarray:
        """:math:`C_v` of the given ``items`` only, in :math:`O(k \\cdot |items|)`."""
        table = aggregator.statistic[: self._k * self._m].reshape(self._k, self._m)
        items = np.asarray(items, dtype=np.int64)
        support = np.zeros(items.size, dtype=np.float64)
        for functions, hashed in self._function_blocks(items):
            support += np.take_along_axis(table[functions], hashed, axis=1).sum(axis=0)
        return support

    def _simulate(self, values, rng):
        functions = rng.integers(0, self._k, size=values.size, dtype=np.int64)
        cells = functions * self._m + self._hashed(functions, values)
        own = np.bincount(cells, minlength=self._k * self._m).reshape(self._k, self._m)
        rows = np.bincount(functions, minlength=self._k)
        table = rng.binomial(own, self._p) + rng.binomial(rows[:, None] - own, 1.0 - self._p)
        return np.concatenate([table.ravel(), rows]).astype(np.int64)

    # ------------------------------------------------------------------ exact channel
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Output law over ``(j, x)``, column ``j 2^m + x`` (x the bits as an integer)."""
        if self._k << self._m > _MAX_CHANNEL_COLUMNS:
            raise InvalidParameterError(
                f"CMS.channel enumerates hash_count x 2^width = {self._k} x 2^{self._m} outputs; at most "
                f"{_MAX_CHANNEL_COLUMNS}. Use a small instance."
            )
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        hashed = self._hashed(np.arange(self._k)[None, :], items[:, None])  # (items, k)
        outputs = np.arange(1 << self._m)
        ones = (outputs[:, None] >> np.arange(self._m)[None, :]) & 1  # (2^m, m)
        weight = ones.sum(axis=1)
        own_bit = (outputs[None, None, :] >> hashed[:, :, None]) & 1  # (items, k, 2^m)
        # other coordinates read +1 with probability 1 - p, the own one with p
        others = (1 - self._p) ** (weight - own_bit) * self._p ** (self._m - 1 - (weight - own_bit))
        law = np.where(own_bit == 1, self._p, 1 - self._p) * others / self._k
        return law.reshape(items.size, self._k << self._m)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        if self._m > 62:
            raise InvalidParameterError("CMS.report_index needs width <= 62 (small instances only).")
        return reports[:, 0].astype(np.int64) * (1 << self._m) + reports[:, 1].astype(np.int64)


def _pack(bits: np.ndarray, words: int) -> np.ndarray:
    """Rows of bits to ``words`` little-endian ``uint64`` words each."""
    padded = np.zeros((bits.shape[0], 64 * words), dtype=bool)
    padded[:, : bits.shape[1]] = bits
    return np.packbits(padded, axis=1, bitorder="little").view("<u8").astype(np.uint64)


def _unpack(words: np.ndarray, width: int) -> np.ndarray:
    """Inverse of :func:`_pack`: the first ``width`` bits of every row, as ``uint8``."""
    as_bytes = np.ascontiguousarray(words.astype("<u8")).view(np.uint8)
    return np.unpackbits(as_bytes, axis=1, bitorder="little")[:, :width]

