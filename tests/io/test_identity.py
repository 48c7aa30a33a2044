"""File ids, one no-file-twice rule, and O(1) per-file bookkeeping."""

import shutil

import numpy as np
import pytest

from dpdist import io, local
from dpdist.cli import main
from dpdist.errors import IncompatibleStateError, MalformedReportError

SR = local.make("sr", epsilon=1.0)


@pytest.mark.parametrize("suffix", [".bin", ".parquet"])
def test_two_devices_with_identical_reports_are_both_counted(tmp_path, suffix):
    reports = SR.privatize([0.2, 0.5, 0.7], rng=0)
    a, b = tmp_path / f"a{suffix}", tmp_path / f"b{suffix}"
    io.write_reports(a, SR, reports, shuffle=False)  # the same bytes but for the file id
    io.write_reports(b, SR, reports, shuffle=False)
    assert io.read_reports(a).reports.tobytes() == io.read_reports(b).reports.tobytes()
    assert io.file_identities(a) != io.file_identities(b)
    state = tmp_path / "state.bin"
    assert main(["aggregate", str(a), str(b), "--state", str(state), "--no-progress"]) == 0
    assert io.load_state(state).aggregator.n == 6


@pytest.mark.parametrize("suffix", [".bin", ".parquet"])
def test_a_resubmitted_file_collides_on_its_id(tmp_path, suffix):
    a = tmp_path / f"a{suffix}"
    io.write_reports(a, SR, SR.privatize([0.2, 0.5, 0.7], rng=0))
    copy = tmp_path / f"copy{suffix}"
    shutil.copy(a, copy)
    state = tmp_path / "state.bin"
    assert main(["aggregate", str(a), "--state", str(state), "--no-progress"]) == 0
    assert main(["aggregate", str(copy), "--state", str(state), "--no-progress"]) == 2
    assert main(["aggregate", str(copy), "--state", str(state), "--skip-ingested", "--no-progress"]) == 0
    assert io.load_state(state).aggregator.n == 3


def test_a_concatenation_collides_with_each_of_its_parts(tmp_path):
    a, b, both = tmp_path / "a.bin", tmp_path / "b.bin", tmp_path / "both.bin"
    io.write_reports(a, SR, SR.privatize([0.2], rng=0))
    io.write_reports(b, SR, SR.privatize([0.3], rng=1))
    both.write_bytes(a.read_bytes() + b.read_bytes())
    assert set(io.file_identities(both)) == set(io.file_identities(a)) | set(io.file_identities(b))
    state = tmp_path / "state.bin"
    assert main(["aggregate", str(a), "--state", str(state), "--no-progress"]) == 0
    assert main(["aggregate", str(both), "--state", str(state), "--no-progress"]) == 2


def test_files_without_an_id_keep_working_by_content(tmp_path):
    reports = SR.privatize([0.2, 0.5], rng=0)
    legacy = tmp_path / "legacy.bin"
    legacy.write_bytes(io.encode_record(SR, reports))  # a record without a file id (old writer)
    assert io.file_identities(legacy) == [io.file_fingerprint(legacy)]
    state = tmp_path / "state.bin"
    assert main(["aggregate", str(legacy), "--state", str(state), "--no-progress"]) == 0
    assert io.load_state(state).aggregator.n == 2


def test_file_ids_are_checked(tmp_path):
    with pytest.raises(MalformedReportError, match="file id"):
        io.write_reports(tmp_path / "x.bin", SR, SR.privatize([0.1], rng=0), file_id="not-hex")
    assert len(io.new_file_id()) == 32 and io.new_file_id() != io.new_file_id()


def _same_reports_in_two_files(tmp_path):
    """A GRR protocol, a Parquet and a binary file of the same 800 reports (each counted: two files), the reports."""
    proto = local.make("grr", epsilon=1.0, domain_size=8)
    parquet, binary = tmp_path / "r.parquet", tmp_path / "r.bin"
    reports = proto.privatize(np.arange(800) % 8, rng=0)
    io.write_reports(parquet, proto, reports)
    io.write_reports(binary, proto, reports)
    return proto, parquet, binary, reports


def test_the_cluster_back_ends_refuse_a_file_listed_twice_and_count_the_same_reports_in_another(tmp_path):
    """What Dask and Spark share (``dpdist.distributed._parts``), without a cluster: end to end on Dask, the next test
    (whole suite only: it loads Dask and its scheduler, 0.9 CPU-s cold)."""
    pytest.importorskip("pyarrow")
    from dpdist.distributed._parts import file_parts, merge_states, state_of_file_part

    proto, parquet, binary, reports = _same_reports_in_two_files(tmp_path)
    with pytest.raises(IncompatibleStateError, match="twice"):
        file_parts([parquet, binary, parquet], proto, "distributed.aggregate_files")
    protocol, parts = file_parts([parquet, binary], proto, "distributed.aggregate_files")
    merged = merge_states(*(state_of_file_part(protocol, path, group) for path, group in parts))
    assert merged.n == 1600 and np.array_equal(merged.statistic, 2 * proto.aggregator().add(reports).statistic)


