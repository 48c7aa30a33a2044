"""``dpdist.query``: several statistics per group under one budget, split by a visible rule, in the caller's engine."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

import dpdist
from dpdist.budget import BudgetSession
from dpdist.errors import DPDistError, DPDistWarning, InvalidParameterError, PrivacyBudgetError
from dpdist.queries import count, distinct, histogram, mean, persons, quantiles, sum

RNG = np.random.default_rng(11)
N = 4_000
TABLE = pd.DataFrame({"person": np.arange(N) % 1_000, "region": RNG.choice(["north", "south"], N),
                      "income": RNG.lognormal(10, 0.7, N), "age": RNG.integers(18, 90, N)})
KEYS = ["north", "south"]
DECILES = np.arange(1, 10) / 10


def _query(table=TABLE, **unit):
    return (dpdist.query(table, epsilon=1.0, rng=3, **unit).group_by("region", keys=KEYS)
            .agg(quantiles("income", DECILES, bounds=(0, 3e5)), histogram("age", 8, (0, 80)), count()))


def test_the_budget_is_split_in_equal_shares_by_default_and_by_weight_when_given():
    plan = _query().plan()
    assert [p.share for p in plan.statistics] == pytest.approx([1 / 3] * 3)
    assert sum_of(p.epsilon for p in plan.statistics) == pytest.approx(1.0) and "equal shares" in plan.rule
    weighted = dpdist.query(TABLE, epsilon=1.0).agg(quantiles("income", [0.5], (0, 1), weight=2), count()).plan()
    assert [p.share for p in weighted.statistics] == pytest.approx([2 / 3, 1 / 3]) and "by weight" in weighted.rule


def sum_of(values):
    return float(np.sum(list(values)))


def test_the_release_states_the_whole_budget_once_and_each_group_gets_its_share():
    result = _query().release()
    assert result.guarantee.epsilon == pytest.approx(1.0) and result.guarantee.unit == "record"
    assert result.keys == KEYS
    for key in KEYS:
        truth = int((TABLE["region"] == key).sum())
        released = result.results["count()"][key]
        assert released.epsilon == pytest.approx(1 / 3, rel=1e-3)
        assert abs(released.count - truth) < 8 * released.standard_error


def test_the_table_has_one_row_per_group_with_intervals_per_cell():
    table = _query().release().table()
    assert isinstance(table, pd.DataFrame) and list(table["region"]) == KEYS
    assert {"income 0.5 quantile", "income 0.5 quantile low", "income 0.5 quantile high", "count", "count low",
            "count high", "age share [0, 10)", "level"} <= set(table.columns)
    assert (table["income 0.5 quantile low"] <= table["income 0.5 quantile high"]).all()


def test_polars_lazy_and_duckdb_tables_come_back_in_their_engine():
    polars = pytest.importorskip("polars")
    duckdb = pytest.importorskip("duckdb")
    lazy = _query(polars.from_pandas(TABLE).lazy()).release().table()
    assert isinstance(lazy, polars.LazyFrame) and lazy.collect().height == 2
    frame = TABLE  # noqa: F841 (read by duckdb's replacement scan)
    relation = _query(duckdb.sql("SELECT * FROM frame")).release().table()
    assert type(relation).__name__ == "DuckDBPyRelation" and len(relation.fetchall()) == 2


def test_the_plan_shows_each_expected_error_without_reading_any_table():
    text = dpdist.query(object(), epsilon=1.0).group_by("region", keys=KEYS).agg(
        quantiles("income", DECILES, bounds=(0, 3e5)), count(), sum("income", (0, 3e5)),
        mean("income", (0, 3e5))).explain(n=2_000)
    assert text.count("expected") == 4 and "share 0.250" in text and "at n = 2,000 per group" in text


def test_a_seeded_query_is_refused_in_a_session_that_is_not_reproducible_before_any_charge():
    session = BudgetSession(1.0, neighbouring="add-remove")
    with pytest.raises(InvalidParameterError, match=r"The 'rng' argument of dpdist.query is 12345 .* not reproducible"):
        dpdist.sql("SELECT COUNT(*) AS n FROM t", {"t": TABLE}, epsilon=0.5, session=session, rng=12345)
    with pytest.raises(InvalidParameterError, match="not reproducible"):
        dpdist.query(TABLE, epsilon=0.5, session=session, rng=np.random.default_rng(1))
    assert session.charges == ()
    seeded = BudgetSession(1.0, neighbouring="add-remove", reproducible=True)
    result = dpdist.sql("SELECT COUNT(*) AS n FROM t", {"t": TABLE}, epsilon=0.5, session=seeded, rng=12345).release()
    assert "no privacy against anyone who knows the seed" in result.guarantee.describe()


def test_a_session_is_charged_the_whole_query_once_and_an_overspending_query_is_refused():
    session = BudgetSession(1.5, neighbouring="add-remove")
    dpdist.query(TABLE, epsilon=1.0, session=session).group_by("region", keys=KEYS).agg(count()).release()
    assert len(session.charges) == 1 and session.spent.epsilon == pytest.approx(1.0)
    with pytest.raises(PrivacyBudgetError):
        dpdist.query(TABLE, epsilon=1.0, session=session).agg(count()).release()
    assert len(session.charges) == 1


def test_per_person_with_private_keys_the_selection_is_in_the_plan_and_the_guarantee():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = (dpdist.query(TABLE, epsilon=1.0, privacy_id="person", max_contributions=2, max_groups=2, rng=1)
                  .group_by("region").agg(count(), sum("income", (0, 3e5))).release())
    assert result.guarantee.unit == "person" and result.guarantee.delta == pytest.approx(1e-6)
    assert result.guarantee.epsilon == pytest.approx(1.0) and set(result.keys) <= set(KEYS)
    assert result.plan.selection == (0.1, 1e-6) and "selection of the groups 0.1 first" in result.plan.rule


def test_the_plan_names_the_selection_of_private_keys_by_max_groups_and_why():
    built = dpdist.query(TABLE, epsilon=1.0, privacy_id="person", max_contributions=2, max_groups=1)
    assert "by truncated_geometric selection, the default with one key per person" in \
        built.group_by("region").agg(count()).explain(100)
    many = dataclasses.replace(built, max_groups=10).group_by("region").agg(count()).explain(100)
    assert "by adaptive selection, the default beyond one key per person (max_groups 10)" in many
    asked = built.group_by("region", selection="gaussian").agg(count()).plan()
    assert asked.method == ("gaussian", "as asked") and "by gaussian selection, as asked" in asked.describe()
    assert built.group_by("region", keys=KEYS).agg(count()).plan().method is None


def test_private_keys_are_chosen_from_all_of_each_persons_rows_their_most_held_first():
    """300 persons, each of 3 rows of one common key and 1 row of each of 9 keys of their own: at max_groups=1 each
    counts in the key they hold most rows of, so the common key is shown (300 persons, against a threshold of about
    130 at epsilon 0.1, delta 1e-6) and no key of one person is; a uniform choice of one key would give it about 30."""
    common = pd.DataFrame({"person": np.repeat(np.arange(300), 3), "word": "common"})
    own = pd.DataFrame({"person": np.repeat(np.arange(300), 9), "word": [f"w{i}" for i in range(2_700)]})
    table = pd.concat([common, own], ignore_index=True).sample(frac=1.0, random_state=3)
    for seed in range(3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the rows of keys not shown are left out
            result = (dpdist.query(table, epsilon=1.0, privacy_id="person", max_contributions=3, rng=seed)
                      .group_by("word").agg(count()).release())
        assert result.keys == ["common"] and result.plan.method[0] == "truncated_geometric"
        assert abs(result.table()["count"][0] - 900) < 5 * 3 * np.sqrt(2) / 0.9


def test_a_query_without_group_by_is_one_row_for_the_whole_table():
    table = dpdist.query(TABLE, epsilon=1.0, rng=2).agg(count(), mean("age", (0, 100))).release().table()
    assert len(table) == 1 and abs(table["count"][0] - N) < 30 and abs(table["age mean"][0] - TABLE["age"].mean()) < 2


def test_persons_counts_each_person_once_per_group_with_the_noise_of_one_row():
    """1,000 persons of 4 rows each over two regions: the distinct persons per region, within 5 noise deviations."""
    built = dpdist.query(TABLE, epsilon=1.0, privacy_id="person", max_contributions=3, max_groups=2, rng=2)
    query = built.group_by("region", keys=KEYS).agg(persons(), count())
    planned = {row["statistic"]: row for row in query.plan().expected(100)}
    assert planned["count()"]["error"] > 2.5 * planned["persons()"]["error"]  # 3 rows per person and group, and 1
    with pytest.warns(dpdist.errors.ContributionBoundWarning):  # rows beyond 3 per person and region
        table = query.release().table()
    truth = TABLE.groupby("region")["person"].nunique()
    errors = table.set_index("region")["persons"] - truth
    assert np.abs(errors).max() < 5 * planned["persons()"]["error"]
    assert {"persons low", "persons high"} <= set(table.columns)


@pytest.mark.parametrize(("build", "named"), [
    (lambda: dpdist.query(TABLE, epsilon=1.0, max_contributions=2), "'max_contributions'"),
    (lambda: dpdist.query(TABLE, epsilon=1.0, privacy_id="person"), "'max_contributions'"),
    (lambda: dpdist.query(TABLE, epsilon=-1.0), "'epsilon'"),
    (lambda: count(weight=0), "'weight'"),
    (lambda: quantiles("income", [1.5], (0, 1)), "'q'"),
    (lambda: histogram("age", 0, (0, 1)), "'bins'"),
    (lambda: sum("income", None), "'bounds'"),
    (lambda: dpdist.query(TABLE, epsilon=1.0).agg(count(), count()), "each statistic once"),
    (lambda: dpdist.query(TABLE, epsilon=1.0).plan(), "no statistic"),
    (lambda: dpdist.query(TABLE, epsilon=1.0).agg(sum("salary", (0, 1))).release(), "'column'"),
    (lambda: dpdist.query(TABLE, epsilon=1.0).group_by("region", keys=KEYS, selection_epsilon=0.1), "'selection_epsilon'"),
    (lambda: dpdist.query(TABLE, epsilon=1.0).agg(persons()), "privacy_id"),
    (lambda: distinct(None), "'column'"),
    (lambda: dpdist.query(TABLE, epsilon=1.0).agg(distinct("city")).release(), "'column'.*'city'"),
    (lambda: dpdist.query(TABLE, epsilon=1.0).group_by("region").agg(distinct("age")).plan(), "add count()"),
])
def test_bad_queries_are_refused_by_name(build, named):
    with pytest.raises(InvalidParameterError, match=named):
        build()


def test_a_missing_value_is_left_out_of_its_statistic_and_told_to_the_holder_never_refused():
    """A tenth of the incomes missing: the mean reads the other rows, the count every row, nothing is refused and
    the session is charged; the holder is told how many in a MissingValuesWarning's count and details, never its
    message; missing=<number> counts each as it, and 'refuse' is refused by name (a query refuses no value)."""
    holed = TABLE.assign(income=TABLE["income"].where(np.arange(N) % 10 > 0))
    session = BudgetSession(3.0, neighbouring="add-remove", reproducible=True)  # a seeded count is compared
    with pytest.warns(dpdist.errors.MissingValuesWarning) as warned:
        released = dpdist.query(holed, epsilon=1.0, session=session, rng=0).agg(
            count(), mean("income", (0, 3e5))).release()
    assert len(session.charges) == 1 and abs(released.results["count()"][0].count - N) < 30
    (warning,) = [w.message for w in warned]
    assert warning.count == N // 10 and warning.details == {"ids_or_keys": 0, "statistics": {"mean(income)": N // 10}}
    assert str(N // 10) not in str(warning)
    dropped = dpdist.query(holed.dropna(), epsilon=1.0, rng=0).agg(count(), mean("income", (0, 3e5))).release()
    assert released.results["mean(income)"][0].value == dropped.results["mean(income)"][0].value
    with pytest.warns(dpdist.errors.MissingValuesWarning, match="counted as 0"):
        zeros = dpdist.query(holed, epsilon=1.0, missing=0, rng=0).agg(mean("income", (0, 3e5))).release()
    assert zeros.results["mean(income)"][0].value < released.results["mean(income)"][0].value
    with pytest.raises(InvalidParameterError, match="'missing' parameter of dpdist.query must be 'drop'"):
        dpdist.query(holed, epsilon=1.0, missing="refuse")


def _probe(table, statement, **options):
    """Whether ``statement`` over ``table`` released (True) or raised, and the budget the session was charged."""
    session = BudgetSession(10.0, delta=1e-3, neighbouring="add-remove",
                            unit="person" if "privacy_id" in options else "record")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dpdist.sql(statement, {"t": table}, epsilon=1.0, session=session, **options).release().table()
    return session.spent.epsilon


#: one person's row (income 997,659.5) that a WHERE singles out; each probe asks about it through a value that is
#: missing, or of another type than its column's others
TARGET = pd.DataFrame({"person": np.arange(300), "name": [f"p{i}" for i in range(300)],
                       "income": 990_000.0 + np.arange(300) * 765.95, "region": np.tile(["north", "south"], 150),
                       "maybe": pd.Series([None if i == 10 else f"m{i}" for i in range(300)], dtype=object)})
PROBES = [
    ("SELECT COUNT(DISTINCT maybe) FROM t WHERE maybe IS NULL AND name = 'p10' AND income > {x}", {}),
    ("SELECT maybe, COUNT(*) FROM t WHERE name = 'p10' AND income > {x} GROUP BY maybe", {"keys": {"maybe": ["a"]}}),
    ("SELECT maybe, COUNT(*) FROM t WHERE name = 'p10' AND income > {x} GROUP BY maybe", {}),
    ("SELECT SUM(income) FROM t WHERE income > {x}", {"privacy_id": "maybe", "max_contributions": 1,
                                                        "bounds": {"income": (0, 1e6)}}),
]


@pytest.mark.parametrize("engine", ["pandas", "polars", "duckdb", "dask"])
@pytest.mark.parametrize("statement, options", PROBES)
def test_no_value_of_the_table_decides_whether_a_query_is_refused(engine, statement, options):
    """A WHERE that keeps one row or none, its value missing: released alike on either side of the row's income
    (997,659.5), so no yes/no answer about a row comes without noise; the session is charged alike."""
    table = {"pandas": lambda: TARGET, "polars": lambda: pytest.importorskip("polars").from_pandas(TARGET).lazy(),
             "duckdb": lambda: pytest.importorskip("duckdb").from_df(TARGET),
             "dask": lambda: pytest.importorskip("dask.dataframe").from_pandas(TARGET, npartitions=3)}[engine]()
    spent = {_probe(table, statement.format(x=x), **options) for x in (997_000, 997_660, 998_000)}
    assert len(spent) == 1 and 0 < spent.pop() <= 1.0


@pytest.mark.parametrize("engine", ["pandas", "pyarrow"])
def test_without_holder_notes_no_warning_depends_on_the_table(engine):
    """Neighbouring tables: the one row the WHERE keeps has its value or not, and its person one row or three (over
    max_contributions=1).  With holder_notes=False the warnings (presence and content) are the same on both (none);
    with the default the holder's notes differ, the yes/no a caller who is not the holder must not get."""
    make = {"pandas": lambda f: f, "pyarrow": lambda f: pytest.importorskip("pyarrow").Table.from_pandas(f)}[engine]
    base = pd.DataFrame({"person": [1, 2, 3], "name": ["a", "b", "c"], "x": [1.0, 0.5, 0.25]})
    neighbours = [base, pd.concat([base.assign(x=[np.nan, 0.5, 0.25]), base.iloc[:1], base.iloc[:1]],
                                  ignore_index=True)]
    seen: dict = {}
    for notes in (True, False):
        for index, table in enumerate(neighbours):
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                dpdist.sql("SELECT SUM(x) AS s, COUNT(*) AS n FROM t WHERE name = 'a'", {"t": make(table)},
                           epsilon=1.0, bounds={"x": (0, 1)}, privacy_id="person", max_contributions=1, rng=2,
                           holder_notes=notes).release()
            seen[notes, index] = [(w.category, str(w.message), getattr(w.message, "details", None)) for w in caught]
    assert seen[False, 0] == seen[False, 1] == []
    assert seen[True, 0] != seen[True, 1]
    with pytest.raises(InvalidParameterError, match="'holder_notes'"):
        dpdist.query(base, epsilon=1.0, holder_notes="no")



