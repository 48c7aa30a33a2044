"""One attribute's column of a batch of records, checked: items (categorical) or values rescaled to [0, 1]."""

from __future__ import annotations

import numpy as np

from ..._validation import check_integer_values, check_real_values, refused_values
from ...errors import OutOfDomainError
from ._schema import Attribute

__all__ = ["check_column"]


def _labels_to_items(attribute: Attribute, column: np.ndarray, owner: str) -> np.ndarray:
    labels = np.array(attribute.labels, dtype=np.str_)
    order = np.argsort(labels, kind="stable")
    position = np.minimum(np.searchsorted(labels[order], column), labels.size - 1)
    known = labels[order][position] == column
    if not known.all():
        raise refused_values(OutOfDomainError, f"The 'values' argument of {owner} must hold labels of attribute "
                             f"{attribute.name!r} ({attribute.domain_text()})", int((~known).sum()), "that are no label",
                             int(np.flatnonzero(~known)[0]))
    return order[position].astype(np.float64)


def check_column(attribute: Attribute, column, owner: str) -> np.ndarray:
    """``column`` as float64: items ``0 .. d-1`` (labels mapped to their items) or reals in the bounds on [0, 1].

    Raises the errors of :func:`dpdist._validation.check_integer_values` and
    :func:`~dpdist._validation.check_real_values` (naming ``values``) for values outside the attribute's domain.
    """
    column = np.asarray(column)
    if column.dtype == object:
        try:
            column = column.astype(np.float64)
        except (TypeError, ValueError):
            column = column.astype(np.str_)
    if attribute.categorical:
        if attribute.labels is not None and column.dtype.kind in "US":
            return _labels_to_items(attribute, column.astype(np.str_), owner)
        return check_integer_values(column, attribute.size, owner=owner).astype(np.float64)
    lo, hi = attribute.interval
    values = check_real_values(column, attribute.interval, owner=owner)
    return np.clip((values - lo) / (hi - lo), 0.0, 1.0)
