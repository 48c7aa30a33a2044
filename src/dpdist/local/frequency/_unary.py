r"""Unary encoding with bit-packed reports: the shared machinery of OUE and SUE.

A user with item :math:`v` sends :math:`d` bits; bit :math:`v` is 1 with
probability :math:`p`, every other bit with probability :math:`q`, all bits
independent.  The privacy ratio is :math:`p(1-q) / ((1-p)q) \le e^\varepsilon`.

Exact bits.  Each bit is drawn by comparing a uniform 32-bit integer with a
threshold, so the probabilities actually used are multiples of :math:`2^{-32}`:
:math:`p` is rounded *down* and :math:`q` *up*, which can only lower the ratio.
The protocol's ``support_probabilities``, ``channel`` and estimator all use
these realized values, so the estimator stays exactly unbiased and the ε-LDP
claim is checked on the probabilities the sampler really has.

Reports are ``uint8`` arrays of shape ``(n, ceil(d / 8))`` (``numpy.packbits``,
big-endian within a byte, padding bits zero): one bit per item, not one byte.
"""

from __future__ import annotations

import math
from typing import ClassVar

import numpy as np

from ...errors import MalformedReportError
from .._protocol import ProtocolTags
from ..._rng import random_words
from .._report_kinds import PackedBitReports
from .._reports import count_packed_bits
from ._oracle import FrequencyOracle
from ..._types import ArrayLike

__all__ = ["UnaryEncoding"]

_SCALE = 2.0**32
#: Bits per chunk when drawing reports: bounds the working memory at about 5 bytes x 2^20.
_CHUNK_BITS = 1 << 20


def _threshold(probability: float, *, round_up: bool) -> int:
    scaled = probability * _SCALE
    return int(math.ceil(scaled) if round_up else math.floor(scaled))