def test_a_query_without_holder_notes_leaves_another_threads_notes_alone():
    """Two threads release at once, five times: one without holder notes over a large table (its release the longer),
    one with them over a small table holding one missing value and a person over the bound.  Every note recorded is
    the second's, each time (none lost, none of the first's made)."""
    import threading

    silent = pd.DataFrame({"person": np.arange(20_000) % 500, "x": np.where(np.arange(20_000) % 7 == 0, np.nan, 0.5)})
    noted = pd.DataFrame({"person": [1, 1, 1, 2, 3], "x": [np.nan, 0.5, 0.5, 0.25, 0.75]})
    barrier = threading.Barrier(2)

    def release(table, notes):
        built = dpdist.query(table, epsilon=1.0, privacy_id="person", max_contributions=1, rng=2,
                             holder_notes=notes).agg(sum("x", bounds=(0, 1)), count())
        barrier.wait()
        built.release()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(5):
            threads = [threading.Thread(target=release, args=args) for args in ((silent, False), (noted, True))]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
    notes = [(w.category.__name__, w.message.count) for w in caught if isinstance(w.message, DPDistWarning)]
    assert notes == [("MissingValuesWarning", 1), ("ContributionBoundWarning", 2)] * 5


#: row 0 of each column holds a missing or extreme value of the column's type (a nullable int8's NA, a uint64's
#: largest, a float32's infinity, NaT, a list among objects of every kind; NA among integers beyond 2**53)
ODD = pd.DataFrame({
    "name": [f"p{i}" for i in range(40)], "person": np.arange(40),
    "f32": np.r_[np.inf, np.arange(1, 40)].astype("float32"), "f64": np.r_[np.nan, np.arange(1, 40) * 1e300],
    "i8": pd.array([None, *range(1, 40)], dtype="Int8"), "i64": pd.array([None, *range(1, 40)], dtype="Int64"),
    "u64": np.array([2**64 - 1, *range(1, 40)], dtype="uint64"),
    "big": pd.array([None, *(2**53 + i for i in range(1, 40))], dtype="Int64"),
    "huge": np.array([2**62 + 1, *[2**62] * 39], dtype="int64"), "least": np.array([-2**63, *[-2**62] * 39], dtype="int64"),
    "s": pd.array([None, *(f"s{i}" for i in range(1, 40))], dtype="string"), "cat": pd.Categorical([None] + ["c"] * 39),
    "b": pd.array([None] + [True] * 39, dtype="boolean"), "dt": [pd.NaT, *pd.date_range("2020", periods=39)],
    "obj": pd.Series([[1, 2], *([1, "1", 1.0, None, {"a": 1}, b"x"] * 6), 2, 2, 2], dtype=object),
})
_NUMBERS = ("f32", "f64", "i8", "i64", "u64", "big", "huge", "least")
#: a public table whose float keys meet the numbers of the columns
_PUBLIC = pd.DataFrame({"x": [1.5, 2.0, 2.0**62]})


