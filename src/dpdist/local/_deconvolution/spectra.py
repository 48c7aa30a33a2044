r"""Spectra of the convolution view :math:`g = f * h + n` of a pure protocol.

Paper 001 (Fang et al., IEEE S&P 2023), Theorem 1
(eq. 7), Theorem 3 (eqs. 19-20).

With :math:`g_j = C_j / n` the share of reports supporting item :math:`j`, the
transfer vector is :math:`h = [p^*, q^*, \dots, q^*]`, whose DFT is real:

.. math::

    H_0 = p^* + (d-1) q^*, \qquad H_k = p^* - q^* \quad (k \ne 0).

The noise :math:`n = g - f * h` has independent entries of variance
:math:`\sigma_j^2` (eq. 9) for protocols whose support bits are independent
(OUE, SUE), so :math:`E|N_k|^2 = \sum_j \sigma_j^2` (eq. 20) at every
frequency, exactly.
"""

from __future__ import annotations

import numpy as np

__all__ = ["half_length", "noise_power", "parseval_weights", "transfer_spectrum"]


def half_length(domain_size: int) -> int:
    """Length ``d // 2 + 1`` of the half spectrum of a real vector of length ``d``."""
    return domain_size // 2 + 1


def transfer_spectrum(domain_size: int, p_star: float, q_star: float) -> np.ndarray:
    r"""Half spectrum of :math:`h = [p^*, q^*, \dots, q^*]` (eq. 7), in closed form.

    The DFT of :math:`q^* \mathbf 1 + (p^* - q^*) e_0` is
    :math:`q^* d\,\delta_{k0} + (p^* - q^*)`: real and positive for :math:`p^* > q^*`.
    """
    transfer = np.full(half_length(domain_size), p_star - q_star, dtype=np.float64)
    transfer[0] = p_star + (domain_size - 1) * q_star
    return transfer


def noise_power(domain_size: int, p_star: float, q_star: float, n: int) -> float:
    r"""Expected noise power :math:`\sum_j \sigma_j^2` of Theorem 3 (eq. 20).

    .. math::

        \sum_{j=1}^d \sigma_j^2 = \frac{d q^*(1-q^*)}{n} + \frac{(p^*-q^*)(1-p^*-q^*)}{n},

    eq. 9 summed over the items with :math:`\sum_j f_j = 1`.
    """
    d = domain_size
    return (d * q_star * (1.0 - q_star) + (p_star - q_star) * (1.0 - p_star - q_star)) / n


def parseval_weights(domain_size: int) -> np.ndarray:
    r"""Weights :math:`w_k` with :math:`\|x\|_2^2 = \sum_k w_k |X_k|^2` over the half spectrum.

    :math:`w_0 = 1/d`, :math:`w_k = 2/d` for the bins that stand for a conjugate
    pair, and :math:`1/d` for the Nyquist bin when ``d`` is even.
    """
    weights = np.full(half_length(domain_size), 2.0 / domain_size)
    weights[0] = 1.0 / domain_size
    if domain_size % 2 == 0:
        weights[-1] = 1.0 / domain_size
    return weights
