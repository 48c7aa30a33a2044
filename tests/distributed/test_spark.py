"""dpdist.distributed.spark on ``local[2]``: report files and simulated populations give the very states of one
process and of Dask (exact equality of the aggregator states: n, statistic, rejections)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pyspark")
da = pytest.importorskip("dask.array")
pa = pytest.importorskip("pyarrow")

#: a JVM and Python workers: end to end, out of the fast inner loop
pytestmark = pytest.mark.slow

from spark_support import spark_session  # noqa: E402

from dpdist import distributed, io, local  # noqa: E402
from dpdist.distributed import spark as on_spark  # noqa: E402
from dpdist.errors import IncompatibleStateError, InvalidParameterError  # noqa: E402


@pytest.fixture(scope="module")
def spark():
    return spark_session()


def _blocks(values, chunk):
    return [values[start : start + chunk] for start in range(0, values.size, chunk)]


@pytest.mark.parametrize("name, params", [
    ("grr", {"epsilon": 1.0, "domain_size": 20}),
    ("oue", {"epsilon": 1.0, "domain_size": 64}),
    ("sw", {"epsilon": 1.0, "bins": 16}),
])
def test_simulate_equals_one_process_and_dask(spark, name, params):
    protocol = local.make(name, **params)
    generator = np.random.default_rng(3)
    values = generator.beta(2, 3, 50_000) if name == "sw" else generator.integers(0, params["domain_size"], 50_000)
    blocks = _blocks(values, 6_000)  # 9 blocks, the last one short
    one_process = distributed.simulate_blocks(protocol, blocks, seed=42)
    on_dask = distributed.simulate(protocol, da.from_array(values, chunks=6_000), seed=42, split_every=3)
    pairs = spark.sparkContext.parallelize(list(enumerate(blocks)), 4)  # several blocks per partition
    result = on_spark.simulate(protocol, pairs, seed=42)
    assert result == one_process == on_dask and result.n == values.size
    assert result.to_dict() == one_process.to_dict()
    assert on_spark.simulate(protocol, pairs, seed=43) != result  # the seed matters


def test_simulate_a_population_drawn_on_the_executors(spark):
    oue = local.make("oue", epsilon=2.0, domain_size=64)
    n_blocks = 6

    def make_block(index: int) -> np.ndarray:
        """Block ``index`` of a population drawn where it is used (on an executor, or here to compare); a local
        function, so that Spark ships its code (the executors cannot import this test module)."""
        return np.random.default_rng([7, index]).zipf(1.3, 40_000).clip(1, 64) - 1

    drawn = spark.sparkContext.range(n_blocks, numSlices=3).map(lambda index: (index, make_block(index)))
    result = on_spark.simulate(oue, drawn, seed=5, depth=3)
    assert result == distributed.simulate_blocks(oue, [make_block(index) for index in range(n_blocks)], seed=5)
    assert result.n == n_blocks * 40_000


def test_simulate_a_dataframe_column_block_per_partition(spark):
    grr = local.make("grr", epsilon=1.0, domain_size=10)
    values = np.random.default_rng(1).integers(0, 10, 30_000)
    frame = spark.createDataFrame(pa.table({"item": values})).repartition(3).cache()
    partitions = frame.rdd.mapPartitions(lambda rows: [np.array([row[0] for row in rows], dtype=np.int64)]).collect()
    assert len(partitions) == 3 and sum(map(len, partitions)) == values.size
    result = on_spark.simulate(grr, frame, seed=9)
    assert result == distributed.simulate_blocks(grr, partitions, seed=9)
    frame.unpersist()


def test_aggregate_files_equals_one_process_and_dask(spark, tmp_path):
    oue = local.make("oue", epsilon=1.0, domain_size=40)
    expected = oue.aggregator()
    paths = []
    for part in range(4):
        reports = oue.privatize(np.random.default_rng(part).integers(0, 40, 7_000), rng=part)
        expected.add(reports)
        path = tmp_path / (f"r{part}.parquet" if part < 3 else "r3.bin")
        with io.ReportWriter(path, oue) as writer:  # two row groups per Parquet file
            writer.write(reports[:3_000])
            writer.write(reports[3_000:])
        paths.append(path)
    foreign = tmp_path / "foreign.parquet"
    io.write_reports(foreign, local.make("oue", epsilon=2.0, domain_size=40), np.zeros((5, 5), np.uint8))
    one_process = oue.aggregator()
    for path in [*paths, foreign]:
        for batch in io.iter_report_batches(path, oue):
            one_process.add_batch(batch)
    on_dask = distributed.aggregate_files([*paths, foreign], oue, split_every=2)
    result = on_spark.aggregate_files([*paths, foreign], oue, spark=spark)
    assert result == one_process == on_dask
    assert result.n == expected.n and np.array_equal(result.statistic, expected.statistic)
    assert result.rejected == {"other_config": 5}
    # the protocol from the first file, and through the session's context
    assert on_spark.aggregate_files(paths[:1], spark=spark.sparkContext).n == 7_000


def test_bad_arguments(spark, tmp_path):
    grr = local.make("grr", epsilon=1.0, domain_size=5)
    pairs = spark.sparkContext.parallelize([(0, np.zeros(3, np.int64))], 1)
    with pytest.raises(InvalidParameterError, match="'depth'"):
        on_spark.simulate(grr, pairs, seed=1, depth=0)
    with pytest.raises(InvalidParameterError, match="'seed'"):
        on_spark.simulate(grr, pairs, seed=None)  # type: ignore[arg-type]
    with pytest.raises(InvalidParameterError, match="RDD of \\(block index, values\\) pairs"):
        on_spark.simulate(grr, np.zeros(10, np.int64), seed=1)
    with pytest.raises(InvalidParameterError, match="one column. Got .* with columns \\['a', 'b'\\]"):
        on_spark.simulate(grr, spark.createDataFrame([(1, 2)], ["a", "b"]), seed=1)
    with pytest.raises(InvalidParameterError, match="'spark' parameter of .* SparkSession or a SparkContext. Got 'local\\[2\\]'"):
        on_spark.aggregate_files(["x.parquet"], grr, spark="local[2]")
    with pytest.raises(InvalidParameterError, match="'paths' parameter of distributed.spark.aggregate_files must be .* a non-empty list of them. Got \\[\\]"):
        on_spark.aggregate_files([], grr, spark=spark)
    path = tmp_path / "r.parquet"
    io.write_reports(path, grr, np.array([0, 1, 2], np.uint8))
    with pytest.raises(IncompatibleStateError):
        on_spark.aggregate_files([path, path], grr, spark=spark)
    assert on_spark.simulate(grr, spark.sparkContext.emptyRDD(), seed=1) == grr.aggregator()


def test_duplicate_block_indices_are_refused(spark):
    """Two blocks of one index drew the same random stream (correlated noise), and the run said nothing."""
    grr = local.make("grr", epsilon=1.0, domain_size=5)
    block = np.arange(5, dtype=np.int64)
    twice = spark.sparkContext.parallelize([(0, block), (1, block), (1, block), (2, block)], 2)
    with pytest.raises(InvalidParameterError, match=r"holds 1 block index\(es\) more than once \(1\).* same stream"):
        on_spark.simulate(grr, twice, seed=1)
    for bad in (-1, 1.5, "2"):
        with pytest.raises(InvalidParameterError, match="an int >= 0"):
            on_spark.simulate(grr, spark.sparkContext.parallelize([(0, block), (bad, block)], 2), seed=1)
    once = spark.sparkContext.parallelize([(0, block), (1, block), (2, block)], 2)
    assert on_spark.simulate(grr, once, seed=1) == distributed.simulate_blocks(grr, [block] * 3, seed=1)


def test_bounding_per_person_on_spark_equals_one_process(spark):
    """A DataFrame's 4 partitions bounded on the executors and merged by treeReduce are the
    one-process reservoir of the same partitions (with groups too), and the Dask one of the same blocks."""
    rng = np.random.default_rng(5)
    ids = np.repeat(np.arange(2_000), rng.geometric(0.05, 2_000))
    rng.shuffle(ids)
    values, groups = rng.random(ids.size), rng.choice(["a", "b", "c"], ids.size)
    table = pa.table({"user": ids, "amount": values, "shop": groups})
    frame = spark.createDataFrame(table.to_pandas()).repartition(4).cache()  # one cut, read twice below
    blocks = [(np.array([row.user for row in part]), np.array([row.amount for row in part]),
               np.array([row.shop for row in part], dtype=object)) for part in frame.rdd.glom().collect()]
    assert sum(block[0].size for block in blocks) == ids.size
    kept = on_spark.bound_contributions(frame, "amount", "user", 4, seed=8)
    assert kept == distributed.bound_blocks([block[:2] for block in blocks], 4, seed=8) and kept.rows == ids.size
    chunks = [block[0].size for block in blocks]
    on_dask = distributed.bound_contributions(da.from_array(np.concatenate([b[1] for b in blocks]), chunks=(tuple(chunks),)),
                                              da.from_array(np.concatenate([b[0] for b in blocks]), chunks=(tuple(chunks),)),
                                              4, seed=8)
    assert on_dask == kept
    grouped = on_spark.bound_contributions(frame, "amount", "user", 4, groups="shop", max_groups=2, seed=8)
    assert grouped == distributed.bound_blocks(blocks, 4, max_groups=2, seed=8)
    with pytest.raises(InvalidParameterError, match="'privacy_id' parameter of .* must be a column of the frame: .* Got 'client'"):
        on_spark.bound_contributions(frame, "amount", "client", 4)
