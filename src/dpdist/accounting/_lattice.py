r"""A privacy loss distribution on a lattice, composed by repeated squaring, read off with its floating-point error carried.

A :class:`LatticeLoss` holds the law under :math:`P` of a privacy loss :math:`L` that takes values on the lattice
:math:`h\mathbb Z` (and :math:`+\infty`).  Independent losses add, so the law of a composition is a convolution:
:meth:`LatticeLoss.compose` computes the :math:`T`-fold one by repeated squaring (as Koskela, Jälkö & Honkela,
AISTATS 2020, by FFT), and :math:`\delta(\varepsilon) = \mathbb E[(1 - e^{\varepsilon - L})_+] + P(L = \infty)` is
read off exactly for the discrete law.  Pessimistic steps only: mass in a far upper tail is moved to :math:`+\infty`,
mass in a far lower tail up to the lowest loss kept (a tilted law's far tails are dropped and counted as error).

**Floating point.**  Convolutions of up to :math:`3 \cdot 10^7` products are summed directly (all terms :math:`\ge
0`, so each mass has a relative error below :math:`m u`, Higham, *Accuracy and Stability of Numerical Algorithms*,
2nd ed., sec. 4.2), larger ones by FFT with an absolute error bounded by Higham's Thm. 24.2 (times 10); both are
carried and allowed for in every :math:`\delta` read off, so a number read off is never below the exact one of the
discrete law.

**Tilting.**  An FFT's error is absolute, of the order of :math:`u` times the largest mass, while
:math:`\delta(\varepsilon)` at a small :math:`\delta` is a sum over the far upper tail.  A law is therefore kept
*tilted*: ``mass[j]`` stands for the probability :math:`m_j e^{c - \lambda L_j}` (:math:`\lambda \ge 0` the
``tilt``, :math:`c` the ``scale``).  Tilting commutes with convolution (:math:`(a e^{\lambda L}) * (b e^{\lambda L})
= (a * b) e^{\lambda L}`), so the composition is computed on the tilted masses, whose bulk lies where the tilt puts
it: at the :math:`\varepsilon` asked for, where the masses are read (the exponential change of measure of
large-deviation theory; Cramér 1938).  An absolute error :math:`e` on the tilted masses is at most :math:`e\,
e^{c - \lambda\varepsilon}` on the true masses above :math:`\varepsilon`, which :meth:`LatticeLoss.delta` adds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["LatticeLoss", "fft_error"]

#: convolutions of at most this many products are summed directly (entrywise relative error), larger ones by FFT
DIRECT_WORK = 3 * 10**7
#: distributions longer than this are truncated after each convolution
TRUNCATE_ABOVE = 4096
UNIT_ROUNDOFF = 2.0**-53


@dataclass(frozen=True)
class LatticeLoss:
    r"""A privacy loss distribution on the lattice ``step * k``, ``k = offset .. offset + mass.size - 1``.

    ``mass[j]`` stands for the probability under :math:`P` that :math:`L = L_j = (offset + j)\, step`, times
    :math:`e^{\lambda L_j - c}` (``tilt`` :math:`\lambda \ge 0`, ``scale`` :math:`c`; both 0: the probability itself);
    ``infinity``: the probability that :math:`L = +\infty` (never tilted).  Floating point: each computed mass (and
    ``infinity``) is within a factor ``1 +- relative`` of the exact one, up to an added error of total size at most
    ``allowance`` on the (tilted) masses; :meth:`delta` accounts for both.
    """

    step: float
    offset: int
    mass: np.ndarray
    infinity: float
    relative: float = 0.0
    allowance: float = 0.0
    tilt: float = 0.0
    scale: float = 0.0

    @classmethod
    def tilted(cls, step: float, offset: int, mass: np.ndarray, infinity: float, tilt: float) -> "LatticeLoss":
        """The law of the probabilities ``mass`` (as :class:`LatticeLoss` reads them untilted), kept tilted by ``tilt``
        (module docstring), its tilted masses summing to one."""
        mass = np.asarray(mass, dtype=np.float64)
        if tilt == 0.0 or not mass.any():
            return cls(step, offset, mass, infinity)
        with np.errstate(divide="ignore"):
            logs = np.log(mass) + tilt * step * (offset + np.arange(mass.size))
        top = float(logs.max())
        weights = np.exp(logs - top)
        total = float(weights.sum())
        scale = top + math.log(total)
        return cls(step, offset, weights / total, infinity, 8 * UNIT_ROUNDOFF, 0.0, tilt, scale)

    def losses(self) -> np.ndarray:
        return (self.offset + np.arange(self.mass.size)) * self.step

    def probabilities(self, losses: np.ndarray, mass: np.ndarray) -> np.ndarray:
        """The probabilities that ``mass`` (a slice of :attr:`mass` at ``losses``) stands for (``inf`` past overflow)."""
        if self.tilt == 0.0 and self.scale == 0.0:
            return mass
        with np.errstate(divide="ignore", over="ignore"):
            return np.exp(np.log(mass) + self.scale - self.tilt * losses)

    def _raw(self, epsilon: float, losses: np.ndarray | None = None, masses: np.ndarray | None = None) -> float:
        """The masses' hockey-stick sum above ``epsilon`` (``losses`` and their probabilities, when computed already)."""
        losses = self.losses() if losses is None else losses
        masses = self.probabilities(losses, self.mass) if masses is None else masses
        first = int(np.searchsorted(losses, epsilon, side="right"))
        return float(np.dot(masses[first:], -np.expm1(epsilon - losses[first:])))

    def _error(self, epsilon: float) -> float:
        """The bound on what ``allowance`` may add to the true masses above ``epsilon`` (module docstring)."""
        if not self.allowance:
            return 0.0
        exponent = self.scale - self.tilt * epsilon
        return math.inf if exponent > 700 else self.allowance * math.exp(exponent)

    def delta(self, epsilon: float, losses: np.ndarray | None = None, masses: np.ndarray | None = None) -> float:
        r"""An upper bound on :math:`\mathbb E_P[(1 - e^{\varepsilon - L})_+] + P(L = +\infty)` for the exact masses."""
        return (self._raw(epsilon, losses, masses) + self.infinity) / (1.0 - self.relative) + self._error(epsilon)

    def epsilon(self, delta: float) -> float:
        """The smallest ``epsilon >= 0`` with :meth:`delta` at most ``delta`` (``inf`` if none)."""
        if self.delta(0.0) <= delta:
            return 0.0
        floor = self.infinity / (1.0 - self.relative)  # delta(epsilon) as epsilon grows past every finite loss
        if floor + (0.0 if self.tilt > 0 else self.allowance) >= delta:
            return math.inf
        losses = self.losses()
        masses = self.probabilities(losses, self.mass)
        first = int(np.searchsorted(losses, 0.0))  # the first loss >= 0
        if first >= losses.size or self.delta(float(losses[-1]), losses, masses) > delta:  # only the allowance's bound is left
            return max(float(losses[-1]) if losses.size else 0.0,
                       (self.scale - math.log((delta - floor) / self.allowance)) / self.tilt)
        low, high = first - 1, losses.size - 1  # delta(0) > delta >= delta(largest loss)
        while high - low > 1:  # delta(losses[low]) > delta >= delta(losses[high]) (losses[first - 1] read as 0)
            middle = (low + high) // 2
            if self.delta(float(losses[middle]), losses, masses) <= delta:
                high = middle
            else:
                low = middle
        # on (start, losses[high]] the losses above epsilon are those from index high on: _raw(epsilon) = S - e^epsilon R,
        # solved exactly with the allowance's bound at start (the largest it takes there)
        start = float(losses[high - 1]) if high > first else 0.0
        budget = (delta - self._error(start)) * (1.0 - self.relative) - self.infinity
        tail = slice(high, None)
        upper = float(masses[tail].sum())
        scaled = float(np.dot(masses[tail], np.exp(-(losses[tail] - losses[high]))))  # R e^{losses[high]}
        if scaled <= 0 or upper <= budget or budget <= 0:
            return float(losses[high]) if budget <= 0 else start
        solved = float(losses[high]) + math.log((upper - budget) / scaled)
        return min(max(solved, start), float(losses[high]))

    def compose(self, times: int, truncation: float) -> "LatticeLoss":
        """The loss distribution of ``times`` independent copies, by repeated squaring; the far tails' truncations
        move at most ``truncation`` of (tilted) mass in all.

        A convolution that stands for ``k`` of the copies may move ``truncation / 2 * k / times / levels`` of each far
        tail (``levels``: the bits of ``times``); it enters the result at most ``2 * times / k`` times.
        """
        levels = times.bit_length()
        result: LatticeLoss | None = None
        power, remaining, copies, done = self, times, 1, 0
        while True:
            if remaining & 1:
                done += copies
                result = power if result is None else convolve(result, power, truncation / 2 * done / times / levels)
            remaining >>= 1
            if not remaining:
                break
            copies *= 2
            power = convolve(power, power, truncation / 2 * copies / times / levels)
        assert result is not None  # times >= 1
        return result


