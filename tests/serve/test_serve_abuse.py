"""``dpdist serve`` defends itself: memory, time, connections, injected reports, CPU, poisoning, privacy.

The limits every dpdist server shares (header and body time, header size, concurrency, rate, body size and memory
per address) are tested against ``dpdist serve`` and ``dpdist relay`` alike in tests/serve/test_limits.py.

Every probe runs against a real server on 127.0.0.1: uvicorn in a thread of this
process (so the test can read the bytes of request bodies the app holds,
``service.budget``), or ``dpdist serve`` as a subprocess where signals and logs
matter.  Each is bounded in requests and time and stops by itself; sizes are
small (the issue's probes used 15 MiB bodies and 20,000 connections).

Last, an honest burst through the guide's nginx (``benchmarks/bench_burst.py`` at 300 devices x 3 one-report batches,
each on a fresh connection with its whole request written at once, beside 30 slowloris connections, a 2 s header
timeout) is answered 503 with Retry-After, never 502, and the slowloris connections are still closed within the header
timeout; with the pending-heads cap counting every accepted connection nginx answered hundreds of them 502.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
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
import numpy as np
import pytest

from dpdist import io, local
from dpdist.client import AdminClient, Client
from dpdist.errors import ServiceRefusedError
from dpdist.serve._limits import Limits, RateLimiter, uvicorn_options
from serve_socket_support import (BOUND_S, GRR, SUBMIT_TOKEN, InProcessServer, grr_body, new_campaign, put, raw_connection,
                                  read_response, read_response_keepalive, request_head)
from nginx_support import nginx_binary
from serve_support import ADMIN_TOKEN, ServerProcess, admin_headers, postgres_available, shared_cluster



# ---------------------------------------------------------------------- servers


@contextlib.contextmanager
def cli_server(db: str, *options: str, log_path=None, log_level: str = "warning"):
    """``dpdist serve`` as a process of its own with extra options (:class:`serve_support.ServerProcess`): its process and
    URL; stopped at the end."""
    server = ServerProcess(db, log_path=log_path, log_level=log_level, options=options).start()
    try:
        yield server.process, server.url
    finally:
        server.stop()


@pytest.fixture(scope="module")
def postgres():
    """The process's PostgreSQL cluster (serve_support.shared_cluster: the tests' databases are each a new one in it)."""
    if not postgres_available():
        pytest.skip("PostgreSQL (initdb) is not installed; .ci/run installs the postgresql package")
    return shared_cluster()


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.slow)])
def db_url(request, tmp_path):
    if request.param == "sqlite":
        return str(tmp_path / "campaigns.sqlite")
    return request.getfixturevalue("postgres").new_database()














# ====================================================================== 1. memory, time, connections
@pytest.mark.slow  # uvicorn on a socket
def test_a_slow_body_is_refused_before_it_is_read_when_campaign_or_token_is_wrong(tmp_path):
    """Bodies used to be read (up to 16 MiB each, held as long as the client trickled) before the campaign was
    looked up: 40 such connections raised RSS 176 -> 746 MiB. Now the answer comes first and no byte is buffered."""
    with InProcessServer(str(tmp_path / "c.sqlite")) as server:
        guarded = new_campaign(server.url, submit_token="device-secret-0123456789")
        declared = 15 << 20
        targets = [("/api/campaigns/no-such-campaign/batches/x", 404, "unknown_campaign")] * 10
        targets += [(f"/api/campaigns/{guarded}/batches/y", 401, "unauthorized")] * 10
        server.service.budget.peak = 0  # (the campaign's creation held its JSON body)
        sockets = []
        for path, _, _ in targets:
            sock = raw_connection(server.port)
            sock.sendall(request_head("PUT", path, declared) + b"\0" * 4096)  # then the client stalls
            sockets.append(sock)
        for sock, (_, status, code) in zip(sockets, targets):
            got, headers, body = read_response(sock)  # the server answers and closes, without the body
            sock.close()
            assert got == status and json.loads(body)["error"] == code
            assert headers["connection"] == "close"
        assert server.service.budget.peak == 0  # bytes of request bodies the app ever held


@pytest.mark.slow  # uvicorn on a socket
def test_body_bytes_in_flight_are_bounded_and_beyond_the_budget_503_at_once(tmp_path):
    # the whole pool (one address may hold all of it; a campaign with a token: its bodies are not anonymous)
    limits = Limits(max_inflight_bytes=256 << 10, max_inflight_bytes_per_address=256 << 10)
    with InProcessServer(str(tmp_path / "c.sqlite"), limits, max_body_bytes=128 << 10) as server:
        campaign = new_campaign(server.url, submit_token=SUBMIT_TOKEN)
        body = grr_body(np.arange(8).repeat(12_000))  # 96,000 reports: ~96 KB
        slow = []
        for k in range(2):  # two uploads hold most of their bodies
            sock = raw_connection(server.port)
            sock.sendall(request_head("PUT", f"/api/campaigns/{campaign}/batches/held-{k}", len(body),
                                      f"Authorization: Bearer {SUBMIT_TOKEN}\r\n") + body[:90_000])
            slow.append(sock)
        deadline = time.monotonic() + BOUND_S
        while server.service.budget.in_flight < 180_000:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        refused = put(server.url, campaign, "third", body, token=SUBMIT_TOKEN)
        assert refused.status_code == 503 and refused.json()["error"] == "busy"
        assert int(refused.headers["retry-after"]) >= 1
        for sock in slow:  # the held uploads complete and are counted
            sock.sendall(body[90_000:])
            status, _, ack = read_response_keepalive(sock)
            sock.close()
            assert status == 200 and json.loads(ack)["accepted"] == 96_000
        assert put(server.url, campaign, "third", body, token=SUBMIT_TOKEN).status_code == 200  # the retry goes in
        assert server.service.budget.peak <= 256 << 10 and server.service.budget.in_flight == 0




@pytest.mark.slow  # uvicorn on a socket
def test_uploads_cut_short_and_internal_errors_leave_no_traceback_and_no_address(tmp_path, caplog, capsys):
    """A client that disconnects mid-body was an internal error with a traceback (a log flood for anyone
    opening and dropping uploads); it gets no access line either, no answer having been sent (it is counted as the
    refusal ``client_disconnected``); an internal error still gets its access line, without the address."""
    with InProcessServer(str(tmp_path / "c.sqlite")) as server:
        campaign = new_campaign(server.url)
        for k in range(5):
            sock = raw_connection(server.port)
            sock.sendall(request_head("PUT", f"/api/campaigns/{campaign}/batches/cut-{k}", 1 << 20) + b"\0" * 1000)
            sock.close()

        def broken():
            raise RuntimeError("boom")

        server.service.store.list = broken
        assert httpx.get(server.url + "/api/campaigns", headers=admin_headers()).status_code == 500
        deadline = time.monotonic() + BOUND_S
        while server.service.budget.in_flight and time.monotonic() < deadline:
            time.sleep(0.01)
    assert "internal error on PUT" not in caplog.text and "ClientDisconnect" not in caplog.text
    access = [line for line in capsys.readouterr().out.splitlines() if line.startswith("INFO:")]  # the access lines
    assert any('- - "GET /api/campaigns HTTP/1.1" 500' in line for line in access), access
    assert not any('"PUT /api/campaigns/' in line for line in access)  # no response was sent to the cut uploads
    assert not any(re.search(r"127\.0\.0\.1|cut-", line) for line in access)


def test_http_falls_back_to_h11_without_httptools(monkeypatch):
    from dpdist.errors import InvalidParameterError
    from dpdist.serve._limits import protocol_class
    from dpdist._guard._protocol import HeaderTimeoutH11Protocol

    assert protocol_class(http="auto").__name__ == "HeaderTimeoutHttpToolsProtocol"
    monkeypatch.setitem(sys.modules, "dpdist._guard._protocol_httptools", None)  # as if httptools were not installed
    assert protocol_class(http="auto") is HeaderTimeoutH11Protocol
    assert issubclass(uvicorn_options(Limits(header_timeout=2.0))["http"], HeaderTimeoutH11Protocol)
    with pytest.raises(InvalidParameterError, match="--http"):
        protocol_class(http="httptools")


@pytest.mark.slow  # dpdist serve as a subprocess
def test_sigterm_with_stalled_uploads_answers_them_503_and_exits_within_the_graceful_timeout(tmp_path):
    """SIGTERM used to wait for a stalled upload as long as its client did (44 s in the issue's probe); then, at the
    graceful timeout, the request still running got uvicorn's plain-text 500 and the log a traceback.  Now it is
    answered 503 shutting_down with Retry-After, through the batch route's fast path and through the application's
    layers alike (dpdist._guard._shutdown), with one warning line each and no traceback."""
    log_path = tmp_path / "serve.log"
    with cli_server(str(tmp_path / "c.sqlite"), "--graceful-timeout", "1", "--body-timeout", "600",
                    "--min-body-rate", "1", log_path=log_path) as (process, url):
        campaign = new_campaign(url)
        port = int(url.rsplit(":", 1)[1])
        stalled = []
        for head in (request_head("PUT", f"/api/campaigns/{campaign}/batches/stalled", 1 << 20, "Expect: 100-continue\r\n"),
                     request_head("POST", "/api/campaigns", 1 << 16, f"Expect: 100-continue\r\nAuthorization: Bearer {ADMIN_TOKEN}\r\n")):
            sock = raw_connection(port)
            sock.sendall(head)
            assert sock.recv(64).startswith(b"HTTP/1.1 100")  # the app is reading the body
            sock.sendall(b" " * 10_000)  # then the upload stalls (the body timeout is 600 s)
            stalled.append(sock)
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(BOUND_S)
        exited_after = time.monotonic() - started
        answers = [read_response(sock) for sock in stalled]
        for sock in stalled:
            sock.close()
        print(f"SIGTERM with two stalled uploads: exited after {exited_after:.2f} s (graceful timeout 1 s)")
        assert process.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises the signal once it has shut down
        assert exited_after < 10  # the 1 s graceful timeout, and the shutdown's own steps
    for status, headers, body in answers:
        assert status == 503 and headers["retry-after"] == "5" and headers["connection"] == "close"
        assert json.loads(body)["error"] == "shutting_down" and headers["x-request-id"]
    log = log_path.read_text()
    assert "Traceback" not in log and "Exception in ASGI application" not in log, log
    assert log.count("503 shutting_down") == 2, log


def test_limits_are_options_of_dpdist_serve_with_one_line_errors(tmp_path, capsys):
    from dpdist.cli import main

    for option, value in (("--header-timeout", "0"), ("--max-inflight-bytes", "2048"), ("--rate-limit", "-1")):
        assert main(["serve", "--db", str(tmp_path / "c.sqlite"), option, value, "--admin-token", ADMIN_TOKEN]) == 2
        err = capsys.readouterr().err
        assert option in err and "Traceback" not in err and err.count("\n") == 1


# ====================================================================== 2. injected reports
@pytest.mark.slow  # uvicorn on a socket
def test_max_reports_caps_a_campaign_and_its_refusals_are_counted(db_url):
    with InProcessServer(db_url) as server:
        campaign = new_campaign(server.url, max_reports=100)
        assert put(server.url, campaign, "a", grr_body(np.zeros(60, int))).json()["accepted"] == 60
        over = put(server.url, campaign, "b", grr_body(np.zeros(60, int)))
        assert over.status_code == 409 and over.json()["error"] == "campaign_full"
        assert put(server.url, campaign, "c", grr_body(np.zeros(40, int))).json()["accepted"] == 40
        full = put(server.url, campaign, "d", grr_body(np.zeros(1, int)))  # refused before the body is read
        assert full.status_code == 409 and full.json()["error"] == "campaign_full"
        assert put(server.url, campaign, "a", grr_body(np.zeros(60, int))).json()["duplicate"] is True
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            summary = admin.campaign(campaign)
        assert summary["n"] == 100 and summary["max_reports"] == 100
        assert summary["refused_batches"] == {"campaign_full": 2}


@pytest.mark.slow  # uvicorn on a socket
def test_a_refused_batch_sent_again_is_refused_again_and_counted_once(db_url):
    """A client that did not get its refusal (a connection reset: the two-workers test saw it) sends the same batch
    again: it is refused again, and ``refused_batches`` counts each batch id once per reason, whichever step refused
    it (the group commit, admission before the body, decoding)."""
    with InProcessServer(db_url) as server:
        campaign = new_campaign(server.url, max_reports=100)
        assert put(server.url, campaign, "a", grr_body(np.zeros(60, int))).json()["accepted"] == 60
        codes = [put(server.url, campaign, batch_id, grr_body(np.zeros(60, int))).json()["error"]
                 for batch_id in ("b", "b", "c", "c")]  # refused by the group commit, then at admission
        codes += [put(server.url, campaign, "m", b"not a record").json()["error"] for _ in range(2)]
        assert put(server.url, campaign, "d", grr_body(np.zeros(40, int))).json()["accepted"] == 40
        codes += [put(server.url, campaign, batch_id, grr_body([1])).json()["error"] for batch_id in ("b", "e", "e", "e")]
        assert codes == ["campaign_full"] * 4 + ["malformed_batch"] * 2 + ["campaign_full"] * 4
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            assert admin.campaign(campaign)["refused_batches"] == {"campaign_full": 3, "malformed_batch": 1}
            admin.delete_campaign(campaign)
        assert server.service.store.db.execute("SELECT COUNT(*) FROM refused_batch_ids") == [(0,)]


def test_the_rate_limiter_refills_keys_ipv6_by_64_and_bounds_its_memory():
    now = [0.0]
    limiter = RateLimiter(rate=2.0, burst=2, max_keys=4, clock=lambda: now[0])
    assert [limiter.take("10.0.0.1") for _ in range(3)] == [0.0, 0.0, 0.5]
    assert limiter.take("10.0.0.2") == 0.0  # another address has its own bucket
    now[0] = 0.5
    assert limiter.take("10.0.0.1") == 0.0  # one token back after 0.5 s at 2/s
    assert limiter.take("2001:db8::1") == 0.0 and limiter.take("2001:db8::2") == 0.0
    assert limiter.take("2001:db8::ffff") == 0.5  # the same /64: its two tokens are spent
    assert limiter.key("::ffff:10.0.0.1") == "10.0.0.1"
    for k in range(100):
        limiter.take(f"192.0.2.{k}")
    assert len(limiter._buckets) <= 4
    assert RateLimiter(rate=0, burst=1).take("x") == 0.0  # 0: no limit


@pytest.mark.slow  # uvicorn on a socket
def test_enrollment_tokens_bound_each_devices_contribution(db_url, tmp_path):
    with InProcessServer(db_url) as server:
        campaign = new_campaign(server.url, enrollment=True)
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            first, second = admin.enroll(campaign, 2, 50)
            plain = new_campaign(server.url)
            with pytest.raises(ServiceRefusedError) as refused:
                admin.enroll(plain, 1, 5)
            assert refused.value.code == "enrollment_off"
        assert put(server.url, campaign, "n", grr_body([1])).status_code == 401
        assert put(server.url, campaign, "n", grr_body([1]), token="not-an-enrollment-token").status_code == 401
        assert put(server.url, campaign, "a1", grr_body(np.zeros(30, int)), token=first).json()["accepted"] == 30
        over = put(server.url, campaign, "a2", grr_body(np.zeros(30, int)), token=first)
        assert over.status_code == 403 and over.json()["error"] == "contribution_limit"
        assert put(server.url, campaign, "a3", grr_body(np.zeros(20, int)), token=first).status_code == 200
        assert put(server.url, campaign, "a1", grr_body(np.zeros(30, int)), token=first).json()["duplicate"] is True
        spent = put(server.url, campaign, "a4", grr_body([1]), token=first)  # refused before the body is read
        assert spent.status_code == 403 and spent.json()["error"] == "contribution_limit"
        assert put(server.url, campaign, "b1", grr_body(np.zeros(50, int)), token=second).status_code == 200

        # eight concurrent batches of 10 reports with one token good for 50: exactly five are counted
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            (shared,) = admin.enroll(campaign, 1, 50)
        bodies = [grr_body(np.full(10, k % 8), seed=k) for k in range(8)]
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            statuses = list(pool.map(lambda k: put(server.url, campaign, f"race-{k}", bodies[k], token=shared).status_code, range(8)))
        assert sorted(statuses) == [200] * 5 + [403] * 3
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            summary = admin.campaign(campaign)
        assert summary["n"] == 50 + 50 + 50 and summary["refused_batches"]["contribution_limit"] == 2 + 3
    if not db_url.startswith("postgresql"):
        dump = "\n".join(sqlite3.connect(db_url).iterdump())
        assert first not in dump and second not in dump and shared not in dump  # stored as SHA-256 only


@pytest.mark.slow  # uvicorn on a socket
def test_cli_enroll_issues_tokens_and_create_takes_max_reports_and_enrollment(tmp_path, capsys, monkeypatch):
    from dpdist.cli import main

    monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN_TOKEN)
    with InProcessServer(str(tmp_path / "c.sqlite")) as server:
        assert main(["campaign", "create", "--server", server.url, "--config", json.dumps(GRR), "--name", "devices",
                     "--enrollment", "--max-reports", "1000", "--open"]) == 0
        capsys.readouterr()
        assert main(["campaign", "enroll", "devices", "--server", server.url, "--count", "3", "--reports", "10"]) == 0
        tokens = capsys.readouterr().out.split()
        assert len(tokens) == 3 and len(set(tokens)) == 3 and all(len(token) >= 16 for token in tokens)
        out = tmp_path / "tokens.txt"
        assert main(["campaign", "enroll", "devices", "--server", server.url, "--count", "2", "--reports", "10",
                     "--out", str(out)]) == 0
        assert len(out.read_text().split()) == 2 and (out.stat().st_mode & 0o777) == 0o600
        with Client(server.url, submit_token=tokens[0]) as device:
            assert device.submit_reports("devices", local.from_config(GRR), np.arange(8, dtype=np.uint8))["accepted"] == 8
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            summary = admin.campaign("devices")
        assert summary["enrollment"] is True and summary["max_reports"] == 1000 and summary["n"] == 8
        both = main(["campaign", "create", "--server", server.url, "--config", json.dumps(GRR), "--name", "both",
                     "--enrollment", "--submit-token", "device-secret-0123456789"])
        assert both == 2 and "either a shared submit token or per-device enrollment tokens" in capsys.readouterr().err


@pytest.mark.slow  # uvicorn on a socket
def test_a_batch_replayed_into_another_campaign_with_the_same_config_is_refused(db_url):
    """One request's bytes used to be counted again in any other campaign of the same config."""
    with InProcessServer(db_url) as server:
        first, second = new_campaign(server.url), new_campaign(server.url)
        protocol = local.from_config(GRR)
        with Client(server.url) as device:  # a batch id given: the reports go in the order given (a resend)
            ack = device.submit_reports(first, protocol, protocol.privatize(np.arange(8).repeat(5), rng=1),
                                        batch_id=io.new_file_id())
        batch_id = ack["batch_id"]  # a random file id; the record carries it
        body = io.encode_record(protocol, protocol.privatize(np.arange(8).repeat(5), rng=1), batch_id)
        assert put(server.url, first, batch_id, body).json()["duplicate"] is True  # the same bytes: a retry
        replay = put(server.url, second, batch_id, body)
        assert replay.status_code == 409 and replay.json()["error"] == "batch_of_another_campaign"
        renamed = put(server.url, second, uuid.uuid4().hex, body)
        assert renamed.status_code == 400 and renamed.json()["error"] == "batch_id_mismatch"
        posted = httpx.post(f"{server.url}/api/campaigns/{second}/batches", content=body,
                            headers={"Content-Type": "application/octet-stream"})
        assert posted.status_code == 409 and posted.json()["error"] == "batch_of_another_campaign"
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            assert admin.campaign(first)["n"] == 40 and admin.campaign(second)["n"] == 0
            # the replay PUT and POSTed is one batch (one id) refused for one reason: counted once
            assert admin.campaign(second)["refused_batches"] == {"batch_id_mismatch": 1, "batch_of_another_campaign": 1}
        # hand-chosen batch ids ("day1") stay per campaign
        assert put(server.url, first, "day1", grr_body([1])).status_code == 200
        assert put(server.url, second, "day1", grr_body([1])).status_code == 200


# ====================================================================== 3. CPU amplification
@pytest.mark.slow  # uvicorn on a socket
def test_many_small_records_and_large_json_batches_are_refused_before_the_work(tmp_path):
    """15 MiB of one-report records cost 3.4 s of CPU, a JSON batch of 7 M integers 1.0 s (4.8 s with one
    `true`, classified row by row): each is now refused with 413 before it is decoded."""
    with InProcessServer(str(tmp_path / "c.sqlite"), max_body_bytes=4 << 20) as server:
        campaign = new_campaign(server.url)
        one = grr_body([3])
        records = put(server.url, campaign, "records", one * 1025)
        assert records.status_code == 413 and records.json()["error"] == "too_many_records"
        assert "1024" in records.json()["detail"]
        assert put(server.url, campaign, "ok-records", one * 1024).json()["accepted"] == 1024
        rows = json.dumps({"reports": [1] * 100_001}).encode()
        too_many = put(server.url, campaign, "json", rows, "application/json")
        assert too_many.status_code == 413 and too_many.json()["error"] == "too_many_rows"
        checked = json.dumps({"reports": [1] * 10_000 + [True]}).encode()
        slow = put(server.url, campaign, "json-bool", checked, "application/json")
        assert slow.status_code == 413 and "one by one" in slow.json()["detail"]
        small = put(server.url, campaign, "json-ok", json.dumps({"reports": [1] * 5000 + [True]}).encode(), "application/json")
        assert small.json()["accepted"] == 5000 and small.json()["rejected"] == {"out_of_range": 1}
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            refused = admin.campaign(campaign)["refused_batches"]
        assert refused == {"too_many_records": 1, "too_many_rows": 2}


@pytest.mark.slow  # uvicorn on a socket
def test_a_report_file_of_many_records_is_re_encoded_by_the_client(tmp_path):
    """A report file written in many small blocks would pass the server's --max-records: submit_file sends it
    as one record (the same bytes on every run, so a re-run is still counted once)."""
    protocol = local.from_config(GRR)
    path = tmp_path / "many.bin"
    with io.ReportWriter(path, protocol) as writer:
        for k in range(2000):
            writer.write(protocol.privatize([k % 8], rng=k))
    with InProcessServer(str(tmp_path / "c.sqlite")) as server:
        campaign = new_campaign(server.url)
        with Client(server.url) as device:
            assert device.submit_file(campaign, path)[0]["accepted"] == 2000
            assert device.submit_file(campaign, path)[0]["duplicate"] is True


@pytest.mark.slow  # uvicorn on a socket
@pytest.mark.parametrize(
    "config, error, named",
    [  # OUE d = 10^9 is past the library's own limit of 2 GiB per array: refused as a config
     ({"protocol": "oue", "epsilon": 1.0, "domain_size": 10**9}, "invalid_config", "7.5 GiB"),
     ({"protocol": "grr", "epsilon": 1.0, "domain_size": 10**8}, "statistic_too_large", "--max-statistic-bytes")],
)
def test_a_campaign_statistic_over_the_limit_is_refused_at_creation(tmp_path, config, error, named):
    """An OUE campaign with d = 10^9 drove the server past 4.2 GB when it was created."""
    with InProcessServer(str(tmp_path / "c.sqlite")) as server:
        response = httpx.post(f"{server.url}/api/campaigns", json={"campaign": "huge", "config": config}, headers=admin_headers())
        assert response.status_code == 400 and response.json()["error"] == error
        assert named in response.json()["detail"]
        campaign = new_campaign(server.url, open_it=False)
        changed = httpx.put(f"{server.url}/api/campaigns/{campaign}/config", json={"config": config}, headers=admin_headers())
        assert changed.status_code == 400 and changed.json()["error"] == error


# ====================================================================== 4. poisoning diagnostics
@pytest.mark.slow  # uvicorn on a socket
def test_poisoning_diagnostics_flag_support_counts_no_honest_population_produces(tmp_path, capsys, monkeypatch):
    from dpdist.cli import main

    # each estimate below must be of the aggregate of the moment: the cache's spacing rule may serve the
    # document computed a moment ago (its n says so) when the last computation was slow, as under load
    monkeypatch.setattr("dpdist.serve._estimate_cache.SPACING", 0.0)
    with InProcessServer(str(tmp_path / "c.sqlite")) as server:
        campaign = new_campaign(server.url)
        protocol = local.from_config(GRR)
        rng = np.random.default_rng(5)
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin, Client(server.url) as device:
            device.submit_reports(campaign, protocol, protocol.privatize(rng.integers(0, 8, 2000), rng=rng))
            honest = admin.estimate(campaign)["diagnostics"]
            assert honest["test"] == "support_counts" and honest["flagged"] is False
            # 2,000 fake reports all saying "0": item 0 is supported more than even a population all holding 0 can
            device.submit_reports(campaign, protocol, np.zeros(2000, dtype=np.uint8))
            poisoned = admin.estimate(campaign)["diagnostics"]
        assert poisoned["flagged"] is True and poisoned["items_above"] == [0]
        assert set(poisoned["items_below"]) == set(range(1, 8)) and poisoned["min_p_value"] < 1e-6
        monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN_TOKEN)
        assert main(["campaign", "estimate", "--server", server.url, campaign]) == 0
        assert "POISONING SUSPECTED: 1 item(s) supported more than any honest population can" in capsys.readouterr().out

        # OUE's maximal-gain attack (Cao et al. 2021): fake reports with every bit set
        config = {"protocol": "oue", "epsilon": 1.0, "domain_size": 16}
        oue = local.from_config(config)
        target = new_campaign(server.url, config)
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin, Client(server.url) as device:
            device.submit_reports(target, oue, oue.privatize(rng.integers(0, 16, 3000), rng=rng))
            assert admin.estimate(target)["diagnostics"]["flagged"] is False
            device.submit_reports(target, oue, np.full((300, 2), 255, dtype=np.uint8))  # 9% fake reports
            attacked = admin.estimate(target)["diagnostics"]
            assert attacked["flagged"] is True and attacked["bits_per_report"]["flagged"] is True
            assert attacked["count_above"] == 0  # no single item is outside its region yet
            untested = new_campaign(server.url, {"protocol": "sw", "epsilon": 1.0, "bins": 16})
            assert admin.estimate(untested)["diagnostics"]["test"] is None


