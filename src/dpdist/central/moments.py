r"""Moment statistics of polynomial projection (Theorem 1, Lemma 6 of Tao & Sarwate) and their sensitivities.

Paper 002 sec. IV and App. B.  With the data mapped
to :math:`[-1, 1]`, every Legendre coefficient of the empirical CDF is a linear
function of the data's moments (eq. 6: :math:`\int_{-1}^1 F_n(x)x^j\,dx =
(1-\mu_{j+1})/(j+1)`), so privatizing the moment vector privatizes the whole
projection.  Two moment vectors of length ``degree + 1`` are offered:

``"monomial"`` (the paper's Alg. 1)
    :math:`\mu_j = \frac1n\sum_k x_k^j`, :math:`j = 1..m+1`; coefficients
    :math:`c_i = \alpha_i\sum_{j\le i}\beta_{i,j}(1-\mu_{j+1})` of Theorem 1.
    The map is evaluated with exact rational :math:`\beta_{i,j}`, so the
    non-private projection is accurate to ~1e-6 at degree 30; but its entries
    grow like :math:`2^m`, so the *noise* on the moments is amplified by the
    same factor — the reason the paper's error grows quickly with m (Fig. 2).
    Lemma 7's bound :math:`(m+1)^2/2\max|z_i|` does not hold: its proof sums
    :math:`\beta_{i,j}` without absolute values.
``"legendre"``
    :math:`\lambda_j = \frac1n\sum_k P_j(x_k)`, :math:`j = 1..m+1`.  The same
    projection follows from :math:`\int_{-1}^{u}P_i = (P_{i+1}(u)-P_{i-1}(u))/(2i+1)`:
    :math:`\langle F_n, P_i\rangle = -(\lambda_{i+1}-\lambda_{i-1})/(2i+1)`
    (:math:`\lambda_0 = 1`, and :math:`\langle F_n, P_0\rangle = 1-\lambda_1`), a
    well-conditioned map, so the noise reaches each coefficient damped by
    :math:`1/(2i+1)`.  Not in the paper; same privacy argument.

Sensitivity (Lemma 6, generalized): replacing one entry changes moment j by
at most :math:`r_j/n`, where :math:`r_j` is the range of the j-th basis
function on :math:`[-1,1]`; hence :math:`\Delta_2 = \sqrt{\sum_j r_j^2}/n` and
:math:`\Delta_1 = \sum_j r_j/n`.  For monomials :math:`r_j = 2` (odd j) and 1
(even j), which is exactly Lemma 6 (:math:`\Delta_2=\sqrt{(5m+8)/2}/n` for even
m, :math:`\sqrt{(5m+5)/2}/n` for odd m; :math:`\Delta_1 = (3m+4)/(2n)` resp.
:math:`(3m+3)/(2n)`).  For Legendre polynomials :math:`r_j = 2` for odd j and
:math:`1-\min P_j` for even j, the minimum found at the roots of :math:`P_j'`.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import comb, factorial

import numpy as np
from numpy.polynomial import legendre

__all__ = [
    "MOMENT_BASES",
    "data_moments",
    "moment_ranges",
    "moment_sensitivities",
    "legendre_coefficients",
    "theorem1_matrix",
]

MOMENT_BASES = ("monomial", "legendre")
_CHUNK = 1 << 16


def _generalized_binomial(top: Fraction, k: int) -> Fraction:
    """binom(top, k) for rational ``top`` and integer ``k >= 0``."""
    product = Fraction(1)
    for index in range(k):
        product *= top - index
    return product / factorial(k)


@lru_cache(maxsize=64)
def _theorem1_fractions(degree: int) -> tuple:
    r"""Exact :math:`2^i\beta_{i,j}` of Theorem 1, :math:`\beta_{i,j}=\frac1{j+1}\binom ij\binom{(i+j-1)/2}i`."""
    rows = []
    for i in range(degree + 1):
        row = []
        for j in range(degree + 1):
            if j > i:
                row.append(Fraction(0))
                continue
            beta = Fraction(comb(i, j)) * _generalized_binomial(Fraction(i + j - 1, 2), i) / (j + 1)
            row.append(2**i * beta)
        rows.append(tuple(row))
    return tuple(rows)


def theorem1_matrix(degree: int) -> np.ndarray:
    r"""Matrix :math:`A` with :math:`\langle F_n, e_i\rangle = \sum_j A_{ij}(1-\mu_{j+1})` (Theorem 1).

    :math:`A_{ij} = \alpha_i\beta_{i,j}`, :math:`\alpha_i = 2^i\sqrt{(2i+1)/2}`;
    the rational part is exact, only the final product is rounded.
    """
    exact = _theorem1_fractions(degree)
    scale = np.sqrt((2 * np.arange(degree + 1) + 1) / 2.0)
    return np.array([[float(value) for value in row] for row in exact]) * scale[:, None]


def _basis_values(u: np.ndarray, degree: int, basis: str) -> np.ndarray:
    """Columns j = 1..degree+1 of the moment basis at ``u`` (shape ``(len(u), degree + 1)``)."""
    out = np.empty((u.size, degree + 1))
    if basis == "monomial":
        power = u.copy()
        for j in range(degree + 1):
            out[:, j] = power
            power = power * u
    else:  # Legendre three-term recurrence: (k+1) P_{k+1} = (2k+1) u P_k - k P_{k-1}
        previous, current = np.ones_like(u), u.copy()
        out[:, 0] = current
        for k in range(1, degree + 1):
            previous, current = current, ((2 * k + 1) * u * current - k * previous) / (k + 1)
            out[:, k] = current
    return out


def data_moments(u: np.ndarray, degree: int, basis: str = "monomial") -> np.ndarray:
    """Mean of basis functions 1..degree+1 over ``u`` in [-1, 1], chunked (memory O(chunk * degree)).

    No data (``u`` empty) give the empty sum, zeros: a public value, so an empty release is the
    noise alone.
    """
    total = np.zeros(degree + 1)
    for start in range(0, u.size, _CHUNK):
        total += _basis_values(u[start : start + _CHUNK], degree, basis).sum(axis=0)
    return total / max(u.size, 1)


@lru_cache(maxsize=256)
def _ranges(degree: int, basis: str) -> tuple:
    ranges = []
    for j in range(1, degree + 2):
        if j % 2 == 1:
            ranges.append(2.0)  # odd function: from -1 at u=-1 to 1 at u=1
        elif basis == "monomial":
            ranges.append(1.0)  # x^j in [0, 1]
        else:
            critical = legendre.legroots(legendre.legder([0] * j + [1])).real
            candidates = np.concatenate([critical, [-1.0, 1.0]])
            minimum = legendre.legval(candidates, [0] * j + [1]).min()
            # round the range up by 1e-12 so floating error never lowers the sensitivity
            ranges.append(float(1.0 - minimum) + 1e-12)
    return tuple(ranges)


def moment_ranges(degree: int, basis: str = "monomial") -> np.ndarray:
    """Range r_j of each moment's basis function on [-1, 1] (j = 1..degree+1)."""
    return np.array(_ranges(degree, basis))


