"""Argument types and checks shared by the sub-commands (``--seed``, ``--bounds``, ``--replicates``, ``--targets``),
and the option tables of every sub-command.

A sub-command states the rules of its options in a table (:func:`state_rules`): a value rule per option (the
constraint objects of :mod:`dpdist.constraints`) and the relations between options (:class:`Needs`,
:class:`Excludes`).  :func:`dpdist.cli._main.main` checks the table before the command runs, so a bad option is
refused in one line naming it, and ``tests/cli/test_arguments.py`` generates every rule's bad-input test from
the table, as the conformance suite does from protocols' ``_constraints``.
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field
from typing import Any

from .._validation import Constraint, Integer, ItemIds, OneOf, Options
from ..errors import InvalidParameterError
from ._env import check_environment


def seed_argument(text: str) -> int:
    """argparse type of ``--seed``: a non-negative int."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return seed


#: ``--replicates``: 0 (no CDF bands) or the bootstrap replicates, at least 20
REPLICATES = OneOf((Options((0,)), Integer(low=20)), "0 (no bands) or an int >= 20")


def parse_targets(text: str | None) -> tuple[int, ...] | None:
    """The value of a ``--targets 3,7`` option (the attacked items of a recovery, ``recover_frequencies``'s
    ``targets``): distinct item ids, refused in one line naming the option (None when not given)."""
    if text is None:
        return None
    try:
        return ItemIds().check(text)
    except ValueError:
        raise InvalidParameterError(
            f"The '--targets' option must be {ItemIds().describe()}. Got {text!r} instead."
        ) from None


def parse_bounds(text: str | None) -> tuple[float, float] | None:
    """The value of a ``--bounds LO,HI`` option: two finite numbers with LO < HI (None when not given)."""


    if text is None:
        return None
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        low = high = math.nan
    if not (math.isfinite(low) and math.isfinite(high) and low < high):
        raise InvalidParameterError(
            f"The '--bounds' option must be two finite numbers LO,HI with LO < HI. Got {text!r} instead."
        )
    return (low, high)


def add_missing_argument(parser: argparse.ArgumentParser, unit: str = "cell") -> None:
    """``--missing {refuse,drop}``: what an empty cell of the data is (dpdist._missing, the one policy everywhere)."""
    parser.add_argument(
        "--missing", choices=("refuse", "drop"), default="refuse",
        help=f"empty {unit}s (missing values): 'refuse' (the default: the command stops, with their count, before "
        f"anything is charged, drawn or sent) or 'drop' (those rows left out: their users send no report; the count "
        "is printed here, never sent)",
    )


def missing_cells(args: argparse.Namespace, count: int, what: str) -> list[str]:
    """The note on ``count`` missing cells of ``what`` (``--missing drop``: ``["N ... left out"]``, ``[]`` for none),
    or, with ``--missing refuse`` (the default), the refusal naming the option and the count."""
    if not count:
        return []
    if getattr(args, "missing", "refuse") == "refuse":
        raise InvalidParameterError(
            f"{what} has {count} missing value(s) (empty cells). Give '--missing drop' to leave those rows out (their "
            "users send no report; the count stays on this machine). Nothing was charged, drawn or sent."
        )
    return [f"{count} row(s) of {what} with a missing cell left out (--missing drop; the count is not sent)"]


# ---------------------------------------------------------------------- option tables
#: a TCP port to listen on (0: any free one)
PORT = Integer(low=0, high=65535)


@dataclass(frozen=True)
class Needs:
    """The option ``option``, given, needs ``other`` given too (``why``: what for)."""

    option: str
    other: str
    why: str = ""

    def refusal(self) -> str:
        return f"The {self.option!r} option needs {self.other!r}" + (f": {self.why}" if self.why else "") + "."

    def broken(self, given: set[str]) -> bool:
        return self.option in given and self.other not in given


@dataclass(frozen=True)
class Excludes:
    """The options ``option`` and ``other`` cannot be given together (``why``: why not)."""

    option: str
    other: str
    why: str = ""

    def refusal(self) -> str:
        return f"The {self.option!r} option cannot be used with {self.other!r}" + (f" ({self.why})" if self.why else "") + "."

    def broken(self, given: set[str]) -> bool:
        return self.option in given and self.other in given


@dataclass(frozen=True)
class OptionRules:
    """A sub-command's option table: a rule per option's value, the relations between options, and each option's
    attribute of the parsed arguments and default (an option is given when its value is another)."""

    values: dict[str, Constraint] = field(default_factory=dict)
    relations: tuple[Needs | Excludes, ...] = ()
    dests: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)


def state_rules(parser: argparse.ArgumentParser, values: dict[str, Constraint] | None = None,
                relations: tuple[Needs | Excludes, ...] = ()) -> None:
    """Add to ``parser``'s option table (after its options are added): ``values`` (option -> rule of its value, not
    checked when the option is absent) and ``relations``."""
    values = dict(values or {})
    known = parser._option_string_actions  # argparse's own index of option strings
    named = {*values, *(option for relation in relations for option in (relation.option, relation.other))}
    unknown = sorted(named - set(known))
    if unknown:
        raise ValueError(f"state_rules names options that {parser.prog!r} does not have: {unknown}")
    previous = parser.get_default("option_rules") or OptionRules()
    parser.set_defaults(option_rules=OptionRules(
        {**previous.values, **values}, (*previous.relations, *relations),
        {**previous.dests, **{option: known[option].dest for option in named}},
        {**previous.defaults, **{option: known[option].default for option in named}},
    ))


def _given(value: Any, default: Any) -> bool:
    """Whether an option's value was given: not its default (as stated, before any environment variable), None,
    False or an empty list."""
    return value is not None and value is not False and value != [] and value != default


def check_option_rules(args: argparse.Namespace) -> None:
    """Refuse, in one line naming the option, an option whose value breaks its rule or a relation broken (values are
    checked first, and reach the command as their rule returns them)."""
    check_environment(args)  # a DPDIST_<OPTION> its option refused is named as the variable, first
    rules: OptionRules | None = getattr(args, "option_rules", None)
    if rules is None:
        return
    for option, rule in rules.values.items():
        dest = rules.dests[option]
        value = getattr(args, dest)
        if value is None:
            continue
        try:
            setattr(args, dest, rule.check(value))
        except (ValueError, TypeError):
            raise rule.error(
                f"The {option!r} option must be {rule.describe()}. Got {rule.shown(value)} instead."
            ) from None
    given = {option for option, dest in rules.dests.items() if _given(getattr(args, dest), rules.defaults[option])}
    for relation in rules.relations:
        if relation.broken(given):
            raise InvalidParameterError(relation.refusal())
