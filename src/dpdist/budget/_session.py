"""The :class:`BudgetSession`: one total budget, charged by every release and campaign before it runs (see
:mod:`dpdist.budget`), in memory or in a locked file."""

from __future__ import annotations

import contextlib
import json
import secrets
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping, Sequence

from .. import local
from .._io._atomic import exclusive_lock
from ..accounting import FPRS, PrivacyLoss, TradeOff, check_accountant, protocol_loss, tradeoff
from ..accounting._odds import FALSE_POSITIVE_RATES
from ..accounting._accountants import CHOICES as ACCOUNTANTS
from ..accounting import parallel as parallel_losses
from .._io._budget_file import read_budget_file, write_budget_file
from .._types import ArrayLike, PathLike, Seed
from .._validation import (
    CallableRule,
    Described,
    Implies,
    InstanceOf,
    Integer,
    Items,
    Optional,
    Options,
    PathLike as PathRule,
    Text,
    check_options,
    validate_params,
)
from ..errors import (
    DPDistError,
    IncompatibleStateError,
    InvalidParameterError,
    PrivacyBudgetError,
)
from ..local import LocalProtocol
from .._guarantee import GUARANTEE_DELTA, GUARANTEE_EPSILON, UNITS, PrivacyGuarantee, convert, parallel, with_assumptions
from ._account import composed, point_delta, statement_of, unstateable
from ._derivation import check_stored, derived, guarantee_derivation, memo_increment, memo_key
from ._planned import planned_guarantee, refuse_missing_first, with_statement
from ._statement import SEEDED_SESSION, BudgetStatement, Charge, Remaining, SessionGuarantee, Spent, _budget, _budget_pair, _left

__all__ = ["BudgetSession"]

#: Relative slack of the overspending test: shares from :func:`dpdist.privacy.split` add up to their
#: total up to rounding (at most 1e-12 relative), and spending all of them must not be refused.
_RTOL = 1e-12
#: Seconds a charge waits for another process's charge of the same file.
_LOCK_WAIT = 30.0


