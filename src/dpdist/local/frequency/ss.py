r"""Subset selection, ``ss`` (Ye & Barg, IEEE Trans. IT 2018; Wang et al., arXiv:1602.07387, 2016).

Each user reports a set :math:`S` of :math:`k = \lceil d / (e^\varepsilon + 1) \rceil`
distinct items (the choice that minimizes the estimator's variance, up to
rounding).  With probability

.. math::

    p_{\mathrm{in}} = \frac{k e^\varepsilon}{k e^\varepsilon + d - k}

:math:`S` is the true item plus :math:`k-1` items drawn uniformly from the
other :math:`d-1`; otherwise :math:`S` is :math:`k` items drawn uniformly from
the other :math:`d-1`.  Every :math:`k`-subset then has probability
:math:`p_{\mathrm{in}}/\binom{d-1}{k-1}` (if it holds :math:`v`) or
:math:`(1-p_{\mathrm{in}})/\binom{d-1}{k}` (if not), whose ratio is exactly
:math:`e^\varepsilon`.  (:math:`p_{\mathrm{in}}` is drawn as ``U < p_in`` with ``U`` on the
:math:`2^{-53}` grid, so it is the largest grid value with ratio at most :math:`e^\varepsilon`:
:mod:`dpdist.local._bernoulli`.)  The protocol is pure (paper 004 sec. 5 baseline "SS";
paper 000 builds its signed variant on it) with

.. math::

    p^* = p_{\mathrm{in}}, \qquad
    q^* = p_{\mathrm{in}} \frac{k-1}{d-1} + (1 - p_{\mathrm{in}}) \frac{k}{d-1}.

Sampling (vectorized over users, chunked), exact.  Each user first decides to
include the true item (probability :math:`p_{\mathrm{in}}`) and so needs
:math:`t = k-1` or :math:`k` of the other :math:`d-1` items.  Every cell of a
boolean row over the other items is set by an i.i.d. Bernoulli draw (8-bit
uniforms against a threshold near :math:`k/(d-1)`); *given its count* :math:`c`
such a row is a uniform :math:`c`-subset, whatever the rate.  Rows are then
moved to size :math:`t` one element at a time: a uniform :math:`c`-subset plus
a uniform element of its complement is a uniform :math:`(c+1)`-subset, and
minus a uniform member a uniform :math:`(c-1)`-subset (both drawn by
rejection).  About :math:`\sqrt{k}` such steps replace the :math:`k` steps of
Floyd's algorithm.

Reports are the subsets' indicator vectors, bit-packed: ``uint8`` rows of
:math:`\lceil d/8 \rceil` bytes (``numpy.packbits``) with exactly :math:`k` bits
set (for :math:`k \ge d/16` this is smaller than a list of item ids).  The
support counts are dependent across items (a report holds exactly :math:`k`
items), so no exact aggregate sampler is known: ``simulate`` draws the bitmaps in chunks and adds their column sums
(``exact_simulate=False``; it skips forming reports).
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import combinations

import numpy as np

from .._docs import shared_parameters
from .._bernoulli import exp_lower, odds_probability
from .._protocol import ProtocolTags, register
from ..._rng import random_words
from .._report_kinds import PackedBitReports
from .._reports import count_packed_bits
from ._oracle import FrequencyOracle
from ..._types import ArrayLike

__all__ = ["SS"]

#: bitmap cells per chunk of users (bounds memory at ~16 MB of booleans)
_CHUNK_CELLS = 1 << 24
#: largest number of subsets that ``channel()`` enumerates
_MAX_CHANNEL_OUTPUTS = 1 << 16


@register
@shared_parameters
class SS(FrequencyOracle):
    """Subset selection with subset size ``ceil(d / (e^eps + 1))``.

    Parameters
    ----------
    {epsilon}
    {domain_size}

    Reports are bit-packed ``uint8`` rows of ``ceil(d/8)`` bytes with exactly
    ``k`` bits set (``subset_size`` gives ``k``).
    """

    name = "ss"
    summary = "subset selection: report k = ceil(d/(e^eps+1)) items, the true one w.p. k e^eps/(k e^eps + d - k)"
    # every report holds exactly k items
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=False, fixed_support_size=True)

    def _setup(self):
        d, e = self.domain_size, math.exp(self.epsilon)
        self._e = e
        self.subset_size = k = min(d - 1, max(1, math.ceil(d / (e + 1))))
        # the largest grid probability (realized exactly by U < p_in) with ratio
        # p_in / (1 - p_in) * (d - k) / k <= e^eps (_bernoulli)
        self._p_in = odds_probability(exp_lower(self.epsilon) * Fraction(k, d - k))
        self._p = self._p_in
        self._q = self._p_in * (k - 1) / (d - 1) + (1 - self._p_in) * k / (d - 1)
        self._n_bytes = -(-d // 8)
        # 8-bit threshold whose Bernoulli rate is closest to the target rate of others, k/(d-1)
        self._key_threshold = np.uint8(min(255, max(1, round(256 * k / (d - 1)))))

    @property
    def statistic_total_per_report(self) -> int:
        """Every report sets exactly ``k`` bits, so the support counts sum to ``k n``."""
        return self.subset_size

    def support_probabilities(self) -> tuple[float, float]:
        return self._p, self._q

    # ------------------------------------------------------------------ client
    def _sample_bitmaps(self, values, rng) -> np.ndarray:
        """``(len(values), d)`` booleans, row ``u`` the indicator of user ``u``'s subset.

        Sampling runs in *label space*, where the user's item is column ``d-1`` and the
        other items are columns ``0 .. d-2``; swapping columns ``v`` and ``d-1`` of each
        row at the end maps labels back to items.  See the module docstring.
        """
        d, k, count = self.domain_size, self.subset_size, values.size
        include = rng.random(count) < self._p_in
        target = k - include.astype(np.int64)  # number of other items each user needs
        bitmap = np.zeros((count, d), dtype=bool)
        # i.i.d. Bernoulli(t) cells: given its count c, a row is a uniform c-subset (any t works)
        keys = random_words(rng, -(-count * (d - 1) // 8)).view(np.uint8)[: count * (d - 1)]
        np.less(keys.reshape(count, d - 1), self._key_threshold, out=bitmap[:, : d - 1])
        chosen = bitmap.sum(axis=1, dtype=np.int64)
        flat = bitmap.reshape(-1)
        offsets = np.arange(count, dtype=np.int64) * d
        # a uniform c-subset plus a uniform unchosen element (minus a uniform chosen one) is a
        # uniform (c+1)-subset ((c-1)-subset): add or drop by rejection until each row has its target
        for wanted, step in ((False, 1), (True, -1)):
            pending = np.flatnonzero(chosen < target) if step == 1 else np.flatnonzero(chosen > target)
            while pending.size:
                cells = offsets[pending] + rng.integers(0, d - 1, size=pending.size, dtype=np.int64)
                hit = flat[cells] == wanted
                flat[cells[hit]] = not wanted
                chosen[pending[hit]] += step
                pending = pending[chosen[pending] != target[pending]]
        bitmap[:, d - 1] = include
        rows = np.arange(count)
        own, last = bitmap[rows, values], bitmap[rows, d - 1]
        bitmap[rows, d - 1] = own
        bitmap[rows, values] = last
        return bitmap

    def _chunk(self) -> int:
        return max(1, _CHUNK_CELLS // self.domain_size)

    def _privatize(self, values, rng):
        reports = np.empty((values.size, self._n_bytes), dtype=np.uint8)
        chunk = self._chunk()
        for start in range(0, values.size, chunk):
            bitmap = self._sample_bitmaps(values[start : start + chunk], rng)
            reports[start : start + chunk] = np.packbits(bitmap, axis=1)
        return reports

    # ------------------------------------------------------------------ server
    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"subsetSize": self.subset_size, "pIn": self._p_in}

    def _report_format(self):
        return PackedBitReports(self.domain_size, weight=self.subset_size)

    def _accumulate(self, reports):
        return count_packed_bits(reports, self.domain_size)

    def _simulate(self, values, rng):
        statistic = np.zeros(self.domain_size, dtype=np.int64)
        chunk = self._chunk()
        for start in range(0, values.size, chunk):
            statistic += self._sample_bitmaps(values[start : start + chunk], rng).sum(axis=0, dtype=np.int64)
        return statistic

    # ------------------------------------------------------------------ exact channel
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Output law over all k-subsets, in colexicographic rank order (see :meth:`report_index`)."""
        d, k = self.domain_size, self.subset_size
        outputs = math.comb(d, k)
        if outputs > _MAX_CHANNEL_OUTPUTS:
            raise NotImplementedError(
                f"SS.channel enumerates C(d, k) = {outputs} subsets; only up to {_MAX_CHANNEL_OUTPUTS}."
            )
        items = np.arange(d) if values is None else self._check_values(values)
        subsets = np.array(list(combinations(range(d), k)), dtype=np.int64)
        member = np.zeros((outputs, d), dtype=bool)
        member[np.repeat(np.arange(outputs), k), subsets.reshape(-1)] = True
        columns = self.report_index(np.packbits(member, axis=1))
        inside = self._p_in / math.comb(d - 1, k - 1)
        outside = (1 - self._p_in) / math.comb(d - 1, k)
        matrix = np.empty((items.size, outputs))
        matrix[:, columns] = np.where(member[:, items].T, inside, outside)
        return matrix

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        """Colexicographic rank :math:`\\sum_i \\binom{s_i}{i+1}` of each subset :math:`s_0 < s_1 < \\dots`."""
        from scipy import special  # lazy: only the conformance checks need ranks

        reports, _ = self.report_format.read(reports)
        bits = np.unpackbits(reports, axis=1, count=self.domain_size).astype(np.int64)
        order = np.cumsum(bits, axis=1)  # 1-based position of each chosen item within its subset
        ranks = special.comb(np.arange(self.domain_size)[None, :], order, exact=False) * bits
        return np.rint(ranks.sum(axis=1)).astype(np.int64)
