"""A group-by per person, and one whose keys are private: :func:`dpdist.frame.group_release` with ``privacy_id`` or
``groups=None``.

When the keys are not public (``groups=None``) the groups shown are chosen privately first, from all the rows
(``selection``: truncated geometric thresholding, or a Gaussian thresholding of the keys' weights:
:mod:`dpdist.central._partitions`); then each person keeps the rows of at most ``max_groups`` of the groups shown, those
they hold most rows of (ties at random), and each group's release bounds each person's rows in it to the release's
``max_contributions``.  The guarantee composes the selection and the releases per person: a person touches at most
``max_groups`` groups, so ``(selection) + max_groups x (one group's release)``; with ``noise="gaussian"`` the groups'
statistic is one Gaussian vector (:mod:`dpdist.frame._gaussian_groups`), ``(selection) + (the vector's release)``.
Bounding after the selection is sequential composition: the second step's rows depend on the first's public output.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from .._rng import check_rng
from .._validation import Options, check_param
from ..errors import ContributionBoundWarning, DPDistError
from .._guarantee import PrivacyGuarantee
from ._gaussian_groups import gaussian_request, gaussian_results
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
    method: str = "truncated_geometric"  # how private keys are chosen (dpdist.central._partitions.SELECTIONS)
    delta: float | None = None  # with noise="gaussian": the statistic's delta

    @property
    def unit(self) -> str:
        return "record" if self.id_column is None else "person"


def check_person_group_by(owner: str, table: Table, privacy_id: Any, max_groups: Any, keys: list | None,
                          selection_epsilon: Any, selection_delta: Any, selection: Any = None,
                          delta: Any = None) -> PersonGroupBy:
    """The arguments refused by name before anything is read: ``privacy_id`` a column, ``max_groups`` an int >= 1 with
    it (each row in one group without it), the selection's budget and method exactly when the keys are private."""
    from ..central._partitions import SELECTIONS, check_selection, default_selection  # lazy: loads scipy (0.4-2 s)

    id_column = None
    if privacy_id is not None:  # a column's name: the table of frame.group_release
        (id_column,) = check_columns(owner, table, privacy_id, "privacy_id")  # max_groups with it: the table
    budget, method = None, "truncated_geometric"
    if keys is None:  # the selection's budget goes with private keys only: the table
        budget = check_selection(owner, selection_epsilon, selection_delta, max_groups or 1)
        method = default_selection(max_groups or 1) if selection is None else \
            check_param(owner, "selection", selection, Options(SELECTIONS))
    return PersonGroupBy(owner, id_column, int(max_groups or 1), budget, keys, method, delta)


def composed(plan: PersonGroupBy, planned: PrivacyGuarantee) -> PrivacyGuarantee:
    """The group-by's guarantee: the selection (with private keys), then ``max_groups`` groups' releases, per person."""
    from ..central._partitions import grouped_guarantee  # lazy: loads scipy (0.4-2 s)

    return grouped_guarantee(plan.owner, planned, plan.max_groups, plan.selection)


