r"""LOLOHA, ``loloha``: longitudinal local hashing (Arcolezi, Pinzón, Palamidessi & Gambs, EDBT 2023).

"Frequency Estimation of Evolving Data Under Local Differential Privacy", sec. 4:
a device hashes its value into :math:`g` buckets with a hash function chosen
once, memoizes a permanent GRR over :math:`[g]` of each *bucket* at
:math:`\varepsilon_\infty`, and sends every day an instantaneous GRR of the
memoized bucket, with the budget that makes one report
:math:`\varepsilon_1`-LDP.  Memoizing buckets instead of values is the point:
however the value changes over time, the device has at most :math:`g`
permanent responses, so its total leak is at most :math:`g\,\varepsilon_\infty`
(:attr:`LOLOHA.epsilon_over_changes`), where L-GRR's grows with every new
value.  ``hash_range=2`` is BiLOLOHA; the default :math:`g` (OLOLOHA) minimizes
the estimator's variance (below), found by search over :math:`g \le 1024`.

Both rounds are "keep the bucket, else draw one uniformly" channels
(:math:`\lambda_1 = (e^{\varepsilon_\infty} - 1)/(e^{\varepsilon_\infty} + g - 1)`
for GRR at :math:`\varepsilon_\infty`), and such channels compose by multiplying
their keep probabilities: a report keeps the bucket with
:math:`\lambda = \lambda_1\lambda_2`.  One report is :math:`\varepsilon_1`-LDP
exactly when :math:`1 + g\lambda/(1-\lambda) = e^{\varepsilon_1}`, so
:math:`\lambda = (e^{\varepsilon_1} - 1)/(e^{\varepsilon_1} + g - 1)` and
:math:`\lambda_2 = \lambda/\lambda_1 \le 1` (as :math:`\varepsilon_1 \le
\varepsilon_\infty`).  A report is thus distributed as an FLH report
(:mod:`~dpdist.local.frequency.flh`) at :math:`\varepsilon_1`: the same public
family of :math:`S` Carter–Wegman functions, the same :math:`S \times g` table
aggregate (mergeable, exact ``simulate``), the same support-count estimator
with :math:`p^* = \lambda + (1-\lambda)/g` and
:math:`q^* = p^*c + (1-p^*)(1-c)/(g-1)` (:math:`c` the family's collision
probability), and the same variance :math:`q^*(1-q^*)/(n(p^*-q^*)^2)` at
:math:`f_v = 0`, which OLOLOHA's :math:`g` minimizes.  Only the device side
differs: :meth:`LOLOHA.client` keeps its function and its memo.
"""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np

from ..._rng import check_rng
from ..._validation import EPSILON
from ...errors import IncompatibleStateError, InvalidParameterError
from .._protocol import register
from . import _hashing
from .flh import FLH
from .longitudinal import _Longitudinal

__all__ = ["LOLOHA", "HashedMemoizedClient"]

#: largest g the OLOLOHA search considers
_MAX_SEARCHED_RANGE = 1024


def _keep(epsilon: float, g: int) -> float:
    """Keep probability of GRR over ``g`` outputs at ``epsilon`` (keep, else uniform over all ``g``)."""
    e = math.exp(epsilon)
    return (e - 1.0) / (e + g - 1.0)


def optimal_hash_range(epsilon_1: float, prime: int = 2**31 - 1) -> int:
    """OLOLOHA's :math:`g`: the range minimizing :math:`q^*(1-q^*)/(p^*-q^*)^2` (module docstring)."""
    best, best_variance = 2, math.inf
    for g in range(2, _MAX_SEARCHED_RANGE + 1):
        lam = _keep(epsilon_1, g)
        p = lam + (1.0 - lam) / g
        c = _hashing.collision_probability(prime, g)
        q = p * c + (1.0 - p) * (1.0 - c) / (g - 1)
        variance = q * (1.0 - q) / (p - q) ** 2
        if variance < best_variance * (1.0 - 1e-12):
            best, best_variance = g, variance
    return best


