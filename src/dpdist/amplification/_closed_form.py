"""Feldman, McMillan & Talwar's closed form (FOCS 2021, Theorem 3.1)."""

from __future__ import annotations

import math

from ._checks import check_delta, check_epsilon0, check_n

__all__ = ["closed_form_epsilon"]


def closed_form_epsilon(epsilon0: float, n: int, delta: float) -> float:
    r"""FMT21 Theorem 3.1; ``inf`` outside its condition :math:`\varepsilon_0 \le \ln(n / (16 \ln(2/\delta)))`.

    .. math::

        \varepsilon \le \ln\Bigl(1 + \frac{e^{\varepsilon_0}-1}{e^{\varepsilon_0}+1}
        \Bigl(\frac{8\sqrt{e^{\varepsilon_0}\ln(4/\delta)}}{\sqrt n} + \frac{8e^{\varepsilon_0}}{n}\Bigr)\Bigr)
    """
    epsilon0, n, delta = check_epsilon0(epsilon0), check_n(n), check_delta(delta)
    if epsilon0 > math.log(n / (16 * math.log(2 / delta))):
        return math.inf
    a = math.exp(epsilon0)
    return math.log1p((a - 1) / (a + 1) * (8 * math.sqrt(a * math.log(4 / delta)) / math.sqrt(n) + 8 * a / n))