@pytest.mark.slow  # Dask and its scheduler: the test above checks the same rule and sum without them
def test_dask_counts_a_file_listed_twice_once(tmp_path):
    pytest.importorskip("dask")
    from dpdist import distributed

    proto, parquet, binary, reports = _same_reports_in_two_files(tmp_path)
    with pytest.raises(IncompatibleStateError, match="twice"):
        distributed.aggregate_files([parquet, binary, parquet], proto)
    merged = distributed.aggregate_files([parquet, binary], proto)
    assert merged.n == 1600


def test_journal_commits_each_file_and_ignores_uncommitted_lines(tmp_path):
    proto = local.make("grr", epsilon=1.0, domain_size=4)
    state = tmp_path / "state.bin"
    saved = io.SavedState(proto.aggregator())
    for i in range(5):
        added = proto.simulate([i % 4], rng=i)
        saved.aggregator.merge(added)
        io.record_ingested(state, saved, [f"id:{i:032x}"], {"file": f"f{i}", "n": 1, "rejected": {}})
    # a run that appended its journal line and died before replacing the state
    with open(io.journal_path(state), "ab") as handle:
        handle.write(b'{"file": "ghost", "keys": ["id:' + b"f" * 32 + b'"], "n": 1, "rejected": {}}\n')
    loaded = io.load_state(state)
    assert loaded.aggregator.n == 5 and len(loaded.ingested) == 5 and f"id:{'f' * 32}" not in loaded.ingested
    # the next commit drops the ghost line
    io.record_ingested(state, loaded, ["id:" + "e" * 32], {"file": "g", "n": 0, "rejected": {}})
    again = io.load_state(state)
    assert len(again.ingested) == 6 and f"id:{'f' * 32}" not in again.ingested


def test_a_corrupted_journal_is_detected(tmp_path):
    proto = local.make("grr", epsilon=1.0, domain_size=4)
    state = tmp_path / "state.bin"
    saved = io.SavedState(proto.aggregator())
    io.record_ingested(state, saved, ["id:" + "a" * 32], {"file": "f", "n": 0, "rejected": {}})
    data = bytearray(io.journal_path(state).read_bytes())
    data[10] ^= 1
    io.journal_path(state).write_bytes(bytes(data))
    with pytest.raises(IncompatibleStateError, match="journal"):
        io.load_state(state)


def test_per_file_commit_does_not_rewrite_earlier_entries(tmp_path, monkeypatch):
    """The state file's size does not grow with the number of files (O(1) per file)."""
    proto = local.make("grr", epsilon=1.0, domain_size=4)
    state = tmp_path / "state.bin"
    saved = io.SavedState(proto.aggregator())
    sizes = []
    for i in range(50):
        io.record_ingested(state, saved, [f"id:{i:032x}"], {"file": f"file-{i}", "n": 0, "rejected": {}})
        sizes.append(state.stat().st_size)
    assert max(sizes) - min(sizes) <= 8  # only the digits of the journal length/CRC change


@pytest.mark.parametrize("suffix", [".parquet", ".bin"])
def test_single_bit_flips_never_change_accepted_reports_silently(tmp_path, suffix):
    """200 random bit flips; each is detected, harmless, or rejects every row -- never a raw pyarrow error."""
    proto = local.make("grr", epsilon=1.0, domain_size=16)
    path = tmp_path / f"r{suffix}"
    io.write_reports(path, proto, proto.privatize(np.arange(2000) % 16, rng=1))
    good = io.read_reports(path, proto)
    raw = path.read_bytes()
    rng = np.random.default_rng(2024)
    outcomes = {"same": 0, "detected": 0, "all rejected": 0}
    for trial in range(200):
        flipped = bytearray(raw)
        flipped[int(rng.integers(len(raw)))] ^= 1 << int(rng.integers(8))
        target = tmp_path / f"flip{trial}{suffix}"
        target.write_bytes(bytes(flipped))
        try:
            batch = io.read_reports(target, proto)
        except MalformedReportError:
            outcomes["detected"] += 1
            continue
        if batch.reports.size == 0 and batch.n_rejected_rows == good.n_read:
            outcomes["all rejected"] += 1
        else:
            assert np.array_equal(batch.reports, good.reports) and batch.rejected == good.rejected, trial
            outcomes["same"] += 1
    assert outcomes["detected"] > 100, outcomes
