"""``dpdist.sql``: one SELECT into the query its expressions build; everything else refused in one line by name."""

from __future__ import annotations

import re

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


def test_keys_listed_for_a_statement_without_group_by_are_refused_and_a_dict_of_several_columns_serves_any():
    with pytest.raises(InvalidParameterError, match="'keys' argument of dpdist.sql lists the keys of a GROUP BY"):
        dpdist.sql("SELECT COUNT(*) FROM t", tables={"t": TABLE}, epsilon=1.0, keys=["north"])
    declared = {**KEYS, "decade": [1, 2]}  # one declaration of the table's keys, for several statements
    for statement in ("SELECT COUNT(*) FROM t", "SELECT region, COUNT(*) FROM t GROUP BY region"):
        dpdist.sql(statement, tables={"t": TABLE}, epsilon=1.0, keys=declared, bounds=BOUNDS).plan()


def test_count_distinct_of_the_privacy_id_is_the_number_of_persons():
    from dpdist.queries import persons

    table = TABLE.assign(person=np.arange(len(TABLE)) // 3)
    built = dpdist.sql("SELECT region, COUNT(DISTINCT person) AS people FROM t GROUP BY region", tables={"t": table},
                       epsilon=1.0, keys=KEYS, privacy_id="person", max_contributions=3, max_groups=2)
    assert built.plan() == dpdist.query(table, epsilon=1.0, privacy_id="person", max_contributions=3,
                                        max_groups=2).group_by(
        "region", keys=KEYS["region"]).agg(persons().named("people")).plan()
    assert "people" in built.release().table().columns


def test_a_select_takes_the_delta_of_gaussian_statistics_and_the_selection_of_private_keys():
    from dpdist.queries import count, sum

    table = TABLE.assign(person=np.arange(len(TABLE)) // 3)
    unit = {"privacy_id": "person", "max_contributions": 3, "max_groups": 20}
    built = dpdist.sql("SELECT region, COUNT(*), SUM(age) FROM t GROUP BY region", tables={"t": table},
                       epsilon=1.0, bounds=BOUNDS, delta=1e-5, selection="weighted_gaussian", **unit)
    assert built.plan() == dpdist.query(table, epsilon=1.0, delta=1e-5, **unit).group_by(
        "region", selection="weighted_gaussian").agg(count(), sum("age", BOUNDS["age"])).plan()
    assert [planned.noise for planned in built.plan().statistics] == ["gaussian", "gaussian"]
    assert built.method == "weighted_gaussian" and "by weighted_gaussian selection, as asked" in built.explain(100)
    default = dpdist.sql("SELECT region, COUNT(*) FROM t GROUP BY region", tables={"t": table}, epsilon=1.0, **unit)
    assert "by adaptive selection, the default beyond one key per person (max_groups 20)" in default.explain(100)


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
    ("SELECT region, COUNT(*) FROM t JOIN u ON t.a = u.a GROUP BY region", "'tables' .* the table 'u'"),
    ("SELECT region, COUNT(*) FROM t RIGHT JOIN t AS u ON t.age = u.age GROUP BY region", "refuses RIGHT JOIN"),
    ("SELECT region, COUNT(*) FROM t JOIN t AS u ON t.age = u.age GROUP BY region", "without privacy_id"),
    ("SELECT region, COUNT(*) FROM t JOIN t AS u ON t.age > u.age GROUP BY region", "equalities of columns"),
    ("SELECT region, COUNT(*) FROM t CROSS JOIN t AS u GROUP BY region", "refuses CROSS JOIN"),
    ("SELECT COUNT(*) FROM t WHERE age > (SELECT 30)", "refuses subqueries"),
    ("SELECT COUNT(*) FROM t WHERE age + region > 30", "WHERE ... age \\+ region: arithmetic .* region is a string"),
    ("SELECT COUNT(*) FROM t WHERE LOWER(region) = 'north'", "LOWER\\(region\\): a condition compares values"),
    ("SELECT COUNT(*) FROM t WHERE salary > 30", "WHERE on the column 'salary'"),
    ("SELECT region, COUNT(*) FROM t GROUP BY region HAVING SUM(age) > 5", "HAVING on SUM\\(age\\), which the SELECT"),
    ("SELECT region, HISTOGRAM(age, 4) AS h FROM t GROUP BY region HAVING h > 5", "which releases several cells"),
    ("SELECT region, COUNT(*) FROM t GROUP BY region HAVING COUNT(*) > 'a'", "is a number and 'a' is a string"),
    ("SELECT region, COUNT(*) FROM t GROUP BY region ORDER BY COUNT(*)", "refuses ORDER BY"),
    ("SELECT COUNT(*) FROM t LIMIT 3", "refuses LIMIT"),
    ("SELECT SUM(income) OVER (PARTITION BY region) FROM t", "refuses window functions"),
    ("SELECT COUNT(*) FROM (SELECT * FROM t)", "refuses a subquery without privacy_id"),
    ("SELECT COUNT(*) FROM t WHERE age IN (SELECT age FROM t)", "refuses subqueries other than a per-person one"),
    ("WITH u AS (SELECT * FROM t) SELECT COUNT(*) FROM u", "refuses WITH"),
    ("SELECT COUNT(*) FROM t UNION SELECT COUNT(*) FROM t", "refuses a UNION statement"),
    ("DELETE FROM t", "refuses a DELETE statement"),
    ("SELECT age FROM t", "the column 'age' outside an aggregate"),
    ("SELECT COUNT(*) AS n, SUM(income) AS n FROM t", "the aliases"),
    ("SELECT region, COUNT(*) AS region FROM t GROUP BY region", "the aliases"),
    ("SELECT COVAR_POP(income, age) FROM t", "COVAR_POP\\(income, age\\): the aggregates are"),
    ("SELECT COUNT(DISTINCT age, income) FROM t", "arguments are one column or expression \\(or \\*\\) and numbers"),
    ("SELECT COUNT(*) FROM t GROUP BY 1", "by name \\(not by position\\)"),
    ("SELECT SUM(income / age) FROM t", "'bounds' .* the expression .* 'income / age'"),
    ("SELECT SUM(COUNT(*)) FROM t", "arithmetic on an aggregate"),
    ("SELECT COUNT(*) * 2 FROM t", "COUNT\\(\\*\\) \\* 2 outside an aggregate"),
    ("SELECT SUM(CASE WHEN age > 3 THEN income ELSE 'x' END) FROM t", "the branches of a CASE are values of one type"),
    ("SELECT SUM(region * 2) FROM t", "arithmetic .* region is a string"),
    ("SELECT SUM(salary) FROM t", "'bounds'"),
    ("SELECT SUM(salary + 1) FROM t", "the column 'salary', which the table does not have"),
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
    ('SELECT COUNT(*) AS "" FROM t', 'AS "", an empty name'),
    ('SELECT region AS "", COUNT(*) FROM t GROUP BY region', 'AS "", an empty name'),
    ('SELECT COUNT(*) FROM t AS ""', 'AS "", an empty name'),
])
def test_unsupported_sql_is_refused_in_one_line_naming_it(statement, named):
    with pytest.raises(InvalidParameterError, match=named) as refused:
        dpdist.sql(statement, tables={"t": TABLE}, epsilon=1.0, bounds=BOUNDS)
    assert "\n" not in str(refused.value)


