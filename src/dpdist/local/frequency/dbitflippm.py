r"""Permanently memoized d-bit flipping, ``dbitflippm`` (Ding, Kulkarni & Yekhanin, NeurIPS 2017).

"Collecting telemetry data privately", sec. 3 (the dBitFlip histogram mechanism
and its permanent memoization, sec. 3.1 and 4).  The items of this protocol are
the paper's :math:`b` *buckets* (``domain_size`` is :math:`b`): a raw value of a
domain of :math:`k` items goes to bucket :math:`\lfloor v b / k\rfloor` first
(:func:`bucketize`), and the estimate is the bucket histogram.

Each user samples :math:`d` distinct bucket indices :math:`j_1 < \dots < j_d`
uniformly *once* (``sampled_bits``; they are public and sent with every report)
and reports, for her bucket :math:`v`, the bits

.. math::

    b_{s} = 1 \text{ with probability } \begin{cases}
        e^{\varepsilon/2}/(e^{\varepsilon/2} + 1) & j_s = v \\
        1/(e^{\varepsilon/2} + 1) & j_s \ne v. \end{cases}

Permanent memoization: the bits are drawn once per bucket and replayed in every
later report of a value in that bucket, so a device reporting one value any
number of times reveals exactly one report: :math:`\varepsilon_1 = \varepsilon_\infty = \varepsilon`
(Theorem 4 of the paper for one report; repeated identical reports are
post-processing).  Two buckets differ in at most two sampled bits, so one report
is :math:`\varepsilon`-LDP (exactly :math:`\varepsilon/2` when :math:`d = 1`).

Values that change.  A device whose value visits :math:`m` distinct buckets
reveals one memoized report per bucket: the reports are independent draws (one
per bucket) over the same sampled indices, so against any other sequence of
values *with the same pattern of changes* (the same days on which the bucket
changes, and returns), the loss is at most :math:`m\,\varepsilon_1`
(:meth:`DBitFlipPM.epsilon_for_buckets`; sequential composition, attained).
The pattern itself is not protected: with no second randomization, the report
changes only when the bucket does, so a day with a report unlike the day
before proves a change (the loss against a sequence without it is unbounded),
the price of memoization without a second round.  ``tests/local/frequency/test_loloha.py`` computes both on the exact
joint channel of two reports.

Estimator (paper, sec. 3, histogram estimator of dBitFlip):

.. math::

    \hat f_v = \frac{b}{n d} \sum_{i:\, v \in \{j_{i,s}\}} \frac{b_{i,v}(e^{\varepsilon/2} + 1) - 1}{e^{\varepsilon/2} - 1}
    = \frac{b}{n d}\,\frac{C_v - q N_v}{p - q},

with :math:`C_v` the 1-bits reported for bucket :math:`v`, :math:`N_v` the users who
sampled it, :math:`p = e^{\varepsilon/2}/(e^{\varepsilon/2}+1)`, :math:`q = 1 - p`.
The aggregate is :math:`(C, N)`.  It is unbiased, with variance (derived here,
per bucket, summing independent users)

.. math::

    \operatorname{Var}[\hat f_v] = \frac1n\Bigl[f_v\Bigl(\frac{b}{d}\frac{p(1-q)^2 + (1-p)q^2}{(p-q)^2} - 1\Bigr)
        + (1 - f_v)\frac{b}{d}\frac{q(1-q)}{(p-q)^2}\Bigr].

The bits are drawn on the :math:`2^{-32}` grid with :math:`p` rounded down and :math:`q`
rounded up (so :math:`q \ne 1-p` by a few :math:`2^{-32}`, and each bit's ratios
:math:`p/q`, :math:`(1-q)/(1-p)` stay below :math:`e^{\varepsilon/2}`); the channel,
estimator and variance use the realized values.

Reports are ``uint32`` rows of :math:`2d` columns: the sorted sampled indices, then their bits.
"""

from __future__ import annotations

import math
from itertools import combinations
from typing import Any

import numpy as np