@pytest.mark.slow  # 6 engines x 13 column types x up to 11 statements: about 15 CPU-s
@pytest.mark.parametrize("engine", ["pandas", "polars", "duckdb", "dask", "pyarrow", "ibis"])
def test_no_missing_or_extreme_value_of_any_column_type_makes_a_query_fail(engine):
    """A statement the schema admits runs to its release whatever value the one row its WHERE keeps holds (NaN,
    infinities, 2**62 + 1, -2**63, 2**64 - 1, a zero divisor, a floor beyond 2**63): grouping, distinct values, ids,
    aggregates, expressions and joins of every column type (a failure there, of dpdist or of the engine, would answer a
    question about that row)."""
    native = {"pandas": lambda: ODD, "polars": lambda: pytest.importorskip("polars").from_pandas(ODD.drop(columns="obj")),
              "duckdb": lambda: pytest.importorskip("duckdb").from_df(ODD.drop(columns="obj")),
              "dask": lambda: pytest.importorskip("dask.dataframe").from_pandas(ODD, npartitions=3),
              "pyarrow": lambda: pytest.importorskip("pyarrow").Table.from_pandas(ODD.drop(columns="obj")),
              "ibis": lambda: pytest.importorskip("ibis").memtable(ODD.drop(columns="obj"))}[engine]()
    failed = []
    for column in [name for name in ODD.columns[2:] if engine in ("pandas", "dask") or name != "obj"]:
        where = "WHERE name = 'p0'"
        statements = [(f"SELECT {column}, COUNT(*) FROM t {where} GROUP BY {column}", {}),
                      (f"SELECT COUNT(DISTINCT {column}) FROM t {where}", {}),
                      (f"SELECT COUNT(*) FROM t {where}", {"privacy_id": column, "max_contributions": 1})]
        if column in _NUMBERS:
            statements += [(f"SELECT SUM({column}), AVG({column}), MEDIAN({column}) FROM t {where}",
                            {"bounds": {column: (0, 10)}}),
                           (f"SELECT COUNT(*) FROM t {where} AND {column} * 2 > 1 AND {column} IN (1, 2.5)", {}),
                           (f"SELECT FLOOR({column} / 3) AS k, COUNT(*) FROM t {where} GROUP BY k", {}),
                           (f"SELECT FLOOR({column} * 1e300) AS k, COUNT(*) FROM t {where} GROUP BY k", {}),
                           (f"SELECT SUM({column} / ({column} - {column}) + {column} * {column} + ROUND(-{column})) "
                            f"AS s FROM t {where}", {"bounds": {"s": (0, 10)}}),
                           (f"SELECT COUNT(*) FROM t {where} AND {column} > 1.5 AND {column} <> f64 AND {column} <> "
                            f"huge AND LEAST({column}, 0.5) < 1 AND CASE WHEN b THEN {column} ELSE 0.5 END > 0", {}),
                           (f"SELECT COUNT(*) FROM t JOIN p ON t.{column} = p.x {where}", {}),
                           (f"SELECT SUM(s) FROM (SELECT cat, SUM({column}) AS s, AVG({column}) AS a FROM t GROUP BY "
                            "cat)", {"privacy_id": "cat", "max_contributions": 1, "bounds": {"s": (0, 10)}})]
        for statement, options in statements:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    dpdist.sql(statement, {"t": native}, epsilon=1.0, rng=1, public_tables={"p": _PUBLIC},
                               **options).release().table()
            except DPDistError as error:
                failed.append(f"{statement} {options}: {error}")
    assert not failed


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_a_row_of_a_missing_id_changes_no_other_persons_id(engine):
    """Ids 2**53 and 2**53 + 1 are two persons with or without a row whose id is missing (as floats they were one, and
    DuckDB's were refused, only where a missing id made the column read as floats)."""
    counts = []
    for extra in ([], [None]):
        people = pd.DataFrame({"person": pd.array([2**53, 2**53 + 1] * 5 + extra, dtype="Int64")})
        native = people if engine == "pandas" else pytest.importorskip("duckdb").from_df(people)
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            dpdist.query(native, epsilon=1.0, privacy_id="person", max_contributions=5, rng=0).agg(count()).release()
        counts.append([w.message.count for w in warned if isinstance(w.message, dpdist.errors.ContributionBoundWarning)])
    assert counts == [[], []]


