r"""One Gaussian release of a statistic over every key of a group-by: counts, persons, sums, means, histograms per key.

A group-by per person charges each of the :math:`m` groups a person may touch :math:`\varepsilon/m` when each group
runs its own release (basic composition).  The vector of the groups' values moves far less: a person in at most
:math:`m` keys with at most :math:`k` rows in each moves the vector of counts by at most :math:`k\sqrt m` in l2
(:math:`k` in each of :math:`m` coordinates), and Gaussian noise calibrated to that l2 bound is
:math:`\sqrt m` times smaller than Laplace noise calibrated to the l1 bound :math:`km`, for a :math:`\delta`.

**Bounding** (:func:`bounded_key_rows`).  Each person keeps the :math:`m` keys they hold most rows of (ties broken
uniformly at random) and :math:`k` of their rows in each (a uniformly random choice): a function of the person's own
rows and of the keys listed (public, or shown by a private selection before), so one person added or removed changes
their own rows only.  Keeping the keys of most rows keeps more of the rows than a uniform choice does.

**The release**, per statistic, rows kept:

Every vector lies on a public lattice of power-of-two step :math:`\gamma` with :math:`2^{18}` to :math:`2^{19}` steps
of noise (:func:`~dpdist.central._gaussian_noise.lattice_for_mu`) and gets independent
:math:`\mathcal N_\mathbb{Z}(0, \sigma^2)` noise in steps
(:func:`~dpdist.central._gaussian_noise.discrete_gaussian_lattice`).

``"count"``, ``"persons"``
    The number of rows (``"persons"``: one row per person and key, :math:`k = 1`) per key: integers, exactly on the
    lattice (:math:`\gamma \le 1`; the released counts are multiples of :math:`\gamma`), l2 sensitivity
    :math:`k\sqrt m`.
``"sum"``
    The sum of the values clipped to :math:`[l, u]` per key, rounded to the lattice.  A person moves at most
    :math:`m` keys' sums, each by at most :math:`kB` (:math:`B = \max(|l|, |u|)`), and rounding each moved sum by at
    most one more step: l2 sensitivity :math:`kB\sqrt m/\gamma + \sqrt m` steps (Minkowski).
``"mean"``
    The noisy sum of the values centred at :math:`c = (l+u)/2` over the noisy count, per key, each vector at
    :math:`\mu/\sqrt 2` (sensitivities :math:`k\frac{u-l}{2}\sqrt m/\gamma + \sqrt m` and :math:`k\sqrt m`): the
    normalized sum of :func:`dpdist.central.mean`.
``"histogram"``
    The counts of ``bins`` equal-width bins of :math:`[l, u]` per key plus the noise: a person's rows in one key add
    at most :math:`k` to its bins (l2 at most :math:`k`), so :math:`k\sqrt m` over the keys; the shares are the counts
    clipped at 0 and normalised (uniform where all are 0).

**The guarantee, per person under add/remove.**  One vector of l2 sensitivity :math:`\Delta` with noise
:math:`\sigma` is :math:`\mu = \Delta/\sigma`-GDP up to the discrete noise's rounding distance on the coordinates a
person moves (:mod:`dpdist.central._gaussian_noise`: at most :math:`m` keys, :math:`m\min(k, \text{bins})` cells of a
histogram, :math:`2m` values of a mean's two vectors); :math:`\mu` is the largest whose :math:`\delta(\varepsilon;
\mu)` plus that slack is :math:`\delta` (:func:`~dpdist.central._gaussian_noise.gaussian_mu`; a mean's two vectors
at :math:`\mu/\sqrt 2` each compose to :math:`\mu`).  So the release is :math:`(\varepsilon, \delta)`-DP per person,
and :math:`\rho = \mu^2/2`-zCDP exactly (Canonne, Kamath & Steinke 2020, Thm. 14), which composes with other
releases' in a zCDP accountant.  Per record (no ``privacy_id``) the same holds with :math:`m = k = 1`.

**Intervals.**  :math:`P(Y \ge c) \le Q((c-1)/\sigma)` for :math:`c \ge 1` (:mod:`dpdist.central._selection`), so
:math:`h = \lceil\sigma\,\Phi^{-1}(1 - \alpha/2)\rceil` steps has :math:`P(|Y| > h) \le \alpha`; a sum's interval
widens by the half step of its rounding; a mean's is the range of :math:`c + S/N` over its sum's and count's intervals
at :math:`1 - \alpha/2` each (:func:`dpdist.central.sums._mean_interval`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .._guarantee import PrivacyGuarantee
from ..estimates import CountRelease, Distribution, ScalarRelease
from ._contributions import bounded_rows
from ._gaussian_noise import discrete_gaussian_lattice, gaussian_mu, lattice_for_mu, lattice_rho
from ._selection import bounded_pairs, pairs_of_rows
from .sums import _mean_interval

__all__ = ["GAUSSIAN_STATISTICS", "GroupedGaussian", "grouped_gaussian", "bounded_key_rows", "moved_values",
           "noise_sd"]

#: the statistics released by one Gaussian vector over the keys
GAUSSIAN_STATISTICS = ("count", "persons", "sum", "mean", "histogram")


@dataclass(frozen=True)
class GroupedGaussian:
    """A statistic released for every key by one Gaussian vector.

    Attributes
    ----------
    statistic : str
        One of :data:`GAUSSIAN_STATISTICS`.
    results : list
        One release per key code (``CountRelease``, ``ScalarRelease`` or ``Distribution``), each stating the
        guarantee of the whole vector.
    guarantee : PrivacyGuarantee
        ``(epsilon, delta)`` per person (or record) of the whole release.
    rho : float
        Its zCDP, for an accountant that adds them up.
    details : dict
        The noise, the sensitivities and the bounding.
    """

    statistic: str
    results: list
    guarantee: PrivacyGuarantee
    rho: float
    details: dict


def moved_values(statistic: str, max_groups: int, max_contributions: int, bins: int | None = None) -> int:
    """How many released values one person moves at most: their keys (a histogram's cells, a mean's two vectors)."""
    if statistic == "histogram":
        return max_groups * min(max_contributions, bins or 1)
    return 2 * max_groups if statistic == "mean" else max_groups


def noise_sd(statistic: str, epsilon: float, delta: float, max_groups: int, max_contributions: int,
             bounds: tuple[float, float] | None = None, bins: int | None = None) -> float:
    """The standard deviation of one key's noise in the values' units (a mean's: of its centred sum, over a count of
    one; a histogram's: of one cell's count), public parameters only, for a plan comparing it with a Laplace
    release's."""
    k = 1 if statistic == "persons" else max_contributions
    mu = gaussian_mu(epsilon, delta, moved_values(statistic, max_groups, k, bins))
    spread = k * math.sqrt(max_groups)
    if statistic == "sum":
        assert bounds is not None
        spread *= max(abs(bounds[0]), abs(bounds[1]))
    elif statistic == "mean":
        assert bounds is not None
        return spread * (bounds[1] - bounds[0]) / 2 / (mu / math.sqrt(2))
    return spread / mu


