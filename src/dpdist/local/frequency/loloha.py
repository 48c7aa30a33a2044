r"""Longitudinal local hashing with memoization, ``loloha`` (Arcolezi, Pinzón, Palamidessi & Gambs, EDBT 2023).

"Frequency estimation of evolving data under local differential privacy", sec. 4
(Algorithm 1, LOLOHA).  Each user draws one hash function :math:`h` from a
universal family :math:`[d] \to [g]` *once* and keeps it; a value :math:`v` is
hashed to :math:`x = h(v)`, and

1. the permanent response (PRR) :math:`x' = \mathrm{GRR}_g(x; \varepsilon_\infty)`,
   :math:`p_1 = e^{\varepsilon_\infty}/(e^{\varepsilon_\infty}+g-1)`, :math:`q_1 = (1-p_1)/(g-1)`,
   is memoized per hashed value :math:`x` (not per value: values with one hash share it);
2. every report is :math:`(h, y)` with :math:`y = \mathrm{GRR}_g(x'; p_2, q_2)`, the
   instantaneous response (IRR) whose :math:`p_2` solves
   :math:`(p_1p_2 + (1-p_1)q_2)/(q_1p_2 + (1-q_1)q_2) = e^{\varepsilon_1}` (as in ``l-grr``).

Guarantees: one report is :math:`\varepsilon_1`-LDP (the exact channel over
:math:`(h, y)`, paper Thm. 1); any number of reports of one value is
:math:`\varepsilon_\infty`-LDP (post-processing of one PRR).  The paper's Theorem 2,
"a user whose value changes spends at most :math:`g\,\varepsilon_\infty` in total,
since at most :math:`g` hashed values are ever memoized", holds only against
histories whose hashed values change on the same reports: which of the :math:`g`
memos a report comes from shows the pattern of changes, and the exact loss of
BiLOLOHA (:math:`g = 2`) passes :math:`2\varepsilon_\infty` after ten reports.  The
bound that holds against every history of :math:`T` reports is
``epsilon_over_changes(T)`` (``_memoized.py``, with :math:`K = g` keys).

Variants (parameter ``variant``): ``"binary"`` (BiLOLOHA, :math:`g = 2`, the smallest
longitudinal loss :math:`2\varepsilon_\infty`) and ``"optimal"`` (OLOLOHA, the
variance-minimizing :math:`g` of the paper's sec. 4.3, with
:math:`a = e^{\varepsilon_\infty}`, :math:`b = e^{\varepsilon_1}`):

.. math::

    g = \max\Bigl(2, \operatorname{round}\frac{\sqrt{a^4 - 14a^2 - 12a^2b^2 + 12ab + 12a^3b + 1}
        - a^2 + 6a - 6b + 1}{6(a - b)}\Bigr).

Estimator (paper, eq. 6): a report supports :math:`v` when :math:`h(v) = y`; with
:math:`C_v` support counts,

.. math::

    \hat f_v = \frac{C_v/n - q^*}{p^* - q^*}, \quad p^* = p_1p_2 + (1-p_1)q_2, \quad
    q^* = p^*c + (1-p^*)\frac{1-c}{g-1},

with :math:`c` the exact collision probability of the hash family (the paper's
:math:`q^* = 1/g` is the case :math:`c = 1/g`), so the pure-protocol estimator and
variance of :class:`FrequencyOracle` apply exactly.  Hash family and report format
are ``olh``'s: ``uint64`` rows ``(seed, y)``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._docs import shared_parameters
from ..._validation import EPSILON, NOT_SHOWN, Options, Prime
from ...errors import IncompatibleStateError
from .._bernoulli import keep_or_uniform
from .._protocol import ProtocolTags, register
from . import _hashing
from ._bucket_client import BucketMemoClient, BucketMemoProtocol
from ._exact_channel import grr_matrix
from ._oracle import FrequencyOracle
from ._longitudinal import EPSILON_1_BELOW, _chain, _grr_keeps, _grr_probabilities
from ..._types import ArrayLike

__all__ = ["LOLOHA", "optimal_hash_range"]

_MERSENNE_31 = 2**31 - 1
_MAX_CHANNEL_OUTPUTS = 1 << 20


def optimal_hash_range(epsilon: float, epsilon_1: float) -> int:
    r"""OLOLOHA's :math:`g` (Arcolezi et al. 2023, sec. 4.3; formula in the module docstring)."""
    a, b = math.exp(epsilon), math.exp(epsilon_1)
    radicand = a**4 - 14 * a**2 - 12 * a**2 * b**2 + 12 * a * b + 12 * a**3 * b + 1
    if radicand <= 0:  # tiny budgets: the formula leaves the reals, the smallest g is the optimum
        return 2
    g = (math.sqrt(radicand) - a**2 + 6 * a - 6 * b + 1) / (6 * (a - b))
    return max(2, int(round(g)))


