"""dpdist.distributed on a real two-process Dask cluster equals the one-process result exactly."""

from __future__ import annotations

import numpy as np
import pytest

from dpdist import distributed as dpdist_distributed
from dpdist import io, local
from dpdist.errors import InvalidParameterError

#: a two-process cluster per module: end to end, out of the fast inner loop
pytestmark = pytest.mark.slow

distributed = da = dd = None  # Dask's modules, imported by the fixture below


@pytest.fixture(scope="module", autouse=True)
def dask_modules():
    """Import Dask when the tests run, not when ``-m "not slow"`` collects this slow module (1-2 CPU-s)."""
    global distributed, da, dd
    distributed = pytest.importorskip("distributed")
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")


@pytest.fixture(scope="module")
def client(dask_modules):
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, memory_limit="400MiB",
        dashboard_address=None, silence_logs=50,
    ) as cluster, distributed.Client(cluster) as dask_client:
        yield dask_client


def _blocks(values, chunk):
    return [values[start : start + chunk] for start in range(0, values.size, chunk)]


@pytest.mark.parametrize(
    "name, params",
    [("grr", {"epsilon": 1.0, "domain_size": 20}), ("oue", {"epsilon": 1.0, "domain_size": 64}), ("sw", {"epsilon": 1.0, "bins": 16})],
)
def test_simulate_equals_the_single_process_result(client, name, params):
    protocol = local.make(name, **params)
    generator = np.random.default_rng(3)
    values = generator.integers(0, 20, 50_000) if name == "grr" else (
        generator.integers(0, 64, 50_000) if name == "oue" else generator.beta(2, 3, 50_000)
    )
    result = dpdist_distributed.simulate(protocol, da.from_array(values, chunks=6_000), seed=42, split_every=3)
    assert result == dpdist_distributed.simulate_blocks(protocol, _blocks(values, 6_000), seed=42)
    assert result.n == values.size
    other_seed = dpdist_distributed.simulate(protocol, da.from_array(values, chunks=6_000), seed=43)
    assert other_seed != result  # the seed matters


def test_simulate_a_lazily_generated_population(client):
    grr = local.make("grr", epsilon=2.0, domain_size=10)
    chunk, n_blocks = 200_000, 5

    def block_values(block, block_info=None):
        index = block_info[None]["chunk-location"][0]
        return np.random.default_rng([7, index]).integers(0, 10, block.shape[0])

    values = da.zeros(chunk * n_blocks, chunks=chunk, dtype=np.int64).map_blocks(block_values, dtype=np.int64)
    result = dpdist_distributed.simulate(grr, values, seed=5)
    blocks = [np.random.default_rng([7, index]).integers(0, 10, chunk) for index in range(n_blocks)]
    assert result == dpdist_distributed.simulate_blocks(grr, blocks, seed=5)


@pytest.mark.parametrize(
    "name, params",
    [
        ("olh", {"epsilon": 1.0, "domain_size": 30}),
        ("oue", {"epsilon": 1.0, "domain_size": 100}),
        ("pem", {"epsilon": 2.0, "bits": 12, "k": 4, "hash_count": 64}),  # heavy hitters: one FLH table per group
    ],
)
def test_aggregate_a_dask_array_of_reports(client, name, params):
    protocol = local.make(name, **params)
    reports = protocol.privatize(np.arange(20_000) % 30, rng=1)
    if name == "olh":
        reports[:7, 1] = 10**6  # hashed value out of range
    expected = protocol.aggregator().add(reports)
    chunks = (3_000, *reports.shape[1:])
    assert dpdist_distributed.aggregate(da.from_array(reports, chunks=chunks), protocol) == expected
    if name == "olh":
        assert expected.rejected == {"value_out_of_range": 7}


def test_aggregate_report_files_and_a_dataframe(client, tmp_path):
    oue = local.make("oue", epsilon=1.0, domain_size=40)
    expected = oue.aggregator()
    paths = []
    for part in range(3):
        reports = oue.privatize(np.random.default_rng(part).integers(0, 40, 7_000), rng=part)
        expected.add(reports)
        path = tmp_path / (f"r{part}.parquet" if part < 2 else "r2.bin")
        with io.ReportWriter(path, oue) as writer:
            writer.write(reports[:3_000])
            writer.write(reports[3_000:])
        paths.append(path)
    foreign = tmp_path / "foreign.parquet"
    io.write_reports(foreign, local.make("oue", epsilon=2.0, domain_size=40), np.zeros((5, 5), np.uint8))
    result = dpdist_distributed.aggregate_files([*paths, foreign], oue, split_every=2)
    assert result.n == expected.n and np.array_equal(result.statistic, expected.statistic)
    assert result.rejected == {"other_config": 5}

    frame = dd.read_parquet([str(path) for path in paths[:2]])
    single = oue.aggregator()
    for path in paths[:2]:
        io.read_reports(path).add_to(single)
    assert dpdist_distributed.aggregate(frame, oue) == single


def test_bad_arguments(client):
    grr = local.make("grr", epsilon=1.0, domain_size=5)
    values = da.zeros(10, chunks=5, dtype=np.int64)
    with pytest.raises(InvalidParameterError, match="split_every"):
        dpdist_distributed.simulate(grr, values, seed=1, split_every=1)
    with pytest.raises(InvalidParameterError, match="seed"):
        dpdist_distributed.simulate(grr, values, seed=None)
    with pytest.raises(InvalidParameterError, match="1-D dask"):
        dpdist_distributed.simulate(grr, np.zeros(10, np.int64), seed=1)
    with pytest.raises(InvalidParameterError, match="dask.array"):
        dpdist_distributed.aggregate([1, 2], grr)


