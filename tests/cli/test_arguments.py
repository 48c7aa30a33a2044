"""The option tables of the sub-commands (``dpdist.cli._arguments.state_rules``) generate their bad-input tests.

Every sub-command that states rules for its options is found in the whole ``dpdist`` parser; every value rule's
``invalid_examples`` that the option's argparse type reads is passed on a command line and must be refused by
``main`` before the command runs, in one line naming the option, the value and what is allowed (exit status 2);
every relation (an option that needs another, two that exclude each other, one that needs another's value or is
refused with it, a value that needs another option, one that needs a repeated option a number of times, one that needs
any of several) is broken on a command line and must be refused in its own words.  The placeholders for the other arguments are never read: the table is checked first.
"""

from __future__ import annotations

import argparse

import pytest

from cli_support import parsers_built_once  # noqa: F401  (a fixture, used by name)
from dpdist.cli._arguments import Excludes, Needs, NeedsAny, NeedsCount, NeedsValue, OptionRules, ValueNeeds, named_actions
from dpdist.cli._main import build_parser, main

SAMPLES = ("1", "2", "200", "1000", "0.1", "x", "0,1", "a=b", "a=0,1", "a:b", "{}", "https://example.org", "out.png", __file__)


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            seen = set()
            for name, sub in action.choices.items():
                if id(sub) not in seen:
                    seen.add(id(sub))
                    yield from _leaves(sub, (*path, name))
    if path:
        yield path, parser


def _converted(action: argparse.Action, text: str):
    value = action.type(text) if callable(action.type) else text
    if action.choices is not None and value not in action.choices:
        raise ValueError(text)
    repeated = isinstance(action, argparse._AppendAction) or action.nargs in ("+", "*")
    return [value] if repeated else value  # a repeated option, a positional argument of several values: a list


def _accepted(rules: OptionRules, option: str, value) -> bool:
    rule = rules.values.get(option)
    if rule is None:
        return True
    try:
        rule.check(value)
    except (ValueError, TypeError):
        return False
    return True


def _rule_values(rule) -> list[str]:
    """The values a rule lists (Options, also inside Described, Optional or OneOf)."""
    for name in ("inner",):
        if hasattr(rule, name):
            return _rule_values(getattr(rule, name))
    if hasattr(rule, "rules"):
        return [text for inner in rule.rules for text in _rule_values(inner)]
    return [str(value) for value in (*getattr(rule, "values", ()), *getattr(rule, "names", ()))]


def _sample(parser, rules: OptionRules, option: str, among=None, outside=()) -> list[str]:
    """The option on a command line with a value its type and its rule accept, other than its default (so that it
    is given); a flag alone.  ``among``: the value must be one of these; ``outside``: none of these."""
    action = named_actions(parser)[option]
    if action.nargs == 0:
        return [option]
    listed = [*map(str, action.choices or ()), *_rule_values(rules.values.get(option))]
    for text in (*map(str, among or ()), *listed, *SAMPLES):
        try:
            value = _converted(action, text)
        except (ValueError, TypeError, argparse.ArgumentTypeError):
            continue
        if not _accepted(rules, option, value) or value == action.default:
            continue
        checked = rules.values[option].check(value) if option in rules.values else value
        if (among is None or checked in among) and checked not in outside:
            return [f"{option}={text}"] if action.option_strings else [text]
    raise AssertionError(f"no sample value for {option}")


def _placeholders(parser, given: set[str] = frozenset(), chosen: dict | None = None) -> list[str]:
    """The required arguments, with values argparse reads and their rules accept (the command never runs), and one
    option of each required group of which none is ``given``; ``chosen``: the words of positional arguments (by
    metavar), given or not."""
    chosen = chosen or {}
    out: list[str] = []
    rules = parser.get_default("option_rules") or OptionRules()
    for group in parser._mutually_exclusive_groups:
        options = [action.option_strings[-1] for action in group._group_actions]
        if group.required and not given & set(options):
            out += _sample(parser, rules, options[0])
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if not action.option_strings and action.metavar in chosen:
            out += chosen[action.metavar]
        elif not action.option_strings and action.metavar in rules.values and action.nargs not in ("?", "*"):
            out += _sample(parser, rules, action.metavar)
        elif not action.option_strings and action.nargs not in ("?", "*"):
            out += [str(next(iter(action.choices))) if action.choices else "x"]
        elif action.option_strings and action.required and not given & set(action.option_strings):
            out += _sample(parser, rules, action.option_strings[-1])  # a given one is the test's (given once)
    return out


