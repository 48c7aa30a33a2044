"""Local DP on a DataFrame column: randomize it, aggregate a column of reports, estimate, group by a public key."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Mapping, Sequence, Union

import numpy as np

from .._rng import check_rng
from ..errors import (
    DPDistError,
    EmptyAggregateError,
    InvalidParameterError,
    MalformedReportError,
    OutOfDomainError,
)
from .._validation import Described, InstanceOf, Text, validate_params
from .._missing import missing_mask, missing_policy, real_array, with_policy_note
from ..local import LocalProtocol, from_config
from ..privacy import parallel
from ._grouped import GroupedResult
from ._groups import (BY, GROUPS, MISSING_KEYS, SESSION, _sorted_keys, check_groups, check_missing_key_rows,
                      group_generators)
from ._tables import Table, check_frame

if TYPE_CHECKING:
    from .._types import Seed
    from ..budget import BudgetSession
    from ..local import LocalProtocol

#: a local protocol or its config
ProtocolLike = Union["LocalProtocol", Mapping[str, Any]]

__all__ = ["privatize", "aggregate", "estimate", "group_estimate"]


#: ``protocol`` of the functions on a column of users' values or reports
PROTOCOL = InstanceOf((LocalProtocol, dict), "a local protocol (dpdist.local.make(...)) or its config")


def _protocol(protocol: ProtocolLike) -> LocalProtocol:
    """The protocol of a config (a dict), or the protocol itself (one or the other: the functions' tables)."""
    return from_config(protocol) if isinstance(protocol, dict) else protocol  # type: ignore[return-value]


def _user_values(owner: str, table: Table, column: str, protocol, missing: Any = "refuse") -> np.ndarray:
    """The column's values, one per user; a missing value (null, NaN) as ``missing`` says (:mod:`dpdist._missing`):
    refused with the count (the default), its row left out (that user sends no report), or counted as a value."""
    policy = missing_policy(owner, missing, numeric=protocol.tags.kind != "frequency")
    values = table.values(column)
    if values.dtype == object and values.size and not any(isinstance(value, str) for value in values[:1000]):
        values = real_array(values)  # (numbers with None in an object column)
    return policy.apply(values, owner, f"Column {column!r} given to {owner} (each row one user's value for "
                                       f"{protocol.display_name})")


def _named(column: str, call, *args, **kwargs):
    """``call(*args, **kwargs)``, its bad-input errors prefixed with the column they came from."""
    try:
        return call(*args, **kwargs)
    except (OutOfDomainError, InvalidParameterError, TypeError) as error:
        if not isinstance(error, DPDistError):
            raise
        raise type(error)(f"Column {column!r}: {error}") from None


@validate_params({"report_column": Described(Text(), "a non-empty column name"), "protocol": PROTOCOL, "session": SESSION},
                 owner="frame.privatize")
def privatize(frame: Any, column: str, protocol: ProtocolLike, *, rng: Seed = None, secure: bool = False,
              session: BudgetSession | None = None, report_column: str = "report", missing: Any = "refuse") -> Any:
    """Randomize every value of ``column`` (one user each): a frame of reports, in a uniformly random order.

    Parameters
    ----------
    frame : DataFrame
        A frame of any engine narwhals reads (pandas, Polars eager or lazy, PyArrow, DuckDB, PySpark, Dask,
        Ibis, ...); a lazy frame computes the column, which is collected into this process.
    column : str
        The users' values: items, labels of the protocol's label domain, or numbers in its bounds.
    protocol : LocalProtocol or dict
        The protocol (or its config).
    rng, secure
        As for ``protocol.privatize``: no seed means the CSPRNG.  The order of the reports is drawn
        from the same generator, so report ``i`` is not row ``i``'s (as every writer of reports does).
    session : BudgetSession, optional
        Charged the protocol's guarantee before any value is read.
    report_column : str
        Name of the output column.  Reports of one number per user (GRR, SW, ...) are integers;
        rows of several numbers (bit-packed OUE rows, OLH's seed and value, ...) are the bytes of
        the row in the protocol's ``report_format`` (:func:`aggregate` reads them back).
    missing : {"refuse", "drop"} or a value
        A missing value (null, NaN): refused with the count (the default,
        :class:`~dpdist.errors.MissingValuesError`), its row left out (``"drop"``: that user sends no
        report) or randomized as the value given, with a :class:`~dpdist.errors.MissingValuesWarning`
        counting them (:mod:`dpdist._missing`); checked before the session is charged.

    Returns
    -------
    DataFrame of the input's engine (lazy for a lazy input: a Polars LazyFrame, a DuckDB relation, a Spark
    DataFrame of the same session, ...), one column ``report_column``.
    """
    owner = "frame.privatize"
    table, column, _ = check_frame(owner, frame, column)
    protocol = _protocol(protocol)  # session: the table
    generator = check_rng(rng, secure=secure, owner=owner)
    label = f"privatize column {column!r} ({protocol.name})"
    if session is not None:
        session.refuse_seeded(rng, owner)
        session.check(protocol.guarantee, label)  # refused before the column is read
    values = _user_values(owner, table, column, protocol, missing)
    if session is not None:  # charged once the column is known to hold one value per user
        session.charge(protocol.guarantee, label)
    reports = _named(column, protocol.privatize, values, rng=generator)
    reports = reports[generator.permutation(len(reports))]
    return table.engine.frame({report_column: _report_cells(reports)})


def _report_cells(reports: np.ndarray):
    """One cell per report: the integer itself, or the row's bytes (a ``void`` view, no Python loop)."""
    if reports.ndim == 1 and reports.dtype.names is None:
        return reports
    if len(reports) == 0:
        return []
    rows = np.ascontiguousarray(reports).reshape(len(reports), -1).view(np.uint8)
    return rows.view(f"V{rows.shape[1]}").ravel().tolist()


def _reports_of(owner: str, table: Table, column: str, protocol) -> np.ndarray:
    """The reports of a column written by :func:`privatize` (integers, or each row's bytes), as an array."""
    cells = table.values(column)
    report_format = protocol.report_format
    if cells.dtype != object:
        if cells.dtype.kind == "f":
            raise MalformedReportError(f"Column {column!r} given to {owner} holds missing or fractional reports.")
        return cells
    if any(cell is None for cell in cells):
        raise MalformedReportError(f"Column {column!r} given to {owner} holds missing reports (null).")
    width = np.dtype(report_format.dtype).itemsize * int(np.prod(report_format.row_shape, dtype=np.int64))
    if not all(isinstance(cell, bytes) and len(cell) == width for cell in cells):
        raise MalformedReportError(
            f"Column {column!r} given to {owner} must hold {protocol.display_name} reports as frame.privatize writes "
            f"them: integers, or rows of {width} bytes."
        )
    packed = np.array(cells, dtype=f"V{width}")
    return np.frombuffer(packed.tobytes(), dtype=report_format.dtype).reshape((len(cells), *report_format.row_shape))


@validate_params({"protocol": PROTOCOL}, owner="frame.aggregate")
def aggregate(frame: Any, column: str, protocol: ProtocolLike, *, on_invalid: str = "count") -> Any:
    """The :class:`~dpdist.local.Aggregator` of a column of reports (written by :func:`privatize`).

    ``on_invalid="count"`` (the default) rejects and counts reports outside the protocol's
    range, keeping the valid ones; ``"raise"`` refuses the column.
    """
    owner = "frame.aggregate"
    table, column, _ = check_frame(owner, frame, column)
    protocol = _protocol(protocol)
    reports = _reports_of(owner, table, column, protocol)
    return _named(column, protocol.aggregator().add, reports, on_invalid=on_invalid)


@validate_params({"protocol": PROTOCOL, "session": SESSION}, owner="frame.estimate")
def estimate(frame: Any, column: str, protocol: ProtocolLike, *, rng: Seed = None,
             session: BudgetSession | None = None, missing: Any = "refuse", **options: Any) -> Any:
    """A one-shot local estimate of ``column``: each row one user's report, aggregated and estimated.

    ``protocol.estimate(protocol.simulate(values, rng), **options)`` (``simulate`` draws the
    aggregate exactly as randomizing every value would).  With ``session`` the protocol's
    guarantee is charged first and the estimate's ``guarantee`` carries the session's account.
    ``missing`` as in :func:`privatize`; the estimate's notes state it.
    """
    owner = "frame.estimate"
    table, column, _ = check_frame(owner, frame, column)
    protocol = _protocol(protocol)  # session: the table
    if session is not None:
        session.check(protocol.guarantee, f"estimate column {column!r} ({protocol.name})")
    values = _user_values(owner, table, column, protocol, missing)
    if session is not None:
        result = _named(column, session.estimate, protocol, values, rng=rng,
                        label=f"estimate column {column!r} ({protocol.name})", **options)
    else:
        result = _named(column, lambda: protocol.estimate(protocol.simulate(values, rng=rng), **options))
    return _stated(result, missing_policy(owner, missing, numeric=protocol.tags.kind != "frequency"))


def _stated(result: Any, policy) -> Any:
    """``result`` whose notes state ``policy`` (a result with a ``details`` field; as it is otherwise)."""
    if dataclasses.is_dataclass(result) and "details" in {item.name for item in dataclasses.fields(result)}:
        return with_policy_note(result, policy, "local")
    return result


@validate_params({"missing_keys": MISSING_KEYS, "protocol": PROTOCOL, "by": BY, "groups": GROUPS, "session": SESSION},
                 owner="frame.group_estimate")
def group_estimate(frame: Any, column: str, by: str | Sequence[str], protocol: ProtocolLike, *,
                   groups: Sequence[Any] | None = None, rng: Seed = None, session: BudgetSession | None = None,
                   missing: Any = "refuse", missing_keys: str = "refuse", **options: Any) -> GroupedResult:
    """One local estimate of ``column`` per group of ``by``: each user reports once, in the group of its key.

    Every user belongs to one group, so the groups compose in parallel: the whole is the
    protocol's guarantee, not its multiple.  In a local collection the key travels with the report
    in the clear (the collector files each report under it), so the key and each group's number of
    reports are public; the guarantee covers each user's value.  ``groups`` lists the keys to
    estimate (default: the keys present); a listed key with no row has no estimate (``None``).

    ``missing_keys`` says what a row whose key is missing (null, NaN) is: refused with the count
    (``"refuse"``, the default: :class:`~dpdist.errors.MissingValuesError`), left out (``"drop"``:
    a :class:`~dpdist.errors.MissingValuesWarning` and the result's ``dropped`` count them, public
    as every key is here), or a group of its own, whose key is ``None`` (``"group"``).  ``missing``
    is what a missing value of ``column`` is (as in :func:`privatize`).
    """
    owner = "frame.group_estimate"
    table, column, by = check_frame(owner, frame, column, by)
    protocol = _protocol(protocol)  # session: the table
    keys_policy = missing_keys
    listed = None if groups is None else check_groups(owner, groups, by, keys_policy)
    table.read((column, *by))  # one query: a key stays with its row's value (tables.Table.read)
    present, dropped = table.groups(by, keep_missing=keys_policy == "group")
    check_missing_key_rows(owner, table, by, keys_policy)
    dropped = 0 if keys_policy == "group" else dropped
    keys = _sorted_keys(present) if listed is None else listed
    if not keys:
        raise EmptyAggregateError(
            f"The 'frame' argument of {owner} has no row with a key in {list(by)} (the frame is empty, or every key "
            "is missing: a row with a missing key is in no group unless missing_keys='group'): there is no group to "
            "estimate."
        )
    label = f"group_estimate column {column!r} by {list(by)} ({protocol.name}, {len(keys)} groups)"
    if session is not None:
        session.refuse_seeded(rng, owner)
        session.check(parallel([protocol.guarantee] * len(keys)), label)  # refused before anything is drawn
    value_policy = missing_policy(owner, missing, numeric=protocol.tags.kind != "frequency")
    values, present = _group_values(owner, table, column, protocol, value_policy, present)
    if session is not None:
        session.charge_parallel([protocol.guarantee] * len(keys), label)
    generators = group_generators(rng, len(keys))
    results = {}
    for key, generator in zip(keys, generators):
        rows = present.get(key)
        results[key] = None if rows is None else _named(
            column, lambda rows=rows, generator=generator: _stated(
                protocol.estimate(protocol.simulate(values[rows], rng=generator), **options), value_policy))
    covers = (
        f"{protocol.guarantee.describe()} for each user's value; the key ({', '.join(by)}) is sent in the clear "
        "with each report, so it and each group's number of reports are public (a user's key is not protected)"
    )
    return GroupedResult(by, results, parallel([protocol.guarantee] * len(keys)), covers, table.engine,
                         dropped=int(dropped))


def _group_values(owner: str, table: Table, column: str, protocol, policy, present: dict) -> tuple[np.ndarray, dict]:
    """``(values, groups' rows)`` with the missing-value policy applied to the whole column at once, before anything
    is charged or drawn: refused, the rows without a value taken out of their groups, or each set to the value."""
    values = table.values(column)
    if values.dtype == object and values.size and not any(isinstance(value, str) for value in values[:1000]):
        values = real_array(values)  # (numbers with None in an object column)
    what = f"Column {column!r} given to {owner} (each row one user's value for {protocol.display_name})"
    if policy.how != "drop":
        return policy.apply(values, owner, what), present
    missing = missing_mask(values)
    policy.apply(np.arange(len(values)), owner, what, mask=missing)  # the warning with the count
    return values, {key: rows[~missing[rows]] for key, rows in present.items()}
