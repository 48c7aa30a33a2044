r"""Several campaigns, one estimate: :func:`estimate_jointly`.

The same question is often asked more than once: at different budgets, with different
protocols, at different times, of independent groups of users drawn from one population.
Each campaign's aggregate (an :class:`~dpdist.local.Aggregator` or its saved state) is
informative about the same item frequencies :math:`f`; the joint likelihood is the product
of the campaigns' likelihoods, each the law of its aggregate through its protocol's known
channel applied to the same :math:`f`,

.. math::

    \ell(f) = \sum_c \ell_c(f), \qquad f \in \Delta_{d-1},

exact for output histograms (``grr``, ``hr``, ``flh``, ``cp``) and the product of exact
per-item binomial marginals for support counts (``oue``, ``sue``, ``rue``, ``olh``, ``rlh``, ``ss``,
``rws``), whose joint law is intractable (a composite likelihood;
:mod:`dpdist.local.frequency._joint_blocks` derives both; :func:`joint_protocols` lists both kinds
from the registry).  Every block is a product of
multinomials through a known channel, so the EM for mixtures of multinomials through known
channels, the iterative Bayesian update (IBU: Agrawal & Aggarwal, PODS 2001, sec. 3; its use
for LDP frequency oracles: Wang et al., "Locally differentially private frequency estimation"
/ ElSalamouny & Palamidessi, EuroS&P 2020), maximizes the sum as it maximizes one:

.. math::

    f_v \leftarrow \frac{f_v}{\sum_c m_c} \sum_c \sum_y N_{c,y} \frac{Q_c[v, y]}{(Q_c^\top f)_y},

with :math:`m_c` the number of observations of block :math:`c` (:math:`n_c`, or
:math:`n_c d` for the :math:`d` binomials of support counts).  It is the shared
:func:`dpdist.local._em.expectation_maximization`, SQUAREM-accelerated, stopped at a certified
duality gap below ``tolerance`` nats, as ``estimator="ibu"`` of one campaign
(:mod:`dpdist.local.frequency._exact_channel`).

Intervals.  The estimate maximizes a concave (composite) log-likelihood on the simplex; its
asymptotic covariance is Godambe's sandwich restricted to the simplex's tangent space
(Aitchison & Silvey, Ann. Math. Statist. 29, 1958, for the constraint; Varin, Reid & Firth 2011,
sec. 2.3, for the sandwich):

.. math::

    V = Z (Z^\top H Z)^{-1} (Z^\top J Z) (Z^\top H Z)^{-1} Z^\top,

with :math:`Z` an orthonormal basis of :math:`\{x : \sum x = 0\}`, :math:`H = \sum_c H_c` the
information and :math:`J = \sum_c J_c` the covariance of the score (the campaigns are
independent), both at the estimate; :math:`J_c = H_c` for an exact likelihood.  For support
counts :math:`J_c` comes from the covariance of one report's support indicators: exact for OUE,
SUE, RUE (independent bits), SS (exactly :math:`k` items per report, exchangeable) and RWS (from its
exact channel, :meth:`~dpdist.local.frequency.rws.RWS.support_pair_probabilities`); for OLH, RLH and OCMS
the value of an ideal (3-wise independent) hash, an approximation for their linear family
(:mod:`dpdist.local.frequency._joint_blocks`).  The estimate's
``variance`` is :math:`\operatorname{diag} V`, so every view of one estimate (``table``,
``to_dict``, ``describe``, the plot) shows the same normal interval
:math:`\hat f_v \pm z \sqrt{V_{vv}}`.  ``bootstrap=B`` replaces :math:`V_{vv}` by the variance
of :math:`B` parametric-bootstrap refits (every campaign's aggregate redrawn at :math:`\hat f`,
Efron & Tibshirani 1993, ch. 6), keyed by the campaigns' states when no ``rng`` is given, so one
set of states gives one interval.  Where an item's true frequency is 0 the estimate sits on the
boundary, its law has an atom there, and no normal interval is exact (``docs/explanation/frequency-oracles.md``).

The baseline, ``method="inverse-variance"``: each item's unbiased estimates, one per campaign,
averaged with weights :math:`1/\operatorname{Var}_c` (the minimum-variance unbiased linear
combination, Cochran 1954), the variances at a first combination weighted by
:math:`1/\operatorname{Var}_c` at :math:`f = 0`; its variance is
:math:`1/\sum_c \operatorname{Var}_c^{-1}`.  It needs every protocol to be unbiased with an
analytic variance.
"""

