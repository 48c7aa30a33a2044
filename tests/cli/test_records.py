"""``dpdist privatize --columns``: one record per row of a multi-attribute protocol's columns."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest

from dpdist import io, local
from dpdist.cli import main

SCHEMA = [
    {"name": "country", "labels": ["fr", "de", "it"]},
    {"name": "device", "domain_size": 4},
    {"name": "age", "bounds": [0, 100]},
]
CONFIG = {"protocol": "smp", "epsilon": 2.0, "attributes": SCHEMA}


def _table(n: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    country = rng.choice(3, size=n, p=[0.5, 0.3, 0.2])
    return {
        "id": np.arange(n),
        "c": np.array(["fr", "de", "it"])[country],
        "d": (country + rng.integers(0, 2, n)) % 4,
        "a": np.round(np.clip(rng.normal(40, 12, n), 0, 100), 3),
    }


def _write_csv(path, table: dict, rows: list[str] = ()) -> None:
    lines = [",".join(table)] + [",".join(map(str, row)) for row in zip(*(v.tolist() for v in table.values()))]
    path.write_text("\n".join(lines + list(rows)) + "\n")


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "multi.json"
    path.write_text(json.dumps(CONFIG))
    return str(path)


def _privatize(data, config, out, *extra):
    return main(["privatize", str(data), "--config", config, "--columns", "c,d,a", "--out", str(out),
                 "--seed", "7", "--no-progress", *extra])


def _expected_estimate(table: dict, seed: int):
    """What the library estimates from the same records at the seed's one block (the file is one block)."""
    protocol = local.from_config(CONFIG)
    rng = np.random.default_rng(np.random.SeedSequence(seed).spawn(1)[0])
    reports = protocol.privatize({"country": table["c"], "device": table["d"], "age": table["a"]}, rng=rng)
    return protocol.estimate(protocol.aggregator().add(reports))


@pytest.mark.parametrize("form", ["csv", "parquet", "csv-without-pyarrow"])
@pytest.mark.slow  # 0.47 CPU-s: command lines end to end
def test_privatize_columns_then_aggregate_equals_the_library_on_the_same_seed(form, config, tmp_path, monkeypatch):
    table = _table(3000, 1)
    data = tmp_path / ("data.parquet" if form == "parquet" else "data.csv")
    if form == "parquet":
        pa = pytest.importorskip("pyarrow")
        import pyarrow.parquet as pq

        pq.write_table(pa.table(table), data, row_group_size=700)  # several batches, rows stay aligned
    else:
        _write_csv(data, table)
    out = tmp_path / ("r.bin" if form == "csv-without-pyarrow" else "r.parquet")
    if form == "csv-without-pyarrow":
        for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow -> ImportError
    assert _privatize(data, config, out) == 0
    state = tmp_path / "s.bin"
    assert main(["aggregate", str(out), "--state", str(state), "--no-progress"]) == 0
    monkeypatch.undo()
    aggregator = io.load_state(state, journal=False).aggregator
    assert aggregator.n == 3000
    estimate = aggregator.protocol.estimate(aggregator)
    expected = _expected_estimate(table, 7)
    assert estimate.summary() == pytest.approx(expected.summary(), abs=1e-12)


def test_missing_cells_and_unknown_labels_drop_their_rows_and_are_counted(config, tmp_path, capsys):
    table = _table(50, 2)
    data = tmp_path / "data.csv"
    _write_csv(data, table, rows=["50,fr,,30", "51,xx,1,20", "52,de,2,140", "53,,1,", "", "54,it,3,nan"])
    assert _privatize(data, config, tmp_path / "r.parquet") == 2  # refused unless --missing drop
    assert "has 3 missing value(s) (empty cells)" in capsys.readouterr().err
    assert _privatize(data, config, tmp_path / "r.parquet", "--missing", "drop") == 0
    out = capsys.readouterr().out
    assert "51 report(s) of smp" in out  # 50 + the row clipped to the bound
    assert "3 row(s) of" in out and "with a missing cell left out (--missing drop" in out
    assert "1 row(s) with a label outside its attribute's labels rejected" in out
    assert "1 value(s) outside their attribute's bounds clipped" in out
    assert sum(batch.n_read for batch in io.iter_report_batches(tmp_path / "r.parquet")) == 51


