r"""The white-box audit: the exact epsilon of a stated channel, and a test that the samples follow it.

Where the randomizer's output law is stated (a dpdist protocol's ``channel``, or an adapter's
textbook channel), its epsilon is exact: :math:`\max_y \max_{x, x'} \ln P[x, y] / P[x', y]` over the
audited inputs (the conformance kit's :func:`~dpdist.testing.max_privacy_loss`).  That number is
only the randomizer's if its samples follow the stated law: a Pearson chi-square test per input
(pooling outputs of expected count below 5), Bonferroni over the inputs, says whether they do.  A
wrong probability in an implementation (a GRR or OUE with the wrong ``q``: forestneo/sunPytools#6)
shows here even when it leaves the epsilon below the claim.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidParameterError
from ..testing import chi_square_pvalue, max_privacy_loss
from ._randomizer import Randomizer

__all__ = ["WhiteBox", "run_white_box"]


@dataclass(frozen=True)
class WhiteBox:
    channel_epsilon: float
    fit_pvalue: float
    samples_per_input: int


def run_white_box(randomizer: Randomizer, inputs: np.ndarray, samples: int, rng: np.random.Generator) -> WhiteBox:
    """The stated channel's exact epsilon on ``inputs`` and the fit of ``samples`` outputs per input to it."""
    assert randomizer.channel is not None and randomizer.output_index is not None
    channel = np.asarray(randomizer.channel(inputs), dtype=np.float64)
    if channel.ndim != 2 or len(channel) != len(inputs) or not np.all(np.isfinite(channel)) or np.any(channel < 0) \
            or not np.allclose(channel.sum(axis=1), 1.0, rtol=0, atol=1e-9):
        raise InvalidParameterError(f"channel of {randomizer.name!r} must give one row of output probabilities per "
                                    f"input (non-negative, each row summing to 1); got shape {channel.shape} with row "
                                    f"sums in [{np.nanmin(channel.sum(axis=-1)):.4g}, {np.nanmax(channel.sum(axis=-1)):.4g}].")
    pvalues = []
    for value, row in zip(inputs, channel):
        outputs = randomizer.sample(np.repeat(np.asarray(value)[None, ...], samples, axis=0), rng)
        index = np.asarray(randomizer.output_index(outputs), dtype=np.int64)
        observed = np.bincount(index, minlength=channel.shape[1])
        if observed.size > channel.shape[1]:
            pvalues.append(0.0)  # an output the stated channel gives probability 0 (outside its range)
            continue
        pvalues.append(chi_square_pvalue(observed, row))
    fit = min(1.0, len(pvalues) * min(pvalues))
    return WhiteBox(max_privacy_loss(channel), float(fit), samples)
