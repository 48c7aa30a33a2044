r"""Expectation maximization (EM) and EM with smoothing (EMS) on bucket counts (paper 003, Alg. 1).

Paper 003, sec. 5.5 and App. (derivation of Alg. 1).
Given the counts :math:`n_j` of reports in output bucket :math:`j` and the
transition matrix :math:`M_{j,i} = \Pr[\tilde v \in \tilde B_j \mid v \in B_i]`,
EM maximizes the log-likelihood

.. math::

    L(x) = \sum_j n_j \log (Mx)_j

over the simplex by iterating (Alg. 1)

.. math::

    P_i = x_i \sum_j n_j \frac{M_{j,i}}{(Mx)_j}, \qquad x_i \leftarrow P_i / \textstyle\sum_k P_k .

EMS adds, after each M-step, the smoothing of Nychka (1990) / Silverman et
al. (1990) cited in sec. 5.5: :math:`x_i \leftarrow \frac12 x_i + \frac14(x_{i-1} + x_{i+1})`,
i.e. the binomial weights (1, 2, 1)/4.  At the two ends the missing neighbour
is dropped and the row renormalized: :math:`(2x_0 + x_1)/3` and
:math:`(x_{d-2} + 2x_{d-1})/3` (so a constant vector is a fixed point), then
the vector is renormalized to sum 1.

Stopping rule (sec. 5.5): stop after the first iteration with
:math:`|L(x^{(t+1)}) - L(x^{(t)})| < \tau`; :math:`L` is the *total*
log-likelihood of the :math:`n` reports (as in the paper), with the paper's
tolerances :math:`\tau = 10^{-3} e^\varepsilon` for EM and :math:`\tau = 10^{-3}`
for EMS, and an iteration cap.

Both products :math:`Mx` and :math:`M^\top y` run through an operator (an object with
``shape``, ``matvec`` and ``rmatvec``): :class:`DenseOperator` here, the wave mechanisms'
banded and Toeplitz operators in :mod:`dpdist.local.numerical._wave_operators`.  The
solver is shared by the wave mechanisms (EM/EMS) and the frequency oracles' iterative
Bayesian update and maximum likelihood (:mod:`dpdist.local.frequency._exact_channel`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

__all__ = [
    "DenseOperator",
    "binomial_smoothing_matrix",
    "smooth",
    "smooth_circular",
    "expectation_maximization",
    "expectation_maximization_rows",
    "EMResult",
]


class DenseOperator:
    """Products with a dense ``(outputs, inputs)`` matrix."""

    def __init__(self, matrix: np.ndarray):
        self.matrix = np.ascontiguousarray(matrix, dtype=np.float64)
        self._transposed = np.ascontiguousarray(self.matrix.T)
        self.shape = self.matrix.shape

    def matvec(self, x: np.ndarray) -> np.ndarray:
        return self.matrix @ x

    def rmatvec(self, y: np.ndarray) -> np.ndarray:
        return self._transposed @ y


def binomial_smoothing_matrix(size: int) -> np.ndarray:
    """The (1, 2, 1)/4 smoothing as a matrix, boundary rows renormalized (for reference and tests)."""
    matrix = np.zeros((size, size))
    index = np.arange(size)
    matrix[index, index] = 2.0
    matrix[index[1:], index[:-1]] = 1.0
    matrix[index[:-1], index[1:]] = 1.0
    return matrix / matrix.sum(axis=1, keepdims=True)


def smooth(x: np.ndarray) -> np.ndarray:
    """``binomial_smoothing_matrix(len(x)) @ x`` in O(d)."""
    out = np.empty_like(x)
    out[1:-1] = 0.5 * x[1:-1] + 0.25 * (x[:-2] + x[2:])
    out[0] = (2.0 * x[0] + x[1]) / 3.0
    out[-1] = (x[-2] + 2.0 * x[-1]) / 3.0
    return out


def smooth_circular(x: np.ndarray) -> np.ndarray:
    """The (1, 2, 1)/4 smoothing on a circle: the first and last bins are neighbours (no boundary rows).

    For histograms of a circular domain (the circular optimal piecewise mechanism,
    :mod:`dpdist.local.numerical.opm`); a constant vector is a fixed point and the sum is kept.
    """
    return 0.5 * x + 0.25 * (np.roll(x, 1) + np.roll(x, -1))


@dataclass(frozen=True)
class EMResult:
    """Estimated input histogram and the convergence trace."""

    probabilities: np.ndarray
    iterations: int  # EM (or EMS) steps computed (with SQUAREM, rejected stabilization steps too)
    converged: bool
    tolerance: float
    loglikelihood: np.ndarray  # L at the start and at every iterate the algorithm moved to
    accelerated: bool = False
    extrapolations_accepted: int = 0


def _positive_extrapolation(x, r, v, alpha, support, halvings: int = 30):
    """SQUAREM's point, with ``alpha`` moved halfway to -1 until it is positive on ``support``.

    Positivity matters: EM multiplies, so a coordinate set to 0 would stay 0 and
    change the fixed point.  At ``alpha = -1`` the point is ``x2`` itself, positive
    on ``support``; returns None if no tried ``alpha`` works.
    """
    for _ in range(halvings):
        point = x - 2.0 * alpha * r + alpha * alpha * v
        if (point[support] > 0).all():
            point = np.where(support, point, 0.0)
            return point / point.sum()
        alpha = (alpha - 1.0) / 2.0
    return None


def expectation_maximization(
    counts: np.ndarray,
    operator,
    *,
    smoothing: bool | Callable[[np.ndarray], np.ndarray],
    tolerance: float,
    max_iterations: int,
    start: np.ndarray | None = None,
    accelerate: bool = False,
    stopping: str = "change",
) -> EMResult:
    """Alg. 1 of paper 003 (EM), with the smoothing step after each M-step when ``smoothing`` (EMS).

    Parameters
    ----------
    counts : ndarray of shape (outputs,)
        Reports per output bucket, :math:`n_j`.
    operator
        :class:`DenseOperator`, or a wave mechanism's banded or Toeplitz operator, for :math:`M`
        (columns summing to 1, entries > 0), or any object with ``shape``, ``matvec``, ``rmatvec``.
    smoothing : bool or callable
        EMS when True (the (1, 2, 1)/4 smoothing :func:`smooth`), or EMS with this smoothing
        map (e.g. :func:`smooth_circular` on a circular domain); EM when False.
    tolerance : float
        :math:`\\tau`: stop after the first EM/EMS step that changes the total log-likelihood by less.
    max_iterations : int
        Cap on the number of EM/EMS steps.
    start : ndarray, optional
        Starting histogram (default uniform); it must be positive where the answer is.
    stopping : {"change", "gap"}
        ``"change"`` (the paper's rule): stop after the first step that changes the
        total log-likelihood :math:`L` by less than ``tolerance``.  ``"gap"``: stop at
        the first iterate whose duality gap :math:`\\max_i g_i - \\sum_i x_i g_i`,
        :math:`g = \\nabla L(x) = M^\\top (n / Mx)` (so :math:`\\sum_i x_i g_i = \\sum_j n_j`),
        is below ``tolerance``; since :math:`L` is concave, the gap bounds
        :math:`\\max L - L(x)` (the Frank–Wolfe certificate), so the answer is
        certified within ``tolerance`` of the maximum likelihood.  Costs nothing extra:
        :math:`g` is the E-step's vector.  For EM only (EMS maximizes no likelihood).
    accelerate : bool
        SQUAREM (:meth:`_Iterations.squarem_cycle`).  The map iterated and the stopping rule are the
        same, so the fixed point is the same; only the path to it is shorter.
    """
    if stopping not in ("change", "gap") or (stopping == "gap" and smoothing):
        raise ValueError(f"stopping must be 'change', or 'gap' without smoothing; got {stopping!r}")
    run = _Iterations(np.asarray(counts, dtype=np.float64), operator, smoothing, tolerance, max_iterations, stopping)
    bins = operator.shape[1]
    x = np.full(bins, 1.0 / bins) if start is None else np.array(start, dtype=np.float64)
    if start is not None:
        x /= x.sum()
    point = run.at(x)  # Mx > 0: every entry of M is
    run.trace.append(point.loglikelihood)
    while not run.finished():
        point = run.squarem_cycle(point) if accelerate else run.plain_step(point)
    return EMResult(
        probabilities=point.x,
        iterations=run.iterations,
        converged=run.converged,
        tolerance=float(tolerance),
        loglikelihood=np.asarray(run.trace),
        accelerated=accelerate,
        extrapolations_accepted=run.accepted,
    )


class _Point:
    """An iterate with its predicted output law :math:`Mx` and log-likelihood :math:`L(x)` (never changed).

    A plain class with slots, not a frozen dataclass: one is made per step, and a run takes up to 10^5 steps of a
    few microseconds each.
    """

    __slots__ = ("x", "predicted", "loglikelihood")

    def __init__(self, x: np.ndarray, predicted: np.ndarray, loglikelihood: float):
        self.x, self.predicted, self.loglikelihood = x, predicted, loglikelihood


class _Iterations:
    """One run of :func:`expectation_maximization`: the EM/EMS map :math:`F`, its stopping rule, the trace."""

    def __init__(
        self,
        counts,
        operator,
        smoothing: bool | Callable[[np.ndarray], np.ndarray],
        tolerance: float,
        max_iterations: int,
        stopping: str,
    ):
        self.counts, self.operator, self.smoothing = counts, operator, smoothing
        self.tolerance, self.max_iterations, self.stopping = tolerance, max_iterations, stopping
        self.total = counts.sum()
        self.iterations, self.converged, self.accepted = 0, False, 0
        self.trace: list[float] = []  # L at the start and at every iterate the run moved to
        # L sums over the outputs with reports: found once, the same terms at every step
        positive = counts > 0
        self._observed = None if positive.all() else np.flatnonzero(positive)
        self._observed_counts = counts if self._observed is None else counts[positive]

    def at(self, x: np.ndarray) -> _Point:
        predicted = self.operator.matvec(x)
        observed = predicted if self._observed is None else predicted[self._observed]
        return _Point(x, predicted, float(self._observed_counts @ np.log(observed)))

    def finished(self) -> bool:
        return self.converged or self.iterations >= self.max_iterations

    def step(self, point: _Point) -> _Point:
        """One EM/EMS step from ``point`` and the stopping rule (with "gap", ``point`` itself may stop)."""
        gradient = self.operator.rmatvec(self.counts / point.predicted)
        # the ufuncs' reduce: what ndarray.max/sum call, without their Python wrappers (a run takes up to 10^5 steps)
        if self.stopping == "gap" and np.maximum.reduce(gradient) - self.total < self.tolerance:
            self.converged = True
            return point
        out = point.x * gradient  # E-step: P_i = x_i sum_j n_j M_ji / (Mx)_j
        np.maximum(out, 0.0, out=out)  # FFT round-off can leave -1e-17 where x is 0
        out /= np.add.reduce(out)  # M-step
        if self.smoothing:
            out = (self.smoothing if callable(self.smoothing) else smooth)(out)
            out /= np.add.reduce(out)
        moved = self.at(out)
        self.iterations += 1
        if self.stopping == "change" and abs(moved.loglikelihood - point.loglikelihood) < self.tolerance:
            self.converged = True
        return moved

    def plain_step(self, point: _Point) -> _Point:
        moved = self.step(point)
        if moved is not point:
            self.trace.append(moved.loglikelihood)
        return moved

    def squarem_cycle(self, point: _Point) -> _Point:
        """Two steps, then the extrapolation along them; a step that stops the run ends the cycle at once (at the
        point it reached).

        SQUAREM (Varadhan & Roland, Scand. J. Statist. 35, 2008, scheme S3): from
        :math:`x_0`, two steps :math:`x_1 = F(x_0)`, :math:`x_2 = F(x_1)` of the
        EM/EMS map :math:`F` give :math:`r = x_1 - x_0`, :math:`v = x_2 - 2x_1 + x_0`
        and the step length :math:`\\alpha = -\\lVert r\\rVert/\\lVert v\\rVert`
        (at most :math:`-1`); the extrapolation :math:`x' = x_0 - 2\\alpha r + \\alpha^2 v`
        must stay positive where :math:`x_2` is (EM multiplies, so a zero would
        stick), else :math:`\\alpha` moves halfway to :math:`-1` (where
        :math:`x' = x_2`), as in the paper's backtracking; it is renormalized and
        stabilized by one more step, :math:`x_3 = F(x')`.  Safeguard: :math:`x_3` is
        kept only if its log-likelihood is at least that of :math:`x_2`, so the
        accelerated EM is monotone like EM.  EMS maximizes no likelihood, but its
        step is EM's plus a small smoothing, and :math:`L` serves as its merit too
        (a residual merit :math:`\\lVert F(x) - x\\rVert_1` rejected ~95% of the
        extrapolations on SW 1024 x 1024, which raise the residual before they cut
        it, and left EMS 3-5x slower).  Otherwise the cycle ends at
        :math:`x_2`, two plain steps.  The stopping rule is checked after every
        step :math:`x \\mapsto F(x)`, exactly as without acceleration.
        """
        first = self.plain_step(point)
        if first is point or self.finished():
            return first
        second = self.plain_step(first)
        if second is first or self.finished():
            return second
        return self._extrapolated(point, first, second)

    def _extrapolated(self, start: _Point, first: _Point, second: _Point) -> _Point:
        """SQUAREM's stabilized extrapolation if it does at least as well as ``second``, else ``second``."""
        r = first.x - start.x
        v = second.x - first.x - r
        norm_v = math.sqrt(v.dot(v))  # np.linalg.norm of a vector without its dispatch: the root of the same dot
        alpha = -math.sqrt(r.dot(r)) / norm_v if norm_v > 0 else -1.0
        if alpha >= -1.0:
            return second
        extrapolated = _positive_extrapolation(start.x, r, v, alpha, second.x > 0)
        if extrapolated is None:
            return second
        stabilized = self.step(self.at(extrapolated))
        if stabilized.loglikelihood >= second.loglikelihood or self.converged:
            # (with "gap", a converged point is the extrapolated point itself, certified)
            self.trace.append(stabilized.loglikelihood)
            self.accepted += 1
            return stabilized
        return second


def expectation_maximization_rows(
    counts: np.ndarray,
    operator,
    *,
    tolerance: float,
    max_iterations: int,
    start: np.ndarray | None = None,
    accelerate: bool,
    stopping: str = "gap",
) -> np.ndarray:
    """:func:`expectation_maximization` of every row of ``counts`` (EM without smoothing, from one ``start``),
    run on the rows together: the final ``x`` of each row, the same numbers as one run per row.

    For the parametric bootstrap's refits (hundreds of small EMs): each step is one batched product with
    ``operator.matvec_rows`` / ``operator.rmatvec_rows``, which must give every row exactly what ``matvec`` /
    ``rmatvec`` give it alone (HR's butterflies do; a BLAS matrix-matrix product need not).  Every row follows its
    own path (SQUAREM's cycles, extrapolations, halvings and acceptances, and its own stopping iteration); the
    log-likelihoods and SQUAREM's norms are the same dots as a run's, row by row.
    """
    if stopping not in ("change", "gap"):
        raise ValueError(f"stopping must be 'change' or 'gap'; got {stopping!r}")
    run = _RowIterations(np.asarray(counts, dtype=np.float64), operator, tolerance, stopping)
    bins = operator.shape[1]
    x = np.full(bins, 1.0 / bins) if start is None else np.array(start, dtype=np.float64)
    if start is not None:
        x /= x.sum()
    everyone = np.arange(run.rows)
    point = run.at(np.repeat(x[None, :], run.rows, axis=0), everyone)
    iterations, converged = run.iterations, run.converged
    result = point[0].copy()
    active = everyone
    while True:
        done = converged[active] | (iterations[active] >= max_iterations)
        result[active[done]] = point[0][done]
        point = tuple(part[~done] for part in point)
        active = active[~done]
        if not active.size:
            return result
        if accelerate:
            point = _squarem_rows(point, active, run.step, iterations, converged, max_iterations, run.at)
        else:
            point, _ = run.step(point, active)


class _RowIterations:
    """The rows of one :func:`expectation_maximization_rows`: the EM map of each row, its stopping rule, and each
    row's step count and convergence (a point is ``(x, Mx, L)`` of some rows)."""

    def __init__(self, counts: np.ndarray, operator, tolerance: float, stopping: str):
        self.counts, self.operator, self.tolerance, self.stopping = counts, operator, tolerance, stopping
        self.rows = counts.shape[0]
        self.totals = counts.sum(axis=1)
        self.observed = [None if row.all() else np.flatnonzero(row) for row in counts > 0]
        self.observed_counts = [row if keep is None else row[keep] for row, keep in zip(counts, self.observed)]
        self.iterations = np.zeros(self.rows, dtype=np.int64)
        self.converged = np.zeros(self.rows, dtype=bool)

    def loglikelihoods(self, predicted: np.ndarray, which: np.ndarray) -> np.ndarray:
        return np.array([
            float(self.observed_counts[i] @ np.log(row if self.observed[i] is None else row[self.observed[i]]))
            for i, row in zip(which, predicted)
        ])

    def at(self, x: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, ...]:
        """``(x, Mx, L)`` of rows ``which``."""
        predicted = self.operator.matvec_rows(x)
        return x, predicted, self.loglikelihoods(predicted, which)

    def step(self, point, which):
        """:meth:`_Iterations.step` of rows ``which`` (``point`` theirs): the moved point, and which rows stopped
        at ``point`` itself (gap below tolerance: not moved)."""
        x, predicted, loglikelihood = point
        gradient = self.operator.rmatvec_rows(self.counts[which] / predicted)
        if self.stopping == "gap":
            stopped = gradient.max(axis=1) - self.totals[which] < self.tolerance
        else:
            stopped = np.zeros(which.size, dtype=bool)
        out = x * gradient
        np.maximum(out, 0.0, out=out)
        out /= out.sum(axis=1, keepdims=True)
        moving = ~stopped
        moved = self.at(out[moving], which[moving])
        merged = tuple(np.array(part, copy=True) for part in point)
        for part, new in zip(merged, moved):
            part[moving] = new
        self.iterations[which[moving]] += 1
        self.converged[which[stopped]] = True
        if self.stopping == "change":
            self.converged[which[np.abs(merged[2] - loglikelihood) < self.tolerance]] = True
        return merged, stopped


def _squarem_rows(point, which, step, iterations, converged, max_iterations, at):
    """One :meth:`_Iterations.squarem_cycle` of rows ``which``: each row's cycle ends where a run's would."""

    def finished(rows):
        return converged[rows] | (iterations[rows] >= max_iterations)

    first, stopped = step(point, which)
    ended = stopped | finished(which)  # a stopping or a finished step ends the cycle at once
    going = ~ended
    cycle = tuple(np.array(part, copy=True) for part in first)
    if not going.any():
        return cycle
    rows = which[going]
    start = tuple(part[going] for part in point)
    first_going = tuple(part[going] for part in first)
    second, stopped = step(first_going, rows)
    extrapolate = ~(stopped | finished(rows))
    for part, new in zip(cycle, second):
        part[going] = new
    if not extrapolate.any():
        return cycle
    chosen = _extrapolated_rows(
        tuple(part[extrapolate] for part in start), tuple(part[extrapolate] for part in first_going),
        tuple(part[extrapolate] for part in second), rows[extrapolate], step, converged, at,
    )
    positions = np.flatnonzero(going)[extrapolate]
    for part, new in zip(cycle, chosen):
        part[positions] = new
    return cycle


def _extrapolated_rows(start, first, second, which, step, converged, at):
    """:meth:`_Iterations._extrapolated` of rows ``which``: SQUAREM's stabilized point where a run keeps it, else
    ``second``."""
    r = first[0] - start[0]
    v = second[0] - first[0] - r
    alpha = np.empty(which.size)
    for i in range(which.size):  # the same dots as a run's norms
        norm_v = math.sqrt(v[i].dot(v[i]))
        alpha[i] = -math.sqrt(r[i].dot(r[i])) / norm_v if norm_v > 0 else -1.0
    chosen = tuple(np.array(part, copy=True) for part in second)
    trying = alpha < -1.0
    support = second[0] > 0
    extrapolated = np.zeros_like(start[0])
    found = np.zeros(which.size, dtype=bool)
    for _ in range(30):  # _positive_extrapolation's halvings, row by row
        if not trying.any():
            break
        a = alpha[trying]
        candidate = start[0][trying] - (2.0 * a)[:, None] * r[trying] + (a * a)[:, None] * v[trying]
        positive = np.all((candidate > 0) | ~support[trying], axis=1)
        candidate = np.where(support[trying], candidate, 0.0)
        rows = np.flatnonzero(trying)[positive]
        extrapolated[rows] = candidate[positive] / candidate[positive].sum(axis=1, keepdims=True)
        found[rows] = True
        trying[rows] = False
        alpha[trying] = (alpha[trying] - 1.0) / 2.0
    if not found.any():
        return chosen
    rows = which[found]
    stabilized, _ = step(at(extrapolated[found], rows), rows)
    keep = (stabilized[2] >= second[2][found]) | converged[rows]
    positions = np.flatnonzero(found)[keep]
    for part, new in zip(chosen, stabilized):
        part[positions] = new[keep]
    return chosen
