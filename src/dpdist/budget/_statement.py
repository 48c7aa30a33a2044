"""What a budget session states: a :class:`Charge`, the :class:`BudgetStatement` of a charged result and its
:class:`SessionGuarantee`, and what is :class:`Remaining`."""

from __future__ import annotations

import math

from dataclasses import dataclass, field, fields
from typing import Any, NamedTuple

from ..accounting import ACCOUNTANTS, CHOICES, PrivacyLoss, Statement, cannot_state, state
from .._guarantee import GUARANTEE_DELTA, with_assumptions
from .._validation import Optional, Options, validate_params
from ..errors import InvalidParameterError
from .._guarantee import PrivacyGuarantee


__all__ = ["Charge", "BudgetStatement", "SessionGuarantee", "Remaining", "Spent"]


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
    loss : PrivacyLoss
        What it costs in every currency (:mod:`dpdist.accounting`), in the session's relation: its exact loss when
        the charge states one (a protocol's channel), else the worst case of ``charged``.  Charges of files written
        before the accountants have none stated: the worst case of ``charged``.
    """

    label: str
    guarantee: PrivacyGuarantee
    charged: PrivacyGuarantee
    parts: int = 1
    time: str = ""
    id: str = ""
    loss: PrivacyLoss = field(default=None, repr=False)  # type: ignore[assignment]  # filled in by __post_init__

    def __post_init__(self):
        if self.loss is None:
            object.__setattr__(self, "loss", PrivacyLoss.of_guarantee(self.charged))
        elif not isinstance(self.loss, PrivacyLoss) or (self.loss.guarantee.epsilon, self.loss.guarantee.delta) != (
                self.charged.epsilon, self.charged.delta):
            raise InvalidParameterError(f"A charge's loss must be a PrivacyLoss stating what it charged ({self.charged}). "
                                        f"Got {self.loss!r:.200}.")

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "guarantee": self.guarantee.to_dict(), "charged": self.charged.to_dict(),
                "parts": self.parts, "time": self.time, "id": self.id, "loss": self.loss.to_dict()}

    @classmethod
    def from_dict(cls, data: dict) -> "Charge":
        stated = data.get("loss")  # absent from charges written before the accountants
        loss = {} if stated is None else {"loss": PrivacyLoss.from_dict(stated)}
        return cls(str(data["label"]), PrivacyGuarantee(**data["guarantee"]), PrivacyGuarantee(**data["charged"]),
                   int(data.get("parts", 1)), str(data.get("time", "")), str(data.get("id", "")), **loss)


#: what :meth:`Spent.epsilon_at` takes: a delta, and an accountant (None: the session's)
_AT = {"delta": GUARANTEE_DELTA, "accountant": Optional(Options(CHOICES))}


@dataclass(frozen=True)
class Spent(PrivacyGuarantee):
    r"""What a session's charges add up to, as its accountant states it at the session's delta.

    ``epsilon`` and ``delta`` are the statement (``"basic"``: the sums; another accountant: its epsilon at the
    session's delta); ``point_delta`` is the deltas the charges state themselves, added up (what is taken from
    the session's delta before any conversion); ``statement`` says which accountant and what it assumes;
    :meth:`epsilon_at` states the same charges at any delta, by the session's accountant (``session_accountant``) or
    any other.
    """

    accountant: str = "basic"
    statement: Statement | None = field(default=None, repr=False)
    loss: PrivacyLoss | None = field(default=None, repr=False)
    point_delta: float = 0.0
    session_accountant: str = field(default="tightest", repr=False)

    @classmethod
    def of(cls, statement: Statement, loss: PrivacyLoss, point_delta: float, session_accountant: str = "tightest") -> "Spent":
        delta = min(statement.delta if statement.accountant != "basic" else loss.guarantee.delta, math.nextafter(1.0, 0.0))
        return cls(max(statement.epsilon, 1e-300), delta, statement.neighbouring, "central",
                   unit=loss.guarantee.unit, accountant=statement.accountant, statement=statement, loss=loss,
                   point_delta=point_delta, session_accountant=session_accountant)

    @property
    def assumptions(self) -> tuple[str, ...]:
        """What the statement assumes (its charges' own assumptions, fresh randomness across them), or ``()``."""
        return () if self.statement is None else tuple(self.statement.assumptions)

    def describe(self, assumptions: bool = True) -> str:
        """The guarantee's line, then what its statement assumes (``"; assuming: ..."``; not with
        ``assumptions=False``, for a message that names it within a sentence)."""
        return with_assumptions(super().describe(), self.assumptions if assumptions else ())

    def __repr__(self) -> str:
        """The fields, and what the statement assumes when it assumes anything (a repr states no more than
        :meth:`describe` does)."""
        shown = [f"{item.name}={getattr(self, item.name)!r}" for item in fields(self) if item.repr]
        if self.assumptions:
            shown.append(f"assumptions={self.assumptions!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    @validate_params(_AT, owner="Spent.epsilon_at")
    def epsilon_at(self, delta: float, accountant: str | None = None) -> float:
        """The epsilon these charges spend at ``delta`` under ``accountant`` (by default the session's; ``"tightest"``:
        the smallest valid one, ``inf`` when none states one there); a named accountant that cannot state a charge is
        refused by name."""
        assert self.loss is not None  # set by the session
        accountant = self.session_accountant if accountant is None else accountant
        if accountant == "tightest" and all(cannot_state(name, self.loss, delta) for name in ACCOUNTANTS):
            return math.inf
        return state(self.loss, delta, accountant).epsilon

    @validate_params(_AT, owner="Spent.statement_at")
    def statement_at(self, delta: float, accountant: str | None = None) -> Statement:
        """:meth:`epsilon_at` with its statement (which accountant, what it assumes)."""
        assert self.loss is not None  # set by the session
        return state(self.loss, delta, self.session_accountant if accountant is None else accountant)

    def to_dict(self) -> dict:
        return PrivacyGuarantee.to_dict(self)


#: what a reproducible session's statements say of its releases
SEEDED_SESSION = "reproducible, seeded: no privacy against anyone who knows the seed"


@dataclass(frozen=True)
class BudgetStatement:
    """Where a session stands after one charge: what it holds, what the charge cost, what is spent and left."""

    total: PrivacyGuarantee
    charge: Charge
    spent: PrivacyGuarantee
    charges: int
    reproducible: bool = False  # a reproducible session's: seeded releases, no privacy against who knows the seed

    @property
    def remaining(self) -> Remaining:
        return _left(self.total, self.spent)

    @property
    def accountant(self) -> str:
        """The accountant whose number ``spent`` is (``"basic"`` for a spent stated as a plain guarantee)."""
        return self.spent.accountant if isinstance(self.spent, Spent) else "basic"

    @property
    def assumptions(self) -> tuple[str, ...]:
        """What the statement of what is spent assumes (:attr:`Spent.assumptions`), or ``()``."""
        return self.spent.assumptions if isinstance(self.spent, Spent) else ()

    def describe(self, assumptions: bool = True) -> str:
        """One line, e.g. ``"budget session: charged 0.5 of 1-DP (replace); 0.5 spent in 1 charge(s), 0.5 left"``,
        ending with what the spent statement assumes when it assumes anything (``"; assuming: ..."``; not with
        ``assumptions=False``)."""
        by = "" if self.accountant == "basic" else f" ({self.accountant} accountant at delta {self.total.delta:.3g})"
        seeded = f" ({SEEDED_SESSION})" if self.reproducible else ""
        return with_assumptions(
            f"budget session{seeded}: charged {_budget(self.charge.charged)} of {_budget(self.total)}-DP "
            f"({self.total.neighbouring}); {_spent(self.spent)} spent in {self.charges} charge(s){by}, "
            f"{_budget_pair(*self.remaining)} left", self.assumptions if assumptions else ())

    def account_line(self) -> str:
        """:meth:`describe` as it follows a release's own guarantee (a charged result's line): its assumptions are named
        the session account's (``"...; its account assuming: ..."``), so they do not read as the release's."""
        return with_assumptions(self.describe(assumptions=False), self.assumptions, "its account assuming")

    def to_dict(self) -> dict[str, Any]:
        left = self.remaining
        data = {"total": self.total.to_dict(), "charge": self.charge.to_dict(), "spent": self.spent.to_dict(),
                "charges": self.charges, "remaining": {"epsilon": left.epsilon, "delta": left.delta},
                **({"reproducible": True} if self.reproducible else {})}
        if isinstance(self.spent, Spent) and self.spent.statement is not None:
            data["accountant"] = self.spent.statement.to_dict()
        return data


@dataclass(frozen=True)
class SessionGuarantee(PrivacyGuarantee):
    """A result's guarantee when a budget session charged it: the release's own guarantee and the
    session's account after it (``budget``)."""

    budget: BudgetStatement | None = None

    def describe(self, assumptions: bool = True) -> str:
        """The release's own line, then the session's account after it (:meth:`BudgetStatement.account_line`: what the
        account assumes is named its own, ``"; its account assuming: ..."``, not the release's; not with
        ``assumptions=False``)."""
        own = super().describe()
        if self.budget is None:
            return own
        return f"{own}; {self.budget.account_line() if assumptions else self.budget.describe(assumptions=False)}"

    def to_dict(self) -> dict:
        data = super().to_dict()
        if self.budget is not None:
            data["budget"] = self.budget.to_dict()
        return data


def _left(total: PrivacyGuarantee, spent: PrivacyGuarantee | None) -> Remaining:
    """Epsilon left at the session's delta; the delta the charges' own deltas leave."""
    if spent is None:
        return Remaining(total.epsilon, total.delta)
    used_delta = spent.point_delta if isinstance(spent, Spent) else spent.delta
    return Remaining(max(total.epsilon - spent.epsilon, 0.0), max(total.delta - used_delta, 0.0))


def _spent(spent: PrivacyGuarantee) -> str:
    if isinstance(spent, Spent) and spent.accountant != "basic":
        return f"{spent.epsilon:.6g}"
    return _budget(spent)


def _budget(guarantee: PrivacyGuarantee) -> str:
    return _budget_pair(guarantee.epsilon, guarantee.delta)


def _budget_pair(epsilon: float, delta: float) -> str:
    return f"{epsilon:.6g}" if delta == 0 else f"({epsilon:.6g}, {delta:.3g})"
