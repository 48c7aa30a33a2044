"""The WHERE clause of ``dpdist.sql``: typed against the schema before any engine runs it, refused by name where the
types do not fit, and one meaning (SQL's three-valued logic, NaN as NULL) on every engine."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpdist
from dpdist.errors import InvalidParameterError

duckdb = pytest.importorskip("duckdb")
polars = pytest.importorskip("polars")

RNG = np.random.default_rng(8)
N = 400
#: a table with missing cells of every kind: nulls in the strings and booleans, NaN and nulls in the floats
TABLE = pd.DataFrame({
    "id": np.arange(N),
    "age": RNG.integers(0, 100, N),
    "score": np.where(RNG.random(N) < 0.15, np.nan, RNG.normal(0, 1, N)),
    "city": pd.array(np.where(RNG.random(N) < 0.1, None, RNG.choice(["ames", "bern", "cork", "oslo"], N)),
                     dtype="string"),
    "member": pd.array(np.where(RNG.random(N) < 0.1, None, RNG.random(N) < 0.5), dtype="boolean"),
    "kind": pd.Categorical(RNG.choice(["x", "y"], N)),
})
TABLE.loc[RNG.choice(N, 20, replace=False), "score"] = None  # pandas holds these as NaN too: dpdist's missing values


def _engines() -> dict:
    people = TABLE  # noqa: F841 (read by duckdb's replacement scan)
    return {"pandas": TABLE, "polars": polars.from_pandas(TABLE), "polars-lazy": polars.from_pandas(TABLE).lazy(),
            "duckdb": duckdb.sql("SELECT * FROM people")}


def _ids(native) -> list[int]:
    """The ids of the rows a filtered frame of any engine holds."""
    if hasattr(native, "collect"):
        native = native.collect()
    if hasattr(native, "fetchdf"):
        native = native.fetchdf()
    column = native["id"]
    return sorted(int(value) for value in (column.to_list() if hasattr(column, "to_list") else column))


def _reference(condition: str) -> list[int]:
    """The rows SQL keeps: DuckDB's own WHERE over the table with every NaN made NULL (dpdist's missing values)."""
    nulled = TABLE.assign(score=TABLE["score"].astype("Float64"), kind=TABLE["kind"].astype("string"))  # noqa: F841
    return sorted(int(row[0]) for row in duckdb.sql(f"SELECT id FROM nulled WHERE {condition}").fetchall())


@pytest.mark.parametrize("condition", [
    "score > 0", "NOT score > 0", "NOT (score > 0 OR city = 'bern')", "score > 0 AND NOT member = TRUE",
    "NOT (member = TRUE)", "city IN ('ames', 'oslo')", "NOT city IN ('ames', 'oslo')", "age IN (3, 4.0, 99)",
    "score BETWEEN -0.5 AND 0.5", "NOT score BETWEEN -0.5 AND 0.5", "city BETWEEN 'b' AND 'd'", "score IS NULL",
    "NOT (city IS NOT NULL AND score < -age)", "kind = 'x' OR kind <> 'y'", "member", "NOT member",
    "member = FALSE OR score >= -1e0", "age > 50 AND (city < 'c' OR NOT (score <= .5))", "age = -3 OR 2 > 1",
    "TRUE", "1 = 1", "FALSE", "NOT 'a' < 'b'",
])
def test_a_condition_keeps_the_rows_sql_keeps_on_every_engine(condition):
    """SQL's three-valued logic, NaN as NULL: pandas' NaN compares false and Polars' and DuckDB's NaN is the largest
    number, yet every engine keeps the rows DuckDB's own SQL keeps on the table with NaN made NULL."""
    expected = _reference(condition)
    for engine, frame in _engines().items():
        filtered = dpdist.sql(f"SELECT COUNT(*) FROM t WHERE {condition}", tables={"t": frame}, epsilon=1.0).table
        assert _ids(filtered) == expected, engine


