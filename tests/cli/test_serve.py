"""``dpdist serve`` end to end over HTTP, on SQLite and on a throwaway PostgreSQL (the same tests).

Every test talks to a real server subprocess (uvicorn) through the real client
(httpx) or raw HTTP, and compares the campaign's aggregate with a one-process
aggregation of the same reports.
"""

from __future__ import annotations

import concurrent.futures
import json
import subprocess
import sys
import uuid
import zlib

import httpx
import numpy as np
from scipy.stats import beta as beta_law
import pytest

from dpdist import io, local
from dpdist.client import AdminClient, Client, json_rows
from dpdist.errors import ServiceRefusedError
import server_zygote
from serve_support import ADMIN_TOKEN, ServerProcess, admin_headers, postgres_available, shared_cluster

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8, "version": 1}
MAX_BODY = 1 << 20


@pytest.fixture(scope="module")
def postgres():
    """The process's PostgreSQL cluster (serve_support.shared_cluster: the tests' databases are each a new one in it)."""
    if not postgres_available():
        pytest.skip("PostgreSQL (initdb) is not installed; .ci/run installs the postgresql package")
    return shared_cluster()


# a dpdist serve subprocess per database: end to end, so every test that takes it is slow (the app in-process is
# tested in the fast loop by tests/serve/test_app.py and its neighbours, through Starlette's TestClient)
@pytest.fixture(scope="module", params=[pytest.param("sqlite", marks=pytest.mark.slow),
                                        pytest.param("postgresql", marks=pytest.mark.slow)])
def server(request, tmp_path_factory):
    if request.param == "sqlite":
        url = str(tmp_path_factory.mktemp("serve") / "campaigns.sqlite")
    else:
        url = request.getfixturevalue("postgres").new_database()
    process = ServerProcess(url, max_body_bytes=MAX_BODY).start()
    yield process
    process.stop()


@pytest.fixture
def admin(server):
    with AdminClient(server.url, admin_token=ADMIN_TOKEN, retries=2) as client:
        yield client


@pytest.fixture
def device(server):
    with Client(server.url, retries=2) as client:
        yield client


def new_campaign(admin, config=GRR, *, open_it=True, **options) -> str:
    name = "c-" + uuid.uuid4().hex[:10]
    admin.create_campaign(name, config, **options)
    if open_it:
        admin.open_campaign(name)
    return name


def one_process(config, batches):
    protocol = local.from_config(config)
    aggregator = protocol.aggregator()
    for reports in batches:
        aggregator.add(reports)
    return aggregator


def put(server, campaign, batch_id, body, content_type="application/octet-stream", headers=None):
    return httpx.put(
        f"{server.url}/api/campaigns/{campaign}/batches/{batch_id}",
        content=body,
        headers={"Content-Type": content_type, **(headers or {})},
        timeout=30,
    )


# ---------------------------------------------------------------------- the happy path
def test_submitted_batches_add_up_to_one_process_aggregation(server, admin, device):
    campaign = new_campaign(admin)
    protocol = device.protocol(campaign)
    rng = np.random.default_rng(1)
    batches = [protocol.privatize(rng.integers(0, 8, size), rng=rng) for size in (1000, 1, 2500)]
    acks = [device.submit_reports(campaign, protocol, reports) for reports in batches]
    assert [ack["accepted"] for ack in acks] == [1000, 1, 2500]
    summary = admin.campaign(campaign)
    expected = one_process(GRR, batches)
    assert summary["n"] == expected.n == 3501 and summary["batches"] == 3
    document = admin.estimate(campaign, postprocess="none")
    estimate = protocol.estimate(expected, postprocess="none")
    assert np.allclose(document["estimate"]["frequencies"], estimate.frequencies, rtol=0, atol=1e-12)
    low, high = estimate.confidence_interval(0.95)
    assert np.allclose(document["estimate"]["band"]["low"], low) and np.allclose(document["estimate"]["band"]["high"], high)
    assert document["n"] == 3501 and document["rejected"] == {}


@pytest.mark.slow
@pytest.mark.parametrize(
    "config",
    [
        {"protocol": "oue", "epsilon": 1.0, "domain_size": 1024},
        {"protocol": "olh", "epsilon": 2.0, "domain_size": 100},
        {"protocol": "sw", "epsilon": 1.0, "bins": 64},
        {"protocol": "hh", "epsilon": 1.0, "bins": 16},
        {"protocol": "sr", "epsilon": 1.0},
    ],
    ids=lambda c: c["protocol"],
)
def test_every_layout_ingests_as_binary_and_as_json(server, admin, device, config):
    campaign = new_campaign(admin, config)
    protocol = device.protocol(campaign)
    rng = np.random.default_rng(2)
    values = rng.integers(0, 16, 300) if protocol.tags.kind == "frequency" else rng.uniform(0, 1, 300)
    binary, as_json = protocol.privatize(values[:200], rng=rng), protocol.privatize(values[200:], rng=rng)
    device.submit_reports(campaign, protocol, binary)
    ack = device.submit_body(campaign, "json-1", json.dumps({"reports": json_rows(as_json)}).encode(), "application/json")
    assert ack["accepted"] == 100 and ack["rejected"] == {}
    expected = one_process(protocol.config(), [binary, as_json])
    assert admin.campaign(campaign)["n"] == expected.n == 300
    served = admin.estimate(campaign, replicates=0)["estimate"]  # no bootstrap: a fixed-n CDF band is random
    uncertainty = served.pop("uncertainty")
    display = served.pop("display", None)  # what the dashboard draws of a distribution: its figure's density
    assert (display is not None) == (served["kind"] == "distribution")
    anytime = [interval for interval in served["intervals"] if interval["anytime_valid"]]
    served["intervals"] = [interval for interval in served["intervals"] if not interval["anytime_valid"]]
    assert served == json.loads(protocol.estimate(expected).to_json(0.95))
    assert anytime and uncertainty["sequence_unavailable"] is None  # every layout here has a confidence sequence