@pytest.mark.slow
def test_the_constraint_test_raises_its_alarm_in_the_api_and_the_cli(tmp_path, capsys, monkeypatch):
    """End to end: fake GRR reports that never name the rare items (6 % of 5 x 10^4, each of 14
    items' counts inside its region) are flagged by the likelihood ratio against every input distribution; the
    API's diagnostics carry it as ``constraint`` and its line as ``summary``, which dpdist campaign estimate prints."""
    from dpdist.cli import main

    monkeypatch.setattr("dpdist.serve._estimate_cache.SPACING", 0.0)
    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 16}
    protocol = local.from_config(config)
    rng = np.random.default_rng(48)
    with InProcessServer(str(tmp_path / "c.sqlite")) as server:
        campaign = new_campaign(server.url, config)
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin, Client(server.url) as device:
            device.submit_reports(campaign, protocol, protocol.privatize(rng.integers(0, 2, 47_000), rng=rng))
            honest = admin.estimate(campaign)["diagnostics"]
            assert honest["flagged"] is False and honest["constraint"]["test"] == "likelihood_ratio"
            assert honest["summary"].startswith("poisoning test: no sign") and "3e-06" in honest["summary"]
            device.submit_reports(campaign, protocol, rng.integers(0, 2, 3_000).astype(np.uint8))
            poisoned = admin.estimate(campaign)["diagnostics"]
        assert poisoned["flagged"] is True and poisoned["count_above"] == poisoned["count_below"] == 0
        assert poisoned["constraint"]["flagged"] is True and poisoned["constraint"]["p_value"] < 1e-6
        monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN_TOKEN)
        assert main(["campaign", "estimate", "--server", server.url, campaign]) == 0
        assert "  " + poisoned["summary"] in capsys.readouterr().out.splitlines()
        assert poisoned["summary"].startswith("POISONING SUSPECTED: the counts fit no honest population")