def test_reproduce_runs_its_cells_on_the_cluster_with_the_local_numbers(client, tmp_path):
    from dpdist import experiments

    spec = experiments.get_spec("toy").with_options(quick=True)
    here = experiments.run_spec(spec, tmp_path / "here", progress=False)
    there = experiments.run_spec(spec, tmp_path / "there", progress=False, scheduler=client.scheduler.address)
    assert there.failures == [] and there.computed == here.computed > 0
    # the same cells and seeds: the same numbers, up to the last bits of BLAS sums (Dask's workers
    # run BLAS single-threaded, which changes the order of a few floating-point additions)
    assert [{k: v for k, v in row.items() if k != "value"} for row in there.raw.rows] == [
        {k: v for k, v in row.items() if k != "value"} for row in here.raw.rows
    ]
    np.testing.assert_allclose([r["value"] for r in there.raw.rows], [r["value"] for r in here.raw.rows], rtol=1e-12)
    again = experiments.run_spec(spec, tmp_path / "there", progress=False, scheduler=client)
    assert again.computed == 0 and again.reused == here.computed  # the cache resumes a cluster run
    with pytest.raises(InvalidParameterError, match="'jobs' parameter of run_spec must be 1 when 'scheduler' is given"):
        experiments.run_spec(spec, tmp_path / "x", progress=False, scheduler=client, jobs=2)
    with pytest.raises(InvalidParameterError, match="'scheduler'"):
        experiments.run_spec(spec, tmp_path / "y", progress=False, scheduler=3)


def test_bounding_per_person_on_the_cluster_equals_one_process(client):
    """The reservoirs of 7 chunks merged on two worker processes are the one-process state exactly,
    with and without groups; released on the driver per person."""
    from dpdist import central

    rng = np.random.default_rng(4)
    ids = np.repeat(np.arange(3_000), rng.geometric(0.05, 3_000))
    rng.shuffle(ids)
    values, groups = rng.random(ids.size), rng.choice(np.array(["a", "b", "c", "d"], dtype=object), ids.size)
    chunk = -(-ids.size // 7)
    blocks = [(ids[i:i + chunk], values[i:i + chunk], groups[i:i + chunk]) for i in range(0, ids.size, chunk)]
    on_dask = dpdist_distributed.bound_contributions(da.from_array(values, chunks=chunk), da.from_array(ids, chunks=chunk),
                                                     5, seed=3, split_every=3)
    assert on_dask == dpdist_distributed.bound_blocks([block[:2] for block in blocks], 5, seed=3)
    series = dd.from_pandas(__import__("pandas").DataFrame({"g": groups}), npartitions=1)["g"]
    with pytest.raises(InvalidParameterError, match="same blocks"):
        dpdist_distributed.bound_contributions(da.from_array(values, chunks=chunk), da.from_array(ids, chunks=chunk),
                                               5, groups=series)
    grouped = dpdist_distributed.bound_contributions(
        da.from_array(values, chunks=chunk), da.from_array(ids, chunks=chunk), 5,
        groups=da.from_array(groups, chunks=chunk), max_groups=2, seed=3)
    assert grouped == dpdist_distributed.bound_blocks(blocks, 5, max_groups=2, seed=3)
    released = on_dask.release(central.quantiles, [0.5], epsilon=1.0, bounds=(0, 1), rng=1)
    assert released.guarantee.unit == "person" and abs(released.values[0] - 0.5) < 0.05


def test_distributed_simulate_takes_a_dask_series_and_never_prints_a_repr():
    dd = pytest.importorskip("dask.dataframe")
    import pandas as pd

    from dpdist import distributed

    values = pd.Series(np.random.default_rng(0).integers(0, 8, 1_000), name="item")
    series = dd.from_pandas(values, npartitions=3)
    proto = local.make("grr", epsilon=1.0, domain_size=8)
    parts = [part.compute().to_numpy() for part in series.partitions]
    result = distributed.simulate(proto, series, seed=5)
    assert result == distributed.simulate_blocks(proto, parts, seed=5) and result.n == 1_000
    frame = dd.from_pandas(pd.DataFrame({"item": values, "secret": ["x" * 50] * 1_000}), npartitions=2)
    with pytest.raises(InvalidParameterError) as raised:
        distributed.simulate(proto, frame, seed=5)
    assert "DataFrame" in str(raised.value) and "xxxxx" not in str(raised.value) and len(str(raised.value)) < 300


def test_a_person_whose_id_is_1_in_one_partition_and_the_string_1_in_another_is_refused_on_the_cluster(client):
    """Partitions whose ids are an int64 1 and a str "1" were two persons,
    6 rows of one person kept at max_contributions=3; now refused by name when their states merge.  An int64 and
    a float64 partition stay one person (3 rows), as in one process."""
    import pandas as pd
    from dask import delayed

    from dpdist.errors import InvalidValueTypeError

    def _series(*parts, dtype):
        return dd.from_delayed([delayed(pd.Series)(part) for part in parts], meta=pd.Series(dtype=dtype),
                               verify_meta=False)

    values = _series(np.ones(4), np.ones(4), dtype=float)
    with pytest.raises(InvalidValueTypeError, match=r"'privacy_id' ids of the blocks must be of one kind.*int64, object of str"):
        dpdist_distributed.bound_contributions(values, _series(np.array([1] * 4), np.array(["1"] * 4), dtype=object),
                                               3, seed=3)
    kept = dpdist_distributed.bound_contributions(values, _series(np.array([1] * 4), np.array([1.0] * 4), dtype=float),
                                                  3, seed=3)
    assert np.unique(kept.hashes).size == 1 and kept.kept == 3
