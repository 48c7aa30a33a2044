r"""Wave shapes of the general wave mechanism (paper 003, Def. 5.1) and the MI choice of ``b``.

Paper 003 (Li, Wang, Lopuhaä-Zwakenberg, Li, Škorić,
Li, "Estimating Numerical Distributions under Local Differential Privacy",
SIGMOD 2020), sec. 5.1-5.3.

A general wave (GW) with half-width :math:`b` reports, for an input
:math:`v \in [0, 1]`, an output :math:`\tilde v \in [-b, 1 + b]` with density
:math:`W(\tilde v - v)`, where :math:`W = q` outside :math:`[-b, b]`,
:math:`q \le W \le e^\varepsilon q`, and :math:`\int_{-b}^{b} W = 1 - q`.
We write every wave as a mixture

.. math::

    W(z) = q + \lambda\, g(z), \qquad \lambda = 1 - q (1 + 2b),

of the uniform density on the output domain (weight :math:`q(1+2b)`) and a
*bump* density :math:`g` on :math:`[-b, b]`.  The bumps here are trapezoids:
the density of :math:`U_1 + U_2` with :math:`U_k` uniform on
:math:`[-a_k, a_k]`, :math:`a_1 = b(1+r)/2`, :math:`a_2 = b(1-r)/2`, whose top
side has length :math:`2rb` and bottom side :math:`2b`
(top/bottom ratio :math:`r`).  :math:`r = 1` is the square wave (SW, eq. 3),
:math:`r = 0` the triangle.  The peak of :math:`g` is :math:`1/(b(1+r))`;
choosing it so that :math:`\max W = e^\varepsilon q` (the largest wave that
Def. 5.1 allows, as SW does in Lemma 5.5) gives
:math:`\lambda = (e^\varepsilon - 1) q\, b (1 + r)` and, from
:math:`q(1 + 2b) + \lambda = 1`,

.. math::

    q = \frac{1}{1 + 2b + (e^\varepsilon - 1)\, b (1 + r)},

which for :math:`r = 1` is the paper's :math:`q = 1/(2be^\varepsilon + 1)`,
:math:`p = e^\varepsilon q`.  All constants are computed with
:math:`e^{-\varepsilon}` so that a large :math:`\varepsilon` cannot overflow.

The two functions the transition matrix needs are the CDF :math:`G` of the
bump and its integral :math:`K(x) = \int_{-\infty}^x G`.  With the truncated
powers :math:`T_k(y) = \max(y, 0)^k / k!`,
:math:`g = \frac{1}{4 a_1 a_2} \sum_{s_1, s_2 = \pm 1} s_1 s_2\, T_1(x + s_1 a_1 + s_2 a_2)`
(a convolution of two differences of steps), so :math:`G` and :math:`K` are
the same sums with :math:`T_2` and :math:`T_3` (for :math:`a_2 = 0`:
:math:`\frac{1}{2a_1}\sum_s s\, T_{k}(x + s a_1)` with :math:`k = 1, 2`).
They are evaluated only inside the support :math:`[-b, b]`; outside,
:math:`G \in \{0, 1\}` and :math:`K(x) \in \{0, x\}` exactly (the bump is
symmetric, so its mean is 0), which keeps the differences of :math:`K` free of
cancellation far from the bump.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .._bernoulli import mixture_keep

#: relative allowance for the float64 sampling of the bump (see WaveShape)
_FLOAT_MARGIN = Fraction(2**30 - 1, 2**30)

__all__ = ["WaveShape", "mutual_information_b"]


def mutual_information_b(epsilon: float) -> float:
    r"""Half-width :math:`b` maximizing the upper bound on :math:`I(V, \tilde V)` (paper 003, sec. 5.3).

    .. math::

        b = \frac{\varepsilon e^\varepsilon - e^\varepsilon + 1}{2 e^\varepsilon (e^\varepsilon - 1 - \varepsilon)}

    Derivation (checked): with :math:`E = e^\varepsilon` and :math:`u = 2b`, the
    derivative of :math:`\log\frac{u+1}{uE+1} + \frac{u\varepsilon E}{uE+1}`
    vanishes iff :math:`u(E - E^2 + \varepsilon E) + (1 - E + \varepsilon E) = 0`.
    Numerator and denominator both behave as :math:`\varepsilon^2/2` near 0, so
    for :math:`\varepsilon < 1` they are summed as the series
    :math:`\sum_{k\ge2} \varepsilon^k (k-1)/k!` and :math:`\sum_{k\ge2}\varepsilon^k/k!`
    (then :math:`b \to 1/2` as :math:`\varepsilon \to 0`); for large
    :math:`\varepsilon` the form :math:`(\varepsilon - 1 + e^{-\varepsilon}) / (2(e^\varepsilon - 1 - \varepsilon))`
    avoids overflow in the numerator (:math:`b \to 0`).
    """
    if epsilon < 1.0:
        numerator = denominator = 0.0
        term = 1.0  # epsilon^k / k!
        for k in range(1, 40):
            term *= epsilon / k
            if k >= 2:
                numerator += (k - 1) * term
                denominator += term
        return numerator / (2.0 * math.exp(epsilon) * denominator)
    if epsilon > 700.0:
        return 0.0
    return (epsilon - 1.0 + math.exp(-epsilon)) / (2.0 * (math.expm1(epsilon) - epsilon))


def _truncated_power(y: np.ndarray, k: int) -> np.ndarray:
    positive = np.maximum(y, 0.0)
    return positive**k / math.factorial(k)


@dataclass(frozen=True)
class WaveShape:
    r"""A trapezoid wave of half-width ``b`` and top/bottom ratio ``ratio`` at budget ``epsilon``.

    Attributes
    ----------
    q : float
        Density of the wave far from the input (:math:`W = q` for :math:`|z| > b`).
    weight : float
        :math:`\lambda`, the probability of drawing from the bump :math:`g`.
    half_widths : (float, float)
        :math:`(a_1, a_2)`, half-widths of the two uniforms whose sum has density :math:`g`.
    """

    epsilon: float
    b: float
    ratio: float = 1.0
    # derived in __post_init__
    q: float = field(init=False, repr=False, compare=False)
    weight: float = field(init=False, repr=False, compare=False)
    half_widths: tuple[float, float] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        b, r = self.b, self.ratio
        half_widths = (b * (1.0 + r) / 2.0, b * (1.0 - r) / 2.0)
        # lambda is drawn as U < lambda with U on the 2^-53 grid: the largest grid value whose density
        # ratio 1 + lambda (1 + 2b) / (2 a1 (1 - lambda)) (peak of g: 1/(2 a1)) is at most e^eps
        # (dpdist.local._bernoulli), so the ratio holds for the probability really drawn.  The bump's
        # bucket masses, drawn in float64 (OutputGrid.sample), exceed the exact ones by less than
        # B * 2^-50 relative (B <= 4096 buckets); the factor 1 - 2^-30 on the peak's width covers that.
        kept = 2 * Fraction(half_widths[0]) * _FLOAT_MARGIN
        weight = mixture_keep(self.epsilon, kept, 1 + 2 * Fraction(b))
        object.__setattr__(self, "q", (1.0 - weight) / (1.0 + 2.0 * b))
        object.__setattr__(self, "weight", weight)
        object.__setattr__(self, "half_widths", half_widths)

    @property
    def is_square(self) -> bool:
        return self.half_widths[1] == 0.0

    @property
    def peak(self) -> float:
        r""":math:`\max W = q + \lambda / (b(1+r))`, which equals :math:`e^\varepsilon q`."""
        return self.q + self.weight / (2.0 * self.half_widths[0])

    def density(self, z) -> np.ndarray:
        """The wave :math:`W(z)` (for plots and checks)."""
        return self.q + self.weight * self._bump(np.asarray(z, dtype=np.float64), order=1)

    def bump_cdf(self, x) -> np.ndarray:
        """:math:`G(x)`, the CDF of the bump."""
        x = np.asarray(x, dtype=np.float64)
        return np.where(x >= self.b, 1.0, self._bump(x, order=2))

    def bump_cdf_integral(self, x) -> np.ndarray:
        r""":math:`K(x) = \int_{-\infty}^x G`; equals 0 below :math:`-b` and :math:`x` above :math:`b`."""
        x = np.asarray(x, dtype=np.float64)
        return np.where(x >= self.b, x, self._bump(x, order=3))

    def _bump(self, x: np.ndarray, order: int) -> np.ndarray:
        """Truncated-power sum of ``order`` (1: density, 2: CDF, 3: CDF integral) inside ``[-b, b]``."""
        a1, a2 = self.half_widths
        inside = np.clip(x, -self.b, self.b)
        if a2 == 0.0:
            total = _truncated_power(inside + a1, order - 1) - _truncated_power(inside - a1, order - 1)
            if order == 1:  # T_0 is the unit step; at the plateau edges it is 1 on the closed interval
                total = ((inside >= -a1) & (inside <= a1)).astype(np.float64)
            total = total / (2.0 * a1)
        else:
            total = (
                _truncated_power(inside + a1 + a2, order)
                - _truncated_power(inside + a1 - a2, order)
                - _truncated_power(inside - a1 + a2, order)
                + _truncated_power(inside - a1 - a2, order)
            ) / (4.0 * a1 * a2)
        return np.where(np.abs(x) > self.b, 0.0, total) if order == 1 else np.where(x <= -self.b, 0.0, total)

    def sample_offsets(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` draws from the bump :math:`g` (a sum of one or two uniforms)."""
        a1, a2 = self.half_widths
        offsets = a1 * (2.0 * rng.random(size) - 1.0)
        if a2 > 0.0:
            offsets += a2 * (2.0 * rng.random(size) - 1.0)
        return offsets
