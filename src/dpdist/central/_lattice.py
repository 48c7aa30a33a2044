r"""The heap lattice of data with ties: the units the values are multiples of, released, and quantiles read on it.

Real amounts are heaped on round values (incomes at whole thousands, wages at whole dollars, ages and minutes in
whole numbers).  A tree's leaf, or a run of sub-leaves its refinement shares evenly (:mod:`dpdist.central._refine`),
knows its mass, not where it lies: read linearly, or as half an atom at each edge (:mod:`dpdist.central._atoms`), a
quantile whose rank falls in it lands between the values the data hold, up to the leaf's width or the spacing of
the heaps from the value it belongs to.  A tree deep enough to put every heap in a leaf of its own (python-dp's
trees of :math:`8^6` leaves) pays for the depth in noise; the lattice says where inside a leaf the mass can lie.

**Release** (:func:`release_lattice`).  The candidate units are public, from the bounds alone
(:func:`candidate_units`): :math:`10^k` and :math:`5\cdot 10^k` for the :data:`DECADES` powers of ten below half the
range, each dividing the next.  Each record's *class* is the coarsest candidate it is a multiple of (or none); the
counts of the classes are a histogram, one record in one class, so its :math:`\ell_1` sensitivity is 1 under
add/remove (2 under replacement), released with discrete Laplace noise at its share of the budget (integers: no bit
of the sampler's floats).

**Reading** (:func:`lattice_quantiles`, post-processing).  A class whose noisy count clears
:func:`dpdist.central._refine.significance` noise standard deviations for the classes searched (noise alone makes
:data:`~dpdist.central._refine.FALSE_FINDS` heaps in a release, in expectation: a union bound) has the share :math:`p_c` (its noisy count over the noisy total), the rest of the
records the continuous share :math:`p_0`.  A point of class :math:`c` is a multiple of :math:`u_c` that is not one
of the next coarser unit :math:`u_{c+1}`: :math:`\rho_c = (1 - u_c/u_{c+1})/u_c` of them per unit length (the
coarsest class: :math:`1/u_c`).  Where the data's density is :math:`f`, class :math:`c` holds :math:`p_c f` per
unit length in :math:`\rho_c` points, :math:`p_c f/\rho_c` each, and the rest :math:`p_0 f` spread evenly: inside a
segment of even released density :math:`[a, b)` of mass :math:`m` the points of the classes get
:math:`m\,w_c/W` each, :math:`w_c = p_c/\rho_c`, and the rest :math:`m\,p_0 (b - a)/W` linearly, with
:math:`W = \sum_c N_c w_c + p_0 (b - a)` (:math:`N_c` points of class :math:`c` in the segment).  A quantile whose
rank falls in the segment is read on that placement: on a heap where its rank lands on one, linearly between.  A
class with more than :data:`MOST_POINTS` points in a segment counts as continuous there (the same mass per unit
length, spread).  A segment holding no point keeps the tree's own reading, moved to the nearest heap on the same
side of the tree's reading where the continuous rest is certified below :data:`REST_AT_MOST` of the records (its
noisy sum plus two noise standard deviations): few records lie between two heaps then, so the data's CDF is about the
same at both places (the rank error stays) and the value is a heap's.  Without a heap nothing changes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._refine import significance
from .noise import laplace_mechanism

__all__ = ["DECADES", "MOST_POINTS", "REST_AT_MOST", "Lattice", "candidate_units", "unit_classes",
           "release_lattice", "lattice_quantiles", "even_segments"]

#: Powers of ten of the candidate units, the largest at most half the range: a value at most 10^7 units from 0, where
#: the test of a multiple (:func:`unit_classes`) lets a value of no lattice pass with probability below 10^-5.
DECADES = 7
#: Points of one class in a segment beyond which the class counts as continuous there.
MOST_POINTS = 4096
#: The continuous rest's share below which a quantile in a segment holding no heap is moved to the nearest heap.
REST_AT_MOST = 0.05


def candidate_units(bounds: tuple[float, float]) -> np.ndarray:
    """The public candidate units, finest first: :math:`10^k` and :math:`5\\cdot 10^k` up to half the range's width,
    :data:`DECADES` powers of ten of them (each divides the next)."""
    half = (bounds[1] - bounds[0]) / 2
    top = math.floor(math.log10(half))
    units = [mantissa * 10.0**k for k in range(top - DECADES + 1, top + 1) for mantissa in (1, 5)]
    return np.array([unit for unit in units if unit <= half])


def unit_classes(x: np.ndarray, units: np.ndarray) -> np.ndarray:
    """Each value's class: the index of the coarsest unit of ``units`` (finest first) it is a multiple of, or -1.

    A multiple up to the rounding of a division of doubles: :math:`|x/u - k| \le 10^{-12}\max(1, |x/u|)` (0.29 is
    28.999999999999996 hundredths); within :data:`DECADES` of the bounds' scale a value of no lattice passes with
    probability below :math:`10^{-5}`."""
    classes = np.full(x.size, -1, dtype=np.int64)
    for index, unit in enumerate(units):
        ratio = x / unit
        multiple = np.abs(ratio - np.round(ratio)) <= 1e-12 * np.maximum(1.0, np.abs(ratio))
        classes[multiple] = index  # a coarser unit, later, overwrites
    return classes


@dataclass(frozen=True)
class Lattice:
    """The released classes: the candidate ``units`` (finest first), their noisy ``counts`` and that of the values
    of no class (``rest``), and the noise's standard deviation (``noise_sd``)."""

    units: np.ndarray
    counts: np.ndarray
    rest: float
    noise_sd: float
    epsilon: float

    def heaps(self) -> tuple[np.ndarray, np.ndarray, float]:
        """``(units, shares, p_0)``: the units read as heaps (finest first), their shares and the continuous share.

        A class whose noisy count clears :func:`~dpdist.central._refine.significance` noise standard deviations
        (for as many counts as there are) is a heap.  The values of another class are multiples of every finer unit,
        so its count goes to the coarsest heap finer than it, or to the continuous rest when none is.  The counts are
        summed as released (their noise has mean 0) and clipped at 0 once summed.
        """
        heap = self.counts > significance(self.units.size + 1) * self.noise_sd
        if not np.any(heap):
            return np.zeros(0), np.zeros(0), 1.0
        owner = np.maximum.accumulate(np.where(heap, np.arange(heap.size), -1))  # the coarsest heap at or below
        merged = np.maximum(np.bincount(owner[owner >= 0], self.counts[owner >= 0], minlength=heap.size)[heap], 0.0)
        rest = max(float(self.counts[owner < 0].sum() + self.rest), 0.0)
        total = merged.sum() + rest
        return self.units[heap], merged / total, rest / total

    def all_on_heaps(self) -> bool:
        """Whether the continuous rest is certified below :data:`REST_AT_MOST` of the records: its noisy sum plus
        two standard deviations of its noise (a one-sided 97.7% bound) over the noisy total."""
        heap = self.counts > significance(self.units.size + 1) * self.noise_sd
        if not np.any(heap):
            return False
        owner = np.maximum.accumulate(np.where(heap, np.arange(heap.size), -1))
        alone = int(np.sum(owner < 0)) + 1  # the counts of no heap and the values of no class
        rest = float(self.counts[owner < 0].sum() + self.rest) + 2.0 * self.noise_sd * math.sqrt(alone)
        total = float(np.maximum(self.counts, 0.0).sum() + max(self.rest, 0.0))
        return total > 0 and rest <= REST_AT_MOST * total

    def point_weights(self) -> tuple[np.ndarray, np.ndarray]:
        """``(units, w_c)``: the heaps' units and :math:`w_c = p_c/\rho_c` (the module docstring), a point of
        class :math:`c` a multiple of :math:`u_c` that is not one of the next coarser heap's."""
        units, shares, _ = self.heaps()
        coarser = np.append(units[1:], np.inf)
        return units, shares * units / (1.0 - units / coarser)

    def details(self) -> dict:
        units, shares, rest = self.heaps()
        return {"epsilon": self.epsilon, "units": self.units.tolist(), "noisy_counts": self.counts.tolist(),
                "noisy_rest": self.rest, "heaps": {f"{unit:g}": round(float(share), 4)
                                                  for unit, share in zip(units, shares)},
                "continuous_share": round(float(rest), 4)}


