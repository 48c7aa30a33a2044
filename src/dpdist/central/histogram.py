r"""Histogram queries: the Laplace-noised histogram baseline of sec. II-B1 of Tao & Sarwate.

Paper 002 (Tao & Sarwate, "Functional Approximation
Methods for Differentially Private Distribution Estimation"), sec. II-B1, after
McKenna's note on private CDFs (their ref. [38]).
"""

from __future__ import annotations

import numpy as np

from .._guarantee import sequential
from ._common import cdf_distribution, check_central_input, check_option, check_positive_int
from ._defaults import histogram_bins, size_for_rules
from .noise import laplace_mechanism
from ..estimates import Distribution
from ..postprocess import isotonic_cdf, norm_sub
from .._types import ArrayLike, FloatBounds, Seed

__all__ = ["histogram_queries", "HISTOGRAM_POSTPROCESS", "NEIGHBOURING"]

HISTOGRAM_POSTPROCESS = ("clip", "norm-sub", "isotonic")
NEIGHBOURING = ("replace", "add-remove")


def _noisy_cdf(data, bins: int, sensitivity: float, epsilon: float, postprocess: str,
               neighbouring: str) -> tuple[np.ndarray, np.ndarray]:
    """``(edges, cdf)``: the Laplace-noised counts of ``bins`` equal-width bins, post-processed into masses, and
    the piecewise linear CDF through their cumulative sums."""
    edges = np.linspace(data.bounds[0], data.bounds[1], bins + 1)
    counts = np.histogram(data.x, bins=edges)[0].astype(np.float64)
    noisy = laplace_mechanism(counts, sensitivity, epsilon, data.rng, integer_valued=True)
    if postprocess == "clip":
        positive = np.maximum(noisy, 0.0)
        masses = positive / positive.sum() if positive.sum() > 0 else np.full(bins, 1.0 / bins)
    elif postprocess == "norm-sub":
        total = noisy.sum() if neighbouring == "add-remove" else float(data.x.size)
        masses = norm_sub(noisy / max(total, 1.0))
    else:
        masses = _cumulative_isotonic(noisy)
    cdf = np.concatenate([[0.0], np.cumsum(masses)])
    cdf[-1] = 1.0
    return edges, cdf


def _cumulative_isotonic(noisy_counts: np.ndarray) -> np.ndarray:
    """Bin masses from the least-squares monotone fit of the noisy cumulative counts (end points 0 and n~)."""
    total = max(noisy_counts.sum(), 1.0)
    cumulative = np.concatenate([[0.0], np.cumsum(noisy_counts)]) / total
    return np.diff(isotonic_cdf(cumulative, pinned=True))


