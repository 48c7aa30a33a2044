"""A query over a Dask DataFrame bounds each person's rows on the cluster and releases, for the same seed, what the
same query releases over the same rows in pandas, whatever the partitions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import dpdist
from dpdist.errors import ContributionBoundWarning, MissingValuesWarning
from dpdist.queries import count, distinct, histogram, mean, quantiles
from dpdist.queries._scale import kept_rows

dd = pytest.importorskip("dask.dataframe")
#: persons of up to 6 rows bounded to 2 in each of 2 groups: every query here leaves rows out, told in a warning
pytestmark = pytest.mark.filterwarnings("ignore::dpdist.errors.ContributionBoundWarning")
dask = pytest.importorskip("dask")

RNG = np.random.default_rng(2)
N = 2_000
#: persons of 1 to 6 rows over three regions: bounding to 2 rows in each of 2 regions leaves rows out
TABLE = pd.DataFrame({"person": RNG.integers(0, 600, N), "region": RNG.choice(["north", "south", "east"], N),
                      "income": RNG.lognormal(10, 0.7, N), "age": RNG.integers(18, 90, N)})


@pytest.fixture(autouse=True)
def one_thread():
    """Dask's partitions computed one after the other, in this process (2 shared cores)."""
    with dask.config.set(scheduler="synchronous"):
        yield


@pytest.fixture
def bounded_on_the_cluster(monkeypatch):
    """The engines the query bounded rows on (the cluster's path, not a collection of the whole table)."""
    from dpdist.queries import _query

    engines = []

    def spied(frame, engine, *args):
        engines.append(engine)
        return bound(frame, engine, *args)

    bound = _query.cluster_bounded
    monkeypatch.setattr(_query, "cluster_bounded", spied)
    return engines


def _release(table, keys=("north", "south"), **options):
    built = dpdist.query(table, epsilon=1.0, privacy_id="person", max_contributions=2, max_groups=2, rng=4, **options)
    return (built.group_by("region", keys=None if keys is None else list(keys))
            .agg(quantiles("income", [0.1, 0.5, 0.9], (0, 3e5)), histogram("age", 4, (0, 80)), count(),
                 mean("income", (0, 3e5)))).release().table()


def _dask(table, partitions):
    return dd.from_pandas(table, npartitions=partitions, sort=False)


@pytest.mark.parametrize("partitions", [1, 3, 7])
@pytest.mark.slow  # 0.81 CPU-s: a Dask graph end to end
def test_a_dask_frame_releases_what_pandas_releases_for_the_same_seed(partitions, bounded_on_the_cluster):
    released = _release(_dask(TABLE, partitions)).compute().reset_index(drop=True)
    assert bounded_on_the_cluster == ["dask"]
    pd.testing.assert_frame_equal(released, _release(TABLE), check_exact=True)


def test_a_distinct_count_on_dask_is_the_one_released_in_pandas_for_the_same_seed(bounded_on_the_cluster):
    """The same numbers, and the same rows left out told to the caller (on the cluster the rows only: the pairs and
    the bounds that would keep every row are not counted there)."""
    def released(table):
        built = dpdist.query(table, epsilon=1.0, privacy_id="person", max_contributions=2, max_groups=2, rng=6)
        with pytest.warns(ContributionBoundWarning) as warned:
            result = built.group_by("region", keys=["north", "south"]).agg(distinct("age")).release().table()
        return result, warned[0].message

    (on_dask, told), (on_pandas, expected) = released(_dask(TABLE, 3)), released(TABLE)
    assert bounded_on_the_cluster == ["dask"]
    pd.testing.assert_frame_equal(on_dask.compute().reset_index(drop=True), on_pandas, check_exact=True)
    assert told.count == expected.count > 0 and told.details["statistics"] == expected.details["statistics"]
    assert told.details["keeps"] == {"max_contributions": None, "max_groups": None}


