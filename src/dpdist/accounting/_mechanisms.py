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

import numpy as np

from .._guarantee import PrivacyGuarantee
from .._validation import Integer, Interval, validate_params
from ..errors import InvalidPrivacyParameterError
from ._distributions import Atoms, GaussianLoss
from ._loss import PrivacyLoss
from ._zcdp import atoms_rho, zcdp_epsilon

__all__ = ["discrete_laplace", "gaussian", "MAX_SENSITIVITY", "SIGMA_RANGE"]

#: the largest discrete Laplace sensitivity stated exactly (its pair has sensitivity + 1 atoms: 10^6 take about 5 s)
MAX_SENSITIVITY = 10**6
#: noise per unit of sensitivity whose loss is stated (beyond, rho or the Gaussian's loss leaves the floats)
SIGMA_RANGE = (1e-100, 1e100)
_POSITIVE = Interval(0.0, math.inf, closed="neither", privacy=True)


@validate_params({"epsilon": _POSITIVE, "sensitivity": Integer(low=1)}, owner="accounting.discrete_laplace")
def discrete_laplace(epsilon: float, sensitivity: int = 1, *, neighbouring: str = "add-remove") -> PrivacyLoss:
    r"""The loss of the discrete Laplace mechanism of parameter :math:`a = \varepsilon/\Delta` on a query of integer l1
    sensitivity ``sensitivity`` :math:`\Delta` under ``neighbouring`` (exact atoms; module docstring), for
    :math:`\Delta` up to :data:`MAX_SENSITIVITY` (beyond, refused: charge the worst case of its epsilon instead)."""
    if sensitivity > MAX_SENSITIVITY:
        raise InvalidPrivacyParameterError(
            f"The 'sensitivity' argument of accounting.discrete_laplace must be at most {MAX_SENSITIVITY} (its exact "
            f"pair has sensitivity + 1 atoms). Got {sensitivity!r}: charge PrivacyLoss.of_guarantee(PrivacyGuarantee("
            f"{epsilon!r}, 0.0, ...)) instead, the worst case of its epsilon (valid at any sensitivity), or scale the "
            "query to a smaller sensitivity.")
    guarantee = PrivacyGuarantee(epsilon, 0.0, neighbouring, "central")
    a = guarantee.epsilon / sensitivity
    steps = np.arange(sensitivity + 1)
    norm = -math.expm1(-a) / (1.0 + math.exp(-a))  # Pr[k] = norm * e^{-a|k|}
    masses = norm * np.exp(-a * steps)
    masses[0] = 1.0 / (1.0 + math.exp(-a))  # every k <= 0
    masses[-1] = math.exp(-a * sensitivity) / (1.0 + math.exp(-a))  # every k >= Delta
    atoms = Atoms(tuple((a * (sensitivity - 2 * steps))[::-1].tolist()), tuple(masses[::-1].tolist()))
    return PrivacyLoss(guarantee, atoms_rho(atoms), atoms, f"discrete Laplace, parameter {a:.6g}, sensitivity {sensitivity}",
                       derivation={"kind": "discrete_laplace", "epsilon": guarantee.epsilon, "sensitivity": sensitivity,
                                   "neighbouring": neighbouring})


@validate_params({"sigma": _POSITIVE, "sensitivity": _POSITIVE,
                  "delta": Interval(0.0, 1.0, closed="neither", privacy=True)}, owner="accounting.gaussian")
def gaussian(sigma: float, sensitivity: float = 1.0, *, delta: float, neighbouring: str = "add-remove") -> PrivacyLoss:
    r"""The loss of Gaussian noise ``sigma`` on a query of l2 sensitivity ``sensitivity``: :math:`\rho`-zCDP, its PLD,
    and the :math:`(\varepsilon, \delta)` zCDP states at ``delta`` as its guarantee; ``sigma / sensitivity`` in
    :data:`SIGMA_RANGE`."""
    low, high = SIGMA_RANGE
    if not low <= sigma / sensitivity <= high:
        raise InvalidPrivacyParameterError(
            f"The 'sigma' argument of accounting.gaussian must be between {low:g} and {high:g} times the "
            f"'sensitivity' ({sensitivity!r}). Got {sigma!r}: beyond, its loss leaves the floats (state a release "
            "with less noise as not private, one with more as the loss of sigma = "
            f"{high:g} x sensitivity, which it is below).")
    rho = 0.5 * (sensitivity / sigma) ** 2
    epsilon = zcdp_epsilon(rho, delta)
    if epsilon <= 0:
        raise InvalidPrivacyParameterError(
            f"The 'delta' argument of accounting.gaussian must be below what sigma={sigma!r} (sensitivity "
            f"{sensitivity!r}) spends at epsilon 0: its {rho:.3g}-zCDP states (0, {delta!r}), and a guarantee needs an "
            "epsilon > 0. Pass a smaller delta.")
    guarantee = PrivacyGuarantee(epsilon, delta, neighbouring, "central")
    return PrivacyLoss(guarantee, rho, GaussianLoss(sigma / sensitivity),
                       f"Gaussian noise, sigma {sigma:.6g} per sensitivity {sensitivity:g} ({rho:.6g}-zCDP)",
                       derivation={"kind": "gaussian", "sigma": float(sigma), "sensitivity": float(sensitivity),
                                   "delta": float(delta), "neighbouring": neighbouring})