def _poisoning_tested() -> list[str]:
    from dpdist.serve._diagnostics import TESTED

    return sorted(TESTED)


#: the boundary's Monte Carlo (400 campaigns) runs in the full suite for these: 0.4-0.5 CPU-s each; the fast loop keeps
#: the other protocols, unary ones (l-osue, rue) among them
_SLOW_BOUNDARY = {"oue", "sue"}


def test_the_protocols_with_a_support_count_test_are_read_from_their_tags_ocms_included():
    """``TESTED`` is every registered protocol declaring ``tags.bernoulli_support``, not a closed list: OCMS (local
    hashing with Pan's range, a subclass of OLH) has OLH's structure, so an ocms campaign gets the test olh's gets."""
    from dpdist.local._registry import registered_class
    from dpdist.serve._diagnostics import TESTED, diagnostics

    assert "ocms" in TESTED and {"olh", "rlh"} <= TESTED and "hr" not in TESTED
    assert TESTED == {name for name in local.available("frequency") if registered_class(name).tags.bernoulli_support}
    for name in ("olh", "ocms"):  # 500 honest reports and 3,000 copies of one report
        protocol = local.make(name, epsilon=2.0, domain_size=16)
        honest = protocol.privatize(np.random.default_rng(3).integers(0, 16, 500), rng=4)
        forged = np.tile(np.asarray(honest[:1]), (3_000,) + (1,) * (np.asarray(honest).ndim - 1))
        aggregator = protocol.aggregator()
        aggregator.add(np.concatenate([honest, forged]))
        document = diagnostics(protocol, aggregator)
        assert document["test"] == "support_counts" and document["flagged"] is True, (name, document)
        assert document["count_above"] >= 1