@register
class LOLOHA(_Longitudinal, FLH):
    r"""Longitudinal local hashing: a memoized GRR of the hashed bucket, then a GRR per report.

    Parameters
    ----------
    epsilon : float
        :math:`\varepsilon_\infty`: any number of reports of one bucket.
    epsilon_1 : float
        :math:`\varepsilon_1 < \varepsilon_\infty`: one report.
    domain_size : int
    hash_range : int, optional
        :math:`g`; default the variance-optimal one (OLOLOHA), 2 for BiLOLOHA.
    hash_count, hash_prime, family_seed
        The public hash family, as for ``flh``.
    """

    name = "loloha"
    summary = "longitudinal local hashing: memoized GRR(eps_inf) of the hashed bucket, then GRR to eps_1 per report"
    _constraints = {**FLH._constraints, "epsilon_1": EPSILON}
    _defaults = {**FLH._defaults}

    def _setup(self):
        self._check_budgets()
        epsilon_1 = self._params["epsilon_1"]
        if self._params["hash_range"] is None:
            self._params["hash_range"] = optimal_hash_range(epsilon_1, self._params["hash_prime"])
        super()._setup()  # FLH at epsilon (replaced below): family, table, g
        g = self._g
        self._keep_1 = _keep(self.epsilon, g)
        self._keep = _keep(epsilon_1, g)
        self._keep_2 = min(1.0, self._keep / self._keep_1)
        self._p = self._keep + (1.0 - self._keep) / g
        self._q = self._p * self._collision + (1.0 - self._p) * (1.0 - self._collision) / (g - 1)

    def _prr_epsilon(self) -> float:
        g = self._g
        return math.log((self._keep_1 + (1 - self._keep_1) / g) / ((1 - self._keep_1) / g))

    def _chain_epsilon(self) -> float:
        g = self._g
        return math.log((self._keep + (1 - self._keep) / g) / ((1 - self._keep) / g))

    @property
    def epsilon_over_changes(self) -> float:
        """:math:`g\\,\\varepsilon_\\infty`: the bound however often the value changes (at most g memos)."""
        return self._g * self._prr_epsilon()

    # ------------------------------------------------------------------ client
    def _grr(self, buckets: np.ndarray, keep: float, rng) -> np.ndarray:
        kept = rng.random(buckets.size) < keep
        return np.where(kept, buckets, rng.integers(0, self._g, size=buckets.size, dtype=np.int64))

    def bucket(self, functions, values) -> np.ndarray:
        """:math:`h_j(v)`: the bucket of each value under each device's function."""
        return _hashing.hash_items(self._seeds[np.asarray(functions)], np.asarray(values), self._prime, self._g)

    def permanent_response(self, buckets, rng) -> np.ndarray:
        """The first round (GRR at eps_inf over [g]) of each bucket: what a device memoizes."""
        return self._grr(np.asarray(buckets, dtype=np.int64), self._keep_1, rng)

    def instantaneous_response(self, memoized, rng) -> np.ndarray:
        """The second round of memoized buckets: one report's perturbed bucket each."""
        return self._grr(np.asarray(memoized, dtype=np.int64), self._keep_2, rng)

    def _privatize(self, values, rng):
        functions = rng.integers(0, self._S, size=values.size, dtype=np.int64)
        memo = self.permanent_response(self.bucket(functions, values), rng)
        return np.column_stack([functions, self.instantaneous_response(memo, rng)]).astype(self._report_dtype)

    def permanent_channel(self, values=None) -> np.ndarray:
        """``P[v, (j, s)]`` of the first round (column ``j g + s``): what all reports of ``v`` derive from."""
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        hashed = self.bucket(np.arange(self._S)[None, :], items[:, None])
        on, off = self._keep_1 + (1 - self._keep_1) / self._g, (1 - self._keep_1) / self._g
        law = np.where(hashed[:, :, None] == np.arange(self._g)[None, None, :], on, off)
        return (law / self._S).reshape(items.size, self.statistic_size)

    def client(self, state: dict | None = None) -> "HashedMemoizedClient":
        """A device's client: its hash function (drawn once) and the memo of each bucket."""
        return HashedMemoizedClient(self, state)


class HashedMemoizedClient:
    """A LOLOHA device: its function index ``j`` and the permanent response of each bucket.

    The state lives on the device (``to_dict`` / ``from_dict``, JSON-safe).  A
    device that forgets it and reports again spends fresh budget.
    """

    def __init__(self, protocol: LOLOHA, state: dict | None = None, rng=None):
        if not isinstance(protocol, LOLOHA):
            raise InvalidParameterError(f"HashedMemoizedClient needs a loloha protocol. Got {type(protocol).__name__}.")
        self.protocol = protocol
        state = state or {}
        function = state.get("function")
        if function is None:
            generator = check_rng(rng, secure=rng is None, owner="loloha client")
            function = int(generator.integers(0, protocol.hash_count))
        if not isinstance(function, int) or not 0 <= function < protocol.hash_count:
            raise IncompatibleStateError(f"A loloha device's function must be an int in [0, {protocol.hash_count}).")
        self.function = function
        self._memo: dict[int, int] = {}
        for bucket, response in (state.get("memo") or {}).items():
            bucket, response = int(bucket), int(response)
            if not (0 <= bucket < protocol.hash_range and 0 <= response < protocol.hash_range):
                raise IncompatibleStateError(f"Memo entry {bucket}: {response} outside [0, {protocol.hash_range}).")
            self._memo[bucket] = response

    @property
    def memo(self) -> dict[int, int]:
        """Bucket -> its memoized permanent response (at most ``g`` entries)."""
        return dict(self._memo)

    def report(self, value, rng=None) -> np.ndarray:
        """Today's report ``(j, y)`` of ``value``; the bucket's permanent response is drawn on first use."""
        generator = check_rng(rng, secure=rng is None, owner="loloha client")
        item = int(self.protocol._check_values([value])[0])
        bucket = int(self.protocol.bucket([self.function], [item])[0])
        if bucket not in self._memo:
            self._memo[bucket] = int(self.protocol.permanent_response(np.array([bucket]), generator)[0])
        perturbed = self.protocol.instantaneous_response(np.array([self._memo[bucket]]), generator)[0]
        return np.array([self.function, perturbed], dtype=self.protocol._report_dtype)

    def to_dict(self) -> dict[str, Any]:
        return {"config": self.protocol.config(), "function": self.function,
                "memo": {str(bucket): response for bucket, response in sorted(self._memo.items())}}

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> "HashedMemoizedClient":
        from .._protocol import from_config

        if not isinstance(state, dict) or "config" not in state or not isinstance(state.get("memo"), dict):
            raise IncompatibleStateError(f"Not a loloha client state: {json.dumps(state)[:200]}")
        return cls(from_config(state["config"]), state)
