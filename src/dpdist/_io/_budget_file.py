"""The file of a budget session (``dpdist budget create FILE``): its total and every charge, JSON.

One charge is one read-check-write under an exclusive lock on ``FILE.lock``
(:func:`dpdist._io._atomic.exclusive_lock`, waiting for another process's charge
to finish), and the write is one atomic replacement, so two processes charging
the same file at once never both spend the last of the budget, and a crash
leaves the file before or after a charge, never between.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import IncompatibleStateError, InvalidParameterError
from ._atomic import atomic_writer

__all__ = ["BUDGET_FORMAT", "read_budget_file", "write_budget_file"]

BUDGET_FORMAT = "dpdist-budget"
#: version 2 names the session's accountant; version 1 (written before the accountants) is read as "basic", and a
#: session with another accountant writes version 2, which older readers refuse rather than re-read as a sum
BUDGET_VERSION = 2
_ACCOUNTANTS = ("tightest", "basic", "zcdp", "pld")


def read_budget_file(path: Path) -> dict[str, Any]:
    """The document of a budget file: ``{"format", "version", "total", "charges", "accountant"}``; refuses anything
    else (a version 1 file, written before the accountants, is read with the ``"basic"`` accountant it was kept by)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InvalidParameterError(
            f"The budget file {str(path)!r} does not exist: create it with 'dpdist budget create {path} --epsilon E' "
            "(or dpdist.budget.BudgetSession.create)."
        ) from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise IncompatibleStateError(f"The budget file {str(path)!r} is not valid JSON ({error.msg}).") from None
    if not isinstance(document, dict) or document.get("format") != BUDGET_FORMAT:
        raise IncompatibleStateError(f"The file {str(path)!r} is not a dpdist budget file (format {BUDGET_FORMAT!r}).")
    if document.get("version") not in (1, BUDGET_VERSION):
        raise IncompatibleStateError(
            f"The budget file {str(path)!r} has version {document.get('version')!r}; this dpdist reads versions 1 "
            f"and {BUDGET_VERSION}."
        )
    if not isinstance(document.get("total"), dict) or not isinstance(document.get("charges"), list):
        raise IncompatibleStateError(f"The budget file {str(path)!r} lacks its 'total' or its 'charges'.")
    if document["version"] == 1:
        document["accountant"] = "basic"
    elif document.get("accountant") not in _ACCOUNTANTS:
        raise IncompatibleStateError(f"The budget file {str(path)!r} names no accountant of {_ACCOUNTANTS}: "
                                     f"{document.get('accountant')!r}.")
    return document


def write_budget_file(path: Path, total: dict, charges: list[dict], accountant: str = "basic") -> None:
    """Replace ``path`` atomically with the total, the charges and the accountant (readable by its owner only).

    A ``"basic"`` session is written as version 1 (older readers read it as it is: a sum); any other accountant
    as version 2."""
    if accountant == "basic":
        document = {"format": BUDGET_FORMAT, "version": 1, "total": total, "charges": charges}
    else:
        document = {"format": BUDGET_FORMAT, "version": BUDGET_VERSION, "total": total, "charges": charges,
                    "accountant": accountant}
    with atomic_writer(path, private=True) as handle:
        handle.write((json.dumps(document, indent=2, sort_keys=True) + "\n").encode("utf-8"))