def release_lattice(x: np.ndarray, bounds: tuple[float, float], epsilon: float, rng,
                    neighbouring: str = "add-remove") -> Lattice:
    """The noisy counts of the records' classes (module docstring): ``epsilon``-DP (sensitivity 1 under add/remove,
    2 under replacement)."""
    units = candidate_units(bounds)
    classes = unit_classes(np.asarray(x, dtype=np.float64), units)
    exact = np.bincount(classes + 1, minlength=units.size + 1).astype(np.float64)
    sensitivity = 2.0 if neighbouring == "replace" else 1.0
    noisy = np.round(laplace_mechanism(exact, sensitivity, epsilon, rng, integer_valued=True))
    return Lattice(units, noisy[1:], float(noisy[0]), math.sqrt(2.0) * sensitivity / epsilon, epsilon)


def even_segments(cells: np.ndarray, cumulative: np.ndarray) -> np.ndarray:
    """Indices into ``cells`` of the edges of the segments of even density: consecutive cells of the same density
    (a refinement's evenly shared run) are one segment."""
    widths, masses = np.diff(cells), np.diff(cumulative)
    density = np.divide(masses, widths, out=np.zeros(widths.size), where=widths > 0)
    scale = max(float(np.max(np.abs(density), initial=0.0)), 1e-300)
    breaks = np.flatnonzero(np.abs(np.diff(density)) > 1e-9 * scale) + 1
    return np.concatenate([[0], breaks, [cells.size - 1]])


