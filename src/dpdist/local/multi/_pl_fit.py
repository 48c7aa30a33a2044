r"""Private piecewise-linear fitting of a noisy histogram: PriPL-Tree's phase 1 (Algorithm 1).

Wang, Ye, Hu, Meng, "PriPL-Tree: Accurate Range Query for Arbitrary Distribution under Local
Differential Privacy", PVLDB 17(11), 2024 (full version arXiv:2407.13532), sec. 3.3.

A *continuous* piecewise-linear (PL) function with breakpoints
:math:`s_0 = 0 < s_1 < \dots < s_K = d - 1` (eq. 2) is fitted to a noisy histogram
:math:`\hat F^H` of :math:`d` bins by least squares (eq. 5): its design matrix :math:`X + A` (eqs. 3-4)
has a column of ones (the intercept :math:`\beta_0`) and, for segment :math:`k`, the hinge
:math:`\min(\max(v - s_{k-1}, 0), s_k - s_{k-1})`, so :math:`\hat B = ((X+A)^T(X+A))^{-1}(X+A)^T \hat F^H`
(eq. 6).  Breakpoints are added greedily (Algorithm 1, lines 5-12): the segment with the largest
residual sum of squares whose noisy frequency exceeds the node-noise threshold is split at the
candidate breakpoint that minimises the total RSS, searched coarse to fine with at most
``granularity`` candidates per level (the "search acceleration strategy", sec. 3.3.2), until the
total RSS stops falling (ratio of consecutive totals below 1.005, i.e. 1.00 at two decimals as the
authors' code rounds) or ``max_segments`` is reached; first on the EM histogram (up to half of
``max_segments``), then on the smoothed EMS histogram (the "twice partitioning strategy").

Everything here is post-processing of the SW estimates (no user data).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["PLFit", "fit_piecewise_linear", "pl_design"]


@dataclass(frozen=True)
class PLFit:
    """A fitted PL function: ``breakpoints`` (``K + 1`` half-integers and the ends), ``slopes`` (``K``, per bin).

    Segment ``k`` holds the bins ``lefts[k] .. rights[k]`` (inclusive).
    """

    breakpoints: np.ndarray
    slopes: np.ndarray
    intercept: float

    @property
    def rights(self) -> np.ndarray:
        return np.floor(self.breakpoints[1:]).astype(np.int64)

    @property
    def lefts(self) -> np.ndarray:
        rights = self.rights
        return np.concatenate([[0], rights[:-1] + 1]).astype(np.int64)


def pl_design(breakpoints: np.ndarray, size: int) -> np.ndarray:
    r"""The matrix :math:`X + A` of eqs. 3-4 for breakpoints of shape ``(..., K + 1)``: shape ``(..., size, K + 1)``."""
    breaks = np.asarray(breakpoints, dtype=np.float64)
    v = np.arange(size, dtype=np.float64)[:, None]
    starts, widths = breaks[..., None, :-1], np.diff(breaks, axis=-1)[..., None, :]
    hinge = np.clip(v - starts, 0.0, widths)
    ones = np.ones(hinge.shape[:-1] + (1,))
    return np.concatenate([ones, hinge], axis=-1)


def _solve(design: np.ndarray, histogram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eq. 6 for a stack of designs ``(C, d, p)``: the parameters ``(C, p)`` and the residuals ``(C, d)``."""
    gram = np.einsum("cdp,cdq->cpq", design, design)
    gram += np.eye(gram.shape[-1]) * 1e-12 * np.trace(gram, axis1=1, axis2=2)[:, None, None]
    rhs = np.einsum("cdp,d->cp", design, histogram)
    parameters = np.linalg.solve(gram, rhs[..., None])[..., 0]
    residuals = histogram - np.einsum("cdp,cp->cd", design, parameters)
    return parameters, residuals


def _segment_rss(residuals: np.ndarray, breakpoints: np.ndarray) -> np.ndarray:
    """RSS of each segment (Algorithm 1, line 10): bins ``floor(s_{k-1}) + 1 .. floor(s_k)``, bin 0 in the first."""
    rights = np.floor(breakpoints[1:]).astype(np.int64)
    cumulative = np.concatenate([[0.0], np.cumsum(residuals**2)])
    return np.diff(np.concatenate([[0.0], cumulative[rights + 1]]))


def _best_breakpoint(histogram: np.ndarray, breakpoints: np.ndarray, low: int, high: int, granularity: int):
    """The breakpoint in segment ``[low, high]`` minimising the total RSS, searched coarse to fine (sec. 3.3.2)."""
    index = int(np.searchsorted(breakpoints, high))  # where the new breakpoint goes
    first, last, span = low, high, high - low + 1
    best = None
    while True:
        step = math.ceil(span / granularity)
        candidates = np.arange(first, last, step, dtype=np.float64) + 0.5
        stacked = np.repeat(breakpoints[None, :], candidates.size, axis=0)
        stacked = np.insert(stacked, index, 0.0, axis=1)
        stacked[:, index] = candidates
        parameters, residuals = _solve(pl_design(stacked, histogram.size), histogram)
        choice = int(np.argmin(np.sum(residuals**2, axis=1)))
        best = (stacked[choice], parameters[choice], residuals[choice])
        if step == 1:
            return best
        centre = candidates[choice]
        first, last = max(int(centre + 0.5 - step), low), min(int(centre - 0.5 + step), high)
        span = 2 * step - 1


def fit_piecewise_linear(em: np.ndarray, ems: np.ndarray, threshold: float, *, max_segments: int = 32,
                         granularity: int = 128) -> PLFit:
    r"""Algorithm 1: the PL function of the histograms ``em`` and ``ems`` (frequencies of ``d`` bins).

    ``threshold`` is the smallest EMS frequency of a segment that may still be split (line 12: the standard
    deviation of a tree node's frequency, :math:`\sigma`); ``max_segments`` is :math:`K_{max}`; ``granularity``
    is :math:`\phi`.  At least one split is made, so the tree of phase 2 has a level below its root.
    """
    ems = np.asarray(ems, dtype=np.float64)
    size = ems.size
    breakpoints = np.array([0.0, size - 1.0])
    splittable = np.ones(1, dtype=bool)
    parameters = np.zeros(2)
    for round_index, histogram in enumerate((np.asarray(em, dtype=np.float64), ems), start=1):
        parameters, residuals = _solve(pl_design(breakpoints[None], size), histogram)
        parameters, residuals = parameters[0], residuals[0]
        errors = _segment_rss(residuals, breakpoints)
        last_total, keep_going = float(errors.sum()), True
        while splittable.any() and keep_going:
            k = int(np.argmax(np.where(splittable, errors, -np.inf)))
            rights = np.floor(breakpoints[1:]).astype(np.int64)
            lefts = np.concatenate([[0], rights[:-1] + 1])
            breakpoints, parameters, residuals = _best_breakpoint(histogram, breakpoints, int(lefts[k]),
                                                                  int(rights[k]), granularity)
            rights = np.floor(breakpoints[1:]).astype(np.int64)
            lefts = np.concatenate([[0], rights[:-1] + 1])
            cumulative = np.concatenate([[0.0], np.cumsum(ems)])
            mass = cumulative[rights + 1] - cumulative[lefts]
            splittable = (rights - lefts + 1 >= 2) & (mass >= threshold)
            errors = _segment_rss(residuals, breakpoints)
            total = float(errors.sum())
            keep_going = total > 0 and last_total / total >= 1.005 and rights.size < max_segments * round_index / 2
            last_total = total
    return PLFit(breakpoints=breakpoints, slopes=parameters[1:].copy(), intercept=float(parameters[0]))
