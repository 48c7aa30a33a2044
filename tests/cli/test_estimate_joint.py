"""``dpdist estimate --state A --state B ...``: one joint estimate of several campaigns, one-line errors naming --state."""

from __future__ import annotations

import csv

import numpy as np
import pytest

from dpdist import io, local
from dpdist.cli import main


def _state(tmp_path, name, epsilon, domain_size, seed, n=4_000):
    items = np.random.default_rng(seed).integers(0, domain_size, n)
    path = tmp_path / f"{name}-{domain_size}-{seed}.bin"
    io.save_state(path, local.make(name, epsilon=epsilon, domain_size=domain_size).simulate(items, rng=seed))
    return str(path)


def test_several_states_give_the_joint_estimate_of_the_library(tmp_path, capsys):
    states = [_state(tmp_path, "grr", 1.0, 8, 1), _state(tmp_path, "oue", 2.0, 8, 2), _state(tmp_path, "olh", 0.5, 8, 3)]
    out = tmp_path / "joint.csv"
    assert main(["estimate", *(word for path in states for word in ("--state", path)), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "joint estimate (likelihood) of 3 campaigns, 12000 report(s)" in printed
    assert "2-LDP" in printed
    expected = local.estimate_jointly([io.load_state(path, journal=False).aggregator for path in states])
    with open(out, newline="") as handle:
        rows = list(csv.DictReader(handle))
    np.testing.assert_array_equal([float(row["frequency"]) for row in rows], expected.frequencies)
    np.testing.assert_array_equal([float(row["low"]) for row in rows], expected.confidence_interval(0.95).low)


def test_the_inverse_variance_baseline_on_the_command_line(tmp_path, capsys):
    states = [_state(tmp_path, "grr", 1.0, 8, 1), _state(tmp_path, "oue", 2.0, 8, 2)]
    assert main(["estimate", "--state", states[0], "--state", states[1], "--joint-method", "inverse-variance"]) == 0
    assert "joint estimate (inverse-variance) of 2 campaigns" in capsys.readouterr().out


@pytest.mark.parametrize("extra, message", [
    (["--joint-method", "mean"], "--joint-method' option must be one of 'likelihood', 'inverse-variance'"),
    (["--postprocess", "clip"], "--postprocess' option needs '--state' given at most 1 time(s)"),
])
def test_bad_joint_options_are_one_line_errors(tmp_path, capsys, extra, message):
    states = [_state(tmp_path, "grr", 1.0, 8, 1), _state(tmp_path, "oue", 2.0, 8, 2)]
    assert main(["estimate", "--state", states[0], "--state", states[1], *extra]) == 2
    error = capsys.readouterr().err.strip()
    assert message in error and len(error.splitlines()) == 1 and "Traceback" not in error


def test_states_of_different_domains_are_refused_naming_the_option_and_the_files(tmp_path, capsys):
    first, second = _state(tmp_path, "grr", 1.0, 8, 1), _state(tmp_path, "oue", 2.0, 9, 2)
    assert main(["estimate", "--state", first, "--state", second]) == 2
    error = capsys.readouterr().err.strip()
    assert error.endswith(f"--state must hold campaigns of one domain: {second} has domain_size=9; "
                          f"allowed is {first}'s domain_size=8.")
    assert len(error.splitlines()) == 1


def test_joint_method_needs_several_states(tmp_path, capsys):
    assert main(["estimate", "--state", _state(tmp_path, "grr", 1.0, 8, 1), "--joint-method", "likelihood"]) == 2
    assert "'--joint-method' option needs '--state' given at least 2 time(s)" in capsys.readouterr().err


def _one_line(capsys) -> str:
    error = capsys.readouterr().err.strip()
    assert len(error.splitlines()) == 1 and "Traceback" not in error, error
    return error.removeprefix("dpdist: error: ")


def test_one_state_given_twice_is_refused_naming_the_option(tmp_path, capsys, monkeypatch):
    """The same path twice, two paths of one file, and a copy (identical contents) are the same campaign counted twice."""
    import shutil

    state = _state(tmp_path, "rws", 1.0, 8, 1)
    assert main(["estimate", "--state", state, "--state", state]) == 2
    assert _one_line(capsys).startswith(f"--state names {state} twice")
    monkeypatch.chdir(tmp_path)
    relative = "./" + state.rsplit("/", 1)[1]
    assert main(["estimate", "--state", state, "--state", relative]) == 2
    assert _one_line(capsys).startswith(f"--state names {relative} twice")
    copy = shutil.copy(state, tmp_path / "copy.bin")
    assert main(["estimate", "--state", state, "--state", str(copy)]) == 2
    assert _one_line(capsys).startswith(f"--state holds {copy}, a state identical to {state} (rws, n=4000)")


def test_two_states_that_ingested_one_report_file_are_refused(tmp_path, capsys):
    """States built by ``dpdist aggregate`` record the report files they ingested: one file in both is refused."""
    import json

    rws = local.make("rws", epsilon=1.0, domain_size=8)
    config = json.dumps(rws.config())
    shared, other = tmp_path / "shared.bin", tmp_path / "other.bin"
    io.write_reports(shared, rws, rws.privatize(np.arange(400) % 8, rng=1))
    io.write_reports(other, rws, rws.privatize(np.arange(300) % 8, rng=2))
    first, second = tmp_path / "first.bin", tmp_path / "second.bin"
    assert main(["aggregate", "--config", config, str(shared), "--state", str(first), "--no-progress"]) == 0
    assert main(["aggregate", "--config", config, str(shared), str(other), "--state", str(second), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["estimate", "--state", str(first), "--state", str(second)]) == 2
    assert _one_line(capsys).startswith(f"--state names {first} and {second}, which both ingested the report file "
                                        f"'{shared}'")


def test_an_empty_state_is_a_one_line_error_naming_the_option(tmp_path, capsys):
    empty = tmp_path / "empty.bin"
    io.save_state(empty, local.make("rws", epsilon=1.0, domain_size=8).aggregator())
    assert main(["estimate", "--state", str(empty)]) == 2
    assert _one_line(capsys).startswith(f"--state {empty} holds no report yet")
    state = _state(tmp_path, "grr", 1.0, 8, 1)
    assert main(["estimate", "--state", state, "--state", str(empty)]) == 2
    assert _one_line(capsys) == f"--state holds {empty}, with no report: leave it out."
