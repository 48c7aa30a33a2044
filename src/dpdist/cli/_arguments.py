"""Argument types and checks shared by the sub-commands (``--seed``, ``--bounds``, ``--replicates``, ``--targets``)."""

from __future__ import annotations

import argparse
import math

from .._validation import ItemIds
from ..errors import InvalidParameterError


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

    if replicates < 0 or 0 < replicates < 20:
        raise InvalidParameterError(
            f"The '--replicates' option must be 0 (no bands) or an int >= 20. Got {replicates!r} instead."
        )
    return replicates


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
