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


def test_aq_interval_share_buys_intervals_within_the_same_epsilon(column, no_tree, capsys):
    assert main([*column, "--method", "aq", "--interval-share", "0.3", "--seed", "1", "--json"]) == 0
    quantiles = json.loads(capsys.readouterr().out)["quantiles"]
    assert quantiles["guarantee"]["epsilon"] == pytest.approx(1.0)
    assert all(low <= high for low, high in zip(quantiles["low"], quantiles["high"]))
    assert quantiles["intervals"][0]["quantity"] == "quantile"
    assert main([*column, "--method", "aq", "--interval-share", "0.3", "--seed", "1"]) == 0
    assert "none" not in capsys.readouterr().out


@pytest.mark.parametrize("extra", [["--interval-share", "0.3"], ["--method", "aq", "--interval-share", "1"],
                                   ["--method", "aq", "--interval-share", "abc"]])
def test_bad_interval_share_names_the_option_before_any_budget_is_spent(column, no_tree, extra, capsys):
    assert main([*column, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "'--interval-share' option" in err


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
    # an empty column was refused and an infinite cell too, while one value was released: the refusal
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
    # what an attacker can learn: a membership test's power at false-positive rates 1%, 5%, 10%, from the guarantee
    assert release["tradeoff"]["test"] == "whether one record is in the data" and not release["tradeoff"]["exact"]
    assert release["tradeoff"]["tpr"] == pytest.approx([np.e * a for a in (0.01, 0.05, 0.1)])
    assert main([*column, "--seed", "2"]) == 0
    assert ("\nwhat an attacker can learn: a test of whether one record is in the data, at false-positive rates 1%, 5%, "
            "10%, has true-positive rates at most 2.72%, 13.6%, 27.2%") in capsys.readouterr().out


# 1e12 is 20 CPU-s (the tree at 2**20 leaves and its 400 noise trees for the bands and intervals): slow; the fast
# loop releases every central method at 1e12 in tests/central/test_common.py
@pytest.mark.parametrize("epsilon", ["1e-6", pytest.param("1e12", marks=pytest.mark.slow)])
def test_both_ends_of_the_epsilon_range_are_released(column, epsilon, capsys):
    # 1e-6 used to fail: "each noisy step must be >= 2^-20" (the tree's 5% profile step)
    argv = [*column[:4], "--epsilon", epsilon, "--bounds", "0,200000", "--seed", "3", "--json"]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["quantiles"]["guarantee"]["epsilon"] == pytest.approx(float(epsilon))


def test_json_holds_the_cdf_with_its_bands_the_quantiles_with_intervals_and_the_guarantee(column, capsys):
    # the released CDF was only in the PNG
    assert main([*column, "--seed", "5", "--json"]) == 0
    release = json.loads(capsys.readouterr().out)
    cdf = release["cdf"]
    values = np.asarray(cdf["cdf"])
    lower, upper = np.asarray(cdf["lower"]), np.asarray(cdf["upper"])
    sim_lower, sim_upper = np.asarray(cdf["simultaneous_lower"]), np.asarray(cdf["simultaneous_upper"])
    assert len(cdf["edges"]) == values.size == lower.size and cdf["level"] == 0.95
    assert cdf["edges"][0] == 0 and cdf["edges"][-1] == 200000 and values[0] == 0 and values[-1] == 1
    assert np.all(lower <= values + 1e-12) and np.all(values <= upper + 1e-12)
    assert np.all(sim_lower <= lower + 1e-12) and np.all(upper <= sim_upper + 1e-12)
    assert np.all(np.diff(values) >= -1e-12) and np.all(np.diff(sim_lower) >= 0) and np.all(np.diff(sim_upper) >= 0)
    quantiles = release["quantiles"]
    assert quantiles["level"] == 0.95 and len(quantiles["low"]) == len(quantiles["q"]) == 5
    assert all(low <= value <= high for low, value, high in zip(quantiles["low"], quantiles["values"], quantiles["high"]))
    assert quantiles["guarantee"]["epsilon"] == pytest.approx(1.0) and "differential privacy" in release["guarantee"]


def test_aq_json_says_it_releases_no_cdf(column, no_tree, capsys):
    assert main([*column, "--method", "aq", "--seed", "1", "--json"]) == 0
    release = json.loads(capsys.readouterr().out)
    assert release["cdf"] is None and "quantiles only" in release["cdf_note"]


def test_out_writes_the_cdf_bands_quantiles_and_guarantee_as_csv(column, tmp_path, capsys):
    import csv

    out = tmp_path / "release.csv"
    assert main([*column, "--seed", "5", "--out", str(out), "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    rows = list(csv.DictReader(out.open()))
    cdf_rows = [row for row in rows if row["kind"] == "cdf"]
    quantile_rows = [row for row in rows if row["kind"] == "quantile"]
    assert len(cdf_rows) == len(document["cdf"]["edges"]) and len(quantile_rows) == 5
    assert [float(row["cdf_simultaneous_high"]) for row in cdf_rows] == document["cdf"]["simultaneous_upper"]
    assert [float(row["x_low"]) for row in quantile_rows] == document["quantiles"]["low"]
    assert cdf_rows[0]["q"] == "" and quantile_rows[0]["cdf"] == ""  # a column means one thing
    assert {row["guarantee"] for row in rows} == {document["guarantee"]}


def test_out_writes_parquet_with_the_guarantee_in_its_metadata(column, tmp_path, capsys):
    pq = pytest.importorskip("pyarrow.parquet")
    out = tmp_path / "release.parquet"
    assert main([*column, "--seed", "5", "--method", "aq", "--out", str(out)]) == 0
    table = pq.read_table(out)
    assert table.column("kind").to_pylist() == ["quantile"] * 5
    assert np.all(np.isnan(table.column("x_low").to_numpy()))  # aq gives no intervals
    guarantee = json.loads(table.schema.metadata[b"dpdist.guarantee_json"])
    assert guarantee["epsilon"] == pytest.approx(1.0) and guarantee["model"] == "central"


def test_central_results_export_their_tables_and_json():
    x = np.random.default_rng(2).lognormal(10.5, 0.8, 3000)
    tree = central.TreeHistogram.release(x, 1.0, (0, 200000), rng=3)
    distribution = tree.to_distribution(level=0.9)
    table = distribution.table()
    assert distribution.band.level == 0.9
    for name in ("cdf_lower", "cdf_upper", "cdf_simultaneous_lower", "cdf_simultaneous_upper"):
        assert table[name].shape == table["cdf"].shape
    held = ~np.isnan(table["cdf_simultaneous_lower"])  # the band holds where the released values do (central._atoms)
    assert held.sum() == tree.leaf_cdf()[0].size - 1 and table["cdf"].size >= held.sum()
    assert np.all(table["cdf_simultaneous_lower"][held] <= table["cdf"][held] + 1e-12)
    exported = json.loads(distribution.to_json())
    assert exported["band"]["level"] == 0.9 and exported["guarantee"]["epsilon"] == pytest.approx(1.0)
    release = central.quantiles(x, 1.0, (0, 200000), [0.25, 0.5, 0.75], rng=3)
    columns = release.table()
    assert list(columns) == ["q", "value", "low", "high"] and np.all(columns["low"] <= columns["value"])
    assert json.loads(release.to_json())["high"] == columns["high"].tolist()
    assert np.all(np.isnan(central.quantiles(x, 1.0, (0, 200000), [0.5], method="aq", rng=3).table()["low"]))


def test_a_release_per_person_bounds_each_persons_rows_and_says_so(tmp_path, capsys):
    rng = np.random.default_rng(3)
    ids = np.repeat(np.arange(400), rng.integers(1, 30, 400))
    data = tmp_path / "purchases.csv"
    data.write_text("customer,amount\n" + "\n".join(f"c{i},{v:.2f}" for i, v in zip(ids, rng.gamma(2, 20, ids.size))))
    base = ["release", str(data), "--column", "amount", "--epsilon", "1", "--bounds", "0,200", "--seed", "1"]
    assert main([*base, "--privacy-id", "customer", "--max-contributions", "4", "--json"]) == 0
    released = json.loads(capsys.readouterr().out)
    assert released["guarantee"].startswith("1-differential privacy per person (central, add or remove one person's")
    assert released["quantiles"]["guarantee"]["unit"] == "person"
    assert released["tradeoff"]["test"] == "whether one person's rows are in the data"
    assert any("at most 4 row(s) each" in note for note in released["quantiles"]["notes"])
    for extra, named in ((["--privacy-id", "customer"], "'--privacy-id' option needs '--max-contributions'"),
                         (["--max-contributions", "3"], "'--max-contributions' option needs '--privacy-id'"),
                         (["--privacy-id", "customer", "--max-contributions", "0"], "'--max-contributions' option must"),
                         (["--privacy-id", "customer", "--max-contributions", "2.5"], "'--max-contributions' option"),
                         (["--privacy-id", "client", "--max-contributions", "3"], "--privacy-id 'client'")):
        assert main([*base, *extra]) == 2
        error = capsys.readouterr().err
        assert named in error and "Traceback" not in error
    data.write_text("customer,amount\nc1,3\n,4\nc2,5\n")
    assert main([*base, "--privacy-id", "customer", "--max-contributions", "3"]) == 2
    assert "missing ids" in capsys.readouterr().err


def test_privacy_ids_of_a_csv_are_compared_as_the_cells_text_exactly(tmp_path):
    """Ids are compared as written (docs/explanation/central-release.md, "How ids are compared"): "1", "01", " 1" and "1.0" are four persons, as the
    cells are written; the caller normalises them."""
    from dpdist.central._contributions import person_codes
    from dpdist.datasets.files import read_ids

    data = tmp_path / "ids.csv"
    data.write_text('customer,amount\n1,3\n01,4\n" 1",5\n1.0,6\n1,7\n')
    ids = read_ids(data, "customer")
    assert ids.tolist() == ["1", "01", " 1", "1.0", "1"]
    np.testing.assert_array_equal(person_codes("dpdist release", ids, 5), [2, 1, 0, 3, 2])


def test_privacy_ids_na_null_and_none_are_ids_and_a_blank_line_is_no_row(tmp_path, capsys):
    """The id cells "NA", "nan", "null" and "None" were read as missing, so a
    customer called "NA" made the whole file refused; a blank line gave "2 ids. Got 3 instead" (row counts of the
    private data). Now a cell is its text exactly (only an empty cell is missing), a blank line is no row for the ids as
    for the values, and no refusal prints a count."""
    from dpdist.datasets.files import read_ids

    data = tmp_path / "ids.csv"
    data.write_text("customer,amount\nNA,1\nnan,2\n\nnull,3\nNone,4\n none ,5\nNA,6\n")
    assert read_ids(data, "customer").tolist() == ["NA", "nan", "null", "None", " none ", "NA"]
    base = ["release", str(data), "--column", "amount", "--epsilon", "1", "--bounds", "0,10", "--seed", "1",
            "--privacy-id", "customer", "--max-contributions", "1"]
    assert main(base) == 0
    capsys.readouterr()
    data.write_text("customer,amount\nNA,1\n,2\nB,3\n")
    assert main(base) == 2
    error = capsys.readouterr().err
    assert "missing ids" in error and not any(digit in error.split("ids.csv")[-1] for digit in "0123456789")