def _points(low: float, high: float, units: np.ndarray, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """``(points, their weights, continuous weight per unit length)`` of the classes in ``[low, high)``; a class of
    more than :data:`MOST_POINTS` points there counts as continuous."""
    points, point_weights, spread = [], [], 0.0
    coarser = np.append(units[1:], np.inf)
    for unit, next_unit, weight in zip(units, coarser, weights):
        first, last = math.ceil(low / unit - 1e-9), math.ceil(high / unit - 1e-9) - 1
        if last - first + 1 > MOST_POINTS:
            spread += weight * (1.0 - unit / next_unit) / unit  # its share per unit length, p_c
            continue
        multiples = np.arange(first, last + 1, dtype=np.float64) * unit
        if math.isfinite(next_unit):
            ratio = multiples / next_unit
            multiples = multiples[np.abs(ratio - np.round(ratio)) > 1e-12 * np.maximum(1.0, np.abs(ratio))]
        points.append(multiples)
        point_weights.append(np.full(multiples.size, weight))
    if not points:
        return np.zeros(0), np.zeros(0), spread
    order = np.argsort(np.concatenate(points), kind="stable")
    return np.concatenate(points)[order], np.concatenate(point_weights)[order], spread


def _read(low: float, high: float, share: float, points: np.ndarray, weights: np.ndarray, spread: float,
          step: float) -> float:
    """The position in ``[low, high)`` below which ``share`` of the segment's mass lies, its mass on ``points``
    (``weights`` each) and ``spread`` per unit length between them.  Where it falls in a point's mass, the point
    itself if it falls in the upper half of that mass, else ``step`` below it: the side of the heap its rank is
    nearer to (the data's CDF at the point counts the heap whole)."""
    total = weights.sum() + spread * (high - low)
    target = share * total
    before = spread * (points - low) + np.concatenate([[0.0], np.cumsum(weights)[:-1]])  # weight below each point
    k = int(np.searchsorted(before, target, side="left"))  # first point at or above the target
    if k > 0 and before[k - 1] + weights[k - 1] >= target:  # the target falls in that point's mass
        upper = target - before[k - 1] >= weights[k - 1] / 2
        return float(points[k - 1]) + (step / 2 if upper else -step)
    start = low if k == 0 else float(points[k - 1])
    reached = 0.0 if k == 0 else before[k - 1] + weights[k - 1]
    return start + (target - reached) / spread if spread > 0 else start


def lattice_quantiles(cells: np.ndarray, cumulative: np.ndarray, q: np.ndarray, values: np.ndarray,
                      lattice: Lattice, step: float) -> np.ndarray:
    """The quantiles ``q`` read on the heap lattice inside the segment of even density where each falls (module
    docstring); ``values`` (the tree's own reading) where a segment holds no point or a quantile lies beyond the
    cells.  ``cells`` and ``cumulative`` are the released CDF's cells before the atom reading, ``step`` the grid the
    values are released on (a quantile on a heap is put a step below it or half a step above, so that the grid keeps
    it on its side of the heap)."""
    units, weights = lattice.point_weights()
    if not units.size:
        return values
    _, _, continuous = lattice.heaps()
    on_heaps = lattice.all_on_heaps()
    edges = even_segments(cells, cumulative)
    at = cumulative[edges]
    read = np.array(values, dtype=np.float64)
    for j, probability in enumerate(np.asarray(q, dtype=np.float64)):
        s = int(np.searchsorted(at, probability, side="left")) - 1  # F(a) < q <= F(b)
        if s < 0 or s >= edges.size - 1 or at[s + 1] <= at[s]:
            continue
        low, high = float(cells[edges[s]]), float(cells[edges[s + 1]])
        points, point_weights, spread = _points(low, high, units, weights)
        if points.size:
            read[j] = _read(low, high, (probability - at[s]) / (at[s + 1] - at[s]), points, point_weights,
                            spread + continuous, step)
        elif on_heaps:  # (nearly) all the data on heaps, none in this segment: the nearest heap, on the same side
            nearest = round(values[j] / units[0]) * units[0]  # every heap point is a multiple of the finest unit
            read[j] = nearest + (step / 2 if nearest <= values[j] else -step)
    return read
