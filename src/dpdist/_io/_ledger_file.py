"""A device's privacy ledger kept in a file: read once, locked while open, written atomically for its owner only.

The ledger (:class:`~dpdist.local.ledger.PrivacyLedger`) knows no file: it calls its
``on_change`` after every charge, and a ledger opened here saves itself there, so the
charge is on disk before the reports can leave (the JavaScript client's ``onChange`` and
``localStorage`` do the same).  This is what ``dpdist privatize/submit --memo FILE`` keeps.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any, Iterator

from .. import _json
from ..errors import IncompatibleStateError
from ..local.ledger import PrivacyLedger
from .._types import PathLike
from ._atomic import atomic_writer, exclusive_lock

__all__ = ["open_ledger", "save_ledger", "read_ledger"]


@contextlib.contextmanager
def open_ledger(path: PathLike, option: str = "--memo", **settings: Any) -> Iterator[PrivacyLedger]:
    """The ledger kept in ``path`` (created on first use, owner-only), locked while open, saved by every
    :meth:`~PrivacyLedger.report` before it returns its reports, and on success.

    ``settings`` (``budget``, ``window``, ``accounting``) apply to a new ledger and, when
    given, replace those of an existing one (the owner's decision); ``option`` names the
    file in errors (``--memo``).
    """
    path = Path(path)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    with exclusive_lock(path, owner=option):
        ledger = read_ledger(path, option, **settings)
        ledger.on_change = lambda changed: save_ledger(path, changed)
        try:
            yield ledger
        finally:
            ledger.on_change = None
        save_ledger(path, ledger)


def read_ledger(path: PathLike, option: str = "--memo", **settings: Any) -> PrivacyLedger:
    """The ledger (or device memo) in ``path``, a new one where there is no file (not locked: see :func:`open_ledger`)."""
    path = Path(path)
    source = f"The '{option}' file {str(path)!r}"
    state = None
    if path.exists():
        try:
            state = _json.loads(path.read_text())
        except (OSError, ValueError) as error:
            raise IncompatibleStateError(f"{source} is not a device memo or privacy ledger (JSON): {error}.") from None
    return PrivacyLedger.restore(state, source, **settings)


def save_ledger(path: PathLike, ledger: PrivacyLedger) -> None:
    """Write ``ledger`` to ``path`` atomically, readable by its owner only (its memos hold true values)."""
    with atomic_writer(Path(path), private=True) as handle:
        handle.write(json.dumps(ledger.to_dict(), sort_keys=True).encode() + b"\n")
