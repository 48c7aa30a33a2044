"""``dpdist backup``: an online copy of a SQLite database that restores; and the restore drill on SQLite and PostgreSQL.

The drill backs up a running ``dpdist serve`` while devices submit (``dpdist backup``; PostgreSQL: ``pg_dump
--format=custom``), SIGKILLs it, restores the backup to a fresh database (``dpdist backup`` again; ``pg_restore``) and
starts the service on it, the devices still retrying what was not acknowledged. A restore returns the database to the
backup's snapshot: every batch acknowledged before the backup began is counted, the batches acknowledged after the
snapshot are not (the devices' retries cover only what was never acknowledged), and a device that kept its batches
(``dpdist submit``'s journal) and sends them all again gets the lost ones counted and the ones of the backup refused as
copies: then every batch is counted exactly once and the estimate equals a one-process aggregation.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from dpdist import io, local
from dpdist.cli._backup import backup_sqlite
from dpdist.client import AdminClient, Client
from dpdist.errors import InvalidParameterError
import server_zygote
from serve_support import ADMIN_TOKEN, ServerProcess, database_url, shared_cluster, start_clients


def _database_with_unwritten_wal(path) -> sqlite3.Connection:
    """A WAL database whose last commits are only in its ``-wal`` file (the open connection keeps it unchecked)."""
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA wal_autocheckpoint=0")
    connection.execute("CREATE TABLE t (x INTEGER)")
    connection.executemany("INSERT INTO t VALUES (?)", [(value,) for value in range(500)])
    return connection


def test_backup_copies_the_commits_still_in_the_wal_while_the_writer_holds_it(tmp_path):
    writer = _database_with_unwritten_wal(tmp_path / "live.sqlite")
    try:
        assert (tmp_path / "live.sqlite-wal").stat().st_size > 0
        copied = backup_sqlite(str(tmp_path / "live.sqlite"), str(tmp_path / "copy.sqlite"))
        writer.execute("INSERT INTO t VALUES (500)")  # the writer goes on after the copy
    finally:
        writer.close()
    copy = sqlite3.connect(tmp_path / "copy.sqlite")
    assert copy.execute("SELECT COUNT(*), SUM(x) FROM t").fetchone() == (500, sum(range(500)))
    assert copy.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # stands alone
    assert copied["bytes"] == (tmp_path / "copy.sqlite").stat().st_size
    assert not (tmp_path / "copy.sqlite-wal").exists()
    assert [path.name for path in tmp_path.iterdir() if path.name.endswith(".tmp")] == []


@pytest.mark.parametrize("case", ["postgresql", "missing", "existing", "leftover_wal", "no_folder"])
def test_backup_refuses_what_it_cannot_copy_safely(tmp_path, case):
    (tmp_path / "db.sqlite").write_bytes(b"")
    sqlite3.connect(tmp_path / "db.sqlite").execute("CREATE TABLE t (x)").connection.close()
    source, destination = str(tmp_path / "db.sqlite"), str(tmp_path / "copy.sqlite")
    if case == "postgresql":
        source, match = "postgresql://dpdist:hunter2hunter2@db/dpdist", "pg_dump"
    elif case == "missing":
        source, match = str(tmp_path / "nothing.sqlite"), "existing SQLite file"
    elif case == "existing":
        (tmp_path / "copy.sqlite").write_bytes(b"keep")
        match = "does not exist"
    elif case == "leftover_wal":
        (tmp_path / "copy.sqlite-wal").write_bytes(b"old")
        match = "-wal and -shm files aside"
    else:
        destination, match = str(tmp_path / "no" / "copy.sqlite"), "existing folder"
    with pytest.raises(InvalidParameterError, match=match) as refused:
        backup_sqlite(source, destination)
    assert "hunter2" not in str(refused.value)
    if case == "existing":
        assert (tmp_path / "copy.sqlite").read_bytes() == b"keep"


def test_backup_command_prints_one_line_and_refuses_with_status_2(tmp_path, capsys):
    from dpdist.cli import main

    sqlite3.connect(tmp_path / "db.sqlite").execute("CREATE TABLE t (x)").connection.close()
    assert main(["backup", str(tmp_path / "db.sqlite"), str(tmp_path / "copy.sqlite")]) == 0
    assert "integrity ok" in capsys.readouterr().out
    assert main(["backup", str(tmp_path / "db.sqlite"), str(tmp_path / "copy.sqlite")]) == 2
    assert capsys.readouterr().err.startswith("dpdist: error: The 'destination' parameter of dpdist backup")


# --------------------------------------------------------------------------------------------------- the restore drill
CONFIG = {"protocol": "grr", "epsilon": 1.0, "domain_size": 16}
DEVICES, BATCHES, ROWS = 4, 20, 200
#: the index of each device's first batch sent only after the backup
HOLD = 12


def _plan(seed: int):
    """Per device, its batches (batch id, body); and the one-process aggregate of all of them."""
    protocol = local.from_config(CONFIG)
    rng = np.random.default_rng(seed)
    expected = protocol.aggregator()
    plan = []
    for device in range(DEVICES):
        batches = []
        for index in range(BATCHES):
            reports = protocol.privatize(rng.integers(0, 16, ROWS), rng=rng)
            expected.add(reports)
            batches.append((f"device{device}-batch{index}", io.encode_record(protocol, reports)))
        plan.append(batches)
    return plan, expected


def _wait_for(acks: dict, count: int, threads) -> None:
    while len(acks) < count and any(thread.is_alive() for thread in threads):
        time.sleep(0.01)  # polling every 2 ms cost 2 % of a core


def _back_up(kind: str, url: str, folder) -> str:
    """Back up the running service's database the documented way; the backup's path."""
    if kind == "sqlite":
        path = str(folder / "backup.sqlite")
        server_zygote.run([sys.executable, "-m", "dpdist.cli", "backup", url, path], check=True, timeout=300)
        return path
    path = str(folder / "backup.dump")
    subprocess.run([shared_cluster().bin / "pg_dump", "--format=custom", f"--file={path}", url], check=True,
                   capture_output=True)
    return path


def _restore(kind: str, backup: str, folder) -> str:
    """Restore ``backup`` to a fresh database the documented way; the fresh database's URL."""
    if kind == "sqlite":
        path = str(folder / "restored.sqlite")
        server_zygote.run([sys.executable, "-m", "dpdist.cli", "backup", backup, path], check=True, timeout=300)
        return path
    url = shared_cluster().new_database()
    subprocess.run([shared_cluster().bin / "pg_restore", "--exit-on-error", "--no-owner", f"--dbname={url}", backup],
                   check=True, capture_output=True)
    return url


