r"""Pure frequency oracles: the shared estimator of every protocol with a support vector.

A protocol is *pure* (Wang et al., USENIX Security 2017) when there are
:math:`p^* > q^*` such that each report "supports" the user's true item with
probability :math:`p^*` and any other given item with probability :math:`q^*`.
With :math:`C_v` the number of reports supporting :math:`v` among :math:`n`,

.. math::

    \hat f_v = \frac{C_v / n - q^*}{p^* - q^*}, \qquad
    \operatorname{Var}[\hat f_v] = \frac{f_v p^*(1-p^*) + (1-f_v) q^*(1-q^*)}{n (p^* - q^*)^2}.

The significance threshold of Fang et al. (paper 001, eq. 6) zeroes estimates
below :math:`\Phi^{-1}(1-\alpha/d)\sqrt{\operatorname{Var}^*}`, with
:math:`\operatorname{Var}^*` the variance at :math:`f_v = 0`.
"""

from __future__ import annotations

import math
from statistics import NormalDist
from typing import ClassVar

import numpy as np

from ... import postprocess as _postprocess
from ..._validation import DOMAIN_SIZE, EPSILON, Interval, Options, check_integer_values, check_param
from ...estimates import FrequencyEstimate
from .._deconvolution import METHODS as DECONVOLUTION_METHODS
from .._protocol import LocalProtocol, ProtocolTags

__all__ = ["FrequencyOracle"]


class FrequencyOracle(LocalProtocol):
    """Base of pure categorical protocols over items ``0 .. domain_size - 1``.

    Subclasses define :meth:`support_probabilities` and the report format; the
    aggregator statistic is the support count of every item.
    """

    tags: ClassVar[ProtocolTags] = ProtocolTags(kind="frequency")
    #: Every report supports the same number of items (so the support counts sum
    #: to a constant and the noise spectrum has no power at frequency 0, paper 001).
    fixed_support_size: ClassVar[bool] = False
    _constraints = {"epsilon": EPSILON, "domain_size": DOMAIN_SIZE}
    estimate_options = {
        "postprocess": Options(tuple(_postprocess.METHODS)),
        "significance": Interval(0.0, 1.0, closed="neither"),
        "deconvolve": Options(DECONVOLUTION_METHODS),
    }
    estimate_delegate = "deconvolve"  # further options go to dpdist.local.deconvolution.deconvolve

    @property
    def domain_size(self) -> int:
        return self._params["domain_size"]

    @property
    def statistic_size(self) -> int:
        return self.domain_size

    def support_probabilities(self) -> tuple[float, float]:
        """``(p_star, q_star)``: probability that a report supports the true item / another item."""
        raise NotImplementedError

    def _check_values(self, values) -> np.ndarray:
        return check_integer_values(values, self.domain_size, owner=f"{self.display_name}.privatize")

    def _check_statistic(self, statistic, n):
        if np.any(statistic < 0) or np.any(statistic > n):
            return f"support counts must lie in [0, n={n}]"
        return None

    def support_counts(self, aggregator) -> np.ndarray:
        """Support count of every item (the vector :math:`g` of the convolution view)."""
        return aggregator.statistic.astype(np.float64)

    # ------------------------------------------------------------------ estimation
    def _estimate(
        self,
        aggregator,
        *,
        postprocess: str = "none",
        significance: float | None = None,
        **options,
    ) -> FrequencyEstimate:
        """Unbiased estimate, optionally thresholded and post-processed.

        Parameters
        ----------
        postprocess : str
            One of :data:`dpdist.postprocess.METHODS` ("none", "clip", "norm",
            "norm-sub", "base-pos", "simplex", "clip-normalize").
        significance : float, optional
            Level :math:`\\alpha` of the significance threshold (paper 001, eq. 6;
            0.05 is the usual choice): estimates below it become 0 before
            post-processing.
        deconvolve : str, optional
            A Wiener-filter deconvolution of the support vector (paper 001), see
            :mod:`dpdist.local.deconvolution`; further keyword options go to it.
        """
        deconvolve = options.pop("deconvolve", None)
        if options and deconvolve is None:
            raise _unknown_options(self, options)
        n = aggregator.n
        p_star, q_star = self.support_probabilities()
        support = self.support_counts(aggregator)
        if deconvolve is not None:
            from ..deconvolution import deconvolve as run_deconvolution

            frequencies, details = run_deconvolution(
                support, p_star, q_star, n, method=deconvolve, protocol=self, **options
            )
            details["variance"] = "of the plain unbiased estimator, not of the deconvolved one"
        else:
            frequencies = (support / n - q_star) / (p_star - q_star)
            details = {}
        variance = self.variance(n, np.clip(frequencies, 0.0, 1.0))
        if significance is not None:
            alpha = check_param(
                f"{self.display_name}.estimate", "significance", significance, Interval(0, 1, "neither")
            )
            threshold = NormalDist().inv_cdf(1 - alpha / self.domain_size) * math.sqrt(self.variance(n)[0])
            frequencies = np.where(frequencies >= threshold, frequencies, 0.0)
            details["significance_threshold"] = threshold
        frequencies = _postprocess.apply(postprocess, frequencies)
        return FrequencyEstimate(
            frequencies=frequencies,
            n=n,
            variance=variance,
            epsilon=self.epsilon,
            protocol=self.name,
            postprocess=postprocess,
            details=details,
            guarantee=self.guarantee,
        )

    def variance(self, n: int, frequencies=None) -> np.ndarray:
        """Analytic variance of each item's unbiased estimator for ``n`` users.

        ``frequencies=None`` gives the variance at :math:`f_v = 0` for every item
        (:math:`\\operatorname{Var}^*`, the usual approximation).
        """
        p, q = self.support_probabilities()
        f = np.zeros(self.domain_size) if frequencies is None else np.asarray(frequencies, dtype=np.float64)
        return (f * p * (1 - p) + (1 - f) * q * (1 - q)) / (n * (p - q) ** 2)


def _unknown_options(protocol, options):
    from ...errors import InvalidParameterError

    return InvalidParameterError(
        f"{protocol.display_name}.estimate got unknown option(s) {sorted(options)}; "
        "allowed: 'postprocess', 'significance', 'deconvolve'."
    )
