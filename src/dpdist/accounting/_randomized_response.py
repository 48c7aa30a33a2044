r"""Fresh reports composed on a lattice: the device ledger's statement, the same in Python, JavaScript and Java.

A device's ledger keeps each charge's epsilon and its ``share`` (:func:`randomized_response_share`), not its
channel: each report counts as binary randomized response of :math:`\varepsilon` with probability :math:`s`
(privacy loss :math:`\pm\varepsilon` with probabilities :math:`e^\varepsilon/(1+e^\varepsilon)` and
:math:`1/(1+e^\varepsilon)`) and as nothing (loss 0) otherwise: the exact channel of GRR, SS and the unary
encodings, and the worst :math:`\varepsilon`-LDP randomizer at :math:`s = 1` (a memo's charges count as one such
mechanism of their sum).  Composed, the loss of a group of :math:`k_g` reports of one epsilon and share is
:math:`\varepsilon_g (T_g - k_g)`, :math:`T_g = 2A_g + Z_g` (:math:`A_g` answers of :math:`+\varepsilon_g`,
:math:`Z_g` of nothing): a binomial number of randomized responses, each a binomial.

**The lattice.**  Every :math:`\varepsilon_g` is rounded *up* to :math:`m_g h`, :math:`m_g = \lceil
\varepsilon_g/h\rceil`, :math:`h = 10^{-4}` (randomized response at a larger epsilon dominates it: the smaller one is
its post-processing), so the loss is :math:`h(J - M)`, :math:`J = \sum_g m_g T_g`, :math:`M = \sum_g m_g k_g`; the
law of :math:`J` is the exact convolution of the groups' scaled laws (each binomial's mass by its log-recurrence), and
:math:`\varepsilon(\delta)` is read off exactly: scanning the lattice from the top, :math:`\delta(\varepsilon) = T_1 -
e^\varepsilon T_2` between two points (:math:`T_1, T_2` the mass above and its :math:`e^{-L}`-weighted sum), solved
in closed form.  Rounding *down* instead gives a lower bound on the exact value; their gap is the statement's
``error``.

``clients/js/src/ledger.js`` (``Ledger.statement``) and ``Ledger.java`` (``epsilonAt``) run the same steps in the
same order, so the ledgers state the same total for the same charges (``tests/clients/test_js_ledger_statement.py``: within 1e-9 relative); it agrees
with ``dp_accounting`` within its discretization error (``tests/accounting/test_randomized_response.py``).
"""

from __future__ import annotations

import math
from typing import Any, Iterable

import numpy as np

from ._pair_classes import pair_classes

__all__ = ["STEP", "composed_randomized_response", "randomized_response_share"]

#: the lattice step of the losses (the epsilons are rounded to it)
STEP = 1e-4


def _binomial(k: int, log_odds: float, log_none: float) -> np.ndarray:
    """The law of Bin(k, p) on ``0..k`` from ``log(p / (1 - p))`` and ``log(1 - p)``, each mass by its log-recurrence."""
    steps = np.log(np.arange(k, 0, -1) / np.arange(1, k + 1)) + log_odds
    return np.exp(np.concatenate(([k * log_none], steps)).cumsum())


def _group_law(k: int, epsilon: float, share: float) -> np.ndarray:
    """The law of :math:`T = 2A + Z` on ``0..2k`` over ``k`` reports, each a randomized response of ``epsilon`` with
    probability ``share`` (:math:`A` of them answer +epsilon) and nothing otherwise (:math:`Z` of them)."""
    law = np.zeros(2 * k + 1)
    if share >= 1.0:
        law[0::2] = _binomial(k, epsilon, -math.log1p(math.exp(epsilon)))
        return law
    answered = _binomial(k, math.log(share / (1.0 - share)), math.log1p(-share))
    for count in range(k + 1):  # count of the k reports answer as randomized response, the other k - count nothing
        law[k - count:k + count + 1:2] += answered[count] * _binomial(count, epsilon, -math.log1p(math.exp(epsilon)))
    return law


