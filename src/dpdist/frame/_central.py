"""Central DP on a DataFrame column: release it, or release it per group of a public key (parallel composition)."""

from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any, Callable, Sequence

import numpy as np

from ..errors import DPDistError, InvalidParameterError, InvalidValueTypeError
from .._guarantee import PrivacyGuarantee, parallel
from ._grouped import GroupedResult
from .._validation import Described, Implies, Integer, Interval, Optional, Options, Text, validate_params
from ._gaussian_groups import NOISES
from ._private_groups import check_person_group_by, person_group_release
from ._groups import BY, GROUPS, MISSING_KEYS, SESSION, check_groups, check_missing_key_rows, group_generators
from ._tables import Table, check_columns, check_frame

if TYPE_CHECKING:
    from ..budget import BudgetSession

__all__ = ["release", "group_release", "release_groups"]


def _central_releases() -> dict[Any, str]:
    """The functions ``frame.release`` and ``frame.group_release`` run, by their public name."""
    from .. import central  # lazy: loads scipy (0.4-2 s)

    return {
        central.cdf: "central.cdf", central.tree_cdf: "central.tree_cdf", central.quantiles: "central.quantiles",
        central.count: "central.count", central.sum: "central.sum", central.mean: "central.mean",
        central.variance: "central.variance", central.minimum: "central.minimum", central.maximum: "central.maximum",
        central.unbounded_quantile: "central.unbounded_quantile",
        central.histogram_queries: "central.histogram_queries", central.adaptive_quantiles: "central.adaptive_quantiles",
        central.polynomial_projection: "central.polynomial_projection",
        central.matching_pursuit: "central.matching_pursuit",
        vars(central.TreeHistogram)["release"].__func__: "central.TreeHistogram.release",
        vars(central.PolynomialMoments)["release"].__func__: "central.PolynomialMoments.release",
    }


def _release_function(owner: str, function, args: tuple, kwargs: dict) -> Callable:
    """``function`` if it is a ``dpdist.central`` release (or a ``functools.partial`` of one) and ``args`` and
    ``kwargs`` are its arguments after the data; else :class:`InvalidParameterError` naming what is wrong."""
    releases = _central_releases()
    inner = function.func if isinstance(function, functools.partial) else function
    name = releases.get(getattr(inner, "__func__", inner)) if callable(inner) else None
    if name is None:
        raise InvalidParameterError(
            f"The 'release' argument of {owner} must be a dpdist.central release: one of {sorted(set(releases.values()))} "
            f"(or a functools.partial of one). Got {getattr(function, '__qualname__', function)!r:.100} instead."
        )
    signature = inspect.signature(function)
    try:
        signature.bind(np.zeros(0), *args, **kwargs)
    except TypeError as error:
        parameters = [parameter for parameter in list(signature.parameters)[1:]]
        raise InvalidParameterError(
            f"The arguments of {owner} after the column are {name}'s after its data {parameters}: {error}."
        ) from None
    return function


def _run(column: str, function, values, args, kwargs, session, id_column: str | None = None):
    """One release of ``values``; its schema errors name the column (a string column is not numeric), or the id
    column ``id_column`` for an error of the ids."""
    try:
        if session is not None:
            return session.release(function, values, *args, label=f"release column {column!r}", **kwargs)
        return function(values, *args, **kwargs)
    except InvalidValueTypeError as error:
        named = id_column if id_column is not None and "'privacy_id' argument" in str(error) else column
        raise InvalidValueTypeError(f"Column {named!r}: {error}") from None


