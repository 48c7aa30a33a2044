"""The service in process (Starlette's test client): error bodies, static client files, start-up checks."""

from __future__ import annotations

import json
import warnings

import numpy as np

import pytest

with warnings.catch_warnings():  # Starlette 1.x prefers httpx2 for its test client; httpx works the same here
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient

from dpdist.errors import InvalidParameterError
from dpdist.serve import create_app
from serve_support import ADMIN_TOKEN

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}


@pytest.fixture
def app(tmp_path):
    return create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, static_dir=tmp_path / "js")


def test_an_internal_error_is_a_json_500_without_traceback(app, caplog):
    def broken(*args, **kwargs):
        raise RuntimeError("secret internals /etc/passwd")

    app.state.service.store.list = broken
    client = TestClient(app, raise_server_exceptions=False)
    response = client.get("/api/campaigns", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    assert response.status_code == 500
    assert response.json() == {"error": "internal", "detail": "internal server error"}
    assert "Traceback" not in response.text and "secret" not in response.text
    assert "RuntimeError" in caplog.text  # the server log has it


def test_static_client_files_and_participation_page(tmp_path):
    (tmp_path / "js" / "src").mkdir(parents=True)
    (tmp_path / "js" / "src" / "index.js").write_text("export const ok = 1;\n")
    (tmp_path / "js" / "participate.html").write_text("<!doctype html><title>participate</title>")
    client = TestClient(create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN, static_dir=tmp_path / "js"))
    module = client.get("/static/dpdist-client.js")
    assert module.status_code == 200 and "javascript" in module.headers["content-type"]
    assert "./dpdist-client/index.js" in module.text
    assert client.get("/static/dpdist-client/index.js").text == "export const ok = 1;\n"
    assert client.get("/static/dpdist-client/../participate.html").status_code == 404
    page = client.get("/campaigns/any/participate")
    assert page.status_code == 200 and "participate" in page.text


def test_missing_participation_page_is_a_json_404(app):
    response = TestClient(app).get("/campaigns/any/participate")
    assert response.status_code == 404 and response.json()["error"] == "not_installed"


def test_dashboard_escapes_nothing_it_should_not_and_refuses_bad_ids(app):
    client = TestClient(app)
    page = client.get("/campaigns/commute/dashboard")
    assert page.status_code == 200 and '<body data-campaign="commute">' in page.text
    assert client.get("/campaigns/%3Cscript%3E/dashboard").json()["error"] == "invalid_campaign_id"


@pytest.mark.parametrize("token", [None, "", "short"])
def test_the_admin_token_is_required_and_long_enough(tmp_path, token):
    with pytest.raises(InvalidParameterError, match="admin token"):
        create_app(str(tmp_path / "c.sqlite"), admin_token=token)


def test_an_in_memory_database_is_refused(tmp_path):
    with pytest.raises(InvalidParameterError, match=r"The 'db_url' parameter of dpdist.serve.create_app must be a SQLite "
                                                    r"file path or a postgresql:// URL \(not an in-memory database.*"
                                                    r"Got ':memory:' \(an in-memory database.*\) instead"):
        create_app(":memory:", admin_token=ADMIN_TOKEN)


def test_a_submit_token_is_stored_as_its_hash_only(tmp_path):
    import sqlite3

    path = tmp_path / "c.sqlite"
    client = TestClient(create_app(str(path), admin_token=ADMIN_TOKEN))
    created = client.post(
        "/api/campaigns",
        json={"campaign": "t", "config": GRR, "submit_token": "device-secret-0123456789"},
        headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
    )
    assert created.status_code == 201 and "device-secret" not in created.text
    dump = "\n".join(sqlite3.connect(path).iterdump())
    assert "device-secret" not in dump and ADMIN_TOKEN not in dump


