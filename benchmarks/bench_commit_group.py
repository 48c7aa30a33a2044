"""Where a group commit's CPU goes: dpdist's committer against the durable floor's, in one process.

``bench_serve.py --cases ratio`` measures whole servers (dpdist, ``floor_app.py``, the bare app) by requests per server
CPU-second.  This script isolates the thread that costs the difference: the group commit, run in this process on
groups of ``--group`` one-report batches (14: what both servers' groups hold at 16 connections) after a prefill of
``--prefill`` batch rows, alternating ``--repeats`` times:

* **dpdist**: ``GroupCommitter.write`` on pending bodies, as ``dpdist serve`` hands them over (decode and validate
  the group's records, claim the batch ids, bind them, refuse, append the group's log row, ``COMMIT``: the usual group's
  short way, ``serve/_usual_group.py``), then what its thread does between groups (folds, sweeps);
* **dpdist, the ordinary way**: the same groups the way a group that is not the usual one goes (every body decoded
  alone, every step of ``serve/_group.py``); with ``--retry`` the last batch of each dpdist group is one of the group
  before, as devices' journals resend after a restart (the usual group's short way then pauses: ``ShortWay``);
* **floor**: ``floor_app.Committer.commit`` (one ``INSERT ... ON CONFLICT DO NOTHING`` of the batch keys, one count
  row, ``COMMIT``);
* **rows**: the floor's own statement and commit on raw ``sqlite3``, storing the floor's three columns or the seven
  of dpdist's batch rows (what answering a retried batch with its first acknowledgement, byte for byte, needs: the body's
  digest, n_read, accepted, the rejected counts): what the rows alone cost; and the seven ``NOT NULL``, as dpdist's
  are, where the floor's multi-row ``ON CONFLICT DO NOTHING`` may stop halfway (a NOT NULL check) and SQLite keeps a
  statement journal for it (dpdist inserts them ``OR IGNORE``: ``Database.insert_new``).

Per group: the thread's CPU, the CPU inside SQLite's statements (a timing connection; the rest is Python), and the
pages each commit appends to the WAL (what its fsync writes).

Usage::

    uv run python benchmarks/bench_commit_group.py [--group 14] [--groups 2000] [--prefill 100000] [--repeats 3] [--retry]

Prints a table and writes ``benchmarks/results/commit_group.json``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np

from dpdist import io, local
from dpdist.serve._committer import GroupCommitter
from dpdist.serve._database import open_database
from dpdist.serve._group import Arrival
from dpdist.serve._group_bodies import PendingBody
from dpdist.serve._limits import Limits
from dpdist.serve._store import Store

sys.path.insert(0, str(Path(__file__).resolve().parent))
import floor_app  # noqa: E402  (beside this script)

CAMPAIGN = "bench-1a2b3c4d"
CONFIG = {"protocol": "grr", "epsilon": 1.0, "domain_size": 64}
OUT = Path(__file__).resolve().parent / "results" / "commit_group.json"


class _Timing:
    """CPU spent inside SQLite's statements, by connection factory: on while :attr:`on`, else one attribute check."""

    on = False
    cpu_s = 0.0


class _TimedConnection(sqlite3.Connection):
    def execute(self, *args, **kwargs):  # type: ignore[override]
        if not _Timing.on:
            return super().execute(*args, **kwargs)
        started = time.thread_time()
        try:
            return super().execute(*args, **kwargs)
        finally:
            _Timing.cpu_s += time.thread_time() - started


@contextlib.contextmanager
def _timed_connections():
    """Every ``sqlite3.connect`` in the block (dpdist's and the floor's) makes a :class:`_TimedConnection`."""
    connect = sqlite3.connect

    def timed(*args, **kwargs):
        kwargs.setdefault("factory", _TimedConnection)
        return connect(*args, **kwargs)

    sqlite3.connect = timed  # type: ignore[assignment]
    try:
        yield
    finally:
        sqlite3.connect = connect  # type: ignore[assignment]


