r"""Base of the mean-estimation protocols ``pm`` and ``sr`` (paper 003 sec. 2.2 and 6.3).

Both mechanisms work on :math:`v = 2(x - lo)/(hi - lo) - 1 \in [-1, 1]` and
report one of finitely many public outputs :math:`k`, decoded to a public value
:math:`g_k` with :math:`E[g_K \mid v] = v` (exactly, for every input).  The
aggregator statistic is the histogram of the outputs, so merging is exact
integer addition, and the mean estimate is
:math:`lo + (hi - lo)(\bar g + 1)/2`.

Variance (paper 003 sec. 6.3): "we randomly sample 50% of users to estimate
mean first.  The estimated mean is then broadcast to the remaining users.  Then
each user compares his secret value and the received estimated mean, and
reports the squared difference :math:`(v_i - \tilde\mu)^2`".  This needs two
rounds, so it is not one aggregator: :meth:`MeanProtocol.deviation_protocol`
builds the round-2 protocol (same mechanism and :math:`\varepsilon`, bounds
``(0, max(hi - c, c - lo)**2)`` around the broadcast centre :math:`c`), and
:meth:`MeanProtocol.estimate_mean_variance` runs both rounds on a population
(each user takes part in one round only, so the whole is
:math:`\varepsilon`-LDP).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from ..._rng import check_rng
from ..._types import ArrayLike, Seed
from ..._validation import Interval, check_param, check_real_values, validate_params
from ...errors import InvalidParameterError
from ...estimates import MeanEstimate, MeanVarianceEstimate
from .._protocol import ProtocolTags
from .._report_kinds import ItemReports
from ._base import VALUES_GIVEN, NumericalProtocol

__all__ = ["MeanProtocol"]

#: values per chunk when a channel matrix is formed for many inputs
_CHUNK = 4096


class MeanProtocol(NumericalProtocol):
    """A numerical protocol whose reports are indices of public decoded values (unbiased mean).

    Subclasses set in ``_setup``: ``self._decoded`` (decoded value :math:`g_k` of
    each output, on the [-1, 1] scale), and implement
    ``_unit_channel(v)`` (rows for inputs on [-1, 1]) and ``_sample(v, rng)``.
    """

    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)

    tags: ClassVar[ProtocolTags] = ProtocolTags(
        kind="numerical", finite_channel=True, exact_simulate=False, unbiased=False
    )
    @property
    def statistic_total_per_report(self) -> int:
        """1: a histogram of the reported outputs."""
        return 1
    _decoded: np.ndarray  # set by the subclass's _setup

    def _unit_channel(self, v: np.ndarray) -> np.ndarray:
        """``P[i, k]`` for inputs ``v`` on [-1, 1]."""
        raise NotImplementedError

    def _sample(self, v: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One report (an output index) of each input of ``v`` on [-1, 1]."""
        raise NotImplementedError

    @property
    def statistic_size(self) -> int:
        return int(self._decoded.size)

    @property
    def decoded_values(self) -> np.ndarray:
        """Public value of each output, on the [-1, 1] scale of the mechanism."""
        return self._decoded.copy()

    def _to_symmetric(self, unit: np.ndarray) -> np.ndarray:
        return 2.0 * unit - 1.0

    def _from_symmetric(self, value):
        lo, hi = self.bounds
        return lo + (hi - lo) * (np.asarray(value, dtype=np.float64) + 1.0) / 2.0

    # ------------------------------------------------------------------ client / server
    def _privatize(self, values, rng):
        return self._sample(self._to_symmetric(values), rng)

    def _report_format(self):
        return ItemReports(self._decoded.size)

    def _accumulate(self, reports):
        return np.bincount(reports, minlength=self._decoded.size).astype(np.int64)

    @validate_params({}, owner="PM/SR.channel", relations=(VALUES_GIVEN,))
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Exact ``P[i, k] = Pr[output k | values[i]]`` (outputs ordered as ``decoded_values``)."""
        return self._unit_channel(self._to_symmetric(self._check_values(values)))

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)

    # ------------------------------------------------------------------ estimation
    def _estimate(self, aggregator) -> MeanEstimate:
        """Unbiased mean with its estimated variance (sample variance of the decoded reports / n)."""
        counts = aggregator.statistic.astype(np.float64)
        n = aggregator.n
        mean = float(counts @ self._decoded) / n
        spread = float(counts @ (self._decoded - mean) ** 2) / max(n - 1, 1)
        half_width = (self.bounds[1] - self.bounds[0]) / 2.0
        return MeanEstimate(
            mean=float(self._from_symmetric(mean)),
            variance=spread * half_width**2 / n,
            n=n,
            bounds=self.bounds,
            epsilon=self.epsilon,
            method=self.name,
            guarantee=self.guarantee,
        )

    def report_variance(self, values: ArrayLike) -> np.ndarray:
        """Exact variance of one user's decoded report (in squared units of ``bounds``) for each value."""
        v = self._to_symmetric(self._check_values(values))
        out = np.empty(v.size)
        for start in range(0, v.size, _CHUNK):
            chunk = v[start : start + _CHUNK]
            out[start : start + _CHUNK] = self._unit_second_moment(chunk) - chunk**2
        return out * ((self.bounds[1] - self.bounds[0]) / 2.0) ** 2

    def _unit_second_moment(self, v: np.ndarray) -> np.ndarray:
        return self._unit_channel(v) @ self._decoded**2

    def mean_variance(self, values: ArrayLike) -> float:
        """Exact variance of the mean estimate over ``values`` (:math:`\\sum_i \\mathrm{Var}_i / n^2`)."""
        variance = self.report_variance(values)
        return float(variance.sum() / variance.size**2)

    # ------------------------------------------------------------------ two-phase variance
    def deviation_protocol(self, center: float) -> "MeanProtocol":
        """Round-2 protocol for the squared deviations ``(x - center)**2`` (paper 003 sec. 6.3).

        Same mechanism and parameters, bounds ``(0, max(hi - c, c - lo)**2)``
        with ``c`` the centre clipped into ``bounds``.
        """
        lo, hi = self.bounds
        center = check_param(f"{self.display_name}.deviation_protocol", "center", center, Interval())
        center = min(max(center, lo), hi)
        radius = max(hi - center, center - lo)
        return type(self)(**{**self._params, "bounds": (0.0, radius**2)})

    def estimate_mean_variance(
        self, values: ArrayLike, rng: Seed = None, *, mean_fraction: float = 0.5, clip: bool = True,
        missing: str | float = "refuse",
    ) -> MeanVarianceEstimate:
        """Run the two-phase protocol of paper 003 sec. 6.3 on a population.

        Parameters
        ----------
        values : array_like
            The users' values in ``bounds`` (at least 2).
        rng : None, int or Generator
            Randomness of the split and of both rounds.
        mean_fraction : float
            Fraction of users, chosen uniformly at random, who estimate the mean
            in round 1 (0.5 in the paper); the others report squared deviations.
        clip : bool
            As in :meth:`privatize`: values outside ``bounds`` are clipped to them (default),
            or refused (``False``).
        missing : {"refuse", "drop"} or float
            As in :meth:`privatize` (a user without a value sends no report with ``"drop"``).
        """
        owner = f"{self.display_name}.estimate_mean_variance"
        originals = check_real_values(self._clip_for(values, clip, "estimate_mean_variance", missing), self.bounds,
                                      owner=owner)
        fraction = check_param(owner, "mean_fraction", mean_fraction, Interval(0, 1, closed="neither"))
        if originals.size < 2:
            raise InvalidParameterError(
                f"The 'values' argument of {owner} must hold at least 2 values. Got {originals.size}."
            )
        generator = check_rng(rng, owner=owner)
        order = generator.permutation(originals.size)
        first = min(max(int(round(fraction * originals.size)), 1), originals.size - 1)
        round_one = self.estimate(self.simulate(originals[order[:first]], rng=generator))
        lo, hi = self.bounds
        center = min(max(round_one.mean, lo), hi)
        second = self.deviation_protocol(center)
        squared = np.minimum((originals[order[first:]] - center) ** 2, second.bounds[1])
        round_two = second.estimate(second.simulate(squared, rng=generator))
        return MeanVarianceEstimate(
            mean=round_one.mean,
            var=round_two.mean,
            center=center,
            mean_estimate=round_one,
            deviation_estimate=round_two,
        )
