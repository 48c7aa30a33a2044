"""Python and the CLI agree."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from dpdist import io, local
from dpdist.cli import main


@pytest.mark.slow  # 0.48 CPU-s: a command line that draws a plot
def test_one_shot_plot_draws_truth_and_estimate_on_the_same_coarse_bins(tmp_path, monkeypatch):
    import matplotlib.axes

    calls = []
    original = matplotlib.axes.Axes.stairs

    def record(self, values, edges=None, **kwargs):
        calls.append((np.asarray(values), np.asarray(edges), kwargs.get("label")))
        return original(self, values, edges, **kwargs)

    monkeypatch.setattr(matplotlib.axes.Axes, "stairs", record)
    values = np.round(np.random.default_rng(0).normal(50, 10, 4_000).clip(0, 100), 1)  # 0.1-unit data
    (tmp_path / "d.csv").write_text("x\n" + "\n".join(map(str, values)) + "\n")
    assert main(["estimate", str(tmp_path / "d.csv"), "--column", "x", "--protocol", "sw", "--epsilon", "1",
                 "--bounds", "0,100", "--seed", "0", "--plot", str(tmp_path / "p.png"),
                 "--replicates", "20"]) == 0  # the bins are the subject, not the band (200 replicates: 1.5 CPU-s)
    (truth, truth_edges, _), (estimate, estimate_edges, _) = calls
    assert np.array_equal(truth_edges, estimate_edges) and truth_edges.size - 1 <= 40
    # both are densities on those bins: equal total mass, comparable heights
    widths = np.diff(truth_edges)
    assert np.sum(truth * widths) == pytest.approx(1) and np.sum(estimate * widths) == pytest.approx(1)
    assert truth.max() < 2 * estimate.max()


def _state(tmp_path, protocol, values):
    path = tmp_path / "s.bin"
    io.save_state(path, protocol.simulate(values, rng=0))
    return path


def test_estimate_postprocess_default_is_the_same_in_python_and_on_the_cli(tmp_path):
    protocol = local.make("oue", epsilon=0.5, domain_size=8)
    state = _state(tmp_path, protocol, np.repeat(np.arange(8), [400, 5, 5, 5, 5, 5, 5, 5]))
    assert main(["estimate", "--state", str(state), "--out", str(tmp_path / "e.csv")]) == 0
    table = np.loadtxt(tmp_path / "e.csv", delimiter=",", skiprows=1)
    python = protocol.estimate(io.load_state(state, journal=False).aggregator)
    assert python.postprocess == "none"
    assert np.array_equal(table[:, 1], python.frequencies)  # unbiased, so negative entries show


def test_list_shows_auto(capsys):
    assert main(["list"]) == 0
    assert any(line.split()[:2] == ["auto", "frequency"] for line in capsys.readouterr().out.splitlines())


def test_aggregators_add_with_plus():
    protocol = local.make("grr", epsilon=1.0, domain_size=4)
    a, b = protocol.simulate([0, 1, 2], rng=1), protocol.simulate([3, 3], rng=2)
    total = a + b
    assert total.n == 5 and np.array_equal(total.statistic, a.statistic + b.statistic)
    assert (a.n, b.n) == (3, 2)  # operands unchanged
    with pytest.raises(TypeError):
        a + 1


def _numbers_csv(tmp_path):
    values = np.random.default_rng(1).uniform(0, 10, 500)
    (tmp_path / "d.csv").write_text("x\n" + "\n".join(f"{v:.3f}" for v in values) + "\n")
    return tmp_path / "d.csv", values


def test_bins_is_honoured_or_refused_for_numerical_protocols(tmp_path, capsys):
    data, _ = _numbers_csv(tmp_path)
    common = [str(data), "--column", "x", "--epsilon", "1", "--bounds", "0,10", "--seed", "0"]
    assert main(["estimate", *common, "--protocol", "sw", "--bins", "64"]) == 0
    assert "bins               64 over" in capsys.readouterr().out
    assert main(["estimate", *common, "--protocol", "pm", "--bins", "64"]) == 2
    assert "'--bins'" in capsys.readouterr().err


def test_privatize_bins_a_numeric_column_over_bounds(tmp_path, capsys):
    data, values = _numbers_csv(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps({"protocol": "grr", "epsilon": 2.0, "domain_size": 5}))
    argv = ["privatize", "--config", str(tmp_path / "c.json"), "--column", "x", str(data), "--out",
            str(tmp_path / "r.bin"), "--seed", "4", "--no-progress"]
    assert main([*argv, "--bounds", "0,10"]) == 0
    from dpdist import io

    reports = np.concatenate([batch.reports for batch in io.iter_report_batches(tmp_path / "r.bin")])
    protocol = local.make("grr", epsilon=2.0, domain_size=5)
    expected = protocol.privatize(np.minimum((values // 2).astype(int), 4), rng=np.random.default_rng(
        np.random.SeedSequence(4).spawn(1)[0]))
    from dpdist._rng import order_generator  # the file's order: the seed's order stream

    assert np.array_equal(reports, expected[order_generator(np.random.SeedSequence(4)).permutation(expected.size)])
    capsys.readouterr()
    assert main([*argv, "--bounds", "0,10", "--bins", "7"]) == 2
    assert "'--bins'" in capsys.readouterr().err
    assert main([*argv, "--bounds", "0,5"]) == 0  # values outside are clipped and counted
    assert "outside the bounds [0, 5] clipped" in capsys.readouterr().out
    assert main([*argv, "--bounds", "0,5", "--no-clip"]) == 2
    assert "'--bounds'" in capsys.readouterr().err
    (tmp_path / "sw.json").write_text(json.dumps({"protocol": "sw", "epsilon": 1.0}))
    assert main([*argv[:2], str(tmp_path / "sw.json"), *argv[3:], "--bins", "8", "--bounds", "0,10"]) == 2
    assert "--config" in capsys.readouterr().err


def test_privatize_reads_a_csv_without_pyarrow_when_writing_binary(tmp_path, monkeypatch):
    data, values = _numbers_csv(tmp_path)
    (tmp_path / "c.json").write_text(json.dumps({"protocol": "sw", "epsilon": 1.0, "bounds": [0, 10]}))
    for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    assert main(["privatize", "--config", str(tmp_path / "c.json"), "--column", "x", str(data),
                 "--out", str(tmp_path / "r.bin"), "--seed", "0", "--no-progress"]) == 0
    monkeypatch.undo()
    from dpdist import io

    assert sum(batch.n_read for batch in io.iter_report_batches(tmp_path / "r.bin")) == values.size
