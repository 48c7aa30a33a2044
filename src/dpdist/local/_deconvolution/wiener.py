r"""Wiener deconvolution in the frequency domain: DW and IIW (paper 001, sec. IV).

Paper 001 (Fang et al., IEEE S&P 2023).

The Wiener filter (eq. 16) is

.. math::

    W = \frac{H^*}{|H|^2 + P_n / P_f} = \frac{H^* P_f}{|H|^2 P_f + P_n},

written here in the second form so that :math:`P_f = 0` gives :math:`W = 0`
with no division by zero; where :math:`P_f = P_n = 0` (a bin with neither
signal nor noise) the gain is the plain inverse :math:`1/H`.  The estimate is
:math:`\tilde F = W G` (eq. 17).  The transfer spectrum of a pure protocol is
real and positive (see :mod:`.spectra`), so :math:`H^* = H`.

Algorithm 1 (IIW) iterates, from a starting spectrum :math:`\tilde P_f(0)`,

.. math::

    \tilde P_f(i) = |\tilde F(i-1)|^2 + \frac{P_n \tilde P_f(i-1)}{|H|^2 \tilde P_f(i-1) + P_n},
    \qquad \tilde F(i) = W(\tilde P_f(i))\, G .

(The paper's listing writes the left side of the first update as
:math:`\tilde F(i)`; eq. 22, the fixed-point analysis, shows it is the power
spectrum :math:`\tilde P_f(i)`.)  :math:`\tilde F(0)` with
:math:`\tilde P_f(0) = |G/H|^2` is the Direct Wiener (DW) estimate; IIW-G starts
from :math:`|G|^2`.

All arrays are half spectra (last axis of length ``d // 2 + 1``) and may carry
leading batch axes (used by AMRP).
"""

from __future__ import annotations

import numpy as np

from .spectra import parseval_weights

__all__ = ["iterative_wiener", "wiener_gain"]


def _guarded_ratio(numerator, denominator, fallback):
    """``numerator / denominator``, with ``fallback`` where the denominator is 0."""
    nonzero = denominator > 0
    return np.where(nonzero, numerator / np.where(nonzero, denominator, 1.0), fallback)


def wiener_gain(transfer, noise_power, signal_power) -> np.ndarray:
    """Wiener gain ``H P_f / (H^2 P_f + P_n)`` (eq. 16) for a real positive ``transfer``."""
    return _guarded_ratio(transfer * signal_power, transfer**2 * signal_power + noise_power, 1.0 / transfer)


def iterative_wiener(
    support_spectrum,
    transfer,
    noise_power,
    initial_signal_power,
    *,
    domain_size: int,
    iterations: int,
    tolerance: float | None = None,
    keep_path: bool = False,
) -> tuple[np.ndarray, np.ndarray, list[np.ndarray] | None]:
    r"""Algorithm 1 (IIW) of paper 001; ``iterations=0`` is Direct Wiener.

    Parameters
    ----------
    support_spectrum : complex ndarray (..., d // 2 + 1)
        :math:`G`, the half spectrum of the normalized support vector.
    transfer, noise_power : ndarray (d // 2 + 1,)
        :math:`H` and :math:`\tilde P_n`.
    initial_signal_power : ndarray (..., d // 2 + 1)
        :math:`\tilde P_f(0)`.
    domain_size : int
        ``d`` (for the Parseval weights of the convergence trace).
    iterations : int
        Number of corrections after the first (DW) filter.
    tolerance : float, optional
        Stop early once the relative change of the estimate,
        :math:`\|\tilde f(i) - \tilde f(i-1)\|_2 / \|\tilde f(i)\|_2`, is below it
        (in every batch row).  ``None`` runs all ``iterations`` (the paper's rule).
    keep_path : bool
        Also return every :math:`\tilde F(i)`, ``i = 0 .. iterations``.

    Returns
    -------
    spectrum : complex ndarray (..., d // 2 + 1)
        The last :math:`\tilde F(i)`.
    trace : ndarray (iterations_run, ...)
        Relative change of the estimate at each iteration.
    path : list of ndarrays or None
    """
    weights = parseval_weights(domain_size)
    transfer_power = transfer**2
    signal_power = initial_signal_power
    spectrum = wiener_gain(transfer, noise_power, signal_power) * support_spectrum
    path = [spectrum]
    changes = []
    for _ in range(iterations):
        correction = _guarded_ratio(noise_power * signal_power, transfer_power * signal_power + noise_power, 0.0)
        signal_power = spectrum.real**2 + spectrum.imag**2 + correction
        updated = wiener_gain(transfer, noise_power, signal_power) * support_spectrum
        difference = updated - spectrum
        change_sq = (difference.real**2 + difference.imag**2) @ weights
        norm_sq = (updated.real**2 + updated.imag**2) @ weights
        change = np.sqrt(_guarded_ratio(change_sq, norm_sq, 0.0))
        changes.append(change)
        spectrum = updated
        path.append(spectrum)
        if tolerance is not None and np.all(change < tolerance):
            break
    trace = np.asarray(changes, dtype=np.float64).reshape((len(changes),) + np.shape(support_spectrum)[:-1])
    return spectrum, trace, path if keep_path else None
