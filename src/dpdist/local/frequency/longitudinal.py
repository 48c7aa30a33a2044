r"""Reports over time: memoized two-round randomization, ``l-grr`` and ``l-osue``.

A device that reports the same value every day must not leak more every day
(RAPPOR's idea, Erlingsson, Pihur & Korolova, CCS 2014).  Its first round, the
*permanent randomized response* (PRR), randomizes the value once with
:math:`\varepsilon_\infty` and the device memoizes the result per value; every
report then applies a fresh *instantaneous randomized response* (IRR) to the
memoized output.  Arcolezi, Couchot, Al Bouna & Xiao (ICDE 2022, "Improving the
utility of locally differentially private protocols for longitudinal and
multidimensional frequency estimates", sec. 4) choose the IRR's budget so that
one report is exactly :math:`\varepsilon_1`-LDP:

* ``l-grr``: GRR with :math:`\varepsilon_\infty`, then GRR with the IRR budget
  that makes the chain's ratio :math:`e^{\varepsilon_1}`;
* ``l-osue``: OUE with :math:`\varepsilon_\infty` (the "optimized" first round),
  then SUE (symmetric bit flips) with the IRR budget solved the same way.

Guarantees: one report is :math:`\varepsilon_1`-LDP (the exact channel of
:meth:`channel`); any number of reports of the *same* value is
:math:`\varepsilon_\infty`-LDP (they are post-processing of the one PRR output:
``stable_guarantee``); against any other history of :math:`T` reports, values
that change included, the loss is at most ``epsilon_over_changes(T)``, which
grows with :math:`T` (the pattern of changes shows in which memo a report comes
from; ``_memoized.py`` derives the bound).  "Values that change spend
:math:`\varepsilon_\infty` per distinct value" holds only against histories
with the same pattern of changes.
``epsilon`` is :math:`\varepsilon_\infty`, ``epsilon_1`` the per-report budget
(:math:`0 < \varepsilon_1 < \varepsilon_\infty`).

The chain is again a pure protocol (a report supports the true item with
:math:`p^* = p_1p_2 + (1-p_1)q_2` and another with :math:`q^* = q_1p_2 + (1-q_1)q_2`),
so the usual unbiased estimator applies to each round's reports.  The device's
memo is an explicit, serializable object, :class:`MemoizedClient`.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction
from typing import Any

import numpy as np

from ..._rng import check_rng, random_words
from ..._validation import EPSILON
from ...errors import IncompatibleStateError, InvalidParameterError
from .._bernoulli import GRID, exp_lower, grid_floor, mixture_keep
from .._protocol import ProtocolTags, register
from .._report_kinds import ItemReports
from ._bucket_client import refuse_seeded_memo
from ._memoized import MemoizedProtocol
from ._oracle import FrequencyOracle
from ._unary import UnaryEncoding, _threshold

__all__ = ["LGRR", "LOSUE", "MemoizedClient"]

_SCALE = 2.0**32


def _chain(p1: float, q1: float, p2: float, q2: float) -> tuple[float, float]:
    return p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2


def _grr_keeps(d: int, epsilon: float, epsilon_1: float) -> tuple[float, float]:
    """Keep probabilities ``(keep1, keep2)`` of the two GRR rounds over ``d`` values, on the 2^-53 grid.

    GRR over ``d`` values is "keep w.p. :math:`\\lambda`, else uniform over all ``d``", with
    :math:`p = \\lambda + (1-\\lambda)/d`, :math:`q = (1-\\lambda)/d` and ratio
    :math:`1 + d\\lambda/(1-\\lambda)`.  Round one alone must have ratio at most
    :math:`e^{\\varepsilon_\\infty}`; two rounds in a chain are GRR with keep
    :math:`\\lambda_1\\lambda_2` (a uniform output stays uniform), whose ratio must be at
    most :math:`e^{\\varepsilon_1}`: the IRR of Arcolezi et al. (2022), solved for
    :math:`\\lambda_2 \\le \\Lambda_1/\\lambda_1` with
    :math:`\\Lambda_1 = (e^{\\varepsilon_1}-1)/(e^{\\varepsilon_1}-1+d)`.  Both keeps are the
    largest multiples of :math:`2^{-53}` satisfying these in exact arithmetic
    (:mod:`dpdist.local._bernoulli`), so the draws ``U < keep`` realize them and neither
    ratio can exceed its budget.
    """
    keep1 = mixture_keep(epsilon, 1, d)
    boost = exp_lower(epsilon_1) - 1
    keep2 = grid_floor(boost / (boost + d) / Fraction(keep1)) if keep1 > 0 else 0.0
    # below 1 (when epsilon_1 is within a grid step of epsilon): the IRR keeps q2 > 0
    return keep1, min(keep2, (GRID - 1) / GRID)


def _grr_probabilities(keep: float, d: int) -> tuple[float, float]:
    """``(p, q)`` of GRR over ``d`` values with keep probability ``keep``."""
    q = (1.0 - keep) / d
    return keep + q, q


class _Longitudinal(MemoizedProtocol):
    """What both memoized protocols share: the two budgets and the client."""

    @property
    def memo_keys(self) -> int:
        """:math:`K = d`: the memo is keyed by the value."""
        return self.domain_size

    def _check_budgets(self) -> None:
        if not self._params["epsilon_1"] < self._params["epsilon"]:
            raise InvalidParameterError(
                f"The 'epsilon_1' parameter of {self.display_name} (one report) must be below 'epsilon' "
                f"(the longitudinal bound). Got epsilon_1={self._params['epsilon_1']!r} and "
                f"epsilon={self._params['epsilon']!r} instead."
            )

    @property
    def epsilon_longitudinal(self) -> float:
        """:math:`\\varepsilon_\\infty` realized by the permanent round (any number of reports of one value)."""
        return self._prr_epsilon()

    @property
    def epsilon_per_report(self) -> float:
        """:math:`\\varepsilon_1` realized by the chain (one report), from its exact probabilities."""
        return self._chain_epsilon()

    def client(self, memo: dict | None = None) -> "MemoizedClient":
        """A device's client: memoizes the permanent response of each value it reports."""
        return MemoizedClient(self, memo)


