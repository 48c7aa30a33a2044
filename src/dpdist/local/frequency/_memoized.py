r"""What memoized (longitudinal) protocols promise over time, and under which neighbouring relation.

A memoized protocol (``l-grr``, ``l-osue``, ``loloha``, ``dbitflippm``) draws a
*permanent response* (PRR) once per memo key (the value, its hash or its
bucket) and reports an *instantaneous response* (IRR) of it every time the
device reports a value with that key (RAPPOR's design: Erlingsson, Pihur &
Korolova, CCS 2014, sec. 3).  Two guarantees hold, under two relations:

``"stable"`` -- two devices, each holding one value unchanged over any number of
    reports: :math:`\varepsilon_\infty`, the PRR's own ratio (every report is
    post-processing of one PRR; RAPPOR's Theorem 2 and its stated assumption that
    the value does not change).

``"history"`` -- any two histories :math:`X, X'` of one device over :math:`T`
    reports (values that change included): the bound :math:`\varepsilon_T` below.
    No bound independent of :math:`T` exists: which permanent response a report
    comes from reveals the pattern of changes (a history that changes once
    against one that never changes is told apart with certainty as :math:`T`
    grows), so the claims "at most :math:`m\,\varepsilon_\infty` for
    :math:`m` distinct values" (l-grr, l-osue) and ":math:`g\,\varepsilon_\infty`"
    (LOLOHA, Arcolezi et al., EDBT 2023, Thm. 2) hold only against histories with
    the same pattern of changes.

Derivation of :math:`\varepsilon_T` (this module's own; two valid bounds, the smaller is stated).
Let :math:`\varepsilon_1` be one report's loss and
:math:`\varepsilon_I = \max_y \ln(\max_s P_I[s, y] / \min_s P_I[s, y])` the IRR's loss
over *any* two memo states :math:`s, s'`.

1. Chain rule: :math:`P(y_{1..T} | X) = \prod_t P(y_t | y_{<t}, X)`; the first factor is
   one report's channel (ratio :math:`\le e^{\varepsilon_1}`), every later one a mixture of
   IRR rows :math:`P_I[s, y_t]` over the posterior of the memo, so its ratio is at most
   :math:`e^{\varepsilon_I}`: :math:`\varepsilon_T \le \varepsilon_1 + (T-1)\varepsilon_I`.
2. Relabelling, then hybrids: changing the key of one report (others fixed) multiplies the
   likelihood by at most :math:`e^{\varepsilon_I}` (it swaps one IRR factor
   :math:`P_I[B_a, y_t]` for :math:`P_I[B_b, y_t]` inside the same expectation over the
   memos :math:`B`); giving each of a history's :math:`k \le \min(T, K)` key classes
   another key (a permutation :math:`\pi` of the :math:`K` keys, same pattern) costs at most
   :math:`k\,\varepsilon_\infty` (the memos are independent PRRs).  Averaged over all
   permutations, :math:`\pi(X)` agrees with :math:`X'` in :math:`T/K` reports, so one
   :math:`\pi` agrees in at least :math:`\lceil T/K \rceil`:
   :math:`\varepsilon_T \le \min(T, K)\,\varepsilon_\infty + (T - \lceil T/K\rceil)\varepsilon_I`.

For :math:`K = 2` keys (l-grr with d = 2, BiLOLOHA) the second bound grows at
:math:`\varepsilon_I/2` per report, the rate of the exact loss (the alternating
history against a constant one).  For LOLOHA the hash seed is public and drawn
independently of the data, so its loss is the largest over seeds of the loss of
key histories, :math:`K = g`.  dBitFlipPM has no IRR (:math:`\varepsilon_I = \infty`):
two reports already reveal whether the bucket changed, so its history bound is
infinite beyond one report.  ``dpdist.testing.check_reports_over_time`` proves both
relations on the exact joint law of every pair of key histories.
"""

from __future__ import annotations

import math
from typing import Any

from ..._validation import Integer, check_param
from ...errors import InvalidParameterError
from ..._guarantee import PrivacyGuarantee
from .._protocol import LocalProtocol

__all__ = ["MemoizedProtocol", "history_epsilon"]


