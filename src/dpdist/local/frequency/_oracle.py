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
from typing import Any, Callable, ClassVar

import numpy as np

from ... import postprocess as _postprocess
from ..._types import ArrayLike
from ..._validation import (
    DOMAIN_SIZE,
    EPSILON,
    Boolean,
    Described,
    Integer,
    Interval,
    ItemIds,
    Labels,
    NoneWhen,
    Optional,
    Options,
    RandomSource,
    Relation,
    SameSize,
    check_allocation,
    check_integer_values,
    check_param,
    check_relations,
    label_list,
    refused_values,
    validate_params,
)
from ...errors import InvalidParameterError, OutOfDomainError
from ...estimates import FrequencyEstimate
from .._aggregator import Aggregator
from .._deconvolution import METHODS as DECONVOLUTION_METHODS
from .._protocol import LocalProtocol, ProtocolTags
from . import _exact_channel
from ._exact_channel import dense_operator
from ._recovery import MAX_FAKE_FRACTION, RECOVERY_METHODS, recover_frequencies

__all__ = ["FrequencyOracle"]

#: The options of ``recover="ldprecover"``, refused with ``recover="none"``.
_RECOVERY_OPTIONS = tuple(NoneWhen(name, "recover", "none", why="an option of recover='ldprecover'")
                          for name in ("fake_fraction", "targets"))


