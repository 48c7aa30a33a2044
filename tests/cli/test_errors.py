"""Bad input on the command line: one line naming what the user typed, never a traceback."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpdist import central, local
from dpdist.cli import main
from dpdist.errors import (
    IncompatibleStateError,
    InvalidParameterError,
    InvalidValueTypeError,
    MalformedDataError,
)


@pytest.fixture
def files(tmp_path):
    values = np.random.default_rng(0).uniform(0, 10, 50)
    (tmp_path / "good.csv").write_text("a,b\n" + "".join(f"{v},{v / 2}\n" for v in values))
    (tmp_path / "ragged.csv").write_text("a,b\n1,2\n3\n4,5\n")
    (tmp_path / "text.csv").write_text("a\nfoo\nbar\n")
    (tmp_path / "truncated.parquet").write_bytes(b"PAR1abc")
    (tmp_path / "huge-epsilon.json").write_text(json.dumps({"protocol": "grr", "epsilon": 1e308, "domain_size": 4}))
    (tmp_path / "list-protocol.json").write_text(json.dumps({"protocol": ["grr"], "epsilon": 1, "domain_size": 4}))
    (tmp_path / "sw.json").write_text(json.dumps({"protocol": "sw", "epsilon": 1, "bounds": [0, 10]}))
    return tmp_path


def run(capsys, *argv):
    status = main([str(a) for a in argv])
    err = capsys.readouterr().err
    return status, err


ESTIMATE = ("--protocol", "sw", "--epsilon", "1", "--bounds", "0,10")

CASES = {
    "epsilon 1e308 in a config": (("privatize", "good.csv", "--column", "a", "--config", "huge-epsilon.json"),
                                  "'epsilon' parameter of GRR must be a finite float >= 1e-06 and <= 30"),
    "protocol given as a list": (("privatize", "good.csv", "--column", "a", "--config", "list-protocol.json"),
                                 "--config must be a protocol's config (a dict) with the keys "
                                 "['protocol'], the 'protocol' key a protocol name (one of local.available()) or 'auto'. Got a "
                                 "dict with the keys ['domain_size', 'epsilon', 'protocol'] whose 'protocol' is ['grr'] instead."),
    "a column that does not exist": (("estimate", "good.csv", "--column", "3", *ESTIMATE),
                                     "--column must be one of the columns of"),
    "a ragged CSV (estimate)": (("estimate", "ragged.csv", "--column", "a", *ESTIMATE),
                                "is not a readable CSV file: CSV parse error"),
    "a ragged CSV (privatize)": (("privatize", "ragged.csv", "--column", "a", "--config", "sw.json"),
                                 "is not a readable CSV file: CSV parse error"),
    "a truncated Parquet file (estimate)": (("estimate", "truncated.parquet", "--column", "a", *ESTIMATE),
                                            "is not a readable Parquet file"),
    "a truncated Parquet file (privatize)": (("privatize", "truncated.parquet", "--column", "a", "--config", "sw.json"),
                                             "is not a readable Parquet file"),
    "privatize on a text column": (("privatize", "text.csv", "--column", "a", "--config", "sw.json"),
                                   "The column 'a' of 'text.csv' must hold numbers"),
    "estimate on a text column": (("estimate", "text.csv", "--column", "a", *ESTIMATE),
                                  "The column 'a' of 'text.csv' must hold numbers"),
    "a key-value protocol (sets of pairs, not a column)": (("estimate", "good.csv", "--column", "a", "--protocol", "pckv-ue",
                                                            "--epsilon", "1"),
                                                           "'pckv-ue' takes each user's set of (key, value) pairs"),
    "epsilon typed on the command line": (("estimate", "good.csv", "--column", "a", "--protocol", "sw",
                                           "--epsilon", "1e308", "--bounds", "0,10"),
                                          "--epsilon must be a finite float >= 1e-06 and <= 30. Got 1e+308"),
}


@pytest.mark.parametrize("case", CASES)
def test_bad_input_gets_one_line_naming_what_was_typed(files, capsys, monkeypatch, case):
    monkeypatch.chdir(files)
    argv, expected = CASES[case]
    if argv[0] == "privatize":
        argv = (*argv, "--out", "reports.bin")
    status, err = run(capsys, *argv)
    assert status == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert err.startswith("dpdist: error: ") and expected in err, err
    assert "np.float64" not in err and "datasets.from_file" not in err and "run_spec" not in err


def test_each_command_module_adds_the_commands_the_parser_builds_it_for():
    import argparse
    import importlib

    from dpdist.cli import _main as cli

    for name, commands in cli.COMMANDS.items():
        subparsers = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).add_commands(subparsers)
        assert tuple(subparsers.choices) == tuple(commands), name
    whole = cli.build_parser()._subparsers._group_actions[0].choices
    assert list(whole) == [command for commands in cli.COMMANDS.values() for command in commands]
    for command in whole:  # one module's parser parses its command's help as the whole parser does
        alone = cli.build_parser(command)._subparsers._group_actions[0].choices[command]
        assert alone.format_help() == whole[command].format_help()
    assert cli.build_parser("no-such-command")._subparsers._group_actions[0].choices.keys() == whole.keys()


def test_an_unexpected_error_is_one_line_unless_the_traceback_is_asked_for(capsys, monkeypatch):
    def broken(_args):
        raise KeyError("boom")

    from dpdist.cli import _main as cli

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda command=None: parser)
    parser._subparsers._group_actions[0].choices["list"].set_defaults(handler=broken)
    assert main(["list"]) == 1
    err = capsys.readouterr().err
    assert err.strip() == (
        "dpdist: error: internal error KeyError: 'boom' "
        "(a bug of dpdist: please report it; set DPDIST_TRACEBACK=1 to see the traceback)"
    )
    monkeypatch.setenv("DPDIST_TRACEBACK", "1")
    with pytest.raises(KeyError):
        main(["list"])


def test_numpy_numbers_print_plainly_and_print_options_are_restored(capsys, monkeypatch):
    def shows_a_numpy_number(_args):
        raise InvalidParameterError(f"Got {np.float64(39.4)!r} instead.")

    from dpdist.cli import _main as cli

    parser = cli.build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda command=None: parser)
    parser._subparsers._group_actions[0].choices["list"].set_defaults(handler=shows_a_numpy_number)
    before = np.get_printoptions()
    assert main(["list"]) == 2
    assert capsys.readouterr().err.strip() == "dpdist: error: Got 39.4 instead."
    assert np.get_printoptions() == before


def test_data_file_errors_are_dpdist_errors_in_python(files):
    from dpdist.datasets import from_file

    with pytest.raises(MalformedDataError, match="ragged.csv"):
        from_file(files / "ragged.csv", "a", bounds=(0, 10))
    with pytest.raises(MalformedDataError, match="truncated.parquet"):
        from_file(files / "truncated.parquet", "a", bounds=(0, 10))
    with pytest.raises(InvalidValueTypeError, match="must hold numbers"):
        from_file(files / "text.csv", "a", bounds=(0, 10))


def test_config_and_state_type_errors_are_dpdist_errors():
    with pytest.raises(InvalidParameterError, match="'protocol' key"):
        local.from_config({"protocol": ["grr"], "epsilon": 1, "domain_size": 4})
    with pytest.raises(InvalidParameterError, match="'name' parameter of local.make"):
        local.make({"protocol": "grr"})
    state = local.make("grr", epsilon=1.0, domain_size=4).aggregator().to_dict()
    with pytest.raises(IncompatibleStateError, match="rejected"):
        local.Aggregator.from_dict({**state, "rejected": [1]})


@pytest.mark.parametrize(
    "change, message",
    [
        ({"n": -1}, "'n' parameter of PolynomialMoments must be an int >= 0"),  # 0: a release of no records
        ({"n": 2.5}, "'n' parameter"),
        ({"moments": np.zeros(3)}, "'moments' parameter of PolynomialMoments must be 7 finite numbers"),
        ({"moments": np.full(7, np.nan)}, "'moments' parameter"),
        ({"degree": 0}, "'degree' parameter"),
        ({"bounds": (1, 0)}, "'bounds' parameter"),
        ({"basis": "fourier"}, "'basis' parameter"),
    ],
)
def test_polynomial_moments_refuse_impossible_fields(change, message):
    fields = {"moments": np.zeros(7), "n": 10, "degree": 6, "bounds": (0, 1), **change}
    with pytest.raises(InvalidParameterError, match=message):
        central.PolynomialMoments(**fields)


@pytest.mark.parametrize("variable, proxy", [("HTTP_PROXY", "ftp://pu:ProxyPW@127.0.0.1:1"),
                                             ("ALL_PROXY", "gopher://pu:ProxyPW@127.0.0.1:1")])
def test_a_proxy_httpx_cannot_use_is_named_as_the_variable_not_as_a_bug(monkeypatch, capsys, variable, proxy):
    """``HTTP_PROXY=ftp://...`` ended every client command with "internal error ... (a bug of dpdist".)"""
    pytest.importorskip("httpx")
    from dpdist.cli import main

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, proxy)
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", "admin-token-0123456789")
    monkeypatch.delenv("DPDIST_TRACEBACK", raising=False)
    assert main(["campaign", "list", "--server", "http://127.0.0.1:1", "--retries", "0"]) == 2
    err = capsys.readouterr().err
    assert f"The proxy environment variable(s) {variable}=" in err and "pu:***@127.0.0.1:1" in err
    assert "ProxyPW" not in err and "a bug of dpdist" not in err and err.count("\n") == 1


