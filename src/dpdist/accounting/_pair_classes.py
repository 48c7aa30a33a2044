r"""The channels of symmetric protocols summarized by output classes, for domains too large to enumerate.

For GRR, SS and the unary encodings (OUE, SUE) every ordered pair of inputs is the image of every
other under a permutation of the inputs and the matching permutation of the outputs, so one pair
stands for all.  Relative to the pair :math:`(x_0, x_1)`, the outputs fall into a few classes on
which :math:`\mu_0`, :math:`\mu_1` and the blanket :math:`\min_x R(x)` are proportional to each
other; every quantity of :mod:`._channel` (ratios, total variation, the minima that set the
candidates' rates) is the same on the class totals as on the outputs, so the pair's reductions are
computed from a "channel" whose outputs are the classes.  ``tests/amplification/test_amplification.py`` checks
that these tables give the reductions the enumerated channel gives, at small domains.

Class totals (:math:`\mu_0`, :math:`\mu_1`, blanket) with the protocols' own probabilities:

* GRR (:math:`p` the true value's, :math:`q` any other's): :math:`\{x_0\}: (p, q, q)`,
  :math:`\{x_1\}: (q, p, q)`, the other :math:`d-2` values: :math:`(d-2)(q, q, q)`.
* SS (:math:`k`-subsets; a subset holding the value has probability :math:`p_{in}/\binom{d-1}{k-1}`,
  one without it :math:`(1-p_{in})/\binom{d-1}{k}`; the blanket is the smaller, as every subset
  misses some value and holds another): classes by :math:`(x_0 \in S, x_1 \in S)`, of sizes
  :math:`\binom{d-2}{k-1}, \binom{d-2}{k-1}, \binom{d-2}{k-2}, \binom{d-2}{k}`.
* Unary encodings (bit :math:`x` is 1 with probability :math:`p`, every other bit with :math:`q`):
  classes by the bits :math:`(y_{x_0}, y_{x_1})` and which bit values the other :math:`d-2` bits
  show (all ones, all zeros, both); an output's blanket is its law under a value whose bit makes
  the likelihood smallest among the bits present.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["pair_classes"]


def pair_classes(protocol) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """``(mu0, mu1, blanket)`` over the output classes of one ordered pair, or None for other protocols."""
    builder = _BUILDERS.get(str(getattr(protocol, "name", "")))
    if builder is None or protocol.domain_size < 2:
        return None
    table = np.asarray(builder(protocol), dtype=np.float64)
    keep = table[:, 0] + table[:, 1] > 0
    return table[keep, 0], table[keep, 1], table[keep, 2]


def _grr(protocol) -> list[tuple[float, float, float]]:
    p, q, d = protocol._p, protocol._q, protocol.domain_size
    return [(p, q, q), (q, p, q), ((d - 2) * q, (d - 2) * q, (d - 2) * q)]


def _ss(protocol) -> list[tuple[float, float, float]]:
    d, k, p_in = protocol.domain_size, protocol.subset_size, float(protocol._p_in)
    inside, outside = p_in / math.comb(d - 1, k - 1), (1 - p_in) / math.comb(d - 1, k)
    low = min(inside, outside)
    one, both, neither = math.comb(d - 2, k - 1), math.comb(d - 2, k - 2) if k >= 2 else 0, math.comb(d - 2, k)
    return [
        (one * inside, one * outside, one * low),
        (one * outside, one * inside, one * low),
        (both * inside, both * inside, both * low),
        (neither * outside, neither * outside, neither * low),
    ]


def _unary(protocol) -> list[tuple[float, float, float]]:
    d, p, q = protocol.domain_size, float(protocol._p), float(protocol._q)
    true_bit, other_bit = (1 - p, p), (1 - q, q)  # probability of bit 0, bit 1
    ratio = (true_bit[0] / other_bit[0], true_bit[1] / other_bit[1])
    rest = d - 2
    patterns: list[tuple[tuple[int, ...], float]]
    if rest == 0:
        patterns = [((), 1.0)]
    else:  # which bit values the other d - 2 bits show, with their probability
        ones, zeros = q**rest, (1 - q) ** rest
        patterns = [((1,), ones), ((0,), zeros), ((0, 1), max(0.0, 1.0 - ones - zeros))]
    table = []
    for first in (0, 1):
        for second in (0, 1):
            for present, chance in patterns:
                smallest = min(ratio[bit] for bit in {first, second, *present})
                base = other_bit[first] * other_bit[second] * chance
                table.append((true_bit[first] * other_bit[second] * chance, other_bit[first] * true_bit[second] * chance, base * smallest))
    return table


_BUILDERS = {"grr": _grr, "ss": _ss, "oue": _unary, "sue": _unary}
