"""``dpdist privatize --memo FILE``: one device's longitudinal reports through its saved memo."""

from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from dpdist import io, local
from dpdist._io._atomic import exclusive_lock
from dpdist.cli import main

LONGITUDINAL = [
    {"protocol": "l-grr", "epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 8},
    {"protocol": "l-osue", "epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 8},
    {"protocol": "loloha", "epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 8},
    {"protocol": "dbitflippm", "epsilon": 2.0, "domain_size": 8, "sampled_bits": 2},
]


def stream(path) -> dict:
    """The one memo stream of the privacy ledger kept in ``path`` (its client state, as ``to_dict``)."""
    ledger = json.loads(path.read_text())
    assert ledger["format"] == "dpdist-ledger"
    (only,) = ledger["streams"].values()
    return {key: value for key, value in only.items() if key not in ("collector", "reports")}


def budget_for(config) -> tuple[str, ...]:
    """A budget for many test reports; dBitFlipPM repeats its memo, so only 'stable' accounting lets it report twice."""
    stable = ("--accounting", "stable") if config["protocol"] == "dbitflippm" else ()
    return ("--budget", "1000", *stable)


def privatize(tmp_path, config, values, out, *extra):
    data = tmp_path / "device.csv"
    data.write_text("value\n" + "\n".join(map(str, values)) + "\n")
    return main(["privatize", "--config", json.dumps(config), "--column", "value", str(data), "--out", str(out),
                 "--no-progress", *extra])


@pytest.mark.parametrize("config", LONGITUDINAL, ids=lambda c: c["protocol"])
def test_memo_reports_equal_the_device_clients_and_rounds_reuse_the_memo(config, tmp_path, capsys):
    protocol = local.from_config(config)
    memo = tmp_path / "device.json"
    values = [3, 3, 5, 3]
    assert privatize(tmp_path, config, values, tmp_path / "day1.parquet", "--memo", str(memo), "--seed", "7",
                     *budget_for(config)) == 0
    assert "one device, its memo saved in" in capsys.readouterr().out

    # the same draws as the device's own client with block 0's generator of seed 7
    client = protocol.client()
    generator = np.random.default_rng(np.random.SeedSequence(7).spawn(1)[0])
    expected = np.asarray([client.report(value, generator) for value in values])
    from dpdist._rng import order_generator  # written in the order of the seed's order stream

    expected = expected[order_generator(np.random.SeedSequence(7)).permutation(len(values))]
    written = io.read_reports(tmp_path / "day1.parquet", protocol).reports
    np.testing.assert_array_equal(written.reshape(expected.shape), expected)
    assert stream(memo) == json.loads(json.dumps(client.to_dict())) and stream(memo)["seeded"] is True

    # later rounds keep every permanent response; a new value adds its own
    first = stream(memo)
    for day in range(2, 5):
        assert privatize(tmp_path, config, [3, 5], tmp_path / f"day{day}.parquet", "--memo", str(memo), "--seed", str(day)) == 0
        assert stream(memo) == first
    assert privatize(tmp_path, config, [6], tmp_path / "day5.parquet", "--memo", str(memo), "--seed", "5") == 0
    later = stream(memo)
    assert later.get("randomness") == first.get("randomness")
    assert {key: value for key, value in later["memo"].items() if key in first["memo"]} == first["memo"]
    # the device's files aggregate like any other
    assert main(["aggregate", "--config", json.dumps(config), *map(str, sorted(tmp_path.glob("day*.parquet"))),
                 "--state", str(tmp_path / "state.bin")]) == 0
    assert "holds 11 report(s)" in capsys.readouterr().out
    assert main(["estimate", "--state", str(tmp_path / "state.bin")]) == 0
    out = capsys.readouterr().out
    assert f"eps_1 = {protocol.epsilon_per_report:.6g} per report" in out
    # the guarantee over values that change is stated against every history, for T reports
    assert f"T=10: {protocol.epsilon_over_changes(10):.6g}" in out and "any two histories" in out


def test_the_memo_is_saved_before_any_report_is_written(tmp_path, monkeypatch):
    config = LONGITUDINAL[0]
    memo = tmp_path / "device.json"
    seen = []
    original = io.ReportWriter.write

    def write(self, reports):
        seen.append(stream(memo)["memo"])
        return original(self, reports)

    monkeypatch.setattr(io.ReportWriter, "write", write)
    assert privatize(tmp_path, config, [2, 7], tmp_path / "r.parquet", "--memo", str(memo)) == 0
    assert seen and set(seen[0]) == {"2", "7"}


def test_without_memo_each_row_is_a_new_user_and_the_summary_says_so(tmp_path, capsys):
    assert privatize(tmp_path, LONGITUDINAL[0], [3, 3], tmp_path / "r.parquet") == 0
    assert "each row randomized as a different user (one device over rounds: --memo FILE)" in capsys.readouterr().out
    assert privatize(tmp_path, {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}, [3], tmp_path / "g.parquet") == 0
    assert "different user" not in capsys.readouterr().out


def test_bad_memos_are_refused_in_one_line_naming_the_option(tmp_path, capsys):
    def run_cli(*arguments: str) -> subprocess.CompletedProcess:  # the command in this process: its status and lines
        code = main(list(arguments))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["dpdist", *arguments], code, out, err)

    data = tmp_path / "d.csv"
    data.write_text("value\n3\n")
    l_grr, other = json.dumps(LONGITUDINAL[0]), json.dumps({**LONGITUDINAL[0], "epsilon_1": 2.0})
    memo = tmp_path / "m.json"
    base = ["privatize", "--column", "value", str(data), "--out", str(tmp_path / "r.parquet"), "--no-progress"]
    assert run_cli(*base, "--config", l_grr, "--memo", str(memo)).returncode == 0
    saved = memo.read_text()

    cases = {
        "another config": ([*base, "--config", other, "--memo", str(memo)], "does not report under the new parameters"),
        "not longitudinal": ([*base, "--config", json.dumps({"protocol": "oue", "epsilon": 1.0, "domain_size": 8}),
                              "--memo", str(memo)], "for a longitudinal protocol"),
    }
    garbage = tmp_path / "garbage.json"
    garbage.write_text("not json")
    cases["not json"] = ([*base, "--config", l_grr, "--memo", str(garbage)], "is not a device memo")
    deep = tmp_path / "deep.json"  # json.loads raised RecursionError: "internal error ... a bug of dpdist"
    deep.write_text("[" * 5000 + "]" * 5000)
    cases["nested too deeply"] = ([*base, "--config", l_grr, "--memo", str(deep)], "nested too deeply")
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"config": local.from_config(LONGITUDINAL[0]).config(), "memo": {"3": 99}}))
    cases["entry out of range"] = ([*base, "--config", l_grr, "--memo", str(wrong)], str(wrong))
    for name, (argv, expected) in cases.items():
        result = run_cli(*argv)
        assert result.returncode == 2, name
        assert result.stderr.count("\n") == 1 and "--memo" in result.stderr and expected in result.stderr, (name, result.stderr)
    assert memo.read_text() == saved

    with exclusive_lock(memo, owner="another device run"):
        locked = run_cli(*base, "--config", l_grr, "--memo", str(memo))
    assert locked.returncode != 0 and "locked by another process" in locked.stderr and "Traceback" not in locked.stderr


