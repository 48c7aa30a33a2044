"""What a SELECT reads: FROM a private table, its joins to public tables and to private tables on the privacy id, a
per-person subquery; what each keeps and what is refused by name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpdist
from dpdist.errors import InvalidParameterError

polars = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

RNG = np.random.default_rng(31)
N = 500
VISITS = pd.DataFrame({"person": RNG.integers(0, 120, N), "region": RNG.choice(["n", "s", "e", "w"], N),
                       "spent": np.where(RNG.random(N) < 0.1, np.nan, RNG.uniform(0, 100, N)),
                       "day": RNG.integers(0, 7, N)})
REGIONS = pd.DataFrame({"region": ["n", "s", "e", "w"], "zone": ["north", "south", "east", "west"], "day": 0})
ORDERS = pd.DataFrame({"customer": RNG.integers(0, 150, 200), "amount": RNG.uniform(0, 50, 200)})


def _engines() -> dict:
    visits = VISITS  # noqa: F841 (read by duckdb's replacement scan)
    return {"pandas": VISITS, "polars": polars.from_pandas(VISITS), "polars-lazy": polars.from_pandas(VISITS).lazy(),
            "duckdb": duckdb.sql("SELECT * FROM visits")}


def _pandas(native) -> pd.DataFrame:
    if hasattr(native, "collect"):
        native = native.collect()
    return native.fetchdf() if hasattr(native, "fetchdf") else native.to_pandas() if hasattr(native, "to_pandas") \
        else native


def _sql(statement: str, table=VISITS, **options):
    settings = {"tables": {"t": table, "o": ORDERS}, "public_tables": {"r": REGIONS}, "epsilon": 1.0,
                "privacy_id": {"t": "person", "o": "customer"}, "max_contributions": 3,
                "bounds": {"spent": (0, 100), "total": (0, 1_000), "amount": (0, 50)}, **options}
    return dpdist.sql(statement, **settings)


def test_a_join_to_a_public_table_names_its_columns_and_keeps_sqls_rows():
    built = _sql("SELECT r.zone, COUNT(*) FROM t JOIN r ON t.region = r.region WHERE r.day = 0 GROUP BY r.zone",
                 keys={"zone": ["north", "south", "east", "west"]})
    joined = _pandas(built.table)
    assert len(joined) == N and set(joined["zone"]) == {"north", "south", "east", "west"}
    assert built.by == ("zone",) and "r_day" in joined.columns  # the public 'day' beside the table's own
    using = _sql("SELECT zone, COUNT(*) FROM t JOIN r USING (region) GROUP BY zone", keys=None)
    assert list(_pandas(using.table).columns) == ["person", "region", "spent", "day", "zone", "r_day"]


def test_a_column_both_joined_tables_hold_is_named_by_its_table():
    with pytest.raises(InvalidParameterError, match="the column 'day', which several tables of FROM have: qualify it "
                                                    "\\(t.day or r.day\\)"):
        _sql("SELECT COUNT(*) FROM t JOIN r ON t.region = r.region WHERE day = 0")
    assert len(_pandas(_sql("SELECT COUNT(*) FROM t JOIN r ON t.region = r.region WHERE t.day = 0").table)) == \
        int((VISITS.day == 0).sum())


def test_a_join_of_private_tables_is_on_their_persons_ids_whatever_each_table_calls_them():
    built = _sql("SELECT COUNT(*), SUM(o.amount) FROM t JOIN o ON t.person = o.customer")
    assert len(built.table) == len(VISITS.merge(ORDERS, left_on="person", right_on="customer"))
    assert built.privacy_id == "person"
    with pytest.raises(InvalidParameterError, match="of two private tables not on the persons' ids"):
        _sql("SELECT COUNT(*) FROM t JOIN o ON t.day = o.customer")
    with pytest.raises(InvalidParameterError, match="a private table, without privacy_id"):
        _sql("SELECT COUNT(*) FROM t JOIN o ON t.person = o.customer", privacy_id=None, max_contributions=None)
    with pytest.raises(InvalidParameterError, match="a public table: a query reads a private table"):
        _sql("SELECT COUNT(*) FROM r")


def test_a_per_person_subquery_is_each_persons_aggregate_on_every_engine():
    statement = ("SELECT region, AVG(total) FROM (SELECT person, region, SUM(spent) AS total, COUNT(*) AS visits "
                 "FROM t WHERE day < 5 GROUP BY person, region) AS p WHERE visits >= 2 GROUP BY region")
    kept = VISITS[VISITS.day < 5]
    expected = kept.groupby(["person", "region"]).agg(total=("spent", lambda s: s.sum(min_count=1)),
                                                      visits=("spent", "size")).reset_index()
    expected = expected[expected.visits >= 2].sort_values(["person", "region"]).reset_index(drop=True)
    for engine, frame in _engines().items():
        built = _sql(statement, table=frame, keys={"region": ["n", "s", "e", "w"]})
        assert built.privacy_id == "person"
        rows = _pandas(built.table).reset_index(drop=True)
        assert list(rows["person"]) == list(expected["person"]), engine
        np.testing.assert_allclose(rows["total"].to_numpy(dtype=float), expected["total"].to_numpy(dtype=float))
    result = _sql(statement, keys={"region": ["n", "s", "e", "w"]}, rng=2, missing="drop").release()  # no spent
    assert result.guarantee.unit == "person" and result.guarantee.epsilon == pytest.approx(1.0)


@pytest.mark.parametrize(("statement", "named"), [
    ("SELECT COUNT(*) FROM (SELECT region, SUM(spent) AS total FROM t GROUP BY region)",
     "grouped by region: a per-person subquery groups by columns, the privacy id 'person' among them"),
    ("SELECT COUNT(*) FROM (SELECT person, SUM(spent) FROM t GROUP BY person)", "without AS"),
    ("SELECT COUNT(*) FROM (SELECT person, MEDIAN(spent) AS m FROM t GROUP BY person)", "MEDIAN\\(spent\\)"),
    ("SELECT COUNT(*) FROM (SELECT person, day, SUM(spent) AS s FROM t GROUP BY person)", "column day outside"),
    ("SELECT COUNT(*) FROM (SELECT person, SUM(region) AS s FROM t GROUP BY person)", "SUM takes numbers"),
    ("SELECT COUNT(*) FROM (SELECT person, COUNT(*) AS n FROM t GROUP BY person ORDER BY n)", "a subquery with"),
    ("SELECT COUNT(*) FROM t JOIN (SELECT * FROM o) AS q ON t.person = q.customer", "subqueries other than"),
])
def test_a_subquery_that_is_not_per_person_is_refused_with_the_reason(statement, named):
    with pytest.raises(InvalidParameterError, match=named) as refused:
        _sql(statement)
    assert "\n" not in str(refused.value)


def test_a_subquery_without_a_privacy_unit_is_refused():
    with pytest.raises(InvalidParameterError, match="a subquery without privacy_id: per record"):
        _sql("SELECT COUNT(*) FROM (SELECT person, SUM(spent) AS s FROM t GROUP BY person)", privacy_id=None,
             max_contributions=None)