@validate_params({"session": SESSION}, owner="frame.release")
def release(frame: Any, column: str, function: Callable[..., Any], *args: Any, session: BudgetSession | None = None,
            **kwargs: Any) -> Any:
    """``function(values of column, *args, **kwargs)``: a central release of one column.

    >>> frame.release(df, "age", central.cdf, epsilon=1.0, bounds=(0, 100))   # doctest: +SKIP
    >>> frame.release(df, "amount", central.quantiles, epsilon=1.0, bounds=(0, 500),   # doctest: +SKIP
    ...               privacy_id="customer", max_contributions=5)

    Missing values (null, NaN) are what the release's ``missing=`` says (:mod:`dpdist._missing`):
    refused by default (before any charge), left out (``missing="drop"``, add/remove releases) or
    each counted as a value; how many there are is never released.  ``privacy_id`` may name a column
    (read with the values in one query): each person's rows are then bounded to ``max_contributions`` and
    the guarantee is per person (:mod:`dpdist.central._contributions`).  With ``session`` the release
    is charged first (:meth:`dpdist.budget.BudgetSession.release`).
    """
    owner = "frame.release"
    table, column, _ = check_frame(owner, frame, column)
    function = _release_function(owner, function, args, kwargs)  # session: the table
    id_column = kwargs.get("privacy_id") if isinstance(kwargs.get("privacy_id"), str) else None
    kwargs = _with_id_column(owner, table, column, kwargs)
    return _run(column, function, table.values(column), args, kwargs, session, id_column)


def _with_id_column(owner: str, table, column: str, kwargs: dict) -> dict:
    """``kwargs`` with a ``privacy_id`` that names a column replaced by that column's values, read in one query with
    ``column`` (a lazy engine need not return rows in one order twice: :meth:`~._tables.Table.read`)."""
    ids = kwargs.get("privacy_id")
    if not isinstance(ids, str):
        return kwargs
    (name,) = check_columns(owner, table, ids, "privacy_id")
    table.read((column, name))
    return {**kwargs, "privacy_id": table.values(name)}


@validate_params({"missing_keys": MISSING_KEYS, "by": BY, "groups": GROUPS,
                  "privacy_id": Optional(Described(Text(), "the name of the column of the persons' ids")),
                  "max_groups": Optional(Integer(low=1, high=2**31 - 1)), "session": SESSION,
                  "noise": Options(NOISES), "noise_delta": Optional(Interval(0.0, 1.0, closed="neither"))},
                 owner="frame.group_release", relations=(
                     Implies("max_groups", None, "privacy_id", None, why="the groups a person's rows are kept in (the "
                             "groups shown each person holds most rows of)", counterexample={"privacy_id": "person"}),
                     Implies("noise_delta", None, "noise", ("gaussian",), why="the Gaussian vector's delta",
                             counterexample={"noise": "gaussian"}),
                     Implies("noise", ("gaussian",), "noise_delta", None, why="only Gaussian noise spends a "
                             "noise_delta", counterexample={"noise_delta": 1e-6}),
                     Implies("privacy_id", None, "max_groups", None, why="it bounds the groups of each person; without "
                             "'privacy_id' each row is in one group", counterexample={"max_groups": 2}),
                     *(Implies(name, (None,), "groups", None, why="it chooses private keys; the keys listed in 'groups' "
                               "are public", counterexample={"groups": ["a"], name: 0.5})
                       for name in ("selection_epsilon", "selection_delta", "selection"))))
