r"""CFO with binning, ``binning`` (paper 003 sec. 4.1; paper 000 sec. 6, "Binning-d").

The bounds are cut into ``bins`` equal-width bins; each user reports the index
of their bin through a categorical frequency oracle (CFO).  The oracle is
chosen by the variance rule of paper 003 sec. 2.1 (``oracle="auto"``: GRR when
:math:`c < 3e^\varepsilon + 2`, else OUE, as in paper 000's Binning-d; OLH has
the same variance as OUE), or named explicitly.  The unbiased bin frequencies
are post-processed by Norm-Sub (paper 003 sec. 4.1, citing Wang et al. NDSS
2020) and read as a density uniform within each bin.

Reports, aggregator statistic and channel are those of the inner oracle applied
to the bin of each value, so the privacy guarantee is the oracle's.
"""

from __future__ import annotations

from typing import Any, Callable, cast

import numpy as np

from ... import postprocess as _postprocess
from ..._types import ArrayLike
from ..._validation import Described, Integer, Options, validate_params
from .._aggregator import Aggregator
from .._docs import shared_parameters
from .._protocol import ProtocolTags, register
from .._report_kinds import EmbeddedReports
from ..frequency._oracle import FrequencyOracle
from ._base import VALUES_GIVEN, BinnedProtocol, NumericalProtocol, unit_bin_index
from ._composite import ORACLES, inner_aggregator, make_oracle, unbiased_rows

__all__ = ["Binning", "DISTRIBUTION_POSTPROCESS", "DISTRIBUTION_POSTPROCESS_RULE"]

#: post-processings that turn unbiased bin frequencies into a valid distribution
DISTRIBUTION_POSTPROCESS = ("norm-sub", "simplex", "clip-normalize")


#: the ``postprocess`` estimate option of the protocols that estimate a Distribution (their ``estimate_options``)
DISTRIBUTION_POSTPROCESS_RULE = Described(
    Options(DISTRIBUTION_POSTPROCESS),
    f"one of {list(DISTRIBUTION_POSTPROCESS)} (a Distribution needs non-negative masses summing to 1; use "
    ".frequencies(aggregator) for the raw unbiased estimate)",
)