NAMES = "age,name\n30,Alice Smith\n40,Bob Jones\n"
PRIVATE = ("Alice", "Bob", "Smith", "Jones", "107")


def _one_private_free_line(capsys, argv) -> str:
    status = main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert status == 2 and len(err.strip().splitlines()) == 1, err
    assert not any(word in err for word in PRIVATE), err
    return err


@pytest.mark.parametrize("command", [
    ("release", "--epsilon", "1", "--bounds", "0,100"),
    ("estimate", *ESTIMATE),
    ("privatize", "--config", "sw.json", "--out", "reports.bin"),
])
@pytest.mark.parametrize("pyarrow", [True, False])
def test_a_column_that_is_not_numeric_is_named_by_its_line_never_by_its_cell(files, capsys, monkeypatch, command,
                                                                             pyarrow):
    """'invalid value 'Alice Smith'' printed a private cell; the error names the column, the line and
    the kind of problem, with pyarrow and without (the standard library's reader)."""
    import sys

    monkeypatch.chdir(files)
    (files / "names.csv").write_text(NAMES)
    if not pyarrow:
        for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    name, *options = command  # privatize writes binary reports: no pyarrow needed
    err = _one_private_free_line(capsys, (name, "names.csv", "--column", "name", *options))
    assert ("The column 'name' of 'names.csv' must hold numbers. Got a cell that is not a number on line 2 "
            "(its value is not shown: it is data).") in err, err


