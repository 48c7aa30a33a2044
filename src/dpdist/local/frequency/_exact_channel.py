r"""Estimators on the exact channel: IBU (EM), GRR's closed-form MLE, parametric-bootstrap intervals.

Model.  For protocols whose aggregate is the histogram :math:`N` of the
channel's outputs (``grr``, ``hr``, ``flh``, ``cp``), users whose items are
drawn i.i.d. from :math:`f` give :math:`N \sim \mathrm{Multinomial}(n, Q^\top f)`
with :math:`Q[v, y] = \Pr[y \mid v]` the exact channel (``protocol.channel()``),
so the exact log-likelihood of the aggregate is

.. math::

    L(f) = \sum_y N_y \log (Q^\top f)_y \qquad (f \text{ in the simplex}),

concave in :math:`f`.  *Iterative Bayesian update* (Agrawal & Aggarwal, PODS
2001; ElSalamouny & Palamidessi, EuroS&P 2020) is the EM algorithm for it,
:math:`f_v \leftarrow f_v \sum_y (N_y/n) Q[v,y]/(Q^\top f)_y`; it is run by the
shared :func:`dpdist.local._em.expectation_maximization` (the
same code as SW's EM, SQUAREM-accelerated).  Stopping rule: the first iterate
whose duality gap :math:`\max_v g_v - n`, :math:`g = Q(N / Q^\top f)` the
gradient of :math:`L`, is below ``tolerance``; as :math:`L` is concave this
certifies :math:`\max L - L(f) <` ``tolerance`` (Frank–Wolfe gap).  The
default, 1 nat, is below the statistical resolution of :math:`L` (a 95%
likelihood-ratio confidence region spans at least
:math:`\chi^2_1(0.95)/2 = 1.92` nats); EM approaches zero coordinates slowly,
so much smaller gaps can take 10^4 iterations.  Or ``max_iterations`` (``details["converged"]`` is False
then).  The paper-style rule "the step changed :math:`L` by less than
``tolerance``" is not used here: on nearly flat channels (GRR at small
:math:`\varepsilon` and large :math:`d`) EM's steps are tiny far from the
maximum, and that rule stopped after one step at the uniform start.  Every product with
:math:`Q` goes through a structured operator (GRR: :math:`O(d)`, HR: one fast
Walsh–Hadamard transform per block, FLH: :math:`O(Sd)` gathers, CP: dense).

Protocols whose aggregate is a vector of *support counts* (``oue``, ``sue``,
``olh``, ``ss``) are excluded: their aggregate (per-item counts of a
:math:`d`-bit or hashed report) is not the output histogram, and its exact law
is that of a sum of :math:`n` dependent multivariate vectors, with no
tractable likelihood; an EM on a product of per-item binomials would maximize a
composite likelihood, not the exact one.

Closed-form MLE of GRR (derived here).  With :math:`\kappa = q/(p-q)`,
:math:`(Q^\top f)_y = (p - q)(f_y + \kappa)`, so maximizing
:math:`\sum_y N_y \log(f_y + \kappa)` on the simplex gives, by the KKT
conditions (multiplier :math:`1/t`),

.. math::

    \hat f_y = \big(t N_y - \kappa\big)_+, \qquad t \text{ such that } \textstyle\sum_y \hat f_y = 1

("water filling": with the counts sorted decreasingly, the active set is the
largest :math:`k` with :math:`N_{(k)} (1 + k\kappa) > \kappa \sum_{i \le k} N_{(i)}`,
and :math:`t = (1 + k\kappa)/\sum_{i\le k} N_{(i)}`).  When every item is active,
:math:`t = 1/(n(p-q))` and the MLE *is* the unbiased estimate
:math:`(N_y/n - q)/(p-q)`; otherwise it rescales the counts, which is not the
Euclidean projection of the unbiased estimate onto the simplex (that one shifts
them by a constant: ``postprocess="simplex"``).

Intervals: parametric bootstrap.  ``bootstrap=B`` redraws :math:`B` aggregates
from the fitted model :math:`\mathrm{Multinomial}(n, Q^\top \hat f)` (the exact
law of the aggregate at :math:`\hat f`, one multinomial draw each; without ``rng``
from a stream keyed by the aggregate, so the interval is a function of it), re-runs the
estimator (EM warm-started at :math:`\hat f`), and reports the bootstrap
variance and the percentile interval at ``level`` (Efron & Tibshirani 1993,
ch. 6 and 13).  For a smooth estimator at an interior :math:`f` the percentile
interval is first-order correct; at the boundary (true :math:`f_v = 0`) the
MLE's law has an atom at 0 and no method gives exact coverage, which the
documentation says.
"""

