"""What a budget session states: a :class:`Charge`, the :class:`BudgetStatement` of a charged result and its
:class:`SessionGuarantee`, and what is :class:`Remaining`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from ..privacy import PrivacyGuarantee


__all__ = ["Charge", "BudgetStatement", "SessionGuarantee", "Remaining"]


class Remaining(NamedTuple):
    """The budget left: ``epsilon`` and ``delta``."""

    epsilon: float
    delta: float


@dataclass(frozen=True)
class Charge:
    """One entry of the account.

    Attributes
    ----------
    label : str
        What was charged (``"histogram_queries"``, ``"campaign commute"``, ...).
    guarantee : PrivacyGuarantee
        What the release or campaign states (for ``parts > 1``, the parallel composition of its parts).
    charged : PrivacyGuarantee
        The same in the session's relation (:func:`dpdist.privacy.convert`): what it costs.
    parts : int
        1, or the number of disjoint parts composed in parallel.
    time : str
        When, in UTC to the second.
    id : str
        A random id (to tell two equal charges apart).
    """

    label: str
    guarantee: PrivacyGuarantee
    charged: PrivacyGuarantee
    parts: int = 1
    time: str = ""
    id: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "guarantee": self.guarantee.to_dict(), "charged": self.charged.to_dict(),
                "parts": self.parts, "time": self.time, "id": self.id}

    @classmethod
    def from_dict(cls, data: dict) -> "Charge":
        return cls(str(data["label"]), PrivacyGuarantee(**data["guarantee"]), PrivacyGuarantee(**data["charged"]),
                   int(data.get("parts", 1)), str(data.get("time", "")), str(data.get("id", "")))


@dataclass(frozen=True)
class BudgetStatement:
    """Where a session stands after one charge: what it holds, what the charge cost, what is spent and left."""

    total: PrivacyGuarantee
    charge: Charge
    spent: PrivacyGuarantee
    charges: int

    @property
    def remaining(self) -> Remaining:
        return _left(self.total, self.spent)

    def describe(self) -> str:
        """One line, e.g. ``"budget session: charged 0.5 of 1-DP (replace); 0.5 spent in 1 charge(s), 0.5 left"``."""
        return (
            f"budget session: charged {_budget(self.charge.charged)} of {_budget(self.total)}-DP "
            f"({self.total.neighbouring}); {_budget(self.spent)} spent in {self.charges} charge(s), "
            f"{_budget_pair(*self.remaining)} left"
        )

    def to_dict(self) -> dict[str, Any]:
        left = self.remaining
        return {"total": self.total.to_dict(), "charge": self.charge.to_dict(), "spent": self.spent.to_dict(),
                "charges": self.charges, "remaining": {"epsilon": left.epsilon, "delta": left.delta}}


@dataclass(frozen=True)
class SessionGuarantee(PrivacyGuarantee):
    """A result's guarantee when a budget session charged it: the release's own guarantee and the
    session's account after it (``budget``)."""

    budget: BudgetStatement | None = None

    def describe(self) -> str:
        own = super().describe()
        return own if self.budget is None else f"{own}; {self.budget.describe()}"

    def to_dict(self) -> dict:
        data = super().to_dict()
        if self.budget is not None:
            data["budget"] = self.budget.to_dict()
        return data


def _left(total: PrivacyGuarantee, spent: PrivacyGuarantee | None) -> Remaining:
    if spent is None:
        return Remaining(total.epsilon, total.delta)
    return Remaining(max(total.epsilon - spent.epsilon, 0.0), max(total.delta - spent.delta, 0.0))


def _budget(guarantee: PrivacyGuarantee) -> str:
    return _budget_pair(guarantee.epsilon, guarantee.delta)


def _budget_pair(epsilon: float, delta: float) -> str:
    return f"{epsilon:.6g}" if delta == 0 else f"({epsilon:.6g}, {delta:.3g})"