# ---------------------------------------------------------------------- exactly once
def test_a_retried_batch_counts_once_and_identical_bytes_under_two_ids_count_twice(server, admin, device):
    campaign = new_campaign(admin)
    protocol = device.protocol(campaign)
    reports = protocol.privatize(np.arange(8).repeat(10), rng=3)
    body = io.encode_record(protocol, reports)
    first = device.submit_body(campaign, "batch-a", body)
    again = device.submit_body(campaign, "batch-a", body)
    other = device.submit_body(campaign, "batch-b", body)
    assert first["duplicate"] is False and again["duplicate"] is True and other["duplicate"] is False
    assert again["accepted"] == first["accepted"] == 80
    assert admin.campaign(campaign)["n"] == 160
    with pytest.raises(ServiceRefusedError) as refused:
        device.submit_body(campaign, "batch-a", io.encode_record(protocol, reports[:5]))
    assert refused.value.status == 409 and refused.value.code == "batch_id_reused"
    assert admin.campaign(campaign)["n"] == 160


def test_a_report_file_is_one_batch_under_its_file_id(server, admin, device, tmp_path):
    campaign = new_campaign(admin)
    protocol = device.protocol(campaign)
    path = tmp_path / "day1.bin"
    io.write_reports(path, protocol, protocol.privatize(np.zeros(50, int), rng=4))
    assert device.submit_file(campaign, path)[0]["duplicate"] is False
    assert device.submit_file(campaign, path)[0]["duplicate"] is True
    (file_id,) = [key.split(":")[1] for key in io.file_identities(path)]
    response = httpx.post(f"{server.url}/api/campaigns/{campaign}/batches", content=path.read_bytes(),
                          headers={"Content-Type": "application/octet-stream"})
    assert response.status_code == 200 and response.json()["batch_id"] == file_id and response.json()["duplicate"]
    mismatch = put(server, campaign, "0" * 32, path.read_bytes())
    assert mismatch.status_code == 400 and mismatch.json()["error"] == "batch_id_mismatch"
    assert admin.campaign(campaign)["n"] == 50


# ---------------------------------------------------------------------- bad input, counted
def test_malformed_rows_are_rejected_by_reason_and_valid_rows_kept(server, admin, device):
    campaign = new_campaign(admin)
    rows = [0, 1, 7, 8, 300, -1, None, "x", [1], 2.5, True, 3]
    ack = device.submit_body(campaign, "mixed", json.dumps({"reports": rows}).encode(), "application/json")
    assert ack["accepted"] == 4 and ack["n_read"] == 12  # 0, 1, 7 and 3 (True is not an integer report)
    assert ack["rejected"] == {"missing": 1, "wrong_shape": 1, "out_of_range": 6}
    summary = admin.campaign(campaign)
    assert summary["n"] == 4 and summary["rejected"] == ack["rejected"]


def test_binary_rows_out_of_range_are_counted_and_the_rest_kept(server, admin, device):
    campaign = new_campaign(admin)
    protocol = device.protocol(campaign)
    wide = np.array([0, 1, 2, 8, 255, 3], dtype=np.uint8)  # 8 and 255 are outside GRR's d = 8
    payload = wide.tobytes()
    header = json.dumps({"config": protocol.config(), "dtype": "|u1", "shape": [6], "payload_bytes": 6,
                         "crc32": zlib.crc32(payload)}, sort_keys=True).encode()
    import struct

    record = struct.pack("<8sHI", b"DPDISTR\n", 1, len(header)) + header + payload
    ack = put(server, campaign, "wide", record).json()
    assert ack["accepted"] == 4 and ack["rejected"] == {"out_of_range": 2}


def test_reports_of_another_campaign_are_rejected_as_other_config(server, admin, device):
    campaign = new_campaign(admin)
    other = local.make("grr", epsilon=2.0, domain_size=8)
    ack = device.submit_reports(campaign, other, other.privatize(np.zeros(20, int), rng=5))
    assert ack["accepted"] == 0 and ack["rejected"] == {"other_config": 20}
    ack = device.submit_body(campaign, "j", json.dumps({"reports": [1, 2], "config": other.config()}).encode(), "application/json")
    assert ack["rejected"] == {"other_config": 2}
    assert admin.campaign(campaign)["rejected"] == {"other_config": 22}