def test_an_object_column_is_compared_as_text_whatever_it_holds():
    """Ids, keys and distinct values of a column of Python objects are their text: an id of 10 and one of "10" are
    one person, 1.0 and "1.0" one value, a list a value like any other; nothing is refused, and one row of another
    type among the others changes no other row's value (the distinct count moves by one at most)."""
    ids = pd.Series(list(range(300)), dtype=object)
    ids[10] = "10"
    mixed = TARGET.assign(person=ids, v=pd.Series([i % 7 for i in range(300)], dtype=object))
    query = dpdist.query(mixed, epsilon=1.0, privacy_id="person", max_contributions=1, rng=0)
    built = query.group_by("v", keys=[str(i) for i in range(7)]).agg(count(), distinct("name"), persons())
    result = built.release()
    assert result.keys == [str(i) for i in range(7)] and result.guarantee.epsilon == pytest.approx(1.0)
    with pytest.raises(InvalidParameterError, match="'keys' argument of Query.group_by must hold strings .* column "
                                                    "'v'.*Got 1 \(int\)"):
        query.group_by("v", keys=[1]).agg(count()).release()
    for odd in ("3", 3.0, [3]):
        changed = mixed.copy()
        changed.at[5, "v"] = odd  # one row of another type: the others' values stay theirs
        values = distinct("v").staged_rows(_staged(changed, distinct("v")), (), None, "drop")["v"]
        assert sorted(values) == sorted({str(i) for i in range(7)} | {str(odd)})


