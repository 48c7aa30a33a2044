"""A query over a PySpark DataFrame bounds each person's rows on the executors and releases, for the same seed, what
the same query releases over the same rows in pandas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("pyspark")

#: a JVM and Python workers: end to end, out of the fast inner loop
pytestmark = pytest.mark.slow

from spark_support import spark_session  # noqa: E402

import dpdist  # noqa: E402
from dpdist.queries import count, histogram, quantiles  # noqa: E402

RNG = np.random.default_rng(3)
N = 1_500
TABLE = pd.DataFrame({"person": RNG.integers(0, 500, N), "region": RNG.choice(["north", "south", "east"], N),
                      "income": RNG.lognormal(10, 0.7, N), "age": RNG.integers(18, 90, N)})


def _release(table, keys):
    return (dpdist.query(table, epsilon=1.0, privacy_id="person", max_contributions=2, max_groups=2, rng=6)
            .group_by("region", keys=keys)
            .agg(quantiles("income", [0.1, 0.5, 0.9], (0, 3e5)), histogram("age", 4, (0, 80)), count())).release()


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


@pytest.mark.parametrize("keys", [["north", "south"], None])
def test_a_spark_frame_releases_what_pandas_releases_for_the_same_seed(keys, bounded_on_the_cluster):
    frame = spark_session().createDataFrame(TABLE).repartition(3).cache()
    rows = pd.DataFrame(frame.collect(), columns=TABLE.columns)  # the same rows in the frame's order
    released = _release(frame, keys).table().toPandas()
    assert bounded_on_the_cluster == ["pyspark"]
    pd.testing.assert_frame_equal(released, _release(rows, keys).table(), check_exact=True)