#: seeded campaigns per protocol: 400 in the whole suite, 200 in the fast loop (docs/how-to/contribute.md, "A new test": a heavy
#: statistical test keeps a smaller size in the fast loop). The bound is t + 4 sqrt(t(1-t)/runs) at either count: 0.16 at
#: 400, 0.185 at 200; a false-alarm rate of 2t = 0.2 is 2 sd above 0.16 at 400 (fails 98 % of seeds), a rate of
#: 2.5t = 0.25 is 2.1 sd above 0.185 at 200 (fails 98 %): the fast case catches invalid p-values from 2.5 t up
_BOUNDARY_CASES = [case for name in _poisoning_tested() for case in (
    [pytest.param(name, 400, id=name, marks=pytest.mark.slow)] if name in _SLOW_BOUNDARY else
    [pytest.param(name, 200, id=f"{name}-200"), pytest.param(name, 400, id=name, marks=pytest.mark.slow)])]


@pytest.mark.parametrize(("name", "runs"), _BOUNDARY_CASES)
@pytest.mark.slow  # 1.3 CPU-s: a p-value law from repeated campaigns
def test_the_poisoning_tests_p_values_are_valid_on_the_boundary_of_the_honest_region(name, runs):
    """P[p-value <= t] <= t for honest reports at the boundary (everyone holds item 0: item 0's count is
    Bin(n, p*), every other item's Bin(n, q*)), so a flag at alpha/(2d) is a false alarm with probability
    <= alpha. ``runs`` seeded campaigns; tolerance 4 binomial standard deviations at ``runs`` (21 rates are checked)."""
    from dpdist.serve._diagnostics import UNARY, diagnostics

    assert "ocms" in _poisoning_tested()  # the boundary covers every protocol with the test, ocms included
    params = {"epsilon": 1.0, "domain_size": 6}
    if name in ("l-grr", "l-osue"):
        params.update(epsilon=2.0, epsilon_1=1.0)
    protocol = local.make(name, **params)
    rng = np.random.default_rng(29)
    t, n = 0.1, 400
    tests = 2 * protocol.domain_size + (name in UNARY)
    low_hits = high_hits = total_hits = 0
    for _ in range(runs):
        aggregator = protocol.simulate(np.zeros(n, dtype=np.int64), rng=rng)
        document = diagnostics(protocol, aggregator, alpha=tests * t)  # threshold t per test
        high_hits += 0 in document["items_above"]
        low_hits += 1 in document["items_below"]
        total_hits += document.get("bits_per_report", {}).get("flagged", False)
        assert diagnostics(protocol, aggregator)["flagged"] is False
    bound = t + 4 * np.sqrt(t * (1 - t) / runs)
    assert high_hits / runs <= bound and low_hits / runs <= bound and total_hits / runs <= bound


