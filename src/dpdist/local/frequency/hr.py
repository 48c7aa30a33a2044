r"""Hadamard response, ``hr`` (Acharya, Sun, Zhang, AISTATS 2019; paper 004 sec. 5 baseline).

Construction (general privacy, sec. 4 of Acharya–Sun–Zhang; with :math:`B = 1`
it is their high-privacy scheme).  Let

.. math::

    B = 2^{\lceil \log_2 \min(e^\varepsilon, 2d) \rceil - 1}, \qquad
    b = 2^{\lceil \log_2 (d/B + 1) \rceil}, \qquad K = bB,

so for :math:`e^\varepsilon \le 2`, :math:`B = 1` and :math:`K = b =
2^{\lceil\log_2(d+1)\rceil}`.  (We then lower :math:`B` to
:math:`\lceil d/(b-1) \rceil` when it is larger: blocks that hold no item
only add noise outputs.)  The paper's :math:`B` is order-optimal; for the
constant, we take the power of two :math:`B' \le B` whose design has the
smallest variance at :math:`f_x = 0` (e.g. :math:`B' = 1` at
:math:`\varepsilon = 1`, where the paper's :math:`B = 2` has 1.5x the variance).
The items are split into :math:`B` blocks of
:math:`b - 1`; item :math:`x` in block :math:`i` at position
:math:`j = (x \bmod (b-1)) + 1` owns the set
:math:`C_x = \{ib + r : H_b[r, j] = +1\}` of :math:`b/2` outputs, with
:math:`H_b` the Sylvester Hadamard matrix (column 0, all ones, is skipped).
The output :math:`y \in [K]` has

.. math::

    Q(y \mid x) = \frac{e^\varepsilon}{Z} \text{ if } y \in C_x,\quad
    \frac{1}{Z} \text{ otherwise}, \qquad Z = \tfrac{b}{2} e^\varepsilon + K - \tfrac{b}{2},

so every likelihood ratio is at most :math:`e^\varepsilon` (mechanism (2) of
paper 004 with :math:`A` the block Hadamard matrix).

Estimator (derived here).  Let :math:`T_x = \sum_r H_b[r, j]\,N_{ib+r}`, the
Walsh–Hadamard coefficient of block :math:`i`'s output histogram (one fast
transform per block).  Using :math:`|C_x \cap C_{x'}| = b/4` within a block and
:math:`0` across blocks, :math:`\mathbb E[T_x] = n f_x\,b(e^\varepsilon-1)/(2Z)`, so

.. math::

    \hat f_x = \kappa\,\frac{T_x}{n}, \qquad \kappa = \frac{2Z}{b(e^\varepsilon - 1)},
    \qquad
    \operatorname{Var}[\hat f_x] = \frac{1}{n}\Big(\kappa^2\,
        \frac{F_i \tfrac{b}{2}(e^\varepsilon+1) + (1-F_i)\,b}{Z} - f_x\Big),

with :math:`F_i` the total frequency of block :math:`i` (each user adds
:math:`\pm 1` to :math:`T_x` when their output falls in block :math:`i`, else 0).
For :math:`B = 1` this is the pure protocol with :math:`p^* = e^\varepsilon/(e^\varepsilon+1)`,
:math:`q^* = 1/2`, support count :math:`(n + T_x)/2`; the estimator is written in
that form for every :math:`B` (pseudo-supports :math:`(n + T_x)/2`,
:math:`p^* = 1/2 + 1/(2\kappa)`, :math:`q^* = 1/2`) so the shared
:class:`FrequencyOracle` estimation applies.

Sampling.  :math:`Q(\cdot\mid x) = \lambda\,\mathrm{Unif}(C_x) + (1-\lambda)\,\mathrm{Unif}[K]`
with :math:`\lambda = \tfrac{b}{2}(e^\varepsilon - 1)/Z`.  A uniform element of
:math:`C_x`: draw :math:`r` uniform in :math:`[b]` and, if :math:`H_b[r, j] = -1`,
flip the lowest set bit of :math:`j` in :math:`r` (a bijection between the
:math:`-1` and :math:`+1` rows of column :math:`j`).  The exact aggregate
sampler draws the kept counts :math:`\mathrm{Binomial}(c_x, \lambda)`, one uniform
multinomial over :math:`[K]` for the others, and the kept outputs either per kept
user or as per-item multinomials over :math:`C_x`, whichever is cheaper.

Exact draws.  :math:`\lambda` is drawn as ``U < lambda`` with ``U`` a multiple of
:math:`2^{-53}`, so it is the largest such multiple whose ratio
:math:`1 + \lambda K/(\tfrac b2 (1-\lambda))` is at most :math:`e^\varepsilon`
(:mod:`dpdist.local._bernoulli`); the channel, :math:`\kappa = 1/\lambda` and the variance
use the realized ratio in place of :math:`e^\varepsilon` and :math:`Z = K/(1-\lambda)`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._docs import shared_parameters
from .._bernoulli import mixture_keep
from .._protocol import ProtocolTags, register
from .._report_kinds import ItemReports
from ._oracle import FrequencyOracle
from .._walsh_hadamard import butterfly_walsh_hadamard, fast_walsh_hadamard, hadamard_sign_is_plus
from ..._types import ArrayLike
from ..._validation import refused_values
from ...errors import OutOfDomainError
from .._aggregator import Aggregator

__all__ = ["HR"]

#: largest number of per-item multinomial cells in the exact aggregate sampler
_MULTINOMIAL_CELLS = 1 << 22
#: cells of the table of every item's set members kept by the protocol (8 MiB of int64)
_MEMBER_CELLS = 1 << 20


def _block_design(domain_size: int, e: float, blocks: int) -> tuple[int, int, float]:
    """``(B, b, Var*)`` for at most ``blocks`` blocks: ``b`` as in the paper, ``B`` lowered to the
    blocks that hold items, ``Var*`` the variance at :math:`f_x = 0` for ``n = 1`` with block mass
    equal to the block's share of items."""
    block_size = 2 ** math.ceil(math.log2(domain_size / blocks + 1))
    blocks = min(blocks, -(-domain_size // (block_size - 1)))
    normalizer = block_size / 2 * e + block_size * blocks - block_size / 2
    kappa = 2 * normalizer / (block_size * (e - 1))
    share = min(1.0, (block_size - 1) / domain_size)
    in_block = (share * block_size / 2 * (e + 1) + (1 - share) * block_size) / normalizer
    return blocks, block_size, kappa**2 * in_block


@register
@shared_parameters
class HR(FrequencyOracle):
    """Hadamard response (block form; high-privacy form when :math:`e^\\varepsilon \\le 2`).

    Parameters
    ----------
    {epsilon}
    {domain_size}

    Notes
    -----
    Reports are output indices in ``[0, K)`` (narrowest unsigned dtype):
    ``log2 K`` bits per user.  ``blocks`` (:math:`B`), ``block_size``
    (:math:`b`) and ``output_size`` (:math:`K`) describe the construction.
    """

    name = "hr"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    @property
    def statistic_total_per_report(self) -> int:
        """1: a histogram of the reported outputs."""
        return 1
    summary = "Hadamard response: output in the Hadamard set of the item w.p. boosted by e^eps; FWHT decoding"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=True)
    output_histogram = True
    _bytes_per_item = 16
    _largest_array = "the aggregate (an int64 count per output, up to 2 outputs per item)"

    def _setup(self):
        d, e = self.domain_size, math.exp(self.epsilon)
        largest = 2 ** (math.ceil(math.log2(min(e, 2.0 * d))) - 1) if e > 2.0 else 1
        candidates = [_block_design(d, e, 2**power) for power in range(int(math.log2(largest)) + 1)]
        self.blocks, self.block_size = min(candidates, key=lambda design: design[2])[:2]
        self.output_size = self.block_size * self.blocks
        b, K = self.block_size, self.output_size
        # lambda on the 2^-53 grid, the largest whose ratio 1 + lambda K / (b/2 (1 - lambda)) is at most
        # e^eps (_bernoulli); the channel's e^eps and Z become the realized ratio and K / (1 - lambda)
        self._keep = mixture_keep(self.epsilon, b // 2, K)
        self._e = 1.0 + 2.0 * K * self._keep / (b * (1.0 - self._keep))  # realized Q(in) / Q(out)
        self._normalizer = K / (1.0 - self._keep)  # Z = b/2 e + K - b/2 at the realized e
        self._kappa = 1.0 / self._keep  # 2 Z / (b (e - 1))
        self._members = None  # every item's b/2 outputs, built on first use when small (_set_members)

    def support_probabilities(self) -> tuple[float, float]:
        """Pseudo-support probabilities (module docstring); exact supports when ``blocks == 1``."""
        return 0.5 + 0.5 / self._kappa, 0.5

    def _block_of(self, items: np.ndarray) -> np.ndarray:
        """The block :math:`i` of each item (``items`` in ``[0, d)``): items fill the blocks ``b - 1`` at a time.  Computed,
        not looked up: a table of every item's block and column took 1.6 GB at :math:`d = 10^8`, on a device too."""
        return items // (self.block_size - 1)

    def _column_of(self, items: np.ndarray) -> np.ndarray:
        """The Hadamard column :math:`j = (x \bmod (b-1)) + 1` of each item (column 0, all ones, is skipped)."""
        return items % (self.block_size - 1) + 1

    def in_set(self, items: ArrayLike, outputs: ArrayLike) -> np.ndarray:
        """``outputs ∈ C_items`` (broadcasting)."""
        items = np.asarray(items, dtype=np.int64)
        outputs = np.asarray(outputs, dtype=np.int64)
        if items.size and (items.min() < 0 or items.max() >= self.domain_size):
            bad = (items < 0) | (items >= self.domain_size)
            raise refused_values(OutOfDomainError, f"The 'items' argument of HR.in_set must be item indices in [0, "
                                 f"{self.domain_size})", int(np.count_nonzero(bad)), "outside it")
        same_block = outputs // self.block_size == self._block_of(items)
        return same_block & hadamard_sign_is_plus(outputs % self.block_size, self._column_of(items))

    # ------------------------------------------------------------------ client
    def _uniform_in_sets(self, items, rng):
        column = self._column_of(items)
        rows = rng.integers(0, self.block_size, size=items.size, dtype=np.int64)
        lowest_bit = column & -column
        rows = np.where(hadamard_sign_is_plus(rows, column), rows, rows ^ lowest_bit)
        return self._block_of(items) * self.block_size + rows

    def _privatize(self, values, rng):
        keep = rng.random(values.size) < self._keep
        outputs = rng.integers(0, self.output_size, size=values.size, dtype=np.int64)
        # drawn for every user, kept or not: the draws must not tell which reports keep the item
        near = self._uniform_in_sets(values, rng)
        return np.where(keep, near, outputs).astype(self._report_dtype)

    # ------------------------------------------------------------------ server
    @property
    def statistic_size(self) -> int:
        return self.output_size

    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"blocks": self.blocks, "blockSize": self.block_size, "outputSize": self.output_size, "keep": self._keep}

    def _report_format(self):
        return ItemReports(self.output_size)

    def _accumulate(self, reports):
        return np.bincount(reports, minlength=self.output_size).astype(np.int64)

    def support_counts(self, aggregator: Aggregator) -> np.ndarray:
        """Pseudo-supports :math:`(n + T_x)/2` from one FWHT per block."""
        coefficients = fast_walsh_hadamard(aggregator.statistic.reshape(self.blocks, self.block_size))
        items = np.arange(self.domain_size)
        transform = coefficients[self._block_of(items), self._column_of(items)].astype(np.float64)
        return (aggregator.n + transform) / 2.0

    def _simulate(self, values, rng):
        d, K = self.domain_size, self.output_size
        counts = np.bincount(values, minlength=d)
        kept = rng.binomial(counts, self._keep)
        histogram = rng.multinomial(values.size - kept.sum(), np.full(K, 1.0 / K)).astype(np.int64)
        active = np.flatnonzero(kept)
        half = self.block_size // 2
        if kept.sum() <= active.size * half or active.size * half > _MULTINOMIAL_CELLS:
            histogram += np.bincount(self._uniform_in_sets(np.repeat(active, kept[active]), rng), minlength=K)
        else:
            cells = rng.multinomial(kept[active], np.full(half, 1.0 / half))  # (active, b/2)
            histogram += np.bincount(self._set_members(active).ravel(), weights=cells.ravel(), minlength=K).astype(
                np.int64
            )
        return histogram

    def _set_members(self, items) -> np.ndarray:
        """The ``b/2`` outputs of ``C_x`` for each item (rows), via the parity-fixing bijection.

        A fixed table of the parameters: kept for every item when it has at most ``_MEMBER_CELLS`` cells (the exact
        sampler asks for it at each ``simulate``)."""
        if self.domain_size * (self.block_size // 2) > _MEMBER_CELLS:
            return self._members_of(items)
        if self._members is None:
            self._members = self._members_of(np.arange(self.domain_size))
        return self._members[items]

    def _members_of(self, items) -> np.ndarray:
        column = self._column_of(items)[:, None]
        low = column & -column
        position = np.log2(low).astype(np.int64)
        t = np.arange(self.block_size // 2, dtype=np.int64)[None, :]
        rows = ((t >> position) << (position + 1)) | (t & (low - 1))  # insert a 0 bit at `position`
        rows = np.where(hadamard_sign_is_plus(rows, column), rows, rows | low)
        return self._block_of(items)[:, None] * self.block_size + rows

    # ------------------------------------------------------------------ analytics
    def variance(self, n: int, frequencies: ArrayLike | None = None) -> np.ndarray:
        """Exact variance of :math:`\\hat f_x` (module docstring).

        ``frequencies=None`` gives the variance at :math:`f_x = 0` with each
        block's mass set to its share of items (block mass 1 when ``blocks == 1``).
        """
        d = self.domain_size
        item_block = self._block_of(np.arange(d))
        if frequencies is None:
            f = np.zeros(d)
            block_mass = self._block_items() / d
        else:
            f = np.asarray(frequencies, dtype=np.float64)
            block_mass = np.clip(np.bincount(item_block, weights=f, minlength=self.blocks), 0.0, 1.0)
        if self.blocks == 1:
            block_mass = np.ones(1)  # every user's output is in the single block
        return (self._kappa**2 * self._in_block(block_mass[item_block]) - f) / n

    def _ranked_variance(self, n: int, max_frequency: float | None) -> float:
        r""":meth:`FrequencyOracle.ranked_variance` in closed form: :meth:`variance` is affine in the block masses, so
        its mean over items is its value at the items' mean block mass :math:`\sum_i c_i^2 / d^2` (:math:`c_i` items
        in block :math:`i`, each block's mass :math:`c_i / d` at the uniform frequencies and at :math:`f = 0`)."""
        d = self.domain_size
        counts = self._block_items()
        mean_mass = 1.0 if self.blocks == 1 else float(np.sum(counts * counts)) / (d * d)
        at_zero = self._kappa**2 * self._in_block(mean_mass) / n
        if max_frequency is None:
            return at_zero - 1.0 / (d * n)
        shared = self.block_size - 1 > 1  # item 1, holding the rest of the mass, in item 0's block (b - 1 items a block)
        mass = 1.0 if self.blocks == 1 else min(1.0, max_frequency + (1.0 - max_frequency if shared else 0.0))
        return max(at_zero, (self._kappa**2 * self._in_block(mass) - max_frequency) / n)

    def _block_items(self) -> np.ndarray:
        """How many items each block holds: ``b - 1`` each, the last the rest."""
        counts = np.full(self.blocks, self.block_size - 1, dtype=np.float64)
        counts[-1] = self.domain_size - (self.blocks - 1) * (self.block_size - 1)
        return counts

    def _in_block(self, mass):
        r""":math:`(F b/2 (e^\varepsilon+1) + (1-F) b) / Z` at block mass ``mass`` (the variance's factor before
        :math:`\kappa^2`)."""
        b = self.block_size
        return (mass * b / 2 * (self._e + 1) + (1 - mass) * b) / self._normalizer

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        member = self.in_set(items[:, None], np.arange(self.output_size)[None, :])
        return np.where(member, self._e, 1.0) / self._normalizer

    def channel_operator(self) -> Any:
        """:math:`Q^\\top f` and :math:`Q w` by one fast Walsh–Hadamard transform per block."""
        return _HadamardOperator(self)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)


class _HadamardOperator:
    r"""Products with HR's channel in :math:`O(K \log b)`.

    For output :math:`y = ib + r`,
    :math:`\sum_x f_x [y \in C_x] = (F_i + (H_b g_i)_r)/2` with :math:`F_i` the
    mass of block :math:`i` and :math:`g_i` its items' frequencies placed at their
    columns (column 0 empty), since :math:`[y \in C_x] = (1 + H_b[r, j_x])/2`
    inside the block; the adjoint is the same identity read the other way.
    """

    def __init__(self, protocol: HR):
        self._protocol = protocol
        self.shape = (protocol.output_size, protocol.domain_size)
        items = np.arange(protocol.domain_size)
        self._cells = protocol._block_of(items) * protocol.block_size + protocol._column_of(items)  # item x's (block, column)

    def matvec(self, f):
        return self.matvec_rows(np.asarray(f, dtype=np.float64)[None, :])[0]

    def rmatvec(self, w):
        return self.rmatvec_rows(np.asarray(w, dtype=np.float64)[None, :])[0]

    def matvec_rows(self, f):
        """:meth:`matvec` of each row of ``f``, the same numbers (sums along rows, exact butterflies)."""
        hr = self._protocol
        flat = np.zeros((f.shape[0], hr.output_size))
        flat[:, self._cells] = f
        placed = flat.reshape(f.shape[0], hr.blocks, hr.block_size)
        members = (placed.sum(axis=2, keepdims=True) + butterfly_walsh_hadamard(placed)) / 2.0
        return ((f.sum(axis=1)[:, None, None] + (hr._e - 1.0) * members) / hr._normalizer).reshape(f.shape[0], hr.output_size)

    def rmatvec_rows(self, w):
        """:meth:`rmatvec` of each row of ``w``, the same numbers."""
        hr = self._protocol
        blocks = np.asarray(w, dtype=np.float64).reshape(w.shape[0], hr.blocks, hr.block_size)
        members = (blocks.sum(axis=2, keepdims=True) + butterfly_walsh_hadamard(blocks)) / 2.0
        return (w.sum(axis=1)[:, None] + (hr._e - 1.0) * members.reshape(w.shape[0], hr.output_size)[:, self._cells]) / hr._normalizer
