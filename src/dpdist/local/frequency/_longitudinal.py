r"""Reports over time: memoized two-round randomization, shared by ``l-grr`` and ``l-osue``.

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
memo is an explicit, serializable object, :class:`MemoizedClient`.  The protocols
are :mod:`.l_grr` and :mod:`.l_osue`; this module holds what they share (the
budgets, the client, the GRR keeps that ``loloha`` reuses).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from ..._rng import check_rng
from ..._validation import Below, InstanceOf, validate_params
from .._bernoulli import GRID, exp_lower, grid_floor, mixture_keep
from ._bucket_client import memo_state, parse_memo_key, protocol_of_memo_state, read_seeded, refuse_seeded_memo
from ._memoized import MemoizedProtocol
from ._oracle import FrequencyOracle
from ..._types import Seed

__all__ = ["LongitudinalProtocol", "MemoizedClient"]

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


#: One report's budget ``epsilon_1`` is below the longitudinal bound ``epsilon`` (L-GRR, L-OSUE, LOLOHA).
EPSILON_1_BELOW = Below("epsilon_1", "epsilon", why="one report's budget, within the longitudinal bound",
                        counterexample={"epsilon": 1.0, "epsilon_1": 1.0})


class LongitudinalProtocol(MemoizedProtocol, FrequencyOracle):
    """What both memoized protocols share: the two budgets and the client.

    A subclass supplies the methods below that raise ``NotImplementedError``.
    """

    def permanent_response(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The first round (PRR) of each value: what a device memoizes."""
        raise NotImplementedError

    def instantaneous_response(self, memoized: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The second round (IRR) of memoized outputs: one report each."""
        raise NotImplementedError

    def _prr_epsilon(self) -> float:
        """The loss of the first round, from its realized probabilities."""
        raise NotImplementedError

    def _chain_epsilon(self) -> float:
        """The loss of one report (both rounds), from the chain's realized probabilities."""
        raise NotImplementedError

    @property
    def memo_keys(self) -> int:
        """:math:`K = d`: the memo is keyed by the value."""
        return self.domain_size

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

    def _check_memo_value(self, item: int, value) -> Any:
        """The memoized permanent response of ``item`` as read from a state; ``IncompatibleStateError`` if malformed."""
        raise NotImplementedError


class MemoizedClient:
    """A device's side of a longitudinal protocol: the permanent response of each value, remembered.

    The memo lives on the device and must persist with it (``to_dict`` /
    ``from_dict``, JSON-safe): a device that forgets its memo and reports the
    same value again spends a fresh :math:`\\varepsilon_\\infty`.

    >>> proto = local.make("l-grr", epsilon=4.0, epsilon_1=1.0, domain_size=8)   # doctest: +SKIP
    >>> device = proto.client()                                                   # doctest: +SKIP
    >>> today = device.report(3)                                                  # doctest: +SKIP
    """

    @validate_params({"protocol": InstanceOf(LongitudinalProtocol, "an l-grr or l-osue protocol")})
    def __init__(self, protocol: LongitudinalProtocol, memo: dict | None = None, seeded: bool = False):
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

    def report(self, value: Any, rng: Seed = None) -> Any:
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
        return memo_state(self.protocol, self._memo, self.seeded)

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> "MemoizedClient":
        protocol: LongitudinalProtocol = protocol_of_memo_state(state, LongitudinalProtocol, "l-grr or l-osue")
        memo = {}
        for key, value in state["memo"].items():
            item = int(protocol._check_values([parse_memo_key(key)])[0])
            memo[item] = protocol._check_memo_value(item, value)
        return cls(protocol, memo, seeded=read_seeded(state))
