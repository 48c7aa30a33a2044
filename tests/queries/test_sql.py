"""``dpdist.sql``: one SELECT into the query its expressions build; everything else refused in one line by name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpdist
from dpdist.errors import InvalidParameterError

RNG = np.random.default_rng(5)
TABLE = pd.DataFrame({"region": RNG.choice(["north", "south"], 3_000), "income": RNG.lognormal(10, 0.7, 3_000),
                      "age": RNG.integers(18, 90, 3_000)})
BOUNDS = {"income": (0, 3e5), "age": (0, 80)}
KEYS = {"region": ["north", "south"]}


def test_a_select_builds_the_same_plan_as_the_expressions():
    from dpdist.queries import count, histogram, mean, quantiles

    built = dpdist.sql("SELECT region, QUANTILES(income, 0.1, 0.5, 0.9), COUNT(*), HISTOGRAM(age, 8), AVG(income) "
                       "FROM t GROUP BY region", tables={"t": TABLE}, epsilon=1.0, bounds=BOUNDS, keys=KEYS)
    expressed = dpdist.query(TABLE, epsilon=1.0).group_by("region", keys=KEYS["region"]).agg(
        quantiles("income", [0.1, 0.5, 0.9], BOUNDS["income"]), count(), histogram("age", 8, BOUNDS["age"]),
        mean("income", BOUNDS["income"]))
    assert built.plan() == expressed.plan()


def test_a_select_releases_one_row_per_group():
    table = dpdist.sql("SELECT region, MEDIAN(income), COUNT(*) FROM t GROUP BY region", tables={"t": TABLE},
                       epsilon=1.0, bounds=BOUNDS, keys=KEYS, rng=0).release().table()
    assert list(table["region"]) == KEYS["region"] and {"income 0.5 quantile", "count"} <= set(table.columns)


def test_where_keeps_the_rows_its_predicate_holds_for_before_the_query():
    statement = ("SELECT COUNT(*) FROM t WHERE (age >= 30 AND region IN ('north')) OR NOT age BETWEEN -5 AND 80.5 "
                 "OR income IS NULL")
    filtered = dpdist.sql(statement, tables={"t": TABLE}, epsilon=1.0).table
    expected = TABLE[((TABLE.age >= 30) & (TABLE.region == "north")) | ~TABLE.age.between(-5, 80.5)
                     | TABLE.income.isna()]
    assert filtered.equals(expected)


def test_where_runs_in_the_tables_engine():
    polars = pytest.importorskip("polars")
    lazy = polars.from_pandas(TABLE).lazy()
    filtered = dpdist.sql("SELECT COUNT(*) FROM t WHERE region <> 'south' AND age < 40", tables={"t": lazy},
                          epsilon=1.0).table
    assert isinstance(filtered, polars.LazyFrame)
    assert filtered.collect().height == int(((TABLE.region != "south") & (TABLE.age < 40)).sum())


def test_aliases_name_the_key_and_the_statistics_in_the_released_table():
    table = dpdist.sql("SELECT region AS area, COUNT(*) AS people, AVG(income) AS mean_income, MEDIAN(income) AS inc, "
                       "HISTOGRAM(age, 2) AS ages FROM t GROUP BY region", tables={"t": TABLE}, epsilon=1.0,
                       bounds=BOUNDS, keys=KEYS, rng=0).release().table()
    assert list(table.columns) == ["area", "people", "people low", "people high", "level", "mean_income",
                                   "mean_income low", "mean_income high", "inc 0.5 quantile", "inc 0.5 quantile low",
                                   "inc 0.5 quantile high", "ages share [0, 40)", "ages share [40, 80)"]
    assert list(table["area"]) == KEYS["region"]


def test_count_distinct_of_the_privacy_id_is_the_number_of_persons():
    from dpdist.queries import persons

    table = TABLE.assign(person=np.arange(len(TABLE)) // 3)
    built = dpdist.sql("SELECT region, COUNT(DISTINCT person) AS people FROM t GROUP BY region", tables={"t": table},
                       epsilon=1.0, keys=KEYS, privacy_id="person", max_contributions=3)
    assert built.plan() == dpdist.query(table, epsilon=1.0, privacy_id="person", max_contributions=3).group_by(
        "region", keys=KEYS["region"]).agg(persons().named("people")).plan()
    assert "people" in built.release().table().columns


def test_count_distinct_of_another_column_is_the_number_of_its_distinct_values():
    from dpdist.queries import distinct

    built = dpdist.sql("SELECT region, COUNT(DISTINCT age) AS ages FROM t GROUP BY region", tables={"t": TABLE},
                       epsilon=1.0, keys=KEYS, rng=2)
    assert built.plan() == dpdist.query(TABLE, epsilon=1.0).group_by("region", keys=KEYS["region"]).agg(
        distinct("age").named("ages")).plan()
    table = built.release().table().set_index("region")
    assert np.abs(table["ages"] - TABLE.groupby("region")["age"].nunique()).max() < 10  # 72 ages, noise sd 1.4
    assert list(table.columns) == ["ages", "ages low", "ages high", "level"]


@pytest.mark.parametrize(("statement", "named"), [
    ("SELECT region, COUNT(*) FROM t JOIN u ON t.a = u.a GROUP BY region", "refuses JOIN"),
    ("SELECT COUNT(*) FROM t WHERE age > (SELECT 30)", "refuses subqueries"),
    ("SELECT COUNT(*) FROM t WHERE age + 1 > 30", "WHERE ... age \\+ 1"),
    ("SELECT COUNT(*) FROM t WHERE LOWER(region) = 'north'", "a row filter compares columns and constants"),
    ("SELECT COUNT(*) FROM t WHERE salary > 30", "WHERE on the column 'salary'"),
    ("SELECT region, COUNT(*) FROM t GROUP BY region HAVING COUNT(*) > 5", "refuses HAVING"),
    ("SELECT region, COUNT(*) FROM t GROUP BY region ORDER BY COUNT(*)", "refuses ORDER BY"),
    ("SELECT COUNT(*) FROM t LIMIT 3", "refuses LIMIT"),
    ("SELECT SUM(income) OVER (PARTITION BY region) FROM t", "refuses window functions"),
    ("SELECT COUNT(*) FROM (SELECT * FROM t)", "refuses subqueries"),
    ("WITH u AS (SELECT * FROM t) SELECT COUNT(*) FROM u", "refuses WITH"),
    ("SELECT COUNT(*) FROM t UNION SELECT COUNT(*) FROM t", "refuses a UNION statement"),
    ("DELETE FROM t", "refuses a DELETE statement"),
    ("SELECT age FROM t", "the column 'age' outside an aggregate"),
    ("SELECT COUNT(*) AS n, SUM(income) AS n FROM t", "the aliases"),
    ("SELECT region, COUNT(*) AS region FROM t GROUP BY region", "the aliases"),
    ("SELECT STDDEV(income) FROM t", "STDDEV"),
    ("SELECT COUNT(age) FROM t", "COUNT"),
    ("SELECT COUNT(DISTINCT age, income) FROM t", "a distinct count is of one column"),
    ("SELECT COUNT(*) FROM t GROUP BY age / 10", "GROUP BY"),
    ("SELECT SUM(salary) FROM t", "'bounds'"),
    ("SELECT COUNT(*) FROM u", "'tables'"),
    ("SELECT COUNT(* FROM t", "could not parse"),
    ("SELECT COUNT(*) FROM t WHERE name = 'unterminated", "could not parse"),
    ("SELECT COUNT(*) FROM t TABLESAMPLE (10 PERCENT)", "refuses TABLESAMPLE"),
    ("SELECT HISTOGRAM(income, 8.7) FROM t", "'bins' .* Got 8.7"),
    ("SELECT COUNT(*) FROM t WHERE " + "(" * 500 + "age > 3" + ")" * 500, "nested more deeply"),
    ("SELECT COUNT(*) FROM t WHERE " + "NOT " * 400 + "age > 3", "nested more deeply"),
    ("SELECT SUM(u.income) FROM t", "u.income, a column of a table not in FROM"),
    ("SELECT u.region, COUNT(*) FROM t GROUP BY region", "u.region, a column of a table not in FROM"),
    ("SELECT region, COUNT(*) FROM t GROUP BY u.region", "u.region, a column of a table not in FROM"),
    ("SELECT COUNT(DISTINCT u.age) FROM t", "u.age, a column of a table not in FROM"),
    ("SELECT COUNT(*) FROM db.t", "FROM db.t: name one of the tables"),
    ("SELECT COUNT(*) FROM t AS x(a, b)", "an alias names the table, not its columns"),
    ("SELECT region, COUNT(*) FROM t GROUP BY ROLLUP (region)", "group by columns"),
    ("SELECT COUNT(*) FROM t OFFSET 3", "refuses OFFSET"),
    ("SELECT SUM(DISTINCT income) FROM t", "SUM\\(DISTINCT income\\)"),
])
def test_unsupported_sql_is_refused_in_one_line_naming_it(statement, named):
    with pytest.raises(InvalidParameterError, match=named) as refused:
        dpdist.sql(statement, tables={"t": TABLE}, epsilon=1.0, bounds=BOUNDS)
    assert "\n" not in str(refused.value)