def bounded_key_rows(persons: np.ndarray, keys: np.ndarray, max_groups: int, max_contributions: int,
                     rng: np.random.Generator) -> np.ndarray:
    """The rows kept (ascending positions): of each person, the ``max_groups`` keys they hold most rows of (ties at
    random) and ``max_contributions`` of their rows in each (a uniformly random choice)."""
    persons, keys = np.asarray(persons, dtype=np.int64), np.asarray(keys, dtype=np.int64)
    if not persons.size:
        return np.zeros(0, dtype=np.int64)
    pairs, pair_of_row = pairs_of_rows(persons, keys)
    kept = np.zeros(len(pairs), dtype=bool)
    kept[bounded_pairs(pairs, max_groups, rng)] = True
    listed = np.flatnonzero(kept[pair_of_row])
    return listed[bounded_rows(pair_of_row[listed], max_contributions, rng)]  # each kept pair's rows, k of them


def grouped_gaussian(statistic: str, keys: np.ndarray, persons: np.ndarray, values: np.ndarray | None, n_keys: int,
                     *, epsilon: float, delta: float, max_groups: int, max_contributions: int,
                     bounds: tuple[float, float] | None = None, bins: int | None = None, level: float = 0.95,
                     rng: np.random.Generator, unit: str = "person") -> GroupedGaussian:
    """``statistic`` of the rows of each key code ``0 .. n_keys - 1`` (rows of other keys left out before), one
    Gaussian vector at ``(epsilon, delta)`` per person (module docstring); rows bounded here."""
    k = 1 if statistic == "persons" else max_contributions
    listed = np.flatnonzero((np.asarray(keys) >= 0) & (np.asarray(keys) < n_keys))
    kept = listed[bounded_key_rows(np.asarray(persons)[listed], np.asarray(keys)[listed], max_groups, k, rng)]
    keys = np.asarray(keys, dtype=np.int64)[kept]
    mu = gaussian_mu(epsilon, delta, moved_values(statistic, max_groups, k, bins))
    alpha, spread = 1 - float(level), k * math.sqrt(max_groups)
    guarantee = PrivacyGuarantee(epsilon, delta, "add-remove", "central", unit=unit)
    stated = (epsilon, float(level), guarantee)
    if statistic in ("count", "persons"):
        counts, sigma, half, rho = _noisy_counts(np.bincount(keys, minlength=n_keys), spread, mu, alpha, rng)
        results: list = [CountRelease(c, sigma, c - half, c + half, float(level), "count", epsilon, {}, guarantee)
                         for c in counts.tolist()]
    elif statistic == "histogram":
        assert bounds is not None and bins is not None
        edges = np.linspace(bounds[0], bounds[1], bins + 1)
        cells = np.clip(((np.asarray(values, dtype=float)[kept] - bounds[0]) / (bounds[1] - bounds[0]) * bins)
                        .astype(np.int64), 0, bins - 1)
        flat = np.bincount(keys * bins + cells, minlength=n_keys * bins)
        counts, sigma, _, rho = _noisy_counts(flat, spread, mu, alpha, rng)
        results = [_shares(edges, row, epsilon, guarantee) for row in counts.reshape(n_keys, bins)]
    else:
        assert bounds is not None
        clipped = np.clip(np.asarray(values, dtype=float)[kept], *bounds)
        results, sigma, rho = _sums_or_means(statistic, clipped, keys, n_keys, bounds, (max_groups, k), mu, alpha,
                                             stated, rng)
    details = {"mechanism": "one discrete Gaussian vector over the keys (l2 sensitivity of m keys, k rows each)",
               "max_groups": max_groups, "max_contributions": k, "mu": mu, "rho": rho, "noise_sd": sigma,
               "bounding": "each person's keys of most rows, then a uniformly random choice of rows in each"}
    return GroupedGaussian(statistic, results, guarantee, rho, details)


