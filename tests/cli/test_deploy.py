"""``dpdist privatize`` -> ``dpdist aggregate`` (incremental, crash-safe) -> ``dpdist estimate --state``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time

import numpy as np
import pytest

from cli_support import run
from dpdist import io, local
from dpdist.cli import main

pa = pytest.importorskip("pyarrow")
import pyarrow.parquet as pq  # noqa: E402

CONFIGS = [
    {"protocol": "oue", "epsilon": 1.0, "domain_size": 16},
    {"protocol": "olh", "epsilon": 2.0, "domain_size": 10},
    {"protocol": "sw", "epsilon": 1.0, "bins": 8},
    {"protocol": "hh", "epsilon": 1.0, "bins": 8, "branching": 2},
]


def _values(protocol, n, seed):
    generator = np.random.default_rng(seed)
    if protocol.tags.kind == "frequency":
        return generator.integers(0, protocol.domain_size, n)
    return generator.beta(2, 5, n)


def _in_memory_reports(protocol, values, seed, block_size):
    """What ``dpdist privatize --seed seed --block-size block_size`` must produce, computed directly:
    block b's reports from the b-th spawned child of the seed, all of them in the order of the seed's
    order stream (``dpdist._rng.order_generator``; a file this small is shuffled in memory)."""
    from dpdist._rng import order_generator

    blocks = [values[start : start + block_size] for start in range(0, values.size, block_size)]
    children = np.random.SeedSequence(seed).spawn(len(blocks))
    reports = np.concatenate(
        [protocol.privatize(block, rng=np.random.default_rng(child)) for block, child in zip(blocks, children)]
    )
    return reports[order_generator(np.random.SeedSequence(seed)).permutation(len(reports))]


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: c["protocol"])
@pytest.mark.slow  # 0.85 CPU-s: command lines end to end
def test_privatize_aggregate_in_three_runs_then_estimate_equals_the_in_memory_result(config, tmp_path, capsys):
    protocol = local.from_config(config)
    (tmp_path / "proto.json").write_text(json.dumps(config))
    expected = protocol.aggregator()
    for part, seed in enumerate((11, 12, 13)):
        values = _values(protocol, 1500, seed)
        data = tmp_path / (f"data{part}.parquet" if part != 1 else f"data{part}.csv")
        if part == 1:
            data.write_text("value\n" + "\n".join(map(repr, values.tolist())) + "\n")
        else:
            pq.write_table(pa.table({"value": values}), data)
        out = tmp_path / f"reports{part}.parquet"
        assert main(["privatize", "--config", str(tmp_path / "proto.json"), "--column", "value", str(data),
                     "--out", str(out), "--seed", str(seed), "--block-size", "400", "--no-progress"]) == 0
        reports = _in_memory_reports(protocol, values, seed, 400)
        np.testing.assert_array_equal(io.read_reports(out).reports, reports)
        expected.add(reports)
        assert main(["aggregate", "--config", str(tmp_path / "proto.json"), str(out),
                     "--state", str(tmp_path / "state.bin"), "--no-progress"]) == 0
    assert io.load_state(tmp_path / "state.bin", journal=False).aggregator == expected
    csv = tmp_path / "estimate.csv"
    assert main(["estimate", "--state", str(tmp_path / "state.bin"), "--out", str(csv),
                 "--plot", str(tmp_path / "estimate.png")]) == 0
    table = np.loadtxt(csv, delimiter=",", skiprows=1)
    if protocol.tags.kind == "frequency":
        estimate = protocol.estimate(expected)  # the same default as Python: none
        np.testing.assert_array_equal(table[:, 1], estimate.frequencies)
        np.testing.assert_array_equal(table[:, 2], estimate.standard_error)
    else:
        estimate = protocol.estimate(expected)
        np.testing.assert_array_equal(table[:, 2], estimate.probabilities)
        np.testing.assert_array_equal(table[:, 0], estimate.edges[:-1])
    assert (tmp_path / "estimate.png").stat().st_size > 0
    assert f"estimate from {expected.n} report(s)" in capsys.readouterr().out


def _write_reports(tmp_path, name, protocol, n, seed):
    path = tmp_path / name
    io.write_reports(path, protocol, protocol.privatize(_values(protocol, n, seed), rng=seed))
    return path


def test_a_file_already_ingested_is_refused_or_skipped(tmp_path, capsys):
    grr = local.make("grr", epsilon=1.0, domain_size=6)
    first = _write_reports(tmp_path, "a.parquet", grr, 200, 1)
    second = _write_reports(tmp_path, "b.bin", grr, 300, 2)
    state = tmp_path / "state.bin"
    config = json.dumps(grr.config())
    assert main(["aggregate", "--config", config, str(first), "--state", str(state), "--no-progress"]) == 0
    before = state.read_bytes()
    copy = tmp_path / "renamed.parquet"
    copy.write_bytes(first.read_bytes())  # same content under another name
    for files in ([first], [second, copy], [second, second]):
        assert main(["aggregate", *map(str, files), "--state", str(state), "--no-progress"]) == 2
        assert "already ingested" in capsys.readouterr().err
        assert state.read_bytes() == before  # nothing added
    assert main(["aggregate", str(second), str(copy), "--state", str(state), "--skip-ingested", "--no-progress"]) == 0
    saved = io.load_state(state)
    assert saved.aggregator.n == 500 and len(saved.ingested) == 2


def test_reports_of_another_config_are_counted_as_rejected(tmp_path, capsys):
    grr = local.make("grr", epsilon=1.0, domain_size=6)
    other = local.make("grr", epsilon=3.0, domain_size=6)
    own = _write_reports(tmp_path, "own.parquet", grr, 100, 1)
    foreign = _write_reports(tmp_path, "foreign.parquet", other, 40, 2)
    state = tmp_path / "state.bin"
    # a file that contributes nothing is not added and the run says so with its exit status
    assert main(["aggregate", str(own), str(foreign), "--state", str(state), "--no-progress"]) == 3
    aggregator = io.load_state(state, journal=False).aggregator
    assert aggregator.n == 100 and aggregator.rejected == {}
    err = capsys.readouterr().err
    assert "own.parquet: accepted 100 report(s)" in err
    assert "foreign.parquet: not added: 0 valid report(s), rejected {'other_config': 40}" in err
    # ... and which entries of the configs differ (it did not say: labels given only to privatize were a puzzle)
    assert "its config differs from the state's (epsilon: file 3.0 vs state 1.0)" in err
    # not recorded as ingested: the user can opt in on a re-run
    assert main(["aggregate", str(foreign), "--state", str(state), "--no-progress", "--allow-rejected"]) == 0
    aggregator = io.load_state(state, journal=False).aggregator
    assert aggregator.n == 100 and aggregator.rejected == {"other_config": 40}


def test_a_state_of_another_config_is_refused(tmp_path, capsys):
    grr = local.make("grr", epsilon=1.0, domain_size=6)
    io.save_state(tmp_path / "state.bin", grr.simulate([0, 1], rng=0))
    reports = _write_reports(tmp_path, "r.parquet", grr, 10, 1)
    other = json.dumps({"protocol": "grr", "epsilon": 2.0, "domain_size": 6})
    assert main(["aggregate", "--config", other, str(reports), "--state", str(tmp_path / "state.bin")]) == 2
    assert "differs" in capsys.readouterr().err


@pytest.mark.slow
def test_sigkill_during_aggregate_leaves_the_previous_state_intact(tmp_path):
    grr = local.make("grr", epsilon=1.0, domain_size=6)
    first = _write_reports(tmp_path, "a.parquet", grr, 200, 1)
    second = _write_reports(tmp_path, "b.parquet", grr, 300, 2)
    state = tmp_path / "state.bin"
    assert main(["aggregate", str(first), "--state", str(state), "--no-progress"]) == 0
    before = state.read_bytes()
    # the hook pauses after the new state is written and fsynced, before the rename: the worst moment
    from crash_hooks import command

    process = subprocess.Popen(
        command("aggregate", str(second), "--state", str(state), "--no-progress", pause_before_rename=60),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not any(p.name.endswith(".tmp") and p.stat().st_size > 0 for p in tmp_path.iterdir()):
            assert process.poll() is None and time.monotonic() < deadline, "aggregate never wrote its temp file"
            time.sleep(0.05)
        time.sleep(0.2)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        if process.poll() is None:  # a failed assertion above: the child must not outlive the test
            process.kill()
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    assert state.read_bytes() == before
    assert io.load_state(state, journal=False).aggregator.n == 200
    # the run can simply be repeated: the killed file was not recorded, so it is added once
    assert main(["aggregate", str(second), "--state", str(state), "--no-progress"]) == 0
    assert io.load_state(state, journal=False).aggregator.n == 500
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # the killed run's temp file is gone


def test_estimate_modes_are_exclusive(tmp_path, capsys):
    grr = local.make("grr", epsilon=1.0, domain_size=6)
    io.save_state(tmp_path / "state.bin", grr.simulate(np.arange(60) % 6, rng=0))
    state, data = str(tmp_path / "state.bin"), str(tmp_path / "data.csv")
    (tmp_path / "data.csv").write_text("x\n1\n")
    assert main(["estimate", data, "--state", state]) == 2
    assert main(["estimate", "--state", state, "--epsilon", "1"]) == 2
    assert main(["estimate", data, "--column", "x"]) == 2
    assert main(["estimate", data, "--column", "x", "--protocol", "grr", "--epsilon", "1", "--out", "e.csv"]) == 2
    errors = capsys.readouterr().err
    assert "'--state' option cannot be used with 'FILE'" in errors and "'FILE' argument needs '--protocol'" in errors
    assert "option needs '--state'" in errors and len(errors.strip().splitlines()) == 4


def test_privatize_reports_bad_input(tmp_path, capsys):
    pq.write_table(pa.table({"value": [0, 1, None, 2]}), tmp_path / "data.parquet")
    config = json.dumps({"protocol": "grr", "epsilon": 1.0, "domain_size": 3})
    out = tmp_path / "r.bin"
    # an empty cell is refused unless --missing drop says to leave its row out, before any report
    assert main(["privatize", "--config", config, "--column", "value", str(tmp_path / "data.parquet"),
                 "--out", str(out), "--seed", "1"]) == 2
    refused = capsys.readouterr().err
    assert "has 1 missing value(s) (empty cells). Give '--missing drop'" in refused and not out.exists()
    assert main(["privatize", "--config", config, "--column", "value", str(tmp_path / "data.parquet"),
                 "--out", str(out), "--seed", "1", "--missing", "drop"]) == 0
    assert "1 row(s) of" in capsys.readouterr().out
    assert io.count_reports(out) == 3
    assert main(["privatize", "--config", config, "--column", "nope", str(tmp_path / "data.parquet"),
                 "--out", str(out)]) == 2
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    assert main(["privatize", "--config", config, "--column", "value", str(tmp_path / "data.csv"),
                 "--out", str(out)]) == 2
    assert main(["privatize", "--config", "{not json", "--column", "value", str(tmp_path / "data.parquet"),
                 "--out", str(out)]) == 2
    assert main(["privatize", "--config", config, "--column", "value", str(tmp_path / "data.parquet"),
                 "--out", str(out), "--seed", "1", "--secure"]) == 2
    pq.write_table(pa.table({"value": [0, 5]}), tmp_path / "outside.parquet")
    assert main(["privatize", "--config", config, "--column", "value", str(tmp_path / "outside.parquet"),
                 "--out", str(tmp_path / "x.bin")]) == 2
    assert not (tmp_path / "x.bin").exists()
    errors = capsys.readouterr().err
    assert "--column must be one of" in errors and "JSON" in errors and "--secure" in errors


def test_csv_column_whose_first_block_is_integral_still_reads_a_later_decimal(tmp_path, monkeypatch):
    from dpdist._io import _columns

    # pyarrow's blocks of 64 KiB instead of 16 MiB: the same later-block decimal with 40,000 rows, not 9 million
    monkeypatch.setattr(_columns, "CSV_BLOCK_BYTES", 1 << 16)
    path = tmp_path / "late-decimal.csv"
    path.write_text("x\n" + "1\n" * 40_000 + "2.5\n")  # > the first block
    chunks = [values for values, _ in _columns.iter_column(path, "x")]
    values = np.concatenate(chunks)
    assert values.size == 40_001 and values[-1] == 2.5


def test_cli_reports_unwritable_paths_without_a_traceback(tmp_path, capsys):
    from dpdist.cli import main

    assert main(["reproduce", "toy", "--out", "/proc/dpdist-cannot-write-here"]) == 2
    assert "dpdist: error:" in capsys.readouterr().err


def test_negative_seeds_are_rejected_by_the_cli(capsys):
    from dpdist.cli import main

    with pytest.raises(SystemExit) as exit_info:
        main(["demo", "--seed", "-1"])
    assert exit_info.value.code == 2
    assert "non-negative" in capsys.readouterr().err


def test_state_mode_refuses_one_shot_options(tmp_path):
    from dpdist.cli import main
    from dpdist.errors import InvalidParameterError  # noqa: F401 (main prints it)

    assert main(["estimate", "--state", str(tmp_path / "missing.bin"), "--bins", "8"]) == 2


def test_aggregate_says_when_no_state_was_written(tmp_path, capsys):
    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 4}
    protocol = local.from_config(config)
    with io.ReportWriter(tmp_path / "r.bin", protocol) as writer:
        writer.write(protocol.privatize(np.array([0, 1, 2]), rng=1))
    other = json.dumps({**config, "epsilon": 2.0})
    state = tmp_path / "state.bin"
    assert main(["aggregate", "--config", other, str(tmp_path / "r.bin"), "--state", str(state), "--no-progress"]) == 3
    assert "no state written" in capsys.readouterr().out and not state.exists()


def test_privatize_skips_and_counts_words_outside_a_pem_alphabet(data, capsys):
    config = '{"protocol": "pem", "epsilon": 1, "alphabet": "aelp"}'  # apple, pear (not plum, fig)
    status, out, err = run(capsys, "privatize", data / "d.csv", "--column", "word", "--config", config,
                           "--out", data / "r.bin", "--no-progress")
    assert status == 0, err
    kept = int(out.split()[1])
    assert "word(s) with a character outside the alphabet rejected" in out and 0 < kept < 600
