r"""A privacy budget session: one total budget that every release and every campaign is charged against.

An analyst who releases several statistics of the same people spends the sum of
their budgets (basic sequential composition, :func:`dpdist.privacy.sequential`).
A :class:`BudgetSession` holds that total and keeps the account: each release or
campaign is **charged before it runs**, and the one that would overspend is
refused with :class:`~dpdist.errors.PrivacyBudgetError` stating what is left.
The model is that of OpenDP's compositors, Tumult Analytics' sessions and
diffprivlib's ``BudgetAccountant``.

>>> import numpy as np
>>> from dpdist import central
>>> from dpdist.budget import BudgetSession
>>> session = BudgetSession(epsilon=1.0)
>>> x = np.random.default_rng(0).uniform(size=1000)
>>> cdf = session.release(central.histogram_queries, x, epsilon=0.5, bounds=(0, 1), rng=0)
>>> session.remaining.epsilon
0.5

What the session promises, and how:

* **One relation.**  The total is a central :class:`~dpdist.privacy.PrivacyGuarantee`
  under ``"replace"`` (the default) or ``"add-remove"`` neighbours.  Each charge is
  stated in that relation by :func:`dpdist.privacy.convert` before it is added: an
  :math:`\varepsilon`-LDP campaign costs :math:`\varepsilon` of a replace budget; a
  release under add/remove neighbours costs :math:`2\varepsilon` of a replace budget
  (group privacy); a release under replace neighbours cannot be charged to an
  add/remove budget (it may publish the number of records), nor can a local
  campaign.  The charges compose sequentially (the session assumes they all touch
  the same people); a charge over disjoint parts of the data (a group-by on a
  public key, :func:`dpdist.frame.group_release`) is their parallel composition.
* **Refusal on public inputs only.**  What a release costs is computed from its
  public arguments, never from the data: :meth:`BudgetSession.release` runs the
  release once on no records (every central release accepts none, and its
  guarantee does not depend on the data), which also checks every public argument,
  so a typo is refused before anything is charged.  A refused release never reads
  its data.  Once charged, a release that fails keeps its charge (its failure may
  depend on the data).
* **Reported in every result.**  A result's ``guarantee`` becomes a
  :class:`SessionGuarantee`: the release's own guarantee plus a
  :class:`BudgetStatement` (the total, what this release charged, what is spent
  and left after it); ``describe()`` and ``to_dict()`` include it.
* **A file for the command line.**  :meth:`BudgetSession.create` and
  :meth:`BudgetSession.open` keep the account in a JSON file
  (``dpdist budget create FILE``; ``--budget FILE`` on ``release``, ``estimate``,
  ``privatize``, ``submit`` and ``campaign open``).  Each charge is one
  read-check-write under an exclusive lock of the file, so concurrent processes
  never spend the same budget twice.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Mapping, NamedTuple, Sequence

from .errors import InvalidParameterError, PrivacyBudgetError
from .privacy import PrivacyGuarantee, convert, parallel

if TYPE_CHECKING:
    from ._types import ArrayLike, PathLike, Seed
    from .local import LocalProtocol

__all__ = ["BudgetSession", "BudgetStatement", "Charge", "SessionGuarantee", "Remaining"]

#: Relative slack of the overspending test: shares from :func:`dpdist.privacy.split` add up to their
#: total up to rounding (at most 1e-12 relative), and spending all of them must not be refused.
_RTOL = 1e-12
#: Seconds a charge waits for another process's charge of the same file.
_LOCK_WAIT = 30.0


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


class BudgetSession:
    """A total privacy budget, charged by every release and campaign; refuses the one that would overspend.

    Parameters
    ----------
    epsilon : float
        The total epsilon (finite, > 0).
    delta : float
        The total delta, in ``[0, 1)``; 0 (the default) refuses every release that spends a delta.
    neighbouring : {"replace", "add-remove"}
        The relation of the total (see the module docstring for what each accepts).

    Use :meth:`create` / :meth:`open` for a session kept in a file.
    """

    def __init__(self, epsilon: float, delta: float = 0.0, *, neighbouring: str = "replace"):
        if neighbouring not in ("replace", "add-remove"):
            raise InvalidParameterError(
                "The 'neighbouring' parameter of BudgetSession must be 'replace' or 'add-remove'. "
                f"Got {neighbouring!r} instead."
            )
        self._total = PrivacyGuarantee(epsilon, delta, neighbouring, "central")
        self._charges: list[Charge] = []
        self._path: Path | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ files
    @classmethod
    def create(cls, path: PathLike, epsilon: float, delta: float = 0.0, *, neighbouring: str = "replace") -> "BudgetSession":
        """A new session kept in the JSON file ``path``; an existing file is never overwritten."""
        from ._io._atomic import exclusive_lock
        from ._io._budget_file import write_budget_file

        session = cls(epsilon, delta, neighbouring=neighbouring)
        path = _budget_path("BudgetSession.create", path)
        with exclusive_lock(path, "BudgetSession.create", wait=_LOCK_WAIT):
            if path.exists():
                raise InvalidParameterError(
                    f"The budget file {str(path)!r} exists already: a budget is never reset by creating it again "
                    "(open it, or choose another file)."
                )
            write_budget_file(path, session._total.to_dict(), [])
        session._path = path
        return session

    @classmethod
    def open(cls, path: PathLike) -> "BudgetSession":
        """The session kept in ``path`` (written by :meth:`create`); every charge re-reads it under its lock."""
        from ._io._budget_file import read_budget_file

        from .errors import IncompatibleStateError

        path = _budget_path("BudgetSession.open", path)
        document = read_budget_file(path)
        try:
            total = PrivacyGuarantee(**document["total"])
            session = cls(total.epsilon, total.delta, neighbouring=total.neighbouring)
        except (TypeError, ValueError) as error:
            raise IncompatibleStateError(f"The budget file {str(path)!r} holds a malformed total ({error}).") from None
        session._path = path
        return session

    @property
    def path(self) -> Path | None:
        """The file the account is kept in (None for a session in memory)."""
        return self._path

    # ------------------------------------------------------------------ the account
    @property
    def total(self) -> PrivacyGuarantee:
        return self._total

    @property
    def charges(self) -> tuple[Charge, ...]:
        """Every charge so far, oldest first (read from the file for a session kept in one)."""
        return tuple(self._read_charges())

    @property
    def spent(self) -> PrivacyGuarantee | None:
        """What the charges add up to (sequential composition), or None before the first."""
        charges = self._read_charges()
        return _sum(self._total, charges) if charges else None

    @property
    def remaining(self) -> Remaining:
        return _left(self._total, self.spent)

    def describe(self) -> str:
        """One line: the total, what is spent in how many charges, and what is left."""
        charges = self._read_charges()
        spent = "nothing spent" if not charges else f"{_budget(_sum(self._total, charges))} spent in {len(charges)} charge(s)"
        where = f" (file {str(self._path)!r})" if self._path is not None else ""
        return f"budget session{where}: {self._total.describe()}; {spent}, {_budget_pair(*self.remaining)} left"

    def cost(self, guarantee: PrivacyGuarantee) -> PrivacyGuarantee:
        """What ``guarantee`` costs in this session's relation (:func:`dpdist.privacy.convert`); charges nothing."""
        try:
            return convert(guarantee, self._total.neighbouring)
        except InvalidParameterError as error:
            raise InvalidParameterError(f"This budget session ({self._total.describe()}) cannot charge it: {error}") from None

    def check(self, guarantee: PrivacyGuarantee, label: str = "") -> PrivacyGuarantee:
        """Refuse ``guarantee`` as :meth:`charge` would, without charging it; return what it would cost.

        For a caller that must read its data before it can run (a file's schema): check first, so a
        refusal comes before the data are read, then :meth:`charge`, which checks again atomically.
        """
        cost = self.cost(guarantee)
        charges = self._read_charges()
        if self._overspends(charges, cost):
            raise self._refusal(guarantee, cost, charges, label)
        return cost

    def charge(self, guarantee: PrivacyGuarantee, label: str = "") -> BudgetStatement:
        """Charge one release or campaign stating ``guarantee``; refuse it if it would overspend.

        Raises
        ------
        PrivacyBudgetError
            The charge would take the spent epsilon or delta above the total; nothing is charged.
            ``error.remaining`` and ``error.remaining_delta`` hold what is left.
        """
        return self._add(guarantee, self.cost(guarantee), 1, label)

    def charge_parallel(self, guarantees: Sequence[PrivacyGuarantee], label: str = "") -> BudgetStatement:
        """Charge releases of disjoint parts of the data as one: their parallel composition (max epsilon, max delta).

        The parts must be disjoint sets of records, split by a rule that does not look at the data
        (a public key); see :func:`dpdist.privacy.parallel`.
        """
        if isinstance(guarantees, PrivacyGuarantee) or not isinstance(guarantees, (list, tuple)):
            raise InvalidParameterError(
                "The 'guarantees' argument of BudgetSession.charge_parallel must be a list of PrivacyGuarantee, one per "
                f"disjoint part. Got {guarantees!r:.100} instead."
            )
        guarantees = list(guarantees)
        if not guarantees:
            raise InvalidParameterError("BudgetSession.charge_parallel needs at least one guarantee. Got none.")
        cost = parallel([self.cost(guarantee) for guarantee in guarantees])
        same_kind = len({(g.neighbouring, g.model) for g in guarantees}) == 1
        return self._add(parallel(guarantees) if same_kind else cost, cost, len(guarantees), label)

    def _add(self, stated: PrivacyGuarantee, cost: PrivacyGuarantee, parts: int, label: str) -> BudgetStatement:
        if not isinstance(label, str):
            raise InvalidParameterError(f"The 'label' of a budget charge must be a string. Got {label!r} instead.")
        import secrets

        with self._transaction() as charges:
            if self._overspends(charges, cost):
                raise self._refusal(stated, cost, charges, label)
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            charge = Charge(label, stated, cost, parts, when, secrets.token_hex(8))
            charges.append(charge)
            return BudgetStatement(self._total, charge, _sum(self._total, charges), len(charges))

    def _overspends(self, charges: list[Charge], cost: PrivacyGuarantee) -> bool:
        spent_epsilon = math.fsum([c.charged.epsilon for c in charges] + [cost.epsilon])
        spent_delta = math.fsum([c.charged.delta for c in charges] + [cost.delta])
        return spent_epsilon > self._total.epsilon * (1 + _RTOL) or spent_delta > self._total.delta * (1 + _RTOL)

    def _cancel(self, charge: Charge) -> None:
        """Take back ``charge``, for a caller whose run failed before it read any data (a campaign that did not
        open): it spent nothing.  Never after data were read."""
        with self._transaction() as charges:
            kept = [entry for entry in charges if entry.id != charge.id]
            charges[:] = kept

    def _refusal(self, stated, cost, charges, label) -> PrivacyBudgetError:
        spent = _sum(self._total, charges) if charges else None
        left = _left(self._total, spent)
        where = f" of {str(self._path)!r}" if self._path is not None else ""
        converted = "" if cost == stated else f", which costs {_budget(cost)} under {cost.neighbouring} neighbours"
        return PrivacyBudgetError(
            f"{label or 'This charge'} is refused: it states {stated.describe()}{converted}, and the budget "
            f"session{where} holds {_budget(self._total)} ({self._total.neighbouring}) with "
            f"{_budget(spent) if spent else 'nothing'} spent in {len(charges)} charge(s): {_budget_pair(*left)} left. "
            "Nothing was charged and no data were read.",
            remaining=left.epsilon,
            remaining_delta=left.delta,
        )

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[list[Charge]]:
        """The charges, to read and append to; kept (written to the file) when the block ends without error."""
        with self._lock:
            if self._path is None:
                charges = list(self._charges)
                yield charges
                self._charges = charges
                return
            from ._io._atomic import exclusive_lock
            from ._io._budget_file import read_budget_file, write_budget_file

            with exclusive_lock(self._path, "budget session", wait=_LOCK_WAIT):
                charges = self._charges_of(read_budget_file(self._path))
                before = [charge.id for charge in charges]
                yield charges
                if [charge.id for charge in charges] != before:
                    write_budget_file(self._path, self._total.to_dict(), [charge.to_dict() for charge in charges])

    def _read_charges(self) -> list[Charge]:
        if self._path is None:
            return list(self._charges)
        from ._io._budget_file import read_budget_file

        return self._charges_of(read_budget_file(self._path))

    def _charges_of(self, document: dict) -> list[Charge]:
        from .errors import IncompatibleStateError

        if PrivacyGuarantee(**document["total"]) != self._total:
            raise IncompatibleStateError(
                f"The budget file {str(self._path)!r} now holds another total than the one this session opened."
            )
        try:
            return [Charge.from_dict(entry) for entry in document["charges"]]
        except (KeyError, TypeError, ValueError) as error:
            raise IncompatibleStateError(f"The budget file {str(self._path)!r} holds a malformed charge ({error}).") from None

    # ------------------------------------------------------------------ charged runs
    def release(self, function: Callable[..., Any], *args: Any, label: str | None = None, **kwargs: Any) -> Any:
        """Charge a central release, then run it: ``session.release(central.cdf, x, epsilon=1, bounds=(0, 9))``.

        What it costs is the guarantee the release states when run on no records with the same
        public arguments (which also refuses bad arguments before anything is charged); its
        result's ``guarantee`` then carries the session's account (:class:`SessionGuarantee`).
        ``function`` is any release whose first argument is the data and whose result states its
        guarantee as a function of its public arguments (every one of :mod:`dpdist.central`).
        """
        name = label if label is not None else getattr(function, "__qualname__", repr(function))
        planned = planned_guarantee(function, args, kwargs)
        statement = self.charge(planned, name)
        result = function(*args, **kwargs)
        realized = getattr(result, "guarantee", None)
        if realized is not None and not realized.covers(planned):
            from .errors import DPDistError

            raise DPDistError(
                f"{name} spent {realized.describe()}, more than the {planned.describe()} it was charged (a bug of "
                "dpdist or of the release: please report it). The charge stands."
            )
        return with_statement(result, statement)

    def privatize(self, protocol: LocalProtocol, values: ArrayLike, *, rng: Seed = None, secure: bool = False,
                  label: str | None = None) -> Any:
        """Charge one report per value of ``protocol`` (its ``guarantee``), then randomize ``values``."""
        self.charge(protocol.guarantee, label if label is not None else f"privatize {protocol.name}")
        return protocol.privatize(values, rng=rng, secure=secure)

    def estimate(self, protocol: LocalProtocol, values: ArrayLike, *, rng: Seed = None, label: str | None = None,
                 **options: Any) -> Any:
        """Charge a one-shot local estimate (each value one user's report), then run it.

        ``protocol.estimate(protocol.simulate(values, rng), **options)``: ``simulate`` draws the
        aggregate exactly as randomizing every value would.  The options are checked first.
        """
        from ._validation import check_options

        check_options(f"{protocol.display_name}.estimate", options, protocol.estimate_options, protocol.estimate_delegate)
        statement = self.charge(protocol.guarantee, label if label is not None else f"estimate {protocol.name}")
        return with_statement(protocol.estimate(protocol.simulate(values, rng=rng), **options), statement)

    def campaign(self, protocol: LocalProtocol | Mapping[str, Any], *, reports: int = 1, label: str | None = None) -> BudgetStatement:
        """Charge a collection campaign of ``protocol`` (or its config) in which each device sends ``reports`` reports.

        One report costs the protocol's ``guarantee``; several cost their sequential composition, or
        ``guarantee_over(reports)`` for a memoized protocol (the loss over a device's history).
        """
        from . import local
        from .local.frequency._memoized import MemoizedProtocol
        from .privacy import sequential

        if not isinstance(protocol, local.LocalProtocol):
            protocol = local.from_config(dict(protocol))
        if isinstance(reports, bool) or not isinstance(reports, int) or reports < 1:
            raise InvalidParameterError(f"The 'reports' parameter of BudgetSession.campaign must be an int >= 1. Got {reports!r}.")
        if reports == 1:
            guarantee = protocol.guarantee
        elif isinstance(protocol, MemoizedProtocol):
            guarantee = protocol.guarantee_over(reports)
        else:
            guarantee = sequential([protocol.guarantee] * reports)
        return self.charge(guarantee, label if label is not None else f"campaign of {protocol.name}")

    def __repr__(self):
        where = f", path={str(self._path)!r}" if self._path is not None else ""
        return (f"BudgetSession(epsilon={self._total.epsilon!r}, delta={self._total.delta!r}, "
                f"neighbouring={self._total.neighbouring!r}{where})")