@register
@shared_parameters
class Binning(BinnedProtocol):
    """Categorical frequency oracle over equal-width bins of ``bounds``.

    Parameters
    ----------
    {epsilon}
    bins : int
        Number of bins ``c >= 2`` (paper 003 uses 16, 32, 64; paper 000 8 to 64).
    oracle : {"auto", "grr", "oue", "olh"}
        Inner oracle; "auto" picks GRR when ``bins < 3 e^eps + 2``, else OUE.
    {bounds}

    Reports are the inner oracle's reports of the bin index.
    """

    name = "binning"
    summary = "CFO with binning: GRR/OUE/OLH over equal-width bins, Norm-Sub, uniform within bins"
    tags = ProtocolTags(kind="numerical", finite_channel=True, exact_simulate=True, unbiased=False)
    _constraints = {
        **NumericalProtocol._constraints,
        "bins": Integer(low=2, high=2**20),
        "oracle": Options(ORACLES),
    }
    _defaults = {**NumericalProtocol._defaults, "bins": 32, "oracle": "auto"}
    estimate_options = {
        "postprocess": DISTRIBUTION_POSTPROCESS_RULE,
        **{name: FrequencyOracle.estimate_options[name]
           for name in ("estimator", "tolerance", "max_iterations", "accelerate", "bootstrap", "level", "rng")},
    }

    def _setup(self):
        self._oracle = make_oracle(self.display_name, self._params["oracle"], self.bins, self.epsilon)

    @property
    def statistic_dtype(self) -> type:
        """The inner oracle's (counts, or float sums for some oracles)."""
        return self._oracle.statistic_dtype

    @property
    def oracle(self) -> FrequencyOracle:
        """The inner categorical oracle (a registered frequency protocol over ``bins`` items)."""
        return self._oracle

    @property
    def statistic_size(self) -> int:
        return self._oracle.statistic_size

    def bin_of(self, values: ArrayLike) -> np.ndarray:
        """The bin index of each value (validated, in ``bounds``)."""
        return unit_bin_index(self._check_values(values), self.bins)

    # ------------------------------------------------------------------ client
    def _privatize(self, values, rng):
        return self._oracle.privatize(unit_bin_index(values, self.bins), rng=rng)

    # ------------------------------------------------------------------ server
    def _report_format(self):
        return EmbeddedReports(self._oracle.report_format, self._oracle.name)  # the oracle's reports

    def check_reports(self, reports: Any) -> tuple[Any, dict[str, np.ndarray]]:
        """The oracle's reports, checked by the oracle (its format's rows, then its own rules)."""
        return self._oracle.check_reports(reports)

    def _accumulate(self, reports):
        return self._oracle.statistic(reports)

    def _simulate(self, values, rng):
        return self._oracle._simulate(unit_bin_index(values, self.bins), rng)  # valid bins: no re-validation

    @property
    def statistic_total_per_report(self) -> int | None:
        """The inner oracle's (the statistic is the oracle's)."""
        return self._oracle.statistic_total_per_report

    def _check_statistic(self, statistic, n):
        return self._oracle._check_statistic(statistic, n)

    def frequencies(self, aggregator: Aggregator, **options: Any) -> Any:
        """The inner oracle's bin-frequency estimate (a ``FrequencyEstimate``; unbiased by default).

        ``options`` go to the oracle's ``estimate`` (e.g. ``estimator="ibu"`` or ``"mle"``
        when the oracle is GRR, see :mod:`dpdist.local.frequency._exact_channel`).
        """
        aggregator._check_protocol(self)
        return self._oracle.estimate(inner_aggregator(self._oracle, aggregator.statistic, aggregator.n), **options)

    def _estimate(self, aggregator, *, postprocess: str = "norm-sub", estimator: str = "unbiased", **options):
        """Bin masses: the oracle's estimate post-processed by ``postprocess``.

        Parameters
        ----------
        postprocess : {"norm-sub", "simplex", "clip-normalize"}
            Norm-Sub by default (paper 003 sec. 4.1); it leaves the simplex-valued
            "ibu" and "mle" estimates unchanged.
        estimator : {"unbiased", "ibu", "mle"}
            The oracle's estimator; "ibu" (EM on the exact channel) and "mle" (closed
            form) need an oracle whose aggregate is its output histogram (GRR).
            Their options (``tolerance``, ``max_iterations``, ``accelerate``,
            ``bootstrap``, ``level``, ``rng``) are passed on.
        """
        postprocess = postprocess or "norm-sub"  # None: the default (estimate_options checked any other value)
        raw = self.frequencies(aggregator, estimator=estimator, **options)
        masses = _postprocess.apply(postprocess, raw.frequencies)
        key = "unbiased_frequencies" if estimator == "unbiased" else f"{estimator}_frequencies"
        return self._distribution(
            masses,
            aggregator=aggregator,
            oracle=self._oracle.name,
            postprocess=postprocess,
            estimator=estimator,
            frequency_variance=raw.variance,
            **{key: raw.frequencies},
        )

    def _linear_estimator(self, options: dict[str, Any]) -> Callable[[np.ndarray, int], np.ndarray] | None:
        """``details["unbiased_frequencies"]`` of a block of statistics (the oracle's unbiased estimate of each row),
        for the unbiased estimator; None for "ibu" and "mle", which keep no linear masses."""
        if options.get("estimator", "unbiased") != "unbiased":
            return None
        oracle = self._oracle
        return lambda statistics, n: unbiased_rows(oracle, statistics, np.full(len(statistics), n, dtype=np.int64))

    def variance(self, n: int, frequencies: ArrayLike | None = None) -> np.ndarray:
        """Variance of each bin's unbiased frequency estimate (the inner oracle's, eq. 1 for GRR)."""
        return self._oracle.variance(n, frequencies)

    # ------------------------------------------------------------------ channel
    @validate_params({}, relations=(VALUES_GIVEN,))
    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Exact ``P[i, y]``: the oracle's channel row of the bin of ``values[i]``."""
        return self._oracle.channel(None)[self.bin_of(cast("ArrayLike", values))]  # not None: VALUES_GIVEN

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return self._oracle.report_index(reports)
