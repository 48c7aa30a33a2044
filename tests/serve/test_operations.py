"""Operating ``dpdist serve``: readiness, metrics, logs, configuration, proxies, CORS, headers.

Every test runs a real server subprocess on 127.0.0.1 (``tests/ops_support.py``), stopped by the test;
the PostgreSQL tests start their own throwaway cluster and stop and restart it; the browser tests drive
headless Chromium over the DevTools protocol (``tests/cdp_page.mjs``).
"""

from __future__ import annotations

import base64
import concurrent.futures
import hashlib
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from dpdist._http._tls import verifying_context
from ops_support import OpsServer, RestartablePostgres, chromium_devtools, prefix_proxy, run_page, serving, static_pages
from serve_support import ADMIN_TOKEN, admin_headers, free_port, postgres_available

ROOT = Path(__file__).resolve().parents[2]
GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
METRICS_TOKEN = "metrics-token-0123456789"


def new_campaign(url: str, config=GRR) -> str:
    name = "ops-" + uuid.uuid4().hex[:10]
    with httpx.Client(base_url=url, headers=admin_headers(), timeout=30, verify=verifying_context()) as admin:
        assert admin.post("/api/campaigns", json={"campaign": name, "config": config}).status_code == 201
        assert admin.post(f"/api/campaigns/{name}/open").status_code == 200
    return name


def put_json(url: str, campaign: str, batch_id: str, reports, timeout=30) -> httpx.Response:
    return httpx.put(f"{url}/api/campaigns/{campaign}/batches/{batch_id}", json={"reports": reports}, timeout=timeout,
                     verify=verifying_context())


def campaign_n(url: str, campaign: str) -> int:
    return httpx.get(f"{url}/api/campaigns/{campaign}", headers=admin_headers(), timeout=30, verify=verifying_context()).json()["n"]