def _noisy_counts(counts: np.ndarray, sensitivity: float, mu: float, alpha: float,
                  rng: np.random.Generator) -> tuple[np.ndarray, float, float, float]:
    """``(noisy counts, sigma, half width, rho)`` of integer counts of l2 sensitivity ``sensitivity`` at ``mu``."""
    step, steps, t, s = lattice_for_mu(mu, sensitivity, integer=True)
    noisy = np.round(counts / step).astype(np.int64) + discrete_gaussian_lattice(counts.size, t, s, rng)
    sigma = math.sqrt(t * s)
    return noisy * step, sigma * step, _half_steps(sigma, alpha) * step, lattice_rho(t, s, steps)


def _half_steps(sigma: float, alpha: float) -> int:
    r""":math:`h` with :math:`P(|Y| > h) \le 2Q(h/\sigma) \le \alpha` (module docstring)."""
    return math.ceil(sigma * float(special.ndtri(1 - alpha / 2)))


def _grid_release(totals: np.ndarray, sensitivity: float, moved: int, mu: float, alpha: float,
                  rng: np.random.Generator) -> tuple[np.ndarray, float, float, float]:
    """``(noisy sums, sigma, half width, rho)`` of real per-key sums of l2 sensitivity ``sensitivity`` over at most
    ``moved`` keys: rounded to the lattice, one step of slack per moved key (module docstring)."""
    if sensitivity == 0.0:  # bounds (0, 0): every clipped value is 0, the sums are public
        return np.zeros_like(totals), 0.0, 0.0, 0.0
    step, steps, t, s = lattice_for_mu(mu, sensitivity, rounding=math.sqrt(moved))
    noisy = np.round(totals / step).astype(np.int64) + discrete_gaussian_lattice(totals.size, t, s, rng)
    sigma = math.sqrt(t * s)
    return noisy * step, sigma * step, (_half_steps(sigma, alpha) + 0.5) * step, lattice_rho(t, s, steps)