def fft_error(first: np.ndarray, second: np.ndarray, length: int) -> float:
    r"""A bound on the l1 error of the FFT convolution of ``first`` and ``second`` (transform length ``length``).

    Higham (2002), Thm. 24.2: a computed length-N FFT has relative 2-norm error at most about
    :math:`\log_2 N\, \eta`, :math:`\eta \approx 8u` with accurate twiddle factors; the two forward
    transforms, the product and the inverse give :math:`\|\Delta c\|_2 \lesssim 3 \log_2 N\, \eta\,
    (\|a\|_2 \|b\|_1 + \|a\|_1 \|b\|_2)`, and :math:`\|\cdot\|_1 \le \sqrt N \|\cdot\|_2`.  Times 10.
    """
    norms = float(np.linalg.norm(first) * second.sum() + first.sum() * np.linalg.norm(second))
    return 10.0 * math.sqrt(length) * 3 * math.log2(max(length, 2)) * 8 * UNIT_ROUNDOFF * norms


def _fast_length(size: int) -> int:
    """The smallest ``2^a 3^b 5^c`` at least ``size`` (a length NumPy's FFT takes fast; a power of two may be 2x it)."""
    best = 1 << (size - 1).bit_length()
    fives = 1
    while fives < best:
        threes = fives
        while threes < best:
            length = threes << max(0, (size - 1) // threes).bit_length()
            best = min(best, length)
            threes *= 3
        fives *= 5
    return best


def convolve(first: LatticeLoss, second: LatticeLoss, budget: float) -> LatticeLoss:
    """The loss distribution of the sum of independent losses with laws ``first`` and ``second`` (one step, one tilt).

    Directly summed (every term >= 0: each entry within a factor ``1 +- m u / (1 - m u)`` of the exact
    convolution of the computed inputs, ``m`` the shorter length; Higham 2002, sec. 4.2) up to
    ``DIRECT_WORK`` products, by FFT beyond (an absolute error, :func:`fft_error`).
    """
    shorter = min(first.mass.size, second.mass.size)
    relative = (1 + first.relative) * (1 + second.relative) - 1
    allowance = (first.allowance * max(1.0, float(second.mass.sum())) + second.allowance * max(1.0, float(first.mass.sum()))
                 + first.allowance * second.allowance) * (1 + relative)
    noise = 0.0
    if first.mass.size * second.mass.size <= DIRECT_WORK:
        mass = np.convolve(first.mass, second.mass)
        terms = (shorter + 2) * UNIT_ROUNDOFF  # the products, the sum, and the infinity mass below
        relative = (1 + relative) * (1 + terms / (1 - terms)) - 1
    else:
        size = first.mass.size + second.mass.size - 1
        length = _fast_length(size)
        transform = np.fft.rfft(first.mass, length)
        other = transform if second is first else np.fft.rfft(second.mass, length)  # a square: one transform
        mass = np.fft.irfft(transform * other, length)[:size]
        mass = np.maximum(mass, 0.0)  # a negative entry is rounding: clipping it moves it toward the truth
        noise = fft_error(first.mass, second.mass, length) * (1 + relative)
        allowance += noise
    infinity = first.infinity + second.infinity - first.infinity * second.infinity
    joined = LatticeLoss(first.step, first.offset + second.offset, mass, infinity, relative, allowance, first.tilt,
                         first.scale + second.scale)
    # a far tail's computed mass is FFT noise of about this convolution's error: the budget is raised to it
    return truncated(joined, max(budget, noise)) if mass.size > TRUNCATE_ABOVE else joined


def truncated(law: LatticeLoss, budget: float) -> LatticeLoss:
    """``law`` with at most ``budget`` of each far tail's (tilted) mass taken off: untilted, the upper tail to +infinity
    and the lower one up to the lowest loss kept (both only raise the losses: pessimistic); tilted, both dropped into
    the allowance (a dropped tilted mass :math:`m` at any :math:`L > \\varepsilon` had a probability of at most
    :math:`m e^{c - \\lambda\\varepsilon}`, which :meth:`LatticeLoss.delta` adds)."""
    mass = law.mass
    upper = np.cumsum(mass[::-1])  # upper[j]: the mass of the top j + 1 entries
    top = int(np.searchsorted(upper, budget, side="right"))  # that many entries hold at most budget
    lower = np.cumsum(mass)
    bottom = int(np.searchsorted(lower, budget, side="right"))
    if top + bottom >= mass.size:
        return law
    kept = mass[bottom : mass.size - top].copy()
    infinity, allowance = law.infinity, law.allowance
    moved_up, moved_down = float(upper[top - 1]) if top else 0.0, float(lower[bottom - 1]) if bottom else 0.0
    if law.tilt == 0.0:
        infinity = min(1.0, infinity + moved_up)
        kept[0] += moved_down
    else:
        allowance += moved_up + moved_down
    return LatticeLoss(law.step, law.offset + bottom, kept, infinity, law.relative, allowance, law.tilt, law.scale)