def histogram_queries(
    x: ArrayLike,
    epsilon: float,
    bounds: FloatBounds,
    bins: int | None = None,
    rng: Seed = None,
    clip: bool = True,
    secure: bool = False,
    *,
    postprocess: str = "clip",
    neighbouring: str = "replace",
    missing: str | float = "refuse",
    privacy_id: ArrayLike | None = None,
    max_contributions: int | str | None = None,
) -> Distribution:
    r"""Private CDF from a Laplace-noised equal-width histogram (sec. II-B1).

    The counts of ``bins`` equal-width bins over ``bounds`` get Laplace noise of scale :math:`\Delta_1/\varepsilon`;
    the CDF is piecewise linear through the cumulative post-processed masses (uniform density inside a bin).

    Parameters
    ----------
    x : array_like of float
        The data: any real values (clipped into ``bounds``, the default), possibly none (n = 0 releases the noisy
        counts of zeros).
    epsilon : float
        Total privacy budget; the whole budget goes to the one histogram.
    bounds : (float, float)
        Public range of the data.
    bins : int, optional
        Number of equal-width bins (>= 1).  Default: :math:`\varepsilon\sqrt{1.6n}` in [16, 2^20]
        (:func:`dpdist.central._defaults.histogram_bins`); under ``neighbouring="add-remove"`` n is private, so 5%
        of the budget then buys a noisy count for the rule (``details["size"]``).
    rng : None, int or Generator
        Seed or generator (must be ``None`` when ``secure=True``).
    clip : bool
        ``True`` (the default): values outside ``bounds`` (infinities included) are moved to the nearer bound and
        NaN to the lower one; how many is never released.  ``False`` raises ``OutOfDomainError`` for them instead: a
        refusal that depends on the data, for data already checked (see
        :func:`dpdist.central._common.check_central_input`).
    secure : bool
        Exact discrete Laplace noise on the integer counts from a CSPRNG (see :mod:`dpdist.central.noise`).
    postprocess : {"clip", "norm-sub", "isotonic"}
        ``"clip"`` is the paper's: negative counts to 0, then normalize. ``"norm-sub"`` (Wang et al. 2020) zeroes
        negatives and shifts the rest equally so the total is preserved.  ``"isotonic"`` projects the noisy
        cumulative counts onto monotone sequences from 0 to 1 (Prop. 1 of the paper applied to the histogram CDF);
        it does not inflate empty tails.
    neighbouring : {"replace", "add-remove"}
        ``"replace"`` (the paper's definition: neighbours differ in one entry, ``n`` public) gives l1 sensitivity 2;
        ``"add-remove"`` (one record added or removed, the convention of OpenDP and diffprivlib) gives 1 and never
        uses the true ``n``.
    missing : {"refuse", "drop"} or float
        Missing values in ``x`` (:mod:`dpdist._missing`; ``"drop"`` under ``"add-remove"`` only).
    privacy_id, max_contributions : optional
        Whose row each value is, and the rows kept per person (an int >= 1, or ``"auto"`` to choose it: privately
        under add/remove, for no budget under replace): the guarantee is then per person (:mod:`dpdist.central._contributions`).
        Ids compare exactly, numbers by value, strings as written (normalise them first); two kinds are refused
        (:mod:`dpdist._ids`).

    Returns
    -------
    Distribution
        On the histogram's own ``bins`` edges; ``details`` records the noise scale, sensitivity and budget.
    """
    owner = "histogram_queries"
    check_option(owner, "neighbouring", neighbouring, NEIGHBOURING)
    data = check_central_input(owner, x, epsilon=epsilon, bounds=bounds, rng=rng, clip=clip, secure=secure,
                               missing=missing, neighbouring=neighbouring, privacy_id=privacy_id,
                               max_contributions=max_contributions)
    check_option(owner, "postprocess", postprocess, HISTOGRAM_POSTPROCESS)
    steps, size_release = [data.guarantee(neighbouring)], None
    if bins is None:
        public_n, steps, size_release = size_for_rules(data, neighbouring)
        bins = histogram_bins(public_n, steps[-1].epsilon)
    bins = check_positive_int(owner, "bins", bins, high=2**20)
    histogram_epsilon = steps[-1].epsilon
    sensitivity = 2.0 if neighbouring == "replace" else 1.0

    edges, cdf = _noisy_cdf(data, bins, sensitivity, histogram_epsilon, postprocess, neighbouring)
    return _histogram_release(data, edges, cdf, steps, size_release, sensitivity, neighbouring, postprocess)


def _histogram_release(data, edges: np.ndarray, cdf: np.ndarray, steps: list, size_release: dict | None,
                       sensitivity: float, neighbouring: str, postprocess: str) -> Distribution:
    """The released Distribution, its details stating the noise, the budget of each step and the noisy size."""
    histogram_epsilon = steps[-1].epsilon
    details = {"bins": edges.size - 1, "sensitivity_l1": sensitivity, "noise_scale": sensitivity / histogram_epsilon,
               "neighbouring": neighbouring, "postprocess": postprocess, "budget": {"histogram": histogram_epsilon},
               "secure": data.secure}
    if size_release is not None:
        details["size"] = size_release
        details["budget"]["size"] = size_release["epsilon"]
    # under add/remove neighbours the number of records is itself private: do not release it
    released_n = data.x.size if neighbouring == "replace" else None
    return cdf_distribution(
        edges, cdf, method="histogram-queries", guarantee=data.stated(sequential(steps)), n=released_n, details=data.details(**details)
    )