def test_a_constant_condition_keeps_every_row_or_none_in_the_tables_own_engine():
    for engine, frame in _engines().items():
        assert dpdist.sql("SELECT COUNT(*) FROM t WHERE 1 = 1", tables={"t": frame}, epsilon=1.0).table is frame
        empty = dpdist.sql("SELECT COUNT(*) FROM t WHERE 1 > 2", tables={"t": frame}, epsilon=1.0).table
        assert type(empty) is type(frame) and _ids(empty) == [], engine


@pytest.mark.slow  # 0.5 CPU-s: sqlglot parses 600 comparisons
def test_long_chains_and_runs_of_not_are_read_without_recursion():
    chain = " AND ".join(f"age <> {value}" for value in range(100, 700))
    assert _ids(dpdist.sql(f"SELECT COUNT(*) FROM t WHERE {chain}", tables={"t": TABLE}, epsilon=1.0).table) == \
        list(range(N))  # ages are below 100: every row kept
    nots = dpdist.sql("SELECT COUNT(*) FROM t WHERE " + "NOT " * 101 + "age > 50", tables={"t": TABLE}, epsilon=1.0)
    assert _ids(nots.table) == _reference("NOT age > 50")


@pytest.mark.parametrize(("condition", "named"), [
    ("age", "age as a condition: a condition is true or false, and it holds numbers"),
    ("NOT age", "age as a condition"),
    ("city", "city as a condition: .* it holds strings"),
    ("age AND member", "age as a condition"),
    ("city > 3", "city > 3: city is a string and 3 is a number"),
    ("age = 'x'", "age is a number and 'x' is a string"),
    ("age IN (1, 'a')", "age is a number and 'a' is a string"),
    ("-city > 3", "a minus sign goes before a number"),
    ("member > FALSE", "booleans compare with =, <>, IN or IS NULL only"),
    ("kind > 'x'", "categorical values .* compare with =, <>, IN or IS NULL only"),
    ("kind BETWEEN 'a' AND 'z'", "categorical values"),
    ("u.age > 80", "u.age, a column of a table not in FROM: a query reads one table \\(t\\)"),
    ("salary > 3", "on the column 'salary', which the table does not have"),
    ("age = NULL", "a comparison with NULL is never true in SQL; test a missing value with IS NULL"),
    ("member IS TRUE", "IS tests NULL only"),
    ("age BETWEEN SYMMETRIC 1 AND 3", "a condition compares values of one type"),
    ("age > 99999999999999999999", "numbers are 64-bit"),
    ("age > 1e999", "numbers are 64-bit"),
    ("age + city > 30", "age \\+ city: arithmetic and ADD take numbers; city is a string"),
    ("LOWER(city) = 'ames'", "LOWER\\(city\\): a condition compares values"),
    ("city LIKE 'a%'", "city LIKE 'a%': a condition compares values"),
    ("age / 0 > 1", "a division by the constant 0"),
    ("CASE WHEN age > 3 THEN 1 ELSE 'a' END = 1", "the branches of a CASE are values of one type"),
    ("FLOOR(city) = 1", "arithmetic and FLOOR take numbers; city is a string"),
    ("ROUND(age, score) > 1", "ROUND\\(x, digits\\) takes a constant number of digits"),
    (" + ".join(["age"] * 100) + " > 1", "an expression nested more than 64 levels deep"),
    ("CASE " + "WHEN age > 1 THEN 1 " * 70 + "END = 1", "a CASE of at most 64 branches"),
    ("GREATEST(" + ", ".join(["age"] * 70) + ") > 1", "LEAST and GREATEST take at most 64 values"),
])
def test_a_condition_whose_types_do_not_fit_is_refused_by_name_before_any_engine_runs(condition, named):
    for engine, frame in _engines().items():
        with pytest.raises(InvalidParameterError, match=f"dpdist.sql refuses WHERE .*{named}") as refused:
            dpdist.sql(f"SELECT COUNT(*) FROM t WHERE {condition}", tables={"t": frame}, epsilon=1.0)
        assert "\n" not in str(refused.value), engine