from __future__ import annotations

import math

import numpy as np

from ..._rng import check_rng, state_generator
from ..._validation import Described, Integer, Interval, Options, check_param
from .._em import DenseOperator, expectation_maximization, expectation_maximization_rows

__all__ = [
    "ESTIMATORS",
    "GRROperator",
    "grr_matrix",
    "iterative_bayesian_update",
    "grr_maximum_likelihood",
    "parametric_bootstrap",
]

#: the ``estimator=`` choices of the frequency oracles
ESTIMATORS = ("unbiased", "ibu", "mle")
#: certified gap to the maximum log-likelihood, in nats: below the statistical resolution of L
#: (a 95% likelihood-ratio region spans at least chi2_1(0.95)/2 = 1.92 nats)
DEFAULT_TOLERANCE = 1.0
DEFAULT_MAX_ITERATIONS = 10_000


def grr_matrix(p: float, q: float, size: int) -> np.ndarray:
    """The ``size x size`` channel of randomized response: ``p`` on the diagonal, ``q`` elsewhere."""
    return np.full((size, size), q) + np.eye(size) * (p - q)


class GRROperator:
    """:math:`Q^\\top f = q \\sum f + (p - q) f` and its adjoint (the channel is symmetric), in O(d)."""

    def __init__(self, p: float, q: float, domain_size: int):
        self.p, self.q = p, q
        self.shape = (domain_size, domain_size)

    def matvec(self, f):
        return self.q * f.sum() + (self.p - self.q) * f

    def rmatvec(self, w):
        return self.q * w.sum() + (self.p - self.q) * w


def dense_operator(protocol) -> DenseOperator:
    """The channel as an ``(outputs, items)`` operator (small or moderate channels)."""
    return DenseOperator(protocol.channel().T)


def iterative_bayesian_update(protocol, statistic, *, tolerance, max_iterations, start=None, accelerate=True):
    """EM (IBU) on the exact channel; returns the :class:`EMResult` of the shared EM."""
    return expectation_maximization(
        np.asarray(statistic, dtype=np.float64),
        protocol.channel_operator(),
        smoothing=False,
        tolerance=tolerance,
        max_iterations=max_iterations,
        start=start,
        accelerate=accelerate,
        stopping="gap",
    )


def iterative_bayesian_update_rows(protocol, statistics, **settings) -> np.ndarray:
    """:func:`iterative_bayesian_update`'s estimate of each row of ``statistics`` (the bootstrap's redrawn
    aggregates; ``settings``: its keywords), run on the rows together
    (:func:`dpdist.local._em.expectation_maximization_rows`), for protocols whose ``channel_operator()`` has
    ``matvec_rows`` and ``rmatvec_rows``: the same numbers."""
    return expectation_maximization_rows(np.asarray(statistics, dtype=np.float64), protocol.channel_operator(),
                                         **settings)


def grr_maximum_likelihood(counts: np.ndarray, p: float, q: float) -> np.ndarray:
    """The closed-form MLE of GRR (module docstring), in O(d log d)."""
    counts = np.asarray(counts, dtype=np.float64)
    kappa = q / (p - q)
    order = np.argsort(-counts, kind="stable")
    sorted_counts = counts[order]
    cumulative = np.cumsum(sorted_counts)
    k = np.arange(1, counts.size + 1)
    active = sorted_counts * (1 + k * kappa) > kappa * cumulative
    size = int(np.flatnonzero(active)[-1]) + 1  # the top count is always active when n > 0
    scale = (1 + size * kappa) / cumulative[size - 1]
    return np.maximum(scale * counts - kappa, 0.0)