@register
class LGRR(_Longitudinal, FrequencyOracle):
    """Longitudinal GRR (Arcolezi et al. 2022): GRR(:math:`\\varepsilon_\\infty`) memoized, then GRR(IRR).

    Parameters
    ----------
    epsilon : float
        :math:`\\varepsilon_\\infty`, the bound for any number of reports of one value.
    epsilon_1 : float
        :math:`\\varepsilon_1 < \\varepsilon_\\infty`, the bound of one report.
    domain_size : int
    """

    name = "l-grr"
    statistic_total_per_report = 1  # a histogram of the reported items
    summary = "longitudinal GRR: memoized GRR(eps_inf), then GRR with the IRR budget of eps_1 per report"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=True, memoized=True)
    fixed_support_size = True
    _constraints = {**FrequencyOracle._constraints, "epsilon_1": EPSILON}

    def _setup(self):
        self._check_budgets()
        d = self.domain_size
        self._keep1, self._keep2 = _grr_keeps(d, self.epsilon, self._params["epsilon_1"])
        self._p1, self._q1 = _grr_probabilities(self._keep1, d)
        self._p2, self._q2 = _grr_probabilities(self._keep2, d)
        self._p, self._q = _chain(self._p1, self._q1, self._p2, self._q2)

    def _prr_epsilon(self) -> float:
        return math.log(self._p1 / self._q1)

    def _chain_epsilon(self) -> float:
        return math.log(self._p / self._q)

    @property
    def epsilon_instantaneous(self) -> float:
        """:math:`\\varepsilon_I = \\ln(p_2/q_2)`: the IRR's ratio between any two memoized items."""
        return math.log(self._p2 / self._q2)

    def support_probabilities(self):
        return self._p, self._q

    @staticmethod
    def _grr(items: np.ndarray, keep: float, d: int, dtype, rng) -> np.ndarray:
        kept = rng.random(items.size) < keep  # keep (a 2^-53 grid value: exact), else uniform over all d
        return np.where(kept, items.astype(dtype), rng.integers(0, d, size=items.size, dtype=dtype))

    def permanent_response(self, values, rng) -> np.ndarray:
        """The first round (PRR) of each value: what a device memoizes."""
        return self._grr(values, self._keep1, self.domain_size, self._report_dtype, rng)

    def instantaneous_response(self, memoized, rng) -> np.ndarray:
        """The second round (IRR) of memoized outputs: one report each."""
        return self._grr(memoized, self._keep2, self.domain_size, self._report_dtype, rng)

    def _privatize(self, values, rng):
        return self.instantaneous_response(self.permanent_response(values, rng), rng)

    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"keep1": self._keep1, "keep2": self._keep2, "p1": self._p1, "q1": self._q1, "p2": self._p2, "q2": self._q2}

    def _report_format(self):
        return ItemReports(self.domain_size)

    def _accumulate(self, reports):
        return np.bincount(reports, minlength=self.domain_size).astype(np.int64)

    def _simulate(self, values, rng):
        d = self.domain_size
        counts = np.bincount(values, minlength=d)
        for keep in (self._keep1, self._keep2):  # each round is GRR on the counts
            kept = rng.binomial(counts, keep)
            counts = kept + rng.multinomial(counts.sum() - kept.sum(), np.full(d, 1.0 / d))
        return counts.astype(np.int64)

    def channel(self, values=None):
        d = self.domain_size
        matrix = np.full((d, d), self._q) + np.eye(d) * (self._p - self._q)
        return matrix if values is None else matrix[self._check_values(values)]

    def permanent_channel(self) -> np.ndarray:
        """``P[x, s]`` of the first round."""
        d = self.domain_size
        return np.full((d, d), self._q1) + np.eye(d) * (self._p1 - self._q1)

    def instantaneous_channel(self) -> np.ndarray:
        """``P[s, y]`` of the second round."""
        d = self.domain_size
        return np.full((d, d), self._q2) + np.eye(d) * (self._p2 - self._q2)

    def report_index(self, reports):
        return np.asarray(reports, dtype=np.int64)