def test_a_column_may_be_qualified_by_its_table_or_its_alias():
    expected = _reference("age > 80")
    for statement in ("SELECT COUNT(*) FROM t WHERE t.age > 80", "SELECT COUNT(*) FROM t AS p WHERE p.age > 80"):
        assert _ids(dpdist.sql(statement, tables={"t": TABLE}, epsilon=1.0).table) == expected
    with pytest.raises(InvalidParameterError, match="t.age, a column of a table not in FROM: .* \\(p\\)"):
        dpdist.sql("SELECT COUNT(*) FROM t AS p WHERE t.age > 80", tables={"t": TABLE}, epsilon=1.0)


@pytest.mark.parametrize("condition", [
    "age + 1 > 50", "age * 2 - 10 >= score * 30", "age / 4 > 10.5", "FLOOR(age / 10) = 3", "CEIL(score) = 1",
    "ABS(score) < 0.5", "ROUND(score, 1) = 0.3", "ROUND(age / 8) = 6", "-(age - 50) > 0", "(age > 50) = TRUE",
    "CASE WHEN age > 50 THEN score ELSE -score END > 0", "CASE city WHEN 'ames' THEN 1 WHEN 'bern' THEN 2 ELSE 3 END = 2",
    "CASE WHEN score > 0 THEN 'pos' END = 'pos'", "NOT CASE WHEN score > 0 THEN 'pos' ELSE 'neg' END = 'pos'",
    "GREATEST(age, 30) = 30", "LEAST(age, 60) + 1 > 41", "IF(member, age, 0) > 40", "NOT score * 0 = 0 OR age < 10",
    "CASE WHEN member THEN age > 20 ELSE score > 0 END", "FLOOR(score * 3) IN (-1, 1)",
])
def test_an_expression_means_what_sql_means_on_every_engine(condition):
    """Arithmetic, FLOOR, CEIL, ROUND (half away from zero), ABS, LEAST, GREATEST, CASE and IF over missing cells keep
    the rows DuckDB's own SQL keeps on the table with NaN made NULL, on every engine."""
    expected = _reference(condition)
    assert expected and len(expected) < N, condition  # the condition splits the table
    for engine, frame in _engines().items():
        filtered = dpdist.sql(f"SELECT COUNT(*) FROM t WHERE {condition}", tables={"t": frame}, epsilon=1.0).table
        assert _ids(filtered) == expected, engine


#: columns narrower than 64 bits: Polars compares a Float32 column with a constant in 32 bits, pandas and DuckDB in 64
NARROW = pd.DataFrame({"id": np.arange(6), "f": np.array([0.1, 0.5, 1e-45, 0.0, -0.1, 3.0], dtype="float32"),
                       "b": np.array([-128, 0, 1, 2, 100, 127], dtype="int8"),
                       "n": pd.array([None, 1, 2, 3, 4, 5], dtype="Int8")})


@pytest.mark.parametrize(("condition", "expected"), [
    ("f = 0.1", []), ("f = 0.5", [1]), ("f < 1e-46", [3, 4]), ("f IN (0.1, 0.5)", [1]), ("b = 300", []),
    ("b + 100 > 200", [5]), ("b IN (1, 2.0, 2.5, 300, -129)", [2, 3]), ("NOT b IN (-128, 127)", [1, 2, 3, 4]),
    ("n * 2 > 5", [3, 4, 5]), ("FLOOR(n / 2) = 1", [2, 3]), ("n IN (1, 5)", [1, 5]),
])
def test_a_narrower_number_column_compares_in_64_bits_on_every_engine(condition, expected):
    """A float32 or int8 column is read as 64-bit floats before any comparison: its values compare with a constant as
    64-bit numbers on every engine (float32(0.1) is not 0.1), a missing value of a nullable one fails no cast (Dask's
    cast to integers did), and an IN list is one test per row."""
    narrow = NARROW  # noqa: F841 (read by duckdb's replacement scan)
    dask = pytest.importorskip("dask.dataframe")
    engines = {"pandas": NARROW, "polars": polars.from_pandas(NARROW), "duckdb": duckdb.sql("SELECT * FROM narrow"),
               "dask": dask.from_pandas(NARROW, npartitions=2)}
    for engine, frame in engines.items():
        filtered = dpdist.sql(f"SELECT COUNT(*) FROM t WHERE {condition}", tables={"t": frame}, epsilon=1.0).table
        assert _ids(filtered.compute() if engine == "dask" else filtered) == expected, engine


