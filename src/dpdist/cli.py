"""The ``dpdist`` command line.

Sub-commands live beside the code they drive; each module listed in
``_COMMAND_MODULES`` exposes ``add_commands(subparsers)`` which registers its
sub-parsers with a ``handler`` default.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from . import __version__

_COMMAND_MODULES = [
    "dpdist._cli_basic",
    "dpdist._cli_experiments",
    "dpdist._cli_deploy",
    "dpdist._cli_release",
    "dpdist._cli_serve",
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
    """Run one sub-command; exit status 0 on success, 2 on bad input, 1 on an internal error."""
    argv = _attach_negative_values(sys.argv[1:] if argv is None else list(argv))
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 2
    import numpy as np

    from ._cli_errors import TRACEBACK_VARIABLE, internal_error_message, user_message
    from .errors import DPDistError

    printing = np.get_printoptions()
    np.set_printoptions(legacy="1.25")  # messages show 39.4, not np.float64(39.4)
    try:
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
    except Exception as error:  # a bug: still one line, unless the user asks for the traceback
        if os.environ.get(TRACEBACK_VARIABLE):
            raise
        print(f"dpdist: error: {internal_error_message(error)}", file=sys.stderr)
        return 1
    finally:
        np.set_printoptions(**printing)


def _attach_negative_values(argv: list[str]) -> list[str]:
    """``--bounds -5,15`` as ``--bounds=-5,15``: argparse takes a value that starts with '-' for an option."""
    import re

    out = []
    for word in argv:
        if out and out[-1] == "--bounds" and re.fullmatch(r"-[0-9.][^ ]*,[^ ]*", word):
            out[-1] = f"--bounds={word}"
        else:
            out.append(word)
    return out


def seed_argument(text: str) -> int:
    """argparse type of ``--seed``: a non-negative int."""
    try:
        seed = int(text)
    except ValueError:
        seed = -1
    if seed < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}")
    return seed


def check_replicates(replicates: int) -> int:
    """The value of ``--replicates``: 0 (no CDF bands) or the bootstrap replicates, at least 20."""
    from .errors import InvalidParameterError

    if replicates < 0 or 0 < replicates < 20:
        raise InvalidParameterError(
            f"The '--replicates' option must be 0 (no bands) or an int >= 20. Got {replicates!r} instead."
        )
    return replicates


def parse_bounds(text: str | None) -> tuple[float, float] | None:
    """The value of a ``--bounds LO,HI`` option: two finite numbers with LO < HI (None when not given)."""
    import math

    from .errors import InvalidParameterError

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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