from __future__ import annotations

import functools
import math
from typing import Any, Sequence

import numpy as np

from .._guarantee import parallel
from .._rng import check_rng, state_generator
from .._validation import (
    MAX_ALLOCATION_BYTES,
    Boolean,
    Implies,
    InstanceOf,
    Integer,
    Interval,
    Items,
    Options,
    check_param,
    validate_params,
)
from ..errors import DPDistError, EmptyAggregateError, IncompatibleStateError, InvalidParameterError
from ..estimates import FrequencyEstimate
from .._types import Seed
from ._aggregator import Aggregator
from ._em import expectation_maximization
from ._protocol import make
from ._registry import available
from .frequency._joint_blocks import CampaignBlock, StackedOperator
from .frequency._oracle import FrequencyOracle

__all__ = ["estimate_jointly", "check_campaigns", "joint_protocols", "JOINT_METHODS"]

#: the ``method=`` choices of :func:`estimate_jointly`
JOINT_METHODS = ("likelihood", "inverse-variance")
_OWNER = "estimate_jointly"


@validate_params({
    "method": Options(JOINT_METHODS),
    "tolerance": Interval(0.0, math.inf, "neither"),
    "max_iterations": Integer(low=1),
    "accelerate": Boolean(),
    "bootstrap": Integer(low=0, high=100_000),
    "level": Interval(0.0, 1.0, "neither"),
}, relations=(
    Implies("bootstrap", (0,), "method", ("inverse-variance",),
            why="it applies to method='likelihood'; method='inverse-variance' has an analytic variance",
            counterexample={"method": "inverse-variance", "bootstrap": 10}),
), owner=_OWNER)
def estimate_jointly(
    campaigns: Sequence[Aggregator | dict],
    *,
    method: str = "likelihood",
    bootstrap: int = 0,
    level: float = 0.95,
    tolerance: float = 1.0,
    max_iterations: int = 10_000,
    accelerate: bool = True,
    rng: Seed = None,
) -> FrequencyEstimate:
    r"""One estimate of the item frequencies from several campaigns on the same domain (module docstring).

    Parameters
    ----------
    campaigns : sequence of Aggregator or dict
        Each campaign's aggregate, or its state (``Aggregator.to_dict``, ``dpdist.io.load_state(...).aggregator``),
        from independent users of one population.  Every protocol is a (non-memoized) frequency
        oracle whose aggregate is an output histogram or support counts, on the same items
        (``domain_size`` and ``labels``); protocols and budgets may differ.
    method : {"likelihood", "inverse-variance"}
        ``"likelihood"`` (default): the maximum of the joint (composite) likelihood by EM/IBU, in the
        simplex.  ``"inverse-variance"``: the inverse-variance weighted mean of the campaigns'
        unbiased estimates (the baseline; unbiased, not in the simplex).
    bootstrap : int
        For ``"likelihood"``: 0 (default) for the sandwich variance, or the number of
        parametric-bootstrap refits whose variance becomes the estimate's.
    level : float
        Unused by the estimate itself (its ``confidence_interval(level)`` takes any level); part of
        the bootstrap's key, as for one campaign's ``estimator="ibu"``.
    tolerance : float
        The certified gap to the maximum joint log-likelihood, in nats (default 1).
    max_iterations : int
        Cap on EM steps (``details["converged"]`` is False when it is reached).
    accelerate : bool
        SQUAREM acceleration of the EM (default True; the same maximum).
    rng : seed or Generator, optional
        Randomness of the bootstrap; default a stream keyed by the campaigns' states.

    Returns
    -------
    FrequencyEstimate
        ``frequencies``, ``variance`` (its intervals), ``n`` the total number of reports,
        ``guarantee`` the parallel composition of the campaigns' (each user is in one campaign:
        the largest :math:`\varepsilon`), ``protocol`` ``"joint"`` and ``details["campaigns"]``
        (each campaign's protocol, :math:`\varepsilon`, :math:`n` and whether its likelihood is exact).

    Raises
    ------
    IncompatibleStateError
        Campaigns of different domains or labels, or a state that is not valid.
    InvalidParameterError
        A campaign whose protocol has no channel likelihood here, or a bad option.

    References
    ----------
    R. Agrawal, C. Aggarwal, "On the design and quantification of privacy preserving data mining
    algorithms", PODS 2001 (the iterative Bayesian update); T. Wang, J. Blocki, N. Li, S. Jha,
    "Locally differentially private protocols for frequency estimation", USENIX Security 2017
    (the protocols and their variances); C. Varin, N. Reid, D. Firth, "An overview of composite
    likelihood methods", Statistica Sinica 21, 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from dpdist import local
    >>> items = np.random.default_rng(0).integers(0, 8, 20_000)
    >>> first = local.make("grr", epsilon=1.0, domain_size=8).simulate(items[:10_000], rng=1)
    >>> second = local.make("oue", epsilon=2.0, domain_size=8).simulate(items[10_000:], rng=2)
    >>> estimate = local.estimate_jointly([first, second])
    >>> round(float(estimate.frequencies.sum()), 6)
    1.0
    """
    aggregators = check_campaigns(campaigns)
    if method == "inverse-variance":  # with no bootstrap: the table's relation
        return _inverse_variance(aggregators)
    settings = {"tolerance": tolerance, "max_iterations": max_iterations, "accelerate": accelerate,
                "bootstrap": bootstrap, "level": level}
    return _joint_likelihood(aggregators, settings, rng)