@pytest.mark.parametrize(
    "config, rows, accepted",
    [
        ({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}, [1, True, 2, False], [1, 2]),
        ({"protocol": "oue", "epsilon": 1.0, "domain_size": 3}, [[128], [True], [96]], [[128], [96]]),  # packed bits
    ],
)
def test_json_booleans_among_integer_reports_are_rejected_not_counted_as_0_or_1(config, rows, accepted):
    from dpdist import local
    from dpdist.serve._ingest import decode_body

    protocol = local.from_config(config)
    batch = decode_body(protocol, json.dumps({"reports": rows}).encode(), "application/json", None)
    assert batch.rejected == {"out_of_range": len(rows) - len(accepted)}
    assert np.array_equal(batch.reports, np.array(accepted, dtype=protocol.report_format.dtype))


def test_a_json_batch_does_not_serialize_its_campaigns_config_each_time(monkeypatch):
    """Bounding a JSON batch's rows before parsing it serialized the whole config for every batch (a one-row
    batch: 10.6 ms at 100k labels); its separators are counted once per protocol, and the bound still refuses."""
    from dpdist import local
    from dpdist.serve import _ingest
    from dpdist.serve._limits import Limits
    from dpdist._guard._refusals import TooLarge

    protocol = local.make("grr", epsilon=1.0, labels=[f"label-{k}" for k in range(1000)])
    dumped = []
    dumps = json.dumps
    monkeypatch.setattr(json, "dumps", lambda value, *args, **kwargs: dumped.append(value) or dumps(value, *args, **kwargs))
    for k in range(5):
        batch = _ingest.decode_body(protocol, b'{"reports": [%d]}' % k, "application/json", None)
        assert batch.n_read == 1 and batch.rejected == {}
    assert len(dumped) == 1 and dumped[0] == protocol.config()
    carried = json.dumps({"reports": [3], "config": protocol.config()}).encode()  # a batch may carry its config
    assert _ingest.decode_body(protocol, carried, "application/json", None).n_read == 1
    with pytest.raises(TooLarge, match="rows"):
        _ingest.decode_body(protocol, b'{"reports": [' + b"1," * 1000 + b"1]}", "application/json", None, Limits(max_json_rows=10))
    assert len(dumped) == 2  # and the test's own dumps of the carried batch: none more of the config


@pytest.mark.parametrize(
    "config, values",
    [
        ({"protocol": "hcms", "epsilon": 4.0, "domain_size": 1000, "hash_count": 16, "width": 64}, [3] * 300 + [7] * 100),
        ({"protocol": "cms", "epsilon": 4.0, "domain_size": 1000, "hash_count": 16, "width": 64}, [3] * 300 + [7] * 100),
        ({"protocol": "l-grr", "epsilon": 4.0, "epsilon_1": 2.0, "domain_size": 8}, [3] * 300 + [7] * 100),
        ({"protocol": "loloha", "epsilon": 4.0, "epsilon_1": 2.0, "domain_size": 8}, [3] * 300 + [7] * 100),
        ({"protocol": "dbitflippm", "epsilon": 4.0, "domain_size": 8, "sampled_bits": 3}, [3] * 300 + [7] * 100),
        ({"protocol": "pgr", "epsilon": 4.0, "domain_size": 40}, [3] * 300 + [7] * 100),  # point indices, FFT decoding
    ],
)
def test_sketch_and_longitudinal_campaigns_take_the_same_path(app, config, values):
    from dpdist import local

    client = TestClient(app)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    name = config["protocol"].replace("-", "") + "camp"
    assert client.post("/api/campaigns", json={"campaign": name, "config": config}, headers=admin).status_code == 201
    client.post(f"/api/campaigns/{name}/open", headers=admin)
    protocol = local.from_config(config)
    reports = protocol.privatize(np.array(values), rng=0)
    response = client.put(f"/api/campaigns/{name}/batches/b1", json={"reports": reports.tolist()})
    assert response.status_code in (200, 201), response.text
    body = client.get(f"/api/campaigns/{name}/estimate", headers=admin).json()
    frequencies = np.array(body["estimate"]["frequencies"])
    assert body["n"] == len(values) and frequencies[3] > 0.5 and frequencies[7] > 0.1


WORDS = {"apple": 0.30, "banana": 0.20, "cherry": 0.12}


