"""The ``dpdist`` command line.

Sub-commands live beside the code they drive; each module listed in
``_COMMAND_MODULES`` exposes ``add_commands(subparsers)`` which registers its
sub-parsers with a ``handler`` default.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from . import __version__

_COMMAND_MODULES = [
    "dpdist._cli_basic",
    "dpdist._cli_experiments",
    "dpdist._cli_deploy",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dpdist", description="Estimate distributions under differential privacy."
    )
    parser.add_argument("--version", action="version", version=f"dpdist {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for module_name in _COMMAND_MODULES:
        importlib.import_module(module_name).add_commands(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 2
    from .errors import DPDistError

    try:
        return int(args.handler(args) or 0)
    except DPDistError as error:
        print(f"dpdist: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
