r"""Longitudinal OSUE, ``l-osue`` (Arcolezi, Couchot, Al Bouna & Xiao, ICDE 2022, sec. 4).

OUE with :math:`\varepsilon_\infty` memoized per value (the "optimized" permanent
round), then SUE (symmetric bit flips) with the budget that makes one report
:math:`\varepsilon_1`-LDP, solved by bisection; the guarantees over time and the
device's memo are :mod:`._longitudinal`'s.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..._rng import random_words
from ..._validation import EPSILON, NOT_SHOWN
from ...errors import IncompatibleStateError
from .._protocol import ProtocolTags, register
from ._longitudinal import EPSILON_1_BELOW, _SCALE, LongitudinalProtocol, _chain
from ._unary import UnaryEncoding, _threshold

__all__ = ["LOSUE"]


@register
class LOSUE(LongitudinalProtocol, UnaryEncoding):
    """Longitudinal OSUE (Arcolezi et al. 2022): OUE(:math:`\\varepsilon_\\infty`) memoized, then SUE(IRR).

    Parameters as :class:`LGRR`.  Reports are bit-packed like OUE's.  Both
    rounds draw each bit by comparing a 32-bit uniform with a threshold: the
    first round's :math:`p_1` rounds down and :math:`q_1` up, the second's
    :math:`p_2` down and :math:`q_2` up, which can only lower either ratio; the
    channel and estimator use the realized values.
    """

    name = "l-osue"
    summary = "longitudinal OUE/SUE: memoized OUE(eps_inf), then SUE with the IRR budget of eps_1 per report"
    tags = ProtocolTags(
        kind="frequency", finite_channel=True, exact_simulate=True, memoized=True, bernoulli_support=True, independent_bits=True
    )
    _constraints = {**UnaryEncoding._constraints, "epsilon_1": EPSILON}
    _relations = (*UnaryEncoding._relations, EPSILON_1_BELOW)

    def target_probabilities(self) -> tuple[float, float]:
        return 0.5, 1.0 / (math.exp(self.epsilon) + 1.0)

    def _setup(self):
        super()._setup()  # first-round thresholds in self._p_threshold / self._q_threshold
        self._p1, self._q1 = self._p, self._q
        target = self._params["epsilon_1"]
        low, high = 0.0, 2.0 * (self.epsilon + target) + 64.0
        for _ in range(200):  # bisection on the IRR budget; keep the side below the target
            middle = 0.5 * (low + high)
            if self._unary_epsilon(*self._irr_probabilities(middle)) <= target:
                low = middle
            else:
                high = middle
        self._p2, self._q2 = self._irr_probabilities(low)
        self._p2_threshold = int(round(self._p2 * _SCALE))
        self._q2_threshold = int(round(self._q2 * _SCALE))
        self._p, self._q = _chain(self._p1, self._q1, self._p2, self._q2)

    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"pThreshold": self._p_threshold, "qThreshold": self._q_threshold,
                "p2Threshold": self._p2_threshold, "q2Threshold": self._q2_threshold}

    @staticmethod
    def _irr_probabilities(epsilon_irr: float) -> tuple[float, float]:
        """SUE bits of budget ``epsilon_irr``, realized on the 2^-32 grid (p down, q up)."""
        p = math.exp(epsilon_irr / 2) / (math.exp(epsilon_irr / 2) + 1)
        return _threshold(p, round_up=False) / _SCALE, _threshold(1 - p, round_up=True) / _SCALE

    def _unary_epsilon(self, p2: float, q2: float) -> float:
        p, q = _chain(self._p1, self._q1, p2, q2)
        return math.log(p * (1 - q) / (q * (1 - p)))

    def _prr_epsilon(self) -> float:
        return math.log(self._p1 * (1 - self._q1) / (self._q1 * (1 - self._p1)))

    def _chain_epsilon(self) -> float:
        return math.log(self._p * (1 - self._q) / (self._q * (1 - self._p)))

    @property
    def epsilon_instantaneous(self) -> float:
        """:math:`\\varepsilon_I`: the SUE round between any two memoized bit vectors (all d bits may differ)."""
        p2, q2 = self._p2, self._q2
        return self.domain_size * math.log(max(p2 / q2, (1 - q2) / (1 - p2)))

    def _bits(self, items, rng, one: int, zero: int) -> np.ndarray:
        """Unpacked bits: bit ``items[i]`` of row i is 1 below ``one``/2^32, others below ``zero``/2^32."""
        n, d = items.size, self.domain_size
        uniforms = random_words(rng, -(-n * d // 2)).view(np.uint32)[: n * d].reshape(n, d)
        bits = uniforms < zero
        rows = np.arange(n)
        bits[rows, items] = uniforms[rows, items] < one
        return bits

    def permanent_response(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The first round (OUE bits, packed) of each value: what a device memoizes."""
        return np.packbits(self._bits(np.asarray(values), rng, self._p_threshold, self._q_threshold), axis=1)

    def instantaneous_response(self, memoized: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The second round: each memoized bit kept as 1 w.p. p2 (if 1) or set w.p. q2 (if 0)."""
        bits = np.unpackbits(np.asarray(memoized, dtype=np.uint8), axis=1, count=self.domain_size).astype(bool)
        uniforms = random_words(rng, -(-bits.size // 2)).view(np.uint32)[: bits.size].reshape(bits.shape)
        out = np.where(bits, uniforms < self._p2_threshold, uniforms < self._q2_threshold)
        return np.packbits(out, axis=1)

    def _privatize(self, values, rng):
        chunk = max(1, (1 << 20) // self.domain_size)
        parts = [
            self.instantaneous_response(self.permanent_response(values[start : start + chunk], rng), rng)
            for start in range(0, values.size, chunk)
        ]
        return np.concatenate(parts) if parts else np.zeros((0, self._n_bytes), dtype=np.uint8)

    def permanent_channel(self) -> np.ndarray:
        """``P[x, s]`` of the first round over the 2^d bit vectors (small d)."""
        return self._unary_matrix(self._p1, self._q1, rows_are_items=True)

    def instantaneous_channel(self) -> np.ndarray:
        """``P[s, y]`` of the second round over bit vectors (small d)."""
        return self._unary_matrix(self._p2, self._q2, rows_are_items=False)

    def _unary_matrix(self, p: float, q: float, *, rows_are_items: bool) -> np.ndarray:
        d = self.domain_size
        vectors = (np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1
        inputs = np.eye(d, dtype=np.int64) if rows_are_items else vectors
        matrix = np.empty((inputs.shape[0], 2**d))
        for row, source in enumerate(inputs):
            on = np.where(source == 1, p, q)
            matrix[row] = np.prod(np.where(vectors == 1, on, 1 - on), axis=1)
        return matrix

    def _check_memo_value(self, item: int, value) -> Any:
        if not (isinstance(value, list) and len(value) == self._n_bytes
                and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in value)):
            raise IncompatibleStateError(
                f"A memo maps items to {self._n_bytes} packed byte(s), integers in [0, 255]. Got an entry that is not "
                f"({NOT_SHOWN})."
            )
        return np.asarray(value, dtype=np.uint8)
