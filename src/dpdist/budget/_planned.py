"""What a release will cost, from its public arguments alone (a dry run on no records), and a charged result's
statement attached to its guarantee."""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, Callable

import numpy as np

from .._missing import missing_policy, real_array
from ..central import quantiles, unbounded_quantile
from ..errors import InvalidParameterError
from .._guarantee import PrivacyGuarantee
from .._validation import CallableRule, validate_params
from ._statement import BudgetStatement, SessionGuarantee

__all__ = ["planned_guarantee", "with_statement"]


def with_statement(result: Any, statement: BudgetStatement) -> Any:
    """``result`` with its ``guarantee`` replaced by a :class:`SessionGuarantee` carrying ``statement``.

    Results that are not dataclasses with a ``guarantee`` field (a bare float) are returned unchanged.
    """
    is_record = dataclasses.is_dataclass(result) and not isinstance(result, type)
    if not is_record or "guarantee" not in {f.name for f in dataclasses.fields(result)}:
        return result
    record: Any = result  # a dataclass with a guarantee field (checked above)
    own = record.guarantee
    if own is None:
        return result
    fields = {f.name: getattr(own, f.name) for f in dataclasses.fields(PrivacyGuarantee)}
    return dataclasses.replace(record, guarantee=SessionGuarantee(**fields, budget=statement))


@validate_params({"function": CallableRule("a release function (one of dpdist.central, say)")})
def planned_guarantee(function: Callable, args: tuple, kwargs: dict) -> PrivacyGuarantee:
    """The guarantee ``function(*args, **kwargs)`` states, found by running it on no records.

    The data (the first argument) are replaced by an empty array of the same dtype (its schema,
    which is public), the generator by a fixed seed: every public argument is checked as the real
    call checks it, and no value of the data is read.
    """

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
    ids = bound.arguments.get("privacy_id")
    if ids is not None:  # a release per person: its ids go with its records
        bound.arguments["privacy_id"] = _no_records(ids)
    if _is_slice_quantiles(function, bound.arguments):  # its guarantee is under replace-one with n public
        bound.arguments[first] = np.zeros(len(args[0]))
        if ids is not None:  # per person, the rows kept are public there: each person's number of rows
            bound.arguments["privacy_id"] = ids
    for name, value in (("rng", 0), ("secure", False)):
        if name in signature.parameters:
            bound.arguments[name] = value
    dry = function(*bound.args, **bound.kwargs)
    guarantee = getattr(dry, "guarantee", None)
    if guarantee is None and function is unbounded_quantile:
        guarantee = PrivacyGuarantee(float(bound.arguments["epsilon"]), 0.0, "add-remove", "central",
                                     unit="record" if ids is None else "person")
    if not isinstance(guarantee, PrivacyGuarantee):
        raise InvalidParameterError(
            f"BudgetSession.release charges releases whose result states its guarantee; "
            f"{getattr(function, '__qualname__', function)!r} does not. Charge it with session.charge(guarantee)."
        )
    return guarantee


def refuse_missing_first(function: Callable, args: tuple, kwargs: dict, *, private: bool = True) -> None:
    """The refusal of missing values that ``function(*args, **kwargs)`` would raise (``missing="refuse"``, its
    default: :mod:`dpdist._missing`), raised before anything is charged: the run on no records cannot see them, and a
    charge for a call that then refuses would be budget spent for nothing.  Called once the budget has room (a
    release the budget refuses never reads the data)."""
    try:
        parameter = inspect.signature(function).parameters.get("missing")
    except (TypeError, ValueError):
        return
    if parameter is None or not args:
        return
    owner = getattr(function, "__qualname__", "the release")
    policy = missing_policy(owner, kwargs.get("missing", parameter.default), numeric=False)
    if policy.refuses:
        values = real_array(args[0])
        if isinstance(values, np.ndarray):
            policy.apply(values, owner, f"The first argument of {owner}", private=private)


def _is_slice_quantiles(function: Callable, arguments: dict) -> bool:
    """Whether the call is ``central.quantiles(..., method="slice")``, whose plan reads the public n."""
    return function is quantiles and arguments.get("method") == "slice"


def _no_records(data):
    """An empty array with the schema (dtype) of ``data``: arrays and Series are sliced, so no value is read."""
    if hasattr(data, "dtype") and hasattr(data, "__getitem__") and getattr(data, "ndim", 1) == 1:
        return np.asarray(data[:0])
    array = np.asarray(data)
    return array.reshape(-1)[:0] if array.ndim == 0 else array[:0]