class _Dpdist:
    """dpdist's committer on a store of its own, fed what ``dpdist serve`` hands it: one-report bodies."""

    def __init__(self, folder: Path, name: str = "dpdist", retry: bool = False):
        self.retry, self._last, self._retried = retry, None, False  # (``--retry``: the first batch id of the group before)
        self.store = Store(open_database(str(folder / f"{name}.sqlite")))
        self.store.create(CAMPAIGN, CONFIG)
        self.store.transition(CAMPAIGN, "open")
        self.protocol = local.from_config(CONFIG)
        self.body = io.encode_record(self.protocol, self.protocol.privatize(np.array([3]), rng=1))
        self.digest = hashlib.sha256(b"application/octet-stream\n" + self.body).hexdigest()
        self.limits = Limits()
        self.committer = GroupCommitter(self.store)

    def group(self, size: int) -> list:
        """``size`` new batches; with ``retry``, the last one a batch of the group before (committed by then)."""
        ids = [uuid.uuid4().hex for _ in range(size)]
        self._retried = self.retry and self._last is not None
        if self._retried:
            ids[-1] = self._last
        self._last = ids[0]
        return [Arrival(CAMPAIGN, batch_id, self.digest, None, 0, 0, campaign_file_id=None,
                        pending=PendingBody(self.protocol, self.body, "application/octet-stream", self.limits, False))
                for batch_id in ids]

    def commit(self, group: list) -> None:
        self._check(self.committer.write(group))
        self.committer.written(group)
        self.committer.between_groups(False)

    def _check(self, outcomes: list) -> None:
        """Every batch acknowledged (its one report accepted), the retried one as a duplicate."""
        assert all(isinstance(outcome, dict) and outcome["accepted"] == 1 for outcome in outcomes), outcomes[:2]
        assert [outcome["duplicate"] for outcome in outcomes] == [False] * (len(outcomes) - 1) + [self._retried]


class _Ordinary(_Dpdist):
    """dpdist's committer the ordinary way (every body decoded alone, every step of the group commit), as a group that
    is not the usual one goes (``serve/_usual_group.py``): what the usual group's short way saves."""

    def commit(self, group: list) -> None:
        self._check(self.committer.write_ordinary(group))
        self.committer.written(group)
        self.committer.between_groups(False)


class _Floor:
    """``floor_app.Committer``'s commit on a connection of its own (its thread not started: it would open the same
    database at once, and its ``PRAGMA journal_mode=WAL`` raced this one's, "database is locked")."""

    def __init__(self, folder: Path):
        self.committer = floor_app.Committer(str(folder / "floor.sqlite"), thread=False)
        self.connection = self.committer.connect()

    def group(self, size: int) -> list:
        return [((CAMPAIGN, uuid.uuid4().hex), None, None, None) for _ in range(size)]

    def commit(self, group: list) -> None:
        outcomes = self.committer.commit(self.connection, group)
        assert not any(outcomes)  # every key new


