"""``dpdist query``: one SELECT over a file, its plan before any data, one CSV row per group; errors in one line."""

from __future__ import annotations

import csv
import io

import numpy as np
import pytest

from dpdist.cli import main


@pytest.fixture()
def people(tmp_path):
    rng = np.random.default_rng(4)
    path = tmp_path / "people.csv"
    rows = zip(np.arange(2_000), rng.choice(["north", "south"], 2_000), rng.lognormal(10, 0.7, 2_000))
    path.write_text("person,region,income\n" + "".join(f"{p},{r},{i:.2f}\n" for p, r, i in rows))
    return path


def _args(people, statement="SELECT region, QUANTILES(income, 0.1, 0.5, 0.9), COUNT(*) FROM people GROUP BY region"):
    return ["query", statement, "--table", f"people={people}", "--epsilon", "1", "--bounds", "income=0,300000",
            "--keys", "region=north,south"]


def test_a_select_prints_its_plan_its_guarantee_and_one_row_per_group(people, tmp_path, capsys):
    out = tmp_path / "result.csv"
    assert main([*_args(people), "--seed", "1", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "split: equal shares" in printed and "guarantee: 1-differential privacy" in printed
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [row["region"] for row in rows] == ["north", "south"] and "income 0.5 quantile low" in rows[0]


def test_explain_reads_no_file(tmp_path, capsys):
    gone = tmp_path / "gone.csv"
    assert main([*_args(gone), "--explain", "1000"]) == 0
    assert "expected quantiles' mean absolute error at n = 1,000" in capsys.readouterr().out


@pytest.mark.parametrize(("change", "named"), [
    (["--bounds", "income"], "--bounds"),
    (["--max-groups", "2"], "'--max-groups' option needs '--privacy-id'"),
    (["--table", "people"], "--table"),
])
def test_bad_options_are_one_line_naming_them(people, capsys, change, named):
    assert main([*_args(people), *change]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and named in err


def test_refused_sql_and_a_missing_file_are_one_line(people, tmp_path, capsys):
    ordered = "SELECT region, COUNT(*) FROM people GROUP BY region ORDER BY COUNT(*)"
    assert main(_args(people, ordered)) == 2
    assert main(_args(tmp_path / "missing.csv")) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and "refuses ORDER BY" in err[0] and "could not be read" in err[1]


def test_where_a_join_to_a_public_file_having_and_a_minimum_of_persons_run_from_the_files(people, tmp_path, capsys):
    zones = tmp_path / "zones.csv"
    zones.write_text("region,zone\nnorth,n\nsouth,s\n")
    statement = ("SELECT zone, COUNT(*) AS n, AVG(income) FROM people JOIN zones USING (region) WHERE income > 1000 "
                 "GROUP BY zone HAVING n > 10")
    arguments = ["query", statement, "--table", f"people={people}", "--public-table", f"zones={zones}", "--epsilon",
                 "1", "--bounds", "income=0,300000", "--keys", "zone=n,s", "--min-persons", "20", "--seed", "2"]
    assert main(arguments) == 0
    printed = capsys.readouterr().out
    assert "groups below 20 withheld" in printed and "\nn," in printed and "\ns," in printed


def test_a_file_that_does_not_parse_is_refused_without_quoting_its_rows(tmp_path, capsys):
    broken = tmp_path / "broken.csv"
    broken.write_text("person,region,income\n1,north,10\n2,secret-row,20,30\n")
    assert main(_args(broken)) == 2
    err = capsys.readouterr().err.strip()
    assert "could not be read as CSV: pyarrow's ArrowInvalid" in err and "secret" not in err


def test_the_holder_is_told_on_stderr_what_bounding_left_out_and_the_options_that_keep_it(people, capsys):
    """2,000 rows of 400 persons (5 rows each over two regions), --max-contributions 2: the rows left out and the
    options that keep every row are printed on stderr for the holder, never in the table."""
    with_persons = [*_args(people), "--privacy-id", "person", "--max-contributions", "2", "--seed", "1"]
    (people.parent / "persons.csv").write_text(
        "".join(line if i == 0 else f"{int(line.split(',')[0]) % 400},{line.split(',', 1)[1]}"
                for i, line in enumerate(people.read_text().splitlines(keepends=True))))
    with_persons[3] = f"people={people.parent / 'persons.csv'}"
    assert main(with_persons) == 0
    captured = capsys.readouterr()
    (note,) = [line for line in captured.err.splitlines() if "holder of the data" in line]
    assert "left out" in note and "quantiles(income)" in note and "--max-contributions" in note
    assert "--max-groups 2 would keep every row" in note and "left out" not in captured.out