def person_group_release(plan: PersonGroupBy, table: Table, column: str, by: tuple[str, ...], function: Callable,
                         args: tuple, kwargs: dict, session: BudgetSession | None, keep_missing: bool,
                         planned_of: Callable, noise: str = "laplace") -> GroupedResult:
    """The group-by of :mod:`this module <dpdist.frame._private_groups>`, its checks done; ``planned_of(values, kwargs)``
    is what one group's release states (a run on no records)."""
    from ..central._contributions import person_codes  # lazy: loads scipy (0.4-2 s)

    values = table.values(column)
    rows = values.size
    ids = None if plan.id_column is None else table.values(plan.id_column)
    gaussian = None
    if noise == "gaussian":
        gaussian = gaussian_request(plan.owner, function, kwargs, plan.delta, ids is not None)
        planned = gaussian.guarantee(plan.unit)
        total = _with_selection(plan, planned)
    else:
        planned = planned_of(values, kwargs if ids is None else {**kwargs, "privacy_id": ids})  # a run on no records
        total = composed(plan, planned)
    persons = np.arange(rows) if ids is None else person_codes(plan.owner, ids, rows)  # a missing id: refused here
    if session is not None:
        session.refuse_seeded(kwargs.get("rng"), plan.owner)
        session.charge(total, f"group_release column {column!r} by {list(by)} ({_what(plan)})")
    present, _ = table.groups(by, keep_missing=keep_missing)
    keys = _sorted_keys(present) if plan.keys is None else [key for key in plan.keys]
    codes = _group_codes(present, keys, rows)
    streams = _streams(kwargs.pop("rng", None), len(keys), plan.owner)
    listed = np.flatnonzero(codes >= 0)  # rows of the groups considered (other keys are never released)
    chosen = _chosen(plan, persons[listed], codes[listed], len(keys), next(streams))
    inside = listed[np.isin(codes[listed], chosen)]  # bounded among the groups shown: a person's rows there count
    details = _details(plan, planned)
    if gaussian is not None:
        released, more = gaussian_results(plan.owner, gaussian, values, persons, codes, chosen, plan.max_groups,
                                          plan.unit, column, next(streams))
        return GroupedResult(by, {keys[code]: result for code, result in zip(chosen, released)}, total,
                             _covers(plan, total, by), table.engine, {**details, **more})
    kept = inside[_bounded(persons[inside], codes[inside], plan.max_groups, next(streams))]
    _warn_groups_dropped(plan, inside.size - kept.size)
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
    return GroupedResult(by, results, total, _covers(plan, total, by), table.engine, details)


def _with_selection(plan: PersonGroupBy, release: PrivacyGuarantee) -> PrivacyGuarantee:
    """The selection (private keys) then one release over all the groups, per person."""
    from ..central._partitions import selection_guarantee  # lazy: loads scipy (0.4-2 s)
    from .._guarantee import sequential

    return release if plan.selection is None else sequential([selection_guarantee(*plan.selection, plan.unit),
                                                              release])


def _warn_groups_dropped(plan: PersonGroupBy, dropped: int) -> None:
    """Tell the holder of the data how many rows ``max_groups`` left out (in the warning's ``count`` only: a statistic
    of the private data, in no result or message); the releases' own bounding warns of the rows they leave out."""
    if dropped and plan.id_column is not None:
        warnings.warn(ContributionBoundWarning(
            f"{plan.owner}: the rows of groups beyond max_groups={plan.max_groups} per person were left out (each "
            "person keeps the groups shown they hold most rows of, ties at random). How many is in this warning's "
            "'count', for you, the holder of the data: it is in no release.", dropped), stacklevel=6)  # the caller of group_release


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
    """The groups released: every listed one (public keys), or those the selection shows (private keys), chosen
    from all the rows of each person (the method bounds each person's keys itself)."""
    if plan.selection is None:
        return list(range(groups))
    from ..central._partitions import select_keys  # lazy: loads scipy (0.4-2 s)

    return [int(code) for code in select_keys(persons, codes, plan.method, *plan.selection, plan.max_groups, rng)]


def _what(plan: PersonGroupBy) -> str:
    keys = "private keys" if plan.keys is None else f"{len(plan.keys)} public keys"
    return f"{keys}, per {plan.unit}, at most {plan.max_groups} group(s) each"


def _details(plan: PersonGroupBy, planned: PrivacyGuarantee) -> dict:
    from ..central._partitions import selection_rule  # lazy: loads scipy (0.4-2 s)

    details: dict[str, Any] = {"unit": plan.unit, "max_groups": plan.max_groups, "each_group": planned.to_dict()}
    if plan.selection is not None:
        details["selection"] = {"epsilon": plan.selection[0], "delta": plan.selection[1], "method": plan.method,
                                "rule": selection_rule(plan.method)}
    return details


def _covers(plan: PersonGroupBy, total: PrivacyGuarantee, by: tuple[str, ...]) -> str:
    key = ", ".join(by)
    who = "person (privacy_id)" if plan.unit == "person" else "record"
    groups = (f"the groups shown were chosen privately ({plan.selection[0]:g}, {plan.selection[1]:g}: a group of few "
              "persons is likely left out, and which groups exist is covered)" if plan.selection is not None else
              "the groups are the public keys listed")
    return (f"{total.describe()} for the whole table, key ({key}) included: each {who} is in at most "
            f"{plan.max_groups} group(s) (those shown they hold most rows of), whose releases compose "
            f"sequentially; {groups}; the groups' numbers of rows are not released")