def test_private_keys_on_dask_are_the_ones_chosen_in_pandas_for_the_same_seed():
    released = _release(_dask(TABLE, 4), keys=None).compute().reset_index(drop=True)
    pd.testing.assert_frame_equal(released, _release(TABLE, keys=None), check_exact=True)


def test_gaussian_statistics_of_private_keys_on_dask_are_the_ones_of_pandas_for_the_same_seed():
    """Two groups per person (the two-round selection by default) and a delta: the counts, histogram and mean as
    Gaussian vectors, the same numbers as pandas's."""
    released = _release(_dask(TABLE, 3), keys=None, delta=1e-5).compute().reset_index(drop=True)
    pd.testing.assert_frame_equal(released, _release(TABLE, keys=None, delta=1e-5), check_exact=True)


def test_each_person_keeps_at_most_max_groups_groups_of_listed_keys_and_max_contributions_rows_in_each():
    ids, regions = TABLE["person"].to_numpy(), TABLE["region"].to_numpy()
    kept, _, shown = kept_rows(ids, [regions], ["text"], "number", ["north", "south"], (2, 1), seed=1)
    rows = TABLE.iloc[kept]
    assert set(rows["region"]) == {"north", "south"} and shown is None  # public keys: no selection
    assert rows.groupby(["person", "region"]).size().max() == 2 and rows.groupby("person")["region"].nunique().max() == 1
    listed = TABLE[TABLE["region"] != "east"]  # a person of the listed keys keeps one of them, whatever else they have
    assert rows["person"].nunique() == listed["person"].nunique()


def test_missing_values_ids_and_keys_on_dask_are_left_out_as_in_pandas_and_told_to_the_holder():
    """Missing incomes, ids and keys: nothing refused; the rows of a missing id or key left out before the bounding
    and those of a missing income out of its statistics, the same numbers as pandas's for the same seed."""
    holed = TABLE.assign(income=TABLE["income"].where(np.arange(N) % 97 != 5),
                         person=TABLE["person"].where(np.arange(N) % 89 != 3),
                         region=TABLE["region"].where(np.arange(N) % 83 != 7))
    with pytest.warns(MissingValuesWarning) as warned:
        released = _release(_dask(holed, 3)).compute().reset_index(drop=True)
    holes = int((holed["person"].isna() | holed["region"].isna()).sum())
    assert [w.message.details["ids_or_keys"] for w in warned if isinstance(w.message, MissingValuesWarning)] == [holes]
    with pytest.warns(MissingValuesWarning):
        pd.testing.assert_frame_equal(released, _release(holed), check_exact=True)


def test_sql_where_on_dask_filters_on_the_cluster_before_the_bounding():
    statement = "SELECT region, MEDIAN(income) AS median, COUNT(*) FROM t WHERE age >= 30 GROUP BY region"
    options = dict(epsilon=1.0, bounds={"income": (0, 3e5)}, keys={"region": ["north", "south"]},
                   privacy_id="person", max_contributions=2, max_groups=2, rng=8)
    on_dask = dpdist.sql(statement, tables={"t": _dask(TABLE, 3)}, **options)
    released = on_dask.release().table().compute().reset_index(drop=True)
    expected = dpdist.sql(statement, tables={"t": TABLE[TABLE["age"] >= 30]}, **options).release().table()
    pd.testing.assert_frame_equal(released, expected, check_exact=True)


@pytest.mark.slow  # a JVM and Python workers: end to end, out of the fast inner loop
@pytest.mark.parametrize("keys", [("north", "south"), None])
def test_a_spark_frame_releases_what_pandas_releases_for_the_same_seed(keys, bounded_on_the_cluster):
    pytest.importorskip("pyspark")
    from spark_support import spark_session

    frame = spark_session().createDataFrame(TABLE).repartition(3).cache()
    rows = pd.DataFrame(frame.collect(), columns=TABLE.columns)  # the same rows in the frame's order
    released = _release(frame, keys).toPandas()
    assert bounded_on_the_cluster == ["pyspark"]
    pd.testing.assert_frame_equal(released, _release(rows, keys), check_exact=True)