def test_a_division_by_zero_and_an_extreme_of_a_missing_value_are_missing_on_every_engine():
    """x / 0 is missing (BigQuery's SAFE_DIVIDE; DuckDB's own gives infinity, pandas' NaN), and LEAST or GREATEST of a
    missing value is missing (BigQuery's; DuckDB's own skips it): one meaning on every engine, tested IS NULL."""
    divided = sorted(int(i) for i in TABLE.loc[(TABLE.age % 7 == 0) | TABLE.score.isna(), "id"])
    least = sorted(int(i) for i in TABLE.loc[TABLE.score.isna(), "id"])
    for engine, frame in _engines().items():
        assert _ids(dpdist.sql("SELECT COUNT(*) FROM t WHERE score / (age % 7) IS NULL".replace("age % 7", "age - 7 * "
                               "FLOOR(age / 7)"), tables={"t": frame}, epsilon=1.0).table) == divided, engine
        assert _ids(dpdist.sql("SELECT COUNT(*) FROM t WHERE LEAST(age, score) IS NULL", tables={"t": frame},
                               epsilon=1.0).table) == least, engine


def test_a_derived_key_is_the_same_integer_on_every_engine():
    """GROUP BY FLOOR(age / 10): integer keys (public keys 0..9 match them on every engine), the same release."""
    tables = []
    for engine, frame in _engines().items():
        built = dpdist.sql("SELECT FLOOR(age / 10) AS decade, COUNT(*) AS n FROM t GROUP BY FLOOR(age / 10)",
                           tables={"t": frame}, epsilon=1.0, keys={"decade": list(range(10))}, rng=4)
        columns = built.release().columns()
        assert columns["decade"] == list(range(10)), engine
        tables.append(columns)
    assert all(table == tables[0] for table in tables)
    true = np.bincount(TABLE.age // 10, minlength=10)
    assert np.abs(np.array(tables[0]["n"]) - true).max() < 12  # noise sd 1.4


def test_an_expressions_range_comes_from_its_columns_bounds():
    """Interval arithmetic over the public bounds: what an aggregate of an expression is clipped to."""
    from sqlglot import parse_one
    from sqlglot import expressions as exp

    from dpdist.frame._tables import narwhals, open_frame
    from dpdist.queries._expressions import RowCompiler, Scope

    scope = Scope.of_table(open_frame("test", TABLE).schema, "t", {"age": (0, 100), "score": (-4, 4)})
    compiler = RowCompiler(exp, narwhals(), scope, "SELECT")
    for text, expected in [("age * 0.1", (0, 10)), ("age - score", (-4, 104)), ("score * score", (-16, 16)),
                           ("age / (score + 5)", (0, 100)), ("FLOOR(score)", (-4, 4)), ("ABS(score - 1)", (0, 5)),
                           ("CASE WHEN age > 3 THEN score ELSE 10 END", (-4, 10)), ("LEAST(age, 50)", (0, 50)),
                           ("age / score", (None, None)), ("age + id", (None, None))]:
        value = compiler.value(parse_one(text))
        assert (value.low, value.high) == expected, text