def _joint_likelihood(aggregators: list, settings: dict[str, Any], rng: Seed) -> FrequencyEstimate:
    """The maximum of the campaigns' joint likelihood, with its sandwich or parametric-bootstrap variance."""
    blocks = [CampaignBlock(aggregator.protocol, aggregator) for aggregator in aggregators]
    if settings["bootstrap"]:
        _check_bootstrap_size(blocks, settings["bootstrap"])
    frequencies, details = _maximize(blocks, settings)
    if settings["bootstrap"]:
        variance = _bootstrap_variance(aggregators, blocks, frequencies, settings, rng)
        details["variance"] = "parametric bootstrap variance of the joint estimate"
        details["bootstrap"] = settings["bootstrap"]
    else:
        variance = _sandwich_variance(blocks, frequencies, details)
    return _result(aggregators, frequencies, variance, {"estimator": "joint-likelihood", **details})


# ---------------------------------------------------------------------- input
#: What the joint estimators take: the campaigns' aggregators or their states (a list, each shown by its type).
_CAMPAIGNS = Items(InstanceOf((Aggregator, dict), "an aggregator or an aggregator state (a dict)"),
                   "a non-empty list of aggregators or aggregator states (dicts)", min_length=1)


def check_campaigns(campaigns: Sequence[Aggregator | dict], *, owner: str = _OWNER, argument: str = "campaigns",
                    names: Sequence[str] | None = None) -> list[Aggregator]:
    """Aggregators (states rebuilt and checked) of frequency oracles with a channel likelihood, on one domain.

    The errors name ``argument`` of ``owner`` and each campaign by its position, or by ``names``
    (the command line passes ``argument="--state"``, which then opens the messages as the option, and the state
    files' names).
    """
    subject = argument if argument.startswith("--") else f"The {argument!r} parameter of {owner}"
    campaigns = check_param(owner, argument, campaigns, _CAMPAIGNS)

    def called(index: int) -> str:
        return f"campaign {index}" if names is None else str(names[index])

    aggregators = []
    for index, campaign in enumerate(campaigns):
        if isinstance(campaign, dict):
            campaign = Aggregator.from_dict(campaign)
        protocol = campaign.protocol
        if not _has_channel_likelihood(protocol):
            histograms, supports = joint_protocols()
            raise InvalidParameterError(
                f"{subject} must hold campaigns of frequency oracles whose aggregate is "
                f"the histogram of channel outputs ({', '.join(histograms)}) or one support count per item "
                f"({', '.join(supports)}). Got protocol {protocol.name!r} in {called(index)} instead."
            )
        if campaign.n == 0:
            raise EmptyAggregateError(f"{subject} holds {called(index)}, with no report: "
                                      "leave it out.")
        aggregators.append(campaign)
    _refuse_repeats(campaigns, aggregators, subject, called)
    first = aggregators[0].protocol
    for index, aggregator in enumerate(aggregators[1:], start=1):
        protocol = aggregator.protocol
        if protocol.domain_size != first.domain_size or protocol.labels != first.labels:
            shown = "domain_size" if protocol.domain_size != first.domain_size else "labels"
            raise IncompatibleStateError(
                f"{subject} must hold campaigns of one domain: {called(index)} has "
                f"{shown}={getattr(protocol, shown)!r}; allowed is {called(0)}'s {shown}={getattr(first, shown)!r}."
            )
    size = first.domain_size
    if 3 * 8 * size * size > MAX_ALLOCATION_BYTES:  # the d x d information, its basis and the sandwich
        raise InvalidParameterError(
            f"{subject} must hold campaigns whose d x d information matrix fits in "
            f"dpdist's allocation limit: the largest domain_size allowed is "
            f"{math.isqrt(MAX_ALLOCATION_BYTES // 24)}. Got domain_size={size} instead."
        )
    return aggregators


