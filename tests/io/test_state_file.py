"""Durable aggregator state: save/load round trips, atomic replacement, config checks, corruption."""

from __future__ import annotations

import os

import numpy as np
import pytest

from conformance._examples import CASES, case_id, make, population
from dpdist import io, local
from dpdist._io._atomic import atomic_path, atomic_writer, remove_stale_temporaries, write_text_atomically
from dpdist.errors import IncompatibleStateError


@pytest.mark.parametrize("case", CASES, ids=case_id)
def test_every_protocol_state_round_trips(case, tmp_path):
    protocol = make(case)
    aggregator = protocol.simulate(population(protocol, 300, rng=2), rng=2)
    aggregator.rejected = {"out_of_range": 3}
    path = tmp_path / "state.bin"
    io.save_state(path, aggregator)
    assert io.load_state(path, journal=False).aggregator == aggregator
    assert io.load_state(path, protocol, journal=False).aggregator == aggregator


def test_ingested_fingerprints_are_kept(tmp_path):
    grr = local.make("grr", epsilon=1.0, domain_size=5)
    ingested = {"sha256:00ff": {"file": "a.parquet", "n": 10, "rejected": {}}}
    io.save_state(tmp_path / "state.bin", grr.simulate([0, 1, 2], rng=0), ingested)
    assert io.load_state(tmp_path / "state.bin").ingested == ingested


def test_a_state_of_another_config_is_refused_naming_both(tmp_path):
    saved = local.make("oue", epsilon=1.0, domain_size=8)
    other = local.make("oue", epsilon=2.0, domain_size=8)
    io.save_state(tmp_path / "state.bin", saved.simulate([1, 2, 3], rng=0))
    with pytest.raises(IncompatibleStateError) as error:
        io.load_state(tmp_path / "state.bin", other, journal=False).aggregator
    assert "'epsilon': 1.0" in str(error.value) and "'epsilon': 2.0" in str(error.value)
    loaded = io.load_state(tmp_path / "state.bin", journal=False).aggregator
    with pytest.raises(IncompatibleStateError) as error:
        other.aggregator().merge(loaded)
    assert "'epsilon': 1.0" in str(error.value) and "'epsilon': 2.0" in str(error.value)


def test_corrupted_or_foreign_files_are_refused(tmp_path):
    path = tmp_path / "state.bin"
    io.save_state(path, local.make("grr", epsilon=1.0, domain_size=5).simulate(np.arange(50) % 5, rng=0))
    data = path.read_bytes()
    cases = {
        "truncated": data[:-3],
        "flipped": data[:-1] + bytes([data[-1] ^ 0xFF]),
        "magic": b"XXXXXXXX" + data[8:],
        "version": data[:8] + (7).to_bytes(2, "little") + data[10:],
        "tiny": data[:5],
    }
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(IncompatibleStateError):
            io.load_state(tmp_path / name, journal=False).aggregator


def test_a_failed_save_keeps_the_previous_state_and_leaves_no_temp_file(tmp_path, monkeypatch):
    path = tmp_path / "state.bin"
    grr = local.make("grr", epsilon=1.0, domain_size=5)
    first = grr.simulate(np.arange(50) % 5, rng=0)
    io.save_state(path, first)
    before = path.read_bytes()

    def failing_replace(source, destination):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(OSError, match="disk full"):
        io.save_state(path, grr.simulate(np.arange(80) % 5, rng=1))
    monkeypatch.undo()
    assert path.read_bytes() == before and io.load_state(path, journal=False).aggregator == first
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.bin"]


def test_atomic_writer_keeps_the_destination_mode(tmp_path):
    path = tmp_path / "file"
    path.write_bytes(b"old")
    path.chmod(0o640)
    with atomic_writer(path) as handle:
        handle.write(b"new")
    assert path.read_bytes() == b"new" and (path.stat().st_mode & 0o777) == 0o640


def test_atomic_path_replaces_a_read_only_file_and_a_private_one_is_the_owners_only(tmp_path):
    """The one atomic write, for writers that want a path (Parquet, CSV): the same mode rules as the handle's."""
    path = tmp_path / "table.csv"
    path.write_text("old")
    path.chmod(0o444)
    with atomic_path(path) as temporary:
        temporary.write_text("new")  # written while the destination is read-only: its mode is set after
    assert path.read_text() == "new" and (path.stat().st_mode & 0o777) == 0o444
    assert write_text_atomically(tmp_path / "secret", "token") == tmp_path / "secret"
    with atomic_writer(tmp_path / "secret", private=True) as handle:
        handle.write(b"token")
    assert (tmp_path / "secret").stat().st_mode & 0o077 == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secret", "table.csv"]


def test_stale_temporaries_of_a_gone_writer_are_removed_and_a_live_writers_kept(tmp_path):
    import subprocess
    import sys

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    stale = [tmp_path / f".state.bin.{gone.pid}-00ff.tmp", tmp_path / f".other.{gone.pid}-1a2b.tmp"]
    live = tmp_path / f".state.bin.{os.getppid()}-3c4d.tmp"
    unrelated = tmp_path / ".state.bin.tmp"
    for path in (*stale, live, unrelated):
        path.write_bytes(b"half")
    assert remove_stale_temporaries(tmp_path, "state.bin") == 1 and not stale[0].exists() and stale[1].exists()
    assert remove_stale_temporaries(tmp_path) == 1 and not stale[1].exists()
    assert live.exists() and unrelated.exists()


def test_fingerprints_depend_on_content_only(tmp_path):
    (tmp_path / "a").write_bytes(b"reports")
    (tmp_path / "b").write_bytes(b"reports")
    (tmp_path / "c").write_bytes(b"reportz")
    assert io.file_fingerprint(tmp_path / "a") == io.file_fingerprint(tmp_path / "b")
    assert io.file_fingerprint(tmp_path / "a") != io.file_fingerprint(tmp_path / "c")
    assert io.file_fingerprint(tmp_path / "a").startswith("sha256:")


def test_a_state_whose_header_was_altered_is_refused(tmp_path):
    from dpdist.errors import IncompatibleStateError
    from dpdist.io import load_state

    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    path = tmp_path / "state.bin"
    io.save_state(path, protocol.simulate(np.arange(40) % 4, rng=0))
    data = path.read_bytes()
    tampered = data.replace(b'"n": 40', b'"n": 90')
    assert tampered != data
    path.write_bytes(tampered)
    with pytest.raises(IncompatibleStateError, match="header"):
        load_state(path)