def group_release(frame: Any, column: str, by: str | Sequence[str], function: Callable[..., Any], *args: Any,
                  groups: Sequence[Any] | None, session: BudgetSession | None = None, missing_keys: str = "refuse",
                  privacy_id: str | None = None, max_groups: int | None = None, selection_epsilon: float | None = None,
                  selection_delta: float | None = None, selection: str | None = None, noise: str = "laplace",
                  noise_delta: float | None = None, **kwargs: Any) -> GroupedResult:
    """One central release of ``column`` per group of the key ``by``: public keys composed in parallel, or per person
    (``privacy_id``), or private keys chosen privately (``groups=None``).

    Parameters
    ----------
    frame : DataFrame
        A frame of any engine narwhals reads (pandas, Polars eager or lazy, PyArrow, DuckDB, PySpark, Dask,
        Ibis, ...); the column and the keys are collected into this process.
    column : str
        The numeric column to release.
    by : str or list of str
        The key column(s).
    function : callable
        A central release (``dpdist.central.cdf``, ``quantiles``, ``histogram_queries``, ...);
        ``*args`` and ``**kwargs`` go to every group's release (``rng``: each group draws its own
        stream from it).
    groups : list or None
        The public keys to release, known without looking at the data (values, or tuples of values
        for several ``by`` columns).  Every listed group is released, an empty one too (a release of
        no records), and rows of other keys are left out: which keys occur in the data is never
        released.  ``None``: the keys are private; the groups released are chosen privately
        (``selection_epsilon``, ``selection_delta``, ``selection``: :mod:`dpdist.central._partitions`), and only
        they are released.
    session : BudgetSession, optional
        Charged once, the parallel composition of the groups (their maximum), before any release.
    missing_keys : {"refuse", "drop", "group"}
        A row whose key is missing (null, NaN): refused (the default:
        :class:`~dpdist.errors.MissingValuesError`, how many in its ``count``, not its message), left out
        (``"drop"``, as the rows of keys not listed are; a :class:`~dpdist.errors.MissingValuesWarning`
        holds the count, which no result does: it is a statistic of the private data), or a group of its
        own, listed in ``groups`` as ``None`` (``"group"``).  ``missing=`` (a missing value of the
        column) goes to every group's release, as its other keyword arguments.
    privacy_id : str, optional
        The column of the persons' ids: each person's rows are kept in at most ``max_groups`` of their
        groups (a uniformly random choice; required with ``privacy_id``), each group's release bounds
        each person's rows in it to its ``max_contributions`` (required: a keyword argument of the
        release), and the guarantee is per person: ``max_groups`` groups' releases (and the selection)
        composed sequentially.  Releases under add/remove neighbours only.
    selection_epsilon, selection_delta : float
        With ``groups=None``: the budget of choosing the groups (added to the releases' in the guarantee).
    selection : {"truncated_geometric", "gaussian", "weighted_gaussian", "adaptive"}, optional
        With ``groups=None``: how the groups are chosen.  Default: truncated geometric thresholding of each group's
        number of distinct persons with ``max_groups=1`` (optimal there), else ``"adaptive"``, two rounds of the
        weighted Gaussian mechanism over all the keys (one Gaussian budget whatever the number of keys a person
        holds; ``docs/reference/benchmarks/central.md`` has the keys each shows).
    noise : {"laplace", "gaussian"}
        ``"laplace"`` (the default): each group's own release at ``epsilon``.  ``"gaussian"`` (``central.count``,
        ``sum``, ``mean``, ``histogram_queries``): one Gaussian vector over the groups shown, calibrated to the l2
        distance a person of ``max_groups`` groups and ``max_contributions`` rows in each moves it; ``epsilon`` and
        ``noise_delta`` are then the whole release's, per person, over all its groups
        (:mod:`dpdist.frame._gaussian_groups`).
    noise_delta : float, optional
        With ``noise="gaussian"``: the release's delta.

    Returns
    -------
    GroupedResult
        ``guarantee`` is the parallel composition; ``covers`` says what it covers: under
        add/remove neighbours (``central.cdf``, ``quantiles``, ``tree_cdf``) a record added or
        removed changes one group, key included, and the groups' sizes are not released; under
        replace neighbours (``histogram_queries``, ``adaptive_quantiles``, ...) the key is treated as
        public and each group's number of records is released with its result.
    """
    owner = "frame.group_release"
    table, column, by = check_frame(owner, frame, column, by)
    return release_groups(owner, table, column, by, function, args, groups=groups, session=session,
                          missing_keys=missing_keys, privacy_id=privacy_id, max_groups=max_groups,
                          selection_epsilon=selection_epsilon, selection_delta=selection_delta, selection=selection,
                          noise=noise, noise_delta=noise_delta, **kwargs)


