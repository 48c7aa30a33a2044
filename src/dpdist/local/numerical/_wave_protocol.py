r"""Shared client, aggregator and EM/EMS estimator of the wave protocols ``sw`` and ``gw`` (paper 003).

Paper 003 (Li et al., SIGMOD 2020), sec. 5.  A wave
protocol holds a *mechanism* -- :class:`~._wave_grid.OutputGrid` (a wave over
``[-b, 1+b]`` cut into public output buckets, "randomize before bucketize") or
:class:`~._wave_discrete.DiscreteSquareWave` ("bucketize before randomize") --
with the same four operations: ``sample`` (bucket index per user),
``point_masses`` (the exact channel), ``transition_matrix`` (input bins to
output buckets) and ``buckets``.  Reports are output-bucket indices, the
aggregator statistic is the count of each bucket, and the estimate is the
EM or EMS reconstruction of Alg. 1 (:mod:`dpdist.local._em`) on ``bins`` input bins.
"""

from __future__ import annotations

import math
from typing import Any, Callable, ClassVar

import numpy as np

from ..._types import ArrayLike
from ..._validation import Boolean, Integer, Interval, Optional, Options, check_options, check_param, validate_params
from .._em import expectation_maximization, expectation_maximization_rows
from .._protocol import ProtocolTags
from .._report_kinds import ItemReports
from ._base import VALUES_GIVEN, BinnedProtocol, NumericalProtocol
from ._wave_operators import transition_operator

__all__ = ["WaveProtocol", "MAX_BINS"]

#: Largest number of input bins / output buckets: the dense transition matrix
#: of 4096 x 4096 float64 takes 128 MiB.
MAX_BINS = 4096

#: Default iteration cap of EM / EMS (the paper's stopping rule normally ends far earlier).
MAX_ITERATIONS = 10_000


