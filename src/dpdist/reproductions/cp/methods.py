r"""Methods and metrics of the ``cp`` reproduction (paper 004, sec. 5).

:func:`compressive_privatization` (one CP collection, Algorithm 1 without its last step),
:func:`paper_subset_selection` (the SS baseline with the paper's subset size),
:func:`decoded_l1` (the l1 error after a decoder) and :func:`privacy_loss` (the exact
epsilon of the run's randomizer).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ... import local, metrics, postprocess
from ..._rng import check_rng
from ...errors import InvalidParameterError
from ...estimates import FrequencyEstimate
from ...experiments import run_local_protocol
from ...local.frequency.ss import ceiling_subset_size

__all__ = ["MEASUREMENTS", "SPARSITY", "compressive_privatization", "decoded_l1", "paper_subset_selection", "privacy_loss"]

#: Number of rows m of CP's matrix (sec. 5).
MEASUREMENTS = 500

#: OMP sparsity per dataset.  Geo(lambda) has the tail :math:`\|p - [p]_s\|_1 = (1-\lambda)^s`,
#: so the smallest s making it (s, 0.1)-sparse is :math:`\lceil \log 0.1 / \log(1-\lambda) \rceil`:
#: 2 for Geo(0.8) (tail 0.04), 3 for Geo(0.6) (tail 0.064).  Unif(s) is exactly s-sparse.
SPARSITY = {"geo-0.8": 2, "geo-0.6": 3, "unif-10": 10, "unif-25": 25, "unif-10-k1000": 10, "unif-10-k50000": 10}


def compressive_privatization(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> FrequencyEstimate:
    r"""One CP collection of ``values`` (paper 004, mechanism (2) and Algorithm 1 without its last step).

    Parameters
    ----------
    values : ndarray of int
        The users' items.
    dataset : Dataset
        A categorical dataset; its ``name`` picks the sparsity in :data:`SPARSITY`.
    params : dict
        ``epsilon``; optional ``regime`` (``"auto"``: ``"high"`` below epsilon = 1,
        ``"medium"`` from 1 on, as sec. 2 and 4 of the paper), ``sparsity`` (default
        :data:`SPARSITY`; an int for every dataset, or a dict by dataset name whose
        missing names fall back to :data:`SPARSITY`), ``matrix_seed`` (default: drawn from ``rng``, a fresh public
        matrix per run) and any other parameter of ``local.make("cp", ...)``
        (``measurements``, ``calibration``, ``on_privacy_excess``).
    rng : numpy.random.Generator

    Returns
    -------
    FrequencyEstimate
        The raw OMP estimate :math:`D'^{-1} f` (``postprocess="none"``; the metrics
        decode it); ``epsilon`` is the exact privacy loss of the realized matrix.
    """
    params = dict(params)
    rng = check_rng(rng, owner="compressive_privatization")
    if dataset.kind != "categorical":
        raise InvalidParameterError(
            f"The 'dataset' of compressive_privatization must be categorical. Got {dataset.name!r} "
            f"({dataset.kind}) instead."
        )
    regime = params.pop("regime", "auto")
    if regime == "auto":  # a missing or invalid epsilon is reported by local.make
        epsilon = params.get("epsilon")
        regime = "medium" if isinstance(epsilon, (int, float)) and epsilon >= 1 else "high"
    sparsity = params.pop("sparsity", None)
    if isinstance(sparsity, dict):
        sparsity = sparsity.get(dataset.name)
    if sparsity is None:
        if dataset.name not in SPARSITY:
            raise InvalidParameterError(
                f"compressive_privatization needs a 'sparsity' parameter for dataset {dataset.name!r}; "
                f"defaults exist for {sorted(SPARSITY)}."
            )
        sparsity = SPARSITY[dataset.name]
    matrix_seed = params.pop("matrix_seed", None)
    if matrix_seed is None:
        matrix_seed = int(rng.integers(0, 2**63 - 1))
    params.setdefault("measurements", MEASUREMENTS)
    with warnings.catch_warnings():
        # calibration="none" warns that eps0 = eps exceeds eps; the privacy-loss metric records it
        warnings.filterwarnings("ignore", message="The 'epsilon' parameter of CP", category=UserWarning)
        proto = local.make(
            "cp", domain_size=dataset.domain_size, regime=regime, matrix_seed=matrix_seed, **params
        )
    return proto.estimate(proto.simulate(values, rng=rng), postprocess="none", sparsity=sparsity)


def paper_subset_selection(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> FrequencyEstimate:
    r"""The SS baseline as the paper ran it: ``ss`` with :math:`k = \lceil d / (e^\varepsilon + 1) \rceil`.

    The paper (sec. 5) runs its baselines with "the code provided by the authors in (Acharya, Sun, and Zhang
    2018) with the default settings", whose subset selection takes the ceiling; ``ss``'s own default is the
    integer of least variance, one lower in most settings.  Everything else is
    :func:`~dpdist.experiments.run_local_protocol` with ``params`` (``epsilon``, estimate options).
    """
    subset_size = ceiling_subset_size(params["epsilon"], dataset.domain_size)
    return run_local_protocol("ss", values, dataset, {**params, "subset_size": subset_size}, rng)


def decoded_l1(estimate: Any, truth: np.ndarray, *, decoder: str) -> float:
    r""":math:`\ell_1` error of ``estimate`` after the decoder ``decoder`` (a :data:`dpdist.postprocess.METHODS` name).

    Decoding the raw estimate here equals estimating with ``postprocess=decoder``: the
    post-processing is a deterministic function of the raw frequencies.
    """
    frequencies = estimate.frequencies if isinstance(estimate, FrequencyEstimate) else estimate
    return metrics.l1(postprocess.apply(decoder, frequencies), truth)


def privacy_loss(estimate: Any, truth: np.ndarray) -> float:
    """The epsilon the estimate's randomizer satisfies (for CP: the exact loss of its matrix)."""
    return float(estimate.epsilon)
