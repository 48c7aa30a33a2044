r"""Subset selection, ``ss`` (Ye & Barg, IEEE Trans. IT 2018; Wang et al., arXiv:1602.07387, 2016).

Each user reports a set :math:`S` of :math:`k` distinct items.  The papers take
:math:`k \approx d / (e^\varepsilon + 1)`, the minimizer of the variance over real
:math:`k` up to lower-order terms; :func:`optimal_subset_size` takes the integer :math:`k` that
minimizes the exact variance of the unbiased estimator at uniform frequencies (what ``auto``
ranks, :meth:`~dpdist.local.frequency._oracle.FrequencyOracle.ranked_variance`) among the
floor and ceiling of :math:`d / (e^\varepsilon + 1)` and their neighbours: one below the ceiling
in 11 of the 16 settings :math:`d \in \{16, 128, 1024, 16384\}`, :math:`\varepsilon \in \{0.5, 1, 2, 4\}`,
where the ceiling has up to 1.6 % more variance.  A config records
:math:`k` as ``subset_size``; a config without it (as written before ``subset_size``
existed, and the inner ``ss`` of another protocol, whose config names it without
parameters) means :math:`k = \lceil d / (e^\varepsilon + 1) \rceil`
(:func:`dpdist.local._registry.stored_defaults`), so reports keep the :math:`k` they
were made with.  Any :math:`k` in :math:`1 .. d-1` is :math:`\varepsilon`-LDP.  With probability

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

Sampling (vectorized over users, chunked), exact.  Each user decides to
include the true item (probability :math:`p_{\mathrm{in}}`).  Every row first
takes a uniform :math:`(k-1)`-subset of the other :math:`d-1` items, then one
more item: a uniform other item not yet taken, drawn for every row, is kept
unless the user includes the true item, which takes its place (a uniform
:math:`(k-1)`-subset plus a uniform element of its complement is a uniform
:math:`k`-subset).  So the work, and the time a device takes, never depends on
the inclusion, nor so on the value.  For the :math:`(k-1)`-subset, every cell of a
boolean row over the other items is set by an i.i.d. Bernoulli draw (8-bit
uniforms against a threshold at or below :math:`(k-1)/(d-1)`, the cheapest by
:func:`_key_threshold`; none at all when it is 0); *given its count* :math:`c`
such a row is a uniform :math:`c`-subset, whatever the rate.  Rows are then
moved to size :math:`k-1`: a uniform :math:`c`-subset plus a uniform element of
its complement is a uniform :math:`(c+1)`-subset, and minus a uniform member a
uniform :math:`(c-1)`-subset (both drawn by rejection: uniform cells until one
is outside, or inside, the subset; each round draws one candidate per row).
Removals hit with probability :math:`c/(d-1)` only, so for :math:`k \ll d` the
threshold sits below :math:`k/(d-1)` (rows then mostly need additions) or is 0
(about :math:`k` additions per row instead of :math:`d` Bernoulli cells), and
the rare removals at a low rate draw many candidates per row at once and take
the first distinct hits in draw order (:func:`_remove_members`: the same choices
as one candidate per round).  The sampler's speed across :math:`\varepsilon`:
``benchmarks/bench_ss_sampler.py``.

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
from typing import Any

import numpy as np

from .._docs import shared_parameters
from .._bernoulli import exp_lower, odds_probability
from .._protocol import ProtocolTags, register
from .._registry import in_stored_defaults
from ..._rng import random_words
from .._report_kinds import PackedBitReports
from .._unset_cell import uniform_unset_columns
from .._reports import count_packed_bits
from ._oracle import FrequencyOracle
from ..._types import ArrayLike
from ..._validation import Below, Integer, Optional

__all__ = ["SS", "ceiling_subset_size", "optimal_subset_size", "subset_variance"]

#: bitmap cells per chunk of users (bounds memory at ~16 MB of booleans)
_CHUNK_CELLS = 1 << 24
#: largest number of subsets that ``channel()`` enumerates
_MAX_CHANNEL_OUTPUTS = 1 << 16


#: measured cost of a Bernoulli cell of the first fill and of a candidate cell of the
#: adjustment rounds (ns each; a cell is a random byte and a compare, a candidate a random
#: integer, a sort and a lookup)
_CELL_COST, _CANDIDATE_COST = 1.0, 70.0
#: below this threshold (a rate of 1/8) a removal candidate rarely hits, and removals draw in batches
_FEW_MEMBERS = 32


def _key_threshold(d: int, k: int) -> int:
    r"""The 8-bit Bernoulli threshold of the first fill of rows of ``d - 1`` cells that must end with
    ``k`` set, ``t`` in 0..255 (rate ``t/256``; 0: none drawn).

    The cheapest by a cost model: ``d - 1`` cells when ``t > 0``, plus the expected candidates of the
    adjustment, :math:`E[(k - c)^+] / (1 - r)` additions and :math:`E[(c - k)^+] / r` removals for a
    row count :math:`c \sim N((d-1) r, (d-1) r (1-r))`.  Removals hit rarely when :math:`k \ll d`,
    so the best rate sits below :math:`k/(d-1)`, or is 0.
    """
    rates = np.arange(256) / 256
    mean = (d - 1) * rates
    sd = np.sqrt(mean * (1 - rates)) + 1e-12
    z = (k - mean) / sd
    phi = np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi)
    erf = np.array([math.erf(value) for value in (z / math.sqrt(2)).tolist()])  # np.vectorize(math.erf), unwrapped
    below = sd * phi + (k - mean) * 0.5 * (1 + erf)  # E[(k - c)^+]
    above = below - (k - mean)  # E[(c - k)^+]
    with np.errstate(divide="ignore", invalid="ignore"):
        candidates = below / (1 - rates) + np.where(above > 0, above / rates, 0.0)
    cost = _CELL_COST * (d - 1) * (rates > 0) + _CANDIDATE_COST * candidates
    return int(np.nanargmin(cost))


def subset_variance(epsilon: float, positions: int, domain_size: int, k: int) -> float:
    r"""The variance (times :math:`n`) of the unbiased estimate of an item of frequency :math:`1/d`, for a report of
    ``k`` of ``positions`` with :math:`p^* = k e^\varepsilon / (k e^\varepsilon + m - k)` and :math:`q^*` of the module
    docstring (Wang et al., USENIX Security 2017, eq. 6 at :math:`f = 1/d`):

    .. math:: \frac{q^*(1-q^*)}{(p^*-q^*)^2} + \frac{1 - p^* - q^*}{d\,(p^*-q^*)}.

    Over :math:`d` items it is the mean variance at any frequencies (RWS ranks its ``k`` by it too)."""
    e = math.exp(epsilon)
    p_star = k * e / (k * e + positions - k)
    q_star = p_star * (k - 1) / (positions - 1) + (1 - p_star) * k / (positions - 1)
    gap = p_star - q_star
    return q_star * (1 - q_star) / (gap * gap) + (1 - p_star - q_star) / (domain_size * gap)


def ceiling_subset_size(epsilon: float, domain_size: int) -> int:
    r""":math:`k = \lceil d / (e^\varepsilon + 1) \rceil` in :math:`1 .. d-1`: the subset size of a config without
    ``subset_size``."""
    return min(domain_size - 1, max(1, math.ceil(domain_size / (math.exp(epsilon) + 1))))


def optimal_subset_size(epsilon: float, domain_size: int) -> int:
    r"""The integer :math:`k` in :math:`1 .. d-1` of least :func:`subset_variance` (the smaller on a tie).

    Ye & Barg (IEEE Trans. IT 2018) and Wang et al. (arXiv:1602.07387, 2016) minimize the variance
    over real :math:`k` at :math:`k \approx d / (e^\varepsilon + 1)`; the exact variance of an integer :math:`k`
    is compared here over :math:`\lfloor d/(e^\varepsilon+1) \rfloor - 1 .. \lfloor d/(e^\varepsilon+1) \rfloor + 2`
    (the floor, the ceiling and their neighbours), where it is least.
    """
    d = domain_size
    low = math.floor(d / (math.exp(epsilon) + 1.0))
    candidates = range(max(1, low - 1), min(d - 1, low + 2) + 1)
    return min(candidates, key=lambda k: subset_variance(epsilon, d, d, k))


def _one_candidate_rounds(flat, starts, need, wanted, d, rng) -> None:
    """Rounds of one uniform candidate cell per row (row ``r``'s ``d - 1`` cells from ``starts[r]``), flipping a
    candidate that reads ``wanted`` until each row has flipped its ``need`` (no row can draw a cell twice in a
    round).  The rows still short are kept as local arrays, compacted only when one finishes: the same draws
    and flips as indexing the whole chunk's counts every round, at a fraction of the work per round."""
    while starts.size:
        cells = starts + rng.integers(0, d - 1, size=starts.size, dtype=np.int64)
        hit = flat[cells] == wanted
        flat[cells[hit]] = not wanted
        need -= hit
        short = need > 0
        if not short.all():
            starts, need = starts[short], need[short]


def _remove_members(flat, offsets, rows, chosen, need, d, rng) -> np.ndarray:
    """One removal round of ``rows`` (``chosen`` of each row's ``d - 1`` cells set, ``need`` too many):
    each row draws about ``need / hit probability`` uniform candidate cells and unsets the first ``need``
    distinct set ones, in draw order: exactly the choices of the one-at-a-time rejection sampler from
    the same candidates, in a round or two instead of one round per hit.  Returns how many cells each
    row unset (at most its ``need``)."""
    draws = np.ceil((need + 2 * np.sqrt(need)) * (d - 1) / np.maximum(chosen, 1)).astype(np.int64)
    if draws.sum() > _CHUNK_CELLS:  # at most as many candidates as a chunk has bitmap cells
        draws = need
    owner = np.repeat(np.arange(rows.size), draws)
    drawn = offsets[rows][owner] + rng.integers(0, d - 1, size=owner.size, dtype=np.int64)
    cells, first = np.unique(drawn, return_index=True)  # a cell drawn again is no new candidate
    taken = np.sort(first[flat[cells]])  # the set cells' first draws, in draw order (rows contiguous)
    row_of = owner[taken]
    taken = taken[np.arange(taken.size) - np.searchsorted(row_of, row_of) < need[row_of]]
    flat[drawn[taken]] = False
    return np.bincount(owner[taken], minlength=rows.size)


@register
@shared_parameters
class SS(FrequencyOracle):
    """Subset selection with the subset size of least variance.

    Parameters
    ----------
    {epsilon}
    {domain_size}
    subset_size : int, optional
        :math:`k`, in ``1 .. domain_size - 1``.  Default: :func:`optimal_subset_size` (recorded in the config);
        in a config without it, ``ceil(d / (e^eps + 1))`` (module docstring).

    Reports are bit-packed ``uint8`` rows of ``ceil(d/8)`` bytes with exactly
    ``k`` bits set (``subset_size`` gives ``k``).
    """

    name = "ss"
    summary = "subset selection: report k ~ d/(e^eps+1) items, the true one w.p. k e^eps/(k e^eps + d - k)"
    # every report holds exactly k items
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=False, fixed_support_size=True, bernoulli_support=True)
    _constraints = {**FrequencyOracle._constraints, "subset_size": Optional(Integer(low=1))}
    _defaults = {"subset_size": None}
    _relations = (*FrequencyOracle._relations, Below("subset_size", "domain_size", why="a report of every item tells nothing",
                                                     counterexample={"domain_size": 4, "subset_size": 4}))

    def __init__(self, **params: Any) -> None:
        self._stored = in_stored_defaults()  # read before the base class, which builds under stored defaults
        super().__init__(**params)

    def _setup(self):
        d, e = self.domain_size, math.exp(self.epsilon)
        self._e = e
        k = self._params["subset_size"]
        if k is None and self._stored:  # a config without it: the k such configs were written with, and it stays without
            del self._params["subset_size"]
            k = ceiling_subset_size(self.epsilon, d)
        elif k is None:  # recorded, so the config reads back to this k
            k = self._params["subset_size"] = optimal_subset_size(self.epsilon, d)
        self.subset_size = k
        # the largest grid probability (realized exactly by U < p_in) with ratio
        # p_in / (1 - p_in) * (d - k) / k <= e^eps (_bernoulli)
        self._p_in = odds_probability(exp_lower(self.epsilon) * Fraction(k, d - k))
        self._p = self._p_in
        self._q = self._p_in * (k - 1) / (d - 1) + (1 - self._p_in) * k / (d - 1)
        self._n_bytes = -(-d // 8)
        self._key_threshold = _key_threshold(d, k - 1)

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
        # every row first takes k - 1 of the other items, whatever `include` (the work must not tell it)
        target = np.full(count, k - 1, dtype=np.int64)
        bitmap = np.zeros((count, d), dtype=bool)
        if self._key_threshold:
            # i.i.d. Bernoulli(t) cells: given its count c, a row is a uniform c-subset (any t works)
            keys = random_words(rng, -(-count * (d - 1) // 8)).view(np.uint8)[: count * (d - 1)]
            np.less(keys.reshape(count, d - 1), np.uint8(self._key_threshold), out=bitmap[:, : d - 1])
            # row counts fit 16 bits below 65,536 cells (a narrow sum is several times faster than an int64 one)
            narrow = np.uint16 if d < 1 << 16 else np.uint32
            chosen = np.add.reduce(bitmap.view(np.uint8), axis=1, dtype=narrow).astype(np.int64)
        else:
            chosen = np.zeros(count, dtype=np.int64)
        flat = bitmap.reshape(-1)
        offsets = np.arange(count, dtype=np.int64) * d
        # a uniform c-subset plus a uniform unchosen element (minus a uniform chosen one) is a
        # uniform (c+1)-subset ((c-1)-subset): add (drop) by rejection until each row has its target
        for wanted, step in ((False, 1), (True, -1)):
            pending = np.flatnonzero((target - chosen) * step > 0)
            if wanted and self._key_threshold < _FEW_MEMBERS:  # removals rarely hit: many candidates at once
                while pending.size:
                    chosen[pending] -= _remove_members(flat, offsets, pending, chosen[pending],
                                                       chosen[pending] - target[pending], d, rng)
                    pending = pending[chosen[pending] != target[pending]]
            else:
                _one_candidate_rounds(flat, offsets[pending], (target - chosen)[pending] * step, wanted, d, rng)
        # the k-th item: a uniform other not yet taken, drawn for every row, kept where the true item is not
        rows = np.arange(count)
        bitmap[rows, uniform_unset_columns(bitmap, d - 1, rng)] = ~include  # one write per row either way
        bitmap[:, d - 1] = include
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
            bitmap = self._sample_bitmaps(values[start : start + chunk], rng)
            # column counts of a chunk fit 16 bits below 65,536 rows (3x faster than an int64 sum)
            narrow = np.uint16 if bitmap.shape[0] < 1 << 16 else np.uint32
            statistic += np.add.reduce(bitmap.view(np.uint8), axis=0, dtype=narrow)
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
