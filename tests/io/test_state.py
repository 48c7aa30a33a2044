"""Saving a state is one atomic step; estimates need no journal; concatenations.

``Aggregator.save`` and ``io.save_state`` replaced the ingest journal, then the
state: a SIGKILL between the two left a journal that no longer matched the state's
committed length and CRC, and the state never loaded again.  ``dpdist estimate
--state`` needed the journal although an estimate does not use it.  And under
``--skip-ingested`` a binary file concatenating an ingested file and a new one was
skipped whole: the new file's reports were silently lost.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from dpdist import io, local
from crash_hooks import preamble
from dpdist.cli import main

GRR = local.make("grr", epsilon=1.0, domain_size=4)
OLD_ID, NEW_ID = "id:" + "a" * 32, "id:" + "b" * 32

CHILD = textwrap.dedent(
    """
    import sys
    import numpy as np
    from dpdist import io, local

    path, how = sys.argv[1], sys.argv[2]
    new = local.make("grr", epsilon=1.0, domain_size=4).simulate(np.arange(80) % 4, rng=1)
    if how == "save_state":
        io.save_state(path, new, {"id:" + "b" * 32: {"file": "b.bin", "n": 80, "rejected": {}}})
    else:
        io.save_state(path, new)
    """
)


def _old_state(path):
    """A state as ``dpdist aggregate`` leaves it: 40 reports, one file committed in the journal."""
    saved = io.SavedState(GRR.aggregator())
    saved.aggregator.merge(GRR.simulate(np.arange(40) % 4, rng=0))
    io.record_ingested(path, saved, [OLD_ID], {"file": "a.bin", "n": 40, "rejected": {}})
    assert io.journal_path(path).stat().st_size > 0
    return saved


def _kill_before_the_state_is_renamed(tmp_path, state, how):
    """Run a save in a child that pauses before each rename; SIGKILL it while the state's temp file waits."""
    process = subprocess.Popen(
        [sys.executable, "-c", preamble(pause_before_rename=20) + CHILD, str(state), how],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )
    prefix, journal_prefix = f".{state.name}.", f".{io.journal_path(state).name}."
    try:
        deadline = time.monotonic() + 120
        while not any(
            p.name.startswith(prefix) and not p.name.startswith(journal_prefix) and p.name.endswith(".tmp")
            and p.stat().st_size > 0
            for p in tmp_path.iterdir()
        ):
            assert process.poll() is None, process.stderr.read().decode()
            assert time.monotonic() < deadline, "the child never wrote the state's temp file"
            time.sleep(0.05)
        time.sleep(0.2)  # the temp file is written and fsynced: the child sleeps before its rename
        os.kill(process.pid, signal.SIGKILL)
    finally:
        if process.poll() is None:  # a failed assertion above: the child must not outlive the test
            process.kill()
        process.wait(timeout=60)
        process.stderr.close()
    assert process.returncode == -signal.SIGKILL


@pytest.mark.slow  # a Python subprocess SIGKILLed mid-save each (0.3-0.5 CPU-s)
@pytest.mark.parametrize("how", ["save_state", "save_state of no file"])
def test_sigkill_while_saving_leaves_a_state_that_loads_with_its_own_journal(tmp_path, how):
    state = tmp_path / "state.bin"
    old = _old_state(state)
    _kill_before_the_state_is_renamed(tmp_path, state, how)
    loaded = io.load_state(state)  # on main: "The ingest journal ... is truncated or corrupted"
    assert loaded.aggregator == old.aggregator and io.load_state(state, journal=False).aggregator == old.aggregator
    assert set(loaded.ingested) == {OLD_ID}
    # and the state keeps working: one more file is committed on top of it
    loaded.aggregator.merge(GRR.simulate([0, 1], rng=2))
    io.record_ingested(state, loaded, ["id:" + "c" * 32], {"file": "c.bin", "n": 2, "rejected": {}})
    again = io.load_state(state)
    assert again.aggregator.n == 42 and set(again.ingested) == {OLD_ID, "id:" + "c" * 32}


def test_a_saved_state_is_self_contained_and_its_records_move_to_the_journal(tmp_path):
    state = tmp_path / "state.bin"
    _old_state(state)
    aggregator = GRR.simulate(np.arange(80) % 4, rng=1)
    records = {NEW_ID: {"file": "b.bin", "n": 80, "rejected": {}}, "sha256:" + "0" * 64: {"file": "c.bin", "n": 0, "rejected": {}}}
    io.save_state(state, aggregator, records)
    assert not io.journal_path(state).exists()  # the old journal is no longer part of the state
    saved = io.load_state(state)
    assert saved.aggregator == aggregator and saved.ingested == records
    # a journal left by a run killed after the rename (before removing it) is not read ...
    io.journal_path(state).write_bytes(b'{"file": "ghost", "keys": ["id:' + b"f" * 32 + b'"], "n": 1, "rejected": {}}\n')
    saved = io.load_state(state)
    assert saved.ingested == records
    # ... and the next commit replaces it with the header's records and the new file's line
    io.record_ingested(state, saved, ["id:" + "d" * 32], {"file": "d.bin", "n": 0, "rejected": {}})
    reloaded = io.load_state(state)
    assert reloaded.ingested == {**records, "id:" + "d" * 32: {"file": "d.bin", "n": 0, "rejected": {}}}
    assert reloaded.pending == {}  # the header holds no record any more: commits stay O(1)
    assert b"ghost" not in io.journal_path(state).read_bytes()


