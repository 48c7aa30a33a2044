r"""Bernoulli thresholds on the :math:`2^{-53}` grid, rounded so that the realized ratio is within epsilon.

NumPy's ``Generator.random()`` returns :math:`U = k\,2^{-53}` with :math:`k` uniform in
:math:`[0, 2^{53})` (for every bit generator: PCG64, AES-CTR, MT19937, Philox, SFC64;
``tests/local/test_bernoulli.py`` checks it), so the draw ``U < t`` has probability

.. math::

    \Pr[U < t] = \lceil t\,2^{53} \rceil / 2^{53},

which exceeds :math:`t` unless :math:`t` is a multiple of :math:`2^{-53}`.  A randomizer that
keeps the true value when ``U < p`` with :math:`p` computed in floating point therefore
realizes a probability up to :math:`2^{-53}` above :math:`p`, and a likelihood ratio up to
about :math:`10^{-14}` above :math:`e^\varepsilon` (an audit of the randomizers found
such excesses in 42 of 126 cases).  The JavaScript client's Bernoulli draw is exact for any
double, so there the realized probability was the double itself, again computed in
floating point.

Here every threshold is a multiple of :math:`2^{-53}` (so ``U < t`` has probability
exactly :math:`t`), chosen in exact rational arithmetic as the *largest* grid value whose
ratio is at most :math:`e^\varepsilon`, against a rational lower bound of
:math:`e^\varepsilon`:

.. math::

    E_- = \mathrm{fl}(e^\varepsilon)\,(1 - 2^{-50}) \le e^\varepsilon,

valid because ``math.exp`` (glibc, and the JavaScript client's correctly rounded
``exp``) errs by less than one ulp, :math:`2^{-52}` relative.  The randomizers' channels
and estimators then use these realized values, so estimators stay unbiased and the
:math:`\varepsilon`-LDP claim holds for the probabilities the sampler really has.  The
cost is at most one grid step, :math:`2^{-53}`, of the kept probability, and a realized
:math:`\varepsilon` at most :math:`2^{-50}` below the stated one (relative to
:math:`e^\varepsilon`).

The JavaScript client (``clients/js/src/grid.js``) computes the same integers with
``BigInt``, so both sides draw with bit-identical thresholds.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from numpy.typing import DTypeLike

__all__ = [
    "GRID",
    "exp_lower",
    "grid_floor",
    "odds_probability",
    "mixture_keep",
    "keep_or_uniform",
    "realized",
]

#: the resolution of ``Generator.random()``: 2^53 equally likely values k 2^-53
GRID = 2**53
#: relative margin of :func:`exp_lower` (libm's exp errs by less than 2^-52)
_EXP_MARGIN = Fraction(2**50 - 1, 2**50)


def exp_lower(x: float) -> Fraction:
    """A rational lower bound of :math:`e^x`: ``math.exp(x)`` times :math:`1 - 2^{-50}`."""
    return Fraction(math.exp(x)) * _EXP_MARGIN


def grid_floor(value: Fraction) -> float:
    """The largest multiple of :math:`2^{-53}` at most ``value``, within ``[0, 1]`` (exact as a float)."""
    value = Fraction(value)
    k = value.numerator * GRID // value.denominator
    return min(max(k, 0), GRID) / GRID


def odds_probability(odds: Fraction) -> float:
    r"""The largest grid probability :math:`p = k 2^{-53}` with :math:`p/(1-p) \le` ``odds`` (``odds >= 0``)."""
    odds = Fraction(odds)
    return grid_floor(odds / (1 + odds))


def mixture_keep(epsilon: float, kept: Fraction | float | int, outputs: Fraction | float | int) -> float:
    r"""Keep probability :math:`\lambda` of "keep (uniform over ``kept`` outputs), else uniform over all ``outputs``".

    An output the input keeps has probability :math:`\lambda/s + (1-\lambda)/m` and any other
    :math:`(1-\lambda)/m` (:math:`s` = ``kept``, :math:`m` = ``outputs``, possibly measures of a
    continuous bump and domain), a ratio :math:`1 + \lambda m / (s(1-\lambda))`; it is at
    most :math:`e^\varepsilon` iff :math:`\lambda/(1-\lambda) \le (e^\varepsilon - 1)s/m`.
    GRR (:math:`s = 1, m = d`), OLH/FLH (:math:`m = g`), HR (:math:`s = b/2, m = K`) and the
    square wave are of this form.
    """
    return odds_probability((exp_lower(epsilon) - 1) * Fraction(kept) / Fraction(outputs))


def keep_or_uniform(
    values: np.ndarray, keep: float, outputs: int, rng: np.random.Generator, dtype: DTypeLike = np.int64
) -> np.ndarray:
    """Randomized response in its mixture form: each value kept w.p. ``keep``, else uniform on ``[0, outputs)``.

    ``keep`` is a grid value (:func:`mixture_keep`), so ``U < keep`` realizes it exactly; the uniform
    values are drawn as ``dtype`` (the reports' own dtype), after the uniforms of the keep decisions.
    """
    kept = rng.random(values.size) < keep
    return np.where(kept, values, rng.integers(0, outputs, size=values.size, dtype=dtype))


def realized(threshold) -> np.ndarray | float:
    """The probability of ``Generator.random() < threshold``: :math:`\\lceil t 2^{53}\\rceil 2^{-53}` (exact)."""
    t = np.clip(np.asarray(threshold, dtype=np.float64), 0.0, 1.0)
    out = np.ceil(t * float(GRID)) / float(GRID)
    return float(out) if out.ndim == 0 else out
