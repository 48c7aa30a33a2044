r"""The trust ladder's errors by Monte Carlo, with the deployments' exact samplers: what the tests hold each row to.

:func:`simulate_row` runs one row ``repeats`` times on the ladder's item counts and returns, per run, the mean
over the items of :math:`(\hat f_i - f_i)^2`:

* ``local``, ``shuffled``: the protocol's exact ``simulate`` (the aggregate of ``privatize``, drawn exactly; the
  relay permutes reports and changes no estimate) at the row's epsilon, estimated without post-processing;
* ``sample-and-threshold``: each item's sampled count :math:`S_i \sim \mathrm{Bin}(c_i, p)` (one binomial draw
  per item is the law of every device's own coin), released when :math:`S_i \ge K`;
* ``central (discrete Laplace)``, ``central (Gaussian)``: dpdist's exact samplers on the integer counts
  (``central.noise.laplace_mechanism`` and ``gaussian_mechanism``, as a curator runs them);
* ``secure aggregation``: the sum of :math:`n` Pólya shares whose ``honest`` part is one discrete Laplace: two
  negative binomials of shape :math:`n/\mathrm{honest}` and ratio :math:`\alpha` (the law of the shares' sum).
"""

from __future__ import annotations

import math

import numpy as np

from .. import local
from .._rng import check_rng
from ._ladder_result import Ladder
from ._ladder_rows import CENTRAL_SENSITIVITY
from ._local import protocol_at

__all__ = ["simulate_row"]


def simulate_row(rungs: Ladder, model: str, repeats: int, seed: int) -> np.ndarray:
    """Per run, the mean squared error over the items of row ``model`` of ``rungs`` (module docstring)."""
    row = rungs.row(model)
    counts = np.asarray(rungs.counts, dtype=np.int64)
    n = int(counts.sum())
    truth = counts / n
    rng = check_rng(seed)
    draw = _drawer(rungs, row, counts, rng)
    return np.array([float(np.mean((draw() - truth) ** 2)) for _ in range(int(repeats))])


def _drawer(rungs: Ladder, row, counts: np.ndarray, rng: np.random.Generator):
    """A function drawing one run's estimated frequencies of ``row``."""
    from ..central.noise import gaussian_mechanism, laplace_mechanism  # lazy: loads scipy (0.4-2 s)

    n, parameters = int(counts.sum()), row.parameters
    if row.model in ("local", "shuffled"):
        epsilon = rungs.epsilon if row.model == "local" else parameters["epsilon0"]
        protocol = protocol_at(local.from_config(rungs.config), epsilon, n)
        items = np.repeat(np.arange(counts.size), counts)
        return lambda: np.asarray(protocol.estimate(protocol.simulate(items, rng=rng)).frequencies)
    if row.model == "sample-and-threshold":
        p, threshold = parameters["sampling"], parameters["threshold"]

        def released() -> np.ndarray:
            sampled = rng.binomial(counts, p)
            return np.where(sampled >= threshold, sampled / (n * p), 0.0)
        return released
    if row.model == "central (discrete Laplace)":
        return lambda: laplace_mechanism(counts, CENTRAL_SENSITIVITY["l1"], rungs.epsilon, rng, integer_valued=True) / n
    if row.model == "central (Gaussian)":
        return lambda: gaussian_mechanism(counts, CENTRAL_SENSITIVITY["l2"], rungs.epsilon, rungs.delta, rng)[0] / n
    if row.model == "secure aggregation":
        shape = n / (n - rungs.colluding)  # the ladder's own colluding devices, not the row's word for them
        success = -math.expm1(-rungs.epsilon / CENTRAL_SENSITIVITY["l1"])  # 1 - alpha

        def summed() -> np.ndarray:
            noise = rng.negative_binomial(shape, success, counts.size) - rng.negative_binomial(shape, success, counts.size)
            return (counts + noise) / n
        return summed
    raise KeyError(row.model)