# ====================================================================== 5. privacy at ingestion
@pytest.mark.slow  # dpdist serve as a subprocess
def test_the_access_log_holds_no_client_address_batch_id_or_token_by_default(tmp_path):
    log = tmp_path / "server.log"
    with cli_server(str(tmp_path / "c.sqlite"), log_path=log, log_level="info") as (process, url):
        campaign = new_campaign(url, submit_token="device-secret-0123456789")
        body = grr_body([1, 2])
        assert put(url, campaign, "batch-7f3a9c", body, token="device-secret-0123456789").status_code == 200
        for path in (f"/campaigns/{campaign}/dashboard?token={ADMIN_TOKEN}",
                     f"/api/campaigns/{campaign}/estimate?level=0.9&token={ADMIN_TOKEN}",
                     f"/api/campaigns/{campaign}/batches/b2?submit_token=device-secret-0123456789"):
            refused = httpx.request("PUT" if "batches" in path else "GET", url + path, content=body)
            assert refused.status_code == 400 and refused.json()["error"] == "token_in_query"
            assert ADMIN_TOKEN not in refused.text
    text = log.read_text()
    assert '"PUT /api/campaigns/{campaign}/batches/{batch_id} HTTP/1.1" 200' in text  # the access log is on, of templates
    assert not re.search(r"127\.0\.0\.1:\d+ - \"", text)  # no client address
    for secret in ("batch-7f3a9c", ADMIN_TOKEN, "device-secret-0123456789", "token="):
        assert secret not in text

    full = tmp_path / "full.log"
    with cli_server(str(tmp_path / "c.sqlite"), "--access-log", "full", log_path=full, log_level="info") as (process, url):
        assert put(url, campaign, "batch-9e1d", grr_body([3]), token="device-secret-0123456789").status_code == 200
        httpx.get(f"{url}/api/campaigns/{campaign}/estimate?token={ADMIN_TOKEN}")
    text = full.read_text()
    assert re.search(rf'127\.0\.0\.1:\d+ - "PUT /api/campaigns/{campaign}/batches/- HTTP/1.1" 200', text)  # no batch id
    assert ADMIN_TOKEN not in text and "token=" not in text and "batch-9e1d" not in text