def test_truncated_bitflipped_and_oversized_batches_are_refused_and_counted(server, admin, device):
    campaign = new_campaign(admin)
    protocol = device.protocol(campaign)
    body = io.encode_record(protocol, protocol.privatize(np.arange(8).repeat(100), rng=6))
    truncated = put(server, campaign, "t", body[:-10])
    assert truncated.status_code == 400 and truncated.json()["error"] == "malformed_batch"
    rng = np.random.default_rng(7)
    flipped_refused = 0
    for trial in range(20):
        damaged = bytearray(body)
        position = int(rng.integers(len(body) - 800, len(body)))  # in the payload: the CRC-32 must catch it
        damaged[position] ^= 1 << int(rng.integers(0, 8))
        response = put(server, campaign, f"f{trial}", bytes(damaged))
        assert response.status_code == 400 and "CRC-32" in response.json()["detail"]
        flipped_refused += 1
    garbage = put(server, campaign, "g", b"not a record at all")
    assert garbage.status_code == 400
    oversized = put(server, campaign, "big", b"\0" * (MAX_BODY + 1))
    assert oversized.status_code == 413 and oversized.json()["error"] == "too_large"
    bad_json = put(server, campaign, "bj", b"{", "application/json")
    assert bad_json.status_code == 400
    summary = admin.campaign(campaign)
    assert summary["n"] == 0 and summary["batches"] == 0
    assert summary["refused_batches"] == {"malformed_batch": 1 + flipped_refused + 2, "too_large": 1}
    # the intact batch still goes in under a batch id a refused attempt used
    assert put(server, campaign, "t", body).json()["accepted"] == 800


def test_unknown_closed_and_unopened_campaigns_refuse_reports(server, admin):
    protocol = local.from_config(GRR)
    body = io.encode_record(protocol, protocol.privatize([1, 2], rng=8))
    unknown = put(server, "no-such-campaign", "x", body)
    assert unknown.status_code == 404 and unknown.json()["error"] == "unknown_campaign"
    created = new_campaign(admin, open_it=False)
    assert put(server, created, "x", body).json()["error"] == "campaign_not_open"
    campaign = new_campaign(admin)
    assert put(server, campaign, "before", body).status_code == 200
    admin.close_campaign(campaign)
    closed = put(server, campaign, "after", body)
    assert closed.status_code == 409 and closed.json()["error"] == "campaign_closed"
    retry = put(server, campaign, "before", body)  # an acknowledged batch keeps its answer
    assert retry.status_code == 200 and retry.json()["duplicate"] is True
    assert admin.campaign(campaign)["n"] == 2


def test_tokens(server, admin):
    wrong = httpx.get(f"{server.url}/api/campaigns", headers={"Authorization": "Bearer wrong-token-wrong-token"})
    assert wrong.status_code == 401 and wrong.json()["error"] == "unauthorized"
    assert httpx.get(f"{server.url}/api/campaigns").status_code == 401
    assert httpx.post(f"{server.url}/api/campaigns", json={"campaign": "x", "config": GRR}).status_code == 401
    campaign = new_campaign(admin, submit_token="device-secret-0123456789")
    protocol = local.from_config(GRR)
    body = io.encode_record(protocol, protocol.privatize([1], rng=9))
    assert put(server, campaign, "a", body).status_code == 401
    assert put(server, campaign, "a", body, headers={"Authorization": "Bearer device-secret-012345678X"}).status_code == 401
    assert put(server, campaign, "a", body, headers={"Authorization": "Bearer device-secret-0123456789"}).status_code == 200
    public = httpx.get(f"{server.url}/api/campaigns/{campaign}/config").json()
    assert public["submit_token_required"] is True and "submit_token_sha256" not in json.dumps(public)


def test_concurrent_creates_of_one_id_make_exactly_one_campaign(server, admin):
    name = "race-" + uuid.uuid4().hex[:8]

    def create(_):
        return httpx.post(f"{server.url}/api/campaigns", json={"campaign": name, "config": GRR}, headers=admin_headers(), timeout=30).status_code

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        statuses = sorted(pool.map(create, range(16)))
    assert statuses.count(201) == 1 and statuses.count(409) == 15


def test_the_config_is_frozen_once_the_campaign_is_open(server, admin):
    campaign = new_campaign(admin, open_it=False)
    changed = admin.set_config(campaign, {"protocol": "oue", "epsilon": 0.5, "domain_size": 16})
    assert changed["config"]["protocol"] == "oue"
    admin.open_campaign(campaign)
    with pytest.raises(ServiceRefusedError) as refused:
        admin.set_config(campaign, GRR)
    assert refused.value.code == "config_frozen"
    for bad in ({"protocol": "nope"}, {"protocol": "grr", "epsilon": -1, "domain_size": 8}, "grr"):
        response = httpx.post(f"{server.url}/api/campaigns", json={"campaign": "bad-" + uuid.uuid4().hex[:6], "config": bad},
                              headers=admin_headers())
        assert response.status_code == 400 and response.json()["error"] == "invalid_config"
    response = httpx.post(f"{server.url}/api/campaigns", json={"campaign": "Bad Name", "config": GRR}, headers=admin_headers())
    assert response.status_code == 400 and response.json()["error"] == "invalid_campaign_id"


# ---------------------------------------------------------------------- estimates, export
def test_estimate_options_plot_and_history(server, admin, device):
    campaign = new_campaign(admin)
    assert admin.estimate(campaign)["estimate"] is None
    protocol = device.protocol(campaign)
    device.submit_reports(campaign, protocol, protocol.privatize(np.arange(8).repeat(50), rng=10))
    none = admin.estimate(campaign, postprocess="none", level=0.9)
    projected = admin.estimate(campaign, postprocess="norm-sub")
    assert none["estimate"]["band"]["level"] == 0.9 and projected["options"] == {"postprocess": "norm-sub"}
    assert abs(sum(projected["estimate"]["frequencies"]) - 1) < 1e-9
    with pytest.raises(ServiceRefusedError) as refused:
        admin.estimate(campaign, no_such_option=1)
    assert refused.value.status == 400 and refused.value.code == "invalid_option"
    png = admin.estimate_png(campaign)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    history = admin.history(campaign)
    assert history[-1]["n"] == 400 and history[-1]["batches"] == 1


