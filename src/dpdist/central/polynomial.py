r"""Polynomial projection (Alg. 1 of Tao & Sarwate) and its decentralized / streaming form.

Paper 002 — Theorem 1 (Legendre projection of the
empirical CDF from moments), Alg. 1 (noisy moments; the paper's analytic Gaussian
mechanism of Balle & Wang 2018 is replaced by the exact discrete Gaussian on a
public grid, calibrated through zCDP, see :mod:`dpdist.central.noise`), Lemma 6 (sensitivity), Prop. 1 (isotonic
post-processing), sec. VI-B (decentralized sites and streaming batches each
release their noisy moments once; the server combines them weighted by n).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from ._common import (
    release_notes,
    GRID_SIZE,
    cdf_distribution,
    check_central_input,
    check_option,
    check_positive_int,
    grid_edges,
    to_unit_interval,
)
from ._defaults import polynomial_degree
from .moments import MOMENT_BASES, data_moments, evaluate_projection, legendre_coefficients, moment_sensitivities
from .noise import gaussian_mechanism, laplace_mechanism
from .._validation import Bounds, Integer, Items, Options, RealArray, check_param, validate_params
from ..errors import IncompatibleStateError
from ..estimates import Distribution, ReleasedDistribution
from ..postprocess import isotonic_cdf
from .._guarantee import PrivacyGuarantee, parallel
from .._types import ArrayLike, FloatBounds, Seed

__all__ = ["PolynomialMoments", "polynomial_projection", "MAX_DEGREE"]

#: Highest degree per moment basis (monomial moments: the Theorem 1 map is exact to ~1e-7 up to 30).
MAX_DEGREE = {"monomial": 30, "legendre": 200}


@validate_params({"basis": Options(MOMENT_BASES)})
@dataclass(frozen=True, repr=False)
class PolynomialMoments(ReleasedDistribution):
    r"""Noisy moment vector of one or more disjoint data sets: the mergeable state of polynomial projection.

    A site (or a batch of a stream) calls :meth:`release` once on its own data;
    releases of disjoint data merge with :meth:`merge` (or ``+``) into the
    pooled moments :math:`\tilde\mu = \sum_s n_s\tilde\mu_s/\sum_s n_s`, and
    :meth:`to_distribution` turns any set of releases into a CDF without
    touching old data.  Each record is in one release only, so by parallel
    composition the merged result is ``(max epsilon, max delta)``-DP.  It meets the
    result contract (:class:`dpdist.estimates.Estimate`) through that CDF.

    Attributes
    ----------
    moments : ndarray of shape (degree + 1,)
        Noisy mean moments (basis functions 1..degree+1 of ``basis``).
    n : int
        Number of records behind the moments (public under replacement DP); 0 for a release of
        no records (noise around the empty sum, weight 0 in a merge).
    degree : int
        Highest Legendre degree m of the projection.
    bounds : (float, float)
        Public data range mapped onto [-1, 1].
    basis : {"monomial", "legendre"}
        Which moments were released (see :mod:`dpdist.central.moments`).
    releases : tuple of dict
        One entry per release: n, epsilon, delta, mechanism, noise scale, sensitivities.
    """

    moments: np.ndarray
    n: int
    degree: int
    bounds: tuple
    basis: str = "monomial"
    releases: tuple = field(default_factory=tuple)

    def __post_init__(self):
        owner = "PolynomialMoments"
        degree = check_param(owner, "degree", self.degree, Integer(low=1, high=MAX_DEGREE[self.basis]))
        n = check_param(owner, "n", self.n, Integer(low=0))
        moments = np.array(check_param(owner, "moments", self.moments, RealArray(
            f"{degree + 1} finite numbers (degree + 1)", ndims=(1,), width=degree + 1)), dtype=np.float64)
        moments.setflags(write=False)
        object.__setattr__(self, "moments", moments)
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "degree", degree)
        object.__setattr__(self, "bounds", check_param(owner, "bounds", self.bounds, Bounds()))

    # ------------------------------------------------------------------ release
    @classmethod
    def release(
        cls,
        x: ArrayLike,
        epsilon: float,
        delta: float,
        bounds: FloatBounds,
        degree: int,
        rng: Seed = None,
        clip: bool = True,
        secure: bool = False,
        *,
        basis: str = "monomial",
        missing: str | float = "refuse",
        privacy_id: ArrayLike | None = None,
        max_contributions: int | str | None = None,
    ) -> "PolynomialMoments":
        r"""Steps 1-2 of Alg. 1: the data's moments plus noise, released once.

        Default: the moments snapped to a power-of-two grid plus exact
        discrete Gaussian noise for the l2 sensitivity of Lemma 6,
        :math:`(\varepsilon, \delta)`-DP through zCDP
        (:func:`dpdist.central.noise.gaussian_mechanism`; the paper's analytic
        Gaussian of continuous noise would release raw floats, which leak
        through their low-order bits, Mironov 2012).  ``secure=True``: exact
        discrete Laplace noise for the l1 sensitivity of Lemma 6 (plus one grid
        step per coordinate), pure :math:`\varepsilon`-DP, and a seed is refused
        (``delta`` is then validated but not spent).  ``missing``, ``privacy_id`` and ``max_contributions`` as in
        :func:`polynomial_projection` (replace neighbours: ``"drop"`` is refused; releases per person merge only
        with releases per person, of sites holding disjoint persons).
        """
        owner = "polynomial_projection"
        data = check_central_input(owner, x, epsilon=epsilon, bounds=bounds, rng=rng, clip=clip, secure=secure,
                                   delta=delta, needs_delta=True, missing=missing, neighbouring="replace",
                                   privacy_id=privacy_id, max_contributions=max_contributions)
        return cls._release(owner, data, degree, basis)

    @classmethod
    def _release(cls, owner: str, data, degree, basis) -> "PolynomialMoments":
        """:meth:`release` on validated inputs (:func:`~dpdist.central._common.check_central_input`)."""
        check_option(owner, "moments", basis, MOMENT_BASES)
        degree = check_param(owner, "degree", degree, Integer(low=1, high=MAX_DEGREE[basis]))
        n = data.x.size
        moments = data_moments(to_unit_interval(data.x, data.bounds), degree, basis)
        # n = 0 (public under replacement) has no neighbour; the noise of n = 1 keeps the output well defined
        l1, l2 = moment_sensitivities(degree, max(n, 1), basis)
        if data.secure:
            noisy = laplace_mechanism(moments, l1, data.epsilon, data.rng)
            record = {"mechanism": "discrete-laplace", "noise_scale": l1 / data.epsilon, "delta_spent": 0.0}
        else:
            noisy, sigma = gaussian_mechanism(moments, l2, data.epsilon, data.delta, data.rng)
            record = {"mechanism": "discrete-gaussian", "sigma": sigma, "delta_spent": data.delta}
        # no count of clipped values here: it would be an un-noised statistic of the data
        record.update(n=n, epsilon=data.epsilon, delta=data.delta, sensitivity_l1=l1, sensitivity_l2=l2)
        if data.unit is not None:  # the mechanism ran at the record-level budget: stated per person
            stated = data.stated(PrivacyGuarantee(data.epsilon, record["delta_spent"], "replace", "central"))
            record.update(epsilon=stated.epsilon, delta_spent=stated.delta, delta=stated.delta, unit="person",
                          privacy_unit=data.unit_details())
        if data.notes:  # the missing-value policy, which the distribution states (details["notes"])
            record["notes"] = list(data.notes)
        return cls(noisy, n, degree, data.bounds, basis, (record,))

    # ------------------------------------------------------------------ merge
    def _check_compatible(self, other: "PolynomialMoments") -> None:
        if not isinstance(other, PolynomialMoments):
            raise IncompatibleStateError(
                f"PolynomialMoments.merge needs another PolynomialMoments. Got {type(other).__name__} instead."
            )
        mine = (self.degree, tuple(self.bounds), self.basis, self.unit)
        theirs = (other.degree, tuple(other.bounds), other.basis, other.unit)
        if mine != theirs:
            raise IncompatibleStateError(
                "PolynomialMoments.merge needs releases with the same (degree, bounds, basis, unit). "
                f"Got {mine} and {theirs}."
            )

    def merge(self, other: "PolynomialMoments") -> "PolynomialMoments":
        """Pool two releases of disjoint data: moments weighted by n (associative, commutative)."""
        self._check_compatible(other)
        return PolynomialMoments.merge_all([self, other])

    __add__ = merge

    @classmethod
    @validate_params({"releases": Items(None, "a non-empty iterable of releases", min_length=1)})
    def merge_all(cls, releases: Iterable[PolynomialMoments]) -> "PolynomialMoments":
        """Pool any non-empty iterable of releases."""
        releases = list(releases)
        for other in releases[1:]:
            releases[0]._check_compatible(other)
        n = sum(r.n for r in releases)
        # weighted by n; releases of no records carry no weight (all of them empty: equal weights)
        weights = np.array([r.n for r in releases], dtype=np.float64) if n else np.ones(len(releases))
        moments = sum(w * r.moments for w, r in zip(weights, releases)) / weights.sum()
        first = releases[0]
        return cls(moments, n, first.degree, first.bounds, first.basis, tuple(e for r in releases for e in r.releases))

    # ------------------------------------------------------------------ estimate
    def coefficients(self) -> np.ndarray:
        r"""Step 3 of Alg. 1: noisy coefficients :math:`\tilde c_i` of the orthonormal Legendre basis."""
        return legendre_coefficients(self.moments, self.degree, self.basis)

    def to_distribution(self, grid_size: int = GRID_SIZE) -> Distribution:
        r"""Step 4 of Alg. 1 and Prop. 1: :math:`\tilde F_n` on a grid, isotonic regression, clipping to [0, 1].

        The CDF is evaluated at the ``grid_size + 1`` equal-width edges of the
        bounds and projected onto monotone sequences from 0 to 1 (the grid
        version of Prop. 1); the result is uniform within each grid bin.
        """
        grid_size = check_positive_int("PolynomialMoments.to_distribution", "grid_size", grid_size, low=2, high=2**20)
        edges = grid_edges(self.bounds, grid_size)
        raw = evaluate_projection(self.coefficients(), np.linspace(-1.0, 1.0, grid_size + 1))
        cdf = isotonic_cdf(raw, pinned=True)
        details = {**self.details, "grid_size": grid_size}
        return cdf_distribution(edges, cdf, method=self.method, guarantee=self.guarantee, n=self.n, details=details)

    @property
    def method(self) -> str:
        return "polynomial-projection"

    @property
    def details(self) -> dict:
        """The degree, the moments released, the noisy coefficients and the releases behind them."""
        return {
            "degree": self.degree,
            "moments": self.basis,
            "coefficients": self.coefficients().tolist(),
            "releases": [dict(r) for r in self.releases],
            "budget": {"moments": {"epsilon": self.epsilon, "delta": self.delta}},
            **({"privacy_unit": self.releases[0]["privacy_unit"]} if len(self.releases) == 1 and
               "privacy_unit" in self.releases[0] else {}),
            **release_notes(self.releases),
        }

    @property
    def unit(self) -> str:
        """``"person"`` for releases per person (``privacy_id``), else ``"record"``."""
        return str(self.releases[0].get("unit", "record")) if self.releases else "record"

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """Parallel composition over the releases: each record (each person) is in one (disjoint sites or batches)."""
        return parallel(
            PrivacyGuarantee(r["epsilon"], r["delta_spent"], "replace", "central", unit=r.get("unit", "record"))
            for r in self.releases
        )

    @property
    def epsilon(self) -> float:
        """Privacy loss of any one record: the largest epsilon among the (disjoint) releases."""
        return self.guarantee.epsilon

    @property
    def delta(self) -> float:
        return self.guarantee.delta

    def __repr__(self):
        return (
            f"PolynomialMoments(degree={self.degree}, basis={self.basis!r}, n={self.n}, "
            f"releases={len(self.releases)}, bounds={tuple(self.bounds)})"
        )


def polynomial_projection(
    x: ArrayLike,
    epsilon: float,
    delta: float,
    bounds: FloatBounds,
    degree: int | None = None,
    rng: Seed = None,
    clip: bool = True,
    secure: bool = False,
    *,
    moments: str = "monomial",
    grid_size: int = GRID_SIZE,
    missing: str | float = "refuse",
    privacy_id: ArrayLike | None = None,
    max_contributions: int | str | None = None,
) -> Distribution:
    r"""Private CDF by Legendre projection of the empirical CDF (Alg. 1 + Prop. 1 of Tao & Sarwate).

    The data are mapped onto :math:`[-1, 1]`; the moment vector
    :math:`\boldsymbol\mu` gets (discrete) Gaussian noise for its l2 sensitivity
    (Lemma 6); the noisy coefficients of Theorem 1 give
    :math:`\tilde F_n = \sum_{i=0}^m \tilde c_i e_i`, which is projected onto
    monotone CDFs (isotonic regression, clipped to [0, 1]).

    Parameters
    ----------
    x : array_like of float
        The data: any real values (clipped into ``bounds`` by default), possibly none.
    epsilon, delta : float
        Privacy budget (``epsilon > 0``, ``0 < delta < 1``), all spent on the moments.
    bounds : (float, float)
        Public range of the data.
    degree : int, optional
        Highest Legendre degree m (m + 1 basis functions, m + 1 moments); the
        paper finds m = 5..8 best at n = 1e4 for ``moments="monomial"``.  Default
        from the public n (replacement neighbours) and epsilon:
        :func:`dpdist.central._defaults.polynomial_degree`.  (A
        :class:`PolynomialMoments` release to be merged needs the same degree at
        every site, so :meth:`PolynomialMoments.release` takes it explicitly.)
    rng, clip, secure
        As in :func:`histogram_queries`; ``secure=True`` uses exact discrete
        Laplace noise (pure epsilon-DP) instead of the Gaussian.
    moments : {"monomial", "legendre"}
        ``"monomial"`` is the paper's Alg. 1.  ``"legendre"`` releases Legendre
        moments instead: same projection, same privacy argument, but the noise
        is not amplified by the ill-conditioned monomial-to-Legendre map (about
        12x less coefficient noise at degree 6, and usable up to degree 200).
    grid_size : int
        Bins of the returned Distribution.
    missing : {"refuse", "drop"} or float
        Missing values (NaN, None) in ``x``: refused with their count (the default), left out
        (``"drop"`` is refused: replace neighbours, n public), or each counted as the number given; the
        result's notes state the policy (:mod:`dpdist._missing`).
    privacy_id : array_like, optional
        Whose row each value is (one id per value); with ``max_contributions`` (the rows kept per
        person: an int >= 1, or ``"auto"`` to read it off the persons' numbers of rows, public under replace: no
        budget) the guarantee is per person
        (:mod:`dpdist.central._contributions`; the Gaussian's delta is chained over a person's rows).
        Ids compare exactly, numbers by value, strings as written (normalise them first); two kinds are refused
        (:mod:`dpdist._ids`).

    Returns
    -------
    Distribution
        ``details`` records the noise scale, sensitivities and budget.
    """
    owner = "polynomial_projection"
    # every argument is validated before the default degree reads epsilon and n (an epsilon of NaN or
    # inf used to reach the rule and raise a raw ValueError / OverflowError)
    data = check_central_input(owner, x, epsilon=epsilon, bounds=bounds, rng=rng, clip=clip, secure=secure,
                               delta=delta, needs_delta=True, missing=missing, neighbouring="replace",
                               privacy_id=privacy_id, max_contributions=max_contributions)
    check_option(owner, "moments", moments, MOMENT_BASES)
    if degree is None:
        degree = polynomial_degree(float(data.x.size), data.epsilon, moments)
    return PolynomialMoments._release(owner, data, degree, moments).to_distribution(grid_size)
