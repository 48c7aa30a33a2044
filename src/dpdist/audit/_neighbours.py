"""Neighbouring datasets for a central or whole-column audit: pairs the certificate compares, and their relation.

Central differential privacy is a promise about *neighbouring* datasets; which datasets are neighbours is part
of the promise (adding or removing one record, replacing one, adding or removing all of one person's records)
and the certificate states it.  :class:`Neighbouring` holds the pairs and the relation's name; the helpers build
the usual relations from backgrounds and the records (or a person's block of records) that differ, and
:func:`adversarial` chooses backgrounds the way an attacker would: a record whose value nobody else has (a
domain taken from the data then reveals it), an extreme value (bounds or a scale taken from the data), a
constant background (where one record moves every statistic most).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Sequence, cast

import numpy as np

from .._validation import Bounds, Described, InstanceOf, Integer, Items, OneOf, Options, Text, validate_params

__all__ = ["NeighbouringPair", "Neighbouring", "add_remove", "replace_one", "adversarial"]


@dataclass(frozen=True)
class NeighbouringPair:
    """Two neighbouring datasets and what differs between them (for the report)."""

    dataset: Any
    neighbour: Any
    differs: str


@validate_params({"relation": Described(Text(), "the relation in words (a non-empty str)"),
                  "pairs": Items(InstanceOf(NeighbouringPair, "a NeighbouringPair"), "at least one NeighbouringPair",
                                 min_length=1)})
@dataclass(frozen=True)
class Neighbouring:
    """The neighbouring datasets an audit compares and the relation they are neighbours under.

    ``relation`` is the promise the certificate is about, in words (e.g. ``"add or remove one record"``,
    ``"replace one record of a column of 16"``, ``"add or remove one person's records (up to 5)"``); each pair is
    compared in both directions.
    """

    relation: str
    pairs: tuple[NeighbouringPair, ...]

    def __post_init__(self):  # the pairs as the table returns them (a tuple)
        object.__setattr__(self, "pairs", tuple(self.pairs))


def _stacked(background: Any, extra: Any) -> np.ndarray:
    """``background`` with the records of ``extra`` appended (records are numbers, or rows of a 2-D array)."""
    base = np.asarray(background)
    more = np.asarray(extra)
    if base.ndim == 2 or more.ndim == 2:
        more = more.reshape(-1, base.shape[1] if base.ndim == 2 else more.shape[-1])
        return np.concatenate([base.reshape(-1, more.shape[1]), more])
    return np.concatenate([base.ravel(), more.ravel()])


def _shown_background(background: Any, label: str | None) -> str:
    values = np.asarray(background)
    return f"{label} ({len(values)} records)" if label else f"a background of {len(values)} records"


def add_remove(backgrounds: Sequence[Any], units: Sequence[Any], unit: str = "record",
               labels: Sequence[str] | None = None) -> Neighbouring:
    """Each background with one unit added, against the background alone.

    ``units`` are records (numbers, or rows), or blocks of one person's records with ``unit="person"`` (each a
    2-D array or a sequence of records): the relation is then user-level, "add or remove one person's records".
    """
    pairs = []
    for b, background in enumerate(backgrounds):
        for added in units:
            shown = np.asarray(added).tolist()
            where = _shown_background(background, labels[b] if labels else None)
            pairs.append(NeighbouringPair(_stacked(background, added), np.asarray(background),
                                          f"{where} with the {unit} {shown} added vs without it"))
    largest = max(len(np.asarray(u).reshape(-1, *np.asarray(backgrounds[0]).shape[1:])) for u in units)
    relation = "add or remove one record" if unit == "record" else \
        f"add or remove one {unit}'s records (up to {largest} records)"
    return Neighbouring(relation, tuple(pairs))


def replace_one(backgrounds: Sequence[Any], replacements: Sequence[tuple[Any, Any]], unit: str = "record",
                labels: Sequence[str] | None = None) -> Neighbouring:
    """Each background with one record ``a`` appended, against it with ``b`` instead (the size is public)."""
    pairs = []
    for b, background in enumerate(backgrounds):
        for first, second in replacements:
            where = _shown_background(background, labels[b] if labels else None)
            pairs.append(NeighbouringPair(_stacked(background, first), _stacked(background, second),
                                          f"{where} with the {unit} {np.asarray(first).tolist()} vs "
                                          f"{np.asarray(second).tolist()}"))
    size = len(np.asarray(backgrounds[0])) + 1
    return Neighbouring(f"replace one {unit} of a dataset of {size} (its size public)", tuple(pairs))


@validate_params({"domain": OneOf((Integer(low=2), Bounds()), "d items (an int >= 2) or real bounds (low, high), finite, "
                                   "low < high"),
                  "size": Described(Integer(low=4), "an int >= 4 (records per dataset)"),
                  "relation": Options(("replace-one", "add-remove"))}, owner="audit.adversarial")
def adversarial(domain: Any, size: int = 16, relation: str = "replace-one") -> Neighbouring:
    """Backgrounds and records an attacker would choose, for ``d`` items ``0..d-1`` or real bounds ``(low, high)``.

    Items: the record 0 against 1 in a background of the other items cycling (0 is then a value nobody else
    has: a domain from the data reveals it), and item 0 against ``d - 1`` in a background of every item.  Reals:
    the top against the bottom in a constant background at the bottom (an extreme value: bounds or a scale from
    the data move), and in a spread background; the bottom against the middle in a constant background at the
    middle.  ``relation`` is ``"replace-one"`` (datasets of ``size`` records) or ``"add-remove"`` (the first of
    each pair added to a background of ``size - 1``, and to the first background's first record alone: a count
    of 1 against 2, where a count plus textbook float noise has outputs near 0 whose float grid tells the two
    apart, Mironov 2012; at a count of ``size`` such outputs are too far in the noise's tail to be drawn).
    """
    rest = size - 1
    if isinstance(domain, numbers.Integral) and not isinstance(domain, bool) and int(domain) >= 2:
        d = int(domain)
        others = 1 + np.arange(rest) % max(1, min(d - 1, 3))
        spread = np.arange(rest) % d
        cases: list[tuple[np.ndarray, float, float, str]] = [(others, 0, 1, f"items 1..{int(others.max())} cycling (0 unique)"),
                 (spread, 0, d - 1, "every item cycling")]
    else:  # a pair (low, high): the table
        low, high = (float(bound) for bound in cast(tuple, domain))
        middle = 0.5 * (low + high)
        cases = [(np.full(rest, low), high, low, f"all at {low:g} (an extreme record)"),
                 (np.linspace(low, high, rest), high, low, "spread evenly"),
                 (np.full(rest, middle), low, middle, f"all at {middle:g}")]
    if relation == "add-remove":  # and the first record alone: a count of 1 against 2 (float noise's grid)
        cases.append((cases[0][0][:1], cases[0][1], cases[0][2], "a count near 0"))
        pairs = [pair for background, first, _, label in cases
                 for pair in add_remove([background], [first], labels=[label]).pairs]
        return Neighbouring("add or remove one record", tuple(pairs))
    pairs = [pair for background, first, second, label in cases
             for pair in replace_one([background], [(first, second)], labels=[label]).pairs]
    return Neighbouring(f"replace one record of a dataset of {size} (its size public)", tuple(pairs))