class FrequencyOracle(LocalProtocol):
    """Base of pure categorical protocols over items ``0 .. domain_size - 1``.

    Subclasses define :meth:`support_probabilities` and the report format; the
    aggregator statistic is the support count of every item.

    Every frequency protocol takes an optional public label domain ``labels``
    (a list of distinct strings; item ``i`` is ``labels[i]``, and ``domain_size``
    defaults to its length).  The labels are part of :meth:`config`, so a report
    file, a state and any client (e.g. a JavaScript one) read the same domain;
    :meth:`encode` maps labels to items, ``privatize`` and ``simulate`` take
    labels or items, and estimates carry the labels.  Reports are always items.
    """

    tags: ClassVar[ProtocolTags] = ProtocolTags(kind="frequency")
    #: The aggregator's statistic is the histogram of the channel's outputs (column order of
    #: ``channel()``), so the exact-channel estimators ``"ibu"`` and ``"mle"`` apply.
    output_histogram: ClassVar[bool] = False
    _constraints = {"epsilon": EPSILON, "domain_size": DOMAIN_SIZE, "labels": Optional(Labels())}
    #: Bytes per item of the largest array that one report, the aggregate or the estimate needs
    #: (0: none grows with ``domain_size``); checked against ``MAX_ALLOCATION_BYTES`` when built.
    _bytes_per_item: ClassVar[int] = 8
    #: what that array is, for the error message
    _largest_array: ClassVar[str] = "the aggregate and the estimate (an int64 count, a float64 estimate per item)"
    estimate_options = {
        "estimator": Options(("unbiased", "ibu", "mle")),
        "postprocess": Options(tuple(_postprocess.METHODS)),
        "significance": Interval(0.0, 1.0, closed="neither"),
        "deconvolve": Options(DECONVOLUTION_METHODS),
        # the exact-channel estimators' options (checked for applicability in _exact_channel)
        "tolerance": Interval(0.0, math.inf, closed="neither"),
        "max_iterations": Integer(low=1),
        "accelerate": Boolean(),
        "bootstrap": Integer(low=0, high=100_000),
        "level": Interval(0.0, 1.0, closed="neither"),
        "rng": RandomSource(),
        # recovery from poisoning (LDPRecover, ._recovery): the estimate of the genuine users alone
        "recover": Options(RECOVERY_METHODS),
        "fake_fraction": Interval(0.0, MAX_FAKE_FRACTION, closed="left"),
        "targets": ItemIds(),
    }
    _relations: ClassVar[tuple[Relation, ...]] = (
        SameSize("labels", "domain_size", counterexample={"domain_size": 3, "labels": ["a", "b"]}),
    )
    estimate_delegate: ClassVar[str | None] = "deconvolve"  # further options go to dpdist.local.deconvolution.deconvolve

    def __init__(self, **params: Any):
        params.setdefault("labels", None)
        labels = label_list(params["labels"])  # a list, a tuple, an array or a Series of labels alike
        if labels is not None:
            params["labels"] = labels
            params.setdefault("domain_size", len(labels))
        elif params["labels"] is not None and "domain_size" not in params:  # the labels are what is wrong, not a size
            check_param(self.display_name, "labels", params["labels"], Labels())
        super().__init__(**params)
        labels = self._params.pop("labels") if self._params["labels"] is None else self._params["labels"]
        if labels is not None:  # one per item: the table's relation
            array = np.array(labels, dtype=np.str_)
            self._label_order = np.argsort(array, kind="stable")
            self._sorted_labels = array[self._label_order]

    def _item_bytes(self) -> int:
        """:attr:`_bytes_per_item`, or a value computed from the parameters (before ``_setup``)."""
        return self._bytes_per_item

    def _check_memory(self) -> None:
        check_allocation(self.display_name, "domain_size", self.domain_size, self._item_bytes(), self._largest_array)

    @property
    def domain_size(self) -> int:
        return self._params["domain_size"]

    @property
    def fixed_support_size(self) -> bool:
        """Every report supports the same number of items: ``tags.fixed_support_size``."""
        return self.tags.fixed_support_size

    @property
    def labels(self) -> tuple[str, ...] | None:
        """The public label of each item (``None``: the items are just ``0 .. d-1``).

        Only a protocol with labels has the ``labels`` key in its :meth:`config` and ``params``.
        """
        return self._params.get("labels")

    @validate_params({"on_unknown": Options(("raise", "drop"))})
    def encode(self, values: ArrayLike, *, on_unknown: str = "raise") -> np.ndarray:
        """Items (int64) of labelled values: ``labels.index(value)``, vectorized.

        Parameters
        ----------
        values : array_like of str
            Values from the label domain (non-string cells are compared by ``str()``).
        on_unknown : {"raise", "drop"}
            A value outside the label domain raises :class:`~dpdist.errors.OutOfDomainError`
            naming it (``"raise"``), or is dropped (``"drop"``: the result is then
            shorter than ``values`` by the number of unknown values).
        """
        owner = f"{self.display_name}.encode"
        if self.labels is None:
            raise InvalidParameterError(
                f"{owner} needs a label domain: build the protocol with labels=[...]. It has none."
            )
        array = np.asarray(values)
        if array.ndim == 0:
            array = array.reshape(1)
        if array.ndim != 1:
            raise OutOfDomainError(f"The 'values' argument of {owner} must be 1-D. Got shape {array.shape} instead.")
        if array.dtype.kind != "U":
            array = array.astype(np.str_)
        if array.size == 0:
            return np.zeros(0, dtype=np.int64)
        position = np.minimum(np.searchsorted(self._sorted_labels, array), self.domain_size - 1)
        known = self._sorted_labels[position] == array
        items = self._label_order[position].astype(np.int64)
        if known.all():
            return items
        if on_unknown == "raise":
            raise refused_values(OutOfDomainError, f"The 'values' argument of {owner} must hold labels of the "
                                 f"protocol's label domain ({self.domain_size} labels, e.g. {self.labels[0]!r})",
                                 int((~known).sum()), "that are no label", int(np.flatnonzero(~known)[0]))
        return items[known]

    @property
    def statistic_size(self) -> int:
        return self.domain_size

    def support_probabilities(self) -> tuple[float, float]:
        """``(p_star, q_star)``: probability that a report supports the true item / another item."""
        raise NotImplementedError

    def support_range(self) -> tuple[float, float]:
        """Smallest and largest amount one report adds to an item's support count: ``(0, 1)`` for a pure oracle.

        The support count is a sum of one bounded term per report, the statistic a
        confidence sequence (:mod:`dpdist.confidence_sequences`) is built on; a
        protocol whose support count is an affine correction of report counts
        (dBitFlipPM) overrides this.
        """
        return 0.0, 1.0

    def _check_values(self, values) -> np.ndarray:
        if self.labels is not None:
            array = np.asarray(values)
            if array.dtype.kind in "USO":
                return self.encode(array)
        return check_integer_values(values, self.domain_size, owner=self._values_owner())

    def estimate(self, data: Aggregator | ArrayLike, **options: Any) -> Any:
        """Estimate from an :class:`Aggregator` or a batch of reports; carries the protocol's labels."""
        result = super().estimate(data, **options)
        if self.labels is not None and isinstance(result, FrequencyEstimate):
            result = result.with_labels(self.labels)
        return result

    def _check_statistic(self, statistic, n):
        if np.any(statistic < 0) or np.any(statistic > n):
            return f"support counts must lie in [0, n={n}]"
        return None

    def maximum_likelihood(self, counts: np.ndarray) -> np.ndarray:
        """The maximum-likelihood frequencies in closed form, for a protocol declaring ``tags.closed_form_mle``."""
        raise NotImplementedError(f"{self.display_name} has no closed-form maximum likelihood (tags.closed_form_mle).")

    def _maximum_likelihood_rows(self, counts: np.ndarray) -> np.ndarray:
        """:meth:`maximum_likelihood` of each row of a block of report counts (the bootstrap's redraws): a call per
        row, unless the protocol computes them in one pass (GRR)."""
        return np.array([self.maximum_likelihood(row) for row in counts])

    def support_counts(self, aggregator: Aggregator) -> np.ndarray:
        """Support count of every item (the vector :math:`g` of the convolution view)."""
        return aggregator.statistic.astype(np.float64)

    # ------------------------------------------------------------------ estimation
    def channel_operator(self) -> Any:
        """Products with the channel, :math:`f \\mapsto Q^\\top f` (``matvec``) and its adjoint.

        Dense by default; protocols override it with a structured operator.
        """

        return dense_operator(self)

    def _estimate(
        self,
        aggregator,
        *,
        estimator: str = "unbiased",
        postprocess: str = "none",
        significance: float | None = None,
        **options,
    ) -> FrequencyEstimate:
        """Unbiased, IBU or maximum-likelihood estimate, optionally thresholded and post-processed.

        Parameters
        ----------
        estimator : {"unbiased", "ibu", "mle"}
            ``"unbiased"`` (default): :math:`(C_v/n - q^*)/(p^* - q^*)`.  ``"ibu"``: EM on
            the exact likelihood of the aggregate, for protocols whose aggregate is the
            output histogram (:mod:`dpdist.local.frequency._exact_channel`; options
            ``tolerance`` (default 1: the certified gap to the maximum log-likelihood), ``max_iterations``
            (10,000), ``accelerate`` (SQUAREM, default True)).  ``"mle"``: the closed-form
            maximum likelihood (GRR).  The last two lie in the simplex.
        bootstrap : int, optional
            For "ibu"/"mle": number of parametric-bootstrap replicates (default 0, none);
            ``variance`` becomes the bootstrap variance and ``details["interval"]`` the
            percentile interval at ``level`` (default 0.95); ``rng`` seeds the bootstrap.
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
        recover : {"none", "ldprecover"}
            ``"ldprecover"``: the genuine users' frequencies of a campaign fake users may have
            poisoned (:func:`dpdist.local.recover_frequencies`; Sun et al., ICDE 2024), with
            ``fake_fraction`` when the fraction of fake reports is known and ``targets`` (item
            ids) when the attacked items are.  Alone: no other option.
        """

        estimator = estimator or "unbiased"  # None: the default (estimate_options checked any other value)
        recover = options.pop("recover", None) or "none"
        fake_fraction = options.pop("fake_fraction", None)
        targets = options.pop("targets", None)
        if recover != "none" or fake_fraction is not None or targets is not None:
            return self._recovered_estimate(recover, fake_fraction, aggregator, estimator, postprocess, significance,
                                            options, targets=targets)
        deconvolve = options.pop("deconvolve", None)
        settings = _exact_channel.check_estimator_options(self, estimator, options)
        if options and deconvolve is None:
            raise _unknown_options(self, options, estimator=estimator)
        if estimator != "unbiased":
            if deconvolve is not None or significance is not None:
                raise _unknown_options(self, {"deconvolve" if deconvolve is not None else "significance": 0},
                                       estimator=estimator)
            return self._estimate_on_channel(aggregator, estimator, postprocess, settings)
        return self._unbiased_estimate(aggregator, postprocess, significance, deconvolve, options)

    def _unbiased_estimate(self, aggregator, postprocess: str, significance: float | None, deconvolve: str | None,
                           options: dict) -> FrequencyEstimate:
        """The unbiased estimate :math:`(C_v/n - q^*)/(p^* - q^*)` (or its Wiener deconvolution), thresholded at
        ``significance`` and post-processed; its variance is the plain estimator's."""
        n = aggregator.n
        p_star, q_star = self.support_probabilities()
        support = self.support_counts(aggregator)
        if deconvolve is not None:
            from ..deconvolution import (
                deconvolve as run_deconvolution,  # lazy: loads scipy (0.4-2 s)
            )

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
        return self._frequency_estimate(frequencies, n, variance, postprocess, {"estimator": "unbiased", **details})

    def _recovered_estimate(self, recover, fake_fraction, aggregator, estimator, postprocess, significance, options,
                            *, targets=None):
        """``recover="ldprecover"``: :func:`._recovery.recover_frequencies`, which takes no other option."""
        owner = f"{self.display_name}.estimate"
        if recover == "none":  # fake_fraction or targets given: options of the recovery
            check_relations(owner, {"recover": recover, "fake_fraction": fake_fraction, "targets": targets},
                            _RECOVERY_OPTIONS)
        others = sorted([*options, *(["estimator"] if estimator != "unbiased" else []),
                         *(["postprocess"] if postprocess != "none" else []),
                         *(["significance"] if significance is not None else [])])
        if others:
            raise InvalidParameterError(
                f"The 'recover' option of {owner} takes only 'fake_fraction' and 'targets' (its result is already in the "
                f"simplex). Got also {others}."
            )
        return recover_frequencies(self, aggregator, fake_fraction=fake_fraction,
                                   targets=None if targets is None else list(targets))

    def _frequency_estimate(
        self, frequencies, n, variance, postprocess, details, *, epsilon=None, interval_center=None
    ) -> FrequencyEstimate:
        """A :class:`FrequencyEstimate` stamped with this protocol's name, guarantee and ``epsilon`` (default its own).

        CP states its exact epsilon and an ``interval_center``; the other oracles neither.
        """
        return FrequencyEstimate(
            frequencies=frequencies, n=n, variance=variance, epsilon=self.epsilon if epsilon is None else epsilon,
            protocol=self.name, postprocess=postprocess, details=details, guarantee=self.guarantee,
            interval_center=interval_center,
        )

    def _estimate_on_channel(self, aggregator, estimator, postprocess, settings) -> FrequencyEstimate:
        """The "ibu" / "mle" estimates, with optional parametric-bootstrap intervals."""

        n = aggregator.n
        rows: Callable[[np.ndarray], np.ndarray] | None  # the refits of a block of redrawn aggregates, in one pass
        if estimator == "mle":
            frequencies = self.maximum_likelihood(aggregator.statistic)
            details: dict[str, Any] = {"estimator": "mle"}

            def refit(statistic):
                return self.maximum_likelihood(statistic)
            rows = self._maximum_likelihood_rows
        else:
            result = _exact_channel.iterative_bayesian_update(
                self, aggregator.statistic, tolerance=settings["tolerance"],
                max_iterations=settings["max_iterations"], accelerate=settings["accelerate"],
            )
            frequencies = result.probabilities
            details = {
                "estimator": "ibu",
                "iterations": result.iterations,
                "converged": result.converged,
                "tolerance": result.tolerance,
                "loglikelihood": float(result.loglikelihood[-1]),
                "accelerated": result.accelerated,
            }

            em = {"tolerance": settings["tolerance"], "max_iterations": settings["max_iterations"],
                  "accelerate": settings["accelerate"], "start": 0.5 * frequencies + 0.5 / self.domain_size}

            def refit(statistic):
                return _exact_channel.iterative_bayesian_update(self, statistic, **em).probabilities

            def refit_rows(statistics):
                return _exact_channel.iterative_bayesian_update_rows(self, statistics, **em)
            rows = refit_rows
        if settings["bootstrap"]:
            if estimator != "mle" and not hasattr(self.channel_operator(), "matvec_rows"):
                rows = None  # IBU's rows at once where the channel's products batch exactly, else a refit per row
            variance, extra = _exact_channel.parametric_bootstrap(self, aggregator.statistic, n, frequencies, refit, settings,
                                                                  rows)
            details.update(extra)
            details["variance"] = "parametric bootstrap variance of this estimator"
        else:
            try:
                variance = self.variance(n, frequencies)
                details["variance"] = "analytic variance of the unbiased estimator at this estimate"
            except NotImplementedError:
                variance = np.full(self.domain_size, np.inf)
                details["variance"] = "unknown (no analytic variance): pass bootstrap=B for intervals"
        return self._frequency_estimate(_postprocess.apply(postprocess, frequencies), n, variance, postprocess, details)

    def variance(self, n: int, frequencies: ArrayLike | None = None) -> np.ndarray:
        """Analytic variance of each item's unbiased estimator for ``n`` users.

        ``frequencies=None`` gives the variance at :math:`f_v = 0` for every item
        (:math:`\\operatorname{Var}^*`, the usual approximation).
        """
        p, q = self.support_probabilities()
        f = np.zeros(self.domain_size) if frequencies is None else np.asarray(frequencies, dtype=np.float64)
        return pure_variance(p, q, n, f)

    def ranked_variance(self, n: int, max_frequency: float | None = None) -> float:
        """What ``local.make("auto")`` ranks (:mod:`.auto`, item 1) for ``n`` reports: the mean over items of
        :meth:`variance` at the uniform frequencies :math:`f_v = 1/d`; with ``max_frequency`` :math:`f^*`, the larger
        of the mean at :math:`f = 0` and the variance of an item at :math:`f^*` whose remaining mass is on one other
        item (item 1, which shares HR's first block).

        A pure oracle's per-item variance is one affine function of the item's own frequency (Wang et al., USENIX
        Security 2017, eq. 6), so both are that function at one point: no array of the domain's size (at
        :math:`d = 10^8` the arrays of :meth:`variance` took gigabytes); an oracle with a variance of its own
        computes them from it (HR in closed form too).  ``n`` is an integer of at least 1, ``max_frequency`` in
        :math:`[1/d, 1]` (the :math:`d` frequencies sum to 1)."""
        owner = f"{self.display_name}.ranked_variance"
        n = check_param(owner, "n", n, Integer(low=1))
        if max_frequency is not None:
            max_frequency = check_max_frequency(owner, max_frequency, self.domain_size)
        return float(self._ranked_variance(int(n), max_frequency))

    def _ranked_variance(self, n: int, max_frequency: float | None) -> float:
        """:meth:`ranked_variance` of arguments checked."""
        if type(self).variance is FrequencyOracle.variance:
            p, q = self.support_probabilities()
            return own_affine_ranked(lambda f: pure_variance(p, q, n, f), self.domain_size, max_frequency)
        d = self.domain_size
        if max_frequency is None:
            return float(np.mean(self.variance(n, np.full(d, 1.0 / d))))  # the exact mean for any data
        frequencies = np.zeros(d)
        frequencies[0] = max_frequency
        frequencies[1] += 1.0 - max_frequency
        return max(float(np.mean(self.variance(n))), float(self.variance(n, frequencies)[0]))