@register
@shared_parameters
class LOLOHA(BucketMemoProtocol, FrequencyOracle):
    """LOLOHA: hash once per user, GRR(:math:`\\varepsilon_\\infty`) memoized per hash value, then GRR(IRR).

    Parameters
    ----------
    {epsilon_longitudinal}
    {epsilon_1}
    domain_size : int
    variant : {"optimal", "binary"}
        OLOLOHA (variance-optimal :math:`g`) or BiLOLOHA (:math:`g = 2`).
    hash_prime : int
        Prime :math:`P` of the hash family (default :math:`2^{31}-1`; small for exact channels).
    """

    name = "loloha"
    summary = "longitudinal local hashing: hash once, memoized GRR_g(eps_inf) per hash value, GRR_g IRR (eps_1)"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=False, memoized=True)
    _constraints = {
        **FrequencyOracle._constraints,
        "epsilon_1": EPSILON,
        "variant": Options(("optimal", "binary")),
        "hash_prime": Prime(low=3, high=_MERSENNE_31),
    }
    _relations = (*FrequencyOracle._relations, EPSILON_1_BELOW, _hashing.PRIME_ABOVE_DOMAIN)
    _defaults = {"variant": "optimal", "hash_prime": _MERSENNE_31}

    def _setup(self):
        epsilon, epsilon_1, prime = self.epsilon, self._params["epsilon_1"], self._params["hash_prime"]
        self._prime = prime  # a prime >= domain_size: its rule and the table's relation
        self._g = 2 if self._params["variant"] == "binary" else optimal_hash_range(epsilon, epsilon_1)
        self._n_seeds = _hashing.seed_count(prime)
        # the two GRR_g rounds' keeps on the 2^-53 grid: PRR ratio <= e^eps_inf, chain <= e^eps_1, exactly
        self._keep1, self._keep2 = _grr_keeps(self._g, epsilon, epsilon_1)
        self._p1, self._q1 = _grr_probabilities(self._keep1, self._g)
        self._p2, self._q2 = _grr_probabilities(self._keep2, self._g)
        self._p = _chain(self._p1, self._q1, self._p2, self._q2)[0]
        self._q_other = (1 - self._p) / (self._g - 1)  # chain probability of one given wrong hash value
        c = _hashing.collision_probability(prime, self._g)
        self._q = self._p * c + self._q_other * (1 - c)

    @property
    def hash_range(self) -> int:
        """The :math:`g` used."""
        return self._g

    @property
    def epsilon_per_report(self) -> float:
        """:math:`\\varepsilon_1` realized by one report (chain ratio of the GRR_g rounds)."""
        return math.log(self._p / self._q_other)

    @property
    def epsilon_longitudinal(self) -> float:
        """:math:`\\varepsilon_\\infty` of any number of reports of one value (the PRR's ratio)."""
        return math.log(self._p1 / self._q1)

    @property
    def memo_keys(self) -> int:
        """:math:`K = g`: the memo is keyed by the hashed value."""
        return self._g

    @property
    def epsilon_instantaneous(self) -> float:
        """:math:`\\varepsilon_I = \\ln(p_2/q_2)`: the IRR's ratio between any two memoized hash values."""
        return math.log(self._p2 / self._q2)

    def support_probabilities(self) -> tuple[float, float]:
        return self._p, self._q

    # ------------------------------------------------------------------ client
    def client(self, randomness: ArrayLike | None = None, memo: dict | None = None) -> BucketMemoClient:
        """A device's client: its hash seed (drawn once) and the PRR of each hash value, memoized."""
        return BucketMemoClient(self, randomness, memo)

    def _draw_user_randomness(self, n, rng):
        return rng.integers(0, self._n_seeds, size=(n, 1), dtype=np.int64)

    def _bucket(self, randomness, items):
        return _hashing.hash_items(randomness[:, 0], items, self._prime, self._g)

    def permanent_response(self, buckets: np.ndarray, rng: np.random.Generator, randomness: Any = None) -> np.ndarray:
        """PRR: GRR_g(:math:`\\varepsilon_\\infty`) of each hash value (what a device memoizes)."""
        return keep_or_uniform(np.asarray(buckets, dtype=np.int64), self._keep1, self._g, rng)

    def instantaneous_response(self, memoized: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """IRR: GRR_g(:math:`p_2, q_2`) of memoized hash values."""
        return keep_or_uniform(np.asarray(memoized, dtype=np.int64), self._keep2, self._g, rng)

    def _report(self, randomness, responses):
        return np.column_stack([randomness[:, 0], responses]).astype(np.uint64)

    def _check_user_randomness(self, randomness):
        if randomness.shape != (1,) or not 0 <= randomness[0] < self._n_seeds:
            raise IncompatibleStateError(
                f"A LOLOHA client's randomness must be one seed in [0, {self._n_seeds}). Got {randomness.size} number(s), "
                f"not such a seed ({NOT_SHOWN})."
            )

    def _check_memo_entry(self, key, value):
        if not (0 <= key < self._g and isinstance(value, int) and 0 <= value < self._g):
            raise IncompatibleStateError(
                f"A LOLOHA memo maps hash values in [0, {self._g}) to values in [0, {self._g}). Got an entry that does "
                f"not ({NOT_SHOWN})."
            )
        return value

    def _privatize(self, values, rng):
        randomness = self._draw_user_randomness(values.size, rng)
        memoized = self.permanent_response(self._bucket(randomness, values), rng)
        return self._report(randomness, self.instantaneous_response(memoized, rng))

    # ------------------------------------------------------------------ server
    def _client_design(self):
        """The constants the JavaScript client's randomizer uses (``client_view()['design']``)."""
        return {"g": self._g, "keep1": self._keep1, "keep2": self._keep2, "p1": self._p1, "q1": self._q1, "p2": self._p2,
                "q2": self._q2, "p": self._p, "qOther": self._q_other}

    def _report_format(self):
        return _hashing.seed_value_format(self._n_seeds, self._g)

    def _accumulate(self, reports):
        return _hashing.support_counts(
            reports[:, 0].astype(np.int64), reports[:, 1].astype(np.int64), self.domain_size, self._prime, self._g
        )

    # ------------------------------------------------------------------ exact channels
    def _check_enumerable(self):
        outputs = self._n_seeds * self._g
        if outputs > _MAX_CHANNEL_OUTPUTS:
            raise NotImplementedError(
                f"LOLOHA.channel enumerates (P-1)P x g = {outputs} outputs; only for at most "
                f"{_MAX_CHANNEL_OUTPUTS} (use a small 'hash_prime')."
            )

    def _hashed_inputs(self, values):
        self._check_enumerable()
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        seeds = np.arange(self._n_seeds, dtype=np.int64)
        return _hashing.hash_items(seeds[None, :], items[:, None], self._prime, self._g)  # (items, seeds)

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """One report's law over ``(seed, y)``, column ``seed * g + y``; small ``hash_prime`` only."""
        hashed = self._hashed_inputs(values)
        rows = np.where(hashed[:, :, None] == np.arange(self._g), self._p, self._q_other)
        return (rows / self._n_seeds).reshape(hashed.shape[0], -1)

    def permanent_channel(self) -> np.ndarray:
        """``P[x, s]`` of the first round over hash values (GRR_g with :math:`\\varepsilon_\\infty`)."""
        return grr_matrix(self._p1, self._q1, self._g)

    def instantaneous_channel(self) -> np.ndarray:
        """``P[s, y]`` of the second round over hash values (GRR_g with :math:`p_2, q_2`)."""
        return grr_matrix(self._p2, self._q2, self._g)

    def repeated_channel(self, reports: int, values: ArrayLike | None = None) -> np.ndarray:
        """Law of ``reports`` reports of one value by one device (same seed, one memoized PRR).

        Columns: ``seed * g**reports + y_1 * g**(reports-1) + ... + y_T``.  The adversary who
        sees all of them sees this channel; its loss is at most :math:`\\varepsilon_\\infty`.
        """
        hashed = self._hashed_inputs(values)
        g = self._g
        prr, irr = self.permanent_channel(), self.instantaneous_channel()
        sequences = np.array(np.meshgrid(*[np.arange(g)] * reports, indexing="ij")).reshape(reports, -1)
        given_memo = np.prod(irr[:, sequences], axis=1)  # (memo value, sequence)
        law = prr @ given_memo  # (hash value, sequence)
        return (law[hashed] / self._n_seeds).reshape(hashed.shape[0], -1)

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        return reports[:, 0].astype(np.int64) * self._g + reports[:, 1].astype(np.int64)
