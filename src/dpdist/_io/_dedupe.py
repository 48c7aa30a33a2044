"""The no-file-twice rule every ingest path keys on: the identities of a report file.

A file's identities are the random file ids it carries (:mod:`dpdist._io._identity`;
a binary file made by concatenating files carries each of theirs), or for a
file written before ids existed, its SHA-256 content fingerprint.  ``dpdist
aggregate``, :func:`dpdist.distributed.aggregate_files` and the collection
service all refuse a file whose identity they have already counted.
"""

from __future__ import annotations

from ..errors import IncompatibleStateError
from ._files import FileSummary, summarize_file
from ._identity import file_fingerprint
from .._types import PathLike

__all__ = ["file_identities", "identities_of", "check_distinct_files"]


def file_identities(path: PathLike) -> list[str]:
    """The identities of a report file: ``"id:<hex>"`` per distinct file id, in order of appearance.

    A binary file made by concatenating files carries each of their ids (so it
    collides with any of them); a file with a record or schema that has no id
    (written by dpdist before file ids) is also identified by its content
    fingerprint ``"sha256:<hex>"``.
    """
    return identities_of(summarize_file(path))


def identities_of(summary: FileSummary) -> list[str]:
    """:func:`file_identities` of a file already summarized."""
    ids = summary.record_ids
    identities = list(dict.fromkeys(f"id:{file_id}" for file_id in ids if file_id is not None))
    if not ids or None in ids:
        identities.append(file_fingerprint(summary.path))
    return identities


def check_distinct_files(paths, owner: str) -> None:
    """Refuse a list of report files in which one file (by identity) appears twice."""
    seen: dict[str, str] = {}
    for path in map(str, paths):
        for identity in file_identities(path):
            if identity in seen:
                raise IncompatibleStateError(
                    f"{owner}: the report files {seen[identity]!r} and {path!r} are the same file "
                    f"({identity[:19]}...); refusing to count its reports twice."
                )
            seen[identity] = path