TABLES = [(path, parser, parser.get_default("option_rules")) for path, parser in _leaves(build_parser())
          if parser.get_default("option_rules") is not None]
VALUE_CASES, RELATION_CASES, DEFAULT_CASES = [], [], []
for _path, _parser, _rules in TABLES:
    for _option, _rule in _rules.values.items():
        _action = named_actions(_parser)[_option]
        if _action.default is not None:
            DEFAULT_CASES.append(pytest.param(_parser, _rules, _option, id=f"{' '.join(_path)} {_option}"))
        for _example in _rule.invalid_examples():
            if not isinstance(_example, (str, int, float)):
                continue
            try:
                _value = _converted(_action, str(_example))
            except (ValueError, TypeError, argparse.ArgumentTypeError):
                continue  # argparse refuses it itself
            if not _accepted(_rules, _option, _value):
                VALUE_CASES.append(pytest.param(_path, _parser, _rules, _option, str(_example), _value, False,
                                                id=f"{' '.join(_path)} {_option}={_example}"))
                if isinstance(_action, argparse._AppendAction):  # a good value first: the bad one is still named
                    VALUE_CASES.append(pytest.param(_path, _parser, _rules, _option, str(_example), _value, True,
                                                    id=f"{' '.join(_path)} {_option}=(good),{_example}"))
    for _index, _relation in enumerate(_rules.relations):
        _named = [name for name in (getattr(_relation, "option", None),
                                    *(getattr(_relation, "others", None) or (getattr(_relation, "other"),))) if name]
        RELATION_CASES.append(pytest.param(_path, _parser, _rules, _relation,
                                           id=f"{' '.join(_path)} {type(_relation).__name__} {' '.join(_named)}"))


def _refusal(capsys, argv: list[str]) -> str:
    assert main(argv) == 2, argv
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_the_sub_commands_state_option_tables():
    assert TABLES and VALUE_CASES and RELATION_CASES


@pytest.mark.usefixtures("parsers_built_once")
@pytest.mark.parametrize("path, parser, rules, option, text, value, after_good", VALUE_CASES)
def test_a_bad_option_value_is_refused_in_one_line_naming_it(capsys, path, parser, rules, option, text, value,
                                                             after_good):
    rule = rules.values[option]
    good = _sample(parser, rules, option) if after_good else []
    if option.startswith("-"):
        line = _refusal(capsys, [*path, *_placeholders(parser, {option}), *good, f"{option}={text}"])
    else:  # a positional argument
        line = _refusal(capsys, [*path, *_placeholders(parser, {option}, {option: [*good, text]})])
    kind = "option" if option.startswith("-") else "argument"
    assert line == f"dpdist: error: The {option!r} {kind} must be {rule.describe()}. Got {rule.shown(value)} instead."


@pytest.mark.parametrize("parser, rules, option", DEFAULT_CASES)
def test_every_default_passes_its_rule(parser, rules, option):
    rules.values[option].check(parser._option_string_actions[option].default)


def _breaking(parser, rules: OptionRules, relation) -> tuple[set[str], list[str]]:
    """The options a command line breaking ``relation`` gives, and the words that set the option whose value breaks
    it (a value relation's ``other`` at a value refused, a repeated option given too few or too many times)."""
    if isinstance(relation, Needs):
        return {relation.option}, []
    if isinstance(relation, NeedsAny):
        return set() if relation.option is None else {relation.option}, []
    if isinstance(relation, Excludes):
        return {relation.option, relation.other}, []
    if isinstance(relation, NeedsValue):
        default = parser._option_string_actions[relation.other].default
        if default is not None and (default in relation.values) == relation.excluded:
            return {relation.option}, []  # the other option's default breaks it
        words = (_sample(parser, rules, relation.other, among=relation.values) if relation.excluded
                 else _sample(parser, rules, relation.other, outside=relation.values))
        return {relation.option, relation.other}, words
    if isinstance(relation, ValueNeeds):
        return {relation.option}, _sample(parser, rules, relation.option, among=relation.values)
    assert isinstance(relation, NeedsCount), relation
    once = _sample(parser, rules, relation.other)
    count = relation.low - 1 if relation.low is not None else relation.high + 1
    return {relation.option, relation.other}, once * max(count, 1)