def moment_sensitivities(degree: int, n: int, basis: str = "monomial") -> tuple[float, float]:
    """``(l1, l2)`` sensitivity of the mean-moment vector under replacement of one of ``n`` entries (Lemma 6)."""
    ranges = moment_ranges(degree, basis)
    return float(ranges.sum() / n), float(np.sqrt(np.sum(ranges**2)) / n)


def legendre_coefficients(moments: np.ndarray, degree: int, basis: str = "monomial") -> np.ndarray:
    r"""Orthonormal-Legendre coefficients :math:`c_i=\langle F_n, e_i\rangle`, i = 0..degree, from (noisy) moments."""
    moments = np.asarray(moments, dtype=np.float64)
    if basis == "monomial":
        return theorem1_matrix(degree) @ (1.0 - moments)
    lam = np.concatenate([[1.0], moments])  # lambda_0 .. lambda_{m+1}
    inner = np.empty(degree + 1)
    inner[0] = 1.0 - lam[1]
    i = np.arange(1, degree + 1)
    inner[1:] = -(lam[i + 1] - lam[i - 1]) / (2 * i + 1)
    return inner * np.sqrt((2 * np.arange(degree + 1) + 1) / 2.0)


def evaluate_projection(coefficients: np.ndarray, u: np.ndarray) -> np.ndarray:
    r""":math:`\sum_i c_i e_i(u)` with :math:`e_i=\sqrt{(2i+1)/2}P_i` (Clenshaw recurrence, stable at any degree)."""
    degree = coefficients.size - 1
    return legendre.legval(u, coefficients * np.sqrt((2 * np.arange(degree + 1) + 1) / 2.0))