@pytest.mark.slow  # uvicorn on a socket
def test_arrival_times_are_stored_to_the_minute(tmp_path):
    path = tmp_path / "c.sqlite"
    with InProcessServer(str(path)) as server:
        campaign = new_campaign(server.url, keep_reports=True)
        for k in range(3):
            assert put(server.url, campaign, f"t{k}", grr_body([k])).status_code == 200
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            assert admin.history(campaign)[-1]["n"] == 3
    connection = sqlite3.connect(path)
    times = [row[0] for row in connection.execute("SELECT received_ms FROM batches UNION ALL SELECT received_ms FROM reports")]
    connection.close()
    assert len(times) == 6 and all(ms % 60_000 == 0 for ms in times)


@pytest.mark.slow  # uvicorn on a socket
def test_delete_removes_a_campaign_and_everything_stored_for_it(db_url, capsys, monkeypatch):
    from dpdist.cli import main

    with InProcessServer(db_url) as server:
        kept = new_campaign(server.url, keep_reports=True)
        gone = new_campaign(server.url, keep_reports=True, max_reports=10)
        other = new_campaign(server.url, enrollment=True)
        batch_id = uuid.uuid4().hex
        assert put(server.url, gone, batch_id, grr_body([1, 2], batch_id)).status_code == 200
        assert put(server.url, kept, "k", grr_body([3])).status_code == 200
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            admin.enroll(other, 2, 5)
            assert admin.delete_campaign(gone) == {"campaign": gone, "deleted": True, "batches": 1, "kept_report_batches": 1}
            with pytest.raises(ServiceRefusedError) as refused:
                admin.campaign(gone)
            assert refused.value.status == 404
            assert admin.campaign(kept)["n"] == 1
        assert httpx.delete(f"{server.url}/api/campaigns/{kept}").status_code == 401
        monkeypatch.setenv("DPDIST_ADMIN_TOKEN", ADMIN_TOKEN)
        assert main(["campaign", "delete", other, "--server", server.url]) == 2
        assert "--yes" in capsys.readouterr().err
        assert main(["campaign", "delete", other, "--server", server.url, "--yes"]) == 0
        assert f"campaign {other}: deleted" in capsys.readouterr().out
        db = server.service.store.db
        for table, column in (("campaigns", "id"), ("batches", "campaign_id"), ("reports", "campaign_id"),
                              ("enrollments", "campaign_id"), ("bound_batch_ids", "campaign_id")):
            rows = db.execute(f"SELECT COUNT(*) FROM {table} WHERE {column} IN (?, ?)", (gone, other))
            assert rows[0][0] == 0, table
        # the deleted id can be created again, empty
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            assert admin.create_campaign(gone, GRR)["n"] == 0


