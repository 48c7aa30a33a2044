"""The ``dpdist`` command line (entry point ``dpdist.cli:main``).

Sub-commands live in this package, one module per group of commands; each module listed in
``_main.COMMANDS`` exposes ``add_commands(subparsers)``, which registers its sub-parsers
with a ``handler`` default.
"""

from ._main import build_parser, main

__all__ = ["build_parser", "main"]