def test_a_ragged_row_and_a_value_outside_bounds_are_not_shown(files, capsys, monkeypatch):
    """A ragged row (pyarrow quoted it) and a value outside --bounds with --no-clip (quoted as 'e.g.') are named by
    their line or their count."""
    monkeypatch.chdir(files)
    (files / "ragged-names.csv").write_text("age,name\n30,Alice Smith\n40,Bob,Jones\n")
    err = _one_private_free_line(capsys, ("estimate", "ragged-names.csv", "--column", "age", *ESTIMATE))
    assert "CSV parse error: expected 2 columns, got 3 on line 3 (the row is not shown: it is data)" in err, err
    (files / "old.csv").write_text("age\n30\n107\n")
    err = _one_private_free_line(capsys, ("estimate", "old.csv", "--column", "age", "--protocol", "sw", "--epsilon",
                                          "1", "--bounds", "0,100", "--no-clip"))
    assert "Got 1 value(s) outside (not shown: they are data" in err, err


def test_a_parquet_column_of_text_is_refused_without_its_cells(files):
    """A Parquet file's text column read as numbers (datasets.from_file) names the row, not the cell."""
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    from dpdist.datasets.files import _as_float

    with pytest.raises(InvalidValueTypeError) as refused:
        _as_float(np.array(["30", "Alice Smith"], dtype=object), "name", files / "names.parquet")
    assert "in row 2" in str(refused.value) and "Alice" not in str(refused.value)
    pq.write_table(pa.table({"name": ["Alice Smith", "Bob Jones"]}), files / "names.parquet")
    from dpdist.datasets import from_file

    with pytest.raises(InvalidValueTypeError) as refused:
        from_file(files / "names.parquet", "name", bounds=(0, 10))
    assert "Alice" not in str(refused.value) and "'name'" in str(refused.value)


@pytest.mark.parametrize("columns", [["age", "name"], ["name", "age"]])
def test_a_cell_that_is_not_a_number_among_several_columns_is_named_by_its_line_never_by_its_cell(files, columns):
    """With several columns (--columns) pyarrow's 'CSV conversion error to double: invalid value
    'SECRETCELL42'' went out whole; the error names the column and the line, as for one column."""
    from dpdist._io._columns import iter_columns
    from dpdist.errors import InvalidValueTypeError

    path = files / "names.csv"
    path.write_text(NAMES)
    with pytest.raises(InvalidValueTypeError) as raised:
        list(iter_columns(path, columns, text=[False, False]))
    message = str(raised.value)
    assert "The column 'name' of" in message and "not a number on line 2 (its value is not shown" in message, message
    assert not any(word in message for word in PRIVATE), message


@pytest.mark.parametrize("command", [("estimate", *ESTIMATE), ("release", "--epsilon", "1", "--bounds", "0,100")])
@pytest.mark.parametrize("column", ["flag", "when"])
def test_a_parquet_column_of_booleans_or_timestamps_is_not_read_as_numbers(files, capsys, monkeypatch, command, column):
    """Estimate and release read a bool column as 0 and 1 and a timestamp column as epoch microseconds
    (then clipped silently); as privatize, they refuse a column whose Arrow type is not a number, naming it."""
    import datetime

    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    monkeypatch.chdir(files)
    pq.write_table(pa.table({"flag": [True, False], "when": [datetime.datetime(2020, 1, 1)] * 2}), "typed.parquet")
    name, *options = command
    status = main([name, "typed.parquet", "--column", column, *options])
    err = capsys.readouterr().err
    assert status == 2 and f"The column {column!r} of 'typed.parquet' must hold numbers. Got Arrow type" in err, err