def _sums_or_means(statistic: str, clipped: np.ndarray, keys: np.ndarray, n_keys: int, bounds: tuple[float, float],
                   unit: tuple[int, int], mu: float, alpha: float, stated: tuple,
                   rng: np.random.Generator) -> tuple[list, float, float]:
    """``(releases, sigma, rho)`` of the sums or the means per key (module docstring)."""
    epsilon, level, guarantee = stated
    (low, high), (m, k) = bounds, unit
    spread = k * math.sqrt(m)
    if statistic == "sum":
        sums, sigma, half, rho = _grid_release(np.bincount(keys, clipped, minlength=n_keys),
                                               spread * max(abs(low), abs(high)), m, mu, alpha, rng)
        results = [ScalarRelease("sum", v, sigma, v - half, v + half, level, "sum", epsilon, {}, guarantee)
                   for v in sums.tolist()]
        return results, sigma, rho
    middle, radius, half_mu = (low + high) / 2, (high - low) / 2, mu / math.sqrt(2)
    sums, sum_sigma, sum_half, sum_rho = _grid_release(np.bincount(keys, clipped - middle, minlength=n_keys),
                                                       spread * radius, m, half_mu, alpha / 2, rng)
    counts, count_sigma, count_half, count_rho = _noisy_counts(np.bincount(keys, minlength=n_keys), spread, half_mu,
                                                               alpha / 2, rng)
    results = []
    for total, count in zip(sums.tolist(), counts.tolist()):
        value = float(np.clip(middle + total / max(count, 1), low, high))
        lower, upper = _mean_interval(total, sum_half, count, count_half, middle, bounds)
        error = math.sqrt(sum_sigma**2 + (value - middle) ** 2 * count_sigma**2) / max(count, 1)
        results.append(ScalarRelease("mean", value, error, lower, upper, level, "mean", epsilon, {}, guarantee))
    return results, sum_sigma, sum_rho + count_rho


def _shares(edges: np.ndarray, counts: np.ndarray, epsilon: float, guarantee: PrivacyGuarantee) -> Distribution:
    """A key's histogram from its noisy bin counts: clipped at 0, normalised (uniform where none is positive)."""
    positive = np.maximum(counts.astype(float), 0.0)
    masses = positive / positive.sum() if positive.sum() > 0 else np.full(counts.size, 1.0 / counts.size)
    cdf = np.concatenate([[0.0], np.cumsum(masses)])
    cdf[-1] = 1.0
    return Distribution.from_cdf(edges, cdf, method="histogram-queries", epsilon=epsilon, n=None,
                                 details={"noise": "one discrete Gaussian vector over the keys' bins"},
                                 guarantee=guarantee)