def test_estimate_from_a_state_does_not_need_the_journal(tmp_path, capsys):
    reports = tmp_path / "r.bin"
    io.write_reports(reports, GRR, GRR.privatize(np.arange(200) % 4, rng=0))
    state = tmp_path / "state.bin"
    assert main(["aggregate", str(reports), "--state", str(state), "--no-progress"]) == 0
    assert main(["estimate", "--state", str(state), "--out", str(tmp_path / "with.csv")]) == 0
    io.journal_path(state).unlink()
    capsys.readouterr()
    assert main(["estimate", "--state", str(state), "--out", str(tmp_path / "without.csv")]) == 0
    assert (tmp_path / "with.csv").read_text() == (tmp_path / "without.csv").read_text()
    assert "estimate from 200 report(s)" in capsys.readouterr().out
    assert io.load_state(state, journal=False).aggregator.n == 200
    # adding files still needs the journal: without it dpdist cannot tell which files were counted
    assert main(["aggregate", str(reports), "--state", str(state), "--no-progress"]) == 2
    assert "journal" in capsys.readouterr().err


def _binary(path, values, seed):
    io.write_reports(path, GRR, GRR.privatize(np.asarray(values), rng=seed))
    return path


def test_skip_ingested_adds_exactly_the_new_part_of_a_concatenation(tmp_path, capsys):
    a = _binary(tmp_path / "a.bin", np.arange(100) % 4, 1)
    b = _binary(tmp_path / "b.bin", np.arange(60) % 2, 2)
    both = tmp_path / "both.bin"
    both.write_bytes(a.read_bytes() + b.read_bytes())
    state = tmp_path / "state.bin"
    assert main(["aggregate", str(a), "--state", str(state), "--no-progress"]) == 0
    before = state.read_bytes()
    # without --skip-ingested the file is refused, and the message says what --skip-ingested would do
    assert main(["aggregate", str(both), "--state", str(state), "--no-progress"]) == 2
    assert "add the others" in capsys.readouterr().err and state.read_bytes() == before
    assert main(["aggregate", str(both), "--state", str(state), "--skip-ingested", "--no-progress"]) == 0
    err = capsys.readouterr().err
    assert "both.bin: skipping the records of 1 file id(s) already ingested" in err and "accepted 60" in err
    expected = GRR.aggregator().add_batch(io.read_reports(a, GRR)).add_batch(io.read_reports(b, GRR))
    saved = io.load_state(state)
    assert saved.aggregator == expected  # on main: n = 100, b's 60 reports silently dropped
    assert set(saved.ingested) == set(io.file_identities(both))
    # everything is counted now: a re-run skips the whole file, b alone too
    assert main(["aggregate", str(both), str(b), "--state", str(state), "--skip-ingested", "--no-progress"]) == 0
    assert io.load_state(state).aggregator == expected


def test_a_concatenation_with_records_without_an_id_is_refused_loudly(tmp_path, capsys):
    a = _binary(tmp_path / "a.bin", np.arange(100) % 4, 1)
    legacy = io.encode_record(GRR, GRR.privatize(np.arange(30) % 4, rng=3))  # an old writer's record: no id
    mixed = tmp_path / "mixed.bin"
    mixed.write_bytes(a.read_bytes() + legacy)
    state = tmp_path / "state.bin"
    assert main(["aggregate", str(a), "--state", str(state), "--no-progress"]) == 0
    before = state.read_bytes()
    assert main(["aggregate", str(mixed), "--state", str(state), "--skip-ingested", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert "mixed.bin" in err and "without a file id" in err and "Nothing was added" in err
    assert state.read_bytes() == before and io.load_state(state).aggregator.n == 100


def _legacy_state(path, aggregator, ingested):
    """A state file as dpdist wrote it before the ingest journal: the ingested files in the header."""
    import struct
    import zlib

    payload = aggregator.statistic.astype("<i8").tobytes()
    fields = {
        "config": aggregator.config, "n": aggregator.n, "rejected": {}, "dtype": "<i8",
        "size": aggregator.statistic.size, "crc32": zlib.crc32(payload), "ingested": ingested,
    }
    fields["header_crc32"] = zlib.crc32(json.dumps(fields, sort_keys=True).encode())
    header = json.dumps(fields, sort_keys=True).encode()
    path.write_bytes(struct.pack("<8sHI", b"DPDISTS\n", 1, len(header)) + header + payload)


def test_files_recorded_in_the_header_survive_the_next_commit(tmp_path):
    """Records in the header (old states; save_state now) move to the journal: none is forgotten."""
    state = tmp_path / "state.bin"
    aggregator = GRR.simulate([0, 1, 2], rng=0)
    _legacy_state(state, aggregator, {OLD_ID: {"file": "a.bin", "n": 3, "rejected": {}}})
    saved = io.load_state(state)
    assert saved.aggregator == aggregator and set(saved.ingested) == {OLD_ID}
    io.record_ingested(state, saved, [NEW_ID], {"file": "b.bin", "n": 0, "rejected": {}})
    # on main the rewritten header dropped "ingested": a.bin could then be counted a second time
    assert set(io.load_state(state).ingested) == {OLD_ID, NEW_ID}
    prefix = state.read_bytes()
    header = json.loads(prefix[14 : 14 + int.from_bytes(prefix[10:14], "little")])
    assert "ingested" not in header and header["journal"]["entries"] == 2