def scrape(url: str, token: str | None = None) -> dict:
    """``/metrics`` as {(sample name, ((label, value), ...)): value}."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    response = httpx.get(f"{url}/metrics", headers=headers, timeout=30, verify=verifying_context())
    assert response.status_code == 200, response.text
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def wait_until(predicate, what: str, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture
def sqlite_url(tmp_path):
    return str(tmp_path / "campaigns.sqlite")


# ---------------------------------------------------------------------- 6. liveness and readiness
@pytest.mark.slow  # a dpdist serve subprocess
def test_readyz_is_503_while_sqlite_is_locked_and_healthz_stays_200(sqlite_url, tmp_path):
    """/healthz answered 200 whatever the database did, and there was no readiness endpoint (404)."""
    with OpsServer(sqlite_url, args=["--ready-timeout", "0.3"]) as server:
        assert httpx.get(server.url + "/readyz", timeout=10).json() == {"status": "ready", "database": "sqlite"}
        holder = sqlite3.connect(sqlite_url, isolation_level=None, timeout=5)
        try:
            holder.execute("BEGIN EXCLUSIVE")  # another writer holds the write lock (readers still pass in WAL mode)
            answer = wait_until(lambda: (r := httpx.get(server.url + "/readyz", timeout=10, verify=verifying_context())).status_code == 503 and r,
                                "readiness to see the lock")
            assert answer.json() == {"status": "unavailable", "database": "sqlite", "reason": "locked",
                                     "detail": "the database is locked by another writer"}
            assert answer.headers["retry-after"] == "5"
            assert httpx.get(server.url + "/healthz", timeout=10).status_code == 200  # alive: do not restart it
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        wait_until(lambda: httpx.get(server.url + "/readyz", timeout=10, verify=verifying_context()).status_code == 200,
                   "readiness after the lock")


@pytest.mark.slow  # a dpdist serve subprocess
def test_readyz_says_disk_full_below_min_free_bytes(sqlite_url):
    with OpsServer(sqlite_url, args=["--min-free-bytes", str(1 << 62)]) as server:
        answer = httpx.get(server.url + "/readyz", timeout=10)
        assert answer.status_code == 503 and answer.json()["reason"] == "disk_full"
        assert httpx.get(server.url + "/healthz", timeout=10).status_code == 200


@pytest.fixture
def postgres():
    if not postgres_available():
        pytest.skip("PostgreSQL (initdb) is not installed; .ci/run installs the postgresql package")
    cluster = RestartablePostgres().start()
    yield cluster
    cluster.stop()


@pytest.mark.slow
def test_a_postgresql_outage_is_503_a_few_log_lines_and_heals_by_itself(postgres, tmp_path):
    """6 and 8. While PostgreSQL is down: /readyz 503 unreachable, /healthz 200, every submit a 503
    database_unavailable (the clients retry it), the log one line per error class (was a traceback per request:
    2,156 for 4 restarts); after each restart the first submits succeed (a dropped connection is replaced once
    inside the database layer) and one line says the database is back."""
    log = tmp_path / "server.log"
    # no rate limit: 200 submits from one address in a few seconds are what a busy host sends, not what this checks
    server = OpsServer(postgres.new_database(), log_path=log, args=["--ready-timeout", "1", "--rate-limit", "0"]).start()
    try:
        campaign = new_campaign(server.url)
        accepted, failed = 0, 0
        pool = concurrent.futures.ThreadPoolExecutor(8)
        submit = lambda i: put_json(server.url, campaign, f"b{i}", [i % 8])  # noqa: E731
        # warm the connections of several worker threads, so that each restart leaves stale ones behind
        accepted += sum(r.status_code == 200 for r in pool.map(submit, range(16)))
        for restart in range(4):
            postgres.halt()
            answers = [submit(1000 * (restart + 1) + i) for i in range(25)]
            assert {r.status_code for r in answers} == {503}
            assert {r.json()["error"] for r in answers} == {"database_unavailable"}
            failed += len(answers)
            ready = httpx.get(server.url + "/readyz", timeout=30)
            assert ready.status_code == 503 and ready.json()["reason"] == "unreachable"
            assert httpx.get(server.url + "/healthz", timeout=10).status_code == 200
            postgres.resume()
            batch = range(100 * (restart + 1), 100 * (restart + 1) + 16)
            answers = list(pool.map(submit, batch))  # no retry: a stale connection must not reach the client
            assert [r.status_code for r in answers] == [200] * 16, [r.text for r in answers if r.status_code != 200]
            accepted += 16
        assert campaign_n(server.url, campaign) == accepted == 80
        metrics = scrape(server.url, ADMIN_TOKEN)  # no --metrics-token: the admin token
        assert metrics[("dpdist_database_errors_total", (("reason", "unreachable"),))] >= failed
        assert metrics[("dpdist_database_reconnects_total", ())] >= 1
        assert metrics[("dpdist_requests_refused_total", (("reason", "database_unavailable"),))] == failed
        pool.shutdown()
    finally:
        server.stop()
    text = log.read_text()
    assert "Traceback" not in text
    down = [line for line in text.splitlines() if "database unavailable (" in line]
    back = [line for line in text.splitlines() if "database available again" in line]
    assert 4 <= len(down) <= 4 * 3, down  # one line per error class and outage (at most 3 classes seen)
    assert len(back) == 4, back
    print(f"\n{failed} refused submits in 4 outages: {len(down)} error lines, {len(back)} recovery lines, no traceback;"
          f" {metrics[('dpdist_database_reconnects_total', ())]:.0f} connections replaced\n{down[0]}\n{back[0]}")


# ---------------------------------------------------------------------- 7. metrics
@pytest.mark.slow  # a dpdist serve subprocess
def test_metrics_count_batches_reports_refusals_and_latency(sqlite_url):
    with OpsServer(sqlite_url, args=["--max-body-bytes", "4096", "--metrics-token", METRICS_TOKEN]) as server:
        assert httpx.get(server.url + "/metrics", timeout=10).status_code == 401
        wrong = httpx.get(server.url + "/metrics", headers={"Authorization": "Bearer " + "x" * 24}, timeout=10)
        assert wrong.status_code == 401 and wrong.json()["error"] == "unauthorized"
        campaign = new_campaign(server.url)
        assert put_json(server.url, campaign, "b1", [0, 1, 2, 99]).json()["rejected"] == {"out_of_range": 1}
        assert put_json(server.url, campaign, "b2", [3, 4]).status_code == 200
        assert put_json(server.url, campaign, "b1", [0, 1, 2, 99]).json()["duplicate"] is True
        batch_url = f"{server.url}/api/campaigns/{campaign}/batches"
        malformed = httpx.put(batch_url + "/b3", content=b"{not json", headers={"Content-Type": "application/json"})
        too_large = httpx.put(batch_url + "/b4", content=b"x" * 5000, headers={"Content-Type": "application/json"})
        assert (malformed.status_code, too_large.status_code) == (400, 413)
        assert httpx.get(server.url + "/api/campaigns", timeout=10).status_code == 401
        metrics = scrape(server.url, METRICS_TOKEN)
    route = "/api/campaigns/{campaign}/batches/{batch_id}"
    assert metrics[("dpdist_batches_total", (("outcome", "new"),))] == 2
    assert metrics[("dpdist_batches_total", (("outcome", "duplicate"),))] == 1
    assert metrics[("dpdist_reports_accepted_total", ())] == 5
    assert metrics[("dpdist_reports_rejected_total", (("reason", "out_of_range"),))] == 1
    refused = {labels[0][1]: value for (name, labels), value in metrics.items() if name == "dpdist_requests_refused_total"}
    assert refused == {"malformed_batch": 1, "too_large": 1, "unauthorized": 1}  # the API's; /metrics' own 401s are not
    assert metrics[("dpdist_request_duration_seconds_count", (("method", "PUT"), ("route", route)))] == 5
    assert metrics[("dpdist_request_duration_seconds_bucket", (("le", "+Inf"), ("method", "PUT"), ("route", route)))] == 5
    assert metrics[("dpdist_http_responses_total", (("method", "PUT"), ("route", route), ("status", "200")))] == 3
    assert metrics[("dpdist_requests_in_flight", ())] == 1  # the scrape itself
    assert metrics[("dpdist_threadpool_queue", ())] == 0 and metrics[("dpdist_threadpool_size", ())] >= 1
    assert sum(v for (name, _), v in metrics.items() if name == "dpdist_database_errors_total") == 0
    assert metrics[("process_resident_memory_bytes", ())] > 0
    # no campaign id or batch id in any label: routes are templates
    assert not any(campaign in value or "b1" == value for (_, labels) in metrics for _, value in labels)


# ---------------------------------------------------------------------- 8. logs
def test_database_outage_in_process_logs_one_line_per_error_class(tmp_path, caplog, monkeypatch):
    """A locked SQLite: 30 failed submits, 1 error line (not 30 tracebacks), 503 with Retry-After; then 1 recovery line."""
    import logging
    import warnings

    from dpdist.serve import _database, create_app

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from starlette.testclient import TestClient

    monkeypatch.setattr(_database, "_SQLITE_BUSY_TIMEOUT_S", 0.05)
    path = tmp_path / "c.sqlite"
    app = create_app(str(path), admin_token=ADMIN_TOKEN)
    client = TestClient(app, raise_server_exceptions=False)
    headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    client.post("/api/campaigns", json={"campaign": "c", "config": GRR}, headers=headers)
    client.post("/api/campaigns/c/open", headers=headers)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    with caplog.at_level(logging.INFO, logger="dpdist"):
        answers = [client.put(f"/api/campaigns/c/batches/b{i}", json={"reports": [1]}) for i in range(30)]
        holder.execute("ROLLBACK")
        assert client.put("/api/campaigns/c/batches/ok", json={"reports": [1]}).status_code == 200
    assert {a.status_code for a in answers} == {503} and {a.headers["retry-after"] for a in answers} == {"5"}
    assert answers[0].json() == {"error": "database_unavailable", "detail": "The database cannot answer now (locked); retry later."}
    records = [r for r in caplog.records if r.name.startswith("dpdist")]
    assert [r.levelname for r in records] == ["ERROR", "WARNING"], [r.getMessage() for r in records]
    assert "database unavailable (locked): sqlite3.OperationalError" in records[0].getMessage()
    assert "available again after 30 error(s)" in records[1].getMessage()
    assert not any(r.exc_info for r in records)
    holder.close()


@pytest.mark.slow  # a dpdist serve subprocess
def test_metrics_without_a_metrics_token_need_the_admin_token(sqlite_url):
    with OpsServer(sqlite_url) as server:
        refused = httpx.get(server.url + "/metrics", timeout=10)
        assert refused.status_code == 401 and refused.json()["error"] == "unauthorized"
        assert scrape(server.url, ADMIN_TOKEN)[("dpdist_requests_refused_total", (("reason", "unauthorized"),))] == 1


@pytest.mark.slow  # a dpdist serve subprocess
def test_json_logs_carry_request_ids_and_routes_not_addresses_or_ids(sqlite_url, tmp_path):
    log = tmp_path / "server.log"
    with OpsServer(sqlite_url, args=["--log-format", "json"], log_path=log, log_level="info") as server:
        campaign = new_campaign(server.url)
        made = httpx.get(server.url + "/", headers={"X-Request-ID": "probe-42"}, timeout=10).headers["x-request-id"]
        assert re.fullmatch("[0-9a-f]{32}", made)  # the server's own, not the client's
        ack = httpx.put(f"{server.url}/api/campaigns/{campaign}/batches/secret-batch-7", json={"reports": [1]},
                        headers={"X-Request-ID": "put-1"}, timeout=10)
        put = ack.headers["x-request-id"]
        assert ack.status_code == 200 and re.fullmatch("[0-9a-f]{32}", put) and put != made
        assert httpx.get(server.url + "/nothing", timeout=10).headers["x-request-id"]  # errors carry one too
    lines = log.read_text().splitlines()
    documents = [json.loads(line) for line in lines]  # every line is one JSON object, the start-up line too
    access = {d.get("request_id"): d for d in documents if d["logger"] == "dpdist.serve.access"}
    assert access[made]["route"] == "/" and access[made]["status"] == 200 and access[made]["method"] == "GET"
    assert access[put]["route"] == "/api/campaigns/{campaign}/batches/{batch_id}" and access[put]["status"] == 200
    assert all(isinstance(d["duration_ms"], float) for d in access.values())
    text = "\n".join(json.dumps(d) for d in access.values())
    assert campaign not in text and "secret-batch-7" not in text and "127.0.0.1" not in text and "probe-42" not in text
    assert {"time", "level", "logger", "message"} <= set(documents[-1])


@pytest.mark.slow  # a dpdist serve subprocess
@pytest.mark.parametrize("mode", ["full", "off"])
def test_json_access_lines_follow_access_log(sqlite_url, tmp_path, mode):
    """--access-log holds in JSON logs too: full adds the address and the path, off writes none."""
    log = tmp_path / "server.log"
    with OpsServer(sqlite_url, args=["--log-format", "json", "--access-log", mode], log_path=log, log_level="info") as server:
        request_id = httpx.get(server.url + "/readyz", timeout=10).headers["x-request-id"]
    access = [d for d in map(json.loads, log.read_text().splitlines()) if d["logger"] == "dpdist.serve.access"]
    if mode == "off":
        assert access == []
    else:
        (line,) = [d for d in access if d.get("request_id") == request_id]
        assert line["path"] == "/readyz" and line["client"].startswith("127.0.0.1:")


# ---------------------------------------------------------------------- 9. configuration
def _serve_parser():
    from dpdist.cli import build_parser

    parser = build_parser("serve")  # the parser `dpdist serve ...` runs with (its module's commands only)
    subparsers = next(a for a in parser._actions if a.dest == "command")
    return parser, subparsers.choices["serve"]


def test_every_serve_option_has_an_environment_variable(monkeypatch):
    """Options could only be typed on the command line, which `ps` shows (a PostgreSQL password in --db)."""
    from dpdist.cli._env import variable_of

    _, serve = _serve_parser()
    options = [a for a in serve._actions if a.option_strings and a.dest != "help"]
    assert len(options) >= 13
    for action in options:
        variable = variable_of(action)
        assert variable in action.help, action.option_strings
        value = {int: "4096", float: "1.5"}.get(action.type, action.choices[-1] if action.choices else "/x")
        monkeypatch.setenv(variable, value)
        parser, _ = _serve_parser()
        args = parser.parse_args(["serve"] + (["--db", "d.sqlite"] if action.dest != "db" else []))
        expected = action.type(value) if action.type else value
        assert getattr(args, action.dest) == expected, variable
        monkeypatch.delenv(variable)
    monkeypatch.setenv("DPDIST_PORT", "9001")
    parser, _ = _serve_parser()
    assert parser.parse_args(["serve", "--db", "d", "--port", "9002"]).port == 9002  # the command line wins


@pytest.mark.slow  # a dpdist serve subprocess each (the fast loop parses every variable: above)
@pytest.mark.parametrize("variable, value, message", [
    ("DPDIST_MAX_BODY_BYTES", "lots", "'DPDIST_MAX_BODY_BYTES' environment variable (for --max-body-bytes) must be an int. Got 'lots'."),
    ("DPDIST_LOG_FORMAT", "xml", "'DPDIST_LOG_FORMAT' environment variable (for --log-format) must be one of text, json."),
    ("DPDIST_CORS_ORIGIN", "https://a.example/path",
     "'DPDIST_CORS_ORIGIN' environment variable (for --cors-origin) must be an origin"),
])
def test_a_bad_environment_variable_is_one_line_naming_it(tmp_path, variable, value, message):
    env = {**os.environ, variable: value, "DPDIST_ADMIN_TOKEN": ADMIN_TOKEN}
    command = [sys.executable, "-m", "dpdist.cli", "serve", "--db", str(tmp_path / "c.sqlite"), "--port", str(free_port())]
    try:  # a server that ignored the variable would serve until stopped: 60 s bound it
        result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail(f"dpdist serve started despite {variable}={value!r}")
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.stderr


@pytest.mark.slow  # a dpdist serve subprocess
def test_the_server_takes_every_setting_from_the_environment(tmp_path):
    """DPDIST_DB keeps the database URL (and a PostgreSQL password) out of the process list."""
    port = free_port()
    env = {"DPDIST_DB": str(tmp_path / "env.sqlite"), "DPDIST_PORT": str(port), "DPDIST_MAX_BODY_BYTES": "4096",
           "DPDIST_METRICS_TOKEN": METRICS_TOKEN, "DPDIST_ROOT_PATH": "/pfx", "DPDIST_CORS_ORIGIN": "http://pages.example",
           "DPDIST_LOG_FORMAT": "json", "DPDIST_FORWARDED_ALLOW_IPS": "10.9.9.9"}
    log = tmp_path / "server.log"
    with OpsServer(None, env=env, port=port, log_path=log, log_level="info", forked=False) as server:
        cmdline = Path(f"/proc/{server.process.pid}/cmdline").read_bytes().split(b"\0")
        assert b"--db" not in cmdline and not any(b"env.sqlite" in word for word in cmdline)
        assert (tmp_path / "env.sqlite").is_file()
        assert httpx.get(server.url + "/", timeout=10).json()["openapi"] == "/pfx/openapi.json"
        assert httpx.get(server.url + "/metrics", timeout=10).status_code == 401
        assert httpx.get(server.url + "/metrics", headers=admin_headers(), timeout=10).status_code == 401  # its own token
        assert httpx.get(server.url + "/metrics", headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).status_code == 200
        campaign = new_campaign(server.url)
        big = httpx.put(f"{server.url}/api/campaigns/{campaign}/batches/b", content=b"x" * 5000,
                        headers={"Content-Type": "application/json"}, timeout=10)
        assert big.status_code == 413
        preflight = httpx.options(f"{server.url}/api/campaigns/{campaign}/config", timeout=10, headers={
            "Origin": "http://pages.example", "Access-Control-Request-Method": "GET"})
        assert preflight.headers["access-control-allow-origin"] == "http://pages.example"
        hsts = httpx.get(server.url + "/", headers={"X-Forwarded-Proto": "https"}, timeout=10)
        assert "strict-transport-security" not in hsts.headers  # 127.0.0.1 is not in DPDIST_FORWARDED_ALLOW_IPS
    first = json.loads(log.read_text().splitlines()[0])
    assert first["message"].startswith("dpdist serve: sqlite database")
    assert {"time", "level", "logger"} <= set(first)  # a record as every other (it had no time)


@pytest.mark.slow
def test_postgresql_password_from_dpdist_db_pgpassword_or_pgpass_never_in_ps(tmp_path):
    if not postgres_available():
        pytest.skip("PostgreSQL (initdb) is not installed; .ci/run installs the postgresql package")
    password = "pw-" + uuid.uuid4().hex
    cluster = RestartablePostgres(password=password).start()
    try:
        bare = f"postgresql://postgres@127.0.0.1:{cluster.port}/postgres"
        with_password = f"postgresql://postgres:{password}@127.0.0.1:{cluster.port}/postgres"
        pgpass = tmp_path / "pgpass"
        pgpass.write_text(f"127.0.0.1:{cluster.port}:*:postgres:{password}\n")
        pgpass.chmod(0o600)
        for env in ({"DPDIST_DB": with_password}, {"DPDIST_DB": bare, "PGPASSWORD": password},
                    {"DPDIST_DB": bare, "PGPASSFILE": str(pgpass)}):
            with OpsServer(None, env=env, log_path=tmp_path / "log", forked=False) as server:
                assert httpx.get(server.url + "/readyz", timeout=30).json()["status"] == "ready"
                cmdline = Path(f"/proc/{server.process.pid}/cmdline").read_bytes()
                assert password.encode() not in cmdline and b"postgresql://" not in cmdline
        result = subprocess.run([sys.executable, "-m", "dpdist.cli", "serve", "--port", str(free_port())],
                                env={**os.environ, "DPDIST_DB": bare, "DPDIST_ADMIN_TOKEN": ADMIN_TOKEN, "PGPASSFILE": "/nonexistent"},
                                capture_output=True, text=True, timeout=60)
        assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
        assert "'--db' option" in result.stderr and "cannot open the database" in result.stderr
        assert password not in (tmp_path / "log").read_text() + result.stderr
    finally:
        cluster.stop()


def _inline_hashes(page: str, tag: str) -> set[str]:
    blocks = re.findall(rf"<{tag}\b(?![^>]*\bsrc=)[^>]*>(.*?)</{tag}>", page, flags=re.S)
    return {"'sha256-" + base64.b64encode(hashlib.sha256(b.encode()).digest()).decode() + "'" for b in blocks}


@pytest.mark.slow  # two dpdist serve subprocesses
def test_security_headers_on_html_and_hsts_only_through_a_trusted_proxy(sqlite_url, tmp_path):
    with OpsServer(sqlite_url) as server:
        campaign = new_campaign(server.url)
        for path in (f"/campaigns/{campaign}/dashboard", f"/campaigns/{campaign}/participate"):
            page = httpx.get(server.url + path, timeout=10)
            assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
            policy = dict(part.strip().split(" ", 1) for part in page.headers["content-security-policy"].split(";"))
            assert policy["default-src"] == "'none'" and policy["frame-ancestors"] == "'none'"
            assert "unsafe-inline" not in page.headers["content-security-policy"]
            assert set(policy["script-src"].split()) == {"'self'"} | _inline_hashes(page.text, "script")
            assert set(policy["style-src"].split()) == {"'self'"} | _inline_hashes(page.text, "style")
            assert page.headers["x-content-type-options"] == "nosniff" and page.headers["referrer-policy"] == "no-referrer"
            assert page.headers["x-frame-options"] == "DENY"
            assert int(page.headers["content-length"]) == len(page.content)
        api = httpx.get(f"{server.url}/api/campaigns/{campaign}/config", timeout=10)
        assert api.headers["x-content-type-options"] == "nosniff" and "content-security-policy" not in api.headers
        # X-Forwarded-Proto from a trusted proxy (127.0.0.1, the default --forwarded-allow-ips): HTTPS, so HSTS
        assert "strict-transport-security" in httpx.get(server.url + "/", headers={"X-Forwarded-Proto": "https"}).headers
        assert "strict-transport-security" not in httpx.get(server.url + "/").headers
    with OpsServer(sqlite_url, args=["--forwarded-allow-ips", "10.0.0.1"]) as untrusting:
        assert "strict-transport-security" not in httpx.get(untrusting.url + "/", headers={"X-Forwarded-Proto": "https"}).headers


PARTICIPATE_STEPS = [
    ["wait", "document.readyState === 'complete' && !document.getElementById('form').hidden"],
    ["eval", "document.getElementById('value').value = '3'; document.getElementById('form').requestSubmit(); true"],
    ["wait", "!document.getElementById('result').hidden"],
    ["eval", "document.getElementById('send').click(); true"],
    ["wait", "document.getElementById('status').textContent.startsWith('Sent.')"],
    ["eval", "document.getElementById('status').textContent"],
]


@pytest.mark.slow
def test_pages_work_behind_a_path_prefix_proxy_under_their_csp(sqlite_url):
    """The participate page imported /static/... and called /api/... from the host's root: behind a proxy
    publishing the service under /dpdist they found nothing. With --root-path and relative URLs they work,
    and the browser reports no CSP violation (inline blocks allowed by hash, bars sized through CSSOM)."""
    with OpsServer(sqlite_url, args=["--root-path", "/dpdist"]) as server, \
            serving(prefix_proxy("/dpdist", server.url)) as proxy, chromium_devtools() as devtools:
        assert httpx.get(proxy + "/dpdist/", timeout=10).json()["openapi"] == "/dpdist/openapi.json"
        campaign = new_campaign(server.url)
        page = run_page(devtools, f"{proxy}/dpdist/campaigns/{campaign}/participate", PARTICIPATE_STEPS)
        assert page["values"][-1].startswith("Sent. The server accepted 1 report"), page
        assert page["csp"] == []
        assert campaign_n(server.url, campaign) == 1
        dashboard = run_page(devtools, f"{proxy}/dpdist/campaigns/{campaign}/dashboard#token={ADMIN_TOKEN}", [
            ["wait", "document.body.dataset.loaded === 'true'"],
            ["eval", "[document.getElementById('n').textContent, getComputedStyle(document.body).fontFamily, "
                     "document.querySelectorAll('#estimate-chart rect.bar').length]"],
        ])
        n, font, bars = dashboard["values"][0]
        assert n == "1" and "system-ui" in font and bars == 8 and dashboard["csp"] == []


CROSS_ORIGIN_PAGE = """<!doctype html><meta charset="utf-8"><title>another site</title>
<script type="module">
const server = new URL(location.href).searchParams.get('server');
const campaign = new URL(location.href).searchParams.get('campaign');
import(server + '/static/dpdist-client.js').then(
  async ({ Client }) => {
    try {
      const ack = await new Client(server, campaign, { retries: 0 }).submit(3);
      document.body.dataset.result = 'accepted ' + ack.accepted;
    } catch (error) {
      document.body.dataset.result = 'submit failed: ' + error.message;
    }
  },
  (error) => { document.body.dataset.result = 'import failed: ' + error.message; },
);
</script>
"""


@pytest.mark.slow
def test_chromium_loads_the_client_from_an_origin_allowed_by_cors_origin_and_submits(tmp_path):
    """Two servers on 127.0.0.1 with different ports are different origins: a page of one imports the
    JavaScript client from dpdist serve and submits a report, if and only if --cors-origin allows it."""
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "page.html").write_text(CROSS_ORIGIN_PAGE)
    steps = [["wait", "document.body && document.body.dataset.result"], ["eval", "document.body.dataset.result"]]
    with serving(static_pages(tmp_path / "site")) as site, chromium_devtools() as devtools:
        with OpsServer(str(tmp_path / "a.sqlite"), args=["--cors-origin", site]) as allowing, \
                OpsServer(str(tmp_path / "b.sqlite")) as refusing:
            for server, expected in ((allowing, "accepted 1"), (refusing, "import failed")):
                campaign = new_campaign(server.url)
                page = run_page(devtools, f"{site}/page.html?server={server.url}&campaign={campaign}", steps)
                assert page["values"][0].startswith(expected), page
                assert campaign_n(server.url, campaign) == (1 if server is allowing else 0)


# ---------------------------------------------------------------------- the operating guides
#: the pages whose commands run in order: each page's title (its whole text)
SECTIONS = (("how-to/operate-the-service.md", "Operate the service"), ("reference/metrics.md", "Metrics"),
            ("how-to/reverse-proxy.md", "Run the service behind nginx (a reverse proxy)"))


def _section_commands(text: str, title: str) -> list[str]:
    """The ```bash blocks of the section ``title`` (up to the next heading of its level or above)."""
    blocks, level, fence, inside, current = [], None, None, False, []
    for line in text.splitlines(keepends=True):
        if fence is not None:  # inside a fenced block: headings do not count
            if line.startswith("```"):
                if inside and fence == "bash":
                    blocks.append("".join(current))
                fence = None
            elif inside and fence == "bash":
                current.append(line)
            continue
        if line.startswith("```"):
            fence, current = line[3:].strip(), []
            continue
        heading = re.match(r"(#+) (.*?)\s*$", line)
        if heading:
            if heading.group(2) == title:
                level, inside = len(heading.group(1)), True
            elif inside and len(heading.group(1)) <= level:
                break
    assert level is not None, f"no section {title!r}"
    return blocks


@pytest.mark.slow
def test_the_operating_guides_commands_run_as_written(tmp_path):
    """The commands of the guides to operate the service, its metrics and the reverse proxy run, in order, in one shell
    (the documented port 8000 replaced by a free one), with the dpdist of this environment on PATH."""
    blocks = [block for page, title in SECTIONS for block in _section_commands((ROOT / "docs" / page).read_text(), title)]
    assert len(blocks) >= 3
    script = "set -euo pipefail\n" + "\n".join(blocks).replace("8000", str(free_port()))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"}
    for variable in [name for name in env if name.startswith(("DPDIST_", "PG"))]:
        env.pop(variable)
    process = subprocess.Popen(["bash", "-c", script], cwd=tmp_path, env=env, start_new_session=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=240)
    finally:
        try:
            os.killpg(process.pid, signal.SIGKILL)  # any server the script left behind
        except ProcessLookupError:
            pass
    assert process.returncode == 0, f"stdout:\n{out[-3000:]}\nstderr:\n{err[-3000:]}"