@pytest.mark.slow  # dpdist serve as a subprocess
def test_retention_deletes_old_raw_reports_and_the_batch_records_of_long_closed_campaigns(tmp_path):
    path = tmp_path / "c.sqlite"
    with InProcessServer(str(path)) as server:
        closed, running = new_campaign(server.url, keep_reports=True), new_campaign(server.url, keep_reports=True)
        for campaign in (closed, running):
            assert put(server.url, campaign, "old", grr_body([1, 2, 3])).status_code == 200
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            admin.close_campaign(closed)
    three_days = 3 * 86_400_000
    connection = sqlite3.connect(path)
    with connection:
        connection.execute("UPDATE campaigns SET closed_ms = closed_ms - ? WHERE id = ?", (three_days, closed))
        connection.execute("UPDATE reports SET received_ms = received_ms - ?", (three_days,))
        connection.execute("UPDATE batches SET received_ms = received_ms - ?", (three_days,))
    connection.close()
    with cli_server(str(path), "--retention-days", "2") as (process, url):
        assert put(url, running, "new", grr_body([4])).status_code == 200
        with AdminClient(url, admin_token=ADMIN_TOKEN) as admin:
            assert admin.export(running, tmp_path / "running.bin") == 1  # the 3-day-old reports are gone
            assert admin.export(closed, tmp_path / "closed.bin") == 0
            assert admin.history(closed) == [] and admin.campaign(closed)["n"] == 3  # the aggregate stays
            assert admin.estimate(closed)["n"] == 3 and admin.campaign(running)["n"] == 4


