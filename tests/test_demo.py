"""``dpdist demo`` and ``dpdist list`` end to end (the demo is the project's main job)."""

from __future__ import annotations

import csv

import numpy as np

import pytest

from dpdist import local
from dpdist.cli import main


@pytest.mark.slow
def test_demo_writes_its_tables_and_plots_and_errors_fall_with_epsilon(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--epsilons", "0.5,4", "--repeats", "3"]) == 0
    printed = capsys.readouterr().out
    with (tmp_path / "demo_table.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    names = sorted(local.available("frequency") + local.available("numerical"))  # heavy hitters are not in the demo
    assert sorted({row["protocol"] for row in rows}) == names and len(rows) == len(names) * 2 * 3
    assert (tmp_path / "demo.png").stat().st_size > 10_000 and (tmp_path / "demo_errors.png").stat().st_size > 10_000
    assert "nan" not in printed.lower()
    for name in names:
        assert name in printed
        w1 = {eps: [float(r["wasserstein"]) for r in rows if r["protocol"] == name and r["epsilon"] == eps
                    and r["wasserstein"]] for eps in ("0.5", "4.0")}
        if w1["0.5"]:  # pm and sr estimate only the mean
            assert np.median(w1["4.0"]) < np.median(w1["0.5"]), name  # 8x the budget: smaller error


def test_the_demo_refuses_a_bad_repeat_count(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path), "--repeats", "0"]) == 2
    assert "repeats" in capsys.readouterr().err


def test_list_prints_one_line_per_protocol(capsys):
    assert main(["list"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert [line.split()[0] for line in lines] == sorted([*local.available(), "auto"])


def test_errors_are_reported_without_a_traceback(capsys):
    assert main(["demo", "--out", "/dev/null/impossible", "--epsilons", "-1"]) == 2
    assert "epsilon" in capsys.readouterr().err
