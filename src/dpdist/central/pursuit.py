r"""Sparse approximation of the empirical CDF by differentially private matching pursuit (Alg. 2 of Tao & Sarwate).

Paper 002 sec. V (Alg. 2, Lemma 3, Lemma 4,
Theorem 4) and sec. VI-C (dictionaries).  Deviation from Alg. 2, for privacy:
the report-noisy-max step uses Laplace noise of scale :math:`2\Delta/\varepsilon`,
not :math:`\Delta/\varepsilon`.  The scores :math:`|\langle\tilde r_i,\phi\rangle|`
are not monotone in the data — replacing one entry can raise some scores and
lower others — and the :math:`\Delta/\varepsilon` scale is only
:math:`\varepsilon`-DP for monotone scores such as counts (Dwork & Roth 2014,
Claim 3.9 and its remark; Ding et al. 2021, the paper's ref. [11]).
"""

from __future__ import annotations

import numpy as np

from ._common import (
    GRID_SIZE,
    cdf_distribution,
    check_central_input,
    check_option,
    check_positive_int,
    grid_edges,
    to_unit_interval,
)
from ._defaults import pursuit_sparsity
from .dictionaries import make_dictionary
from .noise import laplace_mechanism, report_noisy_max
from ..estimates import Distribution
from ..postprocess import isotonic_cdf
from .._guarantee import sequential, split
from .._types import ArrayLike, FloatBounds, Seed
from .dictionaries import Dictionary

__all__ = ["matching_pursuit", "atom_sensitivities"]


def atom_sensitivities(dictionary: Dictionary, n: int) -> np.ndarray:
    r"""Lemma 3: the sensitivity of :math:`\langle\tilde r_i,\phi_j\rangle` is :math:`\frac1n\int|\phi_j|` (per atom).

    The residual's data-dependent part is the empirical CDF only (earlier
    coefficients and atoms are released values), and replacing one entry
    changes :math:`F_n` by at most :math:`1/n` on an interval.  Lemma 4: the
    absolute value has the same sensitivity.
    """
    return dictionary.l1_norms / max(n, 1)  # n = 0 has no neighbour: the noise of n = 1


def _pursue(atoms: Dictionary, data, sparsity: int, sensitivity: np.ndarray, epsilon_each: float,
            paper_scale: bool) -> tuple[np.ndarray, list, list]:
    """Alg. 2's loop: ``sparsity`` noisy selections and noisy coefficients; ``(weights, selected, coefficients)``."""
    residual = atoms.ecdf_inner_products(to_unit_interval(data.x, data.bounds))  # <r_i, phi_j> for every atom j
    selection_sensitivity = float(sensitivity.max())
    weights = np.zeros(atoms.size)
    selected, coefficients = [], []
    for _ in range(sparsity):
        index = report_noisy_max(np.abs(residual), selection_sensitivity, epsilon_each, data.rng, paper_scale=paper_scale)
        coefficient = float(laplace_mechanism(np.array([residual[index]]), sensitivity[index], epsilon_each, data.rng)[0])
        residual = residual - coefficient * atoms.gram[index]
        weights[index] += coefficient
        selected.append(index)
        coefficients.append(coefficient)
    return weights, selected, coefficients


