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
    with pytest.raises(InvalidParameterError, match="not both"):
        experiments.run_spec(spec, tmp_path / "x", progress=False, scheduler=client, jobs=2)
    with pytest.raises(InvalidParameterError, match="'scheduler'"):
        experiments.run_spec(spec, tmp_path / "y", progress=False, scheduler=3)


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