from ..._rng import random_words
from ..._validation import _shared
from ..._types import ArrayLike
from ..._validation import NOT_SHOWN, Below, Integer, Optional, check_integer_values, check_param
from ...errors import IncompatibleStateError, InvalidParameterError
from .._aggregator import Aggregator
from .._protocol import ProtocolTags, register
from .._report_kinds import Column, IntegerRowReports
from ._bucket_client import BucketMemoClient, BucketMemoProtocol
from ._oracle import FrequencyOracle, own_affine_ranked
from ._unary import _SCALE, _threshold

__all__ = ["DBitFlipPM", "bucketize"]

#: largest number of channel columns (C(b, d) x 2^d) that ``channel()`` enumerates
_MAX_CHANNEL_OUTPUTS = 1 << 20
#: sampled bits per chunk of users when drawing and simulating reports (bounds the int64 temporaries)
_CHUNK_BITS = 1 << 20
#: the reasons a row is rejected: a bucket index out of range (or not increasing), a bit not 0 or 1
_BAD_INDEX, _BAD_BIT = "index_out_of_range_or_unsorted", "bit_not_0_or_1"


def bucketize(values: ArrayLike, domain_size: int, bucket_count: int) -> np.ndarray:
    r"""Bucket :math:`\lfloor v b / k \rfloor` of each item :math:`v \in [0, k)` (the paper's first step)."""
    k = check_param("bucketize", "domain_size", domain_size, Integer(low=2, high=2**31 - 1))
    b = check_param("bucketize", "bucket_count", bucket_count, Integer(low=2, high=k))
    items = check_integer_values(values, k, owner="bucketize")
    return items * b // k