def matching_pursuit(
    x: ArrayLike,
    epsilon: float,
    bounds: FloatBounds,
    dictionary: str = "legendre",
    size: int = 40,
    sparsity: int | None = None,
    rng: Seed = None,
    clip: bool = True,
    secure: bool = False,
    *,
    grid_size: int = GRID_SIZE,
    selection_scale: str = "dp",
    missing: str | float = "refuse",
    privacy_id: ArrayLike | None = None,
    max_contributions: int | str | None = None,
) -> Distribution:
    r"""Private CDF as an s-sparse combination of dictionary atoms (Alg. 2 of Tao & Sarwate).

    For i = 1..s: pick the atom with the largest noisy :math:`|\langle\tilde r_i,\phi\rangle|` (report noisy
    max), release its coefficient :math:`\tilde c_i = \langle\tilde r_i,\phi_{\tilde I_i}\rangle +
    \mathrm{Lap}(\Delta_{\tilde I_i}/\varepsilon')`, and update the residual :math:`\tilde r_{i+1} = \tilde r_i -
    \tilde c_i\phi_{\tilde I_i}`.  The data are touched once: :math:`\langle F_n,\phi_j\rangle` for all atoms;
    residual inner products follow from the dictionary's Gram matrix, so non-orthogonal dictionaries (B-splines,
    normal CDFs, unions) work as well.  The total budget is split evenly over the :math:`2s` releases,
    :math:`\varepsilon' = \varepsilon/(2s)` (Theorem 4, basic composition).  :math:`\tilde F = \sum_i\tilde
    c_i\phi_{\tilde I_i}` is then projected onto monotone CDFs in [0, 1] on the grid (Prop. 1).

    Parameters
    ----------
    x : array_like of float
        The data: any real values (clipped into ``bounds`` by default), possibly none.
    epsilon : float
        Total budget (pure epsilon-DP).
    bounds : (float, float)
        Public range of the data, mapped onto [-1, 1].
    dictionary : str
        ``"legendre"`` (default, the paper's), ``"bspline0"``, ``"bspline1"``,
        ``"normal-cdf"`` or a union such as ``"legendre+bspline1"`` (see
        :mod:`dpdist.central.dictionaries`).
    size : int
        Number of atoms in the dictionary (the paper's m; default 40, the paper's).
    sparsity : int, optional
        Number of selection steps s (an atom may be selected more than once).
        Default :math:`(\varepsilon n)^{0.3}/2` in [2, 16] from the public n
        (:func:`dpdist.central._defaults.pursuit_sparsity`).
    rng, clip, secure, privacy_id, max_contributions
        As in :func:`histogram_queries` (the last two: the guarantee per person); ``secure=True`` uses exact
        discrete Laplace noise on grid-snapped scores and coefficients from a CSPRNG.
    grid_size : int
        Bins of the returned Distribution.
    selection_scale : {"dp", "paper"}
        ``"dp"`` (default): report-noisy-max noise :math:`2\Delta/\varepsilon'`, which
        makes the whole release :math:`\varepsilon`-DP.  ``"paper"``: Alg. 2's
        :math:`\Delta/\varepsilon'` as printed, **not** :math:`\varepsilon`-DP (module
        docstring); for reproducing the paper's comparisons only, recorded in
        ``details["budget"]``.
    missing : {"refuse"} or float
        Missing values in ``x`` (:mod:`dpdist._missing`; replace neighbours: no ``"drop"``).

    Returns
    -------
    Distribution
        ``details`` holds the selected atoms, noisy coefficients and the budget split.
    """
    owner = "matching_pursuit"
    data = check_central_input(owner, x, epsilon=epsilon, bounds=bounds, rng=rng, clip=clip, secure=secure,
                               grid_size=grid_size, missing=missing, neighbouring="replace", privacy_id=privacy_id,
                               max_contributions=max_contributions)
    atoms = make_dictionary(dictionary, size, owner=owner)
    default = pursuit_sparsity(float(data.x.size), data.epsilon) if sparsity is None else sparsity
    sparsity = check_positive_int(owner, "sparsity", default, high=10_000)
    check_option(owner, "selection_scale", selection_scale, ("dp", "paper"))
    releases = split(data.guarantee("replace"), 2 * sparsity)  # Theorem 4: basic composition of 2s releases
    sensitivity = atom_sensitivities(atoms, data.x.size)
    weights, selected, coefficients = _pursue(atoms, data, sparsity, sensitivity, releases[0].epsilon,
                                              paper_scale=selection_scale == "paper")
    return _pursuit_release(data, atoms, weights, selected, coefficients, sensitivity, releases,
                            dictionary=dictionary, selection_scale=selection_scale)

def _pursuit_release(data, atoms, weights: np.ndarray, selected: list[int], coefficients: list[float],
                     sensitivity: np.ndarray, releases: list, *, dictionary: str, selection_scale: str) -> Distribution:
    """The released CDF: the selected atoms' combination on the grid, projected onto monotone CDFs (Prop. 1)."""
    paper_scale = selection_scale == "paper"
    epsilon_each = releases[0].epsilon
    edges = grid_edges(data.bounds, data.grid_size)
    raw = atoms.values(np.linspace(-1.0, 1.0, data.grid_size + 1)) @ weights
    cdf = isotonic_cdf(raw, pinned=True)
    details = {
        "dictionary": dictionary,
        "size": atoms.size,
        "sparsity": len(selected),
        "selected": [atoms.labels[i] for i in selected],
        "selected_index": selected,
        "coefficients": coefficients,
        "budget": {
            "per_release": epsilon_each,
            "releases": 2 * len(selected),
            "selection_noise_scale": (1 if paper_scale else 2) * float(sensitivity.max()) / epsilon_each,
            "selection_scale": selection_scale,
            "epsilon_dp": not paper_scale,
        },
        "sensitivity": sensitivity.tolist(),
        "secure": data.secure,
        "grid_size": data.grid_size,
    }
    return cdf_distribution(
        edges, cdf, n=data.x.size, details=data.details(**details),
        method="matching-pursuit (paper's selection scale: NOT differentially private)" if paper_scale
        else "matching-pursuit",
        guarantee=None if paper_scale else data.stated(sequential(releases)),  # no guarantee is claimed for the paper's scale
    )
