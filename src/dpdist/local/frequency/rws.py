r"""Random wheel spinner, ``rws`` (Fang, Chen & Liu, "Further Study on Frequency Estimation under Local
Differential Privacy", USENIX Security 2025, the RWS protocol; the authors' ``fp/RWS.py``).

The items sit on a wheel of :math:`m` positions.  Each user draws a public random set :math:`S` of
:math:`k` positions (named by a seed) and spins: the reported position :math:`y` falls in
:math:`v - S` (mod :math:`m`) with probability :math:`p` each, elsewhere with :math:`q`,

.. math::

    p = \frac{e^\varepsilon}{k e^\varepsilon + m - k}, \qquad q = \frac{1}{k e^\varepsilon + m - k}
    \qquad \text{(randomizer)},

so the ratio is :math:`e^\varepsilon` whatever :math:`S`.  The report :math:`(S, y)` supports the
:math:`k` items :math:`y + S`; it supports the user's own with probability :math:`p^* = k p` and
another with probability :math:`q^* = p^*\frac{k-1}{m-1} + (1-p^*)\frac{k}{m-1}` when every non-zero
difference is equally likely in :math:`S - S`.  The estimator is the pure-protocol one of
:class:`FrequencyOracle`, :math:`\hat f_v = (C_v/n - q^*)/(p^* - q^*)` (unbiased), per-item variance
:math:`[f_v p^*(1-p^*) + (1 - f_v) q^*(1-q^*)]/(n (p^*-q^*)^2)`, whose mean over the :math:`d` items
is the paper's MSE

.. math::

    \overline{\mathrm{MSE}} = \frac{q^*(1-q^*)}{n (p^*-q^*)^2} + \frac{1 - p^* - q^*}{n d (p^* - q^*)}.

:math:`k` is whichever of :math:`\lfloor m/(e^\varepsilon+1) \rfloor` and :math:`\lceil m/(e^\varepsilon+1)
\rceil` has the lower mean MSE (1 when :math:`m/(e^\varepsilon+1) \le 1`: RWS is then GRR), as the
authors' ``get_ana_MSE_by_k``.  Equation numbers: the paper's text was not reachable when this module was
written, so the formulas are cited by protocol and checked against the authors' code, not by number;
``benchmarks/bench_fang_oracles.py`` runs both side by side.

The set of seeds (dpdist's choice, derived here).  The authors draw :math:`S` as a uniform
:math:`k`-subset of :math:`[d]` from a per-user seed with NumPy's generator, so :math:`q^*` holds only
as far as that generator is uniform, and neither a collector in another language nor an exact channel
can follow it.  dpdist's wheel has a prime number of positions, :math:`m` = the smallest prime
:math:`\ge d` (positions :math:`\ge d` hold no item), and the seed is a multiplier
:math:`a \in [1, m)`: :math:`S_a = \{0, a, 2a, \dots, (k-1)a\} \bmod m`, an arc of :math:`k` consecutive
positions of the wheel relabelled by :math:`a`.  For a difference :math:`\delta \ne 0`,
:math:`|S_a \cap (S_a + \delta)| = |A \cap (A + a^{-1}\delta)|` with :math:`A = \{0, \dots, k-1\}`, and
as :math:`a` is uniform on :math:`[1, m)` so is :math:`t = a^{-1}\delta`; summed over the :math:`m - 1`
values of :math:`t`, the overlaps count each of the :math:`k(k-1)` ordered pairs of distinct members of
:math:`A` once (at :math:`t` = their difference mod :math:`m`, non-zero as :math:`k < m`), so the mean overlap
is exactly :math:`k(k-1)/(m-1)` and :math:`q^*` above is exact.  For prime :math:`d` this is the paper's protocol with :math:`m = d`;
otherwise it is the paper's RWS over :math:`m` positions, a mean MSE higher by the few extra
positions (the gap to the next prime: 101 for d = 100, +0.1 % at eps = 1).

A report is one integer, the index :math:`(a - 1) m + y` of the pair in :math:`[0, (m-1) m)`
(:math:`a - 1 \in [0, m-1)`, :math:`y \in [0, m)`), in the narrowest unsigned dtype that holds it:
:math:`\lceil \log_2((m-1) m) \rceil` bits of content (15 at d = 128, 21 at 1,024, 29 at 16,384) in 8, 16, 32
or 64 bits (16 up to d = 251, 32 up to d = 65,521).  The channel over these outputs is finite and enumerated for
small :math:`d`.  Support counts are dependent across items (a report supports exactly :math:`k` positions), so
``simulate`` privatizes and aggregates in chunks (``exact_simulate=False``).
"""

