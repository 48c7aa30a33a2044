"""Shapes of a curve over a swept parameter: :class:`Decreasing` (the error falls as x grows) and
:class:`MinimumWithin` (the lowest error lies in a range of x, given or centred on the minimizer of
another metric, e.g. a bound's best level)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .._claims import (
    ALPHA, EFFECT, INCONCLUSIVE, Evidence, comparison_power, conclude, describe_setting, holm_rejected,
    minimum_in_p_values, repeats_of, welch_p_values,
)
from .._table import ResultsTable
from ._rows import curves

__all__ = ["Decreasing", "MinimumWithin"]


@dataclass(frozen=True)
class Decreasing:
    """The mean of ``method`` decreases as ``x`` grows, on every curve.

    On the one verdict rule (:func:`~dpdist.experiments.decide`, level ``alpha``): its
    ``p_against`` are every step between neighbouring points and every curve's
    last-above-first comparison (one-sided Welch t), so it does not hold when Holm finds a
    significant rise; its ``p_for`` are, per curve, the p of "last below first", set to 1 on a
    curve with a rise Holm rejects, so it holds when on every curve the last point is
    significantly below the first and no rise is significant (an intersection-union
    test); inconclusive otherwise.  A false "does not hold" on curves that never rise has
    probability at most ``alpha``; so has a false "holds" on a curve that does not fall.
    """

    method: str
    metric: str | tuple
    x: str
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA
    effect: float = EFFECT

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        found = curves(table, self.method, self.metric, self.x, self.where)
        if not found:
            return INCONCLUSIVE, f"no curve of {self.method!r} over {self.x!r}"
        falls, rises, owner, notes = [], [], [], []
        for curve, (setting, points) in enumerate(found.items()):
            (x0, first), (x1, last) = points[0], points[-1]
            falls.append(welch_p_values(last, first)[1])  # last below first
            steps = [(a, b, welch_p_values(ra, rb)[1]) for (a, ra), (b, rb) in zip(points, points[1:])]
            rises += [p for _, _, p in steps] + [welch_p_values(first, last)[1]]  # b above a; last above first
            owner += [curve] * (len(steps) + 1)
            steepest = min(steps, key=lambda step: step[2])
            notes.append(f"{describe_setting(setting)}: {first['mean']:.3g} at {self.x}={x0:g} -> {last['mean']:.3g} "
                         f"at {x1:g} (most significant rise {steepest[0]:g}->{steepest[1]:g}, p = {steepest[2]:.2g})")
        rejected = holm_rejected(rises, self.alpha)
        for index in rejected:  # a curve that rises significantly somewhere does not decrease
            falls[owner[index]] = 1.0
        agree = sum(points[-1][1]["mean"] < points[0][1]["mean"] for points in found.values())
        text = (f"significantly decreasing with no significant rise (one-sided alpha {self.alpha:g}) on "
                f"{sum(p < self.alpha for p in falls)} of {len(found)} curves, {len(rejected)} significant rise(s) "
                f"(Holm over {len(rises)} comparisons); " + "; ".join(notes[:4]))
        powers = [comparison_power(points[-1][1], points[0][1], self.effect) for points in found.values()]
        return conclude(Evidence(tuple(falls), tuple(rises), self.alpha, None, 1, agree, len(found),
                                 tuple(p[0] for p in powers), tuple(p[1] for p in powers), 1,
                                 repeats_of(*(r for points in found.values() for _, r in points)), self.effect), text)


@dataclass(frozen=True)
class MinimumWithin:
    """The mean of ``method`` over ``x`` is smallest at an ``x`` in ``[low, high]``, on every curve.

    The range is given (``low``, ``high``) or, with ``near`` (a metric of the same method, e.g. a
    computed bound), placed at the ``x`` that minimizes ``near``'s curve in the same setting:
    ``[x_near - tolerance, x_near + tolerance]``, or ``[x_near + offsets[0], x_near + offsets[1]]``
    (e.g. ``offsets=(-inf, -2)``: "the best J is well below the bound's J", at least 2 below).  Per curve, :func:`~dpdist.experiments.minimum_in_p_values`
    with the points in the range as ``inside`` and the others as ``outside`` gives ``p_for`` (some
    point in the range is significantly below every point outside it, by Welch's one-sided t) and
    ``p_against`` (some point outside is significantly below every point in the range); with
    ``rise_after`` and the curve's last point in the range, that point is also an "outside" rival
    of the others ("first decreases, then increases": the error must rise again).
    :func:`~dpdist.experiments.decide` gives the verdict at family-wise level ``alpha``: holds when
    every curve is significant, does not hold when Holm finds a curve whose minimum is
    significantly outside the range.  The power compares the best point inside with the best outside,
    at the levels the test uses: alpha divided by the number of points inside (for) or outside (against),
    the Bonferroni factors of :func:`~dpdist.experiments.minimum_in_p_values` (without them the power of
    a wide range, e.g. ``offsets=(-inf, -2)``, is overstated).
    """

    method: str
    metric: str | tuple
    x: str
    low: float = -math.inf
    high: float = math.inf
    near: str | None = None
    tolerance: float = 1.0
    rise_after: bool = False
    where: dict = field(default_factory=dict)
    alpha: float = ALPHA
    effect: float = EFFECT
    offsets: tuple | None = None

    def _ranges(self, table: ResultsTable, settings) -> dict:
        """``{setting: (low, high)}``: the given range, or the one around ``near``'s minimizer."""
        if self.near is None:
            return {setting: (self.low, self.high) for setting in settings}
        centres = {}
        for setting, points in curves(table, self.method, self.near, self.x, self.where).items():
            centres[tuple(item for item in setting if item[0] != "metric")] = min(points, key=lambda p: p[1]["mean"])[0]
        out = {}
        for setting in settings:
            centre = centres.get(tuple(item for item in setting if item[0] != "metric"))
            if centre is not None:
                below, above = self.offsets if self.offsets is not None else (-self.tolerance, self.tolerance)
                out[setting] = (centre + below, centre + above)
        return out

    def __call__(self, table: ResultsTable) -> tuple[str, str]:
        found = curves(table, self.method, self.metric, self.x, self.where)
        ranges = self._ranges(table, found)
        if not ranges:
            return INCONCLUSIVE, f"no curve of {self.method!r} over {self.x!r}" + (
                f" with a curve of {self.near!r}" if self.near else "")
        p_for, p_against, agree, notes, powers, counts = [], [], 0, [], [], []
        factors: list[tuple[int, int]] = []  # the Bonferroni factors in p_for / p_against per curve
        for setting, (low, high) in ranges.items():
            points = found[setting]
            best_x, best = min(points, key=lambda item: item[1]["mean"])
            inside = [r for xv, r in points if low <= xv <= high]
            outside = [r for xv, r in points if not low <= xv <= high]
            up, down = minimum_in_p_values(inside, outside)
            last_x, last = points[-1]
            if self.rise_after and low <= last_x <= high:
                up = max(up, minimum_in_p_values([r for r in inside if r is not last], [last, *outside])[0])
            p_for.append(up)
            p_against.append(down)
            if inside and outside:
                powers.append(comparison_power(min(inside, key=lambda r: r["mean"]),
                                               min(outside, key=lambda r: r["mean"]), self.effect))
                factors.append((len(inside), len(outside)))
            counts += [r.get("count") for _, r in points]
            agree += low <= best_x <= high
            notes.append(f"{describe_setting(setting)}: min {best['mean']:.3g} at {self.x}={best_x:g}, range "
                         f"[{low:g}, {high:g}] (p for {up:.2g}, against {down:.2g})")
        rejected = holm_rejected(p_against, self.alpha)
        if self.near is None:
            where = f"[{self.low:g}, {self.high:g}]"
        elif self.offsets is not None:
            where = f"[{self.near}'s best {self.offsets[0]:+g}, {self.near}'s best {self.offsets[1]:+g}]"
        else:
            where = f"{self.near}'s best +- {self.tolerance:g}"
        text = (f"minimum in {self.x} in {where} significantly (Welch t, one-sided alpha {self.alpha:g}) on "
                f"{sum(p < self.alpha for p in p_for)} of {len(p_for)} curves, significantly outside (Holm) on "
                f"{len(rejected)}; " + "; ".join(notes[:6]))
        complete = len(powers) == len(p_for)
        return conclude(Evidence(tuple(p_for), tuple(p_against), self.alpha, agree=agree, total=len(p_for),
                                 noncentrality=tuple(p[0] for p in powers) if complete else None,
                                 df=tuple(p[1] for p in powers) if complete else None,
                                 for_factors=tuple(f[0] for f in factors) if complete else (),
                                 against_factors=tuple(f[1] for f in factors) if complete else (),
                                 repeats=int(min(c for c in counts if c)) if any(counts) else None,
                                 effect=self.effect), text)
