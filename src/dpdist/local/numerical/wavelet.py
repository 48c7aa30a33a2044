r"""Wavelet expansion, ``wavelet``: Haar coefficients by signed subset selection.

Paper 000 -- P. Zhao, Z. Zhang, B. Sun, L. Shen, L. Zhang,
S. Wang, Z. Liu, "Consistent Estimation of Numerical Distributions under Local
Differential Privacy by Wavelet Expansion", IEEE S&P 2026 (Algorithm 1).

Protocol
--------
The bounds are rescaled to [0, 1] and cut into the public grid of
:math:`2^{J+1}` fine bins.  Each user belongs to one level
:math:`j \in \{0, \dots, J\}` (the group :math:`S_j` of sec. 4.2), encodes its value
as the signed one-hot vector :math:`\mathbf v = 2^{-j/2}(\psi_{j0}(x), \dots,
\psi_{j,2^j-1}(x)) = \pm\mathbf e_k` (eq. 39) and reports the level and
:math:`\mathbf Y \in \{-1,0,1\}^{2^j}` with :math:`\|\mathbf Y\|_0 = m_j`, drawn from the
signed subset-selection randomizer of eq. 45 by Algorithm 2 (eq. 66, with uniform
signs on the other chosen coordinates, see :mod:`._signed_subset`).  :math:`m_j`
minimizes eq. 61 over all :math:`1 \le m \le 2^j`.

Level assignment (the client must know its level)
-------------------------------------------------
:math:`J` is a public parameter: ``levels`` directly, or derived from the expected
number of users ``n_users`` by ``level_rule``: ``"sqrt"``, :math:`J =
\lceil \log_2(n)/2 \rceil` (sec. 5.4), or ``"bound"``, the minimizer of the
Wasserstein bound of Theorem 1 (sec. 6.3, :func:`wasserstein_bound`).  The shares
:math:`w_j \propto 2^{-j}\sqrt{V_j}` of eq. 83 depend only on :math:`J`,
:math:`\varepsilon` and ``variance_rule``.  ``assignment="random"`` (default, for
deployment): each client draws its level with probability :math:`w_j`, independently
of its value, so the report (level included) is :math:`\varepsilon`-LDP and the
collector counts the :math:`n_j` it received.  ``assignment="fixed"``: a batch of
:math:`n` values is split by a uniformly random permutation into groups of exactly
the :math:`n_j` of eq. 83 (floor, remainder to the largest fractional parts) -- the
paper's Algorithm 1, for simulations.  In both cases the level carries no
information about the value.

Estimation
----------
Unbiased coefficients (eq. 57) :math:`a_{jk} = 2^{j/2}\sum_{i\in S_j} Y_i(k) /
(n_j p_j (1-e^{-\varepsilon}))` (zero for a level with no user), the density
:math:`f_J = 1 + \sum a_{jk}\psi_{jk}` (eq. 67), made non-negative by the clipping
of sec. 4.7 (eq. 68-69), returned as a :class:`~dpdist.Distribution` on the
:math:`2^{J+1}` fine bins.

Report format
-------------
A 2-D ``uint8`` array, one row per user, :math:`1 + 2W` columns with
:math:`W = \lceil 2^J / 8 \rceil`: the level, then the non-zero coordinates of
:math:`\mathbf Y` as a bitmap (``numpy.packbits`` order, coordinate ``k`` in byte
``k // 8``, bit ``7 - k % 8``), then the bitmap of the coordinates equal to -1.
Bits beyond :math:`2^j` are zero.  Rows with a bad level, set padding, a sign
without its coordinate, or a number of coordinates other than :math:`m_j` are
rejected (counted by reason).  The statistic (int64) is :math:`n_0, \dots, n_J`
followed by the per-coordinate sums :math:`\sum_{i\in S_j} Y_i(k)` of every level.
"""

from __future__ import annotations

import numpy as np

