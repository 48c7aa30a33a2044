r"""The accountants: one currency read off a composed :class:`~._loss.PrivacyLoss`, at a delta, as a :class:`Statement`.

* ``"basic"``: :math:`(\sum\varepsilon_i, \sum\delta_i)` (Dwork & Roth 2014, Thm. 3.16); states
  :math:`\varepsilon` at any :math:`\delta \ge \sum\delta_i`.  Valid for every charge.
* ``"zcdp"``: :math:`\sum\rho_i` converted at :math:`\delta` (:func:`~._zcdp.zcdp_epsilon`); cannot state a
  charge without a :math:`\rho` (an :math:`(\varepsilon, \delta)` mechanism with :math:`\delta > 0`).
* ``"pld"``: the composed privacy loss distribution's :math:`\varepsilon(\delta)` (:mod:`._pld`); cannot state a charge without a distribution.
* ``"tightest"``: the smallest of those that can state every charge (each is a valid bound, so their
  minimum is).

``"zcdp"`` and ``"pld"`` are never looser than ``"basic"``: where basic composition states the same
:math:`\delta`, the smaller :math:`\varepsilon` is stated (both are valid).  An accountant that cannot state a
charge raises :class:`~dpdist.errors.InvalidParameterError` naming the accountant and the charge: nothing is
silently summed instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .._documents import read_dataclass, refused
from .._guarantee import with_assumptions
from ..errors import InvalidParameterError
from .._validation import Interval, Options, check_param, validate_params
from ._loss import PrivacyLoss
from ._pld import DISCRETIZATION, read_epsilon
from ._zcdp import zcdp_epsilon

__all__ = ["ACCOUNTANTS", "CHOICES", "Statement", "state", "cannot_state", "check_accountant"]

#: the accountants, loosest first
ACCOUNTANTS = ("basic", "zcdp", "pld")
#: what a caller may choose: an accountant, or the tightest of them for what was charged
CHOICES = ("tightest", *ACCOUNTANTS)


@dataclass(frozen=True)
class Statement:
    r"""What an accountant states of a composed loss: :math:`(\varepsilon, \delta)`, how, and under which assumptions.

    Attributes
    ----------
    accountant : str
        ``"basic"``, ``"zcdp"`` or ``"pld"``: the one whose number this is.
    epsilon, delta : float
        The statement (``epsilon`` is ``inf`` when no finite one holds at ``delta``).
    neighbouring, model : str
        The relation it holds under.
    mechanisms : int
        How many mechanisms were composed.
    rho : float or None
        The composed :math:`\rho` (``"zcdp"``).
    error : float
        How far above the exact composition the number may be through discretization (``"pld"``), else 0.
    capped : bool
        True when basic composition's :math:`\varepsilon` was smaller and is the one stated.
    assumptions : tuple of str
    """

    accountant: str
    epsilon: float
    delta: float
    neighbouring: str
    model: str
    mechanisms: int
    rho: float | None = None
    error: float = 0.0
    capped: bool = False
    assumptions: tuple[str, ...] = ()

    def describe(self, assumptions: bool = True) -> str:
        """One line: the statement, how it was made, then what it assumes (``"; assuming: ..."``, as
        :func:`~dpdist._guarantee.with_assumptions` writes it; not with ``assumptions=False``)."""
        relation = f"{self.model}, {self.neighbouring}"
        how = {"basic": "basic composition", "zcdp": f"zCDP (rho {self.rho:.6g})" if self.rho is not None else "zCDP",
               "pld": f"privacy loss distributions (discretization error at most {self.error:.2g})"}
        capped = ", its own guarantee by basic composition being smaller" if self.capped else ""
        return with_assumptions(f"({self.epsilon:.6g}, {self.delta:.3g})-DP ({relation}) over {self.mechanisms} "
                                f"mechanism(s) by {how[self.accountant]}{capped}", self.assumptions if assumptions else ())

    def to_dict(self) -> dict[str, Any]:
        return {"accountant": self.accountant, "epsilon": self.epsilon, "delta": self.delta,
                "neighbouring": self.neighbouring, "model": self.model, "mechanisms": self.mechanisms, "rho": self.rho,
                "error": self.error, "capped": bool(self.capped), "assumptions": list(self.assumptions)}

    @classmethod
    def from_dict(cls, data: Any) -> "Statement":
        """The statement of :meth:`to_dict`; a missing, damaged or contradicted field is refused by name
        (:class:`~dpdist.errors.MalformedDocumentError`, an :class:`~dpdist.errors.IncompatibleStateError`)."""
        statement = read_dataclass(cls, data)
        if statement.accountant not in ACCOUNTANTS:
            raise refused("Statement.from_dict", "accountant", f"must be one of {list(ACCOUNTANTS)}. Got "
                                                               f"{statement.accountant!r}")
        return statement


def check_accountant(owner: str, accountant: Any, choices: tuple[str, ...] = CHOICES) -> str:
    return check_param(owner, "accountant", accountant, Options(tuple(choices)))


def cannot_state(accountant: str, loss: PrivacyLoss, delta: float) -> str | None:
    """Why ``accountant`` cannot state ``loss`` at ``delta`` (a sentence), or None when it can."""
    if accountant == "basic":
        if loss.guarantee.delta > delta:
            return (f"its delta {loss.guarantee.delta:.3g} is above {delta:.3g}" if delta > 0 else
                    f"it is ({loss.guarantee.epsilon:.6g}, {loss.guarantee.delta:.3g})-DP, not pure")
        return None
    if accountant == "zcdp":
        if loss.rho is None:
            return "it has no zCDP bound (an (epsilon, delta) mechanism with delta > 0 has none)"
        if delta <= 0 and loss.rho > 0:
            return "zCDP states no pure epsilon (delta = 0)"
        return None
    if loss.distribution is None:
        return "it states no privacy loss distribution"
    if delta <= 0 and not loss.guarantee.pure:
        return "it is not pure: no epsilon holds at delta 0"
    return None


@validate_params({"delta": Interval(0.0, 1.0, closed="left")}, owner="accounting.state")
def state(loss: PrivacyLoss, delta: float, accountant: str = "tightest", *,
          discretization: float = DISCRETIZATION) -> Statement:
    """``accountant``'s statement of ``loss`` at ``delta`` (module docstring); refuses, by name, what it cannot state."""
    check_accountant("accounting.state", accountant)
    if accountant == "tightest":
        valid = [name for name in ACCOUNTANTS if cannot_state(name, loss, delta) is None]
        if not valid:
            raise InvalidParameterError(f"No accountant can state {loss.describe(assumptions=False)} at delta "
                                        f"{delta:.3g}: {cannot_state('basic', loss, delta)}.")
        statements = [state(loss, delta, name, discretization=discretization) for name in valid]
        return min(statements, key=lambda statement: statement.epsilon)
    reason = cannot_state(accountant, loss, delta)
    if reason is not None:
        raise InvalidParameterError(f"The {accountant!r} accountant cannot state {loss.describe(assumptions=False)} at "
                                    f"delta {delta:.3g}: {reason}.")
    guarantee = loss.guarantee
    basic = guarantee.epsilon if guarantee.delta <= delta else math.inf
    rho, error = None, 0.0
    if accountant == "basic":
        epsilon = basic
    elif accountant == "zcdp":
        rho = loss.rho
        assert rho is not None  # cannot_state checked it
        epsilon = 0.0 if rho == 0 else zcdp_epsilon(rho, delta)
    else:
        assert loss.distribution is not None  # cannot_state checked it
        epsilon, error = read_epsilon(loss.distribution, float(delta), discretization)
    capped = basic < epsilon
    return Statement(accountant, min(epsilon, basic), delta, guarantee.neighbouring, guarantee.model, loss.mechanisms,
                     rho, 0.0 if capped else error, capped, loss.assumptions)
