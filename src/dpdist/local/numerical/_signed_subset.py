r"""Signed subset selection: the randomizer of the wavelet paper, eq. 41-46 and Algorithm 2.

Paper 000 (Zhao et al., "Consistent Estimation of
Numerical Distributions under LDP by Wavelet Expansion", IEEE S&P 2026),
sec. 4.4-4.6 and appendices B-C.

The input is a signed one-hot vector :math:`\mathbf v = \pm\mathbf e_k \in \{-1,0,1\}^d`;
the output space is :math:`\mathcal Y = \{\mathbf y \in \{-1,0,1\}^d : \|\mathbf y\|_0 = m\}`
(eq. 41, :math:`|\mathcal Y| = \binom dm 2^m`), and (eq. 45)

.. math::

    p_Q(\mathbf y \mid \mathbf v) = e^{\varepsilon}/\Omega \text{ if } \langle\mathbf y,
    \mathbf v\rangle = 1, \quad 1/\Omega \text{ otherwise},

which is :math:`\varepsilon`-LDP because the ratio of any two entries of a column is at
most :math:`e^\varepsilon`.

Closed forms without binomials
------------------------------
With :math:`\binom{d-1}{m}/\binom{d-1}{m-1} = (d-m)/m`, :math:`\binom{d-2}{m-2}/\binom{d-1}{m-1}
= (m-1)/(d-1)` and :math:`\binom{d-2}{m-1}/\binom{d-1}{m-1} = (d-m)/(d-1)`, eq. 46, 52 and 54
become (exact, valid for every :math:`1 \le m \le d`, no overflow; written with
:math:`e^{-\varepsilon}` so that large :math:`\varepsilon` is safe)

.. math::

    \Omega = \binom{d-1}{m-1} 2^{m-1}\Bigl(e^\varepsilon + 1 + \frac{2(d-m)}{m}\Bigr),\qquad
    p = \frac{m}{m(1-e^{-\varepsilon}) + 2d e^{-\varepsilon}},\qquad
    q = \frac{m\,[(m-1)(1+e^{-\varepsilon}) + 2(d-m)e^{-\varepsilon}]}
             {2(d-1)\,[m(1-e^{-\varepsilon}) + 2d e^{-\varepsilon}]}.

(:math:`q` also equals eq. 53 at :math:`m = 1`; for :math:`d = 1` there is no other
coordinate and :math:`q` is set to 0.)

Two corrections to the printed paper (derived here, tested in ``tests/local/numerical/test_wavelet.py``)
------------------------------------------------------------------------------------
1. *Signs of the other coordinates.*  Under eq. 45 the outputs with
   :math:`\langle\mathbf y,\mathbf v\rangle = 0` are equally likely whatever the signs of
   their non-zero coordinates, so in Algorithm 2 the :math:`m` (or :math:`m-1`) chosen
   coordinates other than :math:`k` must get independent uniform signs :math:`\pm 1`.
   The printed Algorithm 2 sets them to :math:`+1`; then :math:`E[Y(l) \mid v(l)=0] > 0`
   and eq. 56-57 are biased.  With uniform signs, Algorithm 2 gives
   :math:`P(\mathbf y) = p/(\binom{d-1}{m-1}2^{m-1}) = e^\varepsilon/\Omega` when
   :math:`y(k) = v(k)`, :math:`p e^{-\varepsilon}/(\binom{d-1}{m-1}2^{m-1}) = 1/\Omega`
   when :math:`y(k) = -v(k)`, and
   :math:`(1 - p(1+e^{-\varepsilon}))/(\binom{d-1}{m}2^m) = 1/\Omega` when :math:`y(k)=0`:
   exactly eq. 45.
2. *Variance of a coordinate the user does not hold* (eq. 117).  For :math:`v(l) = 0`,
   :math:`P(Y(l)=1) = P(Y(l)=-1) = q` (flipping coordinate :math:`l` is a bijection of
   :math:`\mathcal Y` that keeps :math:`\langle\mathbf y,\mathbf v\rangle`), so
   :math:`\operatorname{Var}[Y(l)] = E[Y(l)^2] = 2q`, not :math:`q`.  This doubles the
   :math:`q` term of eq. 59-61 and so changes :math:`m^*`, :math:`V_j` and the allocation;
   ``variance_rule="paper"`` keeps the printed factor for reproductions.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._bernoulli import GRID, exp_lower, odds_probability
from .._unset_cell import uniform_unset_columns

__all__ = [
    "coordinate_variances",
    "realized_output_probabilities",
    "signed_thresholds",
    "enumerate_outputs",
    "log_normalizer",
    "output_probabilities",
    "sample_signed_subsets",
    "sample_signed_subsets_packed",
    "support_probabilities",
]


def support_probabilities(d: int, m, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    r"""``(p, q)`` of Lemma 3 (eq. 52-54) for the output size(s) ``m`` (array ok), in closed form.

    ``p = P(Y(k) = v(k) | v(k) = +-1)`` and ``q = P(Y(l) = 1 | v(l) = 0)``
    (``= P(Y(l) = -1 | v(l) = 0)``).  See the module docstring for the derivation.
    """
    m = np.asarray(m, dtype=np.float64)
    shrink = math.exp(-epsilon)
    denominator = m * (1.0 - shrink) + 2.0 * d * shrink
    p = m / denominator
    if d == 1:
        q = np.zeros_like(m)
    else:
        q = m * ((m - 1.0) * (1.0 + shrink) + 2.0 * (d - m) * shrink) / (2.0 * (d - 1) * denominator)
    return p, q


def signed_thresholds(d: int, m: int, epsilon: float) -> tuple[float, float]:
    r"""The thresholds ``(t1, t2)`` of Algorithm 2's draw (eq. 66), on the :math:`2^{-53}` grid.

    A user keeps :math:`Y(k) = v(k)` when ``U < t1``, flips it when ``t1 <= U < t2`` and drops
    it otherwise, with ``U`` from ``Generator.random()`` (multiples of :math:`2^{-53}`), so the
    three probabilities are exactly :math:`P_+ = t_1`, :math:`P_- = t_2 - t_1`, :math:`P_0 = 1 - t_2`.
    An output's probability is :math:`P_+ A`, :math:`P_- A` or :math:`P_0 B` with
    :math:`A = 1/(\binom{d-1}{m-1}2^{m-1})`, :math:`B = 1/(\binom{d-1}{m}2^m)`; eq. 45 wants
    :math:`P_+ = e^\varepsilon P_-` and :math:`P_- A = P_0 B`.  Here :math:`P_+` is the largest
    grid value at most :math:`p` (eq. 52) for which the rest can be split so that the largest
    of the three values is at most :math:`e^\varepsilon` times the smallest, checked in exact
    arithmetic against :func:`~dpdist.local._bernoulli.exp_lower` (``m = d``: :math:`P_0 = 0`).
    """

    bound = exp_lower(epsilon)
    if m >= d:  # every output holds the user's coordinate: P0 = 0, P+ / P- <= e^eps
        return odds_probability(bound), 1.0
    share = Fraction(m, 2 * (d - m))  # B / A: P0 counts B / A as much as P-
    k1 = int(float(support_probabilities(d, m, epsilon)[0]) * GRID)
    for _ in range(256):
        rest = GRID - k1
        split = rest * share / (1 + share)  # P- = share P0 balances the two small values
        for k2 in sorted({k1 + math.floor(split), k1 + math.ceil(split)}):
            values = (Fraction(k1), Fraction(k2 - k1), (GRID - k2) * share)
            if min(values) > 0 and max(values) <= bound * min(values):
                return k1 / GRID, k2 / GRID
        k1 -= 1
    raise ValueError(f"no grid thresholds for d={d}, m={m}, epsilon={epsilon}")  # pragma: no cover


def realized_output_probabilities(outputs: np.ndarray, cells, signs, epsilon: float) -> np.ndarray:
    """As :func:`output_probabilities`, for the probabilities Algorithm 2 draws (:func:`signed_thresholds`)."""
    outputs = np.asarray(outputs, dtype=np.int64)
    d = outputs.shape[1]
    m = int(np.count_nonzero(outputs[0])) if outputs.shape[0] else 1
    t1, t2 = signed_thresholds(d, m, epsilon)
    held = 1.0 / (math.comb(d - 1, m - 1) * 2.0 ** (m - 1))
    dropped = 1.0 / (math.comb(d - 1, m) * 2.0**m) if m < d else 0.0
    inner = outputs[:, np.asarray(cells, dtype=np.int64)].T * np.asarray(signs, dtype=np.int64)[:, None]
    return np.where(inner == 1, t1 * held, np.where(inner == -1, (t2 - t1) * held, (1.0 - t2) * dropped))


def log_normalizer(d: int, m, epsilon: float) -> np.ndarray:
    r""":math:`\log\Omega` of eq. 46, in log space (gammaln) so that it never overflows."""
    from scipy.special import gammaln  # lazy: keeps scipy out of `import dpdist`

    m = np.asarray(m, dtype=np.float64)
    log_binomial = gammaln(d) - gammaln(m) - gammaln(d - m + 1.0)
    return log_binomial + (m - 1.0) * math.log(2.0) + np.logaddexp(epsilon, np.log1p(2.0 * (d - m) / m))


def coordinate_variances(d: int, m, epsilon: float, *, variance_rule: str = "exact"):
    r"""``(held, other)``: Var[Y(k) | v(k) = +-1] (eq. 115-116) and Var[Y(l) | v(l) = 0].

    ``other`` is :math:`2q` (``variance_rule="exact"``) or the printed :math:`q`
    (eq. 117, ``"paper"``).
    """
    p, q = support_probabilities(d, m, epsilon)
    shrink = math.exp(-epsilon)
    held = p * (1.0 + shrink) - (p * (1.0 - shrink)) ** 2
    other = (2.0 if variance_rule == "exact" else 1.0) * q
    return held, other


def sample_signed_subsets(cells, signs, d: int, m: int, epsilon: float, rng, *, random_signs: bool = True):
    r"""Algorithm 2 (eq. 66) for many users at once; returns boolean ``(nonzero, negative)`` of shape (n, d).

    Parameters
    ----------
    cells : int array (n,)
        Index ``k`` of each user's non-zero input coordinate.
    signs : int array (n,)
        Its value ``v(k)`` in {-1, +1}.
    d, m : int
        Dimension and number of non-zero outputs, ``1 <= m <= d``.
    random_signs : bool
        True (correct, samples eq. 45): the other chosen coordinates get uniform signs.
        False: the printed Algorithm 2 (all +1), kept only to show its bias in tests.

    Notes
    -----
    The ``m`` or ``m - 1`` other coordinates are a uniform subset of the ``d - 1``
    coordinates ``!= k``: ``m - 1`` drawn for every user by Floyd's algorithm
    vectorized over users (one NumPy pass per chosen element, no per-user loop;
    when more than half are chosen, the complement is drawn instead), then one
    more uniform unchosen coordinate drawn for every user and kept where ``k`` is
    not held (a uniform :math:`(m-1)`-subset plus a uniform element of its
    complement is a uniform :math:`m`-subset).  The draws are the same whether
    or not ``k`` is held, so the work does not tell it.
    """
    nonzero, negative = sample_signed_subsets_packed(cells, signs, d, m, epsilon, rng, random_signs=random_signs)
    return (
        np.unpackbits(nonzero, axis=1, count=d).view(bool),
        np.unpackbits(negative, axis=1, count=d).view(bool),
    )


def sample_signed_subsets_packed(cells, signs, d: int, m: int, epsilon: float, rng, *, random_signs: bool = True):
    """As :func:`sample_signed_subsets`, as ``numpy.packbits`` bitmaps of shape (n, ceil(d / 8))."""
    cells = np.asarray(cells, dtype=np.int64)
    signs = np.asarray(signs, dtype=np.int64)
    n = cells.size
    t1, t2 = signed_thresholds(d, m, epsilon)
    u = rng.random(n)
    # eq. 66: Y(k) = v(k) w.p. p, -v(k) w.p. p e^-eps, 0 otherwise (grid thresholds: exact)
    state = np.where(u < t1, 1, np.where(u < t2, -1, 0))
    held = state != 0
    slots = d - 1
    rows = np.arange(n, dtype=np.int64)
    if slots > 0:
        # m - 1 other coordinates for every user, then an m-th drawn for every user and kept where k is not
        # held: the same draws either way, so the work never tells whether the report holds k
        others = np.full(n, m - 1, dtype=np.int64)
        complement = 2 * (m - 1) > slots
        counts = slots - others if complement else others
        picked = _floyd_subsets(cells, counts, slots, d, rng)
        nonzero = ~picked if complement else picked
        if m - 1 < slots:  # (m = d holds k always: every other coordinate is already chosen)
            nonzero[rows, uniform_unset_columns(nonzero, cells, rng)] = ~held  # one write per row either way
    else:
        nonzero = np.ones((n, d), dtype=bool)
    nonzero[rows, cells] = held
    nonzero = np.packbits(nonzero, axis=1)
    if random_signs:
        negative = rng.integers(0, 256, size=nonzero.shape, dtype=np.uint8) & nonzero
    else:
        negative = np.zeros_like(nonzero)
    # the held coordinate: its sign bit is set iff Y(k) = -1
    byte = cells >> 3
    bit = (0x80 >> (cells & 7)).astype(np.uint8)
    negative[rows, byte] = (negative[rows, byte] & ~bit) | np.where(held & (state * signs < 0), bit, 0).astype(np.uint8)
    return nonzero, negative


def _floyd_subsets(cells: np.ndarray, counts: np.ndarray, slots: int, d: int, rng) -> np.ndarray:
    """Boolean (n, d): for row i a uniform ``counts[i]``-subset of the columns other than ``cells[i]``.

    Floyd's algorithm on the ``slots = d - 1`` reduced indices, mapped to columns by
    ``r -> r + (r >= cell)``.
    """
    n = cells.size
    picked = np.zeros(n * d, dtype=bool)
    base = np.arange(n, dtype=np.int64) * d
    largest = int(counts.max()) if n else 0
    for t in range(slots - largest, slots):
        active = counts >= slots - t
        if active.all():
            rows_base, row_cells = base, cells
        else:
            rows_base, row_cells = base[active], cells[active]
        r = rng.integers(0, t + 1, size=rows_base.size, dtype=np.int64)  # exactly uniform (floor(U (t+1)) is not)
        column = r + (r >= row_cells)
        taken = picked[rows_base + column]
        r = np.where(taken, t, r)
        picked[rows_base + r + (r >= row_cells)] = True
    return picked.reshape(n, d)


def enumerate_outputs(d: int, m: int) -> np.ndarray:
    """Every ``y`` in the output space (eq. 41) as int8 rows, ordered by their ternary code.

    The code of ``y`` is ``sum_k (y_k + 1) 3^k``; only small ``d`` (``3^d`` codes).
    """
    codes = np.arange(3**d, dtype=np.int64)
    digits = (codes[:, None] // 3 ** np.arange(d, dtype=np.int64)) % 3 - 1
    return digits[np.count_nonzero(digits, axis=1) == m].astype(np.int8)


def output_probabilities(outputs: np.ndarray, cells, signs, epsilon: float) -> np.ndarray:
    r"""Eq. 45: ``P[i, y]`` for inputs ``signs[i] * e_{cells[i]}`` over the rows of ``outputs``.

    Normalized by the exact :math:`\Omega` of eq. 46 (in log space).
    """
    outputs = np.asarray(outputs, dtype=np.int64)
    d = outputs.shape[1]
    m = int(np.count_nonzero(outputs[0])) if outputs.shape[0] else 1
    inner = outputs[:, np.asarray(cells, dtype=np.int64)].T * np.asarray(signs, dtype=np.int64)[:, None]
    log_weight = np.where(inner == 1, epsilon, 0.0)
    return np.exp(log_weight - log_normalizer(d, m, epsilon))
