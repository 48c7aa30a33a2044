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
    # heavy hitters are not in the demo, nor the rounds' randomizer of adaptive quantiles
    names = sorted(set(local.available("frequency") + local.available("numerical")) - {"threshold"})
    assert sorted({row["protocol"] for row in rows}) == names and len(rows) == len(names) * 2 * 3
    assert (tmp_path / "demo.png").stat().st_size > 10_000 and (tmp_path / "demo_errors.png").stat().st_size > 10_000
    assert "nan" not in printed.lower()
    assert "haar-hrr: W1" in printed  # its error barely falls with epsilon, and the output says why
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


@pytest.mark.slow  # 0.37 CPU-s: draws the demo's figure
def test_every_bottom_panel_has_x_tick_labels():
    # with 21 panels in 6 rows of 4, sharex hid the labels of three bottom panels
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from dpdist.plotting import label_bottom_panels

    figure, axes = plt.subplots(6, 4, sharex=True, squeeze=False)
    label_bottom_panels(axes, 21, "time of day")
    figure.canvas.draw()

    def labelled(axis):
        return any(tick.label1.get_visible() for tick in axis.xaxis.get_major_ticks())

    bottoms = {(5, 0), (4, 1), (4, 2), (4, 3)}
    for (row, column), axis in np.ndenumerate(axes):
        if row * 4 + column < 21:
            assert labelled(axis) == ((row, column) in bottoms), (row, column)
            assert (axis.get_xlabel() == "time of day") == ((row, column) in bottoms)
    plt.close(figure)


def test_methods_whose_error_barely_falls_with_epsilon_are_explained():
    from dpdist.demo import DemoRun
    from dpdist.demo._comparison import _explain_slow_fallers

    def runs(name, first, last):
        return [DemoRun(name, "numerical", eps, run, w1, 0.0, 0.0, 0.0, 0.0)
                for eps, w1 in ((0.5, first), (4.0, last)) for run in range(3)]

    lines = _explain_slow_fallers(runs("haar-hrr", 98.0, 54.0) + runs("sw", 18.0, 2.0) + runs("new", 40.0, 30.0))
    text = "\n".join(lines)
    assert "haar-hrr: W1 98 -> 54 min" in text and "Norm-Sub" in text
    assert "new: W1 40 -> 30 min" in text and "sw:" not in text
    assert _explain_slow_fallers(runs("haar-hrr", 98.0, 54.0)[:3]) == []  # one epsilon: nothing to compare