def release_groups(owner: str, table: Table, column: str, by: tuple[str, ...], function: Callable[..., Any],
                   args: tuple, *, groups: Sequence[Any] | None, session: BudgetSession | None = None,
                   missing_keys: str = "refuse", privacy_id: str | None = None, max_groups: int | None = None,
                   selection_epsilon: float | None = None, selection_delta: float | None = None,
                   selection: str | None = None, noise: str = "laplace", noise_delta: float | None = None,
                   **kwargs: Any) -> GroupedResult:
    """The array core of :func:`group_release`: its release per group of a :class:`~._tables.Table` whose columns
    (``column``, ``by``, ``privacy_id``) are checked, read from a frame or given as arrays
    (:meth:`~._tables.Table.of_arrays`: a query stages its rows once and releases each statistic from them)."""
    from ..budget import planned_guarantee  # lazy: loads scipy (0.4-2 s)
    from ..central._partitions import refuse_replace_first  # lazy: loads scipy (0.4-2 s)

    function = _release_function(owner, function, args, {**kwargs, "rng": None})
    keys_policy = missing_keys  # checked by the parameter table
    keys = None if groups is None else check_groups(owner, groups, by, keys_policy)
    if keys is None or noise == "gaussian" or any(given is not None for given in (privacy_id, max_groups,
                                                                                  selection_epsilon, selection_delta)):
        plan = check_person_group_by(owner, table, privacy_id, max_groups, keys, selection_epsilon, selection_delta,
                                     selection, noise_delta)
        refuse_replace_first(owner, function, kwargs)  # before any data is read (its dry run could read them)
        table.read((column, *by, *((plan.id_column,) if plan.id_column else ())))  # one query, before any charge
        check_missing_key_rows(owner, table, by, keys_policy, private=True)
        return person_group_release(plan, table, column, by, function, args, kwargs, session, keys_policy == "group",
                                    lambda values, given: _planned(column, planned_guarantee, function, values, args,
                                                                   given), noise)
    table.read((column, *by))  # one query, before any charge: a key stays with its row's value (tables.Table.read)
    check_missing_key_rows(owner, table, by, keys_policy, private=True)
    return _public_group_release(owner, table, column, by, function, args, kwargs, keys, session, keys_policy == "group")


def _public_group_release(owner: str, table, column: str, by: tuple[str, ...], function, args: tuple, kwargs: dict,
                          keys: list, session, keep_missing: bool) -> GroupedResult:
    """One release per public key, each record in one group: composed in parallel (the checks done)."""
    from ..budget import planned_guarantee  # lazy: loads scipy (0.4-2 s)

    values = table.values(column)
    planned = _planned(column, planned_guarantee, function, values, args, kwargs)
    if session is not None:
        session.refuse_seeded(kwargs.get("rng"), owner)
        session.charge_parallel([planned] * len(keys), f"group_release column {column!r} by {list(by)} ({len(keys)} groups)")
    present, _ = table.groups(by, keep_missing=keep_missing)
    generators = group_generators(kwargs.pop("rng", None), len(keys))
    empty = values[:0]
    results = {}
    for key, generator in zip(keys, generators):
        rows = present.get(key)
        results[key] = _run(column, function, empty if rows is None else values[rows], args,
                            {**kwargs, "rng": generator}, None)
    guarantee = parallel([result.guarantee or planned for result in results.values()])
    if not guarantee.covers(planned) or not planned.covers(guarantee):
        raise DPDistError(f"{owner}: the groups spent {guarantee.describe(assumptions=False)}, not the {planned.describe(assumptions=False)} planned (a bug).")
    return GroupedResult(by, results, guarantee, _covers(guarantee, by), table.engine)


def _planned(column, planned_guarantee, function, values, args, kwargs) -> PrivacyGuarantee:
    try:
        return planned_guarantee(function, (values, *args), kwargs)
    except InvalidValueTypeError as error:
        raise InvalidValueTypeError(f"Column {column!r}: {error}") from None


def _covers(guarantee: PrivacyGuarantee, by: tuple[str, ...]) -> str:
    key = ", ".join(by)
    if guarantee.neighbouring == "add-remove":
        return (
            f"{guarantee.describe()} for the whole table, key ({key}) included: each record is in one group, so adding "
            "or removing it changes one group's release (parallel composition); the groups are the public keys "
            "listed, and their numbers of records are not released"
        )
    return (
        f"{guarantee.describe()} for the values within each group: the key ({key}) is treated as public and each "
        "group's number of records is released with its result (replace neighbours keep n public). If the key is "
        "private, use a release under add/remove neighbours (a replaced record may move between two groups)"
    )
