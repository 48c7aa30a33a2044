"""Joins of a query's table: to a public table of any engine, and of two private tables on the privacy id, each
person's rows bounded after the join; refused by name where the guarantee cannot be kept."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pandas as pd
import pytest

import dpdist
from dpdist.errors import InvalidParameterError
from dpdist.queries import count, sum

polars = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

RNG = np.random.default_rng(21)
N = 600
VISITS = pd.DataFrame({"person": RNG.integers(0, 150, N), "region": RNG.choice(["n", "s", "e", "w", "x"], N),
                       "spent": RNG.uniform(0, 100, N)})
VISITS.loc[:9, "region"] = None  # a missing key matches nothing
#: the public table: 4 regions (not "x"), their zones
REGIONS = pd.DataFrame({"region": ["n", "s", "e", "w"], "zone": ["north", "south", "east", "west"]})
#: a second private table of the same persons
ORDERS = pd.DataFrame({"person": RNG.integers(0, 200, 300), "amount": RNG.uniform(0, 50, 300)})


def _rows(native) -> pd.DataFrame:
    """A frame of any engine as pandas rows, sorted."""
    if hasattr(native, "collect"):
        native = native.collect()
    frame = native.fetchdf() if hasattr(native, "fetchdf") else native.to_pandas() if hasattr(native, "to_pandas") \
        else native
    return frame.sort_values(list(frame.columns)).reset_index(drop=True)


def _engines(frame: pd.DataFrame) -> dict:
    visits = frame  # noqa: F841 (read by duckdb's replacement scan)
    return {"pandas": frame, "polars": polars.from_pandas(frame), "polars-lazy": polars.from_pandas(frame).lazy(),
            "duckdb": duckdb.sql("SELECT * FROM visits")}


@pytest.mark.parametrize("how", ["inner", "left"])
def test_a_public_join_gives_the_rows_sql_gives_on_every_engine_with_the_public_table_of_any_engine(how):
    expected = _rows(VISITS.dropna(subset=["region"]).merge(REGIONS, on="region", how="inner") if how == "inner"
                     else VISITS.merge(REGIONS.dropna(), on="region", how="left"))
    for engine, frame in _engines(VISITS).items():
        for public in (REGIONS, polars.from_pandas(REGIONS)):  # read whole into the private table's engine
            built = dpdist.query(frame, epsilon=1.0, privacy_id="person", max_contributions=5).join_public(
                public, on="region", how=how)
            assert type(built.table) is type(frame)
            joined = _rows(built.table)
            assert len(joined) == len(expected), engine
            pd.testing.assert_frame_equal(joined.astype(str), expected[joined.columns].astype(str), check_dtype=False)


def test_per_record_a_public_table_must_have_unique_keys_and_per_person_it_need_not():
    doubled = pd.concat([REGIONS, REGIONS.assign(zone="other")])
    with pytest.raises(InvalidParameterError, match="repeat a key of \\['region'\\] .*: a private row would become "
                                                    "several rows"):
        dpdist.query(VISITS, epsilon=1.0).join_public(doubled, on="region")
    built = dpdist.query(VISITS, epsilon=1.0, privacy_id="person", max_contributions=4).join_public(doubled, "region")
    assert len(built.table) == 2 * int(VISITS["region"].isin(REGIONS["region"]).sum())


@pytest.mark.parametrize("engine", ["pandas", "polars", "duckdb", "pyarrow"])
def test_per_record_public_keys_must_be_unique_as_the_join_compares_them(engine):
    """Integers beyond 2**53, unique as integers, meet as floats (2**60 + i is 2**60 for i < 128): against a float
    private key they are refused, or one record would match them all; against an integer key they compare exactly and
    each private row matches its one public row."""
    pa = pytest.importorskip("pyarrow")
    public = pd.DataFrame({"k": 2**60 + np.arange(129, dtype=np.int64), "z": np.arange(129)})
    private = pd.DataFrame({"k": np.array([2**60, 2**60 + 5], dtype=np.int64)})
    make = {"pandas": lambda f: f, "polars": polars.from_pandas, "pyarrow": pa.Table.from_pandas,
            "duckdb": lambda f: duckdb.from_df(f)}[engine]
    floats = make(private.astype({"k": float}))
    with pytest.raises(InvalidParameterError, match="repeat a key of \\['k'\\] \\(as the join compares"):
        dpdist.query(floats, epsilon=1.0).join_public(public, on="k")
    with pytest.raises(InvalidParameterError, match="repeat a key of \\['k'\\] \\(as the join compares"):
        dpdist.sql("SELECT COUNT(*) AS n FROM t JOIN p ON t.k = p.k", {"t": floats}, epsilon=1.0, public_tables={
            "p": public})
    joined = _rows(dpdist.query(make(private), epsilon=1.0).join_public(public, on="k").table)
    assert joined["z"].tolist() == [0, 5]


def test_join_keys_compare_by_type_numbers_by_value_and_other_types_are_refused_by_name():
    numbered = VISITS.assign(code=VISITS.index % 4)
    codes = pd.DataFrame({"code": [0.0, 1.0, 2.0, 3.0], "label": list("abcd")})
    joined = dpdist.query(numbered, epsilon=1.0).join_public(codes, on="code").table
    assert len(joined) == N and (joined["label"] == np.array(list("abcd"))[numbered["code"]]).all()
    with pytest.raises(InvalidParameterError, match="'region' \\(string\\) with 'code' \\(number\\)"):
        dpdist.query(numbered, epsilon=1.0).join_public(codes, on={"region": "code"})
    with pytest.raises(InvalidParameterError, match="columns both tables hold outside the join, \\['spent'\\]"):
        dpdist.query(VISITS, epsilon=1.0).join_public(REGIONS.assign(spent=1.0), on="region")
    with pytest.raises(InvalidParameterError, match="'how' parameter of Query.join_public must be one of"):
        dpdist.query(VISITS, epsilon=1.0).join_public(REGIONS, on="region", how="right")


def test_a_private_join_is_on_the_privacy_id_and_a_persons_rows_meet_their_own_rows_only():
    built = dpdist.query(VISITS, epsilon=1.0, privacy_id="person", max_contributions=3).join_private(ORDERS)
    expected = VISITS.merge(ORDERS, on="person")
    assert len(built.table) == len(expected)
    per_person = built.table.groupby("person").size()
    assert (per_person == VISITS.groupby("person").size()[per_person.index] *
            ORDERS.groupby("person").size()[per_person.index]).all()
    with pytest.raises(InvalidParameterError, match="without privacy_id"):
        dpdist.query(VISITS, epsilon=1.0).join_private(ORDERS)


def test_a_query_over_a_private_join_bounds_each_persons_rows_after_it():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = (dpdist.query(VISITS, epsilon=1.0, privacy_id="person", max_contributions=2, rng=1)
                  .join_private(ORDERS).join_public(REGIONS, on="region").group_by("zone", keys=list(REGIONS["zone"]))
                  .agg(count(), sum("amount", (0, 50))).release())
    assert result.guarantee.unit == "person" and result.guarantee.epsilon == pytest.approx(1.0)
    left_out = [w.message for w in caught if type(w.message).__name__ == "ContributionBoundWarning"]
    assert left_out and left_out[0].details["keeps"]["max_contributions"] > 2  # bounded after the join
    persons = VISITS.merge(ORDERS, on="person").merge(REGIONS, on="region").groupby("zone")["person"].nunique()
    for zone, released in result.results["count()"].items():
        assert released.count <= 2 * persons[zone] + 8 * released.standard_error


# --- the per-person guarantees, checked on a person with many rows in both tables added and removed ---

def _person_neighbours():
    """A background of 40 persons, and the same with one more person of 12 visits and 12 orders (144 joined rows): one
    pair, as the audit compares each pair both ways."""
    rng = np.random.default_rng(5)
    visits = pd.DataFrame({"person": rng.integers(0, 40, 80), "region": rng.choice(["n", "s"], 80),
                           "spent": rng.uniform(0, 10, 80)})
    orders = pd.DataFrame({"person": rng.integers(0, 40, 60), "amount": rng.uniform(0, 10, 60)})
    heavy = (pd.DataFrame({"person": 99, "region": ["n"] * 12, "spent": 10.0}),
             pd.DataFrame({"person": 99, "amount": [10.0] * 12}))
    with_heavy = (pd.concat([visits, heavy[0]], ignore_index=True), pd.concat([orders, heavy[1]], ignore_index=True))
    return [((visits, orders), with_heavy)]


#: the claim audited: large enough that 2,000 releases per dataset certify a part of it where it holds
EPSILON = 4.0


def _released(per_person: bool, public: bool):
    """One query over a pair of tables: the zone of each visit from the public table (whose key "n" is listed twice:
    each visit there becomes two rows), or the orders of each person joined on the id; its noisy counts per group are
    the output the audit reads.  The join, a function of the tables alone, is made once per pair of tables."""
    doubled = pd.DataFrame({"region": ["n", "n", "s"], "zone": ["a", "a", "b"]})
    joins: dict = {}

    def joined(tables):
        visits, orders = tables
        if id(tables) not in joins:
            if not per_person:  # the broken variant: rows of a person joined, then counted as records
                merged = visits.merge(doubled if public else orders, on="region" if public else "person")
                joins[id(tables)] = dpdist.query(merged, epsilon=EPSILON)
            else:
                built = dpdist.query(visits, epsilon=EPSILON, privacy_id="person", max_contributions=2)
                joins[id(tables)] = built.join_public(doubled, on="region") if public else built.join_private(orders)
        return joins[id(tables)]

    def release(tables, rng):
        by = ("zone", ["a", "b"]) if public else ("region", ["n", "s"])
        built = dataclasses.replace(joined(tables), rng=int(rng.integers(2**63))).group_by(by[0], keys=by[1])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = built.agg(count()).release()
        return [result.results["count()"][key].count for key in by[1]]

    return release


@pytest.mark.slow  # about 35 CPU-s each: 2 audits of 2,000 releases per dataset
@pytest.mark.parametrize("public", [True, False], ids=["public join", "private join"])
def test_a_person_with_many_rows_across_joined_tables_moves_the_release_within_its_epsilon(public):
    """Clopper-Pearson certified lower bounds (:func:`dpdist.audit.central`, confidence 0.999) on the epsilon of the
    query over the join, on neighbours that differ by one person of 12 rows in each table: below the stated 4 per
    person (and a part of it: the audit sees the person); the same join counted per record (the person's joined rows
    unbounded) is certified above it."""
    from dpdist import audit

    kept = audit.central(_released(True, public), EPSILON, _person_neighbours(), samples=2_000, rng=7)
    assert kept.verdict == "no violation found" and 0.5 < kept.certified_epsilon <= EPSILON
    broken = audit.central(_released(False, public), EPSILON, _person_neighbours(), samples=2_000, rng=7)
    assert broken.violates and broken.certified_epsilon > EPSILON


def test_the_persons_ids_of_a_private_join_compare_exactly_or_are_refused():
    """Integer ids compare as integers (two ids beyond 2**53 one apart stay two persons); an integer id against a
    float one would compare as floats, where such ids meet: refused by name."""
    big = 2**60
    visits = pd.DataFrame({"person": [big, big + 1], "region": ["n", "n"], "spent": [1.0, 2.0]})
    orders = pd.DataFrame({"person": np.array([big, big + 1], dtype=np.int64),
                           "amount": [10.0, 20.0]})
    joined = dpdist.query(visits, epsilon=1.0, privacy_id="person", max_contributions=1).join_private(orders).table
    assert sorted(zip(joined["person"], joined["amount"])) == [(big, 10.0), (big + 1, 20.0)]
    with pytest.raises(InvalidParameterError, match="the persons' ids 'person' \\(Int64\\) and 'person' \\(Float64\\)"):
        dpdist.query(visits, epsilon=1.0, privacy_id="person", max_contributions=1).join_private(
            orders.astype({"person": float}))


@pytest.mark.slow  # about 4 CPU-s: 2 audits of 400 releases per dataset
def test_a_per_record_release_through_a_public_join_stays_within_its_epsilon():
    """Clopper-Pearson certified lower bound (confidence 0.999) on the epsilon of a per-record count through a public
    join whose integer keys beyond 2**53 are unique as floats (the float private key meets one each), on neighbours
    that differ by one record at such a key: within the stated epsilon.  The same count where each private row met
    the 129 rows of a public key repeated as floats (what a join to 2**60 + i did) is certified above it."""
    from dpdist import audit

    public = pd.DataFrame({"k": 2**53 + 2 * np.arange(129, dtype=np.int64), "z": "a"})
    background = pd.DataFrame({"k": np.full(20, 2.0**53 + 2)})
    neighbours = [(background, pd.concat([background, pd.DataFrame({"k": [2.0**53]})], ignore_index=True))]

    def released(fanned: bool):
        joins: dict = {}

        def release(table, rng):
            if id(table) not in joins:  # the join, a function of the table alone, made once per table
                joins[id(table)] = pd.concat([table, *[table[table["k"] == 2.0**53]] * 128], ignore_index=True).assign(
                    z="a") if fanned else dpdist.query(table, epsilon=1.0).join_public(public, on="k").table
            result = dpdist.query(joins[id(table)], epsilon=1.0, rng=int(rng.integers(2**63))).group_by(
                "z", keys=["a"]).agg(count()).release()
            return [result.results["count()"]["a"].count]
        return release

    kept = audit.central(released(False), 1.0, neighbours, samples=400, rng=3)
    assert kept.verdict == "no violation found" and kept.certified_epsilon <= 1.0
    broken = audit.central(released(True), 1.0, neighbours, samples=400, rng=3)
    assert broken.violates and broken.certified_epsilon > 1.0