def _sum(total: PrivacyGuarantee, charges: list[Charge]) -> PrivacyGuarantee:
    """The charges composed sequentially (plain sums: they are all in the total's relation)."""
    return PrivacyGuarantee(
        math.fsum(c.charged.epsilon for c in charges),
        min(math.fsum(c.charged.delta for c in charges), math.nextafter(1.0, 0.0)),
        total.neighbouring,
        "central",
    )


def with_statement(result: Any, statement: BudgetStatement) -> Any:
    """``result`` with its ``guarantee`` replaced by a :class:`SessionGuarantee` carrying ``statement``.

    Results that are not dataclasses with a ``guarantee`` field (a bare float) are returned unchanged.
    """
    is_record = dataclasses.is_dataclass(result) and not isinstance(result, type)
    if not is_record or "guarantee" not in {f.name for f in dataclasses.fields(result)}:
        return result
    own = result.guarantee
    if own is None:
        return result
    fields = {f.name: getattr(own, f.name) for f in dataclasses.fields(PrivacyGuarantee)}
    return dataclasses.replace(result, guarantee=SessionGuarantee(**fields, budget=statement))


def _budget_path(owner: str, path: Any) -> Path:
    """``path`` as the Path of a budget file: a str or os.PathLike naming no directory."""
    import os

    if not isinstance(path, (str, os.PathLike)) or not os.fspath(path) or isinstance(os.fspath(path), bytes):
        raise InvalidParameterError(f"The 'path' argument of {owner} must be the path of a budget file (a str or "
                                    f"os.PathLike). Got {path!r:.100} instead.")
    if Path(path).is_dir():
        raise InvalidParameterError(f"The 'path' argument of {owner} must be the path of a budget file. Got "
                                    f"{os.fspath(path)!r}, a directory.")
    if not Path(path).absolute().parent.is_dir():
        raise InvalidParameterError(f"The 'path' argument of {owner} must be a file in an existing directory. Got "
                                    f"{os.fspath(path)!r}: {str(Path(path).absolute().parent)!r} is not a directory.")
    return Path(path)