#: the statements an analyst porting from BigQuery, Tumult, OpenDP and PipelineDP writes first: the first five read
#: before expressions, joins and the field's aggregates were added, the other eleven after
PORTED = [
    "SELECT region, COUNT(*) FROM t GROUP BY region",
    "SELECT region, AVG(income) FROM t GROUP BY region",
    "SELECT region, SUM(income) FROM t GROUP BY region",
    "SELECT region, QUANTILES(income, 0.1, 0.5, 0.9) FROM t GROUP BY region",
    "SELECT region, COUNT(DISTINCT person) FROM t GROUP BY region",
    "SELECT region, PERCENTILE_CONT(income, 0.5) FROM t GROUP BY region",
    "SELECT region, PERCENTILE_CONT(0.5) WITHIN GROUP (ORDER BY income) FROM t GROUP BY region",
    "SELECT region, VARIANCE(income) FROM t GROUP BY region",
    "SELECT region, STDDEV(income) FROM t GROUP BY region",
    "SELECT region, MIN(income), MAX(income) FROM t GROUP BY region",
    "SELECT region, COUNT(income) FROM t GROUP BY region",
    "SELECT FLOOR(age / 10) AS decade, COUNT(*) FROM t GROUP BY FLOOR(age / 10)",
    "SELECT r.zone, AVG(t.income) FROM t JOIN regions AS r ON t.region = r.region GROUP BY r.zone",
    "SELECT region, AVG(total) FROM (SELECT person, region, SUM(income) AS total FROM t GROUP BY person, region) "
    "GROUP BY region",
    "SELECT region, COUNT(*) AS n FROM t GROUP BY region HAVING COUNT(*) > 100",
    "SELECT region, SUM(income * 0.1) FROM t GROUP BY region",
]


