r"""The privacy guarantee as a value, and the basic accountant that composes guarantees (public as :mod:`dpdist.privacy`).

Every local protocol (``protocol.guarantee``) and every central release states
what it promises as a :class:`PrivacyGuarantee`: :math:`(\varepsilon, \delta)`,
the neighbouring relation and the model.  Budget splits go through the three
functions below instead of being written by hand, so what a release claims is
computed from what its steps spend (the amplification accountant, which states the central
guarantee of shuffled reports, :func:`dpdist.amplification.shuffled`, sits above the protocols it
accounts for; :mod:`dpdist.privacy` is the face of both):

* :func:`split` -- shares of a total budget for steps run one after another on
  the same data (they compose back to the total by :func:`sequential`);
* :func:`sequential` -- basic sequential composition: steps on the same data
  add up, :math:`(\sum_i \varepsilon_i, \sum_i \delta_i)` (Dwork & Roth 2014,
  Thm. 3.16);
* :func:`parallel` -- parallel composition over disjoint data (sites, batches of
  a stream, user groups, the nodes of one tree level):
  :math:`(\max_i \varepsilon_i, \max_i \delta_i)` (McSherry 2009, Thm. 4).  It
  needs each record (each user, in the local model) to be in one part only; under
  ``"replace"`` neighbours the parts must also not depend on the records' values
  (a replaced value moving between parts would touch two), so value-dependent
  partitions are composed under ``"add-remove"``.

Neighbouring relations: ``"replace"`` -- data sets differing in the value of
one record (in the local model: any two inputs of one user, the definition of
:math:`\varepsilon`-LDP); ``"add-remove"`` -- one record added or removed.
Two more, for a device that reports many times through a memo (local model
only; ``dpdist.local.frequency._memoized`` derives them): ``"history"`` -- any two
histories of values of one device over ``reports`` reports (changes included);
``"stable"`` -- two values of one device, each held unchanged over any number of
reports (RAPPOR's longitudinal relation; it says nothing of when a value changes).
And one for records of several attributes (local model only,
:mod:`dpdist.local.multi`): ``"attribute"`` -- two records of one user that differ in
the value of one attribute (the others equal); ``"replace"`` is then any two records.

The **unit** of a central guarantee is what a neighbour adds, removes or replaces: one record
(``unit="record"``, the default) or all of one person's records (``unit="person"``: a release
that bounds each person's rows, :mod:`dpdist._contributions`).  Under ``"add-remove"`` a person's
rows are added or removed together; under ``"replace"`` they are replaced by as many rows of
other values (each person's number of rows, like ``n``, is public there).  Guarantees of one unit
compose; :func:`convert` states a per-person guarantee per record (a record added or removed is
the person's rows removed and added back: twice the cost), never the reverse.

Guarantees of different relations or models compose only after :func:`convert`
states them in one relation (what a budget session, :mod:`dpdist.budget`, does):
an :math:`\varepsilon`-LDP randomizer run once by each user is
:math:`\varepsilon`-DP in the central model under ``"replace"`` (the records are
the users' values, or their histories for ``"history"``), and an add/remove
guarantee is a replace guarantee at twice the cost (group privacy of size 2).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from ._documents import omitted_at_default, read_dataclass
from ._validation import (
    Described,
    Implies,
    InstanceOf,
    Integer,
    Items,
    Interval,
    OneOf,
    Optional,
    Options,
    Vector,
    validate_params,
)
from .errors import InvalidParameterError, InvalidPrivacyParameterError

__all__ = ["PrivacyGuarantee", "AssumingGuarantee", "assumed", "local_guarantee", "sequential", "parallel", "split",
           "convert", "MODELS", "NEIGHBOURING", "UNITS", "GUARANTEE_EPSILON", "GUARANTEE_DELTA", "with_assumptions"]

#: where the randomness is added: by each user ("local") or by the curator ("central")
MODELS = ("local", "central")
#: which data sets are neighbours
NEIGHBOURING = ("replace", "add-remove", "history", "stable", "attribute")
#: the relations that speak of one device's reports over time (local model only)
OVER_TIME = ("history", "stable")
#: the relations that exist in the local model only
LOCAL_ONLY = (*OVER_TIME, "attribute")
#: what a central neighbour adds, removes or replaces: one record, or all of one person's records
UNITS = ("record", "person")


#: a guarantee's epsilon and delta: the rules of PrivacyGuarantee, and of what states one (a BudgetSession's total)
GUARANTEE_EPSILON = Interval(0.0, math.inf, closed="neither", privacy=True)
GUARANTEE_DELTA = Interval(0.0, 1.0, closed="left", privacy=True)


@validate_params({
    "epsilon": GUARANTEE_EPSILON,
    "delta": GUARANTEE_DELTA,
    "neighbouring": Options(NEIGHBOURING),
    "model": Options(MODELS),
    "reports": Optional(Integer(low=1)),
    "unit": Options(UNITS),
}, relations=(
    Implies("model", ("local",), "neighbouring", LOCAL_ONLY, why="the relation speaks of one device's reports",
            counterexample={"epsilon": 1.0, "neighbouring": "attribute", "model": "central"}),
    Implies("reports", None, "neighbouring", ("history",), why="an int >= 1: the reports of one history",
            counterexample={"epsilon": 1.0, "neighbouring": "history", "model": "local"}),
    Implies("reports", (None,), "neighbouring", tuple(n for n in NEIGHBOURING if n != "history"),
            why="it counts the reports of neighbouring='history' only",
            counterexample={"epsilon": 1.0, "neighbouring": "replace", "reports": 3}),
    # with the first: 'person' only with a central 'replace' or 'add-remove' guarantee (the others are local only)
    Implies("unit", ("record",), "model", ("local",), why="a person's records are a unit of central releases",
            counterexample={"epsilon": 1.0, "unit": "person", "model": "local"}),
))
@dataclass(frozen=True)
class PrivacyGuarantee:
    r"""An :math:`(\varepsilon, \delta)`-DP guarantee under a neighbouring relation, local or central.

    Parameters
    ----------
    epsilon : float
        Finite and > 0.
    delta : float
        In ``[0, 1)``; 0 for pure DP.
    neighbouring : {"replace", "add-remove", "history", "stable", "attribute"}
    model : {"local", "central"}
    reports : int, optional
        For ``"history"``: the number of reports of one device the guarantee covers.
    unit : {"record", "person"}
        What a neighbour adds, removes or replaces (central model): one record, or all of one person's
        records (a release that bounds each person's contributions).
    """

    epsilon: float
    delta: float = 0.0
    neighbouring: str = "replace"
    model: str = "local"
    reports: int | None = None
    unit: str = "record"

    @property
    def pure(self) -> bool:
        """Whether this is pure :math:`\\varepsilon`-DP (``delta == 0``)."""
        return self.delta == 0.0

    def describe(self, assumptions: bool = True) -> str:
        """One line: ``"1-LDP (local: any two values of one user)"``, ``"1-differential privacy (central, ...)"``.

        A guarantee that rests on assumptions (a budget session's :class:`~dpdist.budget.Spent`, say) ends its line
        with them (``"; assuming: ..."``), unless ``assumptions=False``: the form for a line named within a sentence
        (a refusal's), as :meth:`dpdist.accounting.PrivacyLoss.describe` has it.  A plain guarantee assumes nothing."""
        budget = f"{self.epsilon:g}" if self.pure else f"({self.epsilon:g}, {self.delta:g})"
        if self.neighbouring == "history":
            return f"{budget}-LDP over {self.reports} report(s) (local: any two histories of values of one device)"
        if self.neighbouring == "stable":
            return f"{budget}-LDP over any number of reports (local: two values of one device, each unchanged)"
        if self.neighbouring == "attribute":
            return f"{budget}-LDP per attribute (local: two records of one user differing in one attribute)"
        if self.model == "local":
            return f"{budget}-LDP (local: any two values of one user)"
        if self.unit == "person":
            relation = ("replace one person's rows (by as many rows)" if self.neighbouring == "replace"
                        else "add or remove one person's rows")
            return f"{budget}-differential privacy per person (central, {relation})"
        relation = "replace one record" if self.neighbouring == "replace" else "add or remove one record"
        return f"{budget}-differential privacy (central, {relation})"

    def to_dict(self) -> dict:
        data = {"epsilon": self.epsilon, "delta": self.delta, "neighbouring": self.neighbouring, "model": self.model}
        if self.reports is not None:
            data["reports"] = self.reports
        if self.unit != "record":  # absent for a record (documents written before units read alike)
            data["unit"] = self.unit
        return data

    @classmethod
    def from_dict(cls, document: dict) -> "PrivacyGuarantee":
        """The guarantee whose :meth:`to_dict` is ``document``; a field missing, of another type or out of its range
        is refused by name (:class:`~dpdist.errors.MalformedDocumentError`).  Fields it does not know are left
        alone (a budget session's account, ``budget``, is the session's: the guarantee read is the release's own)."""
        return read_dataclass(cls, document)

    def covers(self, other: "PrivacyGuarantee", *, rtol: float = 1e-9) -> bool:
        """Whether this guarantee is at least as strong as ``other`` (same relation and model)."""
        return (
            self.neighbouring == other.neighbouring
            and self.model == other.model
            and self.reports == other.reports
            and self.unit == other.unit
            and self.epsilon <= other.epsilon * (1 + rtol)
            and self.delta <= other.delta * (1 + rtol)
        )


omitted_at_default(PrivacyGuarantee, "unit")


@dataclass(frozen=True, eq=False)
class AssumingGuarantee(PrivacyGuarantee):
    """A :class:`PrivacyGuarantee` that holds only under ``assumptions`` (a shuffled guarantee,
    :class:`dpdist.amplification.ShuffledGuarantee`, builds on it; :func:`sequential`, :func:`parallel` and
    :func:`split` return one when what they compose assumes anything).  ``describe()`` ends with them
    (``"; assuming: ..."``), and :class:`dpdist.accounting.PrivacyLoss` and a budget session that charge it keep them.
    Its ``to_dict`` holds the guarantee's own fields, as a plain guarantee's does: its class's ``from_dict`` reads it
    back with the class's default assumptions (a shuffled guarantee's), ``PrivacyGuarantee.from_dict`` as the plain
    guarantee, without them.  Its equality and hash are the plain guarantee's (its fields)."""

    assumptions: tuple[str, ...] = ()

    def describe(self, assumptions: bool = True) -> str:
        """The guarantee's line, then what it assumes (not with ``assumptions=False``, for a line within a sentence)."""
        return with_assumptions(super().describe(), self.assumptions if assumptions else ())

    def to_dict(self) -> dict:
        return PrivacyGuarantee.to_dict(self)  # the guarantee's own fields, as before it named its assumptions

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PrivacyGuarantee):
            return NotImplemented
        return _fields(self) == _fields(other)

    __hash__ = PrivacyGuarantee.__hash__


omitted_at_default(AssumingGuarantee, "assumptions")  # from_dict: its class's own assumptions when a document has none


def _fields(guarantee: PrivacyGuarantee) -> tuple:
    return (guarantee.epsilon, guarantee.delta, guarantee.neighbouring, guarantee.model, guarantee.reports,
            guarantee.unit)


def assumed(guarantees: Iterable[PrivacyGuarantee]) -> tuple[str, ...]:
    """What ``guarantees`` assume together (each one's ``assumptions``, if it has any: a shuffled guarantee, a budget
    session's :class:`~dpdist.budget.Spent`), in order, once each."""
    return tuple(dict.fromkeys(str(text) for g in guarantees for text in getattr(g, "assumptions", ())))


def _carrying(guarantee: PrivacyGuarantee, assumptions: tuple[str, ...]) -> PrivacyGuarantee:
    """``guarantee``, carrying ``assumptions`` when there are any (:class:`AssumingGuarantee`), else itself."""
    if not assumptions or tuple(getattr(guarantee, "assumptions", ())) == assumptions:
        return guarantee
    return AssumingGuarantee(guarantee.epsilon, guarantee.delta, guarantee.neighbouring, guarantee.model,
                             guarantee.reports, guarantee.unit, assumptions)


def with_assumptions(line: str, assumptions: Iterable[str], lead: str = "assuming") -> str:
    """``line`` (a statement's one line), ending with what it assumes: ``"<line>; assuming: <a>"`` for one assumption,
    ``"<line>; assuming: (1) <a>; (2) <b>"`` for several (numbered: an assumption may hold a semicolon itself);
    ``line`` itself when there are none.  The one form of every ``describe()`` of a statement with ``assumptions``
    (an accountant's statement, a loss, a budget session's account, a relayed campaign's central guarantee).  ``lead``
    names whose assumptions they are where the line follows another's (a charged result's: ``"its account
    assuming"``, the session's, not the release's)."""
    stated = [str(assumption) for assumption in assumptions]
    if not stated:
        return line
    if len(stated) == 1:
        return f"{line}; {lead}: {stated[0]}"
    return f"{line}; {lead}: " + "; ".join(f"({number}) {text}" for number, text in enumerate(stated, 1))


def local_guarantee(epsilon: float) -> PrivacyGuarantee:
    r"""Pure :math:`\varepsilon`-LDP: every output is at most :math:`e^\varepsilon` times likelier under one input than another."""
    if type(epsilon) is float:  # a protocol states its guarantee on every estimate: one checked value per epsilon
        return _local_guarantee_of(epsilon)
    return PrivacyGuarantee(epsilon, 0.0, "replace", "local")


@functools.lru_cache(maxsize=1024)
def _local_guarantee_of(epsilon: float) -> PrivacyGuarantee:
    """:func:`local_guarantee` of a float (the guarantee is frozen, so one value serves every call; a refused
    epsilon raises and is not cached)."""
    return PrivacyGuarantee(epsilon, 0.0, "replace", "local")


#: the guarantees a composition composes
_GUARANTEES = Items(InstanceOf(PrivacyGuarantee, "a PrivacyGuarantee"), "one or more PrivacyGuarantee values (a list)",
                    min_length=1)


def _same_kind(owner: str, guarantees: Sequence[PrivacyGuarantee]) -> tuple[str, str, str]:
    # at least one, each a PrivacyGuarantee: the callers' tables (_GUARANTEES)
    kinds = {(g.neighbouring, g.model, g.unit) for g in guarantees}
    if len(kinds) > 1:
        raise InvalidParameterError(
            f"{owner} composes guarantees of one neighbouring relation and model, of one unit. Got {sorted(kinds)}."
        )
    return kinds.pop()


@validate_params({"guarantees": _GUARANTEES}, owner="privacy.sequential")
def sequential(guarantees: Iterable[PrivacyGuarantee]) -> PrivacyGuarantee:
    r"""Basic composition of steps on the same data: :math:`(\sum \varepsilon_i, \sum \delta_i)`; an
    :class:`AssumingGuarantee` keeping what the guarantees assume when any does (a shuffled guarantee's relay)."""
    guarantees = list(guarantees)
    neighbouring, model, unit = _same_kind("privacy.sequential", guarantees)
    delta = math.fsum(g.delta for g in guarantees)
    if delta >= 1:
        raise InvalidPrivacyParameterError(f"privacy.sequential: the deltas add up to {delta!r} >= 1.")
    reports = sum(g.reports or 0 for g in guarantees) if neighbouring == "history" else None
    return _carrying(PrivacyGuarantee(math.fsum(g.epsilon for g in guarantees), delta, neighbouring, model, reports,
                                      unit), assumed(guarantees))


@validate_params({"guarantees": _GUARANTEES}, owner="privacy.parallel")
def parallel(guarantees: Iterable[PrivacyGuarantee]) -> PrivacyGuarantee:
    r"""Composition over disjoint parts of the data: :math:`(\max \varepsilon_i, \max \delta_i)`; an
    :class:`AssumingGuarantee` keeping what the guarantees assume when any does."""
    guarantees = list(guarantees)
    neighbouring, model, unit = _same_kind("privacy.parallel", guarantees)
    reports = max(g.reports or 0 for g in guarantees) if neighbouring == "history" else None
    return _carrying(PrivacyGuarantee(
        max(g.epsilon for g in guarantees), max(g.delta for g in guarantees), neighbouring, model, reports, unit
    ), assumed(guarantees))


@validate_params({"total": InstanceOf(PrivacyGuarantee, "a PrivacyGuarantee"),
                  "shares": OneOf((Integer(low=1), Vector(Interval(0.0, math.inf, closed="neither"))),
                                  "an int >= 1 (equal parts) or a non-empty list of weights, each a finite float > 0")},
                 owner="privacy.split")
def split(total: PrivacyGuarantee, shares: int | Sequence[float]) -> list[PrivacyGuarantee]:
    """Divide ``total`` among steps on the same data, in proportion to ``shares``.

    Parameters
    ----------
    total : PrivacyGuarantee
    shares : int or sequence of float
        ``k`` equal parts, or positive weights (normalized to sum to one).

    Returns
    -------
    list of PrivacyGuarantee
        One per share; their :func:`sequential` composition is ``total`` (up to
        floating-point rounding, never above it by more than 1e-12 relative).  Each keeps what ``total`` assumes,
        if anything (an :class:`AssumingGuarantee`).
    """
    weights = [1.0] * shares if isinstance(shares, int) else list(shares)  # the table's: k, or the weights as floats
    scale = math.fsum(weights)
    return [
        _carrying(PrivacyGuarantee(
            total.epsilon * w / scale, total.delta * w / scale, total.neighbouring, total.model, total.reports,
            total.unit
        ), assumed([total]))
        for w in weights
    ]


@validate_params({
    "guarantee": InstanceOf(PrivacyGuarantee, "a PrivacyGuarantee"),
    "neighbouring": Described(Options(("replace", "add-remove")), "'replace' or 'add-remove' (a central relation)"),
    "unit": Options(UNITS),
}, owner="privacy.convert")
def convert(guarantee: PrivacyGuarantee, neighbouring: str, unit: str = "record") -> PrivacyGuarantee:
    r"""``guarantee`` stated as a central guarantee under ``neighbouring`` (of ``unit``), or an error when none follows.

    * Same relation and unit, central model: unchanged.
    * Local ``"replace"`` (:math:`\varepsilon`-LDP, one report per user) or ``"history"`` (one device's
      reports over time) to central ``"replace"``: the same :math:`(\varepsilon, \delta)`.  Each user's
      reports depend on that user's record alone, through a randomizer that is
      :math:`\varepsilon`-indistinguishable on any two records, so the whole collection is
      :math:`\varepsilon`-DP for data sets differing in one record (Kasiviswanathan et al. 2011, sec. 3;
      the record is the user's value, or the history of values the guarantee covers).
    * Central ``"add-remove"`` to ``"replace"`` (of one unit): replacing is removing and adding, two
      add/remove steps, so :math:`(\varepsilon, \delta)` becomes
      :math:`(2\varepsilon, (1 + e^{\varepsilon})\delta)` (group privacy, Dwork & Roth 2014, Thm. 2.2, with the
      :math:`\delta` of chaining the two steps).
    * Per person to per record: a record added, removed or replaced changes one person's rows, which is that
      person's rows removed and added back, changed: two person steps under ``"add-remove"``
      (:math:`(2\varepsilon, (1 + e^{\varepsilon})\delta)`), one under ``"replace"`` (the person's rows replaced by
      as many; a record replaced keeps their number), so ``"replace"`` per person is ``"replace"`` per record
      unchanged.

    Refused: ``"replace"`` to ``"add-remove"`` (a release under replace neighbours may publish the number of
    records, which add/remove neighbours tell apart), per record to per person (a person with many records is
    protected by nothing a per-record guarantee says), local guarantees to ``"add-remove"`` (the number of
    reports tells one user's presence), and the local ``"stable"`` relation (it bounds nothing about a change of
    value: state the reports' loss with ``guarantee_over``).  What ``guarantee`` assumes, if anything, the result
    assumes too (:class:`AssumingGuarantee`).
    """
    return _carrying(_converted(guarantee, neighbouring, unit), assumed([guarantee]))


def _converted(guarantee: PrivacyGuarantee, neighbouring: str, unit: str) -> PrivacyGuarantee:
    epsilon, delta = guarantee.epsilon, guarantee.delta
    if guarantee.model == "central" and guarantee.neighbouring == neighbouring and guarantee.unit == unit:
        return guarantee
    if unit == "record" and guarantee.model == "central" and guarantee.unit == "person":
        if guarantee.neighbouring == "replace" and neighbouring == "replace":
            return PrivacyGuarantee(epsilon, delta, "replace", "central")
        if guarantee.neighbouring == "add-remove":
            return _doubled(guarantee, neighbouring, "record")
    if unit == guarantee.unit and neighbouring == "replace" and guarantee.model == "local" \
            and guarantee.neighbouring in ("replace", "history"):
        return PrivacyGuarantee(epsilon, delta, "replace", "central")
    if unit == guarantee.unit and neighbouring == "replace" and guarantee.model == "central" \
            and guarantee.neighbouring == "add-remove":
        return _doubled(guarantee, "replace", unit)
    if guarantee.neighbouring == "stable":
        why = "the 'stable' relation bounds nothing about a device whose value changes: convert guarantee_over(reports)"
    elif unit == "person" and guarantee.unit != "person":
        why = "a guarantee per record protects nothing of a person with many records: release with privacy_id"
    elif guarantee.model == "local":
        why = "the number of reports tells whether one user took part: local guarantees hold under 'replace' only"
    else:
        why = "a release under 'replace' neighbours may publish the number of records, which add/remove neighbours differ in"
    per = " per person" if unit == "person" else ""
    raise InvalidParameterError(
        f"privacy.convert: {guarantee.describe(assumptions=False)} states nothing under {neighbouring!r} neighbours{per}: {why}.")


def _doubled(guarantee: PrivacyGuarantee, neighbouring: str, unit: str) -> PrivacyGuarantee:
    r"""``guarantee`` over two of its steps: :math:`(2\varepsilon, (1 + e^\varepsilon)\delta)` (group privacy)."""
    epsilon, delta = guarantee.epsilon, guarantee.delta
    doubled_delta = (1.0 + math.exp(epsilon)) * delta if delta else 0.0
    if not 2 * epsilon < math.inf or doubled_delta >= 1:
        raise InvalidPrivacyParameterError(
            f"privacy.convert: {guarantee.describe(assumptions=False)} is no guarantee under {neighbouring!r} neighbours "
            f"(group privacy gives ({2 * epsilon!r}, {doubled_delta!r}))."
        )
    return PrivacyGuarantee(2.0 * epsilon, doubled_delta, neighbouring, "central", unit=unit)
