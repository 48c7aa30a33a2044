r"""Floating-point outputs as the numbers they are: each one's binary exponent and the place of its lowest set bit.

A mechanism that adds textbook floating-point noise to its input (``x + numpy.random.laplace(scale)``) has
an output *support* that depends on the input: the sum is rounded to the doubles near it, and which doubles
can come out depends on :math:`x` (Mironov 2012: the "porous" Laplace, whose outputs near 0 reveal the input
exactly).  In the bits: for :math:`x = 1` every output in :math:`(0, 1)` is a multiple of :math:`2^{-53}`
(the sum was formed at the scale of 1), while the noise alone (:math:`x = 0`) reaches every double of its
binade, so an output of :math:`2^{-8}` whose lowest set bit is :math:`2^{-53}` or above is roughly 128 times
as likely under 1 as under 0.  Values cut into quantile bins never see this; two extra columns per float
output column do: the binary exponent :math:`e` (``frexp``) and the exponent of the lowest set bit,
:math:`e - 53 + \mathrm{tz}(m)` for the 53-bit significand :math:`m`.  Both are fixed functions of the output,
a post-processing, so the certificate stays valid (Dwork & Roth 2014, Proposition 2.1), and the audit stays a
black box: nothing about the sampler is assumed.  A mechanism whose outputs lie on a fixed grid (integers,
multiples of a power of two: dpdist's discrete samplers, snapping, Google's granular Laplace) has the same
bit columns for every input and gains nothing false from them.

References
----------
I. Mironov (2012). On significance of the least significant bits for differential privacy. ACM CCS 2012,
650-661.

J. Jin, E. McMurtry, B. I. P. Rubinstein, O. Ohrimenko (2022). Are we there yet? Timing and floating-point
attacks on differential privacy systems. IEEE S&P 2022.
"""

from __future__ import annotations

import numpy as np

__all__ = ["FLOAT_COLUMNS", "bit_columns"]

#: Float output columns (the first ones) that get their bit columns.
FLOAT_COLUMNS = 4
#: The lowest-set-bit exponent of 0 (below every double's).
ZERO_GRAIN = -1100


def bit_columns(values: np.ndarray) -> np.ndarray:
    """``(n, 2 k)`` for ``(n, k)`` float64 values: the k columns' binary exponents, then their lowest set bits' exponents."""
    values = np.ascontiguousarray(values, dtype=np.float64).reshape(len(values), -1)
    _, exponent = np.frexp(values)  # values = f 2^e with 0.5 <= |f| < 1 (e = 0 for 0)
    bits = values.view(np.uint64)
    biased = (bits >> np.uint64(52)) & np.uint64(0x7FF)
    significand = bits & np.uint64((1 << 52) - 1)
    significand = np.where(biased > 0, significand | np.uint64(1 << 52), significand)  # the implicit bit of normals
    lowest = significand & (~significand + np.uint64(1))  # the lowest set bit alone
    with np.errstate(divide="ignore"):
        trailing = np.log2(lowest.astype(np.float64))  # exact: a power of two
    # value = significand x 2^(biased - 1075) for normals, significand x 2^-1074 for subnormals
    scale = np.where(biased > 0, biased.astype(np.int64) - 1075, -1074)
    grain = np.where(significand > 0, scale + np.nan_to_num(trailing, neginf=0.0).astype(np.int64), ZERO_GRAIN)
    return np.concatenate([exponent, grain], axis=1).astype(np.int64)