def _words(n, seed):
    rng = np.random.default_rng(seed)
    planted = rng.choice(list(WORDS), size=n, p=np.array(list(WORDS.values())) / sum(WORDS.values()))
    keep = rng.random(n) < sum(WORDS.values())
    background = np.array(["".join(rng.choice(list("abcdefghij"), 5)) for _ in range(200)])[rng.integers(0, 200, n)]
    return np.where(keep, planted, background)


@pytest.mark.slow  # 0.26 CPU-s: the service end to end
def test_a_heavy_hitter_campaign_finds_the_words_and_counts_each_batch_once(app):
    from dpdist import local

    config = {"protocol": "pem", "epsilon": 4.0, "alphabet": "abcdefghijklmnopqrstuvwxyz", "max_chars": 6, "k": 3,
              "hash_count": 256}
    client, admin = TestClient(app), {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    assert client.post("/api/campaigns", json={"campaign": "words", "config": config}, headers=admin).status_code == 201
    client.post("/api/campaigns/words/open", headers=admin)
    protocol = local.from_config(config)
    words = _words(40_000, 0)
    for index, batch in enumerate(np.array_split(words, 4)):
        body = {"reports": protocol.privatize(batch, rng=index).tolist()}
        assert client.put(f"/api/campaigns/words/batches/b{index}", json=body).status_code == 200
    retry = client.put("/api/campaigns/words/batches/b0", json={"reports": protocol.privatize(words[:10_000], rng=0).tolist()})
    assert retry.status_code == 200
    body = client.get("/api/campaigns/words/estimate", headers=admin).json()
    estimate = body["estimate"]
    assert body["n"] == 40_000 and estimate["kind"] == "heavy_hitters"
    assert estimate["labels"] == list(WORDS) and len(estimate["rounds"]) == protocol.groups
    # the last round's users are ~n/G; its estimates are within 5 SE of the truth
    truth = np.array([np.mean(words == word) for word in WORDS])
    assert np.all(np.abs(np.array(estimate["frequencies"]) - truth) < 5 * np.array(estimate["standard_error"]))
    band = estimate["band"]
    # simultaneous over the last round's candidates (Bonferroni), so that it holds for the k selected
    from statistics import NormalDist

    candidates = estimate["rounds"][-1]["candidates"]
    assert band["simultaneous_over"] == candidates > 1
    half = NormalDist().inv_cdf(1 - 0.05 / (2 * candidates)) * np.array(estimate["standard_error"])
    np.testing.assert_allclose(np.array(band["high"]) - np.array(band["low"]), 2 * half)
    wider = client.get("/api/campaigns/words/estimate?level=0.99", headers=admin).json()["estimate"]["band"]
    assert wider["level"] == 0.99 and np.all(np.array(wider["high"]) > np.array(band["high"]))
    fewer = client.get("/api/campaigns/words/estimate?k=2&threshold=0.25", headers=admin).json()["estimate"]
    assert fewer["labels"] == ["apple"]
    plot = client.get("/api/campaigns/words/estimate.png", headers=admin)
    assert plot.status_code == 200 and plot.content[:4] == b"\x89PNG"
    bad = client.get("/api/campaigns/words/estimate?threshold=2", headers=admin)
    assert bad.status_code == 400 and "threshold" in bad.json()["detail"]


def test_deeply_nested_json_is_a_400_refusal_not_an_internal_error(app):
    """``json.loads`` raises RecursionError past ~1,000 levels: a 2 kB body was a 500 from every JSON entry point."""
    import struct

    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    client = TestClient(app, raise_server_exceptions=False)
    assert client.post("/api/campaigns", json={"campaign": "deep", "config": GRR}, headers=admin).status_code == 201
    assert client.post("/api/campaigns/deep/open", headers=admin).status_code == 200
    deep = b"[" * 5000 + b"]" * 5000
    header = b'{"config": ' + deep + b"}"
    record = b"DPDISTR\n" + struct.pack("<HI", 1, len(header)) + header
    answers = {
        "json batch": client.put("/api/campaigns/deep/batches/b1", content=b'{"reports": ' + deep + b"}",
                                 headers={"Content-Type": "application/json"}),
        "binary header": client.put("/api/campaigns/deep/batches/b2", content=record,
                                    headers={"Content-Type": "application/octet-stream"}),
        "admin body": client.post("/api/campaigns", content=deep, headers={**admin, "Content-Type": "application/json"}),
    }
    for name, answer in answers.items():
        assert answer.status_code == 400 and "nested too deeply" in answer.json()["detail"], (name, answer.text)
    # a query option that does not parse as JSON is passed on as text, whatever its nesting
    option = client.get("/api/campaigns/deep/estimate", params={"postprocess": "[" * 5000}, headers=admin)
    assert option.status_code in (200, 400) and option.json().get("error") != "internal"
    assert client.get("/api/campaigns/deep", headers=admin).json()["refused_batches"] == {"malformed_batch": 2}


def test_a_database_that_cannot_be_opened_is_a_one_line_error_naming_db(tmp_path, capsys):
    """``dpdist serve --db /no/such/dir/x.sqlite`` said "internal error OperationalError ... a bug of dpdist"."""
    from dpdist.cli import main

    assert main(["serve", "--db", str(tmp_path / "missing" / "c.sqlite"), "--admin-token", ADMIN_TOKEN]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "'--db' option" in err and "cannot open the database" in err and "internal" not in err


def test_a_driver_s_error_quoting_the_database_password_is_one_line_without_it(capsys, monkeypatch):
    import sqlite3

    import dpdist.serve
    from dpdist.cli import main

    def refused(*args, **kwargs):  # the password as the driver may quote it: decoded, as typed, JSON-escaped
        raise sqlite3.OperationalError('bad password "S3cret PW"\n  near S3cret%20PW, "S3cret\\u0020PW"')

    monkeypatch.setattr(dpdist.serve, "create_app", refused)
    assert main(["serve", "--db", "postgresql://dp:S3cret%20PW@127.0.0.1:1/db", "--admin-token", ADMIN_TOKEN]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and '(bad password "***" near ***, "***").' in err and "S3cret" not in err, err


@pytest.mark.slow  # 0.32 CPU-s: the service end to end
def test_the_band_of_heavy_hitters_holds_for_the_words_selected(app):
    """Few users per group: most words found are noise. Their pointwise 95% bands (z = 1.96) lay above 0 for
    most of them (the maximum of many noisy estimates); the band simultaneous over the candidates covers 0."""
    from dpdist import local

    config = {"protocol": "pem", "epsilon": 2.0, "alphabet": "abcdefghijklmnopqrstuvwxyz", "max_chars": 12, "k": 20}
    client, admin = TestClient(app), {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    assert client.post("/api/campaigns", json={"campaign": "few", "config": config}, headers=admin).status_code == 201
    client.post("/api/campaigns/few/open", headers=admin)
    protocol = local.from_config(config)
    true_words = ["apple", "banana", "cherry", "date", "elder", "fig"]
    words = np.random.default_rng(0).choice(true_words, size=5000, p=[0.4, 0.3, 0.1, 0.1, 0.05, 0.05])
    body = {"reports": protocol.privatize(words, rng=1).tolist()}
    assert client.put("/api/campaigns/few/batches/b0", json=body).status_code == 200
    estimate = client.get("/api/campaigns/few/estimate", headers=admin).json()["estimate"]
    noise = [low for label, low in zip(estimate["labels"], estimate["band"]["low"]) if label not in true_words]
    assert len(noise) >= 10  # most of the 20 found are not words of the data
    assert all(low <= 0 for low in noise)  # true frequency 0: inside every band


def test_the_python_client_retries_a_proxys_429_and_408_with_the_same_bytes():
    """A reverse proxy's rate limit (429) or timeout (408) made `dpdist submit` fail midway (only 5xx were
    retried); the JavaScript client retried them. The retry resends the same batch id and bytes."""
    import httpx

    from dpdist.client import Client

    seen = []

    def handler(request):
        seen.append((request.url.path, request.content))
        if len(seen) <= 2:
            return httpx.Response(429 if len(seen) == 1 else 408, text="slow down")
        return httpx.Response(200, json={"campaign": "c", "batch_id": "b", "n_read": 1, "accepted": 1,
                                         "rejected": {}, "duplicate": False})

    with Client("http://proxy.test", retries=3, backoff=0.0, transport=httpx.MockTransport(handler)) as client:
        ack = client.submit_body("c", "b", b"the batch")
    assert ack["accepted"] == 1 and len(seen) == 3 and len(set(seen)) == 1


@pytest.mark.slow  # the estimator process started and ten viewers polling: 3.6 CPU-s
def test_an_estimate_is_computed_once_per_change_not_once_per_viewer(app):
    """Ten dashboards polling one campaign cost one estimate per new batch, not ten."""
    import concurrent.futures

    from starlette.testclient import TestClient

    ESTIMATES = app.state.service.estimates  # the whole document, bands and confidence sequence included
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    with TestClient(app) as client:
        client.post("/api/campaigns", headers=headers,
                    json={"campaign": "viewed", "config": {"protocol": "oue", "epsilon": 1.0, "domain_size": 64}})
        client.post("/api/campaigns/viewed/open", headers=headers)
        client.put("/api/campaigns/viewed/batches/b1", json={"reports": [[0] * 8] * 50})
        before = ESTIMATES.computed

        def view(_):
            response = client.get("/api/campaigns/viewed/estimate", headers=headers)
            assert response.status_code == 200
            return response.json()["n"]

        with concurrent.futures.ThreadPoolExecutor(10) as pool:
            assert set(pool.map(view, range(40))) == {50}
        assert ESTIMATES.computed - before == 1
        client.put("/api/campaigns/viewed/batches/b2", json={"reports": [[0] * 8] * 10})
        assert view(0) == 60 and view(0) == 60
        assert ESTIMATES.computed - before == 2
        # other options are another estimate
        assert client.get("/api/campaigns/viewed/estimate?postprocess=none", headers=headers).status_code == 200
        assert ESTIMATES.computed - before == 3


@pytest.mark.parametrize("name", ["pckv-ue", "pckv-grr", "privkv"])
@pytest.mark.slow  # 0.39 CPU-s: the service end to end
def test_a_key_value_campaign_takes_binary_and_json_batches_and_serves_frequencies_and_means(app, name):
    """A key-value campaign end to end in process: created from its config, a binary batch from the Python client
    (sets as a dense array) and a JSON batch of the same protocol; the served estimate is the key-value document
    (frequencies with standard errors and intervals, each key's mean) and its figure is drawn."""
    import httpx

    from dpdist import local
    from dpdist.client import AdminClient, Client

    config = {"protocol": name, "epsilon": 4.0, "domain_size": 4}
    test_client, admin = TestClient(app), {"Authorization": f"Bearer {ADMIN_TOKEN}"}

    def forward(request: httpx.Request) -> httpx.Response:  # the Python client's requests, to the app in process
        return test_client.request(request.method, request.url.raw_path.decode(), content=request.content,
                                   headers={k: v for k, v in request.headers.items() if k.lower() != "host"})

    rng = np.random.default_rng(0)
    n = 30_000
    keys = rng.choice(4, size=n, p=[0.4, 0.3, 0.2, 0.1])
    true_means = np.array([0.6, -0.5, 0.2, 0.9])
    dense = np.full((n, 4), np.nan)
    dense[np.arange(n), keys] = true_means[keys]
    with AdminClient("http://collector", admin_token=ADMIN_TOKEN, transport=httpx.MockTransport(forward), retries=0) as client, Client("http://collector", transport=httpx.MockTransport(forward), retries=0) as device:
        client.create_campaign("kv", config)
        client.open_campaign("kv")
        protocol = device.protocol("kv")
        assert protocol.tags.kind == "key_value"
        acks = device.submit_values("kv", dense[:20_000], batch_size=20_000)  # binary records
        assert [ack["accepted"] for ack in acks] == [20_000] and acks[0]["rejected"] == {}
    body = {"reports": local.from_config(config).privatize(dense[20_000:], rng=1).tolist()}
    answer = test_client.put("/api/campaigns/kv/batches/json1", json=body)
    assert answer.status_code == 200 and answer.json()["accepted"] == 10_000, answer.text
    served = test_client.get("/api/campaigns/kv/estimate", headers=admin).json()
    estimate = served["estimate"]
    assert served["n"] == n and estimate["kind"] == "key_value" and estimate["items"] == [0, 1, 2, 3]
    truth = np.bincount(keys, minlength=4) / n
    frequencies, errors = np.array(estimate["frequencies"]), np.array(estimate["standard_error"])
    assert np.all(np.abs(frequencies - truth) < 5 * errors), (frequencies, truth, errors)
    interval = next(i for i in estimate["intervals"] if i["quantity"] == "frequency")
    assert np.all(np.array(interval["low"]) < frequencies) and np.all(frequencies < np.array(interval["high"]))
    means = np.array(estimate["means"])
    if name == "privkv":  # its means count the fake values of non-holders: shrunk toward 0
        assert np.all(np.abs(means[:2]) < np.abs(true_means[:2])) and np.all(np.sign(means[:2]) == np.sign(true_means[:2]))
    else:
        assert np.all(np.abs(means[:3] - true_means[:3]) < 0.1), means
    plot = test_client.get("/api/campaigns/kv/estimate.png", headers=admin)
    assert plot.status_code == 200 and plot.content[:4] == b"\x89PNG"


def test_the_admin_and_metrics_tokens_rotate_with_an_overlap_and_devices_never_notice(tmp_path):
    """The rotation of the operations page: the service started again on its database with the new admin and metrics
    tokens and the previous ones takes either; started with the new ones alone, it refuses the old ones (401). A device
    holding the campaign's config and submit token from before sends on, counted, with nothing to fetch again."""
    from dpdist.serve._operations import Operations

    old, new = ("admin-old-0123456789", "metrics-old-0123456789"), ("admin-new-0123456789", "metrics-new-0123456789")
    database = str(tmp_path / "c.sqlite")
    submit = {"Authorization": "Bearer submit-token-0123456789"}

    def started(tokens, previous=(None, None)):
        return TestClient(create_app(database, admin_token=tokens[0], previous_admin_token=previous[0],
                                     operations=Operations(metrics_token=tokens[1], previous_metrics_token=previous[1])))

    def answers(client, tokens):
        return [client.get(route, headers={"Authorization": f"Bearer {token}"}).status_code
                for route, token in zip(("/api/campaigns", "/metrics"), tokens)]

    with started(old) as before:
        admin = {"Authorization": f"Bearer {old[0]}"}
        assert before.post("/api/campaigns", headers=admin, json={
            "campaign": "c", "config": GRR, "submit_token": "submit-token-0123456789"}).status_code == 201
        assert before.post("/api/campaigns/c/open", headers=admin).status_code == 200
        config = before.get("/api/campaigns/c/config").json()
        assert before.put("/api/campaigns/c/batches/b1", headers=submit, json={"reports": [1, 2]}).status_code == 200
    with started(new, previous=old) as during:  # 1. every instance with both: scripts and scrapers move meanwhile
        assert answers(during, old) == answers(during, new) == [200, 200]
        assert during.put("/api/campaigns/c/batches/b2", headers=submit, json={"reports": [3]}).status_code == 200
    with started(new) as after:  # 2. the old ones retired
        assert answers(after, old) == [401, 401] and answers(after, new) == [200, 200]
        assert after.get("/api/campaigns/c/config").json() == config  # what devices hold is unchanged
        assert after.put("/api/campaigns/c/batches/b3", headers=submit, json={"reports": [4]}).status_code == 200
        assert after.get("/api/campaigns/c", headers={"Authorization": f"Bearer {new[0]}"}).json()["n"] == 4