def test_a_where_on_an_object_column_compares_its_text_whatever_its_first_rows_hold():
    """narwhals types a pandas object column by its first 100 values (String, else Object); a query types it as
    Python objects whatever they hold, compared as their text: no comparison refuses on a value, and the rows kept are
    the ones whose text meets the condition."""
    for first in ("a", 1):
        table = pd.DataFrame({"v": pd.Series([first] * 150 + ["b", 2, [3], None], dtype=object)})
        for statement, rows in (("SELECT COUNT(*) FROM t WHERE v > 'a'", 1),
                                ("SELECT COUNT(*) FROM t WHERE v = '2'", 1), ("SELECT COUNT(*) FROM t WHERE v IS NULL", 1)):
            released = dpdist.sql(statement, {"t": table}, epsilon=50.0, rng=0).release()
            assert abs(released.results["count()"][0].count - rows) <= 1


def _staged(table, *statistics, **options):
    """The rows a query over ``table`` stages for its statistics (its columns as it compares them)."""
    query = dpdist.query(table, epsilon=1.0, **options).agg(*statistics)
    checked, kinds = query._checked()
    return query._staged(checked, 7, kinds)[0]


#: the table with a string column of about 300 values per region
CITIES = TABLE.assign(city=np.char.add("c", RNG.integers(0, 300, N).astype(str)))


