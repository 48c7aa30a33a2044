r"""Fresh randomized responses composed on a lattice: the device ledger's statement, the same in Python and JavaScript.

A device's ledger keeps each charge's epsilon, not its channel, so each report counts as the worst
:math:`\varepsilon`-LDP randomizer, binary randomized response, whose privacy loss is :math:`\pm\varepsilon` with
probabilities :math:`e^\varepsilon/(1+e^\varepsilon)` and :math:`1/(1+e^\varepsilon)` (a memo's charges count as
one such mechanism of their sum).  Composed, the loss is :math:`\sum_g \varepsilon_g (2B_g - k_g)` over groups of
:math:`k_g` reports of one epsilon, :math:`B_g \sim \mathrm{Bin}(k_g, e^{\varepsilon_g}/(1+e^{\varepsilon_g}))`:
the scaled binomials of the issue's closed form.

**The lattice.**  Every :math:`\varepsilon_g` is rounded *up* to :math:`m_g h`, :math:`m_g = \lceil
\varepsilon_g/h\rceil`, :math:`h = 10^{-4}` (randomized response at a larger epsilon dominates it: the smaller one is
its post-processing), so the loss is :math:`h(2J - M)`, :math:`J = \sum_g m_g B_g`, :math:`M = \sum_g m_g k_g`; the
law of :math:`J` is the exact convolution of the scaled binomials (each binomial's mass by its log-recurrence), and
:math:`\varepsilon(\delta)` is read off exactly: scanning the lattice from the top, :math:`\delta(\varepsilon) = T_1 -
e^\varepsilon T_2` between two points (:math:`T_1, T_2` the mass above and its :math:`e^{-L}`-weighted sum), solved
in closed form.  Rounding *down* instead gives a lower bound on the exact value; their gap is the statement's
``error``.

``clients/js/src/ledger.js`` (``Ledger.statement``) runs the same steps in the same order, so both ledgers state the
same total for the same charges (``tests/clients/test_js_ledger_statement.py``: within 1e-9 relative); it agrees
with ``dp_accounting`` within its discretization error (``tests/accounting/test_randomized_response.py``).
"""

from __future__ import annotations

import math
from typing import Iterable

import numpy as np

__all__ = ["STEP", "composed_randomized_response"]

#: the lattice step of the losses (the epsilons are rounded to it)
STEP = 1e-4


def _lattice_law(groups: dict[int, int]) -> tuple[np.ndarray, int]:
    """The law of :math:`J = \\sum_g m_g B_g` on ``0..M`` and ``M``, for ``{m_g: k_g}``, groups in increasing m."""
    law = np.ones(1)
    total = 0
    for m in sorted(groups):
        k = groups[m]
        epsilon = m * STEP
        log_ratio = epsilon  # log(p / (1 - p)) with p = e^eps / (1 + e^eps)
        log_mass = k * -math.log1p(math.exp(epsilon))  # log (1 - p)^k
        masses = np.empty(k + 1)
        for b in range(k + 1):
            masses[b] = math.exp(log_mass)
            log_mass += math.log((k - b) / (b + 1)) + log_ratio if b < k else 0.0
        wider = np.zeros(law.size + m * k)
        for b in range(k + 1):
            wider[m * b:m * b + law.size] += masses[b] * law
        law = wider
        total += m * k
    return law, total


def _epsilon_of(law: np.ndarray, total: int, delta: float) -> float:
    """The smallest epsilon >= 0 with ``E[(1 - e^(eps - L))_+] <= delta``, ``L = STEP (2j - total)`` (module docstring).

    From the top point down, ``above`` is the mass above the next point ``x`` and ``weighted`` the sum of
    ``P_i e^(x - L_i)`` over it: ``delta(x) = above - weighted``; the first ``x`` where that exceeds ``delta``
    brackets the answer, solved in closed form.  A loop, as the JavaScript ledger runs it: it stops at the answer,
    in the upper tail (0.06 s for a year of daily reports).
    """
    above, weighted = 0.0, 0.0
    shrink = math.exp(-2 * STEP)
    masses = law.tolist()
    for j in range(len(masses) - 1, 0, -1):
        above += masses[j]
        weighted = (weighted + masses[j]) * shrink  # now at x = L_(j-1)
        point = STEP * (2 * (j - 1) - total)
        if above - weighted > delta:  # delta(x) > target: the answer lies in [x, x + 2 STEP)
            return max(point + math.log((above - delta) / weighted), 0.0)
        if point <= 0:
            return 0.0
    return 0.0


def composed_randomized_response(epsilons: Iterable[tuple[float, int]], delta: float, *,
                                 rounding: str = "up") -> float:
    """The epsilon at ``delta`` of fresh randomized responses, ``(epsilon, count)`` each, composed on the lattice
    (rounded ``"up"``: an upper bound on the exact value; ``"down"``: a lower bound)."""
    groups: dict[int, int] = {}
    for epsilon, count in epsilons:
        if count <= 0 or epsilon <= 0:
            continue
        scaled = epsilon / STEP
        m = math.ceil(scaled) if rounding == "up" else max(math.floor(scaled), 0)
        if m > 0:
            groups[m] = groups.get(m, 0) + int(count)
    if not groups:
        return 0.0
    law, total = _lattice_law(groups)
    return _epsilon_of(law, total, delta)
