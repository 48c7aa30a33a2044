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


@pytest.mark.parametrize(("statement", "named"), [
    ("SELECT region, COUNT(*) FROM t JOIN u ON t.a = u.a GROUP BY region", "refuses JOIN"),
    ("SELECT COUNT(*) FROM t WHERE age > 30", "refuses WHERE"),
    ("SELECT region, COUNT(*) FROM t GROUP BY region HAVING COUNT(*) > 5", "refuses HAVING"),
    ("SELECT region, COUNT(*) FROM t GROUP BY region ORDER BY COUNT(*)", "refuses ORDER BY"),
    ("SELECT COUNT(*) FROM t LIMIT 3", "refuses LIMIT"),
    ("SELECT SUM(income) OVER (PARTITION BY region) FROM t", "refuses window functions"),
    ("SELECT COUNT(*) FROM (SELECT * FROM t)", "refuses subqueries"),
    ("WITH u AS (SELECT * FROM t) SELECT COUNT(*) FROM u", "refuses WITH"),
    ("SELECT COUNT(*) FROM t UNION SELECT COUNT(*) FROM t", "refuses a UNION statement"),
    ("DELETE FROM t", "refuses a DELETE statement"),
    ("SELECT age FROM t", "the column 'age' outside an aggregate"),
    ("SELECT COUNT(*) AS n FROM t", "the alias 'n'"),
    ("SELECT STDDEV(income) FROM t", "STDDEV"),
    ("SELECT COUNT(age) FROM t", "COUNT"),
    ("SELECT COUNT(*) FROM t GROUP BY age / 10", "GROUP BY"),
    ("SELECT SUM(salary) FROM t", "'bounds'"),
    ("SELECT COUNT(*) FROM u", "'tables'"),
    ("SELECT COUNT(* FROM t", "could not parse"),
])
def test_unsupported_sql_is_refused_in_one_line_naming_it(statement, named):
    with pytest.raises(InvalidParameterError, match=named) as refused:
        dpdist.sql(statement, tables={"t": TABLE}, epsilon=1.0, bounds=BOUNDS)
    assert "\n" not in str(refused.value)