def _lattice_law(groups: dict[tuple[int, float], int]) -> tuple[np.ndarray, int]:
    r"""The law of :math:`J = \sum_g m_g T_g` on ``0..2M`` and ``M``, for ``{(m_g, share_g): k_g}``, groups in increasing
    order."""
    law = np.ones(1)
    total = 0
    for (m, share) in sorted(groups):
        k = groups[(m, share)]
        masses = _group_law(k, m * STEP, share)
        wider = np.zeros(law.size + 2 * m * k)
        for t in np.flatnonzero(masses).tolist():
            wider[m * t:m * t + law.size] += masses[t] * law
        law = wider
        total += m * k
    return law, total


def _epsilon_of(law: np.ndarray, total: int, delta: float) -> float:
    """The smallest epsilon >= 0 with ``E[(1 - e^(eps - L))_+] <= delta``, ``L = STEP (j - total)`` (module docstring).

    From the top point down, ``above`` is the mass above the next point ``x`` and ``weighted`` the sum of
    ``P_i e^(x - L_i)`` over it: ``delta(x) = above - weighted``; the first ``x`` where that exceeds ``delta``
    brackets the answer, solved in closed form.  A loop, as the JavaScript ledger runs it: it stops at the answer,
    in the upper tail (0.06 s for a year of daily reports).
    """
    above, weighted = 0.0, 0.0
    shrink = math.exp(-STEP)
    masses = law.tolist()
    for j in range(len(masses) - 1, 0, -1):
        above += masses[j]
        weighted = (weighted + masses[j]) * shrink  # now at x = L_(j-1)
        point = STEP * (j - 1 - total)
        if above - weighted > delta:  # delta(x) > target: the answer lies in [x, x + STEP)
            return max(point + math.log((above - delta) / weighted), 0.0)
        if point <= 0:
            return 0.0
    return 0.0


def composed_randomized_response(epsilons: Iterable[tuple[float, int] | tuple[float, int, float]], delta: float, *,
                                 rounding: str = "up") -> float:
    """The epsilon at ``delta`` of fresh reports, ``(epsilon, count)`` or ``(epsilon, count, share)`` each (a report is a
    randomized response of ``epsilon`` with probability ``share``, default 1, and reveals nothing otherwise: see
    :func:`randomized_response_share`), composed on the lattice (rounded ``"up"``: an upper bound on the exact value;
    ``"down"``: a lower bound)."""
    groups: dict[tuple[int, float], int] = {}
    for epsilon, count, *rest in epsilons:
        share = float(rest[0]) if rest else 1.0
        if count <= 0 or epsilon <= 0 or share <= 0:
            continue
        scaled = epsilon / STEP
        m = math.ceil(scaled) if rounding == "up" else max(math.floor(scaled), 0)
        if m > 0:
            groups[(m, min(share, 1.0))] = groups.get((m, min(share, 1.0)), 0) + int(count)
    if not groups:
        return 0.0
    law, total = _lattice_law(groups)
    return _epsilon_of(law, total, delta)


def randomized_response_share(protocol: Any) -> float:
    r"""The chance :math:`s` that one report of ``protocol`` is a randomized response of its epsilon (1: every report).

    For a pair of inputs, the outputs whose law is the same under both reveal nothing; on the others (mass :math:`s`
    under either input) the pair is an :math:`\varepsilon`-LDP pair, which binary randomized response of
    :math:`\varepsilon` dominates (Kairouz, Oh, Viswanath 2015: its privacy region holds every such pair's).  So one report is dominated by
    "randomized response with probability :math:`s`, nothing otherwise", and :math:`k` of them compose as that
    mixture's :math:`k`-fold composition: the exact loss of GRR, SS, OUE and SUE, whose every pair is alike
    (:mod:`._pair_classes`), where :math:`s` is read; any other protocol counts at :math:`s = 1`.  GRR:
    :math:`s = p + q`; SS: :math:`(p_{in}(d - k) + (1 - p_{in})k)/(d - 1)`; unary encodings: :math:`p(1-q) + q(1-p)`
    (the JavaScript and Java ledgers' formulas).
    """
    classes = pair_classes(protocol) if not protocol.tags.memoized else None
    if classes is None:
        return 1.0
    mu0, mu1, _ = classes
    return min(1.0, float(mu0[mu0 != mu1].sum()))
