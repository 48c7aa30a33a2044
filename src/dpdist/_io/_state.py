"""Durable aggregator state: an :class:`~dpdist.local.Aggregator` and the report files it has ingested.

The file format, its atomic replacement and the O(1) ingest journal are in
:mod:`dpdist._io._state_file`; this module turns them into aggregators (every
state read is validated by :meth:`~dpdist.local.Aggregator.from_dict`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .._validation import InstanceOf, validate_params
from ..local import Aggregator, LocalProtocol
from ._state_file import EMPTY_JOURNAL, STATE_VERSION, append_ingested, journal_path, read_state, write_state
from .._types import PathLike

__all__ = ["STATE_VERSION", "SavedState", "save_state", "load_state", "record_ingested", "journal_path"]


@dataclass
class SavedState:
    """An aggregator, the identities of the report files it has ingested, and its committed journal.

    ``pending`` are the ingested files recorded in the state file's header (by
    :func:`save_state`) rather than in its journal; :func:`record_ingested` moves
    them into the journal with the next file.
    """

    aggregator: Any
    ingested: dict[str, dict] = field(default_factory=dict)
    journal: dict[str, int] = field(default_factory=lambda: dict(EMPTY_JOURNAL))
    pending: dict[str, dict] = field(default_factory=dict)


@validate_params({"aggregator": InstanceOf(Aggregator, "an Aggregator")})
def save_state(path: PathLike, aggregator: Aggregator, ingested: dict[str, dict] | None = None) -> None:
    """Write ``aggregator`` and the ingested-file identities to ``path`` in one atomic replacement.

    Parameters
    ----------
    path : str or Path
        Destination; replaced atomically (temp file, fsync, rename, fsync of the directory).
        A writer killed at any moment leaves the old state or the new one, each loadable
        with its own ingested files.
    aggregator : Aggregator
    ingested : dict, optional
        Identity -> record of the report files already added, stored in the state file
        itself (an ingest journal left beside it is no longer part of it and is removed);
        use :func:`record_ingested` to add files one at a time.
    """
    write_state(path, _fields(aggregator), ingested)


def record_ingested(path: PathLike, saved: SavedState, keys: list[str], record: dict) -> None:
    """Commit one more ingested file: ``saved.aggregator`` already holds its reports.

    Appends the file's journal line, then replaces the state atomically; cost
    O(1) in the number of files already ingested (crash guarantees: see
    :mod:`dpdist._io._state_file`).
    """
    saved.journal = append_ingested(path, _fields(saved.aggregator), saved.journal, keys, record, saved.pending)
    saved.pending = {}
    entry = dict(record)
    for key in keys:
        saved.ingested[key] = entry


def load_state(path: PathLike, protocol: LocalProtocol | None = None, *, journal: bool = True) -> SavedState:
    """Read a state written by :func:`save_state` (or kept by ``dpdist aggregate``).

    With ``protocol``, the state's config must equal the protocol's, else
    :class:`~dpdist.errors.IncompatibleStateError` names both configs.  ``journal=False``
    reads the state file alone: its ingest journal (which ``dpdist aggregate`` needs to refuse
    files counted before) plays no part in an estimate, so ``dpdist estimate --state`` does not
    read it (nor need it); ``ingested`` then holds the header's records only.
    """
    fields, ingested, committed, pending = read_state(
        path, None if protocol is None else protocol.config(), journal=journal
    )
    return SavedState(Aggregator.from_dict(fields, protocol), ingested, committed, pending)


def _fields(aggregator) -> dict:
    return {"config": aggregator.config, "n": aggregator.n, "statistic": aggregator.statistic, "rejected": aggregator.rejected}