def planned_guarantee(function: Callable, args: tuple, kwargs: dict) -> PrivacyGuarantee:
    """The guarantee ``function(*args, **kwargs)`` states, found by running it on no records.

    The data (the first argument) are replaced by an empty array of the same dtype (its schema,
    which is public), the generator by a fixed seed: every public argument is checked as the real
    call checks it, and no value of the data is read.
    """
    import inspect

    if not callable(function):
        raise InvalidParameterError(f"BudgetSession.release needs a release function. Got {function!r} instead.")
    if not args:
        raise InvalidParameterError("BudgetSession.release needs the data as the first positional argument after the function.")
    try:
        signature = inspect.signature(function)
        bound = signature.bind(*args, **kwargs)
    except (TypeError, ValueError) as error:  # no signature, or arguments that do not fit it
        raise InvalidParameterError(
            f"BudgetSession.release calls {getattr(function, '__qualname__', function)!r:.100} with the data and the "
            f"arguments given, which do not fit its parameters: {error}."
        ) from None
    first = next(iter(bound.arguments))
    bound.arguments[first] = _no_records(args[0])
    if _is_slice_quantiles(function, bound.arguments):  # its guarantee is under replace-one with n public
        import numpy as np

        bound.arguments[first] = np.zeros(len(args[0]))
    for name, value in (("rng", 0), ("secure", False)):
        if name in signature.parameters:
            bound.arguments[name] = value
    dry = function(*bound.args, **bound.kwargs)
    guarantee = getattr(dry, "guarantee", None)
    if guarantee is None and function is _unbounded_quantile():
        guarantee = PrivacyGuarantee(float(bound.arguments["epsilon"]), 0.0, "add-remove", "central")
    if not isinstance(guarantee, PrivacyGuarantee):
        raise InvalidParameterError(
            f"BudgetSession.release charges releases whose result states its guarantee; "
            f"{getattr(function, '__qualname__', function)!r} does not. Charge it with session.charge(guarantee)."
        )
    return guarantee


def _is_slice_quantiles(function: Callable, arguments: dict) -> bool:
    """Whether the call is ``central.quantiles(..., method="slice")``, whose plan reads the public n."""
    from .central import quantiles

    return function is quantiles and arguments.get("method") == "slice"


def _no_records(data):
    """An empty array with the schema (dtype) of ``data``: arrays and Series are sliced, so no value is read."""
    import numpy as np

    if hasattr(data, "dtype") and hasattr(data, "__getitem__") and getattr(data, "ndim", 1) == 1:
        return np.asarray(data[:0])
    array = np.asarray(data)
    return array.reshape(-1)[:0] if array.ndim == 0 else array[:0]


def _unbounded_quantile():
    from .central import unbounded_quantile

    return unbounded_quantile