def own_affine_ranked(variance_at: Callable[[float], float], domain_size: int, max_frequency: float | None) -> float:
    """:meth:`FrequencyOracle.ranked_variance` of an oracle whose item's variance, ``variance_at(f)``, is an affine function
    of the item's own frequency ``f`` alone: its value at :math:`1/d`, or the larger of its values at 0 and ``max_frequency``."""
    if max_frequency is None:
        return float(variance_at(1.0 / domain_size))
    return max(float(variance_at(0.0)), float(variance_at(max_frequency)))


def check_max_frequency(owner: str, max_frequency: float, domain_size: int) -> float:
    r"""``max_frequency``, a bound :math:`f^*` on every item's frequency, checked to be in :math:`[1/d, 1]`.

    The :math:`d` frequencies sum to 1, so some item has frequency at least :math:`1/d`: a bound below
    it holds for no data set (at :math:`f^* \to 0`, eq. 20 gives the widest sketch, :math:`m = 2^{20}`
    at :math:`\varepsilon = 30`, for a population that cannot exist).
    """
    at_least = Interval((1.0 - 1e-12) / domain_size, 1.0, closed="both")  # (1/d itself, up to rounding)
    return check_param(owner, "max_frequency", max_frequency, Described(
        at_least, f"in [1/d, 1] = [{1.0 / domain_size:.6g}, 1] with d = domain_size = {domain_size} (the d frequencies "
                  "sum to 1, so some item has at least 1/d)"))


def pure_variance(p_star: float, q_star: float, n: int, f):
    """The variance of a pure oracle's unbiased estimate of an item of frequency ``f`` (a number or an array) from ``n``
    reports: :math:`(f p^*(1-p^*) + (1-f) q^*(1-q^*)) / (n (p^*-q^*)^2)` (Wang et al., USENIX Security 2017, eq. 6 with
    the item's own term)."""
    return (f * p_star * (1 - p_star) + (1 - f) * q_star * (1 - q_star)) / (n * (p_star - q_star) ** 2)


def _unknown_options(protocol, options, estimator: str = "unbiased"):
    allowed = ["estimator", "postprocess"]
    if estimator == "unbiased":
        allowed += ["significance", "deconvolve"]
    if protocol.output_histogram:
        allowed += ["tolerance", "max_iterations", "accelerate", "bootstrap", "level", "rng"]
    return InvalidParameterError(
        f"{protocol.display_name}.estimate got unknown option(s) {sorted(options)} for estimator={estimator!r}; "
        f"allowed: {allowed}."
    )