@pytest.mark.parametrize("statement", PORTED)
def test_the_statements_an_analyst_ports_first_all_run_per_person_on_every_engine(statement):
    polars, duckdb = pytest.importorskip("polars"), pytest.importorskip("duckdb")
    people = TABLE.assign(person=np.arange(len(TABLE)) // 2)
    regions = pd.DataFrame({"region": ["north", "south", "east", "west"], "zone": ["n", "s", "e", "w"]})
    keys = ({"decade": list(range(1, 9))} if "decade" in statement else {"zone": ["n", "s"]} if "zone" in statement
            else KEYS)
    columns = []
    for frame in (people, polars.from_pandas(people), duckdb.from_df(people)):
        built = dpdist.sql(statement, tables={"t": frame}, public_tables={"regions": regions}, epsilon=1.0,
                           bounds={**BOUNDS, "total": (0, 6e5)}, keys=keys, privacy_id="person", max_contributions=2,
                           rng=3)
        result = built.release()
        assert result.guarantee.epsilon == pytest.approx(1.0) and result.guarantee.unit == "person"
        columns.append(result.columns())
    assert columns[0] and all(released == columns[0] for released in columns)  # the same rows on every engine
    cells = [name for name in columns[0] if name not in ("region", "decade", "zone", "level")]
    assert all(np.isfinite(np.asarray(columns[0][name], dtype=float)).all() for name in cells)


def test_having_keeps_the_groups_whose_released_values_meet_it_and_changes_no_guarantee():
    statement = "SELECT region, COUNT(*) AS n, MEDIAN(income) FROM t GROUP BY region HAVING n > {} AND region <> 'x'"
    released = dpdist.sql(statement.format(0), tables={"t": TABLE}, epsilon=1.0, bounds=BOUNDS, keys=KEYS, rng=5)
    counts = released.release().columns()["n"]
    middle = (counts[0] + counts[1]) / 2
    kept = dpdist.sql(statement.format(middle), tables={"t": TABLE}, epsilon=1.0, bounds=BOUNDS, keys=KEYS,
                      rng=5).release()
    assert kept.keys == [key for key, n in zip(KEYS["region"], counts) if n > middle] and len(kept.keys) == 1
    assert kept.guarantee == released.release().guarantee
    median = dpdist.sql("SELECT region, MEDIAN(income) FROM t GROUP BY region HAVING MEDIAN(income) > 1e9",
                        tables={"t": TABLE}, epsilon=1.0, bounds=BOUNDS, keys=KEYS, rng=5).release()
    assert median.keys == [] and median.columns() == {name: [] for name in (
        "region", "income 0.5 quantile", "income 0.5 quantile low", "income 0.5 quantile high", "level")}


def test_an_aggregate_of_an_expression_is_clipped_to_its_range_or_to_the_bounds_given_for_it():
    derived = dpdist.sql("SELECT SUM(income * 0.1) AS tax FROM t", tables={"t": TABLE}, epsilon=1.0, bounds=BOUNDS)
    (statistic,) = derived.statistics
    assert statistic.options["bounds"] == (0.0, 3e4) and statistic.title == "income * 0.1"
    given = dpdist.sql("SELECT SUM(income * 0.1) AS tax FROM t", tables={"t": TABLE}, epsilon=1.0,
                       bounds={**BOUNDS, "tax": (0, 1e3)})
    assert given.statistics[0].options["bounds"] == (0.0, 1e3)
    result = dpdist.sql("SELECT SUM(income * 0.1), COUNTIF(age >= 50) AS old FROM t", tables={"t": TABLE},
                        epsilon=10.0, bounds=BOUNDS, rng=1).release()
    columns = result.columns()
    assert abs(columns["income * 0.1 sum"][0] - 0.1 * TABLE.income.clip(0, 3e5).sum()) < 5e4
    assert abs(columns["old"][0] - int((TABLE.age >= 50).sum())) < 10


# --- every message read: seeded statements over every clause, against a table whose private values are marked ---

#: the marks of the private values of SECRETS: no message, warning or traceback may hold one
MARKS = ("zq", "777")
SECRETS = pd.DataFrame({
    "person": np.arange(300) // 2,
    "name": [f"zq-secret-{i}" for i in range(300)],
    "region": RNG.choice(["north", "south", "east"], 300),
    "age": RNG.integers(0, 100, 300),
    "income": np.where(RNG.random(300) < 0.1, np.nan, RNG.lognormal(10, 0.7, 300)),
    "badge": 7_770_000 + np.arange(300),
    "member": RNG.random(300) < 0.5,
    "code": pd.Categorical([f"zq-code-{i % 5}" for i in range(300)]),
    "seen": pd.date_range("2020-01-01", periods=300, freq="h"),
})
COLUMNS = list(SECRETS.columns)
#: the public table the statements join to: no secret in it
ZONES = pd.DataFrame({"region": ["north", "south", "east"], "zone": ["n", "s", "e"]})


class Statements:
    """Seeded SELECTs over every clause: mostly valid ones, and ill-typed, unsupported and malformed ones (each part
    drawn from its valid choices 90% of the time, else from its invalid ones); no statement names a marked value."""

    #: each column's kind, and constants of each kind
    KINDS = {"person": "number", "name": "string", "region": "string", "age": "number", "income": "number",
             "badge": "number", "member": "boolean", "code": "category", "seen": "other"}
    CONSTANTS = {"number": ("3", "-5", "0.5", "120", "1e3"), "string": ("'north'", "'a'", "'zz'"),
                 "boolean": ("TRUE", "FALSE"), "category": ("'x'",), "other": ("'2020-01-01'",)}

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def pick(self, *options):
        return options[int(self.rng.integers(len(options)))]

    def either(self, valid: tuple, invalid: tuple):
        """One of ``valid`` 90% of the time, else one of ``invalid``."""
        return self.pick(*valid) if self.rng.random() < 0.9 else self.pick(*invalid)

    def comparison(self) -> str:
        column = self.pick(*self.KINDS)
        kind = self.KINDS[column]
        constant = self.either(self.CONSTANTS[kind], ("NULL", "1e400", "99999999999999999999", "'b'", "4", "TRUE"))
        operators = ("=", "<>") if kind in ("boolean", "category") else ("=", "<>", "<", "<=", ">", ">=")
        operator = self.either(operators, ("<", "LIKE"))
        numeric = (f"{column} + 1", f"-{column}", f"FLOOR({column} / 7)", f"ROUND({column} * 0.5, 1)",
                   f"CASE WHEN {column} > 3 THEN {column} ELSE 0 END") if kind == "number" else ()
        subject = self.either((column, f"{self.table}.{column}", *numeric),
                              (f"u.{column}", "salary", f"LOWER({column})", f"CAST({column} AS INT)",
                               f"{column} + name", f"{column} / 0", f"CASE WHEN member THEN {column} ELSE 'x' END"))
        return self.pick(lambda: f"{subject} {operator} {constant}",
                         lambda: f"{subject} IN ({constant}, {self.pick(*self.CONSTANTS[kind])})",
                         lambda: f"{subject} BETWEEN {constant} AND {self.pick(*self.CONSTANTS[kind])}",
                         lambda: f"{subject} IS {self.pick('', 'NOT ')}{self.either(('NULL',), ('TRUE',))}",
                         lambda: self.either(("member", "TRUE", "1 = 1", "FALSE"), (column,)))()

    def condition(self, depth: int) -> str:
        if depth <= 0 or self.rng.random() < 0.4:
            return self.comparison()
        return self.pick(lambda: f"NOT {self.condition(depth - 1)}", lambda: f"({self.condition(depth - 1)})",
                         lambda: f"{self.condition(depth - 1)} {self.pick('AND', 'OR')} {self.condition(depth - 1)}")()

    def aggregate(self) -> str:
        from dpdist.queries._statistics import AGGREGATES

        forms = tuple(form for kind in AGGREGATES.values() for form in kind.sql_forms)
        form = self.either(forms + ("SUM(c * 2)", "AVG(CASE WHEN age > 30 THEN c ELSE 0 END)", "MAX(ABS(c - 50))"),
                           ("COVAR_POP(c, c)", "SUM(DISTINCT c)", "HISTOGRAM(c)", "QUANTILES(c, 'x')", "SUM(u.c)",
                            "SUM(c + name)", "AVG(COUNT(*))", "COUNT(*) * 2", "COUNTIF(c)"))
        for placeholder, value in ((r"<privacy_id>", "person"),
                                   (r"q, \.\.\.", self.either(("0.1, 0.9", "0.5"), ("1.5",))),
                                   (r"\bq\b", self.either(("0.5", "0.25"), ("-0.5", "2"))),
                                   (r"\bbins\b", self.either(("4", "8"), ("8.7", "0"))),
                                   (r"\bn\b", self.either(("4", "10"), ("1", "0.5"))),
                                   (r"\bcondition\b", self.either(("age > 30", "member", "name = 'a'"), ("age",))),
                                   (r"\bc\b", self.either(("income", "age", "member"), ("name", "seen", "code")))):
            form = re.sub(placeholder, value, form)
        return form + self.pick("", "", f" AS a{int(self.rng.integers(3))}")

    def statement(self) -> str:
        group = self.either(("", "", "region", "region", "name", "age", "member", "FLOOR(age / 10)",
                             "CASE WHEN age > 50 THEN 'old' ELSE 'young' END"),
                            ("region, member", "1", "age + name", "u.region", "ROLLUP (region)", "code"))
        keys = [group] if group in self.KINDS or group.startswith(("FLOOR", "CASE")) else []
        select = keys + [self.aggregate() for _ in range(int(self.rng.integers(1, 4)))]
        source = self.either(("t", "t", "t AS x", "t JOIN r USING (region)", "t LEFT JOIN r ON t.region = r.region",
                              "(SELECT person, region, member, name, SUM(income) AS income, MAX(age) AS age FROM t "
                              "GROUP BY person, region, member, name) AS s"),
                             ("u", "db.t", "t TABLESAMPLE (10 PERCENT)", "t JOIN u ON t.a = u.a", "(SELECT * FROM t)",
                              "t JOIN t AS w ON t.age = w.age", "t RIGHT JOIN r ON t.region = r.region",
                              "t JOIN r ON t.age > r.zone", "(SELECT region, SUM(income) AS income FROM t GROUP BY "
                                                            "region)"))
        self.table = source.split()[-1] if source.startswith(("t AS", "(")) else "t"
        text = f"SELECT {', '.join(select)} FROM {source}"
        if self.rng.random() < 0.7:
            text += f" WHERE {self.condition(int(self.rng.integers(0, 4)))}"
        text += f" GROUP BY {group}" if group else ""
        having = (" HAVING COUNT(*) > 3", " HAVING COUNT(*) > 3 AND region <> 'zz'") if "COUNT(*)" in text else ()
        text += self.either(("", "", *having), (" HAVING SUM(name) > 3", " ORDER BY 1", " LIMIT 3", "; SELECT 1"))
        if self.rng.random() < 0.05:  # a malformed statement: a character left out
            cut = int(self.rng.integers(len(text)))
            text = text[:cut] + text[cut + 1:]
        return text


def _quotes_no_mark(text: str) -> bool:
    return not any(mark in text for mark in MARKS)


def _run(statement: str, frame, release: bool) -> str:
    """``"ran"``, or the refusal's type: the statement's query built (and released), every message read."""
    import traceback
    import warnings

    from dpdist.errors import DPDistError

    group = re.search(r"GROUP BY (\w+)( HAVING .*)?$", statement)
    keys = {"region": ["north", "south", "east"]} if group and group.group(1) == "region" else None
    bounds = {"income": (0, 3e5), "age": (0, 100), "member": (0, 1), "badge": (0, 1e7), "name": (0, 1)}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            built = dpdist.sql(statement, tables={"t": frame}, public_tables={"r": ZONES}, epsilon=1.0,
                               bounds=bounds, keys=keys, privacy_id="person", max_contributions=2, rng=7)
            if release:
                built.release().columns()
            outcome = "ran"
        except Exception as error:  # noqa: BLE001 - every refusal is read here
            assert isinstance(error, DPDistError), (statement, repr(error))
            printed = "".join(traceback.format_exception(error))
            assert _quotes_no_mark(printed), (statement, printed)
            outcome = type(error).__name__
    for warning in caught:
        assert _quotes_no_mark(str(warning.message)), (statement, str(warning.message))
    return outcome


def test_no_generated_statement_raises_anything_but_a_dpdist_error_or_quotes_a_private_value():
    """40 seeded statements over every clause through the SQL front end (no release): only dpdist's errors, and no
    message, warning or traceback holding a marked value of the table."""
    outcomes = [_run(Statements(seed).statement(), SECRETS, release=False) for seed in range(40)]
    assert 5 < outcomes.count("ran") < 35  # the statements reach the releases and the refusals alike


@pytest.mark.slow  # about a minute: 250 statements released on five engines
def test_no_generated_statement_released_on_any_engine_raises_anything_but_a_dpdist_error_or_quotes_a_value():
    """250 seeded statements, each built and released on pandas, Polars (eager and lazy), DuckDB and Dask: only
    dpdist's errors, none quoting a marked value, and each statement refused or run alike on every engine."""
    polars, duckdb = pytest.importorskip("polars"), pytest.importorskip("duckdb")
    dd = pytest.importorskip("dask.dataframe")
    secrets = SECRETS  # noqa: F841 (read by duckdb's replacement scan)
    engines = {"pandas": SECRETS, "polars": polars.from_pandas(SECRETS), "polars-lazy": polars.from_pandas(SECRETS).lazy(),
               "duckdb": duckdb.sql("SELECT * FROM secrets"), "dask": dd.from_pandas(SECRETS, npartitions=2)}
    ran = 0
    for seed in range(1_000, 1_250):
        statement = Statements(seed).statement()
        outcomes = {engine: _run(statement, frame, release=True) for engine, frame in engines.items()}
        ran += outcomes["pandas"] == "ran"
        assert len(set(outcomes.values())) == 1, (statement, outcomes)
    assert ran > 40


@pytest.mark.slow  # a JVM: 40 statements released on Spark
def test_no_generated_statement_released_on_spark_raises_anything_but_a_dpdist_error_or_quotes_a_value():
    pytest.importorskip("pyspark")
    from spark_support import spark_session

    strings = SECRETS.assign(code=SECRETS["code"].astype(str))  # Spark has no categorical type: the same schema
    frame = spark_session().createDataFrame(strings).cache()
    for seed in range(2_000, 2_040):
        statement = Statements(seed).statement()
        assert _run(statement, frame, release=True) == _run(statement, strings, release=True), statement