def test_numerical_estimate_json(server, admin, device):
    campaign = new_campaign(admin, {"protocol": "sw", "epsilon": 2.0, "bins": 32})
    device.submit_values(campaign, np.random.default_rng(11).beta(2, 5, 2000), batch_size=700)
    document = admin.estimate(campaign)
    assert document["n"] == 2000 and document["batches"] == 3
    estimate = document["estimate"]
    assert estimate["kind"] == "distribution"
    assert abs(sum(estimate["probabilities"]) - 1) < 1e-9 and len(estimate["edges"]) == 33
    # a band (it was null), and the confidence sequence with quantile and mean intervals
    band = estimate["band"]
    assert len(band["edges"]) == 33 and all(low <= high for low, high in zip(band["simultaneous_lower"], band["simultaneous_upper"]))
    kinds = {(i["quantity"], i["simultaneous"], i["anytime_valid"]): i for i in estimate["intervals"]}
    assert {("cdf", True, False), ("quantile", False, False), ("mean", False, False)} <= set(kinds)  # fixed-n
    cdf, mean = kinds[("cdf", True, True)], kinds[("mean", True, True)]  # anytime
    truth = beta_law(2, 5).cdf(np.array(cdf["at"]))
    assert np.all((np.array(cdf["low"]) <= truth) & (truth <= np.array(cdf["high"])))
    assert mean["low"] <= 2 / 7 <= mean["high"] and kinds[("quantile", True, True)]["at"] == [0.1, 0.25, 0.5, 0.75, 0.9]
    assert estimate["uncertainty"]["sequence_unavailable"] is None


@pytest.mark.slow
def test_the_cli_the_api_and_the_client_show_one_interval_of_a_campaign_state(server, admin, device, capsys, monkeypatch):
    """Against a real server: ``dpdist campaign estimate`` (text and --json), the API without a query
    (the dashboard's request) and the Python client give the same fixed-n interval of the mean."""
    from dpdist.cli import main

    campaign = new_campaign(admin, {"protocol": "sw", "epsilon": 2.0, "bins": 32, "bounds": [0.0, 200_000.0]})
    device.submit_values(campaign, np.clip(np.random.default_rng(12).lognormal(11.0, 0.6, 3000), 0, 200_000))
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN_TOKEN)

    def cli(*args):
        code = main(["campaign", "estimate", "--server", server.url, campaign, *args])
        out, err = capsys.readouterr()
        assert code == 0, err
        return out

    def mean_interval(document):
        mean = next(i for i in document["estimate"]["intervals"] if i["quantity"] == "mean" and not i["anytime_valid"])
        return mean["low"], mean["high"]

    api = httpx.get(f"{server.url}/api/campaigns/{campaign}/estimate", headers=admin_headers(), timeout=60).json()
    views = [mean_interval(api), mean_interval(admin.estimate(campaign)), mean_interval(json.loads(cli("--json")))]
    assert len(set(views)) == 1, views
    low, high = views[0]
    row = next(line.split() for line in cli().splitlines() if line.split()[:1] == ["mean"])
    assert " ".join(row[2:4]) == f"[{low:.4g}, {high:.4g}]"


def test_export_round_trips_the_kept_reports(server, admin, device, tmp_path):
    campaign = new_campaign(admin, keep_reports=True)
    protocol = device.protocol(campaign)
    batches = [protocol.privatize(np.arange(8).repeat(k), rng=k) for k in (3, 5)]
    for reports in batches:
        device.submit_reports(campaign, protocol, reports)
    device.submit_body(campaign, "j", json.dumps({"reports": [1, 99]}).encode(), "application/json")
    for name in ("export.bin", "export.parquet"):
        count = admin.export(campaign, tmp_path / name)
        assert count == 65
        batch = io.read_reports(tmp_path / name, protocol)
        assert batch.add_to(protocol.aggregator()) == one_process(GRR, [*batches, np.array([1])])
    assert io.file_identities(tmp_path / "export.bin") == io.file_identities(tmp_path / "export.parquet")
    plain = new_campaign(admin)
    with pytest.raises(ServiceRefusedError) as refused:
        admin.export(plain, tmp_path / "none.bin")
    assert refused.value.code == "reports_not_kept"


@pytest.mark.slow
def test_restart_keeps_everything(server, admin, device):
    campaign = new_campaign(admin)
    protocol = device.protocol(campaign)
    body = io.encode_record(protocol, protocol.privatize(np.arange(8).repeat(7), rng=12))
    device.submit_body(campaign, "keep-me", body)
    before = admin.estimate(campaign)
    server.kill()
    server.start()
    assert admin.estimate(campaign) == before
    assert device.submit_body(campaign, "keep-me", body)["duplicate"] is True
    with pytest.raises(ServiceRefusedError):
        device.submit_body(campaign, "keep-me", io.encode_record(protocol, np.array([0], np.uint8)))
    assert admin.campaign(campaign)["n"] == 56


