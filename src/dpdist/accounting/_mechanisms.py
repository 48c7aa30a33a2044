r"""The privacy loss of the central mechanisms by their noise: the discrete Laplace and the Gaussian mechanism.

* **Discrete Laplace** (:math:`\Pr[k] \propto e^{-a|k|}` on the integers, added to a query of integer l1
  sensitivity :math:`\Delta`; :math:`a = \varepsilon/\Delta` makes it :math:`\varepsilon`-DP): the worst pair is a
  query moved by :math:`\Delta`, whose loss :math:`a(|k - \Delta| - |k|)` takes the :math:`\Delta + 1` values
  :math:`a(\Delta - 2j)`, :math:`j = 0..\Delta` (Ghazi et al., "Connect the dots", PETS 2022, sec. 5; computed here in
  closed form from the geometric tails).
* **Gaussian** (:math:`\mathcal N(0, \sigma^2)` per coordinate, l2 sensitivity :math:`\Delta`; discrete or
  continuous): :math:`\Delta^2/(2\sigma^2)`-zCDP (Canonne, Kamath & Steinke 2020, Thm. 14; Bun & Steinke 2016,
  Prop. 1.6) and the Gaussian loss of :math:`\sigma/\Delta` (its PLD in closed form: :mod:`._pld`).
"""

from __future__ import annotations

import math

from .._guarantee import PrivacyGuarantee
from ..errors import InvalidPrivacyParameterError
from ._distributions import Atoms, GaussianLoss
from ._loss import PrivacyLoss
from ._zcdp import atoms_rho, zcdp_epsilon

__all__ = ["discrete_laplace", "gaussian"]


def discrete_laplace(epsilon: float, sensitivity: int = 1, *, neighbouring: str = "add-remove") -> PrivacyLoss:
    r"""The loss of the discrete Laplace mechanism of parameter :math:`a = \varepsilon/\Delta` on a query of integer l1
    sensitivity ``sensitivity`` :math:`\Delta` under ``neighbouring`` (exact atoms; module docstring)."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, int) or sensitivity < 1:
        raise InvalidPrivacyParameterError(f"The 'sensitivity' of accounting.discrete_laplace must be an int >= 1. "
                                           f"Got {sensitivity!r}.")
    guarantee = PrivacyGuarantee(epsilon, 0.0, neighbouring, "central")
    a = guarantee.epsilon / sensitivity
    norm = (1.0 - math.exp(-a)) / (1.0 + math.exp(-a))  # Pr[k] = norm * e^{-a|k|}
    losses = [a * (sensitivity - 2 * j) for j in range(sensitivity + 1)]
    masses = [norm * math.exp(-a * j) for j in range(sensitivity + 1)]
    masses[0] = 1.0 / (1.0 + math.exp(-a))  # every k <= 0
    masses[-1] = math.exp(-a * sensitivity) / (1.0 + math.exp(-a))  # every k >= Delta
    atoms = Atoms(tuple(losses[::-1]), tuple(masses[::-1]))
    return PrivacyLoss(guarantee, atoms_rho(atoms), atoms, f"discrete Laplace, parameter {a:.6g}, sensitivity {sensitivity}",
                       derivation={"kind": "discrete_laplace", "epsilon": guarantee.epsilon, "sensitivity": sensitivity,
                                   "neighbouring": neighbouring})


def gaussian(sigma: float, sensitivity: float = 1.0, *, delta: float, neighbouring: str = "add-remove") -> PrivacyLoss:
    r"""The loss of Gaussian noise ``sigma`` on a query of l2 sensitivity ``sensitivity``: :math:`\rho`-zCDP, its PLD,
    and the :math:`(\varepsilon, \delta)` zCDP states at ``delta`` as its guarantee."""
    if not (0 < sigma < math.inf and 0 < sensitivity < math.inf):
        raise InvalidPrivacyParameterError(f"accounting.gaussian needs a finite sigma > 0 and sensitivity > 0. Got "
                                           f"sigma={sigma!r}, sensitivity={sensitivity!r}.")
    rho = sensitivity**2 / (2.0 * sigma**2)
    guarantee = PrivacyGuarantee(zcdp_epsilon(rho, delta), delta, neighbouring, "central")
    return PrivacyLoss(guarantee, rho, GaussianLoss(sigma / sensitivity),
                       f"Gaussian noise, sigma {sigma:.6g} per sensitivity {sensitivity:g} ({rho:.6g}-zCDP)",
                       derivation={"kind": "gaussian", "sigma": float(sigma), "sensitivity": float(sensitivity),
                                   "delta": float(delta), "neighbouring": neighbouring})
