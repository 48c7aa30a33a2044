"""The ``dpdist`` parser and ``main``: one line per error, exit status 0, 1 or 2."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys
from typing import NoReturn

from .. import __version__
from ..errors import DPDistError
from ._commands import COMMANDS, HELP
from ._secrets import MaskedStream, command_secrets
from ._errors import TRACEBACK_VARIABLE, internal_error_message, memory_message, proxy_message, user_message


class OneLineParser(argparse.ArgumentParser):
    """A parser whose own refusals (a value of the wrong type, an invalid choice, a required option missing) are one
    line ``dpdist: error: ...`` naming the option, exit status 2, as dpdist's; the usage stays with ``--help``.
    Its sub-commands' parsers are of its class (argparse makes them with ``type(parser)``)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, _StoreOnce)  # an option of one value, given twice, is refused (_StoreOnce)
        self.register("action", "store", _StoreOnce)

    def parse_known_args(self, args=None, namespace=None):  # pyright: ignore[reportIncompatibleMethodOverride]  (typeshed overloads it; argparse calls it as here)
        if args is not None:
            self._refuse_repeated_switches(list(args))
        parsed, extras = super().parse_known_args(args, namespace)
        if hasattr(parsed, _GIVEN):  # _StoreOnce's record of the options given: not an option
            delattr(parsed, _GIVEN)
        return parsed, extras

    def _refuse_repeated_switches(self, args: list[str]) -> None:
        """A switch of two forms (``--clip`` / ``--no-clip``) given twice in one line is refused naming both forms
        given (``--no-clip --clip``: contradictory, the last silently won) or the one repeated."""
        words = args[: args.index("--")] if "--" in args else args
        for action in self._actions:
            if not isinstance(action, argparse.BooleanOptionalAction):
                continue
            given = [word for word in words if word in action.option_strings]
            if len(given) < 2:
                continue
            if len(set(given)) > 1:
                first, second = given[0], next(word for word in given if word != given[0])
                self.error(f"{first} and {second} contradict each other: give one of them")
            self.error(f"argument {given[0]}: given more than once; give it once")

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"dpdist: error: {' '.join(message.split())} (see '{self.prog} --help')\n")


#: the attribute of the parsed namespace where :class:`_StoreOnce` records the options given (removed after parsing)
_GIVEN = "_dpdist_options_given"


class _StoreOnce(argparse._StoreAction):  # argparse's own "store": the action of an option of one value
    """An option of one value given twice (``--port 1 --port 2``) is refused in one line naming it, instead of the
    last value silently replacing the first: a command line built in pieces (a script adding its own ``--seed``)
    would otherwise run with a setting nobody chose.  The values are not shown (an option may hold a token)."""

    def __call__(self, parser, namespace, values, option_string=None):
        given = vars(namespace).setdefault(_GIVEN, set())
        if self.option_strings and self.dest in given:
            raise argparse.ArgumentError(self, "given more than once; give it once (a repeated option does not "
                                               "replace the first value)")
        given.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The ``dpdist`` parser; given a sub-command's name, with only the sub-commands of its module.

    A run parses one sub-command: its module's options are the ones it needs (usage, help and errors are the same),
    and building every sub-command's 300 options cost 8 ms and every module's import each time (``main`` is also
    called many times in one process: the test suite, scripts).  Any other first word (or none) gets the whole parser,
    which lists every sub-command (``main`` lists them with :func:`listing_parser` instead)."""
    parser, subparsers = _top_parser()
    modules = [name for name, commands in COMMANDS.items() if command in commands] or list(COMMANDS)
    for module_name in modules:
        importlib.import_module(module_name).add_commands(subparsers)
    return parser


def listing_parser() -> argparse.ArgumentParser:
    """The parser of a first word that is no sub-command (``-h``, ``--version``, a misspelt command, none): every
    sub-command listed with its line (the help and the refusals of the whole parser), no module of them imported."""
    parser, subparsers = _top_parser()
    for command, line in HELP.items():
        subparsers.add_parser(command, help=line)
    return parser


def _top_parser() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = OneLineParser(prog="dpdist", description="Estimate distributions under differential privacy.")
    parser.add_argument("--version", action="version", version=f"dpdist {__version__}")
    return parser, parser.add_subparsers(dest="command", metavar="COMMAND")


def main(argv: list[str] | None = None) -> int:
    """Run one sub-command; exit status 0 on success, 2 on bad input, 1 on an internal error."""
    argv = _attach_negative_values(sys.argv[1:] if argv is None else list(argv))
    parser = build_parser(argv[0]) if argv and argv[0] in HELP else listing_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 2
    import numpy as np  # lazy: NumPy (0.25 CPU-s), which the listing of the sub-commands does not need
    from ._arguments import check_option_rules  # lazy: the option tables load NumPy (the sub-command's module has)

    printing, streams = np.get_printoptions(), (sys.stdout, sys.stderr)
    np.set_printoptions(legacy="1.25")  # messages show 39.4, not np.float64(39.4)
    secrets = command_secrets(args)  # no line the command writes shows them (_secrets)
    if secrets:
        sys.stdout, sys.stderr = MaskedStream(sys.stdout, secrets), MaskedStream(sys.stderr, secrets)
    try:
        check_option_rules(args)  # the sub-command's option table, before it runs
        return int(args.handler(args) or 0)
    except DPDistError as error:
        print(f"dpdist: error: {user_message(error, argv)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: one line, no traceback (reproduce says how to resume)
        print("\ndpdist: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # e.g. `dpdist list | head`: the reader left, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as error:  # a path that cannot be read or written
        print(f"dpdist: error: {error.strerror or error}: {error.filename or ''}".rstrip(": "), file=sys.stderr)
        return 2
    except MemoryError as error:  # memory ran out (a huge input, a hostile config): one line, no "bug of dpdist"
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        print(f"dpdist: error: {memory_message(error, getattr(args, 'command', None))}", file=sys.stderr)
        return 1
    except Exception as error:  # a bug: still one line, unless the user asks for the traceback
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        proxy = proxy_message(error)  # the environment's proxy httpx cannot use: no bug of dpdist
        if proxy is not None:
            print(f"dpdist: error: {proxy}", file=sys.stderr)
            return 2
        print(f"dpdist: error: {internal_error_message(error)}", file=sys.stderr)
        return 1
    finally:
        np.set_printoptions(**printing)
        sys.stdout, sys.stderr = streams


def _attach_negative_values(argv: list[str]) -> list[str]:
    """``--bounds -5,15`` as ``--bounds=-5,15``: argparse takes a value that starts with '-' for an option."""

    out: list[str] = []
    for word in argv:
        if out and out[-1] == "--bounds" and re.fullmatch(r"-[0-9.][^ ]*,[^ ]*", word):
            out[-1] = f"--bounds={word}"
        else:
            out.append(word)
    return out