# ---------------------------------------------------------------------- the published surface
def test_openapi_lists_every_route(server, tmp_path):
    schema = httpx.get(f"{server.url}/openapi.json").json()
    assert schema["openapi"].startswith("3.")
    from dpdist.serve import create_app

    app = create_app(str(tmp_path / "other.sqlite"), admin_token=ADMIN_TOKEN)
    paths = {route.path for route in app.routes if hasattr(route, "methods")}
    assert paths - {"/"} <= set(schema["paths"])


def test_unknown_routes_and_methods_answer_json(server):
    missing = httpx.get(f"{server.url}/nothing-here")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"
    wrong = httpx.delete(f"{server.url}/api/campaigns")
    assert wrong.status_code == 405 and "error" in wrong.json()


def _in_process(capsys):
    """``run(*arguments)``: the ``dpdist`` command in this process (the server is the real subprocess; a command's own
    process added its start only), its exit status, standard output and error as ``subprocess.run`` gives them."""
    from dpdist.cli import main

    def run(*arguments: str) -> subprocess.CompletedProcess:
        code = main(list(arguments))
        out, err = capsys.readouterr()
        return subprocess.CompletedProcess(["dpdist", *arguments], code, out, err)

    return run


@pytest.mark.slow
def test_cli_campaign_and_submit(server, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN_TOKEN)
    name = "cli-" + uuid.uuid4().hex[:8]
    run = _in_process(capsys)

    created = run("campaign", "create", "--server", server.url, "--config", json.dumps(GRR), "--name", name, "--open")
    assert created.returncode == 0, created.stderr
    data = tmp_path / "data.csv"
    data.write_text("minutes\n" + "\n".join(str(i % 8) for i in range(2500)) + "\n")
    submitted = run("submit", "--server", server.url, "--campaign", name, str(data), "--column", "minutes", "--batch-size", "1000")
    assert submitted.returncode == 0, submitted.stderr
    assert "3 batch(es) acknowledged, 2500 report(s) accepted" in submitted.stdout
    estimated = run("campaign", "estimate", "--server", server.url, name, "--json", "--plot", str(tmp_path / "e.png"))
    assert estimated.returncode == 0, estimated.stderr
    assert json.loads(estimated.stdout)["n"] == 2500 and (tmp_path / "e.png").read_bytes().startswith(b"\x89PNG")
    closed = run("campaign", "close", "--server", server.url, name)
    assert closed.returncode == 0 and "closed" in closed.stdout
    # the same command again resends the journal's batches: all counted already, nothing more
    again = run("submit", "--server", server.url, "--campaign", name, str(data), "--column", "minutes", "--retries", "0")
    assert again.returncode == 0 and "3 batch(es) of 2500 report(s) had already been counted" in again.stdout
    later = tmp_path / "later.csv"  # new rows for a closed campaign are refused
    later.write_text("minutes\n1\n2\n")
    refused = run("submit", "--server", server.url, "--campaign", name, str(later), "--column", "minutes", "--retries", "0")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert refused.stderr.count("\n") == 1 and "campaign_closed" in refused.stderr
    unknown = run("campaign", "estimate", "--server", server.url, "no-such-one")
    assert unknown.returncode == 2 and "unknown_campaign" in unknown.stderr and "Traceback" not in unknown.stderr


def test_cli_submit_with_a_memo_reports_rounds_as_one_device(server, admin, tmp_path, capsys):
    """Two rounds (two campaigns of one l-grr config) from one device: one memo, both rounds counted."""
    from dpdist.cli import main

    config = {"protocol": "l-grr", "epsilon": 4.0, "epsilon_1": 1.0, "domain_size": 8, "version": 1}
    rounds = [new_campaign(admin, config) for _ in range(2)]
    data, memo = tmp_path / "today.csv", tmp_path / "device.json"
    data.write_text("value\n5\n")
    saved = []
    for campaign in rounds:
        assert main(["submit", "--server", server.url, "--campaign", campaign, str(data), "--column", "value",
                     "--memo", str(memo)]) == 0
        assert "1 report(s) accepted" in capsys.readouterr().out
        (stream,) = json.loads(memo.read_text())["streams"].values()
        saved.append(stream)
    # one memo (the scope is the server and the config without budgets), charged once per report
    assert saved[0]["memo"] == saved[1]["memo"] == {"5": saved[0]["memo"]["5"]}
    assert [stream["reports"] for stream in saved] == [1, 2] and saved[1]["collector"] == server.url
    assert [admin.estimate(campaign)["n"] for campaign in rounds] == [1, 1]

    assert main(["submit", "--server", server.url, "--campaign", rounds[0], str(data), "--column", "value"]) == 0
    assert "each row is randomized as a different user of l-grr" in capsys.readouterr().err
    refused = main(["submit", "--server", server.url, "--campaign", rounds[0], str(data), "--reports", "--memo", str(memo)])
    assert refused == 2 and "'--memo' option" in capsys.readouterr().err


