"""The multi-attribute protocols deployed like every other: report files, saved states, merges,
Dask, and service campaigns whose estimate equals the one computed from the same reports locally."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from dpdist import io, local

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its test client; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

CATEGORICAL = [{"name": "a", "domain_size": 3}, {"name": "b", "labels": ["x", "y", "z", "w"]}]
CONFIGS = {
    "spl": {"protocol": "spl", "epsilon": 1.0, "attributes": CATEGORICAL + [{"name": "t", "bounds": [0.0, 1.0]}]},
    "smp": {"protocol": "smp", "epsilon": 1.0, "attributes": CATEGORICAL},
    "rsfd": {"protocol": "rsfd", "epsilon": 1.0, "attributes": CATEGORICAL},
    "calm": {"protocol": "calm", "epsilon": 1.0, "attributes": CATEGORICAL},
    "hdg": {"protocol": "hdg", "epsilon": 1.0, "g1": 4, "g2": 2,
            "attributes": [{"name": "u", "bounds": [0.0, 1.0]}, {"name": "v", "bounds": [0.0, 2.0]}]},
}


def _records(protocol, n=3000, seed=0):
    generator = np.random.default_rng(seed)
    columns = []
    for attribute in protocol.attributes:
        if attribute.categorical:
            columns.append(generator.integers(0, attribute.size, n))
        else:
            low, high = attribute.interval
            columns.append(generator.uniform(low, high, n))
    return np.column_stack(columns).astype(float)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_files_states_and_merges_keep_every_report(name, tmp_path):
    protocol = local.from_config(CONFIGS[name])
    reports = protocol.privatize(_records(protocol), rng=1)
    direct = protocol.aggregator().add(reports)
    for suffix in ("parquet", "bin"):
        path = tmp_path / f"reports.{suffix}"
        io.write_reports(path, protocol, reports)
        assert io.protocol_of_file(path).config() == protocol.config()
        from_file = protocol.aggregator().add_batch(io.read_reports(path, protocol))
        assert from_file.n == 3000 and np.array_equal(from_file.statistic, direct.statistic)
    io.save_state(tmp_path / "state.bin", direct)
    loaded = io.load_state(tmp_path / "state.bin", protocol, journal=False).aggregator
    merged = protocol.aggregator().add(reports[:1000]).merge(protocol.aggregator().add(reports[1000:]))
    assert np.array_equal(loaded.statistic, direct.statistic) and np.array_equal(merged.statistic, direct.statistic)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["smp", "hdg"])
def test_dask_aggregates_report_files_exactly(name, tmp_path):
    pytest.importorskip("dask.array")
    from dpdist.distributed import dask as distributed

    protocol = local.from_config(CONFIGS[name])
    reports = protocol.privatize(_records(protocol), rng=2)
    paths = []
    for index, part in enumerate((reports[:1200], reports[1200:])):
        paths.append(tmp_path / f"part{index}.parquet")
        io.write_reports(paths[-1], protocol, part)
    aggregated = distributed.aggregate_files([str(path) for path in paths], protocol)
    assert np.array_equal(aggregated.statistic, protocol.aggregator().add(reports).statistic)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["spl", "calm", "hdg"])
def test_a_service_campaign_estimates_what_the_reports_give_locally(name, tmp_path):
    from dpdist.serve import create_app
    from serve_support import ADMIN_TOKEN

    client = TestClient(create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, static_dir=tmp_path / "js"))
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    config = CONFIGS[name]
    assert client.post("/api/campaigns", json={"campaign": name, "config": config}, headers=admin).status_code == 201
    assert client.post(f"/api/campaigns/{name}/open", headers=admin).status_code == 200
    protocol = local.from_config(config)
    reports = protocol.privatize(_records(protocol), rng=3)
    body = {"reports": protocol.report_format.to_json_rows(reports)}
    assert client.put(f"/api/campaigns/{name}/batches/b1", json=body).json()["accepted"] == 3000
    assert client.put(f"/api/campaigns/{name}/batches/b1", json=body).json()["duplicate"]  # a retry counts once
    served = client.get(f"/api/campaigns/{name}/estimate", headers=admin).json()
    assert served["n"] == 3000
    expected = protocol.estimate(protocol.aggregator().add(reports)).to_dict()
    assert served["estimate"]["kind"] == expected["kind"]
    if expected["kind"] == "marginals":
        for got, want in zip(served["estimate"]["marginals"], expected["marginals"]):
            np.testing.assert_allclose(got["frequencies"], want["frequencies"], rtol=1e-12, atol=1e-15)
    else:  # one estimate per attribute, by name
        assert list(served["estimate"]["attributes"]) == list(expected["attributes"]) == ["a", "b", "t"]
        for attribute, want in expected["attributes"].items():
            got = served["estimate"]["attributes"][attribute]
            assert got["kind"] == want["kind"] and got["n"] == want["n"]
            if "frequencies" in want:
                np.testing.assert_allclose(got["frequencies"], want["frequencies"], rtol=1e-12, atol=1e-15)
    picture = client.get(f"/api/campaigns/{name}/estimate.png", headers=admin)
    assert picture.status_code == 200 and picture.content[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", ["spl", "calm", "hdg"])
def test_dpdist_campaign_estimate_prints_every_attribute_or_marginal(name):
    from dpdist.cli._estimate_text import estimate_lines
    from dpdist.serve._uncertainty import served_estimate

    protocol = local.from_config(CONFIGS[name])
    aggregate = protocol.simulate(_records(protocol), rng=5)
    document = served_estimate(protocol, aggregate, protocol.estimate(aggregate), level=0.95, width=None,
                               replicates=0, target_n=10_000, options={})
    lines = estimate_lines(document)
    if name == "spl":
        assert [line for line in lines if line.startswith("attribute ")] == ["attribute a:", "attribute b:", "attribute t:"]
        assert any(line.split()[0] == "z" for line in lines)  # labels, not item numbers
    else:
        marginals = [line for line in lines if line.startswith("marginal ")]
        assert len(marginals) == len(document["marginals"]) and "[" in lines[2]