# ====================================================================== the guide's commands
def _bash_block(page: str) -> str:
    """The first ```bash block of a page of docs/."""
    text = (Path(__file__).resolve().parents[2] / "docs" / page).read_text()
    start = text.index("```bash\n") + len("```bash\n")
    return text[start: text.index("```", start)]


@pytest.mark.slow  # dpdist serve and the guide's commands as subprocesses (7 CPU-s)
def test_the_limits_and_bound_reports_guides_commands_run(tmp_path):
    """The `dpdist serve` line of "Limits" starts this server; the commands of "Reports a campaign accepts" run
    as written against it (a token good for 10 reports sends 10, then the campaign is deleted)."""
    import shlex

    (serve_line,) = [line for line in _bash_block("reference/service-limits.md").splitlines() if line.startswith("uv run dpdist serve")]
    words = shlex.split(serve_line)[4:]
    options = [w for i, w in enumerate(words) if w not in ("--db", "--port") and words[i - 1] not in ("--db", "--port")]
    assert "--rate-limit" in options and "--retention-days" in options
    script = _bash_block("how-to/bound-reports.md")
    (tmp_path / "proto.json").write_text(json.dumps(GRR))
    (tmp_path / "answers.csv").write_text("answer\n" + "\n".join(str(k % 8) for k in range(10)) + "\n")
    with cli_server(str(tmp_path / "c.sqlite"), *options) as (process, url):
        script = script.replace("http://127.0.0.1:8000", url).replace("uv run dpdist", f"{sys.executable} -m dpdist.cli")
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "DPDIST_ADMIN_TOKEN": ADMIN_TOKEN}, timeout=300)
        assert done.returncode == 0, done.stderr
        assert "10 report(s) accepted" in done.stdout and "n=10" in done.stdout and "campaign survey: deleted" in done.stdout
        assert len((tmp_path / "tokens.txt").read_text().split()) == 1000


def test_the_docs_list_every_protocol_with_a_support_count_test():
    """docs/how-to/run-a-campaign.md's list of protocols with a poisoning test is the code's (``TESTED``), rue/rlh/rws included."""
    from dpdist.serve._diagnostics import TESTED

    assert {"rue", "rlh", "rws"} <= TESTED
    page = (Path(__file__).parents[2] / "docs" / "explanation" / "poisoning.md").read_text()
    listed = page[page.index("**Which protocols have a test.** Support counts:"):page.index("below-fractions: `threshold`")]
    assert set(re.findall(r"`([a-z-]+)`", listed)) == set(TESTED)


@pytest.mark.parametrize("name", ["rue", "rlh", "rws"])
def test_the_fang_oracles_get_the_support_count_test_and_fakes_on_one_item_are_flagged(name):
    """2,000 honest reports and 2,000 copies of one report supporting item 0 (all bits set for RUE): item 0's count
    is above Bin(n, p*)'s range (and RUE's bits per report above the honest mean); the honest reports alone are not."""
    from dpdist.serve._diagnostics import diagnostics

    protocol = local.make(name, epsilon=1.0, domain_size=16)
    honest = protocol.privatize(np.arange(2000) % 16, rng=1)
    if name == "rue":
        fake = np.full((2000, honest.shape[1]), 255, dtype=honest.dtype)
    else:
        candidates = protocol.privatize(np.zeros(50, dtype=np.int64), rng=3)
        supports = np.array([protocol.aggregator().add(candidates[i : i + 1]).statistic[0] for i in range(len(candidates))])
        fake = np.repeat(candidates[np.flatnonzero(supports)[:1]], 2000, axis=0)
    clean = diagnostics(protocol, protocol.aggregator().add(honest))
    assert clean["test"] == "support_counts" and clean["flagged"] is False
    poisoned = diagnostics(protocol, protocol.aggregator().add(np.concatenate([honest, fake])))
    assert poisoned["flagged"] is True and (0 in poisoned["items_above"] or poisoned["bits_per_report"]["flagged"])


# An honest burst through the guide's nginx: answered 503 with Retry-After, never 502; slowloris still closed

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_burst.py"


@pytest.mark.slow
@pytest.mark.skipif(nginx_binary() is None, reason="nginx is not installed (.ci/run installs it)")
def test_a_burst_through_nginx_gets_no_502_and_slowloris_is_still_closed():
    run = subprocess.run([sys.executable, str(BENCH), "--devices", "300", "--slowloris", "30", "--header-timeout", "2",
                          "--timeout", "240"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    result = json.loads(run.stdout.splitlines()[-1])
    assert (result["bad_gateway"], result["unanswered"], result["refusals_without_retry_after"]) == (0, 0, 0), result
    assert set(result["statuses"]) <= {"200", "503"}, result
    assert result["acknowledged"] == result["counted"] == result["counted_batches"] == 900, result  # each counted once
    assert result["slowloris_still_open"] == 0 and result["slowloris_closed_after_max_s"] <= 2 + 1.5, result