from __future__ import annotations

import math

import numpy as np

from .._bernoulli import mixture_keep
from .._docs import shared_parameters
from .._protocol import ProtocolTags, register
from .._report_kinds import ItemReports
from .._state_validation import exact_sum
from ._hashing import is_prime
from ._oracle import FrequencyOracle
from .ss import subset_variance
from ..._types import ArrayLike

__all__ = ["RWS", "next_prime", "rws_subset_size"]

#: support cells (reports x k) per chunk when counting: bounds the working memory at ~32 MB of int64
_BLOCK_CELLS = 1 << 22
#: largest number of channel columns ((m-1) x m) that ``channel()`` enumerates
_MAX_CHANNEL_OUTPUTS = 1 << 16


def next_prime(number: int) -> int:
    """The smallest prime ``>= number`` (``number <= 2^31 - 1``, itself prime, so the answer fits 31 bits)."""
    candidate = max(2, number)
    while not is_prime(candidate):
        candidate += 1
    return candidate


def rws_subset_size(epsilon: float, positions: int, domain_size: int) -> int:
    r"""RWS's :math:`k`: the floor or the ceiling of :math:`m/(e^\varepsilon+1)`, the lower mean MSE; 1 when it is at most 1."""
    optimum = positions / (math.exp(epsilon) + 1.0)
    if optimum <= 1.0:
        return 1
    low, high = math.floor(optimum), min(positions - 1, math.ceil(optimum))
    better = subset_variance(epsilon, positions, domain_size, high) < subset_variance(epsilon, positions, domain_size, low)
    return high if better else low