def _refuse_repeats(campaigns, aggregators: list[Aggregator], subject: str, called) -> None:
    """Refuse a campaign passed twice: the same object, or a state of identical contents (config, n, statistic),
    which independent campaigns all but never share and a copy always does; counted twice, it would
    halve the variance of its part of the estimate."""
    seen: dict = {}
    for index, (campaign, aggregator) in enumerate(zip(campaigns, aggregators)):
        statistic = np.asarray(aggregator.statistic)
        key = (repr(aggregator.protocol.config()), int(aggregator.n), statistic.dtype.str, statistic.tobytes())
        earlier = next((other for other in range(index) if campaigns[other] is campaign), None)
        if earlier is None:
            earlier = seen.get(key)
        if earlier is not None:
            what = "the same object as" if campaigns[earlier] is campaign else "a state identical to"
            raise IncompatibleStateError(
                f"{subject} holds {called(index)}, {what} {called(earlier)} "
                f"({aggregator.protocol.name}, n={int(aggregator.n)}): the same campaign counted twice. Allowed are "
                "independent campaigns, each once."
            )
        seen[key] = index


@functools.lru_cache(maxsize=1)
def joint_protocols() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The registered protocols a joint estimate takes: ``(output histograms, support counts)``, each sorted.

    Read from the registry (each frequency oracle built at its defaults, eps = 1, d = 8, and asked
    :func:`_has_channel_likelihood`), so the refusal message and the docs list what the code accepts.
    """
    histograms: list[str] = []
    supports: list[str] = []
    for name in available("frequency"):
        try:
            protocol = make(name, epsilon=1.0, domain_size=8)
        except DPDistError:  # needs more than eps and d (the memoized ones: refused anyway)
            continue
        if isinstance(protocol, FrequencyOracle) and _has_channel_likelihood(protocol):
            (histograms if protocol.output_histogram else supports).append(name)
    return tuple(histograms), tuple(supports)


def _has_channel_likelihood(protocol) -> bool:
    """A non-memoized frequency oracle whose aggregate is its output histogram or one support count per item."""
    return (
        isinstance(protocol, FrequencyOracle)
        and not protocol.tags.memoized
        and (protocol.output_histogram
             or (protocol.statistic_size == protocol.domain_size and protocol.support_range() == (0.0, 1.0)))
    )


# ---------------------------------------------------------------------- the joint likelihood
def _maximize(blocks: list[CampaignBlock], settings: dict, start=None) -> tuple[np.ndarray, dict]:
    """EM/IBU on the stacked blocks (module docstring)."""
    result = expectation_maximization(
        np.concatenate([block.counts for block in blocks]),
        StackedOperator([block.operator for block in blocks]),
        smoothing=False,
        tolerance=settings["tolerance"],
        max_iterations=settings["max_iterations"],
        start=start,
        accelerate=settings["accelerate"],
        stopping="gap",
    )
    details = {
        "iterations": result.iterations,
        "converged": result.converged,
        "tolerance": result.tolerance,
        "loglikelihood": float(result.loglikelihood[-1]),
        "accelerated": result.accelerated,
    }
    return result.probabilities, details


def _sandwich_variance(blocks: list[CampaignBlock], frequencies: np.ndarray, details: dict) -> np.ndarray:
    """:math:`\\operatorname{diag} V` of the module docstring, at the estimate."""
    size = frequencies.size
    information = np.zeros((size, size))
    meat = np.zeros((size, size))
    for block in blocks:
        block_information = block.information(frequencies)
        information += block_information
        meat += block.score_covariance(frequencies, block_information)
    basis = _tangent_basis(size)
    bread = np.linalg.inv(basis.T @ information @ basis)
    projected = basis @ bread
    covariance = projected @ (basis.T @ meat @ basis) @ projected.T
    details["variance"] = ("sandwich variance of the joint (composite) likelihood's maximum at the estimate"
                           if any(not block.exact for block in blocks)
                           else "inverse Fisher information of the joint likelihood at the estimate, on the simplex")
    return np.maximum(np.diag(covariance), 0.0)


def _tangent_basis(size: int) -> np.ndarray:
    """An orthonormal basis (``size x size-1``) of the vectors summing to 0 (QR of ``[1, I]``)."""
    seed = np.column_stack([np.ones(size), np.eye(size)[:, : size - 1]])
    orthonormal, _ = np.linalg.qr(seed)
    return orthonormal[:, 1:]


#: bytes per user of one support-count redraw (the items, int64, and their privatized report, at most 8 more)
_BOOTSTRAP_BYTES_PER_USER = 16
#: most users privatized over all of a bootstrap's redraws (its time: about 10^7 users a second)
_MAX_BOOTSTRAP_USERS = 1 << 28


def _check_bootstrap_size(blocks: list[CampaignBlock], replicates: int) -> None:
    """Refuse, before any draw, a bootstrap whose support-count redraws (user by user, ``CampaignBlock.redraw``)
    exceed dpdist's allocation limit in one draw or :data:`_MAX_BOOTSTRAP_USERS` in all; output histograms are
    redrawn as one multinomial, whatever ``n``."""
    for index, block in enumerate(blocks):
        if block.exact:
            continue
        needed = block.n * _BOOTSTRAP_BYTES_PER_USER
        if needed > MAX_ALLOCATION_BYTES or replicates * block.n > _MAX_BOOTSTRAP_USERS:
            raise InvalidParameterError(
                f"The 'bootstrap' parameter of {_OWNER} redraws each support-count campaign user by user: bootstrap="
                f"{replicates} with n={block.n} in campaign {index} ({block.protocol.name}) needs {needed:,} bytes per "
                f"draw and {replicates * block.n:,} users in all; allowed are at most {MAX_ALLOCATION_BYTES:,} bytes "
                f"(dpdist's allocation limit) and {_MAX_BOOTSTRAP_USERS:,} users. Use bootstrap=0 (the sandwich "
                "variance) or fewer refits."
            )


def _bootstrap_variance(aggregators, blocks, frequencies, settings, rng) -> np.ndarray:
    """Variance of ``B`` refits on aggregates redrawn at the estimate, from a stream keyed by the states."""
    if rng is None:
        keyed = {key: value for key, value in settings.items() if key != "level"}  # levels nest
        parts = [part for aggregator in aggregators  # each array its own part: hashed by its bytes
                 for part in (aggregator.protocol.config(), np.asarray(aggregator.statistic), int(aggregator.n))]
        generator = state_generator("estimate_jointly", len(aggregators), *parts, keyed)
    else:
        generator = check_rng(rng, owner=_OWNER)
    start = 0.5 * frequencies + 0.5 / frequencies.size
    refits = np.empty((settings["bootstrap"], frequencies.size))
    originals = [block.counts for block in blocks]
    try:
        for replicate in range(settings["bootstrap"]):
            for block in blocks:
                block.counts = block.redraw(frequencies, generator)
            refits[replicate] = _maximize(blocks, settings, start=start)[0]
    finally:
        for block, counts in zip(blocks, originals):
            block.counts = counts
    return refits.var(axis=0, ddof=1)


# ---------------------------------------------------------------------- the baseline
def _inverse_variance(aggregators: list[Aggregator]) -> FrequencyEstimate:
    """Inverse-variance weighted mean of the campaigns' unbiased estimates (module docstring)."""
    estimates, protocols = [], []
    for index, aggregator in enumerate(aggregators):
        protocol = aggregator.protocol
        if not protocol.tags.unbiased:
            raise InvalidParameterError(
                f"The 'method' parameter of {_OWNER} is 'inverse-variance', which needs every campaign's protocol to "
                f"have an unbiased estimator; campaign {index}'s {protocol.name!r} has none. Use method='likelihood'."
            )
        estimates.append(protocol.estimate(aggregator).frequencies)
        protocols.append(protocol)
    estimates_array = np.array(estimates)

    def combine(at):
        variances = np.array([protocol.variance(aggregator.n, at)
                              for protocol, aggregator in zip(protocols, aggregators)])
        weights = 1.0 / variances
        return (weights * estimates_array).sum(axis=0) / weights.sum(axis=0), 1.0 / weights.sum(axis=0)

    first, _ = combine(None)  # weights at f = 0 (Var*)
    frequencies, variance = combine(np.clip(first, 0.0, 1.0))
    details = {"estimator": "inverse-variance",
               "variance": "inverse of the summed inverse analytic variances at the first combination"}
    return _result(aggregators, frequencies, variance, details)


def _result(aggregators, frequencies, variance, details) -> FrequencyEstimate:
    protocols = [aggregator.protocol for aggregator in aggregators]
    guarantee = parallel([protocol.guarantee for protocol in protocols])
    details["campaigns"] = [
        {"protocol": protocol.name, "epsilon": protocol.epsilon, "n": int(aggregator.n),
         "likelihood": "exact" if protocol.output_histogram else "composite (per-item binomials)"}
        for protocol, aggregator in zip(protocols, aggregators)
    ]
    estimate = FrequencyEstimate(
        frequencies=frequencies, n=sum(int(aggregator.n) for aggregator in aggregators), variance=variance,
        epsilon=guarantee.epsilon, protocol="joint", details=details, guarantee=guarantee,
    )
    labels = protocols[0].labels
    return estimate if labels is None else estimate.with_labels(labels)