class _Rows:
    """The floor's statement on raw sqlite3, storing ``columns`` of a batch row (3: the floor's; 7: dpdist's), its
    columns ``NOT NULL`` as dpdist's are when ``not_null`` (then a multi-row ``ON CONFLICT DO NOTHING`` may stop
    halfway, at a NOT NULL check, and SQLite keeps a statement journal for it in a temporary file)."""

    def __init__(self, folder: Path, columns: int, not_null: bool = False):
        self.columns = columns
        self.connection = sqlite3.connect(str(folder / f"rows{columns}{not_null}.sqlite"), isolation_level=None)
        self.connection.execute("PRAGMA journal_mode=WAL")
        self.connection.execute("PRAGMA synchronous=FULL")
        names = ["campaign_id TEXT", "batch_id TEXT", "received_ms INTEGER"]
        if columns == 7:
            names += ["body_sha256 TEXT", "n_read INTEGER", "accepted INTEGER", "rejected TEXT"]
        constraint = " NOT NULL" if not_null else ""
        self.connection.execute(f"CREATE TABLE batches ({', '.join(name + constraint for name in names)},"
                                " PRIMARY KEY (campaign_id, batch_id))")
        self.names = ", ".join(name.split()[0] for name in names)
        self.digest = hashlib.sha256(b"a body").hexdigest()

    def group(self, size: int) -> list:
        tail = (self.digest, 1, 1, "{}") if self.columns == 7 else ()
        return [value for _ in range(size) for value in (CAMPAIGN, uuid.uuid4().hex, 0, *tail)]

    def commit(self, group: list) -> None:
        marks = ", ".join(["(" + ", ".join("?" * self.columns) + ")"] * (len(group) // self.columns))
        self.connection.execute("BEGIN IMMEDIATE")
        self.connection.execute(f"INSERT INTO batches ({self.names}) VALUES {marks} ON CONFLICT DO NOTHING"
                                " RETURNING campaign_id, batch_id", group).fetchall()
        self.connection.execute("COMMIT")


def _prefill(side, rows: int) -> None:
    for _ in range(rows // 500):
        side.commit(side.group(500))


def _per_group(side, size: int, groups: int, timed: bool) -> tuple[float, float]:
    """Thread CPU per group and (``timed``) the part inside SQLite's statements, in microseconds."""
    total = 0.0
    _Timing.cpu_s, _Timing.on = 0.0, timed
    try:
        for _ in range(groups):
            group = side.group(size)  # made outside the measure: the requests' side of the work
            started = time.thread_time()
            side.commit(group)
            total += time.thread_time() - started
    finally:
        _Timing.on = False
    return total / groups * 1e6, _Timing.cpu_s / groups * 1e6


def _wal_pages(side, size: int, groups: int) -> float:
    """WAL frames a group's commit appends: counted by SQLite's checkpoint (``log``: the frames in the WAL, which starts
    over after a checkpoint of every frame), automatic checkpoints held off while counting."""
    connection = side.store.db.connection() if isinstance(side, _Dpdist) else side.connection
    connection.execute("PRAGMA wal_autocheckpoint=0")
    try:
        busy, frames, copied = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        for _ in range(groups):
            side.commit(side.group(size))
        _, after, _ = connection.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return (after if busy == 0 and frames == copied else after - frames) / groups
    finally:
        connection.execute("PRAGMA wal_autocheckpoint=1000")


def measure(size: int, groups: int, prefill: int, repeats: int, retry: bool = False) -> list[dict]:
    """The rows of the result: per side, the medians over ``repeats`` rounds (each side measured first in turn: the
    machine's page cache and journal make the order matter)."""
    with tempfile.TemporaryDirectory() as scratch, _timed_connections():
        folder = Path(scratch)
        sides = {"dpdist": _Dpdist(folder, retry=retry), "dpdist, the ordinary way": _Ordinary(folder, "ordinary", retry),
                 "floor": _Floor(folder),
                 "rows: the floor's 3 columns": _Rows(folder, 3),
                 "rows: dpdist's 7 columns": _Rows(folder, 7),
                 "rows: dpdist's 7 columns, NOT NULL (a statement journal)": _Rows(folder, 7, not_null=True)}
        for side in sides.values():
            _prefill(side, prefill)
        rounds: dict[str, list] = {name: [] for name in sides}
        names = list(sides)
        for repeat in range(repeats):
            for name in names[repeat % len(names):] + names[: repeat % len(names)]:  # each side first in turn
                side = sides[name]
                cpu_us, _ = _per_group(side, size, groups, timed=False)
                _, sql_us = _per_group(side, size, groups, timed=True)
                rounds[name].append((cpu_us, sql_us))
        pages = {name: _wal_pages(side, size, max(1, groups // 4)) for name, side in sides.items()}
    rows = []
    for name, measured in rounds.items():
        cpu_us = statistics.median(cpu for cpu, _ in measured)
        sql_us = statistics.median(sql for _, sql in measured)
        rows.append({"side": name, "group": size, "cpu_us_per_group": cpu_us, "cpu_us_per_batch": cpu_us / size,
                     "sql_us_per_group": sql_us, "python_us_per_group": max(0.0, cpu_us - sql_us),
                     "wal_pages_per_group": pages[name], "rounds": [list(pair) for pair in measured]})
    return rows


def _table(rows: list[dict]) -> str:
    lines = ["| side | CPU us a group | a batch | in SQLite | Python | WAL pages a group |", "|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(f"| {row['side']} | {row['cpu_us_per_group']:.0f} | {row['cpu_us_per_batch']:.1f} | "
                     f"{row['sql_us_per_group']:.0f} | {row['python_us_per_group']:.0f} | {row['wal_pages_per_group']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--group", type=int, default=14, help="one-report batches a group commits (default 14)")
    parser.add_argument("--groups", type=int, default=2000, help="groups measured a round (default 2000)")
    parser.add_argument("--prefill", type=int, default=100_000, help="batch rows stored before (default 100000)")
    parser.add_argument("--repeats", type=int, default=3, help="alternating rounds (default 3)")
    parser.add_argument("--retry", action="store_true",
                        help="dpdist's groups hold a batch counted before, as a restart's resent journals do")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    for option in ("group", "groups", "repeats"):
        if getattr(args, option) < 1:
            parser.error(f"--{option} must be >= 1; got {getattr(args, option)}")
    if args.prefill < 0:
        parser.error(f"--prefill must be >= 0; got {args.prefill}")
    rows = measure(args.group, args.groups, args.prefill, args.repeats, args.retry)
    print(_table(rows))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"load": os.getloadavg()[0], "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
