"""A group-by per person, and one whose keys are private: :func:`dpdist.frame.group_release` with ``privacy_id`` or
``groups=None``.

Each person keeps the rows of at most ``max_groups`` of their groups (a uniformly random choice), each group's release
bounds each person's rows in it to the release's ``max_contributions``, and, when the keys are not public
(``groups=None``), the groups shown are chosen privately (truncated geometric thresholding of their numbers of
distinct persons: :mod:`dpdist.central._partitions`).  The guarantee composes the selection and the releases per
person: a person touches at most ``max_groups`` groups, so ``(selection) + max_groups x (one group's release)``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .._rng import check_rng
from ..errors import ContributionBoundWarning, DPDistError
from .._guarantee import PrivacyGuarantee
from ._grouped import GroupedResult
from ._groups import _sorted_keys
from ._tables import Table, check_columns

if TYPE_CHECKING:
    from ..budget import BudgetSession

__all__ = ["PersonGroupBy", "person_group_release"]


@dataclass(frozen=True)
class PersonGroupBy:
    """The public arguments of a group-by per person or with private keys, checked."""

    owner: str
    id_column: str | None
    max_groups: int
    selection: tuple[float, float] | None  # (epsilon, delta) of choosing the groups; None: the keys are public
    keys: list | None  # the public keys, or None

    @property
    def unit(self) -> str:
        return "record" if self.id_column is None else "person"


def check_person_group_by(owner: str, table: Table, privacy_id: Any, max_groups: Any, keys: list | None,
                          selection_epsilon: Any, selection_delta: Any) -> PersonGroupBy:
    """The arguments refused by name before anything is read: ``privacy_id`` a column, ``max_groups`` an int >= 1 with
    it (each row in one group without it), the selection's budget exactly when the keys are private."""
    from ..central._partitions import check_selection  # lazy: loads scipy (0.4-2 s)

    id_column = None
    if privacy_id is not None:  # a column's name: the table of frame.group_release
        (id_column,) = check_columns(owner, table, privacy_id, "privacy_id")  # max_groups with it: the table
    selection = None
    if keys is None:  # the selection's budget goes with private keys only: the table
        selection = check_selection(owner, selection_epsilon, selection_delta, max_groups or 1)
    return PersonGroupBy(owner, id_column, int(max_groups or 1), selection, keys)


def composed(plan: PersonGroupBy, planned: PrivacyGuarantee) -> PrivacyGuarantee:
    """The group-by's guarantee: the selection (with private keys), then ``max_groups`` groups' releases, per person."""
    from ..central._partitions import grouped_guarantee  # lazy: loads scipy (0.4-2 s)

    return grouped_guarantee(plan.owner, planned, plan.max_groups, plan.selection)


def person_group_release(plan: PersonGroupBy, table: Table, column: str, by: tuple[str, ...], function: Callable,
                         args: tuple, kwargs: dict, session: BudgetSession | None, keep_missing: bool,
                         planned_of: Callable) -> GroupedResult:
    """The group-by of :mod:`this module <dpdist.frame._private_groups>`, its checks done; ``planned_of(values, kwargs)``
    is what one group's release states (a run on no records)."""
    from ..central._contributions import person_codes  # lazy: loads scipy (0.4-2 s)

    values = table.values(column)
    rows = values.size
    ids = None if plan.id_column is None else table.values(plan.id_column)
    release_kwargs = kwargs if ids is None else {**kwargs, "privacy_id": ids}
    planned = planned_of(values, release_kwargs)  # a run on no records: a replace release refused before any is read
    total = composed(plan, planned)
    persons = np.arange(rows) if ids is None else person_codes(plan.owner, ids, rows)  # a missing id: refused here
    if session is not None:
        session.charge(total, f"group_release column {column!r} by {list(by)} ({_what(plan)})")
    present, _ = table.groups(by, keep_missing=keep_missing)
    keys = _sorted_keys(present) if plan.keys is None else [key for key in plan.keys]
    codes = _group_codes(present, keys, rows)
    streams = _streams(kwargs.pop("rng", None), len(keys), plan.owner)
    listed = np.flatnonzero(codes >= 0)  # rows of the groups considered (other keys are never released)
    kept = listed[_bounded(persons[listed], codes[listed], plan.max_groups, next(streams))]
    _warn_groups_dropped(plan, listed.size - kept.size)
    chosen = _chosen(plan, persons[kept], codes[kept], len(keys), next(streams))
    results, order = {}, np.argsort(codes[kept], kind="stable")
    bounds = np.searchsorted(codes[kept][order], np.arange(len(keys) + 1))
    for code in chosen:
        rows_of = kept[order[bounds[code]: bounds[code + 1]]]
        unit = {} if ids is None else {"privacy_id": ids[rows_of]}
        results[keys[code]] = function(values[rows_of], *args, **{**kwargs, **unit, "rng": next(streams)})
    for result in results.values():
        if result.guarantee is not None and not result.guarantee.covers(planned):
            raise DPDistError(f"{plan.owner}: a group spent {result.guarantee.describe(assumptions=False)}, not the {planned.describe(assumptions=False)} "
                              "planned (a bug).")
    return GroupedResult(by, results, total, _covers(plan, total, by), table.engine, _details(plan, planned))


