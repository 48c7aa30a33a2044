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


def test_no_holder_notes_makes_stderr_the_same_whatever_the_one_row_a_where_keeps_holds(tmp_path, capsys):
    """The caller who is not the holder (--no-holder-notes): a missing value in the one row the WHERE keeps, or none,
    and a person over the bound or not, print the same stderr (nothing); without the flag the note tells them apart."""
    errors = {}
    for notes in (True, False):
        for cell in ("", "1"):
            path = tmp_path / f"w{cell}.csv"
            path.write_text(f"person,name,maybe\n1,P1,{cell}\n1,P1,1\n2,P2,1\n")
            assert main(["query", "SELECT SUM(maybe) AS s FROM t WHERE name = 'P1'", "--table", f"t={path}",
                         "--epsilon", "1", "--bounds", "maybe=0,1", "--privacy-id", "person", "--max-contributions",
                         "1", "--seed", "1", *([] if notes else ["--no-holder-notes"])]) == 0
            errors[notes, cell] = capsys.readouterr().err
    assert errors[False, ""] == errors[False, "1"] == ""
    assert errors[True, ""] != errors[True, "1"] and "holder of the data" in errors[True, ""]


@pytest.mark.parametrize("cell, odd", [("True", "maybe"), ("1.50", "x"), ("007", "seven")])
def test_a_csv_column_is_text_whatever_its_cells_so_a_key_matches_as_written(tmp_path, capsys, cell, odd):
    """200 rows of one key cell, with or without one row of another kind of cell: the key given as written matches
    the 200 rows both times (a type read from the cells would make "True" the boolean true, "1.50" the number 1.5 and
    "007" the integer 7, which the key, compared as text, no longer matches)."""
    counts = []
    for extra in ("", f"201,{odd}\n"):
        path = tmp_path / "keys.csv"
        path.write_text("person,k\n" + "".join(f"{i},{cell}\n" for i in range(1, 201)) + extra)
        assert main(["query", "SELECT k, COUNT(*) FROM t GROUP BY k", "--table", f"t={path}", "--epsilon", "1",
                     "--keys", f"k={cell}", "--privacy-id", "person", "--max-contributions", "1", "--seed", "1"]) == 0
        counts.append(float(capsys.readouterr().out.strip().splitlines()[-1].split(",")[1]))
    assert counts[0] == counts[1] and abs(counts[0] - 200) < 20


def test_where_runs_over_a_csv_and_its_numbers_are_the_columns_the_options_name(people, tmp_path, capsys):
    """A CSV column is text unless --bounds or --numbers names it: WHERE income > 1000 compares numbers; a cell that is
    no number is missing (left out, never refused); without --numbers a number column compared with a number is
    refused in one line; --explain reads the header only (a body that does not parse is never read)."""
    statement = "SELECT COUNT(*) FROM people WHERE income > 1000 AND person < 1000"
    arguments = ["query", statement, "--table", f"people={people}", "--epsilon", "1", "--seed", "3"]
    assert main([*arguments, "--numbers", "income,person"]) == 0
    assert abs(float(capsys.readouterr().out.strip().splitlines()[-1].split(",")[0]) - 1000) < 30
    holed = tmp_path / "holed.csv"
    holed.write_text(people.read_text() + "2000,north,n/a\n2001,north,\n")
    assert main(["query", "SELECT AVG(income) FROM people", "--table", f"people={holed}", "--epsilon", "1",
                 "--bounds", "income=0,300000"]) == 0
    assert "rows of a missing value, per statistic, mean(income) 2" in capsys.readouterr().err
    assert main(arguments) == 2
    err = capsys.readouterr().err
    assert "income is a string and 1000 is a number" in err and "reads a CSV column as text: name the columns of numbers" in err
    broken = tmp_path / "broken.csv"
    broken.write_text("person,region,income\n1,north,10\n2,secret-row,20,30\n")
    assert main(["query", statement, "--table", f"people={broken}", "--epsilon", "1", "--numbers", "income,person",
                 "--explain", "100"]) == 0


@pytest.mark.parametrize(("change", "named"), [
    (["--table", "people=other.csv"], "'--table' option must be NAME=FILE, each KEY once. Got the KEY 'people' more than once"),
    (["--bounds", "income=0,10"], "'--bounds' option must be COLUMN=LO,HI (two numbers), each KEY once. Got the KEY 'income' more "
     "than once"),
])
def test_an_option_given_twice_is_one_line_naming_it(people, capsys, change, named):
    assert main([*_args(people), *change]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and named in err


def test_a_negative_seed_is_refused_by_the_parser(people, capsys):
    with pytest.raises(SystemExit) as exited:
        main([*_args(people), "--seed", "-1"])
    assert exited.value.code == 2 and "--seed: must be a non-negative integer" in capsys.readouterr().err


def test_a_csv_with_two_columns_of_one_name_is_refused_in_one_line(tmp_path, capsys):
    twice = tmp_path / "twice.csv"
    twice.write_text("person,region,region\n1,north,south\n")
    assert main(_args(twice)) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "several columns named ['region']" in err