def grr_maximum_likelihood_rows(counts: np.ndarray, p: float, q: float) -> np.ndarray:
    """:func:`grr_maximum_likelihood` of each row of ``counts`` (every row with reports), the same arithmetic row by
    row in one pass: the bootstrap's redrawn aggregates."""
    counts = np.asarray(counts, dtype=np.float64)
    kappa = q / (p - q)
    order = np.argsort(-counts, axis=1, kind="stable")
    sorted_counts = np.take_along_axis(counts, order, axis=1)
    cumulative = np.cumsum(sorted_counts, axis=1)
    k = np.arange(1, counts.shape[1] + 1)
    active = sorted_counts * (1 + k * kappa) > kappa * cumulative
    size = counts.shape[1] - np.argmax(active[:, ::-1], axis=1)  # the last active rank (the top one always is)
    scale = (1 + size * kappa) / cumulative[np.arange(counts.shape[0]), size - 1]
    return np.maximum(scale[:, None] * counts - kappa, 0.0)


def check_estimator_options(protocol, estimator, options) -> dict:
    """The EM/bootstrap settings of ``estimator`` (its value and each option's checked by the protocol's
    ``estimate_options``; None is the default), refused where the protocol does not offer it."""
    owner = f"{protocol.display_name}.estimate"
    if estimator == "unbiased":
        return {}
    settings = {
        "tolerance": check_param(owner, "tolerance", options.pop("tolerance", DEFAULT_TOLERANCE),
                                 Interval(0.0, math.inf, "neither")),
        "max_iterations": check_param(owner, "max_iterations",
                                      options.pop("max_iterations", DEFAULT_MAX_ITERATIONS), Integer(low=1)),
        "accelerate": options.pop("accelerate", None) is not False,  # None: the default, True
        "bootstrap": check_param(owner, "bootstrap", options.pop("bootstrap", 0), Integer(low=0, high=100_000)),
        "level": check_param(owner, "level", options.pop("level", 0.95), Interval(0.0, 1.0, "neither")),
        "rng": options.pop("rng", None),
    }
    exact = ("ibu", *(("mle",) if protocol.tags.closed_form_mle else ())) if protocol.output_histogram else ()
    check_param(owner, "estimator", estimator, Described(Options(("unbiased", *exact)), (
        f"one of {['unbiased', *exact]} for {protocol.name}: 'ibu' (the exact likelihood, by EM) needs an aggregate "
        "that is the histogram of channel outputs (grr, hr, flh, cp; support counts have an intractable likelihood), "
        "'mle' (its closed form) exists for grr only")))
    return settings


#: cells of the redrawn aggregates :func:`parametric_bootstrap` holds at once (32 MiB of int64)
_BOOTSTRAP_CELLS = 1 << 22


def parametric_bootstrap(protocol, statistic, n: int, frequencies: np.ndarray, refit, settings,
                         refit_rows=None) -> tuple[np.ndarray, dict]:
    """Bootstrap variance and percentile interval of an estimator at its estimate (module docstring).

    ``refit(statistic)`` returns the estimate from one redrawn aggregate; ``refit_rows``, if given, those of a block of
    them (rows), in one pass (GRR's closed-form MLE).  The redraws are multinomials drawn a block at a time: the
    same numbers as one draw per replicate.  Without ``rng`` the
    redraws come from a stream keyed by the protocol's config, the aggregate (``statistic``,
    ``n``) and the estimator's settings (:func:`dpdist._rng.state_generator`): one aggregate
    gives one interval however often it is estimated (docs/explanation/uncertainty.md).
    """
    replicates = settings["bootstrap"]
    if settings["rng"] is None:
        keyed = {key: value for key, value in settings.items() if key not in ("rng", "level")}  # levels nest
        rng = state_generator("parametric_bootstrap", protocol.config(), np.asarray(statistic), int(n), keyed)
    else:
        rng = check_rng(settings["rng"], owner=f"{protocol.display_name}.estimate")
    probabilities = protocol.channel_operator().matvec(np.asarray(frequencies, dtype=np.float64))
    probabilities = np.maximum(probabilities, 0.0)
    probabilities /= probabilities.sum()
    block = max(1, _BOOTSTRAP_CELLS // probabilities.size)  # redrawn aggregates held at once
    refits: list[np.ndarray] = []
    for start in range(0, replicates, block):
        redrawn = rng.multinomial(n, probabilities, size=min(block, replicates - start))
        refits.extend(refit_rows(redrawn) if refit_rows is not None else [refit(row) for row in redrawn])
    draws = np.array(refits)
    alpha = 1.0 - settings["level"]
    low, high = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
    details = {"bootstrap": replicates, "interval_level": settings["level"], "interval": (low, high)}
    return draws.var(axis=0, ddof=1), details