@register
class DBitFlipPM(BucketMemoProtocol, FrequencyOracle):
    """dBitFlipPM: d sampled buckets per user (once), SUE-style bits memoized per bucket.

    Parameters
    ----------
    epsilon : float
        :math:`\\varepsilon`, the bound of one report and of any number of reports of one value.
    domain_size : int
        The number of buckets :math:`b` (items are buckets; see :func:`bucketize`).
    sampled_bits : int, optional
        :math:`d \\le b` bucket indices sampled per user; default :math:`b` (every bucket).
    """

    name = "dbitflippm"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    summary = "dBitFlipPM: d buckets sampled once per user, a bit of each (eps/2 flips), memoized per bucket"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=False, memoized=True)
    _constraints = {**FrequencyOracle._constraints, "sampled_bits": Optional(Integer(low=1, high=2**31 - 1))}
    _relations = (*FrequencyOracle._relations,
                  Below("sampled_bits", "domain_size", strict=False, why="the number of buckets",
                        counterexample={"domain_size": 4, "sampled_bits": 5}))
    _defaults = {"sampled_bits": None}
    _bytes_per_item = 16
    _largest_array = "one report (the sampled bucket indices and bits, int64 while drawn) and the aggregate (2 int64 counts per bucket)"

    def _setup(self):
        b = self.domain_size
        d = self._params["sampled_bits"] or b  # at most b: the table's relation
        self._d = d
        half = math.exp(self.epsilon / 2)
        # bits are drawn on the 2^-32 grid, p rounded down and q up: both per-bit ratios only shrink
        self._p_threshold = _threshold(half / (half + 1), round_up=False)
        self._q_threshold = _threshold(1 / (half + 1), round_up=True)
        self._bit_p, self._bit_q = self._p_threshold / _SCALE, self._q_threshold / _SCALE

    @property
    def sampled_bits(self) -> int:
        """The :math:`d` used."""
        return self._d

    @property
    def statistic_size(self) -> int:
        return 2 * self.domain_size

    @property
    def epsilon_per_report(self) -> float:
        """Loss of one report: :math:`\\varepsilon` (:math:`\\varepsilon/2` when ``d = 1``)."""
        return self.epsilon if self._d > 1 else self.epsilon / 2

    @property
    def epsilon_longitudinal(self) -> float:
        """Loss of any number of reports of one value: that of one report (they are identical)."""
        return self.epsilon_per_report

    @property
    def memo_keys(self) -> int:
        """:math:`K = b`: the memo is keyed by the bucket."""
        return self.domain_size

    @property
    def epsilon_instantaneous(self) -> float:
        """``inf``: no second randomization, a report repeats its memo (two reports show a change)."""
        return math.inf

    def epsilon_for_buckets(self, buckets: int) -> float:
        """Loss of every report of a device whose value visits ``buckets`` distinct buckets: ``buckets`` x eps_1.

        Against sequences with the same pattern of changes only; the pattern is
        visible (module docstring).
        """
        buckets = check_param("DBitFlipPM.epsilon_for_buckets", "buckets", buckets, Integer(low=1, high=self.domain_size))
        return buckets * self.epsilon_per_report

    def support_probabilities(self) -> tuple[float, float]:
        """``(d/b) p`` and ``(d/b) q``: a report supports bucket ``v`` when it samples ``v`` with bit 1."""
        share = self._d / self.domain_size
        return share * self._bit_p, share * self._bit_q

    def support_range(self) -> tuple[float, float]:
        """One report adds :math:`qd/b` to every bucket's count, :math:`-q` more if it samples it, :math:`+1` if its bit is 1."""
        base = self._bit_q * self._d / self.domain_size
        return base - self._bit_q, base + 1.0 - self._bit_q

    def support_counts(self, aggregator: Aggregator) -> np.ndarray:
        """:math:`C_v - qN_v + qnd/b`: the pure-oracle formula on it is the paper's estimator."""
        b = self.domain_size
        ones, sampled = aggregator.statistic[:b].astype(np.float64), aggregator.statistic[b:].astype(np.float64)
        return ones - self._bit_q * sampled + self._bit_q * aggregator.n * self._d / b

    def variance(self, n: int, frequencies: ArrayLike | None = None) -> np.ndarray:
        """Variance of the paper's estimator (module docstring)."""
        f = np.zeros(self.domain_size) if frequencies is None else np.asarray(frequencies, dtype=np.float64)
        return self._variance_at(n, f)

    def _ranked_variance(self, n: int, max_frequency: float | None) -> float:
        """:meth:`FrequencyOracle.ranked_variance` in closed form: an item's variance is affine in its own frequency."""
        return own_affine_ranked(lambda f: self._variance_at(n, f), self.domain_size, max_frequency)

    def _variance_at(self, n: int, f):
        """The variance of the estimate of an item of frequency ``f`` (a number or an array) from ``n`` reports."""
        p, q, ratio = self._bit_p, self._bit_q, self.domain_size / self._d
        gap = (p - q) ** 2
        own = ratio * (p * (1 - q) ** 2 + (1 - p) * q**2) / gap - 1
        return (f * own + (1 - f) * ratio * q * (1 - q) / gap) / n

    def _check_statistic(self, statistic, n):
        b = self.domain_size
        ones, sampled = statistic[:b], statistic[b:]
        if np.any(ones < 0) or np.any(ones > sampled) or np.any(sampled > n) or sampled.sum() != n * self._d:
            return f"the counts must satisfy 0 <= ones <= sampled <= n={n} and sum(sampled) = n * d"
        return None

    # ------------------------------------------------------------------ client
    def client(self, randomness: ArrayLike | None = None, memo: dict | None = None) -> BucketMemoClient:
        """A device's client: its d sampled buckets (drawn once) and the bits of each bucket, memoized."""
        return BucketMemoClient(self, randomness, memo)

    def _draw_user_randomness(self, n, rng, out=None):
        """``d`` distinct sorted bucket indices per user (uniform subsets: the first d of a random permutation).

        Written into ``out`` (an ``(n, d)`` integer array) when given, else returned as int64.  With
        ``d = b`` nothing is drawn: every user samples every bucket.
        """
        b, d = self.domain_size, self._d
        if out is None:
            out = np.empty((n, d), dtype=np.int64)
        if d == b:  # every bucket: nothing to draw
            out[...] = np.arange(b)
            return out
        chunk = max(1, (1 << 20) // b)
        # the d smallest of b uniforms are a uniform d-subset; argpartition finds them in O(b)
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            out[start:stop] = np.sort(np.argpartition(rng.random((stop - start, b)), d - 1, axis=1)[:, :d], axis=1)
        return out

    def _bucket(self, randomness, items):
        return np.asarray(items, dtype=np.int64)

    def permanent_response(self, buckets: np.ndarray, rng: np.random.Generator, randomness: Any) -> np.ndarray:
        """The bits of each bucket at the user's sampled indices (what a device memoizes, per bucket)."""
        buckets = np.asarray(buckets, dtype=np.int64)
        bits = np.empty(randomness.shape, dtype=np.int64)
        self._draw_bits(buckets, rng, randomness, bits)
        return bits

    def _draw_bits(self, buckets, rng, randomness, out) -> None:
        """Write the bits of ``permanent_response`` into ``out``, an even number of cells at a time.

        The 32-bit uniforms are halves of 64-bit words, so chunks of an even number of
        cells draw exactly the words (and bits) of one draw of all cells at once.  A chunk
        is about ``_CHUNK_BITS`` cells: whole rows while a row is at most half of it, else
        pieces of the row-major cells (rows of millions of buckets), so the temporaries stay
        bounded whatever ``d``.
        """
        d = randomness.shape[1] if randomness.ndim == 2 else 1
        if randomness.ndim == 2 and 2 * d > _CHUNK_BITS:
            total = randomness.shape[0] * d
            for start in range(0, total, _CHUNK_BITS):  # _CHUNK_BITS is even
                row, column = np.divmod(np.arange(start, min(start + _CHUNK_BITS, total)), d)
                threshold = np.where(randomness[row, column] == buckets[row], self._p_threshold, self._q_threshold)
                uniforms = random_words(rng, -(-row.size // 2)).view(np.uint32)[: row.size]
                out[row, column] = uniforms < threshold
            return
        rows = max(2, _CHUNK_BITS // max(d, 1)) // 2 * 2  # an even number of rows: an even number of cells
        for start in range(0, randomness.shape[0], rows):
            block = randomness[start : start + rows]
            threshold = np.where(block == buckets[start : start + rows, None], self._p_threshold, self._q_threshold)
            size = block.size
            uniforms = random_words(rng, -(-size // 2)).view(np.uint32)[:size].reshape(block.shape)
            out[start : start + rows] = uniforms < threshold

    def instantaneous_response(self, memoized: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """No second round: the memoized bits are reported as they are."""
        return np.asarray(memoized, dtype=np.int64)

    def _report(self, randomness, responses):
        return np.hstack([randomness, responses]).astype(np.uint32)

    def _check_user_randomness(self, randomness):
        if randomness.shape != (self._d,) or np.any(randomness < 0) or np.any(randomness >= self.domain_size) or np.any(
            np.diff(randomness) <= 0
        ):
            raise IncompatibleStateError(
                f"A dBitFlipPM client's randomness must be {self._d} increasing bucket indices in "
                f"[0, {self.domain_size}). Got {randomness.size} number(s) that are not ({NOT_SHOWN})."
            )

    def _check_memo_entry(self, key, value):
        array = np.asarray(value)
        if not 0 <= key < self.domain_size or array.shape != (self._d,) or not np.isin(array, (0, 1)).all():
            raise IncompatibleStateError(
                f"A dBitFlipPM memo maps buckets in [0, {self.domain_size}) to {self._d} bits. Got an entry that does "
                f"not ({NOT_SHOWN})."
            )
        return array.astype(np.int64)

    def _privatize(self, values, rng):
        d = self._d
        need = values.size * 8 * d
        if need > _shared.MAX_ALLOCATION_BYTES:
            largest = _shared.MAX_ALLOCATION_BYTES // (8 * d)
            raise InvalidParameterError(
                f"The 'values' argument of {self.display_name}.privatize holds {values.size:,} values: their reports "
                f"(2 x sampled_bits = {2 * d:,} uint32 each) would need {need / 2**30:.1f} GiB in one array, over "
                f"dpdist's limit of {_shared.MAX_ALLOCATION_BYTES / 2**30:.1f} GiB per allocation "
                f"(dpdist.local.MAX_ALLOCATION_BYTES). Privatize at most {largest:,} values at a time, or choose a "
                "smaller 'sampled_bits' (simulate() draws the aggregate of any number of values)."
            )
        reports = np.empty((values.size, 2 * d), dtype=np.uint32)
        randomness = self._draw_user_randomness(values.size, rng, reports[:, :d])
        self._draw_bits(values, rng, randomness, reports[:, d:])
        return reports

    @property
    def _simulate_chunk(self) -> int:
        """Users per privatized chunk in ``simulate``: about 2^20 sampled bits (reports grow with d)."""
        return max(1, _CHUNK_BITS // self._d)

    def _simulate(self, values, rng):
        """With ``d = b`` (every user samples every bucket) the aggregate exactly, in O(b): bucket ``v``'s ones
        are Binomial(c_v, p) + Binomial(n - c_v, q) and every bucket is sampled n times; else reports by chunks."""
        if self._d < self.domain_size:
            return super()._simulate(values, rng)
        b = self.domain_size
        statistic = np.empty(2 * b, dtype=np.int64)
        statistic[b:] = values.size
        counts = np.bincount(values, minlength=b)
        statistic[:b] = rng.binomial(counts, self._bit_p)
        statistic[:b] += rng.binomial(np.subtract(values.size, counts, out=counts), self._bit_q)
        return statistic

    # ------------------------------------------------------------------ server
    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"d": self.sampled_bits, "pThreshold": self._p_threshold, "qThreshold": self._q_threshold}

    def _report_format(self):
        d, b = self._d, self.domain_size
        return IntegerRowReports(
            [Column("index", b, count=d, reason=_BAD_INDEX, label="increasing bucket index"),
             Column("bit", 2, count=d, reason=_BAD_BIT)],
            np.uint32,
        )

    def _check_reports(self, reports, invalid):
        unsorted = (np.diff(reports[:, : self._d].astype(np.int64), axis=1) <= 0).any(axis=1)
        bad_index = invalid[_BAD_INDEX] | unsorted
        return {_BAD_INDEX: bad_index, _BAD_BIT: invalid[_BAD_BIT] & ~bad_index}

    def _accumulate(self, reports):
        d, b = self._d, self.domain_size
        indices, bits = reports[:, :d].astype(np.int64), reports[:, d:].astype(bool)
        ones = np.bincount(indices[bits], minlength=b)
        sampled = np.bincount(indices.ravel(), minlength=b)
        return np.concatenate([ones, sampled]).astype(np.int64)

    # ------------------------------------------------------------------ exact channel
    def _subset_rank(self, indices: np.ndarray) -> np.ndarray:
        """Colexicographic rank :math:`\\sum_s \\binom{j_s}{s+1}` of sorted index rows."""
        table = np.array([[math.comb(j, s + 1) for s in range(self._d)] for j in range(self.domain_size)], dtype=np.int64)
        return table[indices, np.arange(self._d)[None, :]].sum(axis=1)

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """One report's law, column ``rank(subset) * 2**d + sum_s bit_s 2**s``; small ``b`` only."""
        b, d = self.domain_size, self._d
        subsets = math.comb(b, d)
        if subsets * 2**d > _MAX_CHANNEL_OUTPUTS:
            raise NotImplementedError(
                f"dBitFlipPM.channel enumerates C(b, d) x 2^d = {subsets * 2**d} outputs; only for at most {_MAX_CHANNEL_OUTPUTS}."
            )
        items = np.arange(b) if values is None else self._check_values(values)

        sets = np.array(list(combinations(range(b), d)), dtype=np.int64)  # (subsets, d)
        bits = (np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1  # (2^d, d)
        on = np.where(sets[None, :, :] == items[:, None, None], self._bit_p, self._bit_q)  # (items, subsets, d)
        law = np.prod(np.where(bits[None, None, :, :] == 1, on[:, :, None, :], 1 - on[:, :, None, :]), axis=3)
        matrix = np.zeros((items.size, subsets * 2**d))
        columns = self._subset_rank(sets)[:, None] * 2**d + np.arange(2**d)[None, :]
        matrix[:, columns.ravel()] = (law / subsets).reshape(items.size, -1)
        return matrix

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        d = self._d
        reports = reports.astype(np.int64)
        return self._subset_rank(reports[:, :d]) * 2**d + (reports[:, d:] << np.arange(d)).sum(axis=1)