from ... import postprocess as _postprocess
from ..._types import ArrayLike
from ..._validation import Either, Integer, Optional, Options, validate_params
from ...errors import InvalidParameterError, MalformedReportError
from .._aggregator import Aggregator
from .._docs import shared_parameters
from .._protocol import ProtocolTags, register
from .._report_kinds import Column, IntegerRowReports
from .._state_validation import level_sums_problem as _level_sums_problem
from ._base import VALUES_GIVEN, NumericalProtocol
from ._haar import fine_bins, haar_encode, level_code, reconstruct_density
from ._haar_design import (
    MAX_LEVELS,
    VARIANCE_RULES,
    allocate_users,
    allocation_weights,
    bound_optimal_levels,
    conditional_level_variance,
    default_levels,
    level_variance_bound,
    optimal_subset_size,
    wasserstein_bound,
)
from ._signed_subset import (
    enumerate_outputs,
    realized_output_probabilities,
    sample_signed_subsets_packed,
    signed_thresholds,
    support_probabilities,
)

__all__ = [
    "Wavelet",
    "allocate_users",
    "bound_optimal_levels",
    "conditional_level_variance",
    "default_levels",
    "haar_encode",
    "level_variance_bound",
    "optimal_subset_size",
    "wasserstein_bound",
]

#: postprocess options of :meth:`Wavelet.estimate`
POSTPROCESS = ("clip", "clip-paper", "norm-sub")
#: dense work arrays of privatize/aggregate hold at most this many coordinates
_CHUNK_CELLS = 1 << 24
#: the exact channel is enumerated only up to this J (2^J = 8 coordinates)
_CHANNEL_MAX_LEVELS = 3


