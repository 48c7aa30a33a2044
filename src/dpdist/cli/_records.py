"""``--columns C1,C2,...``: the columns of a data file that hold the attributes of a multi-attribute protocol.

``dpdist privatize --columns`` (and the one-shot ``dpdist estimate --columns``) read one
record per row, each attribute of the protocol's schema from its column.
:func:`attribute_columns` maps the attributes to the columns the user named;
:class:`RecordValues` turns the aligned chunks of those columns into a batch of records,
with the single-column rules of :class:`~dpdist.cli._deploy.ColumnValues`: a label
outside its attribute's labels drops the row (counted), a number outside a numerical
attribute's bounds is clipped to the nearest bound (wrapped around the circle when the attribute's protocol
is circular, ``opm-circular``: as the protocol does with one value; counted) or refused with ``--no-clip``,
an item outside a categorical attribute's domain is refused.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np

from .._io._columns import iter_columns
from ..errors import InvalidParameterError, OutOfDomainError
from ._bounds import values_in_bounds

__all__ = ["attribute_columns", "RecordValues", "check_columns_option", "add_columns_argument"]


def add_columns_argument(parser, what: str) -> None:
    """The ``--columns C1,C2,...`` option of ``parser``; ``what`` says whose attributes the columns hold."""
    parser.add_argument(
        "--columns",
        default=None,
        metavar="C1,C2,...",
        help=f"{what}: the column of each attribute, in the schema's order (or the attributes' own names in any "
        "order); one record per row, a row with a missing cell or a label outside its attribute's labels "
        "skipped and counted",
    )


def check_columns_option(protocol, column, columns) -> None:
    """``--column`` for a one-attribute protocol, ``--columns`` for a multi-attribute one: exactly one, the right one."""

    multi = protocol.tags.kind == "multi"  # both: refused by the commands' option tables
    if multi and columns is None:
        raise InvalidParameterError(
            f"The protocol {protocol.name!r} takes a record of {len(protocol.attributes)} attributes "
            f"{protocol.attribute_names}: name their columns with '--columns C1,C2,...' (not '--column')."
        )
    if not multi and column is None and columns is None:
        raise InvalidParameterError(f"The protocol {protocol.name!r} takes one value per user: name its column with '--column'.")
    if not multi and columns is not None:
        raise InvalidParameterError(
            f"The '--columns' option needs a multi-attribute protocol (see docs/explanation/multi-attribute.md); "
            f"{protocol.name!r} takes one value per user: use '--column'."
        )


def attribute_columns(attributes, text: str) -> list[str]:
    """The column of each of ``attributes`` (a protocol's schema), from ``--columns`` (its value ``text``).

    The columns are given in the order of the config's attributes; when they are the
    attributes' own names they may come in any order.  A column named like another
    attribute than its own is refused (the records would silently swap attributes).
    """

    names = [attribute.name for attribute in attributes]
    columns = [part.strip() for part in text.split(",")]
    if len(columns) != len(names) or "" in columns or len(set(columns)) != len(columns):
        raise InvalidParameterError(
            f"The '--columns' option must name {len(names)} distinct columns, one per attribute {names} of the "
            f"config, comma-separated. Got {text!r} instead."
        )
    if set(columns) == set(names):
        return columns if columns == names else names
    swapped = [(column, names[j]) for j, column in enumerate(columns) if column in names and column != names[j]]
    if swapped:
        column, attribute = swapped[0]
        raise InvalidParameterError(
            f"The '--columns' option lists the columns in the order of the config's attributes {names}: the "
            f"column {column!r} stands for the attribute {attribute!r} there, not for {column!r}. Got {text!r}."
        )
    return columns


class RecordValues:
    """Turns aligned chunks of the columns of ``attributes`` into records (a structured array, a field per attribute).

    ``text`` (``--columns``) names the columns (:func:`attribute_columns`).  A numerical attribute whose protocol
    is circular (:func:`circular_attributes`) is wrapped around its bounds, the others clipped.  The counts of
    what was dropped, clipped or wrapped stay on this machine: :meth:`notes` words them.
    """

    def __init__(self, attributes, text: str, *, clip: bool = True, protocol=None):
        self.attributes, self.columns, self.clip = tuple(attributes), attribute_columns(attributes, text), clip
        self.circular = circular_attributes(self.attributes, protocol)
        self.unknown = self.clipped = self.wrapped = 0
        self.dtype = np.dtype([
            (attribute.name, np.int64 if attribute.categorical else np.float64) for attribute in self.attributes
        ])

    def text(self) -> list[bool]:
        """Which columns are read as text: those of attributes with labels."""
        return [attribute.labels is not None for attribute in self.attributes]

    def read(self, path) -> Iterator[tuple[np.ndarray, int]]:
        """``(records, n_skipped)`` per chunk of the data file ``path`` (rows with a missing cell skipped)."""

        for chunks, n_missing in iter_columns(path, self.columns, text=self.text()):
            yield self(chunks), n_missing

    def __call__(self, chunks: list[np.ndarray]) -> np.ndarray:
        keep = np.ones(chunks[0].size if chunks else 0, dtype=bool)
        converted = []
        for attribute, column, chunk, circular in zip(self.attributes, self.columns, chunks, self.circular):
            if attribute.labels is not None:
                items, known = _label_items(attribute.labels, chunk)
                keep &= known
                converted.append(items)
            elif attribute.categorical:
                converted.append(_items(chunk, attribute.size, column, attribute.name))
            else:
                converted.append(self._in_bounds(chunk, attribute.interval, column, attribute.name, circular))
        self.unknown += int(keep.size - np.count_nonzero(keep))
        records = np.empty(int(np.count_nonzero(keep)), dtype=self.dtype)
        for attribute, values in zip(self.attributes, converted):
            records[attribute.name] = values[keep]
        return records

    def _in_bounds(self, chunk, bounds, column: str, name: str, circular: bool) -> np.ndarray:
        values, moved = values_in_bounds(chunk, bounds, clip=self.clip, column=f"{column!r} (attribute {name!r})",
                                         where="its bounds", wrap=circular)
        if circular:
            self.wrapped += moved
        else:
            self.clipped += moved
        return values

    def notes(self) -> list[str]:
        """What was dropped, clipped or wrapped, one phrase each (empty when nothing was)."""
        notes = []
        if self.unknown:
            notes.append(f"{self.unknown} row(s) with a label outside its attribute's labels rejected")
        if self.clipped:
            notes.append(
                f"{self.clipped} value(s) outside their attribute's bounds clipped to the nearest bound "
                "(counted here, never sent; --no-clip refuses them)"
            )
        if self.wrapped:
            notes.append(
                f"{self.wrapped} value(s) outside their circular attribute's bounds wrapped around the circle "
                "(counted here, never sent; --no-clip refuses them)"
            )
        return notes


def circular_attributes(attributes, protocol=None) -> list[bool]:
    """Which of ``attributes`` take their bounds as one period of a circle: their protocol (``protocol``'s inner
    protocol, or the one the attribute names) is circular (``opm-circular``), so values outside are wrapped."""

    inners = getattr(protocol, "inner_protocols", None)
    if inners is not None and len(inners) == len(attributes):
        return [not attribute.categorical and bool(getattr(inner, "circular", False))
                for attribute, inner in zip(attributes, inners)]
    from ..local._registry import registered_class  # lazy: loads dpdist.local (every protocol), not needed by the other commands

    def named(attribute) -> bool:
        name = attribute.protocol
        if attribute.categorical or not isinstance(name, str):
            return False
        return bool(getattr(registered_class(name.strip().lower().replace("_", "-")), "circular", False))

    return [named(attribute) for attribute in attributes]


def _label_items(labels, chunk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The item of each label in ``chunk`` (0 where unknown) and which labels are known."""
    domain = np.array(labels, dtype=np.str_)
    order = np.argsort(domain, kind="stable")
    chunk = np.asarray(chunk).astype(np.str_)
    position = np.minimum(np.searchsorted(domain[order], chunk), domain.size - 1)
    known = domain[order][position] == chunk
    return np.where(known, order[position], 0).astype(np.int64), known


def _items(chunk: np.ndarray, size: int, column: str, name: str) -> np.ndarray:
    """The items ``0 .. size-1`` of a categorical attribute's column (integral floats of a CSV included)."""

    values = np.asarray(chunk)
    if np.issubdtype(values.dtype, np.integer):
        valid = (values >= 0) & (values < size)
    else:
        values = values.astype(np.float64)
        valid = np.isfinite(values) & (values == np.floor(values)) & (values >= 0) & (values < size)
    if not valid.all():
        raise OutOfDomainError(
            f"The column {column!r} (attribute {name!r}) must hold the items 0 .. {size - 1} of its domain. "
            f"Got {int((~valid).sum())} value(s) outside (not shown: they are data)."
        )
    return values.astype(np.int64)
