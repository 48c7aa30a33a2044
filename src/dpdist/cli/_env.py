"""Every option of a sub-command also from an environment variable: ``--max-body-bytes`` from ``DPDIST_MAX_BODY_BYTES``.

A value on the command line wins over the variable, the variable over the
built-in default.  Variables keep secrets (``DPDIST_DB`` with a PostgreSQL
password, ``DPDIST_ADMIN_TOKEN``) out of the process list, which shows every
command-line option to every user of the machine.  A variable's value is
converted and checked like the option's; a bad one is reported in one line
naming the variable, when the command runs (:func:`check_environment`).
"""

from __future__ import annotations

import argparse
import os

from ..errors import InvalidParameterError

__all__ = ["environment_defaults", "check_environment", "variable_of"]

PREFIX = "DPDIST_"
_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}


class _Bad:
    """A variable whose value the option refused (reported by :func:`check_environment`)."""

    def __init__(self, variable: str, option: str, value: str, allowed: str):
        self.variable, self.option, self.value, self.allowed = variable, option, value, allowed

    def error(self) -> InvalidParameterError:
        return InvalidParameterError(
            f"The '{self.variable}' environment variable (for {self.option}) must be {self.allowed}. Got {self.value!r}."
        )


def variable_of(action: argparse.Action) -> str:
    option = next(name for name in action.option_strings if name.startswith("--"))
    return PREFIX + option[2:].upper().replace("-", "_")


def _allowed(action: argparse.Action) -> str:
    if action.choices is not None:
        return "one of " + ", ".join(map(str, action.choices))
    kind = getattr(action.type, "__name__", "a value")
    return {"int": "an int", "float": "a number"}.get(kind, f"a valid {action.option_strings[-1]} value")


def environment_defaults(parser: argparse.ArgumentParser, environ=None) -> None:
    """Give each long option of ``parser`` the default of its ``DPDIST_...`` variable, and name it in the help."""
    environ = os.environ if environ is None else environ
    for action in parser._actions:  # argparse has no public iterator over a parser's options
        if not any(name.startswith("--") for name in action.option_strings) or action.dest == "help":
            continue
        variable = variable_of(action)
        action.help = f"{action.help or ''} [env {variable}]".strip()
        text = environ.get(variable)
        if text is None or text == "":
            continue
        option = next(name for name in action.option_strings if name.startswith("--"))
        if isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction)):
            word = text.strip().lower()
            if word in _TRUE | _FALSE:
                action.default = (word in _TRUE) == isinstance(action, argparse._StoreTrueAction)
            else:
                action.default = _Bad(variable, option, text, "1, true, yes, on, 0, false, no or off")
            continue
        value = text
        if callable(action.type):
            try:
                value = action.type(text)
            except (TypeError, ValueError, argparse.ArgumentTypeError):
                value = _Bad(variable, option, text, _allowed(action))
        if not isinstance(value, _Bad) and action.choices is not None and value not in action.choices:
            value = _Bad(variable, option, text, _allowed(action))
        action.default = value  # not a str (or a _Bad): argparse does not convert it again
        action.required = False


def check_environment(args: argparse.Namespace) -> None:
    """Raise the one-line error of the first variable whose value its option refused."""
    for value in vars(args).values():
        if isinstance(value, _Bad):
            raise value.error()
