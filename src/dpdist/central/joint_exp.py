r"""JointExp: all requested quantiles from one exponential mechanism (Gillenwater, Joseph & Kulesza, ICML 2021).

The mechanism (their Sec. 3, eq. (1) and Alg. 1).  Let :math:`z_0 = a \le z_1 \le \dots \le
z_n \le z_{n+1} = b` be the clipped, sorted data padded with the bounds, :math:`I_i = [z_i,
z_{i+1})` (:math:`i = 0..n`) the intervals between them, of width :math:`w_i`, and :math:`q_1 <
\dots < q_m` the requested probabilities with :math:`q_0 = 0`, :math:`q_{m+1} = 1`.  The output
is a sorted vector :math:`o_1 \le \dots \le o_m` in :math:`[a, b]`, drawn with density
proportional to :math:`\exp(\beta\, u(X, o))` with respect to Lebesgue measure on sorted
vectors, where

.. math::

    u(X, o) = -\sum_{j=1}^{m+1} \Bigl|\, \#\{x \in X : o_{j-1} \le x < o_j\} - n (q_j - q_{j-1}) \Bigr|,
    \qquad o_0 = a,\ o_{m+1} = b,

and :math:`\beta = \varepsilon / (2\Delta u)`.  If :math:`o_j \in I_{i_j}` then
:math:`\#\{x < o_j\} = i_j`, so :math:`u` depends on the interval indices only, and a tuple
:math:`i_1 \le \dots \le i_m` has probability proportional to

.. math::

    \prod_{j=1}^{m+1} \phi_j(i_j - i_{j-1}) \prod_{i} \frac{w_i^{r_i}}{r_i!}, \qquad
    \phi_j(d) = e^{-\beta |d - n(q_j - q_{j-1})|},\ i_0 = 0,\ i_{m+1} = n,

where :math:`r_i` is how many outputs fall in :math:`I_i` (the volume of :math:`r` sorted points
in one interval is :math:`w^r / r!`).  Given the tuple the outputs are uniform in their intervals
(and sorted).

**Sensitivity and the neighbouring relation.**  dpdist's quantile releases are
:math:`\varepsilon`-DP for *adding or removing* one record (``"add-remove"``, see
:mod:`dpdist.privacy`); :math:`n` is the data's own size and is not public.  Adding one record
that falls in gap :math:`k` raises that gap's count by 1 and every target
:math:`n (q_j - q_{j-1})` by :math:`g_j = q_j - q_{j-1}`, so
:math:`|\Delta u| \le (1 - g_k) + \sum_{j \ne k} g_j = 2(1 - g_k)`, and

.. math:: \Delta u = 2\,\bigl(1 - \min_j g_j\bigr)

(the paper's add/remove sensitivity; under replacement it is 2).  The exponential mechanism
with :math:`\beta = \varepsilon / (2 \Delta u)` is :math:`\varepsilon`-DP (McSherry & Talwar
2007); the base measure (Lebesgue on sorted vectors in :math:`[a, b]^m`) does not depend on the
data.  ``tests/test_central_jointexp.py`` checks the density ratio of neighbouring data sets
exactly, by enumeration.

**Sampler** (the paper's Sec. 4: dynamic program over :math:`\alpha`, then backward sampling).
With :math:`\alpha[j, i, k]` the total weight of :math:`o_1..o_j` with :math:`o_j \in I_i` and
exactly the last :math:`k+1` outputs in :math:`I_i`:

.. math::

    \alpha[1, i, 0] &= \phi_1(i)\, w_i, \\
    \alpha[j, i, 0] &= w_i \sum_{i' < i} \phi_j(i - i') \sum_k \alpha[j-1, i', k], \\
    \alpha[j, i, k] &= \alpha[j-1, i, k-1]\, \phi_j(0)\, w_i / (k+1)
      = \alpha[j-k, i, 0]\, w_i^k \prod_{l=j-k+1}^{j} \phi_l(0) \big/ (k+1)!.

The sum over :math:`i' < i` is a lower-triangular Toeplitz product, computed with the FFT in
:math:`O(n \log n)` per quantile as in the paper (in log space with the maximum factored out;
below 513 intervals a direct log-space sum, :math:`O(n^2)`).  The right-hand form of the last
line is ours (derived from the recursion): only :math:`\alpha[\cdot, \cdot, 0]` is stored
(:math:`m (n+1)` doubles instead of the paper's :math:`m^2 (n+1)`), and the repeat terms are
rebuilt on the fly.  A repeat count :math:`k` is skipped when the bound
:math:`(n+1) \max_i \alpha[j-k, i, 0] \prod \phi_l(0) / (k+1)!` (widths are scaled to
:math:`[0, 1]`, so :math:`w_i^k \le 1`) is below :math:`e^{-45}` of the largest :math:`k = 0` term
(of the forward row, or of the sampling step's weights): the skipped mass is at most
:math:`m e^{-45} < 10^{-17}` of the total, beneath the FFT's own rounding.
Backward sampling draws :math:`(i, k)` for the last output with weight
:math:`\alpha[m, i, k]\, \phi_{m+1}(n - i)`, places :math:`k + 1` outputs in :math:`I_i`, and
continues with :math:`j - k - 1` and :math:`i' < i` weighted by
:math:`\alpha[j, i', k']\, \phi_{j+1}(i - i')` (Gumbel-max in log space).

Time :math:`O(m\, n \log n + m^2 n)` (the second term only for the repeat counts not skipped:
at large :math:`\varepsilon n` only a few are kept), memory :math:`O(m n)`, or with
``distinct=True`` :math:`O(m D + n)` for :math:`D` distinct values: the tables hold one interval
per distinct value and the Toeplitz product runs on the lattice of counts ``0..n``.
:func:`dpdist.central.quantiles` snaps the data to a public grid first, so :math:`D` is bounded by
a public number (issue 27: the memory guard used to read the private :math:`n`).

Floating point: the sampler is exact up to double rounding, except that the FFT product is
accurate to about :math:`2^{-52}` of each row's largest term, so weights smaller than that
relative to their row are lost, as in the paper's implementation; the final outputs are
snapped to a public grid by the caller.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import gammaln, logsumexp
from .._types import ArrayLike

__all__ = ["joint_exp_sensitivity", "JointExpTables", "joint_exp"]

#: below this many intervals the Toeplitz product is a direct log-space sum (exact to rounding)
_DIRECT_LIMIT = 512
#: repeat counts whose weight bound is below e^-45 of the row maximum are skipped
_SKIP = 45.0


def joint_exp_sensitivity(q: np.ndarray) -> float:
    r"""Add/remove sensitivity of the JointExp utility, :math:`2 (1 - \min_j (q_j - q_{j-1}))`."""
    gaps = np.diff(np.concatenate([[0.0], q, [1.0]]))
    return float(2.0 * (1.0 - gaps.min()))


def _toeplitz_lower(log_kernel: np.ndarray, log_x: np.ndarray) -> np.ndarray:
    """``log(T @ exp(log_x))`` with ``T[i, i'] = exp(log_kernel[i - i'])`` for ``i' <= i`` (0 above)."""
    size = log_x.size
    top_x = np.max(log_x)
    top_k = np.max(log_kernel)
    if not (np.isfinite(top_x) and np.isfinite(top_k)):
        return np.full(size, -np.inf)
    if size <= _DIRECT_LIMIT:
        index = np.arange(size)
        difference = index[:, None] - index[None, :]
        terms = np.where(difference >= 0, log_kernel[np.maximum(difference, 0)] + log_x[None, :], -np.inf)
        return logsumexp(terms, axis=1)
    length = 1 << int(math.ceil(math.log2(2 * size - 1)))
    kernel = np.fft.rfft(np.exp(log_kernel - top_k), n=length)
    values = np.fft.rfft(np.exp(log_x - top_x), n=length)
    product = np.fft.irfft(kernel * values, n=length)[:size]
    with np.errstate(divide="ignore"):
        return np.log(np.maximum(product, 0.0)) + top_k + top_x