@register
@shared_parameters
class RWS(FrequencyOracle):
    """Random wheel spinner (Fang, Chen & Liu, USENIX Security 2025).

    Parameters
    ----------
    {epsilon}
    {domain_size}

    Notes
    -----
    The wheel has ``positions`` = the smallest prime ``>= d``; ``subset_size`` gives :math:`k`.  A report
    is the index ``(a - 1) m + y`` of the multiplier naming the user's set and the position spun (narrowest
    unsigned dtype).
    """

    name = "rws"
    summary = "random wheel spinner: report (a-1) m + y, y in v - a{0..k-1} mod m w.p. k e^eps/(k e^eps + m - k)"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=False, fixed_support_size=False, bernoulli_support=True)

    def _setup(self):
        d = self.domain_size
        self.positions = m = next_prime(d)
        self.subset_size = k = rws_subset_size(self.epsilon, m, d)
        # "a uniform one of the k positions v - aS w.p. lambda, else a uniform position": p = lambda/k + q,
        # q = (1 - lambda)/m, ratio 1 + lambda m / (k (1 - lambda)) <= e^eps (lambda on the 2^-53 grid)
        self._keep = mixture_keep(self.epsilon, k, m)
        self._q_position = (1.0 - self._keep) / m
        self._p_position = self._keep / k + self._q_position
        self._p = k * self._p_position  # = lambda + k (1 - lambda)/m
        overlap = k * (k - 1) / (m - 1)  # mean |S_a ∩ (S_a + delta)| over a (module docstring)
        self._q = self._p_position * overlap + self._q_position * (k - overlap)
        self._inverse = None

    @property
    def statistic_total_per_report(self) -> int | None:
        """``k`` when ``d`` is prime (every position holds an item: a report supports exactly ``k``), else ``None``."""
        return self.subset_size if self.positions == self.domain_size else None

    def _check_statistic(self, statistic, n):
        """A report supports its ``k`` distinct positions, of which at most ``m - d`` hold no item: the support counts
        sum to between ``n max(0, k - (m - d))`` and ``n k`` (exactly ``n k`` when ``m = d``, checked as SS's total)."""
        problem = super()._check_statistic(statistic, n)
        if problem is not None:
            return problem
        k, empty = self.subset_size, self.positions - self.domain_size
        total, low = exact_sum(statistic), max(0, k - empty) * n
        if not low <= total <= k * n:
            return (f"the support counts must sum to between n x {max(0, k - empty)} = {low} and n x {k} = {k * n} "
                    f"(each report supports its {k} positions, at most {empty} of them holding no item), but they sum "
                    f"to {total}")
        return None

    def support_probabilities(self) -> tuple[float, float]:
        r"""``(p*, q*)``: :math:`p^* = k p`, :math:`q^* = p\,k(k-1)/(m-1) + q\,(k - k(k-1)/(m-1))`."""
        return self._p, self._q

    # ------------------------------------------------------------------ client
    def _privatize(self, values, rng):
        m, k = self.positions, self.subset_size
        multipliers = rng.integers(0, m - 1, size=values.size, dtype=np.int64) + 1
        kept = rng.random(values.size) < self._keep
        steps = rng.integers(0, k, size=values.size, dtype=np.int64)  # drawn either way, as the uniform position
        uniform = rng.integers(0, m, size=values.size, dtype=np.int64)
        spun = (values.astype(np.int64) - multipliers * steps % m) % m  # a position of v - S_a
        return ((multipliers - 1) * m + np.where(kept, spun, uniform)).astype(self._report_dtype)

    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"positions": self.positions, "subsetSize": self.subset_size, "keep": self._keep}

    # ------------------------------------------------------------------ server
    def _report_format(self):
        return ItemReports((self.positions - 1) * self.positions)

    def _accumulate(self, reports):
        """Each report :math:`(a - 1) m + y` adds one to the items of its :math:`k` positions :math:`y + a i`,
        :math:`i < k`, below ``d``."""
        m, k, d = self.positions, self.subset_size, self.domain_size
        counts = np.zeros(d, dtype=np.int64)
        steps = np.arange(k, dtype=np.int64)[None, :]
        chunk = max(1, _BLOCK_CELLS // k)
        for start in range(0, reports.shape[0], chunk):
            multiplier, position = np.divmod(reports[start : start + chunk, None].astype(np.int64), m)
            supported = (position + (multiplier + 1) * steps) % m  # a < 2^31, i < 2^31: no overflow
            supported = supported[supported < d]
            counts += np.bincount(supported, minlength=d)
        return counts

    # ------------------------------------------------------------------ exact channel
    def _position_law(self, items: np.ndarray) -> np.ndarray:
        """``Pr[y | v, a]`` for each item, multiplier ``a - 1`` and position: shape ``(items, m - 1, m)``."""
        m, k = self.positions, self.subset_size
        multipliers = np.arange(1, m, dtype=np.int64)
        inverses = np.array([pow(int(a), -1, m) for a in multipliers], dtype=np.int64)
        positions = np.arange(m, dtype=np.int64)
        # y in v - S_a  iff  (v - y) a^{-1} mod m < k
        step = (items[:, None, None] - positions[None, None, :]) % m * inverses[None, :, None] % m
        return np.where(step < k, self._p_position, self._q_position)

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Output law over the reports ``(a - 1) m + y`` (columns in index order); small ``d`` only."""
        m = self.positions
        outputs = (m - 1) * m
        if outputs > _MAX_CHANNEL_OUTPUTS:
            raise NotImplementedError(
                f"RWS.channel enumerates (m-1) x m = {outputs} outputs; only for at most {_MAX_CHANNEL_OUTPUTS} (a small 'domain_size')."
            )
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        return (self._position_law(items) / (m - 1)).reshape(items.size, outputs)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)

    # ------------------------------------------------------------------ support covariance
    def support_pair_probabilities(self, frequencies: ArrayLike) -> np.ndarray:
        r"""``P[j, l]``: the probability that one report, of a user whose item is drawn from ``frequencies``,
        supports both items ``j`` and ``l`` (diagonal: :math:`\pi_j = q^* + (p^*-q^*) f_j`); exact.

        Derivation.  Given the multiplier :math:`a`, substitute :math:`x = -a^{-1} y`,
        :math:`J = a^{-1} j`, :math:`L = a^{-1} l`, :math:`V = a^{-1} v` (mod :math:`m`): the report
        supports :math:`j` iff :math:`J + x \in A = \{0, \dots, k-1\}`, and :math:`x` has probability
        :math:`p` if :math:`V + x \in A`, else :math:`q` (the position probabilities), so

        .. math::

            \Pr[s_j = s_l = 1 \mid v, a] = q\,|(A - J) \cap (A - L)| + (p - q)\,|(A - J) \cap (A - L) \cap (A - V)|.

        Averaged over :math:`a` uniform on :math:`[1, m)`, the pair term is :math:`o = k(k-1)/(m-1)` (module
        docstring) and the triple term is :math:`T(r) = \frac{1}{m-1} \#\{(x, y, z) \in A^3 : x \ne y,\;
        x - z \equiv r (x - y)\}` with :math:`r = (j - v)/(j - l) \bmod m` (:func:`_triple_overlaps`;
        :math:`T(0) = T(1) = o` for :math:`v \in \{j, l\}`).  Unlike SS's, the covariance depends on the
        triple through :math:`r`, not only on whether :math:`v \in \{j, l\}`.  Summed over :math:`v \sim f`,
        :math:`K[j, j - \delta] = \sum_w f_{j-w} T(w \delta^{-1})` is, for each :math:`\delta \ne 0`, a cyclic
        convolution over :math:`\mathbb{Z}_m` (FFT, :math:`O(m^2 \log m)` in all).
        """
        f = np.asarray(frequencies, dtype=np.float64)
        m, k, d = self.positions, self.subset_size, self.domain_size
        p_position, q_position = self._p_position, self._q_position
        overlap = k * (k - 1) / (m - 1)
        triple = _triple_overlaps(m, k)
        padded = np.zeros(m)
        padded[:d] = f
        spectrum = np.fft.rfft(padded)
        shifts = np.arange(1, m, dtype=np.int64)
        inverses = np.array([pow(int(delta), -1, m) for delta in shifts], dtype=np.int64)
        w = np.arange(m, dtype=np.int64)
        columns = np.arange(d, dtype=np.int64)
        mixed = np.zeros((d, d))
        chunk = max(1, (1 << 22) // m)
        for start in range(0, m - 1, chunk):
            deltas, inverse = shifts[start : start + chunk], inverses[start : start + chunk]
            kernels = triple[(w[None, :] * inverse[:, None]) % m]  # T(w / delta)
            convolved = np.fft.irfft(np.fft.rfft(kernels, axis=1) * spectrum[None, :], n=m, axis=1)[:, :d]
            partners = (columns[None, :] - deltas[:, None]) % m  # l = j - delta
            rows, cols = np.nonzero(partners < d)
            mixed[cols, partners[rows, cols]] = convolved[rows, cols]
        pairs = q_position * overlap * f.sum() + (p_position - q_position) * mixed
        np.fill_diagonal(pairs, self._q * f.sum() + (self._p - self._q) * f)
        return pairs


def _triple_overlaps(m: int, k: int) -> np.ndarray:
    r""":math:`T(r)` for :math:`r \in \mathbb{Z}_m` (:meth:`RWS.support_pair_probabilities`): the mean over
    :math:`t \ne 0` of :math:`|A \cap (A + t) \cap (A + r t)|`, :math:`A = \{0, \dots, k-1\}`.

    Counted over the differences :math:`\delta = x - y \ne 0` and :math:`e = x - z`, both in :math:`(-k, k)`:
    the triples with these differences number :math:`\max(0, k - (\max(0, \delta, e) - \min(0, \delta, e)))`
    and have :math:`r = e \delta^{-1}`; :math:`O(k^2)`.
    """
    counts = np.zeros(m)
    differences = np.arange(-(k - 1), k, dtype=np.int64)
    chunk = max(1, (1 << 20) // max(1, differences.size))
    nonzero = differences[differences != 0]
    for start in range(0, nonzero.size, chunk):
        delta = nonzero[start : start + chunk, None]
        e = differences[None, :]
        spread = np.maximum(np.maximum(0, delta), e) - np.minimum(np.minimum(0, delta), e)
        number = np.maximum(0, k - spread)
        inverse = np.array([pow(int(value) % m, -1, m) for value in delta[:, 0]], dtype=np.int64)[:, None]
        ratio = (e % m) * inverse % m
        counts += np.bincount(ratio.ravel(), weights=number.ravel().astype(np.float64), minlength=m)
    return counts / (m - 1)
