"""Missing values, one policy everywhere: refused unless the caller says what to do with them.

A missing value (NaN, ``None``, an empty cell) is not a number, and dpdist does not make it one by
itself.  Every function that takes the private values (central releases, local ``privatize`` and
``simulate`` of the numerical and multi-attribute protocols, PriPL, :mod:`dpdist.frame`, ``dpdist
release``, ``privatize``, ``submit`` and ``estimate``) takes ``missing=``:

* ``"refuse"`` (the default): :class:`~dpdist.errors.MissingValuesError` names the argument and how many
  values are missing, before anything is spent, drawn or sent.  The count goes to the caller, who holds
  the data; nothing is released.  (This refusal depends on the data: a pipeline whose errors others
  see states its policy instead, so that what it does depends on its arguments only.)
* ``"drop"``: the records without a value are left out.  In a central release under add/remove
  neighbours this keeps the guarantee (leaving records out is 1-stable: a record added or removed
  changes the records kept by at most one), which then covers the records that were missing too.
  Under replace neighbours it is refused, whatever the data: ``n`` is public there, and leaving
  records out makes it ``n`` minus the missing, a count of the private data; and a record whose value
  goes missing is then a record removed, which a replace guarantee does not cover.  In the local model
  a user without a value sends no report: the collector sees who did not report, and the guarantee
  covers the values reported.
* a number (or, for labels, a value of the domain): each missing value is counted as that value, a map of
  each record on its own, so every neighbouring relation and ``n`` are unchanged.

With ``"drop"`` or a value, a :class:`~dpdist.errors.MissingValuesWarning` tells the caller how many;
the count is never in the result.  The result's notes state the policy (:meth:`MissingPolicy.note`),
whatever the data held, so the statement does not depend on whether any value was missing.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validation import Constraint, check_param
from .errors import InvalidParameterError, MissingValuesError, MissingValuesWarning

__all__ = ["MissingPolicy", "missing_policy", "missing_mask", "real_array", "with_policy_note", "records_missing",
           "MISSING_CHOICES"]

#: what ``missing=`` takes besides a value
MISSING_CHOICES = ("refuse", "drop")


@dataclass(frozen=True)
class MissingPolicy:
    """What to do with missing values: ``how`` is ``"refuse"``, ``"drop"`` or ``"value"`` (then ``value``)."""

    how: str
    value: Any = None
    option: str = "missing"
    records: bool = False  # records of several attributes: a record missing any value is the unit (no value to give)
    also: str = ""  # another choice the refusal names (a group-by's missing_keys='group')

    @property
    def refuses(self) -> bool:
        return self.how == "refuse"

    def check_relation(self, owner: str, neighbouring: str | None) -> None:
        """Refuse ``"drop"`` under replace neighbours (public arguments only: whatever the data hold)."""
        if self.how == "drop" and neighbouring == "replace":
            raise InvalidParameterError(
                f"The {self.option!r} option of {owner} cannot be 'drop' under replace neighbours: there n is public, "
                "and leaving out the records without a value would make it n minus their count (a statistic of the "
                "private data), while a record whose value goes missing would be a record removed, which the replace "
                f"guarantee does not cover. Give {self.option}=<a value> (each missing value counted as it), or use "
                "a release under add/remove neighbours.")

    def note(self, model: str = "central") -> str | None:
        """The sentence a result states about this policy (``None`` for ``"refuse"``: nothing was missing)."""
        if self.how == "refuse":
            return None
        if self.how == "drop" and model == "local":
            return (f"missing values ({self.option}='drop'): a user without a value sent no report, if there was any; "
                    "the collector sees who did not report, and the guarantee covers the values reported")
        if self.how == "drop":
            return (f"missing values ({self.option}='drop'): records without a value were left out before the release, "
                    "if there were any; under add/remove neighbours the guarantee covers them too, and how many is not "
                    "released")
        return (f"missing values ({self.option}={self.value!r}): a record without a value counted as {self.value!r}, "
                "if there was any; the guarantee covers it as any record of that value, and how many is not released")

    def apply(self, values: np.ndarray, owner: str, what: str, *, mask: np.ndarray | None = None,
              private: bool = False) -> np.ndarray:
        """``values`` (a 1-D array: floats, or Python objects with ``None``) with the policy applied: refused
        (:class:`MissingValuesError`), the missing left out, or set to :attr:`value`; ``mask`` marks the missing
        (default :func:`missing_mask`).  ``what`` names them in the messages (``"The 'x' argument of central.cdf"``,
        ``"Column 'age' of data.csv"``).  ``private``: the values are a curator's records (a central release), whose
        count of missing values the messages do not quote (an error or a warning may reach a log or an analyst:
        docs/explanation/central-release.md, "Refusals are public"); the error's and the warning's ``count`` hold it for the caller."""
        if not isinstance(values, np.ndarray) or values.ndim != 1:
            return values  # not an array of values: the caller's own checks refuse it by its schema
        missing = missing_mask(values) if mask is None else mask
        count = int(np.count_nonzero(missing))
        if not count:
            return values
        unit = "record(s) with a missing value" if self.records else "missing value(s)"
        how_many = (f"has {unit} (NaN, None or an empty cell; how many is in this error's 'count', not in its "
                    "message: a statistic of the private data)" if private else
                    f"has {count} {unit} (NaN, None or an empty cell) among {len(values)}")
        if self.how == "refuse":
            other = (self.also or "") if self.records else f", or {self.option}=<a value> to count each as that value"
            raise MissingValuesError(
                f"{what} {how_many}, and dpdist does not turn a missing value into a number by itself. Give "
                f"{self.option}='drop' to leave those records out{other} (the result states which). Nothing was "
                "released or sent.", count)
        done = "left out" if self.how == "drop" else f"counted as {self.value!r}"
        counted = "some missing values" if private else f"{count} missing value(s) of {len(values)}"
        warnings.warn(MissingValuesWarning(
            f"{what}: {counted} {done} ({self.option}={self._given!r}). "
            + ("How many is in this warning's 'count', for you, the holder of the data: it is in no release."
               if private else "The count is for you, the holder of the data: it is in no report and no release."),
            count), stacklevel=3)
        if self.how == "drop":
            return values[~missing]
        filled = values.copy()
        filled[missing] = self.value
        return filled

    @property
    def _given(self) -> Any:
        return self.value if self.how == "value" else self.how


@dataclass(frozen=True)
class MissingRule(Constraint):
    """What ``missing=`` may be: ``"refuse"``, ``"drop"``, or (not for ``records`` of several attributes, whose values
    have no one value in common) a finite number, or with ``numeric`` False any value but None and a non-finite
    number (a label of the domain)."""

    numeric: bool = True
    records: bool = False

    def check(self, value: Any) -> Any:
        if isinstance(value, str) and value in MISSING_CHOICES:
            return value
        number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_))
        if self.records or value is None or (number or self.numeric) and not (number and math.isfinite(float(value))):
            raise ValueError
        return value

    def describe(self) -> str:
        if self.records:
            return ("'refuse' (the default: records with a missing value are refused, counted) or 'drop' (those "
                    "records left out: their users send no report); records of several attributes take no one value "
                    "for a missing one")
        return ("'refuse' (the default: missing values are refused, counted), 'drop' (records without a value left out) "
                f"or {'a finite number' if self.numeric else 'a value'} (each missing value counted as it)")

    def invalid_examples(self) -> list:
        return [None, math.nan, *(["keep"] if self.numeric or self.records else [])]


def missing_policy(owner: str, missing: Any, *, option: str = "missing", numeric: bool = True,
                   records: bool = False) -> MissingPolicy:
    """``missing`` checked (:class:`MissingRule`, refused naming ``option``) as the policy it says."""
    if isinstance(missing, MissingPolicy):
        return missing
    missing = check_param(owner, option, missing, MissingRule(numeric, records))
    if isinstance(missing, str) and missing in MISSING_CHOICES:
        return MissingPolicy(missing, option=option, records=records)
    return MissingPolicy("value", float(missing) if numeric else missing, option)


def records_missing(columns: list, policy: MissingPolicy, owner: str, what: str) -> list:
    """The columns of a batch of records with ``policy`` applied to the records missing a value in any column (a
    record is one user: refused, or left out whole)."""
    if not columns:
        return columns
    masks = [missing_mask(array) for array in (real_array(column) for column in columns) if isinstance(array, np.ndarray)
             and array.ndim == 1]
    if not masks or any(mask.shape != masks[0].shape for mask in masks):
        return columns
    missing = np.logical_or.reduce(masks)
    rows = np.arange(missing.size)
    kept = policy.apply(rows, owner, what, mask=missing)  # refused, or the rows kept
    if kept.size == rows.size:
        return columns
    return [np.asarray(column)[kept] for column in columns]


def with_policy_note(result: Any, policy: MissingPolicy, model: str) -> Any:
    """``result`` (a result dataclass with a ``details`` dict) whose notes state ``policy`` (:meth:`MissingPolicy.note`;
    as it is for ``"refuse"``)."""
    note = policy.note(model)
    if note is None:
        return result
    details = dict(result.details)
    details["notes"] = [*details.get("notes", ()), note]
    return dataclasses.replace(result, details=details)


def real_array(values: Any) -> Any:
    """``values`` as a 1-D array where it is one of numbers (Python ``None`` as NaN), for :meth:`MissingPolicy.apply`;
    anything else as it is (its own checks refuse it, naming its schema)."""
    array = np.asarray(values) if not isinstance(values, np.ndarray) else values
    if array.ndim != 1:
        return values
    if array.dtype == object:
        try:
            return array.astype(np.float64)
        except OverflowError:  # an int past a float (10**309): kept, its None found here, the checks' to clip or name
            return array
        except (TypeError, ValueError):
            return values
    return array if array.dtype.kind in "fiub" else values


def missing_mask(values: np.ndarray) -> np.ndarray:
    """Which entries of a 1-D array are missing: NaN in a float array, ``None`` or NaN in an object array."""
    if values.dtype == object:
        return np.fromiter((value is None or (isinstance(value, float) and math.isnan(value)) for value in values),
                           dtype=bool, count=len(values))
    if values.dtype.kind in "fc":
        return np.isnan(values)
    return np.zeros(len(values), dtype=bool)
