r"""Runner methods of the ``central`` reproduction: the four central-DP methods of paper 002.

``(values, dataset, params, rng) -> Distribution`` adapters of
:func:`dpdist.central.histogram_queries`, :func:`~dpdist.central.adaptive_quantiles`,
:func:`~dpdist.central.polynomial_projection` and :func:`~dpdist.central.matching_pursuit`,
registered as ``central-hq``, ``central-aq``, ``central-pp`` and ``central-mp``, with the
``setting`` (central, decentralized, streaming) of sec. VI-B; see the package docstring
(:mod:`dpdist.reproductions.central.spec`) for how each method works over ``parts``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...central import PolynomialMoments, adaptive_quantiles, histogram_queries, matching_pursuit
from ...central._common import check_option, grid_edges, to_unit_interval
from ...central.dictionaries import make_dictionary
from ...central.moments import data_moments, evaluate_projection, legendre_coefficients
from ...central.noise import laplace_mechanism
from ...errors import InvalidParameterError
from ..._validation import Described, Integer, check_param
from ...estimates import Distribution
from ...experiments import register_method
from ...postprocess import isotonic_cdf
from ...privacy import PrivacyGuarantee, parallel, sequential, split

__all__ = [
    "histogram_method",
    "adaptive_quantiles_method",
    "polynomial_method",
    "matching_pursuit_method",
    "SETTINGS",
    "GRID_SIZE",
]

SETTINGS = ("central", "decentralized", "streaming")
#: delta = n ** -DELTA_EXPONENT for a release of n records (the paper's delta = n^{-3/2}).
DELTA_EXPONENT = 1.5
GRID_SIZE = 1024


def _setting(owner: str, params: dict, n: int) -> tuple[str, int]:
    """The ``setting`` and number of ``parts`` of a cell (validated)."""
    setting = check_option(owner, "setting", params.get("setting", "central"), SETTINGS)
    parts = params.get("parts", 1) if setting != "central" else 1
    return setting, check_param(owner, "parts", parts, Described(Integer(low=1, high=n), f"an int in [1, n = {n}]"))


def _delta(params: dict, n_release: int) -> float:
    """The ``delta`` parameter, or n_release^{-3/2} (the paper's choice) when it is not given."""
    delta = params.get("delta")
    return float(delta) if delta is not None else float(n_release) ** -DELTA_EXPONENT


def _weighted_average(distributions, weights, method: str, n: int) -> Distribution:
    """The mixture :math:`\\sum_s w_s F_s` of CDFs on the same edges (weights sum to 1).

    The sites hold disjoint data, so their guarantees compose in parallel.
    """
    edges = distributions[0].edges
    cumulative = sum(w * d.cumulative for d, w in zip(distributions, weights))
    cumulative = np.maximum.accumulate(np.clip(cumulative, 0.0, 1.0))
    cumulative[0], cumulative[-1] = 0.0, 1.0
    details = {"parts": len(distributions), "combined": "n-weighted average of the parts' CDFs"}
    private = all(d.guarantee is not None for d in distributions)  # the paper-scale MP variant claims none
    guarantee = parallel(d.guarantee for d in distributions) if private else None
    return Distribution.from_cdf(
        edges, cumulative, method=method, epsilon=guarantee.epsilon if guarantee is not None else None, n=n, details=details,
        guarantee=guarantee,
    )


def _by_setting(owner, release, values, params, method_name):
    """Run ``release(x, epsilon) -> Distribution`` as the setting says (AQ and MP, see module docstring)."""
    epsilon = float(params["epsilon"])
    setting, parts = _setting(owner, params, values.size)
    if setting == "central" or parts == 1:
        return release(values, epsilon)
    if setting == "streaming":  # old data revisited at every round: one share of the budget per release
        rounds = split(PrivacyGuarantee(epsilon, 0.0, "replace", "central"), parts)
        last = release(values, rounds[-1].epsilon)
        spent = sequential([last.guarantee] * parts) if last.guarantee is not None else None
        return Distribution(
            last.edges, last.probabilities, method=last.method, epsilon=None if spent is None else spent.epsilon,
            n=last.n, details={**last.details, "parts": parts, "setting": setting}, guarantee=spent,
        )
    pieces = np.array_split(values, parts)
    sites = [release(piece, epsilon) for piece in pieces]
    weights = np.array([piece.size for piece in pieces], dtype=np.float64) / values.size
    return _weighted_average(sites, weights, method_name, values.size)


def _step_cdf(distribution: Distribution) -> Distribution:
    """The histogram's CDF as a staircase: each bin's mass jumps in at the bin's right edge.

    Represented exactly up to a width of 1e-9 of a bin: every bin [a, b] becomes
    [a, b - w] (no mass) and [b - w, b] (all its mass).
    """
    edges, masses = distribution.edges, distribution.probabilities
    inner = edges[1:] - 1e-9 * np.diff(edges)
    new_edges = np.empty(2 * masses.size + 1)
    new_edges[0::2], new_edges[1::2] = edges, inner
    new_masses = np.zeros(2 * masses.size)
    new_masses[1::2] = masses
    details = {**distribution.details, "cdf": "step"}
    return Distribution(new_edges, new_masses, method=distribution.method, epsilon=distribution.epsilon,
                        n=distribution.n, details=details, guarantee=distribution.guarantee)


def histogram_method(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> Distribution:
    """Histogram queries (sec. II-B1): ``bins`` (40), ``postprocess`` ("clip"), ``neighbouring`` ("replace").

    ``cdf="linear"`` (default, dpdist's :class:`~dpdist.Distribution`: uniform density
    inside a bin) or ``"step"`` (the staircase CDF of the binned data, constant inside
    a bin, which is how the paper's Fig. 4 appears to draw histogram queries).  With
    ``parts > 1`` every part releases its Laplace-noised counts once and the server
    post-processes their sum (clip negatives to 0, normalize).
    """
    owner = "central-hq"
    shape = check_option(owner, "cdf", params.get("cdf", "linear"), ("linear", "step"))
    estimate = _histogram(owner, values, dataset, params, rng)
    return _step_cdf(estimate) if shape == "step" else estimate


def _histogram(owner, values, dataset, params, rng) -> Distribution:
    epsilon = float(params["epsilon"])
    bins = params.get("bins", 40)
    postprocess = params.get("postprocess", "clip")
    neighbouring = params.get("neighbouring", "replace")
    setting, parts = _setting(owner, params, values.size)
    if parts == 1:
        return histogram_queries(
            values, epsilon, dataset.bounds, bins, rng=rng, postprocess=postprocess, neighbouring=neighbouring
        )
    check_option(owner, "postprocess", postprocess, ("clip",))
    sensitivity = 2.0 if check_option(owner, "neighbouring", neighbouring, ("replace", "add-remove")) == "replace" else 1.0
    edges = np.linspace(dataset.bounds[0], dataset.bounds[1], int(bins) + 1)
    total = np.zeros(int(bins))
    for piece in np.array_split(values, parts):  # one release per site / round
        counts = np.histogram(piece, bins=edges)[0].astype(np.float64)
        total += laplace_mechanism(counts, sensitivity, epsilon, rng, integer_valued=True)
    positive = np.maximum(total, 0.0)
    masses = positive / positive.sum() if positive.sum() > 0 else np.full(int(bins), 1.0 / int(bins))
    # every part's counts are released once, on its own records: parallel composition
    guarantee = parallel([PrivacyGuarantee(epsilon, 0.0, neighbouring, "central")] * parts)
    return Distribution.uniform_bins(
        masses, dataset.bounds, method="histogram-queries", epsilon=guarantee.epsilon, n=values.size,
        details={"parts": parts, "setting": setting, "noise_scale": sensitivity / epsilon}, guarantee=guarantee,
    )


def adaptive_quantiles_method(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> Distribution:
    """Adaptive quantiles (sec. II-B2) with ``iterations`` (80) noisy splits."""
    iterations = params.get("iterations", 80)

    def release(x, epsilon):
        return adaptive_quantiles(x, epsilon, dataset.bounds, iterations, rng=rng)

    return _by_setting("central-aq", release, values, params, "adaptive-quantiles")


def _nonprivate_projection(values, bounds, degree) -> Distribution:
    """Theorem 1 without noise: the Legendre projection of the empirical CDF, then Prop. 1 on the grid."""
    u = to_unit_interval(values, bounds)
    coefficients = legendre_coefficients(data_moments(u, degree, "legendre"), degree, "legendre")
    raw = evaluate_projection(coefficients, np.linspace(-1.0, 1.0, GRID_SIZE + 1))
    return Distribution.from_cdf(
        grid_edges(bounds, GRID_SIZE), isotonic_cdf(raw, pinned=True), method="polynomial-projection (non-private)",
        n=values.size, details={"degree": degree},
    )


def polynomial_method(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> Distribution:
    """Polynomial projection (Alg. 1): ``degree`` m (6), ``moments`` ("monomial"), ``private`` (True).

    With ``parts > 1`` every part releases its noisy moments once with
    delta = n_part^{-3/2}; the releases are pooled by :meth:`PolynomialMoments.merge_all`.
    """
    owner = "central-pp"
    degree = params.get("degree", 6)
    basis = params.get("moments", "monomial")
    if not params.get("private", True):
        return _nonprivate_projection(values, dataset.bounds, degree)
    epsilon = float(params["epsilon"])
    _, parts = _setting(owner, params, values.size)
    releases = [
        PolynomialMoments.release(piece, epsilon, _delta(params, piece.size), dataset.bounds, degree, rng=rng, basis=basis)
        for piece in np.array_split(values, parts)
    ]
    return PolynomialMoments.merge_all(releases).to_distribution(GRID_SIZE)


def _nonprivate_pursuit(values, bounds, dictionary, size, sparsity) -> Distribution:
    """Alg. 2 without noise: greedy selection of the largest |<r, phi>| and exact coefficients."""
    atoms = make_dictionary(dictionary, size)
    residual = atoms.ecdf_inner_products(to_unit_interval(values, bounds))
    weights = np.zeros(atoms.size)
    for _ in range(sparsity):
        index = int(np.argmax(np.abs(residual)))
        coefficient = residual[index]
        residual = residual - coefficient * atoms.gram[index]
        weights[index] += coefficient
    raw = atoms.values(np.linspace(-1.0, 1.0, GRID_SIZE + 1)) @ weights
    return Distribution.from_cdf(
        grid_edges(bounds, GRID_SIZE), isotonic_cdf(raw, pinned=True), method="matching-pursuit (non-private)",
        n=values.size, details={"dictionary": dictionary, "size": size, "sparsity": sparsity},
    )


def matching_pursuit_method(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> Distribution:
    r"""Matching pursuit (Alg. 2): ``dictionary`` ("legendre"), ``size`` (40), ``sparsity`` (6), ``private`` (True).

    ``selection_scale`` ("dp"): "paper" runs Alg. 2's :math:`\Delta/\varepsilon` selection
    noise, which is not epsilon-DP (:func:`~dpdist.central.matching_pursuit`); a labelled
    variant for the comparison only.
    """
    dictionary = params.get("dictionary", "legendre")
    selection_scale = params.get("selection_scale", "dp")
    size = params.get("size", 40)
    sparsity = params.get("sparsity", 6)
    if not params.get("private", True):
        return _nonprivate_pursuit(values, dataset.bounds, dictionary, size, sparsity)

    def release(x, epsilon):
        return matching_pursuit(
            x, epsilon, dataset.bounds, dictionary, size, sparsity, rng=rng, selection_scale=selection_scale
        )

    return _by_setting("central-mp", release, values, params, "matching-pursuit")


for _name, _function in (
    ("central-hq", histogram_method),
    ("central-aq", adaptive_quantiles_method),
    ("central-pp", polynomial_method),
    ("central-mp", matching_pursuit_method),
):
    try:
        register_method(_name, _function)
    except InvalidParameterError:  # the module was imported twice (e.g. reloaded in a test)
        pass
