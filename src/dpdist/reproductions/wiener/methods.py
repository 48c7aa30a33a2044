r"""Method and metrics of the ``wiener`` reproduction (paper 001, sec. V and App. C).

:func:`noise_probe` (one collection that keeps the support vector, for Fig. 3),
:func:`noise_power_ratio`, :func:`mse_at_iteration`, :func:`top_k_mse` and
:func:`detections` (metrics that apply only to the cells that sweep their parameter;
they return ``None`` elsewhere) and :func:`significance_threshold` (eq. 6).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from scipy import fft, special

from ... import local, metrics
from ...estimates import FrequencyEstimate
from ...local.deconvolution import noise_power_spectrum
from ...local.frequency._oracle import FrequencyOracle

__all__ = [
    "noise_probe",
    "noise_power_ratio",
    "mse_at_iteration",
    "top_k_mse",
    "detections",
    "significance_threshold",
    "noise_ratio_se",
]


def significance_threshold(protocol: str, epsilon: float, domain_size: int, n: int, alpha: float = 0.05) -> float:
    r"""The significance threshold :math:`\Phi^{-1}(1-\alpha/d)\sqrt{\mathrm{Var}^*}` (paper 001, eq. 6)."""
    proto = local.make(protocol, epsilon=epsilon, domain_size=domain_size)
    return float(special.ndtri(1 - alpha / domain_size) * math.sqrt(proto.variance(n)[0]))



def noise_probe(values: np.ndarray, dataset: Any, params: dict[str, Any], rng: np.random.Generator) -> FrequencyEstimate:
    """One collection with ``params["protocol"]`` that keeps the support vector for Fig. 3.

    Returns the plain estimate (eq. 1) with ``details``: ``support_share`` (the paper's
    :math:`g`), ``p_star``, ``q_star`` and ``noise_spectrum`` (eq. 20 with the KRR
    exception :math:`P_0 = 0`, from :func:`~dpdist.local.deconvolution.noise_power_spectrum`).
    """
    proto = local.make(params["protocol"], epsilon=params["epsilon"], domain_size=dataset.domain_size)
    assert isinstance(proto, FrequencyOracle), "a support vector needs a frequency oracle"
    aggregator = proto.simulate(values, rng=rng)
    estimate = proto.estimate(aggregator)
    p_star, q_star = proto.support_probabilities()
    estimate.details.update(
        support_share=proto.support_counts(aggregator) / aggregator.n,
        p_star=p_star,
        q_star=q_star,
        noise_spectrum=noise_power_spectrum(dataset.domain_size, p_star, q_star, aggregator.n, protocol=proto),
    )
    return estimate


def noise_power_ratio(estimate: Any, truth: np.ndarray, band: int | None = None) -> float | None:
    r"""Empirical over analytic noise power in one octave of frequencies (Fig. 3), or ``None``.

    With :math:`N = G - F H` (eq. 15; :math:`F` from the true frequencies), the mean of
    :math:`|N_k|^2` over band ``b`` -- :math:`k = 0` for ``b = 0``, else
    :math:`2^{b-1} \le k < 2^b` (up to :math:`d/2`) -- divided by eq. 20's :math:`P_k`
    for :math:`k \ne 0`.  Expect 1 everywhere except KRR's :math:`P_0 = 0`.
    """
    details = getattr(estimate, "details", {}) or {}
    if band is None or "support_share" not in details:
        return None
    share = details["support_share"]
    d = share.size
    transfer = np.full(d // 2 + 1, details["p_star"] - details["q_star"])
    transfer[0] = details["p_star"] + (d - 1) * details["q_star"]
    noise = np.asarray(fft.rfft(share)) - np.asarray(fft.rfft(np.asarray(truth, dtype=np.float64))) * transfer
    power = np.real(noise) ** 2 + np.imag(noise) ** 2
    band = int(band)
    low, high = (0, 1) if band == 0 else (2 ** (band - 1), min(2**band, d // 2 + 1))
    if low >= high:
        return None
    return float(power[low:high].mean() / details["noise_spectrum"][1])


def noise_ratio_se(domain_size: int, band: int, repeats: int) -> float:
    r"""The standard error Theorem 3 gives the mean of :func:`noise_power_ratio` over ``repeats`` runs.

    The noise is a sum of many independent reports, so :math:`N_k` is nearly Gaussian and
    :math:`|N_k|^2 / P_k` is Exp(1) (sd 1) for :math:`0 < k < d/2` and :math:`\chi^2_1` (sd
    :math:`\sqrt 2`) at 0 and :math:`d/2`: the mean over the :math:`m_b` frequencies of band ``b``
    and ``repeats`` runs has sd at most :math:`\sqrt{2 / (m_b R)}`.
    """
    band = int(band)
    frequencies = 1 if band == 0 else min(2 ** (band - 1), domain_size // 2 + 1 - 2 ** (band - 1))
    return math.sqrt(2.0 / (frequencies * repeats))


def mse_at_iteration(estimate: Any, truth: np.ndarray, iteration: int | None = None) -> float | None:
    """MSE of the IIW iterate ``iteration`` (0 is DW; Figs. 4, 5), or ``None``.

    Needs an estimate made with ``keep_path=True`` (``details["path"]``).
    """
    path = (getattr(estimate, "details", {}) or {}).get("path")
    if iteration is None or path is None or int(iteration) >= path.shape[0]:
        return None
    return metrics.mse(path[int(iteration)], truth)


def top_k_mse(estimate: Any, truth: np.ndarray, k: int | None = None) -> float | None:
    """:func:`dpdist.metrics.mse_top_k` where the cell sweeps ``k`` (Figs. 8, 10c), else ``None``."""
    return None if k is None else metrics.mse_top_k(estimate, truth, int(k))


def detections(estimate: Any, truth: np.ndarray, threshold: float | None = None) -> Any:
    """:func:`dpdist.metrics.true_false_positives` where the cell sweeps ``threshold`` (Fig. 9), else ``None``."""
    return None if threshold is None else metrics.true_false_positives(estimate, truth, float(threshold))

