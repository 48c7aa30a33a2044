"""Reports in a uniformly random order, in bounded memory.

Report ``i`` of a file or batch must not be the report of row ``i`` of the data: when the rows
are sorted (or grouped, or in time order) by value, a report's position gives its value away,
whatever the randomizer did (on a file sorted by value, position guessed 99.6% of values at
eps = 1, where eps-LDP allows 73.1%). Every path that writes or sends reports made from values
(``dpdist privatize``, ``dpdist submit``, :meth:`dpdist.client.Client.submit_values`) therefore
passes them through :class:`ReportShuffler` first.

The shuffle is the random-bucket (Rao-Sandelius) shuffle: C. R. Rao, "Generation of random
permutations of given number of elements using random sampling numbers", Sankhya A 23 (1961);
L. Sandelius, "A simple randomization procedure", J. R. Stat. Soc. B 24 (1962); as an external
memory algorithm, P. Sanders, "Random permutations on distributed, external and hierarchical
memory", Inf. Process. Lett. 67 (1998). While the reports fit in ``memory_bytes`` they are
held and permuted at the end (Fisher-Yates, ``Generator.permutation``). Past that, every report
(those held and all later ones) goes to one of ``buckets`` temporary files chosen uniformly and
independently; at the end each bucket is permuted in memory (or, if it is still too large,
shuffled the same way, recursively) and the buckets are read out in order. The output is a
uniformly random permutation of the input: given the bucket sizes, which reports land in which
bucket is uniform over the assignments with those sizes, and each bucket's order is uniform, so
every arrangement of the reports over the output positions is equally likely. Whether the
buckets are used depends only on how many reports there are, never on the random draws.

The temporary files hold randomized reports only (never values), lie in a private directory
(mode 0700) and are removed when the shuffle ends, also on failure.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Iterator

import numpy as np

from .._rng import check_rng
from .._types import ArrayLike, PathLike, Seed
from .._validation import Integer, Optional, validate_params
from ._binary import _checked_for_writing

if TYPE_CHECKING:
    from ..local import LocalProtocol

__all__ = ["ReportShuffler", "SHUFFLE_MEMORY_BYTES", "SHUFFLE_BUCKETS", "rechunk_rows"]

#: Reports held in memory before the shuffle spills them to temporary bucket files (bytes).
SHUFFLE_MEMORY_BYTES = 128 << 20
#: Temporary files of a spilled shuffle (each bucket is shuffled again the same way if still too large).
SHUFFLE_BUCKETS = 64
#: Past this depth of recursion a bucket is permuted in memory whatever its size (64^4 = 1.7e7 times the budget).
_MAX_DEPTH = 4


class ReportShuffler:
    """Collect batches of reports, then give them back in a uniformly random order.

    Parameters
    ----------
    protocol : LocalProtocol
        The protocol whose reports are shuffled (its ``report_format`` gives dtype and row shape).
    rng : None, int, SeedSequence or Generator
        The order's randomness: ``None`` (default) is the CSPRNG, for reports about people;
        a seed or a seeded generator only for reproducible research runs.
    memory_bytes : int, optional
        Reports held in memory before spilling to temporary files (default
        :data:`SHUFFLE_MEMORY_BYTES`).
    directory : path, optional
        Where the temporary directory is made (default: the system's temporary directory).

    Use as a context manager; :meth:`blocks` gives the reports once all are added.

    >>> with ReportShuffler(proto) as shuffler:                          # doctest: +SKIP
    ...     for chunk in chunks:
    ...         shuffler.add(proto.privatize(chunk))
    ...     for block in shuffler.blocks(65536):
    ...         writer.write(block)
    """

    @validate_params({"memory_bytes": Optional(Integer(low=1)), "buckets": Optional(Integer(low=2))})
    def __init__(self, protocol: LocalProtocol, rng: Seed = None, *, memory_bytes: int | None = None, directory: PathLike | None = None,
                 buckets: int | None = None, _depth: int = 0, _shared: Path | None = None):
        layout = protocol.report_format
        self._protocol = protocol
        self.dtype, self.row_shape = layout.dtype, tuple(layout.row_shape)
        self.row_bytes = max(1, self.dtype.itemsize * int(np.prod(self.row_shape, dtype=np.int64)))

        self._rng = check_rng(rng, owner="ReportShuffler")
        self.memory_bytes = int(SHUFFLE_MEMORY_BYTES if memory_bytes is None else memory_bytes)
        self.buckets = int(SHUFFLE_BUCKETS if buckets is None else buckets)
        self._directory = directory
        self._depth = _depth
        self._held: list[np.ndarray] = []
        self._held_bytes = 0
        self._temporary: Path | None = _shared  # an inner shuffle writes in its parent's directory
        self._owns_temporary = _shared is None
        self._files: list[BinaryIO] | None = None  # the buckets' files, once the reports outgrow memory
        self._bucket_rows = np.zeros(0, dtype=np.int64)  # reports in each bucket's file
        self.n_added = 0

    # ------------------------------------------------------------------ context
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        """Remove the temporary files (idempotent)."""
        if self._files is not None:
            for handle in self._files:
                handle.close()
            self._files = None
        if self._temporary is not None and self._owns_temporary:
            shutil.rmtree(self._temporary, ignore_errors=True)
        self._temporary = None
        self._held, self._held_bytes = [], 0

    # ------------------------------------------------------------------ input
    def add(self, reports: ArrayLike) -> None:
        """Add a batch of reports (validated as the writers do: every report must be valid)."""

        reports = np.ascontiguousarray(_checked_for_writing(self._protocol, reports))
        self.n_added += len(reports)
        if self._files is not None:
            self._spill(reports)
            return
        self._held.append(reports)
        self._held_bytes += reports.nbytes
        if self._held_bytes > self.memory_bytes:
            self._open_buckets()
            held, self._held, self._held_bytes = self._held, [], 0
            for array in held:
                self._spill(array)

    def _open_buckets(self) -> None:
        if self._temporary is None:
            self._temporary = Path(tempfile.mkdtemp(prefix=".dpdist-shuffle-", dir=self._directory))
        self._files = [open(self._temporary / f"{self._depth}-{b}", "wb") for b in range(self.buckets)]
        self._bucket_rows = np.zeros(self.buckets, dtype=np.int64)

    def _spill(self, reports: np.ndarray) -> None:
        assert self._files is not None, "the buckets are open"
        bucket = self._rng.integers(0, self.buckets, size=len(reports))
        counts = np.bincount(bucket, minlength=self.buckets)
        grouped = reports[np.argsort(bucket, kind="stable")]
        for b, part in enumerate(np.split(grouped, np.cumsum(counts)[:-1])):
            if len(part):
                self._files[b].write(part.tobytes())
        self._bucket_rows += counts

    # ------------------------------------------------------------------ output
    @validate_params({"rows": Integer(low=1)})
    def blocks(self, rows: int) -> Iterator[np.ndarray]:
        """Every report added, in a uniformly random order, in blocks of ``rows`` (the last may be shorter)."""
        yield from rechunk_rows(self._permuted(), int(rows))

    def _permuted(self) -> Iterator[np.ndarray]:
        if self._files is None:
            held = self._held
            self._held, self._held_bytes = [], 0
            if held:
                array = np.concatenate(held) if len(held) > 1 else held[0]
                del held
                yield array[self._rng.permutation(len(array))]
            return
        for handle in self._files:
            handle.close()
        files, self._files = self._files, None
        for b, handle in enumerate(files):
            path = Path(handle.name)
            n = int(self._bucket_rows[b])
            if n * self.row_bytes <= self.memory_bytes or self._depth + 1 >= _MAX_DEPTH:
                array = np.fromfile(path, dtype=self.dtype).reshape(n, *self.row_shape)
                path.unlink()
                if n:
                    yield array[self._rng.permutation(n)]
                continue
            # its files are named by depth, and the previous bucket's inner shuffle is done: no name is reused while open
            inner = ReportShuffler(self._protocol, self._rng, memory_bytes=self.memory_bytes, buckets=self.buckets,
                                   _depth=self._depth + 1, _shared=self._temporary)
            with inner, open(path, "rb") as source:
                piece = max(1, self.memory_bytes // self.row_bytes)
                for start in range(0, n, piece):
                    chunk = np.fromfile(source, dtype=self.dtype, count=min(piece, n - start) * self._row_items())
                    inner.add(chunk.reshape(-1, *self.row_shape))
                path.unlink()
                yield from inner._permuted()

    def _row_items(self) -> int:
        return int(np.prod(self.row_shape, dtype=np.int64))


def rechunk_rows(arrays, rows: int) -> Iterator[np.ndarray]:
    """Re-cut a stream of report arrays (one row per report) into parts of exactly ``rows`` rows (the last may be shorter)."""
    pending, held = [], 0
    for array in arrays:
        while len(array):
            take = min(rows - held, len(array))
            pending.append(array[:take])
            held, array = held + take, array[take:]
            if held == rows:
                yield np.concatenate(pending) if len(pending) > 1 else pending[0]
                pending, held = [], 0
    if held:
        yield np.concatenate(pending) if len(pending) > 1 else pending[0]