def _set_by(relation) -> str | None:
    """The option (or positional argument) whose words :func:`_breaking` returns."""
    if isinstance(relation, (NeedsValue, NeedsCount)):
        return relation.other
    return relation.option if isinstance(relation, ValueNeeds) else None


@pytest.mark.usefixtures("parsers_built_once")
@pytest.mark.parametrize("path, parser, rules, relation", RELATION_CASES)
def test_a_broken_relation_of_options_is_refused_in_its_words(capsys, path, parser, rules, relation):
    given, words = _breaking(parser, rules, relation)
    while True:  # what the given options need otherwise (but the one this relation is about), so that it alone breaks
        more = {need.other for need in rules.relations if isinstance(need, Needs) and need.option in given
                and need != relation and not (isinstance(relation, Needs) and need.other == relation.other)}
        if more <= given:
            break
        given |= more
    positional = {name for name in given if not name.startswith("-")}
    chosen = {name: (words if name == _set_by(relation) else _sample(parser, rules, name)) for name in positional}
    argv = [*path, *_placeholders(parser, given, chosen), *(words if _set_by(relation) not in positional else [])]
    for option in sorted(given - positional):
        if not any(word == option or word.startswith(option + "=") for word in argv):
            argv += _sample(parser, rules, option)
    namespace = parser.parse_args(argv[len(path):])
    values = {}
    for option, dest in rules.dests.items():  # the values as the table checks them (a rule's value, as it returns it)
        value = getattr(namespace, dest)
        values[option] = rules.values[option].check(value) if option in rules.values and value is not None else value
    broken = [rule for rule in rules.relations if rule.broken(given, values)]
    assert relation in broken  # the command line breaks it: the refusal is the first broken relation's, in table order
    assert _refusal(capsys, argv) == f"dpdist: error: {broken[0].refusal(values)}"


def _parser_refusal(capsys, argv: list[str]) -> str:
    with pytest.raises(SystemExit) as exited:  # argparse's own refusals exit from the parser, in one line
        main(argv)
    assert exited.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_an_option_of_one_value_given_twice_is_refused_in_one_line_naming_it(capsys):
    """The last value used to replace the first silently (a script adding its own ``--seed`` ran with another one);
    the values are not shown (an option may hold a token)."""
    line = _parser_refusal(capsys, ["demo", "--seed", "1", "--seed", "2"])
    assert line.startswith("dpdist: error: argument --seed: given more than once; give it once"), line
    line = _parser_refusal(capsys, ["relay", "--queue", "q.sqlite", "--collector", "http://127.0.0.1:9",
                                    "--relay-admin-token", "first-secret-0123456", "--admin-token", "other-secret-01234"])
    assert "--relay-admin-token/--admin-token: given more than once" in line and "secret" not in line, line


@pytest.mark.parametrize("variable, argv", [
    ("DPDIST_SERVER", ["campaign", "list"]),
    ("DPDIST_ISSUER", ["issuer", "status"]),
])
def test_a_refused_value_from_an_environment_variable_names_the_variable(capsys, monkeypatch, variable, argv):
    """``DPDIST_SERVER=...:99999`` was named as "'server' parameter of Client" (or as the option)."""
    pytest.importorskip("httpx")
    monkeypatch.setenv(variable, "http://alice:S3cretPW@127.0.0.1:99999")
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", "admin-token-0123456789")
    monkeypatch.setenv("DPDIST_ISSUER_ADMIN_TOKEN", "admin-token-0123456789")
    assert main(argv) == 2
    err = capsys.readouterr().err
    option = "--" + variable.removeprefix("DPDIST_").lower()
    assert f"The '{variable}' environment variable (for {option}) must be" in err and "S3cretPW" not in err
    assert err.count("\n") == 1