def test_columns_given_by_attribute_name_may_come_in_any_order(tmp_path, capsys):
    table = _table(200, 3)
    renamed = {"id": table["id"], "age": table["a"], "country": table["c"], "device": table["d"]}
    data = tmp_path / "data.csv"
    _write_csv(data, renamed)
    (tmp_path / "multi.json").write_text(json.dumps(CONFIG))
    argv = ["privatize", str(data), "--config", str(tmp_path / "multi.json"), "--out", str(tmp_path / "r.bin"),
            "--seed", "7", "--no-progress"]
    protocol = local.from_config(CONFIG)
    assert main([*argv, "--columns", "age,device,country"]) == 0
    def estimated() -> dict:
        return protocol.estimate(protocol.aggregator().add_batch(io.read_reports(tmp_path / "r.bin", protocol))).summary()

    first = estimated()
    assert main([*argv, "--columns", "country,device,age"]) == 0
    assert estimated() == first == _expected_estimate(table, 7).summary()
    capsys.readouterr()


def _ragged_csv(tmp_path):
    data = tmp_path / "data.csv"
    _write_csv(data, _table(20, 4), rows=["99,fr,1"])
    return data


ERRORS = {
    "missing column": (["--columns", "c,d,zz"], "--columns must be one of the columns of"),
    "too few columns": (["--columns", "c,d"], "The '--columns' option must name 3 distinct columns"),
    "repeated column": (["--columns", "c,c,a"], "The '--columns' option must name 3 distinct columns"),
    "swapped attribute": (["--columns", "device,c,a"], "the column 'device' stands for the attribute 'country' there, not for 'device'"),
    "one column of a record": (["--column", "c"], "name their columns with '--columns C1,C2,...'"),
    "item outside the domain": (["--columns", "c,a,d"], "The column 'a' (attribute 'device') must hold the items 0 .. 3"),
    "no-clip": (["--columns", "c,d,a", "--no-clip"], "The column 'a' (attribute 'age') must lie in its bounds [0, 100]"),
    "labels option": (["--columns", "c,d,a", "--labels", "x.txt"], "--labels"),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_bad_columns_get_one_line_naming_the_option(case, config, tmp_path, capsys):
    table = _table(20, 5)
    table["a"][3] = 140.0
    data = tmp_path / "data.csv"
    _write_csv(data, {**table, "device": table["d"]})
    (tmp_path / "x.txt").write_text("fr\nde\nit\n")
    option, expected = ERRORS[case]
    option = [str(tmp_path / word) if word == "x.txt" else word for word in option]
    status = main(["privatize", str(data), "--config", config, *option, "--out", str(tmp_path / "r.bin"), "--no-progress"])
    err = capsys.readouterr().err
    assert status == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert expected in err, err
    assert not (tmp_path / "r.bin").exists()


def test_columns_needs_a_multi_attribute_protocol(tmp_path, capsys):
    data = tmp_path / "data.csv"
    _write_csv(data, _table(20, 6))
    (tmp_path / "grr.json").write_text(json.dumps({"protocol": "grr", "epsilon": 1.0, "domain_size": 4}))
    assert main(["privatize", str(data), "--config", str(tmp_path / "grr.json"), "--columns", "d,a",
                 "--out", str(tmp_path / "r.bin")]) == 2
    assert "needs a multi-attribute protocol" in capsys.readouterr().err
    assert main(["privatize", str(data), "--config", str(tmp_path / "grr.json"), "--out", str(tmp_path / "r.bin")]) == 2
    assert "name its column with '--column'" in capsys.readouterr().err


@pytest.mark.parametrize("pyarrow", [True, False], ids=["pyarrow", "stdlib"])
def test_a_row_of_fewer_cells_than_the_header_is_refused(pyarrow, config, tmp_path, capsys, monkeypatch):
    if pyarrow:
        pytest.importorskip("pyarrow")
    else:
        for name in [m for m in sys.modules if m == "pyarrow" or m.startswith("pyarrow.")]:
            monkeypatch.delitem(sys.modules, name)
        monkeypatch.setitem(sys.modules, "pyarrow", None)
    assert _privatize(_ragged_csv(tmp_path), config, tmp_path / "r.bin") == 2
    err = capsys.readouterr().err
    assert "is not a readable CSV file" in err or "as many cells on every row as its header (4). Got 3 on line 22" in err, err
    assert len(err.strip().splitlines()) == 1


def test_one_shot_estimate_of_columns_equals_the_library_on_the_same_seed(tmp_path, capsys):
    table = _table(4000, 8)
    data = tmp_path / "data.csv"
    _write_csv(data, table)
    assert main(["estimate", str(data), "--columns", "c,d,a", "--attributes", json.dumps(SCHEMA),
                 "--protocol", "smp", "--epsilon", "2", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    protocol = local.from_config(CONFIG)
    records = {"country": table["c"], "device": table["d"], "age": table["a"]}
    expected = protocol.estimate(protocol.simulate(records, rng=np.random.default_rng(3)))
    truth = {"country": np.bincount(np.searchsorted(["de", "fr", "it"], table["c"]), minlength=3)[[1, 0, 2]] / 4000,
             "device": np.bincount(table["d"], minlength=4) / 4000, "age": table["a"]}
    assert "smp with epsilon=2 on 4000 records of the columns ['c', 'd', 'a']" in out
    assert expected.describe(truth) in out


@pytest.mark.parametrize("argv, expected", [
    (["--columns", "c,d,a", "--protocol", "smp"], "'--columns' option needs '--attributes'"),
    (["--columns", "c,d,a", "--attributes", "[{\"name\": \"x\"}]", "--protocol", "smp"], "--attributes must be a list"),
    (["--columns", "c,d,a", "--attributes", json.dumps(SCHEMA), "--protocol", "grr"], "'--columns' option applies with '--protocol' a multi-attribute protocol only (docs/explanation/multi-attribute.md). "
     "Got --protocol 'grr'."),
    (["--columns", "c,d,a", "--column", "c", "--protocol", "smp"], "'--column' option cannot be used with '--columns'"),
    (["--column", "c", "--attributes", json.dumps(SCHEMA), "--protocol", "grr"], "'--attributes' option needs '--columns': it is the schema"),
    (["--column", "c", "--protocol", "smp"], "name their columns with '--columns C1,C2,...'"),
])
def test_one_shot_estimate_of_columns_errors_name_the_option(argv, expected, tmp_path, capsys):
    data = tmp_path / "data.csv"
    _write_csv(data, _table(20, 9))
    assert main(["estimate", str(data), "--epsilon", "1", *argv]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and expected in err, err


@pytest.mark.slow  # 0.40 CPU-s: the page's command lines end to end
def test_the_command_line_section_of_the_docs_runs_as_written(tmp_path, monkeypatch, capsys):
    """docs/how-to/collect-several-attributes.md, "On the command line": its Python block writes the files, its commands run."""
    import re
    import shlex
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "how-to" / "collect-several-attributes.md").read_text()
    section = page.split("## On the command line", 1)[1].split("\n## ", 1)[0]
    monkeypatch.chdir(tmp_path)
    for code in re.findall(r"^```python\n(.*?)^```", section, re.MULTILINE | re.DOTALL):
        exec(compile(code, "multi_attribute.md", "exec"), {"__name__": "__doc_snippet__"})
    (commands,) = re.findall(r"^```bash\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    lines = [line for line in commands.splitlines() if line.startswith("dpdist ")]
    assert len(lines) == 4
    for line in lines:
        assert main(shlex.split(line)[1:]) == 0, line
    out = capsys.readouterr().out
    assert "5000 report(s) of spl written to reports.parquet" in out
    assert "smp with epsilon=2 on 5000 records of the columns ['sex', 'age', 'income']" in out
    assert (tmp_path / "people-estimate.csv").read_text().startswith("attribute,")