def test_the_memo_is_private_to_its_owner_and_its_directory_is_made(tmp_path):
    """The memo's keys are the device's true values (l-grr) or their buckets: owner-only, like a key file.

    The documented ``--memo ~/.dpdist/commute.json`` works on first use, when the directory does not exist.
    """
    memo = tmp_path / "home" / ".dpdist" / "commute.json"
    assert privatize(tmp_path, LONGITUDINAL[0], [3, 5], tmp_path / "r1.parquet", "--memo", str(memo)) == 0
    assert memo.stat().st_mode & 0o077 == 0 and memo.parent.stat().st_mode & 0o077 == 0
    # an existing memo readable by others (made by an earlier dpdist) is made private when it is saved again
    memo.chmod(0o644)
    assert privatize(tmp_path, LONGITUDINAL[0], [6], tmp_path / "r2.parquet", "--memo", str(memo)) == 0
    assert memo.stat().st_mode & 0o777 == 0o600
    assert set(stream(memo)["memo"]) == {"3", "5", "6"}


def test_a_memo_made_from_a_seed_is_refused_by_a_run_from_the_csprng(tmp_path, capsys):
    """A test run with --seed used to leave permanent responses anyone can re-draw from the seed in the memo,
    and every later real round reused them: the epsilon_inf bound of all rounds rested on a public seed."""
    config = LONGITUDINAL[0]
    memo = tmp_path / "device.json"
    assert privatize(tmp_path, config, [3], tmp_path / "test.parquet", "--memo", str(memo), "--seed", "1") == 0
    saved = memo.read_text()
    assert stream(memo)["seeded"] is True
    capsys.readouterr()
    assert privatize(tmp_path, config, [3], tmp_path / "real.parquet", "--memo", str(memo)) == 2
    assert "drawn from a seeded generator" in capsys.readouterr().err
    assert memo.read_text() == saved and not (tmp_path / "real.parquet").exists()
    # a memo made from the CSPRNG carries no mark
    fresh = tmp_path / "fresh.json"
    assert privatize(tmp_path, config, [3], tmp_path / "r.parquet", "--memo", str(fresh)) == 0
    assert "seeded" not in stream(fresh)
