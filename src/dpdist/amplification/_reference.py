"""Wang et al.'s numerical variation-ratio bound, as published, for comparison only (benchmarks and tests).

Wang, Peng, Li, Wen, Li, Yu, Wang & Yang, "Privacy amplification via shuffling: unified, simplified, and
tightened" (VLDB 2024; code: github.com/wangsw/PrivacyAmplification): with p = q = e^eps0 and beta the
total variation of a neighbouring pair, every other user is a clone of either informative part with
probability alpha = beta / (e^eps0 - 1) each, and otherwise carries the victim's common part (their count
statistic has no third category).  dpdist's own bound does not rest on that last step (see the package
docstring); this function computes the published number with dpdist's exact engine, to compare against.
"""

from __future__ import annotations

import math

import numpy as np

from . import _structured
from ._accounting import _Bound
from ._reduction import Reduction
from ..errors import InvalidParameterError

__all__ = ["variation_ratio_epsilon"]


def variation_ratio_epsilon(protocol, n: int, delta: float) -> float:
    """The variation-ratio bound's epsilon for ``n`` shuffled reports of a GRR, SS, OUE or SUE protocol."""
    classes = _structured.pair_classes(protocol)
    if classes is None:
        raise InvalidParameterError(f"variation_ratio_epsilon: {protocol.display_name} is not GRR, SS, OUE or SUE.")
    first, second, _ = classes
    e = math.exp(protocol.guarantee.epsilon)
    alpha = float(np.maximum(first - second, 0).sum()) / (e - 1)
    common = 1 - alpha - e * alpha
    reduction = Reduction((e * alpha, alpha, common), (alpha, e * alpha, common), (alpha, alpha, 1 - 2 * alpha))
    return _Bound([[reduction]], n).epsilon(delta)
