"""Records in, columns out: the forms a batch of multi-attribute records may take.

A batch of ``n`` records of ``k`` attributes may be

* a 2-D array (or list of rows) of shape ``(n, k)``, columns in the schema's order;
* a NumPy structured array, a dict of columns or a pandas DataFrame, columns by attribute name:
  exactly the schema's, so that a misspelt or unplanned attribute is refused, not silently left out
  (select a table's columns first: ``df[protocol.attribute_names]``).

:func:`record_columns` returns the ``k`` raw columns; each attribute's protocol
then checks its own column (items or labels, reals in bounds).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Sequence

import numpy as np

from ...errors import InvalidValueTypeError

__all__ = ["record_columns"]


def _by_name(table: Any, names: Sequence[str], available: Sequence[str], owner: str) -> list[np.ndarray]:
    missing = [name for name in names if name not in available]
    if missing:
        raise InvalidValueTypeError(
            f"The 'values' argument of {owner} must hold a column for every attribute {list(names)}. "
            f"Got no column {missing} (columns: {list(available)[:20]})."
        )
    unknown = [name for name in available if name not in names]
    if unknown:
        raise InvalidValueTypeError(
            f"The 'values' argument of {owner} must hold the columns of the schema's attributes {list(names)} only. "
            f"Got unknown column(s) {unknown[:20]!r}: add them to the schema, or select the schema's columns "
            f"(df[protocol.attribute_names])."
        )
    columns = []
    for name in names:
        column = table[name]
        column = column.to_numpy() if hasattr(column, "to_numpy") else np.asarray(column)
        if column.ndim != 1:
            raise InvalidValueTypeError(
                f"The 'values' argument of {owner}: column {name!r} must be 1-D. Got shape {column.shape} instead."
            )
        columns.append(column)
    lengths = {column.shape[0] for column in columns}
    if len(lengths) > 1:
        raise InvalidValueTypeError(
            f"The 'values' argument of {owner} must hold columns of one length. Got lengths {sorted(lengths)}."
        )
    return columns


def record_columns(values: Any, names: Sequence[str], owner: str) -> list[np.ndarray]:
    """The column of each attribute ``names[j]`` in a batch of records (see the module docstring).

    Raises
    ------
    InvalidValueTypeError
        Naming ``values``, when the batch is not records of these attributes.
    """
    k = len(names)
    if isinstance(values, Mapping):
        return _by_name(values, names, list(values.keys()), owner)
    if hasattr(values, "columns") and hasattr(values, "iloc"):  # a pandas DataFrame
        return _by_name(values, names, [str(column) for column in values.columns], owner)
    array = np.asarray(values)
    if array.dtype.names is not None:
        if array.ndim != 1:
            raise InvalidValueTypeError(
                f"The 'values' argument of {owner} must be a 1-D structured array of records. "
                f"Got shape {array.shape} instead."
            )
        return _by_name(array, names, list(array.dtype.names), owner)
    if array.ndim == 1 and array.size == 0:
        return [np.zeros(0) for _ in range(k)]
    if array.ndim != 2 or array.shape[1] != k:
        raise InvalidValueTypeError(
            f"The 'values' argument of {owner} must be records of the {k} attributes {list(names)}: a 2-D array "
            f"of shape (n, {k}), a structured array, a dict of columns or a DataFrame. Got an array of shape "
            f"{array.shape} and dtype {array.dtype} instead."
        )
    return [array[:, j] for j in range(k)]