def history_epsilon(reports: int, epsilon_1: float, epsilon_inf: float, epsilon_irr: float, keys: int) -> float:
    r""":math:`\varepsilon_T` of the module docstring: the smaller of the chain and relabelling bounds."""
    if reports == 1:
        return epsilon_1
    if math.isinf(epsilon_irr):
        return math.inf
    chain = epsilon_1 + (reports - 1) * epsilon_irr
    relabelled = min(reports, keys) * epsilon_inf + (reports - math.ceil(reports / keys)) * epsilon_irr
    return min(chain, relabelled)


class MemoizedProtocol(LocalProtocol):
    """The over-time guarantees of a protocol that memoizes a permanent response per key.

    A subclass supplies ``epsilon_per_report`` (:math:`\\varepsilon_1`),
    ``epsilon_longitudinal`` (:math:`\\varepsilon_\\infty`), ``epsilon_instantaneous``
    (:math:`\\varepsilon_I`) and ``memo_keys`` (:math:`K`).
    """

    @property
    def epsilon_per_report(self) -> float:
        """:math:`\\varepsilon_1`: the loss of one report."""
        raise NotImplementedError

    @property
    def epsilon_longitudinal(self) -> float:
        """:math:`\\varepsilon_\\infty`: the loss of any number of reports of one value through one memo."""
        raise NotImplementedError

    def client(self, *args: Any, **kwargs: Any) -> Any:
        """A device's client: its memo of permanent responses (``report``, ``to_dict`` / ``from_dict``)."""
        raise NotImplementedError

    @property
    def memo_keys(self) -> int:
        """:math:`K`: how many memo keys a device's values can map to."""
        raise NotImplementedError

    @property
    def epsilon_instantaneous(self) -> float:
        """:math:`\\varepsilon_I`: the IRR's loss between any two memo states (``inf`` without an IRR)."""
        raise NotImplementedError

    def epsilon_over_changes(self, reports: int) -> float:
        """Loss of ``reports`` reports of one device against any other history of as many (module docstring).

        Parameters
        ----------
        reports : int
            :math:`T \\ge 1`, the reports the device sends through one memo.

        Returns
        -------
        float
            :math:`\\varepsilon_T` (``inf`` for dBitFlipPM beyond one report).
        """
        reports = check_param(f"{self.display_name}.epsilon_over_changes", "reports", reports, Integer(low=1))
        return history_epsilon(
            reports, self.epsilon_per_report, self.epsilon_longitudinal, self.epsilon_instantaneous, self.memo_keys
        )

    def guarantee_over(self, reports: int) -> PrivacyGuarantee:
        """The ``"history"`` guarantee of ``reports`` reports: :meth:`epsilon_over_changes` as a value.

        Raises ``InvalidParameterError`` when the bound is infinite (dBitFlipPM beyond one report).
        """
        epsilon = self.epsilon_over_changes(reports)
        if math.isinf(epsilon):
            raise InvalidParameterError(
                f"{self.display_name} has no second randomization: {reports} reports of a device reveal whether its "
                "value changed, so no epsilon holds against every history (only the 'stable' guarantee does)."
            )
        return PrivacyGuarantee(epsilon, 0.0, "history", "local", reports=reports)

    @property
    def stable_guarantee(self) -> PrivacyGuarantee:
        """The ``"stable"`` guarantee: :math:`\\varepsilon_\\infty` for any number of reports of an unchanged value."""
        return PrivacyGuarantee(self.epsilon_longitudinal, 0.0, "stable", "local")

    def describe_over_time(self, reports: int | None = None) -> str:
        """One paragraph for people: what this protocol promises over time, with both relations."""
        lines = [
            f"eps_1 = {self.epsilon_per_report:.6g} per report",
            f"any number of reports of a value that does not change (memo kept): eps_inf = "
            f"{self.epsilon_longitudinal:.6g}",
        ]
        counts = (reports,) if reports else (2, 10, 100)
        spent = ", ".join(f"T={t}: {self.epsilon_over_changes(t):.6g}" for t in counts)
        lines.append(f"T reports of values that may change (any two histories): {spent}")
        return "; ".join(lines)