@register
class LOSUE(_Longitudinal, UnaryEncoding):
    """Longitudinal OSUE (Arcolezi et al. 2022): OUE(:math:`\\varepsilon_\\infty`) memoized, then SUE(IRR).

    Parameters as :class:`LGRR`.  Reports are bit-packed like OUE's.  Both
    rounds draw each bit by comparing a 32-bit uniform with a threshold: the
    first round's :math:`p_1` rounds down and :math:`q_1` up, the second's
    :math:`p_2` down and :math:`q_2` up, which can only lower either ratio; the
    channel and estimator use the realized values.
    """

    name = "l-osue"
    summary = "longitudinal OUE/SUE: memoized OUE(eps_inf), then SUE with the IRR budget of eps_1 per report"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=True, memoized=True)
    _constraints = {**UnaryEncoding._constraints, "epsilon_1": EPSILON}

    def target_probabilities(self):
        return 0.5, 1.0 / (math.exp(self.epsilon) + 1.0)

    def _setup(self):
        self._check_budgets()
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

    def permanent_response(self, values, rng) -> np.ndarray:
        """The first round (OUE bits, packed) of each value: what a device memoizes."""
        return np.packbits(self._bits(np.asarray(values), rng, self._p_threshold, self._q_threshold), axis=1)

    def instantaneous_response(self, memoized, rng) -> np.ndarray:
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


class MemoizedClient:
    """A device's side of a longitudinal protocol: the permanent response of each value, remembered.

    The memo lives on the device and must persist with it (``to_dict`` /
    ``from_dict``, JSON-safe): a device that forgets its memo and reports the
    same value again spends a fresh :math:`\\varepsilon_\\infty`.

    >>> proto = local.make("l-grr", epsilon=4.0, epsilon_1=1.0, domain_size=8)   # doctest: +SKIP
    >>> device = proto.client()                                                   # doctest: +SKIP
    >>> today = device.report(3)                                                  # doctest: +SKIP
    """

    def __init__(self, protocol, memo: dict | None = None, seeded: bool = False):
        if not isinstance(protocol, _Longitudinal):
            raise InvalidParameterError(
                f"MemoizedClient needs an l-grr or l-osue protocol. Got {type(protocol).__name__} instead."
            )
        self.protocol = protocol
        self._memo: dict[int, Any] = {}
        for key, value in (memo or {}).items():
            self._memo[int(key)] = value
        #: whether a permanent response was drawn from a caller's generator (reproducible from its seed)
        self.seeded = seeded

    @property
    def memo(self) -> dict[int, Any]:
        """Item -> its memoized permanent response (an item for l-grr, packed bits for l-osue)."""
        return dict(self._memo)

    def report(self, value, rng=None):
        """One report of ``value`` today (the permanent response is drawn on first use and kept)."""
        if rng is None and self.seeded:
            refuse_seeded_memo(self.protocol.display_name)
        generator = check_rng(rng, secure=rng is None, owner=f"{self.protocol.display_name} client")
        item = int(self.protocol._check_values([value])[0])
        # a permanent response is drawn every time, kept only for a new value: the same work whether or not
        # the value is new, so the report's timing does not tell a change
        drawn = self.protocol.permanent_response(np.array([item]), generator)[0]
        if item not in self._memo:
            self._memo[item] = drawn
            self.seeded = self.seeded or rng is not None
        memoized = np.asarray(self._memo[item])[None, ...]
        return self.protocol.instantaneous_response(memoized, generator)[0]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe memo with the protocol's config."""
        state = {
            "config": self.protocol.config(),
            "memo": {str(item): np.asarray(value).tolist() for item, value in sorted(self._memo.items())},
        }
        if self.seeded:
            state["seeded"] = True
        return state

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> "MemoizedClient":
        from .._protocol import from_config

        if not isinstance(state, dict) or "config" not in state or not isinstance(state.get("memo"), dict):
            raise IncompatibleStateError(f"Not a memoized client state: {json.dumps(state)[:200]}")
        protocol = from_config(state["config"])
        from ._bucket_client import parse_memo_key, read_seeded

        memo = {}
        for key, value in state["memo"].items():
            item = int(protocol._check_values([parse_memo_key(key)])[0])
            if isinstance(protocol, LGRR):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise IncompatibleStateError(f"Memo of item {item} must be an item (an integer). Got {value!r}.")
                memo[item] = int(protocol._check_values([value])[0])
            else:
                if not (isinstance(value, list) and len(value) == protocol._n_bytes
                        and all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 255 for v in value)):
                    raise IncompatibleStateError(
                        f"Memo of item {item} must be {protocol._n_bytes} packed byte(s), integers in [0, 255]. Got {value!r}."
                    )
                memo[item] = np.asarray(value, dtype=np.uint8)
        return cls(protocol, memo, seeded=read_seeded(state))