@register
@shared_parameters
class Wavelet(NumericalProtocol):
    """Haar wavelet expansion under LDP (Zhao et al., IEEE S&P 2026).

    Parameters
    ----------
    {epsilon}
    levels : int or None
        :math:`J` (0 .. 20); the estimate has :math:`2^{J+1}` bins.  Overrides ``n_users``.
    n_users : int or None
        Expected number of users, to derive :math:`J` by ``level_rule`` when ``levels`` is None.
    level_rule : {"sqrt", "bound"}
        :math:`\\lceil\\log_2(n)/2\\rceil` (sec. 5.4) or the minimizer of the Theorem 1 bound (sec. 6.3).
    variance_rule : {"exact", "paper"}
        Var[Y(l) | v(l)=0] = 2q (correct) or q (eq. 117 as printed); sets m_j, V_j and the allocation.
    assignment : {"random", "fixed"}
        Each client draws its level with the eq. 83 shares, or a batch is split into exact eq. 83 groups.
    {bounds}
    """

    statistic_signed = True  # signed sums of +-1 Haar-coefficient reports

    name = "wavelet"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    summary = "Wavelet expansion (Zhao et al. 2026): Haar coefficients by signed subset selection"
    tags = ProtocolTags(kind="numerical", finite_channel=True, exact_simulate=False, unbiased=False)
    _constraints = {
        **NumericalProtocol._constraints,
        "levels": Optional(Integer(low=0, high=MAX_LEVELS)),
        "n_users": Optional(Integer(low=1)),
        "level_rule": Options(("sqrt", "bound")),
        "variance_rule": Options(VARIANCE_RULES),
        "assignment": Options(("random", "fixed")),
    }
    _relations = (Either("levels", "n_users", why=f"J, an int in [0, {MAX_LEVELS}], or derived from n_users",
                         counterexample={"levels": None, "n_users": None}),)
    _defaults = {
        **NumericalProtocol._defaults,
        "levels": None,
        "n_users": None,
        "level_rule": "sqrt",
        "variance_rule": "exact",
        "assignment": "random",
    }
    estimate_options = {"postprocess": Options(POSTPROCESS)}

    def _setup(self):
        params = self._params
        if params["levels"] is not None:
            levels = params["levels"]
        else:  # n_users is given when levels is not: the table's relation
            n = params["n_users"]
            levels = (
                default_levels(n)
                if params["level_rule"] == "sqrt"
                else bound_optimal_levels(n, self.epsilon, params["variance_rule"])
            )
        self._levels = int(levels)
        rule = params["variance_rule"]
        self._sizes = np.array([2**j for j in range(self._levels + 1)], dtype=np.int64)
        self._subset_sizes = np.array([optimal_subset_size(int(d), self.epsilon, rule) for d in self._sizes])
        self._p = np.array(
            [
                float(support_probabilities(int(d), int(m), self.epsilon)[0])
                for d, m in zip(self._sizes, self._subset_sizes)
            ]
        )
        # E[Y(k) | v(k) = 1] = P+ - P- as Algorithm 2 draws them (ideally p (1 - e^-eps), eq. 56)
        thresholds = [signed_thresholds(int(d), int(m), self.epsilon) for d, m in zip(self._sizes, self._subset_sizes)]
        self._signal = np.array([2.0 * t1 - t2 for t1, t2 in thresholds])  # t1 - (t2 - t1), exact on the grid
        self._weights = allocation_weights(self._levels, self.epsilon, rule)
        self._width = (int(self._sizes[-1]) + 7) // 8
        self._offsets = np.concatenate([[self._levels + 1], self._levels + 1 + np.cumsum(self._sizes)])
        # per level: the bytes of the bitmaps that may hold set bits
        allowed = np.zeros((self._levels + 1, self._width * 8), dtype=bool)
        for j, d in enumerate(self._sizes):
            allowed[j, :d] = True
        self._allowed_bytes = np.packbits(allowed, axis=1)

    # ------------------------------------------------------------------ public design
    @property
    def levels(self) -> int:
        """:math:`J`; the estimate has :math:`2^{J+1}` bins."""
        return self._levels

    @property
    def subset_sizes(self) -> np.ndarray:
        """:math:`m_j` (eq. 61) for ``j = 0 .. J``."""
        return self._subset_sizes.copy()

    @property
    def level_weights(self) -> np.ndarray:
        """Shares :math:`w_j` of users per level (eq. 83 before flooring)."""
        return self._weights.copy()

    def allocation(self, n: int) -> np.ndarray:
        """Eq. 83 group sizes for ``n`` users (sums to ``n``)."""
        return allocate_users(n, self._levels, self.epsilon, self._params["variance_rule"])

    def wasserstein_bound(self, n: int) -> float:
        """Theorem 1 (eq. 77 + 72) for ``n`` users with this protocol's J and variance rule."""
        return wasserstein_bound(n, self.epsilon, self._levels, self._params["variance_rule"])

    @property
    def report_width(self) -> int:
        return 1 + 2 * self._width

    @property
    def statistic_size(self) -> int:
        return int(self._offsets[-1])

    # ------------------------------------------------------------------ client
    def _assign_levels(self, n: int, rng) -> np.ndarray:
        if self._params["assignment"] == "fixed":
            if n < self._levels + 1:
                raise InvalidParameterError(
                    f"WAVELET with assignment='fixed' splits each batch over the {self._levels + 1} levels "
                    f"(eq. 83), so a batch needs at least {self._levels + 1} values. Got {n}; use "
                    "assignment='random' for clients that privatize one value at a time."
                )
            return rng.permutation(np.repeat(np.arange(self._levels + 1), self.allocation(n)))
        cumulative = np.cumsum(self._weights)
        return np.minimum(np.searchsorted(cumulative, rng.random(n), side="right"), self._levels)

    def _privatize(self, values, rng):
        return self._privatize_levels(values, self._assign_levels(values.size, rng), rng)

    def _simulate(self, values, rng):
        """Privatize + accumulate in chunks, the levels assigned once for the whole batch (so
        ``assignment="fixed"`` splits the whole batch, as :meth:`privatize` does)."""
        levels = self._assign_levels(values.size, rng)
        statistic = np.zeros(self.statistic_size, dtype=np.int64)
        for start in range(0, values.size, self._simulate_chunk):
            chunk = slice(start, start + self._simulate_chunk)
            statistic += self._accumulate(self._privatize_levels(values[chunk], levels[chunk], rng))
        return statistic

    def _privatize_levels(self, values, levels, rng):
        bins = fine_bins(values, self._levels)
        reports = np.empty((values.size, self.report_width), dtype=np.uint8)
        for j, rows in self._rows_by_level(levels):
            d, m = int(self._sizes[j]), int(self._subset_sizes[j])
            used = (d + 7) // 8
            cells, signs = level_code(bins[rows], j, self._levels)
            nonzero, negative = sample_signed_subsets_packed(cells, signs, d, m, self.epsilon, rng)
            block = np.zeros((rows.size, self.report_width), dtype=np.uint8)
            block[:, 0] = j
            block[:, 1 : 1 + used] = nonzero
            block[:, 1 + self._width : 1 + self._width + used] = negative
            reports[rows] = block
        return reports

    def _rows_by_level(self, levels: np.ndarray, cells: int = _CHUNK_CELLS, max_rows: int | None = None):
        """``(j, rows)`` for each level, rows in chunks of at most ``cells`` coordinates (and ``max_rows``)."""
        for j in range(self._levels + 1):
            rows = np.flatnonzero(levels == j)
            step = max(1, cells // int(self._sizes[j]))
            if max_rows is not None:
                step = min(step, max_rows)
            for start in range(0, rows.size, step):
                yield j, rows[start : start + step]

    # ------------------------------------------------------------------ server
    def _report_format(self):
        width = self._width
        return IntegerRowReports(
            [Column("level", self._levels + 1, reason="level_out_of_range"),
             Column("nonzero", None, count=width, label="byte of the bitmap of non-zero coordinates"),
             Column("negative", None, count=width, label="byte of the sign bitmap")],
            np.uint8,
            exact_dtype=True,
        )

    def _check_reports(self, reports, invalid):
        """Bitmaps of the report's level: no bit past its size, a sign only on a coordinate, its subset size."""
        bad_level = invalid["level_out_of_range"]
        safe = np.where(bad_level, 0, reports[:, 0].astype(np.int64))
        padding = np.zeros(reports.shape[0], dtype=bool)
        orphan_sign = np.zeros(reports.shape[0], dtype=bool)
        count = np.zeros(reports.shape[0], dtype=np.int64)
        allowed = _as_words(self._allowed_bytes)
        step = max(1, (1 << 22) // (16 * self._width))  # small blocks: temporaries stay in cache
        for start in range(0, reports.shape[0], step):
            block = slice(start, start + step)
            nonzero = _as_words(reports[block, 1 : 1 + self._width])
            negative = _as_words(reports[block, 1 + self._width :])
            padding[block] = np.any((nonzero | negative) & ~allowed[safe[block]], axis=1)
            orphan_sign[block] = np.any(negative & ~nonzero, axis=1)
            count[block] = np.bitwise_count(nonzero).sum(axis=1, dtype=np.int64)
        wrong_count = count != self._subset_sizes[safe]
        ok_level = ~bad_level
        return {
            "level_out_of_range": bad_level,
            "padding_set": ok_level & padding,
            "sign_without_coordinate": ok_level & ~padding & orphan_sign,
            "wrong_number_of_coordinates": ok_level & ~padding & ~orphan_sign & wrong_count,
        }

    def _check_statistic(self, statistic, n):
        """Level counts ``>= 0`` summing to ``n``; level ``j`` holds ``m_j`` +-1 coordinates per report of the level."""
        return _level_sums_problem(statistic, n, self._offsets, self._subset_sizes, first_level=0)

    def _accumulate(self, reports):
        statistic = np.zeros(self.statistic_size, dtype=np.int64)
        levels = reports[:, 0]
        statistic[: self._levels + 1] = np.bincount(levels, minlength=self._levels + 1)
        # blocks of < 2^16 rows and ~2^20 bits: uint16 column sums are exact and fast
        for j, rows in self._rows_by_level(levels, cells=1 << 20, max_rows=(1 << 16) - 1):
            d = int(self._sizes[j])
            used = (d + 7) // 8
            nonzero = np.unpackbits(reports[rows, 1 : 1 + used], axis=1, count=d)
            negative = np.unpackbits(reports[rows, 1 + self._width : 1 + self._width + used], axis=1, count=d)
            sums = nonzero.sum(axis=0, dtype=np.uint16).astype(np.int64)
            sums -= 2 * negative.sum(axis=0, dtype=np.uint16).astype(np.int64)
            statistic[self._offsets[j] : self._offsets[j + 1]] += sums
        return statistic

    # ------------------------------------------------------------------ estimation
    def coefficients(self, aggregator: Aggregator) -> list[np.ndarray]:
        r"""Unbiased :math:`a_{jk}` of eq. 57 for ``j = 0 .. J`` (zeros for a level with no report)."""
        aggregator._check_protocol(self)
        counts = aggregator.statistic[: self._levels + 1]
        out = []
        for j in range(self._levels + 1):
            sums = aggregator.statistic[self._offsets[j] : self._offsets[j + 1]].astype(np.float64)
            n_j = int(counts[j])
            out.append(2.0 ** (j / 2) * sums / (n_j * self._signal[j]) if n_j else np.zeros(int(self._sizes[j])))
        return out

    def _estimate(self, aggregator, *, postprocess: str = "clip"):
        """Bin masses on the 2^(J+1) fine bins.

        ``postprocess``: ``"clip"`` (sec. 4.7, eq. 68-69 with the cell's own value),
        ``"clip-paper"`` (eq. 69 read literally) or ``"norm-sub"`` (Norm-Sub of the raw
        eq. 67 masses).
        """
        postprocess = postprocess or "clip"  # None: the default (estimate_options checked any other value)
        coefficients = self.coefficients(aggregator)
        bins = 2 ** (self._levels + 1)
        if postprocess == "norm-sub":
            masses = _postprocess.apply("norm-sub", reconstruct_density(coefficients, clip=None) / bins)
        else:
            masses = reconstruct_density(coefficients, clip="cell" if postprocess == "clip" else "paper") / bins
        return self._distribution(
            masses,
            aggregator=aggregator,
            postprocess=postprocess,
            levels=self._levels,
            level_counts=aggregator.statistic[: self._levels + 1].copy(),
            coefficients=coefficients,
        )

    # ------------------------------------------------------------------ channel
    def _level_outputs(self):
        return [enumerate_outputs(int(d), int(m)) for d, m in zip(self._sizes, self._subset_sizes)]

    @validate_params({}, relations=(VALUES_GIVEN,))
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Exact ``P[i, (j, y)] = w_j p_Q(y | v_j(x_i))`` (eq. 45), levels in order, ``y`` by ternary code.

        The level is drawn with probability :math:`w_j` (``assignment="random"``; under
        ``"fixed"`` each level's conditional law is the same).  Only for ``levels <= 3``.
        """
        if self._levels > _CHANNEL_MAX_LEVELS:
            raise InvalidParameterError(
                f"{self.display_name}.channel enumerates the outputs only for 'levels' <= {_CHANNEL_MAX_LEVELS}. "
                f"Got levels={self._levels}."
            )
        bins = fine_bins(self._check_values(values), self._levels)
        blocks = []
        for j, outputs in enumerate(self._level_outputs()):
            cells, signs = level_code(bins, j, self._levels)
            blocks.append(self._weights[j] * realized_output_probabilities(outputs, cells, signs, self.epsilon))
        return np.concatenate(blocks, axis=1)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        """Column of :meth:`channel` of each (valid) report."""
        reports, invalid = self.check_reports(reports)
        bad = np.zeros(reports.shape[0], dtype=bool)
        for mask in invalid.values():
            bad |= mask
        if bad.any():
            raise MalformedReportError(
                f"{self.display_name}.report_index got {int(bad.sum())} invalid report(s); the first at row "
                f"{int(np.flatnonzero(bad)[0])}."
            )
        if self._levels > _CHANNEL_MAX_LEVELS:
            raise InvalidParameterError(
                f"{self.display_name}.report_index needs 'levels' <= {_CHANNEL_MAX_LEVELS}. Got {self._levels}."
            )
        d_max = int(self._sizes[-1])
        nonzero = np.unpackbits(reports[:, 1 : 1 + self._width], axis=1, count=d_max).astype(np.int64)
        negative = np.unpackbits(reports[:, 1 + self._width :], axis=1, count=d_max).astype(np.int64)
        digits = nonzero * (1 - 2 * negative) + 1  # y_k + 1 in {0, 1, 2}
        levels = reports[:, 0].astype(np.int64)
        out = np.empty(reports.shape[0], dtype=np.int64)
        offset = 0
        for j, outputs in enumerate(self._level_outputs()):
            d = int(self._sizes[j])
            powers = 3 ** np.arange(d, dtype=np.int64)
            table = (outputs.astype(np.int64) + 1) @ powers  # sorted ternary codes
            rows = levels == j
            out[rows] = offset + np.searchsorted(table, digits[rows, :d] @ powers)
            offset += table.size
        return out


def _as_words(bitmaps: np.ndarray) -> np.ndarray:
    """A (n, W) uint8 bitmap block as contiguous uint64 words when W is a multiple of 8 (fewer ops)."""
    block = np.ascontiguousarray(bitmaps)
    return block.view(np.uint64) if block.shape[1] % 8 == 0 else block