class JointExpTables:
    r"""The dynamic program of JointExp on one sorted, clipped data set (see the module docstring).

    Parameters
    ----------
    sorted_x : ndarray
        Sorted data inside ``bounds``.
    bounds : (float, float)
    q : ndarray
        Strictly increasing probabilities in (0, 1).
    epsilon : float
    distinct : bool
        ``False``: one interval per record, between consecutive sorted points (:math:`n + 1`
        intervals, tied points giving empty ones), as in the paper.  ``True``: one interval per
        *distinct* value, :math:`[v_k, v_{k+1})` with the number of records below it
        :math:`c_k = \#\{x \le v_k\}`; the empty intervals of ties carry no mass, so the law is
        the same, and the tables hold ``m (D + 2)`` numbers for ``D`` distinct values.
        :func:`dpdist.central.quantiles` snaps the data to a public grid first, so ``D`` is
        bounded by a public number, not by the private ``n``.

    Attributes
    ----------
    n : int
        The number of records.
    size : int
        The number of intervals (``n + 1``, or ``D + 1``).
    counts : ndarray
        For each interval, the number of records below a point inside it (``arange(n + 1)`` for
        ``distinct=False``).
    """

    def __init__(
        self, sorted_x: np.ndarray, bounds: tuple[float, float], q: np.ndarray, epsilon: float, *, distinct: bool = False
    ):
        low, high = float(bounds[0]), float(bounds[1])
        self.n = n = int(sorted_x.size)
        self.m = m = int(q.size)
        if distinct:
            values = np.unique(sorted_x)
            below = np.searchsorted(sorted_x, values, side="right")  # #{x <= v_k}: strictly increasing
        else:
            values, below = sorted_x, np.arange(1, n + 1)
        self.points = np.concatenate([[low], values, [high]])
        self.size = size = int(values.size) + 1
        widths = np.diff(self.points) / (high - low)  # scaled to [0, 1]: w^k <= 1, and the law is unchanged
        with np.errstate(divide="ignore"):
            self.log_width = np.log(np.maximum(widths, 0.0))
        self.sensitivity = joint_exp_sensitivity(q)
        self.beta = epsilon / (2.0 * self.sensitivity)
        self.targets = np.diff(np.concatenate([[0.0], q, [1.0]])) * n  # n (q_j - q_{j-1}), j = 1..m+1
        self.cumulative_targets = np.concatenate([[0.0], np.cumsum(self.targets)])
        self.counts = np.concatenate([[0.0], below]).astype(np.float64)
        # counts[k] = k (one interval per record, no ties merged): the kernel is Toeplitz in the interval index
        self._on_lattice = size == n + 1
        # start[j] = log alpha[j, :, 0] (0-indexed quantiles)
        self.start = np.empty((m, size))
        self.row_max = np.full(m, -np.inf)  # max_i start[j, i], for the repeat bound
        self.start[0] = self.log_phi(0, self.counts) + self.log_width
        self.row_max[0] = np.max(self.start[0])
        for j in range(1, m):
            self.start[j] = self.log_width + self._earlier_intervals(j, self._log_total(j - 1))
            self.start[j, 0] = -np.inf
            self.row_max[j] = np.max(self.start[j])

    def _earlier_intervals(self, j: int, log_x: np.ndarray) -> np.ndarray:
        r""":math:`\log \sum_{i' < i} \phi_j(c_i - c_{i'})\, e^{\text{log\_x}[i']}` for every interval ``i``.

        A lower-triangular Toeplitz product on the lattice of counts ``0..n``: the intervals sit at
        their (strictly increasing) counts, the others are empty.  ``i' < i`` only: outputs in one
        interval are counted by the repeats.
        """
        if self._on_lattice:
            kernel = self.log_phi(j, self.counts)
            kernel[0] = -np.inf
            return _toeplitz_lower(kernel, log_x)
        if self.size <= _DIRECT_LIMIT:  # few distinct values: the direct sum over them, exact to rounding
            difference = self.counts[:, None] - self.counts[None, :]
            terms = np.where(difference > 0, self.log_phi(j, difference) + log_x[None, :], -np.inf)
            return logsumexp(terms, axis=1)
        lattice = np.full(self.n + 1, -np.inf)
        index = self.counts.astype(np.int64)
        lattice[index] = log_x
        kernel = self.log_phi(j, np.arange(self.n + 1, dtype=np.float64))
        kernel[0] = -np.inf
        return _toeplitz_lower(kernel, lattice)[index]

    def log_phi(self, gap: int, difference: np.ndarray) -> np.ndarray:
        """:math:`\\log \\phi` of gap ``gap`` (0-indexed: gap 0 lies below the first quantile) at a count difference."""
        return -self.beta * np.abs(difference - self.targets[gap])

    def repeat_offset(self, j: int, k: ArrayLike) -> np.ndarray:
        r""":math:`\log (\prod_{l=j-k+1}^{j} \phi_l(0) / (k+1)!)`, 0-indexed quantile ``j`` (``k`` may be an array)."""
        k = np.asarray(k)
        return -self.beta * (self.cumulative_targets[j + 1] - self.cumulative_targets[j - k + 1]) - gammaln(k + 2)

    def repeats(self, j: int, top: float, stop: int) -> np.ndarray:
        """The repeat counts ``k`` of quantile ``j`` (intervals below ``stop``) whose total can reach ``top - 45``.

        ``top`` is the largest ``k = 0`` term; a term of ``k >= 1`` is at most
        ``max_i alpha[j-k, i, 0]`` times the repeat offset (``w^k <= 1``, ``phi <= 1``), so the
        ``stop`` terms of a skipped ``k`` add up to less than ``e^-45`` times ``top``.
        """
        ks = np.arange(1, j + 1)
        if not np.isfinite(top):
            return np.arange(j + 1)
        bound = self.row_max[j - ks] + self.repeat_offset(j, ks) + math.log(stop)
        return np.concatenate([[0], ks[bound >= top - _SKIP]])

    def _log_repeat(self, j: int, k: int, stop: int) -> np.ndarray:
        """:math:`\\log \\alpha[j, i, k]` for ``i < stop``."""
        if k == 0:
            return self.start[j, :stop]
        return self.start[j - k, :stop] + k * self.log_width[:stop] + float(self.repeat_offset(j, k))

    def _log_total(self, j: int) -> np.ndarray:
        """:math:`\\log \\sum_k \\alpha[j, i, k]` for every ``i``."""
        ks = self.repeats(j, float(np.max(self.start[j])), self.size)
        total = self._log_repeat(j, 0, self.size)
        for k in ks[1:]:
            total = np.logaddexp(total, self._log_repeat(j, int(k), self.size))
        return total

    def step_log_weights(self, j: int, last: int, first: bool) -> tuple[np.ndarray, np.ndarray]:
        """Unnormalized log weights of (repeat count ``k``, interval ``i``) for the run ending at quantile ``j``.

        The next output up lies in interval ``last`` (``first``: there is none, ``last = n``
        is the right end and ``i = last`` is allowed).  Returns ``(ks, weights)`` with
        ``weights[r, i]`` the weight of ``k = ks[r]`` and interval ``i``.
        """
        stop = last + 1 if first else last
        link = self.log_phi(j + 1, self.counts[last] - self.counts[:stop])
        ks = self.repeats(j, float(np.max(self.start[j, :stop] + link)), stop)
        weights = np.stack([self._log_repeat(j, int(k), stop) + link for k in ks])
        return ks, weights


def joint_exp(
    sorted_x: np.ndarray, bounds: tuple[float, float], q: np.ndarray, epsilon: float, rng: np.random.Generator, *,
    distinct: bool = False,
) -> tuple[np.ndarray, JointExpTables]:
    """One JointExp draw: sorted outputs in ``bounds`` (unsnapped) and the tables used (``distinct``: see the tables)."""
    tables = JointExpTables(sorted_x, bounds, q, epsilon, distinct=distinct)
    outputs = np.empty(tables.m)
    j, last, first = tables.m - 1, tables.size - 1, True
    while j >= 0:
        ks, weights = tables.step_log_weights(j, last, first)
        noisy = np.where(np.isfinite(weights), weights + rng.gumbel(size=weights.shape), -np.inf)
        row, interval = np.unravel_index(int(np.argmax(noisy)), weights.shape)
        k = int(ks[row])
        left = tables.points[interval]
        width = tables.points[interval + 1] - left
        outputs[j - k : j + 1] = np.sort(left + rng.random(k + 1) * width)
        j, last, first = j - k - 1, int(interval), False
    return outputs, tables
