r"""Privacy units: central releases that protect people, not rows (contribution bounding).

A table often holds many rows per person (a customer's purchases, a patient's visits).  A release
that is :math:`\varepsilon`-DP per *row* protects a person with :math:`m` rows at :math:`m\varepsilon`
only.  Every central release takes ``privacy_id`` (one id per value: whose row it is) and
``max_contributions`` (:math:`k`, the rows kept per person); this module is what each of them calls
(through :func:`~dpdist.central._common.check_central_input`), so that the rule is one:

1. **Bounding.**  Each person with more than :math:`k` rows keeps :math:`k` of them, a uniformly random
   choice (every :math:`k`-subset equally likely), drawn from the release's generator: the CSPRNG
   unless a seed is given, never the rows' order (:func:`bounded_rows`: a uniform permutation of the
   rows of the persons over the bound, a stable sort by person, the first :math:`k` of each; no loop
   over persons).  How many rows were left out is a statistic of the data: it goes to the caller, who
   holds them, in a :class:`~dpdist.errors.ContributionBoundWarning` (its ``count``), never into a result.
2. **The release at** :math:`\varepsilon/k` **per row.**  After bounding, one person's rows are at most
   :math:`k` rows: adding or removing the person (or replacing their rows by as many) is at most
   :math:`k` row steps of the release's own relation.  The release runs its record-level mechanism at
   :math:`(\varepsilon_r, \delta_r) = (\varepsilon/k,\ \delta / S_k)`, :math:`S_k = \sum_{i<k}
   e^{i\varepsilon/k}`, and group privacy (Dwork & Roth 2014, Thm. 2.2, chained over :math:`k` steps:
   :math:`(k\varepsilon_r, \delta_r \sum_{i<k} e^{i\varepsilon_r})`) states :math:`(\varepsilon, \delta)`
   **per person**.  For the pure releases (Laplace and discrete Laplace counts, the exponential mechanisms,
   AboveThreshold) the record-level mechanism at :math:`\varepsilon/k` *is* the mechanism whose sensitivity
   is multiplied by :math:`k` (the same noise scale, the same utility temperature): :math:`k` rows move
   each count, rank or utility by :math:`k` times one row's amount.  For the Gaussian of the polynomial
   projection the chain over :math:`\delta` costs a little more noise than scaling its sensitivity
   (``docs/explanation/central-release.md``).
3. **The statement.**  The result's guarantee is :class:`~dpdist.privacy.PrivacyGuarantee` with
   ``unit="person"``: under ``"add-remove"`` one person's rows added or removed, and no exact count of
   persons or of rows kept is in the result (no ``n``); under ``"replace"`` one person's rows replaced by
   as many rows, so **each person's number of rows is public, not protected**, and so is ``n``, the rows
   kept, :math:`\sum_i \min(c_i, k)` (published as the result's ``n``; ``quantiles(method="slice")`` states
   no ``n``, but its plan is a function of it); the notes say so in capitals and the details
   under ``"public"``.  Its details hold ``"privacy_unit"`` (the bound, the per-row budget) and its notes
   say it.

**Which rows are one person**: equal ids of one kind (:mod:`dpdist._ids`: numbers by exact value, strings
and bytes exactly, nothing normalised; ids of two kinds refused), the same rule as on a cluster
(:mod:`dpdist.distributed._hashing`).

**A bound chosen for you** (``max_contributions="auto"`` or :class:`AutoBound`).  Under ``"add-remove"``
a share of the budget (default 10%) releases the bound as the exponential mechanism's quantile (default
0.9) of the persons' numbers of rows, among the public candidates :math:`\lfloor 2^{j/4}\rceil` up to
``largest`` (McSherry & Talwar 2007, drawn exactly; utility :math:`-|\#\{\text{persons with at most } k
\text{ rows}\} - qP|`, which one person moves by at most 1); the release gets the rest, and the guarantee
states their sequential composition.  Under ``"replace"`` the counts are public (neighbours have the same
multiset of them), so the bound is their exact quantile (:func:`public_bound`), no budget is spent on it
and the release gets all of it; the note says which.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._guarantee import PrivacyGuarantee, sequential
from .._ids import ID_KINDS, id_array, ids_missing, type_label
from .._validation import Implies, Integer, Interval, check_param, validate_params
from ..errors import ContributionBoundWarning, InvalidParameterError, InvalidValueTypeError, MissingValuesError

__all__ = ["AutoBound", "PrivacyUnit", "ContributionRequest", "contribution_request", "person_codes", "bounded_rows",
           "group_stated", "public_bound", "MAX_CONTRIBUTIONS"]

#: ``max_contributions``: an int in [1, 2**31 - 1]
MAX_CONTRIBUTIONS = Integer(low=1, high=2**31 - 1)


@validate_params({"quantile": Interval(0.0, 1.0, closed="neither"), "share": Interval(0.0, 1.0, closed="neither"),
                  "largest": MAX_CONTRIBUTIONS})
@dataclass(frozen=True)
class AutoBound:
    """``max_contributions`` chosen for you: the ``quantile`` of the persons' numbers of rows, on the integers
    ``1 .. largest``; privately for ``share`` of the budget under add-remove neighbours, exactly and for no budget
    under replace neighbours, where the counts are public (the module docstring)."""

    quantile: float = 0.9
    share: float = 0.1
    largest: int = 1024


def group_stated(guarantee: PrivacyGuarantee, k: int) -> PrivacyGuarantee:
    r"""A record-level guarantee of a release on rows bounded to ``k`` per person, stated per person:
    :math:`(k\varepsilon, \delta\sum_{i<k} e^{i\varepsilon})` (group privacy over ``k`` row steps)."""
    epsilon, delta = guarantee.epsilon, guarantee.delta
    chained = delta * _chain(k, epsilon) if delta else 0.0
    return PrivacyGuarantee(k * epsilon, min(chained, math.nextafter(1.0, 0.0)), guarantee.neighbouring, "central",
                            unit="person")


def _chain(k: int, epsilon: float) -> float:
    r""":math:`\sum_{i<k} e^{i\varepsilon} = (e^{k\varepsilon} - 1)/(e^\varepsilon - 1)`."""
    if k == 1:
        return 1.0
    if k * epsilon < 700:
        return math.expm1(k * epsilon) / math.expm1(epsilon)
    if (k - 1) * epsilon > 709:  # past the floats
        return math.inf
    return math.exp((k - 1) * epsilon) * math.expm1(-k * epsilon) / math.expm1(-epsilon)


@dataclass(frozen=True)
class PrivacyUnit:
    """The privacy unit of one release: each person's rows bounded to ``max_contributions``.

    Attributes
    ----------
    max_contributions : int
        :math:`k`, the rows kept per person (given, or chosen privately).
    chosen : AutoBound or None
        How :math:`k` was chosen privately (``None``: given by the caller, public).
    bound_epsilon : float
        The per-person epsilon spent choosing :math:`k` (0 when given, or chosen under replace neighbours from the
        persons' numbers of rows, public there).
    neighbouring : str or None
        The release's relation: under ``"replace"`` each person's number of rows is public, and the note says so.
    """

    max_contributions: int
    chosen: AutoBound | None = None
    bound_epsilon: float = 0.0
    neighbouring: str | None = None

    def record_budget(self, epsilon: float, delta: float | None) -> tuple[float, float | None]:
        r"""``(epsilon, delta)`` of the record-level mechanism: the budget left after the bound's choice, at
        :math:`\varepsilon/k` and :math:`\delta/S_k` (module docstring)."""
        k = self.max_contributions
        rest = epsilon - self.bound_epsilon
        record = rest / k
        if not delta:
            return record, delta
        record_delta = delta / _chain(k, record)
        if not record_delta > 0.0:  # e^{(k-1) epsilon/k} past the floats: no per-row delta is left to spend
            raise InvalidParameterError(
                f"The 'epsilon' argument ({epsilon!r} per person) with max_contributions={k} leaves a per-row delta of "
                f"delta / sum_(i<k) e^(i epsilon/k), below the smallest float: give a smaller epsilon or bound, or a "
                "release without delta.")
        return record, record_delta

    def stated(self, guarantee: PrivacyGuarantee) -> PrivacyGuarantee:
        """The record-level ``guarantee`` of the release on the bounded rows, stated per person (with the bound's
        choice composed before it when it was chosen privately)."""
        if self.chosen is not None and not self.bound_epsilon and guarantee.neighbouring != "replace":
            # the bound was read off the persons' numbers of rows, public under replace only: never state another relation
            raise ValueError(f"a bound chosen for no budget under replace neighbours stated under "
                             f"{guarantee.neighbouring!r}")
        person = group_stated(guarantee, self.max_contributions)
        if not self.bound_epsilon:
            return person
        choice = PrivacyGuarantee(self.bound_epsilon, 0.0, guarantee.neighbouring, "central", unit="person")
        return sequential([choice, person])

    def note(self) -> str:
        k = self.max_contributions
        if self.chosen is None:
            how = "given"
        elif self.bound_epsilon:
            how = (f"chosen privately (the {self.chosen.quantile:g}-quantile of the persons' numbers of rows, "
                   f"epsilon {self.bound_epsilon:.6g} of the budget)")
        else:
            how = (f"the {self.chosen.quantile:g}-quantile of the persons' numbers of rows, exactly, for no budget: "
                   "they are public under replace neighbours")
        replace = (" Under replace neighbours each person's NUMBER of rows is public, not protected, and so is n, the "
                   "rows kept (the result's n; a result that states no n, as quantiles(method='slice'), is still a "
                   "function of it): the guarantee covers the values of a person's rows, not how many rows they have."
                   if self.neighbouring == "replace" else "")
        return (f"privacy unit: a person (privacy_id); at most {k} row(s) each, a uniformly random choice of each "
                f"person's rows (the bound {how}); the release ran at epsilon/{k} per row, which is its sensitivity "
                f"times {k}: the guarantee is per person.{replace} How many rows were left out is not "
                + ("in the result, but follows from n and the persons' numbers of rows (public here)."
                   if self.neighbouring == "replace" else "released."))

    def details(self) -> dict[str, Any]:
        details: dict[str, Any] = {"unit": "person", "max_contributions": self.max_contributions,
                                   "selection": "uniformly random rows of each person (not their order)"}
        if self.chosen is not None:
            details["chosen"] = {"quantile": self.chosen.quantile, "share": self.chosen.share if self.bound_epsilon
                                 else 0.0, "largest": self.chosen.largest, "epsilon": self.bound_epsilon}
            if not self.bound_epsilon:
                details["chosen"]["from"] = "the persons' numbers of rows, public under replace neighbours"
        if self.neighbouring == "replace":
            details["public"] = "each person's number of rows (replace neighbours), and n, the rows kept"
        return details


@dataclass(frozen=True)
class ContributionRequest:
    """``privacy_id`` and ``max_contributions`` as given to a release, checked (public arguments only)."""

    owner: str
    privacy_id: Any
    bound: int | AutoBound

    def codes(self, rows: int) -> np.ndarray:
        """Each row's person as a dense int64 code (:func:`person_codes`)."""
        return person_codes(self.owner, self.privacy_id, rows)


@validate_params({}, relations=(
    Implies("max_contributions", (None,), "privacy_id", (None,),
            why="it bounds the rows of each person: it needs 'privacy_id', one id per value, whose row it is",
            counterexample={"max_contributions": 2}),
    Implies("max_contributions", None, "privacy_id", None,
            why="the rows kept per person: an int >= 1, or 'auto' to choose it privately",
            counterexample={"privacy_id": ["a", "b"]}),
), owner_argument="owner")
def contribution_request(owner: str, privacy_id: Any, max_contributions: Any) -> ContributionRequest | None:
    """``privacy_id`` and ``max_contributions`` checked together: both or neither (``None``: a per-record release);
    ``max_contributions`` an int >= 1, ``"auto"`` or an :class:`AutoBound`.  A refusal names the argument."""
    if privacy_id is None:  # and max_contributions None: the table's relations
        return None
    if isinstance(max_contributions, str) and max_contributions == "auto":
        bound: int | AutoBound = AutoBound()
    elif isinstance(max_contributions, AutoBound):
        bound = max_contributions
    else:
        bound = check_param(owner, "max_contributions", max_contributions, MAX_CONTRIBUTIONS)
    return ContributionRequest(owner, privacy_id, bound)


def person_codes(owner: str, privacy_id: Any, rows: int) -> np.ndarray:
    """Each row's person as a dense code ``0 .. persons - 1`` (int64): rows whose ids are equal values of one kind
    are one person (:mod:`dpdist._ids`: numbers by exact value, strings and bytes exactly, dates as instants).
    Ids of another length than the values, of two kinds (``1`` and ``"1"``), that do not compare, or of two
    dimensions are refused by name (public: the schema); a missing id (NaN, None, NaT) is refused as a missing
    value, its count in the error's ``count`` only (a statistic of the private data)."""
    ids = id_array(owner, privacy_id)
    if ids.ndim == 0:
        ids = ids.reshape(1)
    if ids.ndim != 1:
        raise InvalidValueTypeError(f"The 'privacy_id' argument of {owner} must be a 1-D array of ids. Got an array "
                                    f"of shape {ids.shape} instead.")
    if ids.size != rows:
        raise InvalidParameterError(
            f"The 'privacy_id' argument of {owner} must hold one id per value of the data. Got another number of ids "
            "than of values (how many of each is not printed: numbers of rows of the private data).")
    if ids.dtype.kind not in "iubfUSOMm":
        raise InvalidValueTypeError(f"The 'privacy_id' argument of {owner} must hold {ID_KINDS}. Got dtype "
                                    f"{ids.dtype} instead.")
    count = int(np.count_nonzero(ids_missing(ids)))
    if count:
        raise MissingValuesError(
            f"The 'privacy_id' argument of {owner} has missing ids (NaN, None or an empty cell; how many is in this "
            "error's 'count', not in its message: a statistic of the private data). A row without an id belongs to "
            "no known person: give it an id of its own, or leave the row out. Nothing was released.", count)
    try:
        _, codes = np.unique(ids, return_inverse=True)
    except TypeError:
        raise InvalidValueTypeError(f"The 'privacy_id' argument of {owner} must hold ids of one type (they are "
                                    f"compared and sorted): {ID_KINDS}. Got ids of {type_label(ids)} that do not "
                                    "compare.") from None
    return codes.reshape(-1).astype(np.int64, copy=False)


def bounded_rows(codes: np.ndarray, k: int, rng: np.random.Generator) -> np.ndarray:
    """The rows kept (ascending positions): every row of a person with at most ``k`` rows, and a uniformly random
    ``k`` of each other person's rows.

    Only the rows of persons over the bound are shuffled: a uniform permutation of them (``rng.permutation``:
    exact), then a stable sort by person keeps each person's rows in that random order, and the first ``k`` of each
    are kept; every ``k``-subset of a person's rows is equally likely, whatever the rows' order in the table.
    """
    codes = np.asarray(codes, dtype=np.int64)
    if codes.size == 0:
        return np.zeros(0, dtype=np.int64)
    counts = np.bincount(codes)
    heavy = counts[codes] > k
    if not heavy.any():
        return np.arange(codes.size, dtype=np.int64)
    rows = np.flatnonzero(heavy)
    shuffled = rows[rng.permutation(rows.size)]
    by_person = shuffled[np.argsort(codes[shuffled], kind="stable")]
    persons = codes[by_person]
    starts = np.flatnonzero(np.concatenate([[True], persons[1:] != persons[:-1]]))
    rank = np.arange(persons.size) - np.repeat(starts, np.diff(np.append(starts, persons.size)))
    kept = np.concatenate([np.flatnonzero(~heavy), by_person[rank < k]])
    kept.sort()
    return kept


def public_bound(codes: np.ndarray, bound: AutoBound) -> int:
    """The bound of ``bound`` under replace neighbours, where each person's number of rows is public: the smallest
    :math:`k` in ``1 .. bound.largest`` that at least ``bound.quantile`` of the persons hold at most :math:`k` rows
    of, computed exactly from the counts (no budget: a function of what the relation leaves public)."""
    counts = np.sort(np.bincount(codes)) if codes.size else np.zeros(0, dtype=np.int64)
    counts = counts[counts > 0]
    if not counts.size:
        return 1
    index = max(math.ceil(bound.quantile * counts.size) - 1, 0)
    return int(min(max(int(counts[index]), 1), bound.largest))


def warn_dropped(owner: str, dropped: int, k: int, neighbouring: str | None = None) -> None:
    """Tell the holder of the data how many rows bounding left out (the count in the warning only; under replace
    neighbours it follows from the result's ``n`` and the persons' numbers of rows, which that relation makes public)."""
    if dropped:
        where = ("it is in no release, though under replace neighbours the persons' numbers of rows are public and n "
                 "is the rows kept" if neighbouring == "replace" else "it is in no release")
        warnings.warn(ContributionBoundWarning(
            f"{owner}: rows beyond max_contributions={k} per person were left out (a uniformly random choice of each "
            f"person's rows). How many is in this warning's 'count', for you, the holder of the data: {where}.",
            dropped), stacklevel=4)
