r"""PCKV-UE, ``pckv-ue``: Padding-and-Sampling, then unary encoding with the value correlated to the key.

Gu, Li, Cheng, Xiong, Cao, "PCKV: Locally Differentially Private Correlated Key-Value Data Collection
with Optimized Utility", USENIX Security 2020.  Each user samples one pair :math:`\langle k, v\rangle`
of their set padded to length :math:`\ell` (Algorithm 1), discretizes :math:`v` to :math:`v^* = \pm 1`
and reports a vector :math:`y \in \{1, -1, 0\}^{d'}` over the :math:`d' = d + \ell` real and dummy keys
(Algorithm 2):

.. math::

    y_k = \begin{cases} v^* & \text{w.p. } ap \\ -v^* & \text{w.p. } a(1-p) \\ 0 & \text{w.p. } 1-a \end{cases}
    \qquad
    y_i = \begin{cases} 1 & \text{w.p. } b/2 \\ -1 & \text{w.p. } b/2 \\ 0 & \text{w.p. } 1-b \end{cases}
    \ (i \ne k).

With :math:`\varepsilon_1 = \ln\frac{a(1-b)}{b(1-a)}` and :math:`\varepsilon_2 = \ln\frac{p}{1-p}`, the
combined report is :math:`\varepsilon`-LDP with :math:`\varepsilon = \max\{\varepsilon_2, \varepsilon_1 +
\ln[2/(1 + e^{-\varepsilon_2})]\}` (Theorem 2, proof in Appendix A), below the sequential
:math:`\varepsilon_1 + \varepsilon_2`.  The optimized allocation (proof in Appendix E) is :math:`a = 1/2`,
:math:`\varepsilon_2 = \varepsilon`, :math:`\varepsilon_1 = \ln[(e^\varepsilon + 1)/2]`, i.e.
:math:`p = e^\varepsilon/(e^\varepsilon + 1)`, :math:`b = 2/(e^\varepsilon + 3)`; here ``p`` is the largest
multiple of :math:`2^{-53}` with :math:`p/(1-p) \le e^\varepsilon` and ``b`` the smallest with
:math:`2p(1-b)/b \le e^\varepsilon`, in exact rational arithmetic, so the realized report meets
Theorem 2's bound; ``channel`` gives its exact law over sets and the conformance kit checks it.

Reports: :math:`2d'` bits packed (``PackedBitReports``): bit :math:`i` says :math:`y_i = 1`, bit
:math:`d' + i` says :math:`y_i = -1` (a row with both is refused as ``both_signs``).  ``simulate`` is
exact and costs :math:`O(n + d')`: after the sampling, each key's counts are three multinomials.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ...errors import InvalidParameterError
from .._bernoulli import exp_lower, odds_probability
from .._protocol import ProtocolTags, register
from .._report_kinds import PackedBitReports
from ._padded import PaddedKeyValue, grid_ceil

__all__ = ["PCKVUE"]

#: users randomized at once (two float arrays of d' columns each)
_CHUNK = 8192
#: the most extended keys d' whose 3^d' outputs ``channel`` enumerates
_CHANNEL_KEYS = 10


@register
class PCKVUE(PaddedKeyValue):
    """PCKV-UE over ``domain_size`` keys with padding length ``padding_length`` (see the module docstring)."""

    name = "pckv-ue"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    summary = "key-value pairs: padding-and-sampling, unary encoding with correlated key and value (PCKV-UE)"
    tags = ProtocolTags(kind="key_value", finite_channel=True, exact_simulate=True, unbiased=True)

    def _setup(self):
        bound = exp_lower(self.epsilon)
        p = Fraction(odds_probability(bound))  # epsilon_2 = epsilon
        self._a = 0.5
        self._p = float(p)
        self._b = grid_ceil(2 * p / (bound + 2 * p))  # 2p (1-b)/b <= e^epsilon: Theorem 2 with a = 1/2

    def composed_epsilon(self) -> float:
        """Theorem 2's :math:`\\max\\{\\varepsilon_2, \\varepsilon_1 + \\ln[2/(1+e^{-\\varepsilon_2})]\\}` for the realized a, b, p."""
        a, b, p = (Fraction(x) for x in (self._a, self._b, self._p))
        e1, e2 = a * (1 - b) / (b * (1 - a)), p / (1 - p)
        return max(self._log(e2), self._log(e1) + math.log(2) - self._log(1 + 1 / e2))

    # ------------------------------------------------------------------ client
    def _report_format(self):
        return PackedBitReports(2 * self.extended_size)

    def _privatize(self, values, rng):
        keys, signs = self._sample(values, rng)
        n, width = len(values), self.extended_size
        out = np.empty((n, self.report_format.row_shape[0]), dtype=np.uint8)
        for start in range(0, n, _CHUNK):
            stop = min(n, start + _CHUNK)
            rows = np.arange(stop - start)
            reported = rng.random((stop - start, width))  # every position draws both coins, the sampled one too
            coin = rng.random((stop - start, width))
            nonzero = reported < self._b
            positive = coin < 0.5
            at = keys[start:stop]
            nonzero[rows, at] = reported[rows, at] < self._a
            kept = coin[rows, at] < self._p
            positive[rows, at] = np.where(kept, signs[start:stop] == 1, signs[start:stop] == -1)
            bits = np.concatenate([nonzero & positive, nonzero & ~positive], axis=1)
            out[start:stop] = np.packbits(bits, axis=1)
        return out

    # ------------------------------------------------------------------ server
    def _check_reports(self, reports, invalid):
        """A key cannot say +1 and -1 at once (``both_signs``)."""
        bits = self._bits(reports)
        width = self.extended_size
        invalid["both_signs"] = np.any(bits[:, :width] & bits[:, width:], axis=1) if len(bits) else np.zeros(0, bool)
        return invalid

    def _bits(self, reports) -> np.ndarray:
        return np.unpackbits(np.asarray(reports, dtype=np.uint8), axis=1, count=2 * self.extended_size).astype(bool)

    def _accumulate(self, reports):
        return self._bits(reports).sum(axis=0, dtype=np.int64)

    def _simulate(self, values, rng):
        """Exact: the sampling of Algorithm 1 per user, then for each key three multinomials of its counts."""
        keys, signs = self._sample(values, rng)
        width = self.extended_size
        up = np.bincount(keys[signs == 1], minlength=width)
        down = np.bincount(keys[signs == -1], minlength=width)
        rest = len(values) - up - down
        a, b, p = self._a, self._b, self._p
        from_up = rng.multinomial(up, [a * p, a * (1 - p), 1 - a])
        from_down = rng.multinomial(down, [a * (1 - p), a * p, 1 - a])
        from_rest = rng.multinomial(rest, [b / 2, b / 2, 1 - b])
        total = from_up + from_down + from_rest
        return np.concatenate([total[:, 0], total[:, 1]]).astype(np.int64)

    # ------------------------------------------------------------------ channel
    def _codes(self) -> np.ndarray:
        width = self.extended_size
        if width > _CHANNEL_KEYS:
            raise InvalidParameterError(
                f"PCKV-UE.channel enumerates 3^(d + padding_length) outputs, for d + padding_length <= {_CHANNEL_KEYS}. "
                f"Got {width}."
            )
        return np.indices((3,) * width).reshape(width, -1).T  # code 0: y = 0, 1: y = +1, 2: y = -1; key 0 slowest

    def _pair_channel(self):
        a, b, p = self._a, self._b, self._p
        codes = self._codes()
        other = np.array([1 - b, b / 2, b / 2])
        kept = {0: np.array([1 - a, a * p, a * (1 - p)]), 1: np.array([1 - a, a * (1 - p), a * p])}
        everyone = np.prod(other[codes], axis=1)
        rows = []
        for k in range(self.extended_size):
            for s in (0, 1):
                rows.append(everyone * kept[s][codes[:, k]] / other[codes[:, k]])
        return np.array(rows)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        bits = self._bits(reports).astype(np.int64)
        width = self.extended_size
        codes = bits[:, :width] + 2 * bits[:, width:]
        return codes @ (3 ** np.arange(width - 1, -1, -1, dtype=np.int64))