def _distinct_query(table, k=4):
    return (dpdist.query(table, epsilon=1.0, privacy_id="person", max_contributions=k, max_groups=2, rng=5)
            .group_by("region", keys=KEYS).agg(distinct("city"), count()))


def test_distinct_counts_the_values_of_a_column_per_group_within_a_few_noise_deviations():
    """1,000 persons of 4 rows over two regions, all rows kept: each region's distinct cities within 5 deviations of
    the discrete Laplace noise at epsilon 0.5 / 4, alike in pandas, Polars and DuckDB."""
    polars, duckdb = pytest.importorskip("polars"), pytest.importorskip("duckdb")
    planned = {row["statistic"]: row for row in _distinct_query(CITIES).plan().expected(1_000)}
    assert planned["distinct(city)"] == {**planned["count()"], "statistic": "distinct(city)"}  # a count's noise
    truth = CITIES.groupby("region")["city"].nunique()
    pandas = _distinct_query(CITIES).release().table().set_index("region")
    lazy = _distinct_query(polars.from_pandas(CITIES).lazy()).release().table().collect().to_pandas()
    frame = CITIES  # noqa: F841 (read by duckdb's replacement scan)
    relation = _distinct_query(duckdb.sql("SELECT * FROM frame")).release().table().df()
    for table in (pandas, lazy.set_index("region"), relation.set_index("region")):
        assert np.abs(table["city distinct"] - truth).max() < 5 * planned["distinct(city)"]["error"]
        assert (table["city distinct low"] <= table["city distinct"]).all()
    assert np.abs(pandas["count"] - CITIES.groupby("region").size()).max() < 5 * planned["count()"]["error"]


def test_one_person_of_500_rows_of_500_new_values_moves_the_distinct_rows_by_at_most_max_contributions():
    """The rows a distinct count counts, with and without one person of 500 rows in one group, each row a value
    nobody else has: the deduplicated rows kept differ by at most k in that group and not at all in the other."""
    heavy = pd.DataFrame({"person": -1, "region": "north", "income": 1.0, "age": 30,
                          "city": [f"new {i}" for i in range(500)]})
    for k in (1, 3):
        counted = []
        for table in (CITIES, pd.concat([CITIES, heavy], ignore_index=True)):
            query = _distinct_query(table, k)
            data = distinct("city").staged_rows(query._staged(*query._checked()[:1], 7, query._checked()[1])[0],
                                                ("region",), "person", "drop")
            counted.append(pd.Series(data["region"]).value_counts())
        moved = counted[1] - counted[0]
        assert moved["north"] == k and moved["south"] == 0