def _warn_groups_dropped(plan: PersonGroupBy, dropped: int) -> None:
    """Tell the holder of the data how many rows ``max_groups`` left out (in the warning's ``count`` only: a statistic
    of the private data, in no result or message); the releases' own bounding warns of the rows they leave out."""
    if dropped and plan.id_column is not None:
        warnings.warn(ContributionBoundWarning(
            f"{plan.owner}: the rows of groups beyond max_groups={plan.max_groups} per person were left out (a "
            "uniformly random choice of each person's groups). How many is in this warning's 'count', for you, the "
            "holder of the data: it is in no release.", dropped), stacklevel=6)  # the caller of group_release


def _group_codes(present: dict, keys: list, rows: int) -> np.ndarray:
    """Each row's index among ``keys`` (-1: a key not listed, or a missing key left out)."""
    codes = np.full(rows, -1, dtype=np.int64)
    for code, key in enumerate(keys):  # a loop over groups, not rows or persons
        positions = present.get(key)
        if positions is not None:
            codes[positions] = code
    return codes


def _streams(rng: Any, groups: int, owner: str):
    """The bounding's, the selection's and each group's generator: each a fresh CSPRNG stream without a seed; with
    one, independent children of a seed drawn from it."""
    if rng is None:
        while True:
            yield check_rng(None, owner=owner)
    root = check_rng(rng, owner=owner)
    for child in np.random.SeedSequence(root.integers(0, 2**63, size=4).tolist()).spawn(groups + 2):
        yield np.random.default_rng(child)


def _bounded(persons: np.ndarray, codes: np.ndarray, max_groups: int, rng) -> np.ndarray:
    from ..central._partitions import bounded_groups  # lazy: loads scipy (0.4-2 s)

    return bounded_groups(persons, codes, max_groups, rng)


def _chosen(plan: PersonGroupBy, persons: np.ndarray, codes: np.ndarray, groups: int, rng) -> list[int]:
    """The groups released: every listed one (public keys), or those the selection keeps (private keys)."""
    if plan.selection is None:
        return list(range(groups))
    from ..central._partitions import selected_groups  # lazy: loads scipy (0.4-2 s)

    return [int(code) for code in selected_groups(persons, codes, *plan.selection, plan.max_groups, rng)]


def _what(plan: PersonGroupBy) -> str:
    keys = "private keys" if plan.keys is None else f"{len(plan.keys)} public keys"
    return f"{keys}, per {plan.unit}, at most {plan.max_groups} group(s) each"


def _details(plan: PersonGroupBy, planned: PrivacyGuarantee) -> dict:
    from ..central._partitions import SELECTION_RULE  # lazy: loads scipy (0.4-2 s)

    details: dict[str, Any] = {"unit": plan.unit, "max_groups": plan.max_groups, "each_group": planned.to_dict()}
    if plan.selection is not None:
        details["selection"] = {"epsilon": plan.selection[0], "delta": plan.selection[1], "rule": SELECTION_RULE}
    return details


def _covers(plan: PersonGroupBy, total: PrivacyGuarantee, by: tuple[str, ...]) -> str:
    key = ", ".join(by)
    who = "person (privacy_id)" if plan.unit == "person" else "record"
    groups = (f"the groups shown were chosen privately ({plan.selection[0]:g}, {plan.selection[1]:g}: a group of few "
              "persons is likely left out, and which groups exist is covered)" if plan.selection is not None else
              "the groups are the public keys listed")
    return (f"{total.describe()} for the whole table, key ({key}) included: each {who} is in at most "
            f"{plan.max_groups} group(s) (a uniformly random choice of their groups), whose releases compose "
            f"sequentially; {groups}; the groups' numbers of rows are not released")