#: what a session charges: a guarantee, or a loss stated in every currency
_CHARGED = InstanceOf((PrivacyGuarantee, PrivacyLoss), "a PrivacyGuarantee or a PrivacyLoss")
#: a charge's label (a release's own default when None)
_LABEL = Text(non_empty=False)
#: the file a session is kept in
_PATH = Described(PathRule(in_folder=True), "the path of a budget file (a non-empty str or os.PathLike) in an existing "
                  "folder, not a folder")


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
    unit : {"record", "person"}
        What a neighbour adds, removes or replaces: one record (the default), or all of one person's records (a
        total per person: it charges releases with ``privacy_id`` at their own epsilon and refuses releases per
        record, which protect no person with many records; a session per record charges a release per person
        at :func:`dpdist.privacy.convert`'s cost).
    accountant : {"tightest", "basic", "zcdp", "pld"}
        How the charges add up (:mod:`dpdist.accounting`): ``"basic"`` sums epsilons and deltas, ``"zcdp"`` rhos,
        ``"pld"`` composes privacy loss distributions; ``"tightest"`` (the default) states the smallest epsilon at
        ``delta`` of those that can state every charge.  A charge the accountant cannot state is refused by name.
    reproducible : bool
        False (the default) refuses every release given a seed or a generator (``rng``): its noise is drawn again by
        anyone who knows the seed, and subtracted.  True, for tests and reproduction only, accepts them and says in
        every statement that its releases hold no privacy against anyone who knows the seed.

    Use :meth:`create` / :meth:`open` for a session kept in a file (which keeps its accountant).
    """

    @validate_params({"epsilon": GUARANTEE_EPSILON, "delta": GUARANTEE_DELTA,  # named as BudgetSession's
                      "neighbouring": Options(("replace", "add-remove")), "unit": Options(UNITS),
                      "accountant": Options(ACCOUNTANTS), "reproducible": Options((False, True))}, relations=(
        Implies("accountant", tuple(name for name in ACCOUNTANTS if name != "zcdp"), "delta", (0,),
                why="zCDP states no pure epsilon: a budget with accountant='zcdp' needs a delta > 0; choose 'basic' or "
                "'pld' for a pure budget", counterexample={"epsilon": 1.0, "delta": 0.0, "accountant": "zcdp"}),))
    def __init__(self, epsilon: float, delta: float = 0.0, *, neighbouring: str = "replace", accountant: str = "tightest",
                 unit: str = "record", reproducible: bool = False):
        self._total = PrivacyGuarantee(epsilon, delta, neighbouring, "central", unit=unit)
        self._reproducible = bool(reproducible)
        self._accountant = check_accountant("BudgetSession", accountant)
        self._charges: list[Charge] = []
        self._path: Path | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ files
    @classmethod
    @validate_params({"path": _PATH}, owner="BudgetSession.create")
    def create(cls, path: PathLike, epsilon: float, delta: float = 0.0, *, neighbouring: str = "replace",
               accountant: str = "tightest", unit: str = "record") -> "BudgetSession":
        """A new session kept in the JSON file ``path``; an existing file is never overwritten."""
        session = cls(epsilon, delta, neighbouring=neighbouring, accountant=accountant, unit=unit)
        path = Path(path)  # in an existing folder: the table
        with exclusive_lock(path, "BudgetSession.create", wait=_LOCK_WAIT):
            if path.exists():
                raise InvalidParameterError(
                    f"The budget file {str(path)!r} exists already: a budget is never reset by creating it again "
                    "(open it, or choose another file)."
                )
            write_budget_file(path, session._total.to_dict(), [], session._accountant)
        session._path = path
        return session

    @classmethod
    @validate_params({"path": _PATH}, owner="BudgetSession.open")
    def open(cls, path: PathLike) -> "BudgetSession":
        """The session kept in ``path`` (written by :meth:`create`); every charge re-reads it under its lock."""

        path = Path(path)  # in an existing folder: the table
        document = read_budget_file(path)
        try:
            total = PrivacyGuarantee(**document["total"])
            session = cls(total.epsilon, total.delta, neighbouring=total.neighbouring, accountant=document["accountant"],
                          unit=total.unit)
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
    def accountant(self) -> str:
        """How the charges add up: ``"tightest"``, ``"basic"``, ``"zcdp"`` or ``"pld"`` (kept in the session's file)."""
        return self._accountant

    @property
    def charges(self) -> tuple[Charge, ...]:
        """Every charge so far, oldest first (read from the file for a session kept in one)."""
        return tuple(self._read_charges())

    @property
    def spent(self) -> Spent | None:
        """What the charges add up to, stated by the session's accountant at its delta (``spent.epsilon_at(delta)``
        states them at any other), or None before the first charge."""
        return self._spent(self._read_charges())

    def _spent(self, charges: list[Charge]) -> Spent | None:
        loss = composed(charges, self._total.neighbouring)
        if loss is None:
            return None
        statement = statement_of(self._total, self._accountant, loss)
        return Spent.of(statement, loss, point_delta(charges, statement.accountant), self._accountant)

    @property
    def remaining(self) -> Remaining:
        return _left(self._total, self.spent)

    def describe(self) -> str:
        """One line: the total, what is spent in how many charges, what is left, and what the spent statement assumes
        (``"; assuming: ..."``, when it assumes anything)."""
        charges = self._read_charges()
        used = self._spent(charges)
        spent = "nothing spent" if used is None else f"{_spent_text(used)} spent in {len(charges)} charge(s)"
        where = f" (file {str(self._path)!r})" if self._path is not None else ""
        seeded = f" ({SEEDED_SESSION})" if self._reproducible else ""
        return with_assumptions(f"budget session{where}{seeded}: {self._total.describe()}, {self._accountant} accountant; "
                                f"{spent}, {_budget_pair(*_left(self._total, used))} left",
                                () if used is None else used.assumptions)

    @validate_params({"fpr": FALSE_POSITIVE_RATES})
    def tradeoff(self, fpr: Sequence[float] = FPRS) -> TradeOff:
        """What the charges so far let a test of one record (or person, the session's unit) in its relation do: the
        true-positive rate at each false-positive rate (:func:`dpdist.accounting.tradeoff` of :attr:`spent`'s loss,
        its privacy loss distribution where the charges state one); a blind guess's before any charge."""
        spent = self.spent
        return TradeOff.blind(self._total, fpr) if spent is None else tradeoff(spent, fpr)

    def cost(self, guarantee: PrivacyGuarantee) -> PrivacyGuarantee:
        """What ``guarantee`` costs in this session's relation (:func:`dpdist.privacy.convert`); charges nothing."""
        try:
            return convert(_own(guarantee), self._total.neighbouring, self._total.unit)
        except InvalidParameterError as error:
            raise InvalidParameterError(f"This budget session ({self._total.describe(assumptions=False)}) cannot charge it: {error}") from None

    @validate_params({"charged": _CHARGED})
    def loss(self, charged: PrivacyGuarantee | PrivacyLoss) -> PrivacyLoss:
        """What ``charged`` (a guarantee, or a :class:`~dpdist.accounting.PrivacyLoss` in every currency) costs in this
        session's relation, in every currency: an exact loss is kept when the relation is its own or a local one read
        centrally, else the worst case of the converted guarantee.

        A session kept in a file keeps only losses it can derive again when it reads the file (a loss with its
        ``derivation``: :func:`~dpdist.accounting.protocol_loss`, :func:`~dpdist.accounting.discrete_laplace`,
        :func:`~dpdist.accounting.gaussian`, :func:`~dpdist.amplification.shuffled_loss`); a loss made by hand or
        composed is charged there as the worst case of its guarantee (:mod:`dpdist.budget._derivation` says why)."""
        if isinstance(charged, PrivacyLoss):
            if charged.derivation is None and self._path is not None:
                worst = PrivacyLoss.of_guarantee(self.cost(charged.guarantee), f"{charged.source or 'a loss'}, charged as "
                                                 "its guarantee's worst case (a budget file keeps only losses it can "
                                                 "derive again)")
                derivation = guarantee_derivation(charged.guarantee, charged.assumptions)
                derived(derivation, self._restated, "a charge")  # refused now as reading the file would refuse it
                return worst.assuming(*charged.assumptions).derived_as(derivation)
            if self._path is not None:  # as the file is read again, keeping what it assumes beyond its derivation
                given = charged.derivation or {}
                again = derived(given, self._restated, "a charge")
                extra = [text for text in charged.assumptions if text not in again.assumptions]
                if extra:
                    derivation = {**given, "assumptions": list(dict.fromkeys([*given.get("assumptions", []), *extra]))}
                    again = derived(derivation, self._restated, "a charge")
                return again
            return self._restated(charged)
        charged = _own(charged)
        self.cost(charged)  # refused by name first
        assumed = getattr(charged, "assumptions", ())  # a guarantee that rests on some (shuffled; a Spent) keeps them
        return derived(guarantee_derivation(charged, assumed), self._restated, "a charge")  # as the file is read again

    def _restated(self, loss: PrivacyLoss) -> PrivacyLoss:
        """``loss`` in this session's relation (:meth:`PrivacyLoss.restated`)."""
        return loss.restated(self.cost(loss.guarantee))

    @validate_params({"guarantee": _CHARGED, "label": _LABEL})
    def check(self, guarantee: PrivacyGuarantee | PrivacyLoss, label: str = "") -> PrivacyGuarantee:
        """Refuse ``guarantee`` as :meth:`charge` would, without charging it; return what it would cost.

        For a caller that must read its data before it can run (a file's schema): check first, so a
        refusal comes before the data are read, then :meth:`charge`, which checks again atomically.
        """
        loss = self.loss(guarantee)
        charges = self._read_charges()
        refusal, _ = self._refusal(_stated(guarantee), loss, charges, label)
        if refusal is not None:
            raise refusal
        return loss.guarantee

    @validate_params({"guarantee": _CHARGED, "label": _LABEL})
    def charge(self, guarantee: PrivacyGuarantee | PrivacyLoss, label: str = "") -> BudgetStatement:
        """Charge one release or campaign stating ``guarantee`` (or its :class:`~dpdist.accounting.PrivacyLoss`);
        refuse it if it would overspend, or if the session's accountant cannot state it.

        Raises
        ------
        PrivacyBudgetError
            The charge would take the spent epsilon (at the session's delta, by its accountant) or delta above the
            total, or the accountant cannot state it; nothing is charged.  ``error.remaining`` and
            ``error.remaining_delta`` hold what is left, ``error.accountant`` the accountant.
        """
        return self._add(_stated(guarantee), self.loss(guarantee), 1, label)

    @validate_params({"guarantees": Items(_CHARGED, "a non-empty list of PrivacyGuarantee or PrivacyLoss, one per disjoint "
                                                    "part", min_length=1), "label": _LABEL})
    def charge_parallel(self, guarantees: Sequence[PrivacyGuarantee | PrivacyLoss], label: str = "") -> BudgetStatement:
        """Charge releases of disjoint parts of the data as one: their parallel composition (max epsilon, max delta).

        The parts must be disjoint sets of records, split by a rule that does not look at the data
        (a public key); see :func:`dpdist.privacy.parallel`.
        """
        guarantees = list(guarantees)  # (a list already: the table's)
        parts = [self.loss(guarantee) for guarantee in guarantees]
        cost = parallel_losses(parts)
        if all(part.derivation is not None for part in parts):  # (always, in a session kept in a file)
            cost = cost.derived_as({"kind": "parallel", "parts": [part.derivation for part in parts]})
        stated = [_stated(guarantee) for guarantee in guarantees]
        same_kind = len({(g.neighbouring, g.model, g.unit) for g in stated}) == 1
        return self._add(parallel(stated) if same_kind else cost.guarantee, cost, len(guarantees), label)

    def _add(self, stated: PrivacyGuarantee, cost: PrivacyLoss | None, parts: int, label: str,
             priced: Callable[[list[Charge]], tuple[PrivacyGuarantee, PrivacyLoss]] | None = None) -> BudgetStatement:
        """Charge ``cost`` (or what ``priced`` makes of the charges so far, read under the lock) unless refused."""
        with self._transaction() as charges:
            if priced is not None:
                stated, cost = priced(charges)
            assert cost is not None  # given, or priced
            refusal, spent = self._refusal(stated, cost, charges, label)
            if refusal is not None:
                raise refusal
            assert spent is not None  # stated when not refused
            when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
            charge = Charge(label, stated, cost.guarantee, parts, when, secrets.token_hex(8), cost)
            charges.append(charge)
            return BudgetStatement(self._total, charge, spent, len(charges), self._reproducible)

    def _overspends(self, charges: list[Charge], cost: PrivacyLoss) -> tuple[str | None, Spent | None]:
        """Why adding ``cost`` to ``charges`` is refused (a sentence), or None: the accountant cannot state it, or the
        spent epsilon at the session's delta, or the charges' own deltas, would pass the total; and what they would
        spend with it (None when the accountant cannot state it).  That spend is the charge's own once it is added
        (a spend reads the charges' losses and charged deltas only, which the charge shares with this probe): stated
        once, not again after the charge (a pld session's year of daily campaigns: 24.4 -> 20.9 CPU-s; the accountant's
        epsilon is read once a charge instead of twice, the composition of every charge so far is cached already)."""
        total = self._total
        why = unstateable(total, self._accountant, cost)
        if why is not None:
            return why, None
        probe = Charge("", cost.guarantee, cost.guarantee, loss=cost)
        spent = self._spent([*charges, probe])
        assert spent is not None
        if spent.accountant == "basic" and spent.point_delta > total.delta * (1 + _RTOL):
            return f"the deltas would add up to {spent.point_delta:.3g}, above the total's {total.delta:.3g}", spent
        if spent.epsilon > total.epsilon * (1 + _RTOL):
            return (f"the {spent.accountant} accountant would state {spent.epsilon:.6g} spent at delta "
                    f"{total.delta:.3g}, above the total's {total.epsilon:.6g}"), spent
        return None, spent

    def _cancel(self, charge: Charge) -> None:
        """Take back ``charge``, for a caller whose run failed before it read any data (a campaign that did not
        open): it spent nothing.  Never after data were read."""
        with self._transaction() as charges:
            kept = [entry for entry in charges if entry.id != charge.id]
            charges[:] = kept

    def _refusal(self, stated: PrivacyGuarantee, cost: PrivacyLoss, charges: list[Charge], label: str
                 ) -> tuple[PrivacyBudgetError | None, Spent | None]:
        """The refusal of ``cost`` after ``charges`` (naming the accountant, the charge and what is left), or None; and
        what the charges would spend with it (:meth:`_overspends`)."""
        why, projected = self._overspends(charges, cost)
        if why is None:
            return None, projected
        spent = self._spent(charges)
        left = _left(self._total, spent)
        where = f" of {str(self._path)!r}" if self._path is not None else ""
        own = cost.guarantee
        converted = "" if PrivacyGuarantee.to_dict(own) == PrivacyGuarantee.to_dict(stated) else f", which costs {_budget(own)} under {own.neighbouring} neighbours"
        error = PrivacyBudgetError(
            f"{label or 'This charge'} is refused: it states {stated.describe(assumptions=False)}{converted} ({cost.source or 'as stated'}), "
            f"and {why}. The budget session{where} holds {_budget(self._total)} ({self._total.neighbouring}, "
            f"{self._accountant} accountant) with {_spent_text(spent) if spent else 'nothing'} spent in {len(charges)} "
            f"charge(s): {_budget_pair(*left)} left. Nothing was charged and no data were read.",
            remaining=left.epsilon,
            remaining_delta=left.delta,
        )
        error.accountant = self._accountant  # type: ignore[attr-defined]  # the refusal names its accountant
        return error, projected

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[list[Charge]]:
        """The charges, to read and append to; kept (written to the file) when the block ends without error."""
        with self._lock:
            if self._path is None:
                charges = list(self._charges)
                yield charges
                self._charges = charges
                return

            with exclusive_lock(self._path, "budget session", wait=_LOCK_WAIT):
                charges = self._charges_of(read_budget_file(self._path))
                before = [charge.id for charge in charges]
                yield charges
                if [charge.id for charge in charges] != before:
                    write_budget_file(self._path, self._total.to_dict(), [charge.to_dict() for charge in charges],
                                      self._accountant)

    def _read_charges(self) -> list[Charge]:
        if self._path is None:
            return list(self._charges)

        return self._charges_of(read_budget_file(self._path))

    def _charges_of(self, document: dict) -> list[Charge]:
        if PrivacyGuarantee(**document["total"]) != self._total or document["accountant"] != self._accountant:
            raise IncompatibleStateError(
                f"The budget file {str(self._path)!r} now holds another total or accountant than the one this session "
                "opened."
            )
        try:
            charges = [Charge.from_dict(entry) for entry in document["charges"]]
        except (KeyError, TypeError, ValueError) as error:
            raise IncompatibleStateError(f"The budget file {str(self._path)!r} holds a malformed charge ({error}).") from None
        return [self._derived_again(charge, "loss" in entry) for charge, entry in zip(charges, document["charges"])]

    def _derived_again(self, charge: Charge, stored: bool) -> Charge:
        """``charge`` as read from the file, its loss derived again from what the file shows (refused when the stored
        loss disagrees: :mod:`dpdist.budget._derivation`); a charge without a derivation costs its worst case."""
        where = f"The budget file {str(self._path)!r}, charge {charge.label!r} ({charge.id or charge.time})"
        derivation = charge.loss.derivation if stored else None
        if derivation is None:  # written before derivations (or before the accountants): its stored loss is not read
            loss = PrivacyLoss.of_guarantee(charge.charged, f"{charge.label}: its guarantee's worst case")
            return Charge(charge.label, charge.guarantee, charge.charged, charge.parts, charge.time, charge.id, loss)
        loss = derived(derivation, self._restated, where)
        check_stored(charge.loss, charge.charged, loss, where)
        exact = PrivacyLoss(charge.charged, loss.rho, loss.distribution, loss.source, loss.assumptions, loss.derivation)
        return Charge(charge.label, charge.guarantee, charge.charged, charge.parts, charge.time, charge.id, exact)

    # ------------------------------------------------------------------ charged runs
    @validate_params({"function": CallableRule("a release function (one of dpdist.central, say)"),
                      "label": Optional(_LABEL)})
    def release(self, function: Callable[..., Any], *args: Any, label: str | None = None, **kwargs: Any) -> Any:
        """Charge a central release, then run it: ``session.release(central.cdf, x, epsilon=1, bounds=(0, 9))``.

        What it costs is the guarantee the release states when run on no records with the same
        public arguments (which also refuses bad arguments before anything is charged); its
        result's ``guarantee`` then carries the session's account (:class:`SessionGuarantee`).
        ``function`` is any release whose first argument is the data and whose result states its
        guarantee as a function of its public arguments (every one of :mod:`dpdist.central`).
        """
        name = label if label is not None else getattr(function, "__qualname__", repr(function))
        self.refuse_seeded(kwargs.get("rng"), name)
        planned = planned_guarantee(function, args, kwargs)
        self.check(planned, name)
        refuse_missing_first(function, args, kwargs)  # before the charge: a refused release spends nothing
        statement = self.charge(planned, name)
        result = function(*args, **kwargs)
        realized = getattr(result, "guarantee", None)
        if realized is not None and not realized.covers(planned):
            raise DPDistError(
                f"{name} spent {realized.describe(assumptions=False)}, more than the {planned.describe(assumptions=False)} it was charged (a bug of "
                "dpdist or of the release: please report it). The charge stands."
            )
        return with_statement(result, statement)

    def refuse_seeded(self, rng: Any, owner: str) -> None:
        """Refuse a release drawing from ``rng`` (a seed or a generator, not ``None``: the OS CSPRNG) unless the session
        is ``reproducible``: its noise can be drawn again by anyone who knows the seed, and subtracted."""
        if rng is not None and not self._reproducible:
            raise InvalidParameterError(
                f"The 'rng' argument of {owner} is {rng!r:.60} in a budget session that is not reproducible: seeded noise "
                "can be drawn again by anyone who knows the seed (the same release on a table of known contents) and "
                "subtracted, so a seeded release is not private and is charged to no private budget. Leave rng=None "
                "(the OS CSPRNG), or, for tests and reproduction only, use BudgetSession(..., reproducible=True).")

    @validate_params({"label": Optional(_LABEL)})
    def privatize(self, protocol: LocalProtocol, values: ArrayLike, *, rng: Seed = None, secure: bool = False,
                  label: str | None = None) -> Any:
        """Charge one report per value of ``protocol`` (its exact loss per report), then randomize ``values``."""
        self.refuse_seeded(rng, "BudgetSession.privatize")
        refuse_missing_first(protocol.privatize, (values,), {}, private=False)  # before the charge
        self.charge(protocol_loss(protocol), label if label is not None else f"privatize {protocol.name}")
        return protocol.privatize(values, rng=rng, secure=secure)

    @validate_params({"label": Optional(_LABEL)})
    def estimate(self, protocol: LocalProtocol, values: ArrayLike, *, rng: Seed = None, label: str | None = None,
                 **options: Any) -> Any:
        """Charge a one-shot local estimate (each value one user's report), then run it.

        ``protocol.estimate(protocol.simulate(values, rng), **options)``: ``simulate`` draws the
        aggregate exactly as randomizing every value would.  The options are checked first.
        """
        check_options(f"{protocol.display_name}.estimate", options, protocol.estimate_options, protocol.estimate_delegate)
        self.refuse_seeded(rng, "BudgetSession.estimate")
        refuse_missing_first(protocol.simulate, (values,), {}, private=False)  # before the charge
        statement = self.charge(protocol_loss(protocol), label if label is not None else f"estimate {protocol.name}")
        return with_statement(protocol.estimate(protocol.simulate(values, rng=rng), **options), statement)

    @validate_params({"reports": Integer(low=1), "label": Optional(_LABEL)})
    def campaign(self, protocol: LocalProtocol | Mapping[str, Any], *, reports: int = 1, label: str | None = None) -> BudgetStatement:
        r"""Charge a collection campaign of ``protocol`` (or its config) in which each device sends ``reports`` reports.

        One report costs the protocol's exact loss per report (:func:`dpdist.accounting.protocol_loss`, from its
        channel); several compose as fresh reports.  A memoized protocol's reports are one mechanism: its campaigns
        of one config are answered through the same memo on each device (one campaign per round), so they are
        gathered into ``guarantee_over`` of all their reports, and this campaign costs its increment
        :math:`\varepsilon_{R+K} - \varepsilon_R` after the :math:`R` reports charged before
        (:mod:`dpdist.budget._derivation`): ``guarantee_over(1)`` for the first report, not the memo's
        :math:`\varepsilon_\infty`.
        """
        if not isinstance(protocol, local.LocalProtocol):
            protocol = local.from_config(dict(protocol))
        label = label if label is not None else f"campaign of {protocol.name}"
        if not protocol.tags.memoized:
            return self.charge(protocol_loss(protocol, reports), label)
        config = json.loads(memo_key(protocol.config()))

        def priced(charges: list[Charge]) -> tuple[PrivacyGuarantee, PrivacyLoss]:
            memos = [charge.loss.derivation for charge in charges
                     if charge.loss.derivation is not None and charge.loss.derivation.get("kind") == "memo"]
            before = sum(int(memo["reports"]) for memo in memos if memo_key(memo["config"]) == memo_key(config))
            try:
                increment = memo_increment(protocol, before, reports)
            except InvalidParameterError as error:
                raise PrivacyBudgetError(f"{label} is refused: this session charged {before} report(s) per device "
                                         f"through the same memo before, and {error} Nothing was charged.",
                                         remaining=_left(self._total, self._spent(charges)).epsilon) from None
            derivation = {"kind": "memo", "config": config, "before": before, "reports": reports}
            return increment, derived(derivation, self._restated, label)  # as the file is read again

        return self._add(protocol.guarantee, None, 1, label, priced)

    def __repr__(self):
        where = f", path={str(self._path)!r}" if self._path is not None else ""
        return (f"BudgetSession(epsilon={self._total.epsilon!r}, delta={self._total.delta!r}, "
                f"neighbouring={self._total.neighbouring!r}, accountant={self._accountant!r}"
                + (f", unit={self._total.unit!r}" if self._total.unit != "record" else "") + f"{where})")


def _stated(charged: PrivacyGuarantee | PrivacyLoss) -> PrivacyGuarantee:
    """The guarantee a charge states itself (before it is stated in the session's relation)."""
    return _own(charged.guarantee if isinstance(charged, PrivacyLoss) else charged)  # (its caller's table admits no other)


def _own(guarantee: PrivacyGuarantee) -> PrivacyGuarantee:
    """``guarantee`` without another session's account: a charged result's guarantee (:class:`SessionGuarantee`) costs
    what the release itself states, and this session keeps its own account (the other's ``budget`` is not a field of
    what it charges, nor of its file)."""
    if not isinstance(guarantee, SessionGuarantee):
        return guarantee
    return PrivacyGuarantee(guarantee.epsilon, guarantee.delta, guarantee.neighbouring, guarantee.model,
                            guarantee.reports, guarantee.unit)


def _spent_text(spent: Spent) -> str:
    if spent.accountant == "basic":
        return _budget(spent)
    return f"{spent.epsilon:.6g} at delta {spent.delta:.3g} ({spent.accountant})"
