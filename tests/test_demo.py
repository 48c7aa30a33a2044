"""``dpdist demo`` and ``dpdist list`` end to end (the demo is the project's main job)."""

from __future__ import annotations

import csv

import pytest

from dpdist import local
from dpdist.cli import main


@pytest.mark.slow
def test_demo_writes_its_table_and_plot(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--epsilons", "1"]) == 0
    printed = capsys.readouterr().out
    with (tmp_path / "demo_table.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    assert sorted(row["protocol"] for row in rows) == local.available()
    assert (tmp_path / "demo.png").stat().st_size > 10_000
    for name in local.available():
        assert name in printed


def test_list_prints_one_line_per_protocol(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == sorted([*local.available(), "auto"])


def test_errors_are_reported_without_a_traceback(capsys):
    assert main(["demo", "--out", "/dev/null/impossible", "--epsilons", "-1"]) == 2
    assert "epsilon" in capsys.readouterr().err