def test_submit_of_report_files_says_what_stays_counted_when_a_later_file_or_part_fails(
        server, admin, tmp_path, monkeypatch, capsys):
    """A later file refused (here: as its part would be, larger than the campaign's batches), or a later part of one
    file, left the user unaware of what was counted before (the parts of the file that
    failed were left out, and a re-run's note called batches counted before "0 accepted report(s)"): the command
    says what this run counted and what was counted already, and a second run counts each part once."""
    import dpdist.client._device
    from dpdist.cli import main

    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8, "version": 1}
    campaign = new_campaign(admin, config)
    protocol = local.from_config(config)
    first, second = tmp_path / "first.bin", tmp_path / "second.bin"
    io.write_reports(first, protocol, protocol.privatize(np.arange(30) % 8, rng=1))
    io.write_reports(second, protocol, protocol.privatize(np.arange(20) % 8, rng=2))
    original = Client.submit_file_parts

    def refuses_the_second(self, campaign_id, path, *args, **kwargs):
        if str(path).endswith("second.bin"):
            raise ServiceRefusedError("refused for the test", status=413, code="too_many_rows")
        return original(self, campaign_id, path, *args, **kwargs)

    monkeypatch.setattr(Client, "submit_file_parts", refuses_the_second)
    argv = ["submit", "--server", server.url, "--campaign", campaign, "--reports", str(first), str(second)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "1 batch(es) of 30 accepted report(s) were counted by this run before this failure and stay counted;" in err
    assert "a report file keeps its file id" in err and "refused for the test" in err
    assert main(argv) == 2  # the same refusal: what an earlier run counted is said as such
    err = capsys.readouterr().err
    assert ("0 batch(es) of 0 accepted report(s) were counted by this run before this failure and stay counted (1 "
            "batch(es) of 30 report(s) had been counted already)") in err
    assert "is refused again unless what refused it changed" in err  # not "once it is mended"
    monkeypatch.setattr(Client, "submit_file_parts", original)
    assert main(argv) == 0
    assert "1 batch(es) of 30 report(s) had already been counted" in capsys.readouterr().out
    assert admin.estimate(campaign)["n"] == 50
    # one file in parts (8 reports each), its third part refused: the two counted before are said
    monkeypatch.setattr(dpdist.client._device, "FILE_PART_BYTES", 8, raising=False)
    parts = tmp_path / "parts.bin"
    io.write_reports(parts, protocol, protocol.privatize(np.arange(40) % 8, rng=3))
    sent, submit_reports = [], Client.submit_reports

    def refuses_the_third(self, *args, **kwargs):
        if len(sent) == 2:
            raise ServiceRefusedError("refused for the test", status=409, code="campaign_full")
        sent.append(1)
        return submit_reports(self, *args, **kwargs)

    monkeypatch.setattr(Client, "submit_reports", refuses_the_third)
    assert main(["submit", "--server", server.url, "--campaign", campaign, "--reports", str(parts)]) == 2
    assert "2 batch(es) of 16 accepted report(s) were counted by this run" in capsys.readouterr().err
    assert admin.estimate(campaign)["n"] == 66


@pytest.mark.parametrize("suffix", [".bin", ".parquet"])
def test_a_report_file_over_the_body_limit_is_sent_in_parts_each_counted_once(server, admin, device, tmp_path, monkeypatch, capsys, suffix):
    """A file larger than one request may carry (this server: 1 MiB) used to be refused with 413 and could not
    be submitted at all. Its parts are fixed by the file, so a re-run after a failure counts each part once."""
    import dpdist.client._device

    monkeypatch.setattr(dpdist.client._device, "FILE_PART_BYTES", 256 << 10, raising=False)  # 2048 OUE reports per part
    config = {"protocol": "oue", "epsilon": 1.0, "domain_size": 1024, "version": 1}
    campaign = new_campaign(admin, config)
    protocol = local.from_config(config)
    reports = protocol.privatize(np.arange(10_000) % 1024, rng=5)  # 1.28 MB of reports
    path = tmp_path / f"day1{suffix}"
    io.write_reports(path, protocol, reports)

    # the run dies after two parts were acknowledged; the re-run sends all five, two of them already counted
    sent, original = [], Client.submit_body

    def dies_after_two(self, campaign_id, batch_id, body, *args, **kwargs):
        if len(sent) == 2:
            raise ConnectionError("killed")
        sent.append(batch_id)
        return original(self, campaign_id, batch_id, body, *args, **kwargs)

    monkeypatch.setattr(Client, "submit_body", dies_after_two)
    with pytest.raises(ConnectionError):
        device.submit_file(campaign, path)
    monkeypatch.setattr(Client, "submit_body", original)
    acks = device.submit_file(campaign, path)
    assert [ack["duplicate"] for ack in acks] == [True, True, False, False, False]
    assert [ack["batch_id"] for ack in acks[:2]] == sent
    assert all(ack["duplicate"] for ack in device.submit_file(campaign, path))
    # the command's summary does not call the reports of batches counted before "accepted" (it said 10000)
    from dpdist.cli import main

    assert main(["submit", "--server", server.url, "--campaign", campaign, "--reports", str(path)]) == 0
    assert ("5 batch(es) acknowledged, 0 report(s) accepted; 5 batch(es) of 10000 report(s) had already been "
            "counted") in capsys.readouterr().out
    state = admin.campaign(campaign)
    assert state["n"] == 10_000 and state["batches"] == 5
    # the campaign's aggregate is the one-process aggregate of the file (its estimate, bit for bit)
    estimate = admin.estimate(campaign)["estimate"]["frequencies"]
    np.testing.assert_array_equal(estimate, protocol.estimate(one_process(config, [reports])).frequencies)


def test_cli_submit_checks_every_value_before_the_first_batch_is_sent(server, admin, tmp_path, capsys):
    """A bad row in a later batch used to stop the run after the earlier batches were counted, so
    re-running the corrected file counted them twice (and spent their privacy twice)."""
    from dpdist.cli import main

    campaign = new_campaign(admin)
    data = tmp_path / "data.csv"
    data.write_text("value\n" + "\n".join(["3"] * 80 + ["500"] + ["4"] * 19) + "\n")
    refused = main(["submit", "--server", server.url, "--campaign", campaign, str(data), "--column", "value",
                    "--batch-size", "50"])
    err = capsys.readouterr().err  # the bad row (in the second batch) is named by its place, never by its value
    assert refused == 2 and "the first at position 80" in err and "500" not in err
    assert admin.estimate(campaign)["n"] == 0
    # empty cells are refused before anything is sent, or left out with --missing drop, as by `dpdist privatize`,
    # and the run says how many (it did not)
    data.write_text("value,other\n1,a\n,b\n3,c\n")
    assert main(["submit", "--server", server.url, "--campaign", campaign, str(data), "--column", "value"]) == 2
    assert "has 1 missing value(s) (empty cells)" in capsys.readouterr().err and admin.estimate(campaign)["n"] == 0
    assert main(["submit", "--server", server.url, "--campaign", campaign, str(data), "--column", "value",
                 "--missing", "drop"]) == 0
    out, err = capsys.readouterr()
    assert "2 report(s) accepted" in out and "1 row(s) of" in err and "with a missing cell left out" in err


def test_cli_submit_says_which_batches_stay_counted_when_it_fails_midway(server, admin, tmp_path, monkeypatch, capsys):
    """After a failure the user learns what stays counted, and running the command again sends only the rest once."""
    from dpdist.cli import main
    from dpdist.errors import ServiceUnavailableError

    campaign = new_campaign(admin)
    data = tmp_path / "data.csv"
    data.write_text("value\n" + "\n".join(["3"] * 120) + "\n")
    original, calls = Client.submit_body, []

    def unreachable_after_two(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise ServiceUnavailableError("PUT ... failed after 9 attempt(s): ConnectError")
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Client, "submit_body", unreachable_after_two)
    argv = ["submit", "--server", server.url, "--campaign", campaign, str(data), "--column", "value", "--batch-size", "50"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "2 batch(es) of 100 accepted report(s) were counted before the service stopped answering" in err
    assert "ConnectError" in err
    assert "run the same command again" in err
    assert admin.estimate(campaign)["n"] == 100
    assert main(argv) == 0  # the journal's batches are resent, the counted ones count once
    out = capsys.readouterr()
    assert "resuming from the journal" in out.err and "2 batch(es) of 100 report(s) had already been counted" in out.out
    assert admin.estimate(campaign)["n"] == 120


@pytest.mark.slow  # three dpdist submit subprocesses, one SIGKILLed (6 CPU-s)
def test_cli_submit_killed_midway_and_run_again_counts_every_row_once(server, admin, tmp_path):
    """A SIGKILL after some batches, then the same command: every row counted exactly once.

    Before the journal, a re-run randomized every row again and counted 38,000-50,000 of 50,000 reports twice.
    """
    import signal
    import time

    from crash_hooks import command

    campaign = new_campaign(admin)
    data = tmp_path / "data.csv"
    data.write_text("value\n" + "\n".join(str(i % 8) for i in range(5000)) + "\n")
    arguments = ["submit", "--server", server.url, "--campaign", campaign, str(data), "--column", "value", "--batch-size", "500"]
    argv = [sys.executable, "-m", "dpdist.cli", *arguments]
    # a liveness bound, not a speed target: on a loaded 2-core machine the CLI start and four batches took over 60 s
    process = subprocess.Popen(command(*arguments, pause_after_batches=(4, 300)), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    deadline = time.monotonic() + 240
    try:
        while not (_has_reports(admin, campaign) and admin.estimate(campaign)["n"] >= 2000):
            assert time.monotonic() < deadline and process.poll() is None, "the submit never reached its 4th batch"
            time.sleep(0.1)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert admin.estimate(campaign)["n"] == 2000
    rerun = server_zygote.run(argv, timeout=120)
    assert rerun.returncode == 0, rerun.stderr
    assert "resuming from the journal" in rerun.stderr
    assert admin.estimate(campaign)["n"] == 5000
    again = server_zygote.run(argv, timeout=120)  # a third run counts nothing more
    assert again.returncode == 0 and "10 batch(es) of 5000 report(s) had already been counted" in again.stdout
    assert admin.estimate(campaign)["n"] == 5000


def _has_reports(admin, campaign) -> bool:
    try:
        return admin.estimate(campaign)["n"] > 0
    except ServiceRefusedError:  # no report yet: nothing to estimate
        return False


def test_cli_submit_columns_of_a_multi_attribute_campaign(server, admin, tmp_path, capsys):
    """``dpdist submit --columns``: one record per row, rows with a missing cell (``--missing drop``) or an unknown label
    skipped."""
    from dpdist.cli import main

    schema = [{"name": "sex", "labels": ["f", "m"]}, {"name": "age", "bounds": [0, 100]}]
    campaign = new_campaign(admin, {"protocol": "smp", "epsilon": 2.0, "attributes": schema, "version": 1})
    data = tmp_path / "people.csv"
    rows = [f"{'fm'[i % 2]},{20 + i % 50}" for i in range(600)] + ["f,", "x,30", "m,130"]
    data.write_text("s,a\n" + "\n".join(rows) + "\n")
    assert main(["submit", "--server", server.url, "--campaign", campaign, str(data), "--columns", "s,a",
                 "--missing", "drop"]) == 0
    captured = capsys.readouterr()
    assert "601 report(s) accepted" in captured.out
    assert "with a missing cell left out" in captured.err and "label outside" in captured.err
    assert admin.estimate(campaign)["n"] == 601
    assert main(["submit", "--server", server.url, "--campaign", campaign, str(data), "--column", "s"]) == 2
    assert "name their columns with '--columns C1,C2,...'" in capsys.readouterr().err


def test_cli_submit_reads_the_submit_token_from_the_environment(server, admin, tmp_path, capsys, monkeypatch):
    from dpdist.cli import main

    campaign = new_campaign(admin, submit_token="device-secret-0123456789")
    data = tmp_path / "v.csv"
    data.write_text("value\n1\n2\n")
    argv = ["submit", "--server", server.url, "--campaign", campaign, str(data), "--column", "value", "--retries", "0"]
    monkeypatch.delenv("DPDIST_SUBMIT_TOKEN", raising=False)
    assert main(argv) == 2 and "token" in capsys.readouterr().err
    monkeypatch.setenv("DPDIST_SUBMIT_TOKEN", "device-secret-0123456789")
    assert main(argv) == 0 and "2 report(s) accepted" in capsys.readouterr().out


@pytest.mark.slow
def test_cli_heavy_hitter_campaign_over_words(server, tmp_path, capsys, monkeypatch):
    """A `pem` campaign end to end: words randomized by `dpdist submit`, the words found printed."""
    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN_TOKEN)
    name = "words-" + uuid.uuid4().hex[:8]
    config = {"protocol": "pem", "epsilon": 4.0, "alphabet": "abcdefghijklmnopqrstuvwxyz", "max_chars": 6, "k": 2,
              "hash_count": 256}
    run = _in_process(capsys)

    assert run("campaign", "create", "--server", server.url, "--config", json.dumps(config), "--name", name, "--open").returncode == 0
    rng = np.random.default_rng(4)
    words = rng.choice(["apple", "banana", "kiwi", "fig", "plum", "pear", "lime", "date"], size=20_000,
                       p=[0.4, 0.3, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05])
    data = tmp_path / "words.csv"
    data.write_text("word\n" + "\n".join(words) + "\n")
    submitted = run("submit", "--server", server.url, "--campaign", name, str(data), "--column", "word")
    assert submitted.returncode == 0 and "20000 report(s) accepted" in submitted.stdout, submitted.stderr
    estimated = run("campaign", "estimate", "--server", server.url, name)
    assert estimated.returncode == 0, estimated.stderr
    lines = estimated.stdout.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[:2] == ["value", "estimate"])
    printed = [line.split()[0] for line in lines[header + 1:header + 3]]
    assert printed == ["apple", "banana"] and lines[header + 3].endswith("clipped to [0, 1], what a share can be)")
    assert "fixed-n intervals hold for all" in lines[header + 4]


@pytest.mark.slow
def test_tokens_never_reach_the_log(tmp_path):
    log = tmp_path / "server.log"
    process = ServerProcess(str(tmp_path / "c.sqlite"), log_path=log, log_level="debug").start()
    try:
        with AdminClient(process.url, admin_token=ADMIN_TOKEN) as admin:
            admin.create_campaign("logged", GRR, submit_token="device-secret-0123456789")
            admin.open_campaign("logged")
            admin.estimate("logged")
        protocol = local.from_config(GRR)
        body = io.encode_record(protocol, protocol.privatize([1, 2], rng=1))
        with Client(process.url, submit_token="device-secret-0123456789") as device:
            device.submit_body("logged", "b1", body)
        httpx.get(f"{process.url}/api/campaigns", headers={"Authorization": "Bearer wrong-guess-of-a-token"})
    finally:
        process.stop()
    text = log.read_text()
    assert "PUT /api/campaigns/{campaign}/batches/{batch_id} " in text  # the access log is on, of route templates
    for secret in (ADMIN_TOKEN, "device-secret-0123456789", "wrong-guess-of-a-token"):
        assert secret not in text


def test_cli_creates_a_campaign_of_rounds_and_refuses_options_that_do_not_apply(server, admin, capsys, monkeypatch):
    """``campaign create --rounds PLAN``: the service's campaign of adaptive quantile rounds from the command line."""
    from dpdist.cli import main

    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN_TOKEN)
    name = "r-" + uuid.uuid4().hex[:8]
    plan = {"q": [0.5], "epsilon": 2.0, "bounds": [0.0, 1.0], "rounds": 2, "grid_size": 64, "reports": 200}
    assert main(["campaign", "create", "--server", server.url, "--name", name, "--rounds", json.dumps(plan), "--open"]) == 0
    assert f"campaign {name}: open, adaptive quantile rounds" in capsys.readouterr().out
    rounds = admin.rounds(name)
    assert rounds["round"] == 1 and rounds["rounds"][0]["campaign"] == f"{name}-r1", rounds

    capsys.readouterr()
    refused = main(["campaign", "create", "--server", server.url, "--name", name + "x", "--rounds", json.dumps(plan),
                    "--max-reports", "10"])
    err = capsys.readouterr().err
    assert refused == 2 and err.count("\n") == 1 and "'--max-reports' option" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as both:  # argparse's own usage error: --rounds or --config, not both
        main(["campaign", "create", "--server", server.url, "--name", name + "y", "--rounds", "{}", "--config", "{}"])
    assert both.value.code == 2 and "not allowed with argument" in capsys.readouterr().err
