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
import difflib
import os
import re
from dataclasses import dataclass, field
from typing import Any

from .._validation import Constraint, Described, Integer, Interval, ItemIds, OneOf, Options, Text, Wrapper, refuses
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


#: what a release or a simulation run with ``--seed`` says of its randomness (``dpdist release``, ``dpdist estimate``)
SEEDED = "seeded generator: NOT for publication"


def randomness_of_release(seed: int | None) -> str:
    """What ``dpdist release`` says of its randomness: seeded (not for publication) or the OS CSPRNG."""
    return SEEDED if seed is not None else "randomness from the OS CSPRNG"


#: ``--replicates``: 0 (no CDF bands) or the bootstrap replicates, at least 20
REPLICATES = OneOf((Options((0,)), Integer(low=20)), "0 (no bands) or an int >= 20")


@dataclass(frozen=True)
class Numbers(Constraint):
    """Numbers separated by commas (an option's text, ``"0.1,0.5,0.9"``), as a tuple: ints with ``integer``, else
    floats; each satisfying ``item`` (when given), ``count`` of them (when given, else at least one), strictly
    increasing with ``increasing``; empty parts (a trailing comma) are ignored.  Described as ``what``."""

    what: str
    item: Constraint | None = None
    integer: bool = False
    count: int | None = None
    increasing: bool = False

    def check(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError
        parse = int if self.integer else float
        numbers = tuple(parse(part) for part in value.split(",") if part.strip())  # ValueError: not a number
        if self.item is not None:
            numbers = tuple(self.item.check(number) for number in numbers)
        if not numbers or (self.count is not None and len(numbers) != self.count):
            raise ValueError
        if self.increasing and any(later <= earlier for earlier, later in zip(numbers, numbers[1:])):
            raise ValueError
        return numbers

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        out: list = ["", "x", "1,x", 3]
        if self.increasing:
            out.append("2,1" if self.count in (None, 2) else ",".join(["1"] * self.count))
        if self.count is not None:
            out.append(",".join(["1"] * (self.count + 1)))
        if self.item is not None:
            out += [text for text in map(str, self.item.invalid_examples()) if refuses(self, text)]
        return out


@dataclass(frozen=True)
class IntegerText(Constraint):
    """An option's text of an int (``"12"``) in ``[low, high]`` (either end may be None), returned as the int."""

    low: int | None = None
    high: int | None = None

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or not re.fullmatch(r"\s*[-+]?\d+\s*", value):
            raise ValueError
        return Integer(self.low, self.high).check(int(value))

    def describe(self) -> str:
        return Integer(self.low, self.high).describe()

    def invalid_examples(self) -> list:
        return [text for text in ("x", "1.5", *(str(v) for v in Integer(self.low, self.high).invalid_examples()[3:]))]


@dataclass(frozen=True)
class NumberText(Constraint):
    """An option's text of a number (``"0.3"``) that ``inner`` accepts, returned as ``inner`` returns it (a float of an
    :class:`~dpdist._validation.Interval`); described as ``inner`` is."""

    inner: Constraint

    def check(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise ValueError
        return self.inner.check(float(value))  # ValueError: not a number

    def describe(self) -> str:
        return self.inner.describe()

    def invalid_examples(self) -> list:
        return ["x", *(str(example) for example in self.inner.invalid_examples() if isinstance(example, float))]


@dataclass(frozen=True)
class Each(Constraint):
    """Every value of a repeated option (``action="append"``: a list) satisfies ``inner``; with ``keys``, values
    ``KEY=VALUE`` of distinct keys (``--param b=0.2 --param b=0.3`` is refused: the last would silently win)."""

    inner: Constraint
    keys: bool = False

    def check(self, value: Any) -> Any:
        if not isinstance(value, list):
            raise ValueError
        checked = [self.inner.check(item) for item in value]
        if self.keys and _repeated_key(value) is not None:
            raise ValueError
        return checked

    def describe(self) -> str:
        return self.inner.describe() + (", each KEY once" if self.keys else "")

    def invalid_examples(self) -> list:
        return self.inner.invalid_examples() + ([["k=1", "k=2"]] if self.keys else [])

    def shown(self, value: Any) -> str:
        """The first value refused (the option is named once per value on the command line), or the KEY given twice
        (not its values: one may be a secret)."""
        refused = [item for item in value if refuses(self.inner, item)] if isinstance(value, list) else []
        if not refused and self.keys and isinstance(value, list) and _repeated_key(value) is not None:
            return f"the KEY {_repeated_key(value)!r} more than once"
        return self.inner.shown(refused[0]) if refused else self.inner.shown(value)


@dataclass(frozen=True)
class KeyValue(Constraint):
    """``KEY=VALUE`` (an option's text): a non-empty key, and a value that ``value`` accepts; returned as ``(key, the
    value as the rule returns it)``.  Described as ``what`` (``"COLUMN=LO,HI"``)."""

    value: Constraint
    what: str

    def check(self, value: Any) -> Any:
        key, sep, text = value.partition("=") if isinstance(value, str) else ("", "", "")
        if not (key and sep):
            raise ValueError
        return key, self.value.check(text)

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return ["no-equals-sign", "=value", 3, *[f"key={bad}" for bad in self.value.invalid_examples() if isinstance(bad, str)]]


def _repeated_key(values: list) -> str | None:
    """The first KEY of ``KEY=VALUE`` items given more than once, or None."""
    seen: set[str] = set()
    for item in values:
        key = str(item).partition("=")[0]
        if key in seen:
            return key
        seen.add(key)
    return None


@dataclass(frozen=True)
class Name(Constraint):
    """One of ``names``, in any case, with ``_`` for ``-`` (a protocol's name as ``dpdist list`` shows it); returned
    as written in ``names``.  A refusal suggests the name closest to the one given."""

    names: tuple[str, ...]

    def check(self, value: Any) -> Any:
        name = value.strip().lower().replace("_", "-") if isinstance(value, str) else None
        if name not in self.names:
            raise ValueError
        return name

    def describe(self) -> str:
        return f"one of {sorted(self.names)} (see 'dpdist list')"

    def invalid_examples(self) -> list:
        return ["not-a-protocol", 3]

    def shown(self, value: Any) -> str:
        close = difflib.get_close_matches(str(value).strip().lower(), self.names, n=1, cutoff=0.6)
        return f"{value!r:.100}" + (f" (did you mean {close[0]!r}?)" if close else "")


@dataclass(frozen=True)
class Secret(Wrapper):
    """A secret (a token) that ``inner`` accepts, shown by its length only."""

    def shown(self, value: Any) -> str:
        return f"{len(value)} characters" if isinstance(value, str) else type(value).__name__


@dataclass(frozen=True)
class OutputFile(Constraint):
    """The path of a file a command writes, as ``inner`` accepts it: not a directory, in a directory that exists.
    Checked before anything runs, so that a refusal names the option, not the temporary file the write goes through."""

    what: str = "the path of a file to write, in a directory that exists"
    inner: Constraint = Text()

    def check(self, value: Any) -> Any:
        value = self.inner.check(value)
        if value.endswith(("/", os.sep)) or os.path.isdir(value):
            raise ValueError
        if not os.path.isdir(os.path.dirname(os.path.abspath(value))):
            raise ValueError
        return value

    def describe(self) -> str:
        return self.what

    def invalid_examples(self) -> list:
        return [*self.inner.invalid_examples(), ".", os.path.join(os.sep, "no-such-dpdist-directory", "out.png")]


def token_rule(min_length: int = 1, source: str = "") -> Secret:
    """The rule of a token sent in an HTTP header (``Authorization: Bearer ...``): printable ASCII, as header values
    must be, at least ``min_length`` characters, shown by its length only; ``source`` names its environment variable."""
    what = "a token of printable ASCII characters" + (f", at least {min_length} of them" if min_length > 1 else "")
    return Secret(Described(Text(ascii=True, min_length=min_length), what + (f" (or {source})" if source else "")))


#: ``--bounds LO,HI``: the public bounds of a numeric column
BOUNDS = Numbers("two finite numbers LO,HI with LO < HI", item=Interval(), count=2, increasing=True)
#: ``--targets 3,7``: the attacked items of a recovery (``recover_frequencies``'s ``targets``)
TARGETS = ItemIds()
#: ``--plot PNG``: the image files matplotlib writes
PLOT_SUFFIXES = ("png", "svg", "pdf", "jpg", "jpeg", "eps", "ps", "tif", "tiff", "webp", "gif", "svgz", "pgf")
PLOT = OutputFile("the name of an image file ending in .png, .svg or .pdf (or "
                  + ", ".join("." + suffix for suffix in PLOT_SUFFIXES[3:]) + "), in a directory that exists",
                  Text(pattern=r"(?is).*[^/\\]\.(" + "|".join(PLOT_SUFFIXES) + ")"))
#: ``--out FILE``: a file a command writes
OUT = OutputFile()
#: ``KEY=VALUE``: an option of a repeated ``--param``/``--option``
KEY_VALUE = Described(Text(pattern=r"(?s)[^=]+=.*"), "KEY=VALUE")


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


def _the(name: str) -> str:
    """``The '--column' option``, or ``The 'FILE' argument`` (a positional argument, by its metavar)."""
    return f"The {name!r} option" if name.startswith("-") else f"The {name!r} argument"


def _source(option: str, value: Any, allowed: str) -> str:
    """Where a refused option value came from: ``The 'DPDIST_SERVER' environment variable (for --server)`` when it is
    that variable's (an option whose default is read from it: ``--server``, ``--issuer``) and ``allowed`` does not
    name the variable already, else :func:`_the`."""
    variable = "DPDIST_" + option.lstrip("-").upper().replace("-", "_")
    if option.startswith("--") and isinstance(value, str) and os.environ.get(variable) == value and variable not in allowed:
        return f"The {variable!r} environment variable (for {option})"
    return _the(option)


def named_actions(parser: argparse.ArgumentParser) -> dict[str, argparse.Action]:
    """The actions of ``parser`` by the names an option table uses: an option's strings (``--column``), a positional
    argument's metavar (``FILE``)."""
    positional = {action.metavar: action for action in parser._actions
                  if not action.option_strings and isinstance(action.metavar, str)}
    return {**parser._option_string_actions, **positional}  # argparse's own index of option strings


@dataclass(frozen=True)
class Needs:
    """The option ``option``, given, needs ``other`` given too (``why``: what for)."""

    option: str
    other: str
    why: str = ""

    def refusal(self, values: dict[str, Any] | None = None) -> str:
        return f"{_the(self.option)} needs {self.other!r}" + (f": {self.why}" if self.why else "") + "."

    def broken(self, given: set[str], values: dict[str, Any] | None = None) -> bool:
        return self.option in given and self.other not in given


@dataclass(frozen=True)
class Excludes:
    """The options ``option`` and ``other`` cannot be given together (``why``: why not)."""

    option: str
    other: str
    why: str = ""

    def refusal(self, values: dict[str, Any] | None = None) -> str:
        return f"{_the(self.option)} cannot be used with {self.other!r}" + (f" ({self.why})" if self.why else "") + "."

    def broken(self, given: set[str], values: dict[str, Any] | None = None) -> bool:
        return self.option in given and self.other in given


@dataclass(frozen=True)
class NeedsValue:
    """The option ``option``, given, needs ``other``'s value (given, or its default) to be one of ``values``,
    described as ``what`` (``why``: what for); with ``excluded``, to be none of them.  An ``other`` without a value
    (None) breaks nothing: whether it is needed is another relation's."""

    option: str
    other: str
    values: tuple
    what: str
    why: str = ""
    excluded: bool = False

    def refusal(self, values: dict[str, Any] | None = None) -> str:
        relation = f"cannot be used with {self.other!r} {self.what}" if self.excluded else \
            f"applies with {self.other!r} {self.what} only"
        got = "" if values is None else f" Got {self.other} {values.get(self.other)!r:.100}."
        return f"{_the(self.option)} {relation}" + (f" ({self.why})" if self.why else "") + "." + got

    def broken(self, given: set[str], values: dict[str, Any] | None = None) -> bool:
        value = (values or {}).get(self.other)
        return self.option in given and value is not None and (value in self.values) == self.excluded


@dataclass(frozen=True)
class ValueNeeds:
    """The option ``option`` at one of ``values`` (given, or its default), described as ``what``, needs ``other``
    given (``why``: what for)."""

    option: str
    values: tuple
    other: str
    what: str
    why: str = ""

    def refusal(self, values: dict[str, Any] | None = None) -> str:
        got = "" if values is None else f" Got {self.option} {values.get(self.option)!r:.100} without {self.other}."
        return (f"{_the(self.option)} set to {self.what} needs {self.other!r}" + (f": {self.why}" if self.why else "")
                + "." + got)

    def broken(self, given: set[str], values: dict[str, Any] | None = None) -> bool:
        return (values or {}).get(self.option) in self.values and self.other not in given


@dataclass(frozen=True)
class NeedsCount:
    """The option ``option``, given, needs the repeated option ``other`` given between ``low`` and ``high`` times
    (either end may be None; ``why``: what for)."""

    option: str
    other: str
    low: int | None = None
    high: int | None = None
    why: str = ""

    def _allowed(self) -> str:
        if self.high is None:
            return f"at least {self.low}"
        return f"at most {self.high}" if self.low is None else f"{self.low} to {self.high}"

    def refusal(self, values: dict[str, Any] | None = None) -> str:
        count = len((values or {}).get(self.other) or ())
        got = "" if values is None else f" Got {count} {self.other}."
        return (f"{_the(self.option)} needs {self.other!r} given {self._allowed()} time(s)"
                + (f": {self.why}" if self.why else "") + "." + got)

    def broken(self, given: set[str], values: dict[str, Any] | None = None) -> bool:
        count = len((values or {}).get(self.other) or ())
        return (self.option in given and self.other in given
                and not ((self.low is None or count >= self.low) and (self.high is None or count <= self.high)))


@dataclass(frozen=True)
class NeedsAny:
    """The option ``option``, given, needs one of ``others`` given too; with ``option`` None, the command always does
    (``why``: what for)."""

    others: tuple[str, ...]
    option: str | None = None
    why: str = ""

    def refusal(self, values: dict[str, Any] | None = None) -> str:
        *first, last = self.others
        names = (", ".join(map(repr, first)) + " or " if first else "") + repr(last)
        start = "The command needs" if self.option is None else f"{_the(self.option)} needs"
        return f"{start} {names}" + (f": {self.why}" if self.why else "") + "."

    def broken(self, given: set[str], values: dict[str, Any] | None = None) -> bool:
        return (self.option is None or self.option in given) and not any(other in given for other in self.others)


#: the relations an option table states between options
Relation = Needs | Excludes | NeedsValue | ValueNeeds | NeedsCount | NeedsAny


def _options_of(relation: Relation) -> tuple[str, ...]:
    if isinstance(relation, NeedsAny):
        return (*relation.others, *((relation.option,) if relation.option is not None else ()))
    return relation.option, relation.other


@dataclass(frozen=True)
class OptionRules:
    """A sub-command's option table: a rule per option's value, the relations between options, and each option's
    attribute of the parsed arguments and default (an option is given when its value is another)."""

    values: dict[str, Constraint] = field(default_factory=dict)
    relations: tuple[Relation, ...] = ()
    dests: dict[str, str] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)


def state_rules(parser: argparse.ArgumentParser, values: dict[str, Constraint] | None = None,
                relations: tuple[Relation, ...] = ()) -> None:
    """Add to ``parser``'s option table (after its options are added): ``values`` (option -> rule of its value, not
    checked when the option is absent) and ``relations``; a positional argument is named by its metavar (``FILE``)."""
    values = dict(values or {})
    known = named_actions(parser)
    named = {*values, *(option for relation in relations for option in _options_of(relation))}
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
    given = {option for option, dest in rules.dests.items() if _given(getattr(args, dest), rules.defaults[option])}
    for option, rule in rules.values.items():
        dest = rules.dests[option]
        value = getattr(args, dest)
        if value is None:
            continue
        try:
            setattr(args, dest, rule.check(value))
        except (ValueError, TypeError):
            raise rule.error(
                f"{_source(option, value, rule.describe())} must be {rule.describe()}. Got {rule.shown(value)} instead."
            ) from None
    values = {option: getattr(args, dest) for option, dest in rules.dests.items()}
    for relation in rules.relations:
        if relation.broken(given, values):
            raise InvalidParameterError(relation.refusal(values))