def test_distinct_values_compare_as_the_schema_says_and_missing_ones_follow_the_query():
    """An object column's values as text (1.0 and "1.0" one value); a missing one left out, or counted as the
    query's missing= (as its text)."""
    table = pd.DataFrame({"city": pd.Series(["a", "a", "b", None, None, 1.0, "1.0"], dtype=object)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert sorted(dpdist.query(table, epsilon=1.0).agg(distinct("city")).release().results) == ["distinct(city)"]
        query = dpdist.query(table, epsilon=1.0).agg(distinct("city"))
        data = _staged(table, distinct("city"))
        assert sorted(distinct("city").staged_rows(query._valued(query.statistics[0], data, {"city": "text"}),
                                                   (), None, "drop")["city"]) == ["1.0", "a", "b"]
        filled = dataclasses.replace(query, missing=1.0)
        assert sorted(distinct("city").staged_rows(filled._valued(query.statistics[0], data, {"city": "text"}),
                                                   (), None, 1.0)["city"]) == ["1.0", "a", "b"]


def test_a_private_selection_that_chooses_no_group_releases_an_empty_table_for_its_charge():
    one_person = pd.DataFrame({"person": [7], "region": ["A"], "income": [1.0]})
    session = BudgetSession(5.0, delta=1e-4, reproducible=True)  # seeded: the one key is not selected
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = (dpdist.query(one_person, epsilon=1.0, privacy_id="person", max_contributions=1, session=session,
                               rng=0)
                  .group_by("region").agg(distinct("income"), count(), sum("income", (0.0, 10.0))).release())
    assert result.keys == [] and all(cells == {} for cells in result.results.values())
    assert len(session.charges) == 1 and result.guarantee.epsilon == pytest.approx(1.0)


def test_a_column_mixing_value_types_is_counted_as_given_without_a_frame_of_the_staged_rows():
    """The rows kept are released from arrays, never staged into a frame whose engine could refuse (and quote) a
    value: an object column of 1, 1.0, True and "1" holds 4 distinct values as given (numbers by value within one
    type, a string apart)."""
    mixed = pd.DataFrame({"person": range(4), "region": ["A"] * 4, "v": pd.Series([1, 1.0, True, "1"], dtype=object)})
    query = dpdist.query(mixed, epsilon=1.0, privacy_id="person", max_contributions=1, rng=0)
    result = query.group_by("region", keys=["A"]).agg(distinct("v")).release()
    assert result.guarantee.epsilon == pytest.approx(1.0) and "v distinct" in result.table().columns


def test_with_private_keys_the_groups_are_chosen_on_the_rows_kept_before_any_deduplication():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = (dpdist.query(CITIES, epsilon=1.0, privacy_id="person", max_contributions=4, max_groups=2, rng=1)
                  .group_by("region").agg(distinct("city"), count()).release())
    assert list(result.results) == ["distinct(city)", "count()"] and set(result.keys) == set(KEYS)
    assert result.guarantee.epsilon == pytest.approx(1.0)


def test_the_caller_is_told_what_bounding_left_out_of_each_statistic_and_no_release_carries_it():
    """A loan table of 1,000 persons with 2 rows in each of two regions, queried with max_contributions=3 and the
    default max_groups=1: each person keeps one region, so 2,000 rows and 1,000 (person, region) pairs are left out.
    The warning holds them (in its count and details, not its message), per statistic, with the bounds that keep
    every row; the result carries none of it."""
    loans = TABLE.assign(person=np.arange(N) // 4, region=np.tile(KEYS, N // 2))
    query = (dpdist.query(loans, epsilon=1.0, privacy_id="person", max_contributions=3, rng=4)
             .group_by("region", keys=KEYS).agg(count(), sum("income", (0, 3e5)), persons()))
    with pytest.warns(dpdist.errors.ContributionBoundWarning) as warned:
        result = query.release()
    (warning,) = [w.message for w in warned]
    assert warning.count == 2_000 and warning.details == {
        "rows": 2_000, "groups": 1_000, "statistics": {"count()": 2_000, "sum(income)": 2_000, "persons()": 1_000},
        "keeps": {"max_contributions": 2, "max_groups": 2}}
    assert "2000" not in str(warning) and "1000" not in str(warning) and "max_contributions=3" in str(warning)
    assert "count(), sum(income), persons()" in str(warning) and warned[0].filename == __file__  # release's caller
    assert "2000" not in repr(result) + result.describe() and "left" not in repr(result)


def test_a_query_that_keeps_every_row_warns_of_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (dpdist.query(TABLE, epsilon=1.0, privacy_id="person", max_contributions=4, max_groups=2, rng=4)
         .group_by("region", keys=KEYS).agg(count(), persons()).release())


def test_with_a_delta_the_plan_takes_gaussian_noise_where_it_is_smaller_and_says_why():
    """Many groups per person: counts, sums, means and histograms as one Gaussian vector over the groups (their noise
    grows as sqrt(m), Laplace's as m); quantiles keep their release; one group per person: Laplace (no delta spent)."""
    many = (dpdist.query(TABLE, epsilon=1.0, privacy_id="person", max_contributions=1, max_groups=20, delta=1e-5)
            .group_by("region", keys=KEYS).agg(count(), mean("age", (0, 100)), quantiles("income", [0.5], (0, 3e5))))
    plan = many.plan()
    assert [p.noise for p in plan.statistics] == ["gaussian", "gaussian", "laplace"]
    assert plan.spent_delta == pytest.approx(1e-5) and plan.statistics[0].delta == pytest.approx(5e-6)
    laplace, gaussian = plan.statistics[0].sds
    assert gaussian < laplace / 1.5  # sqrt(20) times the l2 bound against 20 times the l1 bound, less the delta
    assert "Gaussian over the groups (noise sd" in many.explain(n=1_000)
    one = dpdist.query(TABLE, epsilon=1.0, privacy_id="person", max_contributions=1, delta=1e-5).group_by(
        "region", keys=KEYS).agg(count())
    assert one.plan().statistics[0].noise == "laplace" and one.plan().spent_delta == 0.0
    assert dpdist.query(TABLE, epsilon=1.0).agg(count()).plan().statistics[0].sds is None  # no delta: no choice


def test_a_gaussian_statistic_spends_its_delta_in_the_guarantee_and_lands_near_the_truth():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = (dpdist.query(TABLE, epsilon=1.0, privacy_id="person", max_contributions=4, max_groups=20,
                               delta=1e-5, rng=4).group_by("region", keys=KEYS).agg(count(), sum("age", (0, 100)))
                  .release())
    assert result.guarantee.delta == pytest.approx(1e-5) and result.guarantee.epsilon == pytest.approx(1.0)
    table = result.table()
    for region, counted in zip(table["region"], table["count"]):
        sd = result.plan.statistics[0].sds[1]
        assert abs(counted - np.count_nonzero(TABLE["region"] == region)) < 5 * sd


def test_private_keys_take_the_selection_asked_for():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = (dpdist.query(TABLE, epsilon=1.0, privacy_id="person", max_contributions=2, max_groups=2, rng=5)
                  .group_by("region", selection="weighted_gaussian").agg(count()).release())
    assert set(result.keys) == set(KEYS)
    with pytest.raises(InvalidParameterError, match="'selection'"):
        dpdist.query(TABLE, epsilon=1.0).group_by("region", selection="mad")
    with pytest.raises(InvalidParameterError, match="'selection' parameter of Query.group_by must be None when 'keys' is given \\(it chooses private keys"):
        dpdist.query(TABLE, epsilon=1.0).group_by("region", keys=KEYS, selection="adaptive")


def test_a_minimum_of_persons_withholds_the_groups_whose_noisy_count_of_persons_is_below_it():
    """min_persons: a noisy count of each group's persons at its own epsilon, charged with the rest; a group of 3
    persons is withheld (its noisy count is below 50 but with probability e^-4 or so), one of 1,000 is not."""
    table = pd.DataFrame({"person": np.arange(1_003) // 1, "region": ["big"] * 1_000 + ["tiny"] * 3,
                          "income": RNG.lognormal(10, 0.7, 1_003)})
    built = (dpdist.query(table, epsilon=1.0, privacy_id="person", max_contributions=1, min_persons=50, rng=5)
             .group_by("region", keys=["big", "tiny"]).agg(count(), mean("income", (0, 3e5))))
    plan = built.plan()
    assert plan.threshold == (50, pytest.approx(0.1)) and "groups below 50 withheld" in plan.rule
    assert [p.epsilon for p in plan.statistics] == pytest.approx([0.45, 0.45])
    result = built.release()
    assert result.keys == ["big"] and list(result.table()["region"]) == ["big"]
    assert result.guarantee.epsilon == pytest.approx(1.0) and result.guarantee.unit == "person"
    per_record = dpdist.query(table, epsilon=1.0, min_persons=50, min_persons_epsilon=0.5, rng=5).agg(count())
    assert per_record.plan().statistics[0].epsilon == pytest.approx(0.5) and per_record.release().keys == [0]


def test_a_minimum_of_persons_may_choose_private_keys_and_is_refused_where_it_leaves_no_budget():
    table = pd.DataFrame({"person": np.arange(2_000), "region": ["a"] * 1_990 + ["b"] * 10})
    result = (dpdist.query(table, epsilon=1.0, privacy_id="person", max_contributions=1, min_persons=100, rng=2)
              .group_by("region").agg(count()).release())
    assert result.keys == ["a"] and result.guarantee.epsilon == pytest.approx(1.0)
    with pytest.raises(InvalidParameterError, match="leaving none for the statistics"):
        dpdist.query(table, epsilon=1.0, min_persons=5, min_persons_epsilon=0.95).group_by("region").agg(count()).plan()
    with pytest.raises(InvalidParameterError, match="'min_persons'"):
        dpdist.query(table, epsilon=1.0, min_persons=0)