class UnaryEncoding(FrequencyOracle):
    """Base of unary-encoding protocols; subclasses give the target ``(p, q)``."""

    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)

    tags: ClassVar[ProtocolTags] = ProtocolTags(
        kind="frequency", finite_channel=True, exact_simulate=True, bernoulli_support=True, independent_bits=True
    )
    #: largest domain for which ``channel()`` enumerates all 2^d outputs
    max_channel_domain: ClassVar[int] = 12

    def target_probabilities(self) -> tuple[float, float]:
        raise NotImplementedError

    def _setup(self):
        p, q = self.target_probabilities()
        self._p_threshold = _threshold(p, round_up=False)
        self._q_threshold = _threshold(q, round_up=True)
        self._p = self._p_threshold / _SCALE
        self._q = self._q_threshold / _SCALE
        self._n_bytes = -(-self.domain_size // 8)

    def support_probabilities(self) -> tuple[float, float]:
        return self._p, self._q

    # ------------------------------------------------------------------ client
    def _privatize(self, values, rng):
        d = self.domain_size
        reports = np.empty((values.size, self._n_bytes), dtype=np.uint8)
        if d > _CHUNK_BITS:  # a user at a time, its bits in chunks: the same draws, the working memory still bounded
            for row, item in enumerate(values.tolist()):
                self._draw_report(item, rng, reports[row])
            return reports
        chunk = max(1, _CHUNK_BITS // d)
        for start in range(0, values.size, chunk):
            items = values[start : start + chunk]
            rows = np.arange(items.size)
            uniforms = random_words(rng, -(-items.size * d // 2)).view(np.uint32)
            uniforms = uniforms[: items.size * d].reshape(items.size, d)
            bits = uniforms < self._q_threshold
            # the uniform at the true item's position is independent of the others: reuse it for p
            bits[rows, items] = uniforms[rows, items] < self._p_threshold
            reports[start : start + items.size] = np.packbits(bits, axis=1)
        return reports

    def _draw_report(self, item: int | None, rng, report: np.ndarray) -> None:
        """Write into ``report`` the bits of one user holding ``item`` (None: the all-zero vector), :data:`_CHUNK_BITS` at
        a time.  The draws are those of the user's row in one chunk of :meth:`_privatize` (``_CHUNK_BITS`` is even: its
        32-bit halves of the 64-bit words follow on), without its ``d`` uniforms at once: 500 MB for one report of
        12 MB at ``d = 10^8``."""
        d = self.domain_size
        for start in range(0, d, _CHUNK_BITS):
            size = min(_CHUNK_BITS, d - start)
            uniforms = random_words(rng, -(-size // 2)).view(np.uint32)[:size]
            bits = uniforms < self._q_threshold
            if item is not None and start <= item < start + size:
                bits[item - start] = uniforms[item - start] < self._p_threshold
            report[start // 8 : (start + size + 7) // 8] = np.packbits(bits)

    def privatize_zero(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """``n`` reports of the all-zero vector: every bit 1 with probability ``q`` (the "UE-z" fake data of
        Arcolezi et al.'s RS+FD, :mod:`dpdist.local.multi.rsfd`)."""
        d = self.domain_size
        reports = np.empty((n, self._n_bytes), dtype=np.uint8)
        if d > _CHUNK_BITS:  # as _privatize
            for row in range(n):
                self._draw_report(None, rng, reports[row])
            return reports
        chunk = max(1, _CHUNK_BITS // d)
        for start in range(0, n, chunk):
            rows = min(chunk, n - start)
            uniforms = random_words(rng, -(-rows * d // 2)).view(np.uint32)[: rows * d].reshape(rows, d)
            reports[start : start + rows] = np.packbits(uniforms < self._q_threshold, axis=1)
        return reports

    def zero_channel(self) -> np.ndarray:
        """The law of :meth:`privatize_zero`'s report over the outputs of :meth:`channel` (small ``d`` only)."""
        d = self.domain_size
        outputs = (np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1
        return np.prod(np.where(outputs == 1, self._q, 1 - self._q), axis=1)

    # ------------------------------------------------------------------ server
    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"pThreshold": self._p_threshold, "qThreshold": self._q_threshold}

    def _report_format(self):
        return PackedBitReports(self.domain_size)

    def _accumulate(self, reports):
        return count_packed_bits(reports, self.domain_size)

    def _simulate(self, values, rng):
        true_counts = np.bincount(values, minlength=self.domain_size)
        return (rng.binomial(true_counts, self._p) + rng.binomial(values.size - true_counts, self._q)).astype(
            np.int64
        )

    # ------------------------------------------------------------------ helpers
    def pack(self, bits: ArrayLike) -> np.ndarray:
        """Pack an ``(n, d)`` 0/1 array into the report format."""
        bits = np.asarray(bits)
        if bits.ndim != 2 or bits.shape[1] != self.domain_size:
            raise MalformedReportError(
                f"{self.display_name}.pack needs a 0/1 array of shape (n, {self.domain_size}). "
                f"Got shape {bits.shape}."
            )
        return np.packbits(bits.astype(bool), axis=1)

    def unpack(self, reports: ArrayLike) -> np.ndarray:
        """The ``(n, d)`` 0/1 ``uint8`` bits of a batch of reports."""
        checked, _ = self.report_format.read(reports)
        return np.unpackbits(checked, axis=1, count=self.domain_size)

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        d = self.domain_size
        if d > self.max_channel_domain:
            raise NotImplementedError(
                f"{self.display_name}.channel enumerates 2^d outputs; only for d <= {self.max_channel_domain}."
            )
        outputs = (np.arange(2**d)[:, None] >> np.arange(d)[None, :]) & 1  # bit j of output y = item j
        matrix = np.empty((d, 2**d))
        for item in range(d):
            on = np.where(np.arange(d) == item, self._p, self._q)
            matrix[item] = np.prod(np.where(outputs == 1, on, 1 - on), axis=1)
        return matrix if values is None else matrix[self._check_values(values)]

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        bits = self.unpack(reports).astype(np.int64)
        return bits @ (1 << np.arange(self.domain_size, dtype=np.int64))
