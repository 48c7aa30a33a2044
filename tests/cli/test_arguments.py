"""The option tables of the sub-commands (``dpdist.cli._arguments.state_rules``) generate their bad-input tests.

Every sub-command that states rules for its options is found in the whole ``dpdist`` parser; every value rule's
``invalid_examples`` that the option's argparse type reads is passed on a command line and must be refused by
``main`` before the command runs, in one line naming the option, the value and what is allowed (exit status 2);
every relation (an option that needs another, two that exclude each other) is broken on a command line and must be
refused in its own words.  The placeholders for the other arguments are never read: the table is checked first.
"""

from __future__ import annotations

import argparse

import pytest

from dpdist.cli._arguments import Excludes, Needs, OptionRules
from dpdist.cli._main import build_parser, main

SAMPLES = ("1", "2", "200", "1000", "0.1", "x", "0,1", "a=b", "{}", "https://example.org")


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
    return value


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
    return [str(value) for value in getattr(rule, "values", ())]


def _sample(parser, rules: OptionRules, option: str) -> list[str]:
    """The option on a command line with a value its type and its rule accept, other than its default (so that it
    is given); a flag alone."""
    action = parser._option_string_actions[option]
    if action.nargs == 0:
        return [option]
    listed = [*map(str, action.choices or ()), *_rule_values(rules.values.get(option))]
    for text in (*listed, *SAMPLES):
        try:
            value = _converted(action, text)
        except (ValueError, TypeError, argparse.ArgumentTypeError):
            continue
        if _accepted(rules, option, value) and value != action.default:
            return [f"{option}={text}"]
    raise AssertionError(f"no sample value for {option}")


def _placeholders(parser, given: set[str] = frozenset()) -> list[str]:
    """The required arguments, with values argparse reads (the command never runs), and one option of each required
    group of which none is ``given``."""
    out: list[str] = []
    rules = parser.get_default("option_rules") or OptionRules()
    for group in parser._mutually_exclusive_groups:
        options = [action.option_strings[-1] for action in group._group_actions]
        if group.required and not given & set(options):
            out += _sample(parser, rules, options[0])
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction) or action.help == argparse.SUPPRESS:
            continue
        if not action.option_strings and action.nargs not in ("?", "*"):
            out += [str(next(iter(action.choices))) if action.choices else "x"]
        elif action.option_strings and action.required:
            out += _sample(parser, rules, action.option_strings[-1])
    return out


TABLES = [(path, parser, parser.get_default("option_rules")) for path, parser in _leaves(build_parser())
          if parser.get_default("option_rules") is not None]
VALUE_CASES, RELATION_CASES, DEFAULT_CASES = [], [], []
for _path, _parser, _rules in TABLES:
    for _option, _rule in _rules.values.items():
        _action = _parser._option_string_actions[_option]
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
                VALUE_CASES.append(pytest.param(_path, _parser, _rules, _option, str(_example), _value,
                                                id=f"{' '.join(_path)} {_option}={_example}"))
    for _index, _relation in enumerate(_rules.relations):
        RELATION_CASES.append(pytest.param(_path, _parser, _rules, _relation,
                                           id=f"{' '.join(_path)} {type(_relation).__name__} {_relation.option} {_relation.other}"))


def _refusal(capsys, argv: list[str]) -> str:
    assert main(argv) == 2, argv
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    return lines[0]


def test_the_sub_commands_state_option_tables():
    assert TABLES and VALUE_CASES and RELATION_CASES


@pytest.mark.parametrize("path, parser, rules, option, text, value", VALUE_CASES)
def test_a_bad_option_value_is_refused_in_one_line_naming_it(capsys, path, parser, rules, option, text, value):
    rule = rules.values[option]
    line = _refusal(capsys, [*path, *_placeholders(parser, {option}), f"{option}={text}"])
    assert line == f"dpdist: error: The {option!r} option must be {rule.describe()}. Got {rule.shown(value)} instead."


@pytest.mark.parametrize("parser, rules, option", DEFAULT_CASES)
def test_every_default_passes_its_rule(parser, rules, option):
    rules.values[option].check(parser._option_string_actions[option].default)


@pytest.mark.parametrize("path, parser, rules, relation", RELATION_CASES)
def test_a_broken_relation_of_options_is_refused_in_its_words(capsys, path, parser, rules, relation):
    given = {relation.option} | ({relation.other} if isinstance(relation, Excludes) else set())
    while True:  # what the given options need otherwise (but the one this relation is about), so that it alone breaks
        more = {need.other for need in rules.relations if isinstance(need, Needs) and need.option in given
                and need != relation and not (isinstance(relation, Needs) and need.other == relation.other)}
        if more <= given:
            break
        given |= more
    argv = [*path, *_placeholders(parser, given)]
    for option in sorted(given):
        if not any(word == option or word.startswith(option + "=") for word in argv):
            argv += _sample(parser, rules, option)
    broken = [rule for rule in rules.relations if rule.broken(given)]
    assert relation in broken  # the command line breaks it: the refusal is the first broken relation's, in table order
    assert _refusal(capsys, argv) == f"dpdist: error: {broken[0].refusal()}"