def _counted_batch_ids(kind: str, url: str) -> set[str]:
    statement = "SELECT batch_id FROM batches"
    if kind == "sqlite":
        with sqlite3.connect(url) as connection:
            return {row[0] for row in connection.execute(statement)}
    import psycopg

    with psycopg.connect(url) as connection:
        return {row[0] for row in connection.execute(statement)}


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_restore_drill_counts_every_acknowledged_batch_once(kind, tmp_path):
    plan, expected = _plan(seed=20261129)
    total = DEVICES * BATCHES
    with database_url(kind, tmp_path) as url:
        server = ServerProcess(url, log_path=tmp_path / "server.log").start()
        stop, backed_up = threading.Event(), threading.Event()
        try:
            with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
                admin.create_campaign("drill", CONFIG)
                admin.open_campaign("drill")
            def send(device, batch):
                # each device sends its batches from HOLD on only after the backup: some are acknowledged after the
                # snapshot however fast this machine is
                if batch[0].endswith(f"-batch{HOLD}"):
                    backed_up.wait(timeout=600)
                return device.submit_body("drill", *batch)

            acks, failures, threads = start_clients(server.url, plan, send, stop=stop)
            _wait_for(acks, total * 3 // 10, threads)
            before_backup = set(acks)
            backup = _back_up(kind, url, tmp_path)  # under load: the devices go on sending
            backed_up.set()
            _wait_for(acks, max(total * 6 // 10, len(acks) + 2 * DEVICES), threads)  # some after the snapshot
            server.kill()
            at_kill = set(acks)
            server.db_url = _restore(kind, backup, tmp_path)
            in_backup = _counted_batch_ids(kind, server.db_url)
            server.start()
            for thread in threads:  # the devices resend what was never acknowledged, to the restored service
                thread.join(timeout=600)
            assert not failures and not any(thread.is_alive() for thread in threads), failures
            assert len(acks) == total
            assert before_backup <= in_backup, (len(before_backup), len(in_backup))
            lost = at_kill - in_backup  # acknowledged after the snapshot: the restore loses them
            assert lost, (len(in_backup), len(at_kill))
            with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
                assert admin.campaign("drill")["batches"] == total - len(lost)
                # every device sends its whole journal again: the backup's batches are copies, the lost ones count
                with Client(server.url) as device:
                    again = {batch_id: device.submit_body("drill", batch_id, body)
                             for batches in plan for batch_id, body in batches}
                summary = admin.campaign("drill")
                estimate = admin.estimate("drill", postprocess="none")
        finally:
            stop.set()
            backed_up.set()
            server.stop()
    assert all(again[batch_id]["duplicate"] for batch_id in before_backup)
    assert {batch_id for batch_id, ack in again.items() if not ack["duplicate"]} == lost
    assert summary["batches"] == total and summary["n"] == expected.n == total * ROWS
    one_process = local.from_config(CONFIG).estimate(expected, postprocess="none")
    assert np.array_equal(np.array(estimate["estimate"]["frequencies"]), one_process.frequencies)