class WaveProtocol(BinnedProtocol):
    """Base of the wave protocols; subclasses build ``self._mechanism`` in :meth:`_setup`."""

    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)

    tags: ClassVar[ProtocolTags] = ProtocolTags(
        kind="numerical", finite_channel=True, exact_simulate=False, unbiased=False
    )
    @property
    def statistic_total_per_report(self) -> int:
        """1: a histogram of the reported output buckets."""
        return 1
    _constraints = {
        **NumericalProtocol._constraints,
        "bins": Integer(low=2, high=MAX_BINS),
        "output_bins": Optional(Integer(low=2, high=MAX_BINS)),
        "b": Optional(Interval(0.0, math.inf, closed="neither")),
    }
    _defaults = {**NumericalProtocol._defaults, "bins": 1024, "output_bins": None, "b": None}
    estimate_options = {
        "method": Options(("ems", "em")),
        "tolerance": Interval(0.0, math.inf, closed="neither"),
        "max_iterations": Integer(low=1),
        "accelerate": Boolean(),
    }

    # ------------------------------------------------------------------ public parameters
    @property
    def output_bins(self) -> int:
        """Number of output buckets a report indexes."""
        return self._mechanism.buckets

    @property
    def b(self) -> float:
        """Half-width of the wave as a fraction of the bounds' width (after any rounding)."""
        return self._half_width

    # ------------------------------------------------------------------ client side
    def _privatize(self, values, rng):
        reports = np.empty(values.size, dtype=self._report_dtype)
        for start in range(0, values.size, self._privatize_chunk):  # bounded temporaries
            stop = start + self._privatize_chunk
            reports[start:stop] = self._mechanism.sample(values[start:stop], rng)
        return reports

    _privatize_chunk: ClassVar[int] = 1 << 20

    def _finish_setup(self, mechanism, half_width: float) -> None:
        self._mechanism = mechanism
        self._half_width = float(half_width)
        self._operator: Any = None

    # ------------------------------------------------------------------ server side
    @property
    def statistic_size(self) -> int:
        return self._mechanism.buckets

    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return self._mechanism.client_design()

    def _report_format(self):
        return ItemReports(self._mechanism.buckets)

    def _accumulate(self, reports):
        return np.bincount(reports.astype(np.intp, copy=False), minlength=self._mechanism.buckets).astype(np.int64)

    @validate_params({}, owner="SW/GW/OPM.channel", relations=(VALUES_GIVEN,))
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """``P[k, j] = Pr[report j | input values[k]]`` for values in ``bounds`` (exact)."""
        return self._mechanism.point_masses(self._check_values(values))

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)

    def transition_matrix(self) -> np.ndarray:
        """``M[j, i] = Pr[report j | input uniform on input bin i]``, shape ``(output_bins, bins)``."""
        return self._mechanism.transition_matrix()

    @property
    def _smoothing(self) -> bool | Callable[[np.ndarray], np.ndarray]:
        """EMS's smoothing step: True for the (1, 2, 1)/4 smoothing with renormalized boundary rows
        (:func:`dpdist.local._em.smooth`), or a map (the circular protocol's wraps around)."""
        return True

    @property
    def _operator_name(self) -> str:
        """How EM multiplies by the transition matrix (``details["operator"]``)."""
        return "toeplitz-fft" if self._mechanism.toeplitz else "banded"

    def _transition_operator(self):
        if self._operator is None:  # built once; the protocol is immutable
            constant, band = self._mechanism.transition_parts()
            self._operator = transition_operator(constant, band, toeplitz=self._mechanism.toeplitz)
        return self._operator

    # ------------------------------------------------------------------ estimation
    def _em_settings(self, method, tolerance, max_iterations, accelerate, options) -> tuple[str, float, int]:
        """The checked ``(method, tolerance, max_iterations)`` of :meth:`_estimate`'s options (``accelerate`` checked)."""
        owner = f"{self.display_name}.estimate"
        check_options(owner, options, self.estimate_options)  # the others: unknown names, refused naming the table's
        method = check_param(owner, "method", method, Options(("ems", "em")))
        default_tolerance = 1e-3 if method == "ems" else 1e-3 * math.exp(min(self.epsilon, 700.0))
        tolerance = check_param(
            owner, "tolerance", default_tolerance if tolerance is None else tolerance, Interval(0.0, math.inf)
        )
        max_iterations = check_param(owner, "max_iterations", max_iterations, Integer(low=1))
        check_param(owner, "accelerate", accelerate, self.estimate_options["accelerate"])
        return method, tolerance, max_iterations

    def _bin_masses_estimator(self, options: dict[str, Any]) -> Callable[[np.ndarray, int], np.ndarray] | None:
        """Plain EM (``method="em"``) of a block of statistics, one row of bin masses each, the same numbers as
        :meth:`_estimate`'s (:func:`dpdist.local._em.expectation_maximization_rows`), when the transition operator
        has row products (the banded one); None otherwise (EMS, or the FFT operator)."""
        settings = {"method": "ems", "tolerance": None, "max_iterations": MAX_ITERATIONS, "accelerate": True, **options}
        accelerate = settings.pop("accelerate")
        method, tolerance, max_iterations = self._em_settings(
            settings.pop("method"), settings.pop("tolerance"), settings.pop("max_iterations"), accelerate, settings
        )
        operator = self._transition_operator()
        if method != "em" or not hasattr(operator, "matvec_rows"):
            return None
        return lambda statistics, n: expectation_maximization_rows(
            statistics, operator, tolerance=tolerance, max_iterations=max_iterations, accelerate=accelerate,
            stopping="change",
        )

    def _estimate(
        self, aggregator, *, method="ems", tolerance=None, max_iterations=MAX_ITERATIONS, accelerate=True, **options
    ):
        r"""EMS (default) or EM reconstruction of the input histogram (paper 003, Alg. 1).

        Parameters
        ----------
        method : {"ems", "em"}
            EM with the (1, 2, 1)/4 smoothing step after each M-step, or plain EM.
        tolerance : float, optional
            :math:`\tau` of the stopping rule :math:`|L^{(t+1)} - L^{(t)}| < \tau` on the
            total log-likelihood; default the paper's :math:`10^{-3}` for EMS and
            :math:`10^{-3} e^\varepsilon` for EM.
        max_iterations : int
            Iteration cap (default 10,000); ``details["converged"]`` tells whether
            the stopping rule or the cap ended the run.
        accelerate : bool
            SQUAREM acceleration of the same EM/EMS map with the same stopping rule
            (default True; :func:`dpdist.local._em.expectation_maximization`): same fixed
            point, fewer iterations.

        Returns
        -------
        Distribution
            ``bins`` equal bins over ``bounds``; ``details`` holds ``method``,
            ``iterations``, ``converged``, ``tolerance``, ``loglikelihood`` (the trace,
            one value per iterate), ``b``, ``output_bins`` and ``operator``.
        """
        method, tolerance, max_iterations = self._em_settings(method, tolerance, max_iterations, accelerate, options)
        operator = self._transition_operator()
        result = expectation_maximization(
            aggregator.statistic,
            operator,
            smoothing=self._smoothing if method == "ems" else False,
            tolerance=tolerance,
            max_iterations=max_iterations,
            accelerate=accelerate,
        )
        return self._distribution(
            result.probabilities,
            aggregator=aggregator,
            method=method,
            iterations=result.iterations,
            converged=result.converged,
            tolerance=result.tolerance,
            loglikelihood=result.loglikelihood,
            accelerated=result.accelerated,
            b=self.b,
            output_bins=self.output_bins,
            operator=self._operator_name,
        )
