"""``dpdist release``: bad input is one line naming the option, and epsilon is spent once."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpdist import central
from dpdist.cli import main


@pytest.fixture()
def column(tmp_path):
    data = tmp_path / "income.csv"
    values = np.random.default_rng(8).lognormal(10.5, 0.8, 2000)
    data.write_text("income\n" + "\n".join(f"{v:.2f}" for v in values) + "\n")
    return ["release", str(data), "--column", "income", "--epsilon", "1", "--bounds", "0,200000"]


@pytest.fixture()
def no_tree(monkeypatch):
    """Make any tree release fail loudly, to show which paths never compute one."""

    def refuse(*args, **kwargs):
        raise AssertionError("a tree was released")

    monkeypatch.setattr(central.TreeHistogram, "release", refuse)


@pytest.mark.parametrize("quantiles", ["0.9,0.1", "0.5,0.5", "0,0.5", "0.5,1", "1.5", "nan", ",", "abc"])
def test_bad_quantiles_name_the_option_before_any_budget_is_spent(column, no_tree, quantiles, capsys):
    assert main([*column, "--quantiles", quantiles]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "'--quantiles' option" in err and repr(quantiles) in err


def test_aq_spends_epsilon_once_and_releases_no_tree(column, no_tree, capsys):
    assert main([*column, "--method", "aq", "--seed", "1", "--json"]) == 0
    release = json.loads(capsys.readouterr().out)
    assert release["quantiles"]["method"] == "aq" and release["quantiles"]["guarantee"]["epsilon"] == pytest.approx(1.0)


def test_negative_seed_is_a_usage_error_not_an_internal_error(column, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([*column, "--seed", "-3"])
    assert exit_info.value.code == 2
    assert "argument --seed: must be a non-negative integer" in capsys.readouterr().err


@pytest.mark.parametrize("epsilon", ["0", "-1", "inf", "nan"])
def test_bad_epsilon_names_the_option(column, epsilon, capsys):
    argv = [*column[:4], "--epsilon", epsilon, "--bounds", "0,200000"]
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("dpdist: error: --epsilon must be a finite float")


@pytest.mark.parametrize("cells", ["\n\n", "0.5\n", "-inf\n0.5\ninf\n7\n"])
@pytest.mark.parametrize("method", ["tree", "aq"])
def test_any_column_is_released(tmp_path, capsys, cells, method):
    # issue 27: an empty column was refused and an infinite cell too, while one value was released: the refusal
    # told the data sets apart.  No values release the noise alone; infinities are clipped into --bounds.
    data = tmp_path / "column.csv"
    data.write_text("income\n" + cells)
    argv = ["release", str(data), "--column", "income", "--epsilon", "1", "--bounds", "0,1", "--method", method]
    assert main([*argv, "--seed", "4", "--json"]) == 0
    release = json.loads(capsys.readouterr().out)["quantiles"]
    assert len(release["values"]) == 5 and all(0 <= v <= 1 for v in release["values"])


def test_tree_release_prints_the_budget_it_spent(column, capsys):
    assert main([*column, "--seed", "2", "--json"]) == 0
    release = json.loads(capsys.readouterr().out)
    assert release["quantiles"]["guarantee"] == {
        "epsilon": pytest.approx(1.0), "delta": 0.0, "neighbouring": "add-remove", "model": "central"
    }
    assert "1-differential privacy (central, add or remove one record)" in release["guarantee"]


@pytest.mark.parametrize("epsilon", ["1e-6", "1e12"])
def test_both_ends_of_the_epsilon_range_are_released(column, epsilon, capsys):
    # 1e-6 used to fail: "each noisy step must be >= 2^-20" (the tree's 5% profile step)
    argv = [*column[:4], "--epsilon", epsilon, "--bounds", "0,200000", "--seed", "3", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["quantiles"]["guarantee"]["epsilon"] == pytest.approx(float(epsilon))
