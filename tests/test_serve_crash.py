"""Kill -9 the service at random moments while clients submit with retries; nothing lost, nothing twice.

Four client threads submit pre-encoded batches (binary and JSON, some with
invalid rows) with retries; a killer thread SIGKILLs the server at random
(seeded) moments and restarts it.  Afterwards every batch has been
acknowledged, and the campaign's n, rejected counts, batch count and estimate
equal a one-process aggregation of the same reports: every acknowledged batch
is counted exactly once.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid

import numpy as np
import pytest

from dpdist import io, local
from dpdist.client import Client
from serve_support import ADMIN_TOKEN, PostgresCluster, ServerProcess, postgres_available

pytestmark = pytest.mark.slow

CONFIG = {"protocol": "grr", "epsilon": 1.0, "domain_size": 16}
CLIENTS, BATCHES, ROWS = 4, 25, 400


def make_batches(seed: int):
    """Per client, a list of (batch id, body, content type); and the one-process aggregate of all of them."""
    protocol = local.from_config(CONFIG)
    rng = np.random.default_rng(seed)
    expected = protocol.aggregator()
    plan = []
    for client in range(CLIENTS):
        batches = []
        for index in range(BATCHES):
            reports = protocol.privatize(rng.integers(0, 16, ROWS), rng=rng)
            batch_id = f"client{client}-batch{index}"
            expected.add(reports)
            if index % 5 == 4:  # a JSON batch with invalid rows: counted by reason, the valid rows kept
                body = json.dumps({"reports": reports.tolist() + [16, -1, None]}).encode()
                batches.append((batch_id, body, "application/json"))
                for reason, count in (("out_of_range", 2), ("missing", 1)):
                    expected.rejected[reason] = expected.rejected.get(reason, 0) + count
            else:
                batches.append((batch_id, io.encode_record(protocol, reports), "application/octet-stream"))
        plan.append(batches)
    return plan, expected


@pytest.fixture(params=["sqlite", "postgresql"])
def database(request, tmp_path):
    if request.param == "sqlite":
        yield str(tmp_path / "campaigns.sqlite")
        return
    if not postgres_available():
        pytest.skip("PostgreSQL (initdb) is not installed; .ci/run installs the postgresql package")
    cluster = PostgresCluster().start()
    yield cluster.new_database()
    cluster.stop()


def test_sigkill_loses_nothing_and_counts_nothing_twice(database, tmp_path):
    plan, expected = make_batches(seed=20261122)
    server = ServerProcess(database, log_path=tmp_path / "server.log").start()
    try:
        with Client(server.url, admin_token=ADMIN_TOKEN) as admin:
            admin.create_campaign("crash", CONFIG)
            admin.open_campaign("crash")
        acks: dict[str, dict] = {}
        failures: list[BaseException] = []

        def submit(batches):
            try:
                with Client(server.url, retries=200, backoff=0.05) as client:
                    for batch_id, body, kind in batches:
                        acks[batch_id] = client.submit_body("crash", batch_id, body, kind)
            except BaseException as error:  # reported below
                failures.append(error)

        threads = [threading.Thread(target=submit, args=(batches,)) for batches in plan]
        for thread in threads:
            thread.start()
        # kill when the acknowledged batches pass each mark (plus a random delay), so that the kills
        # fall mid-load however fast this machine is
        killer_rng = random.Random(7)
        total = CLIENTS * BATCHES
        kills = 0
        for mark in (0.1, 0.25, 0.4, 0.55, 0.7, 0.85):
            while any(thread.is_alive() for thread in threads) and len(acks) < mark * total:
                time.sleep(0.005)
            if not any(thread.is_alive() for thread in threads):
                break
            time.sleep(killer_rng.uniform(0.0, 0.05))
            server.kill()
            kills += 1
            server.start()
        for thread in threads:
            thread.join(timeout=600)
        assert not failures, failures
        assert kills >= 3
        assert len(acks) == CLIENTS * BATCHES  # every batch acknowledged
        with Client(server.url, admin_token=ADMIN_TOKEN) as admin:
            summary = admin.campaign("crash")
            estimate = admin.estimate("crash", postprocess="none")
        assert summary["batches"] == CLIENTS * BATCHES
        assert summary["n"] == expected.n == sum(ack["accepted"] for ack in acks.values())
        assert summary["rejected"] == {k: v for k, v in expected.rejected.items() if v}
        protocol = local.from_config(CONFIG)
        one_process = protocol.estimate(expected, postprocess="none")
        assert np.array_equal(np.array(estimate["estimate"]["frequencies"]), one_process.frequencies)
    finally:
        server.stop()


ONE_CONFIG = {"protocol": "grr", "epsilon": 1.0, "domain_size": 16}
DEVICES, REPORTS_EACH = 16, 60


@pytest.mark.parametrize("workers", [1, 2])
def test_sigkill_under_one_report_per_request_loses_no_acknowledged_report(database, tmp_path, workers):
    """Issue 28: 16 devices send one report per request (group commits of many requests; with 2 worker processes
    too) while the whole server is SIGKILLed three times. Every report acknowledged before a kill is counted after
    the restart, every report is finally acknowledged, and each is counted exactly once."""
    protocol = local.from_config(ONE_CONFIG)
    rng = np.random.default_rng(20261123)
    plan = [[(uuid.uuid4().hex, protocol.privatize(rng.integers(0, 16, 1), rng=rng)) for _ in range(REPORTS_EACH)]
            for _ in range(DEVICES)]
    expected = protocol.aggregator()
    for device in plan:
        for _, report in device:
            expected.add(report)
    server = ServerProcess(database, log_path=tmp_path / "server.log", workers=workers, options=("--rate-limit", "0")).start()
    try:
        with Client(server.url, admin_token=ADMIN_TOKEN) as admin:
            admin.create_campaign("one", ONE_CONFIG)
            admin.open_campaign("one")
        acks: dict[str, dict] = {}
        failures: list[BaseException] = []

        def device(batches):
            try:
                with Client(server.url, retries=400, backoff=0.05) as client:
                    for batch_id, report in batches:  # a batch of one report, under its random file id
                        acks[batch_id] = client.submit_reports("one", protocol, report, batch_id=batch_id)
            except BaseException as error:  # reported below
                failures.append(error)

        threads = [threading.Thread(target=device, args=(batches,)) for batches in plan]
        for thread in threads:
            thread.start()
        total, kills = DEVICES * REPORTS_EACH, 0
        for mark in (0.15, 0.45, 0.75):
            while any(thread.is_alive() for thread in threads) and len(acks) < mark * total:
                time.sleep(0.002)
            if not any(thread.is_alive() for thread in threads):
                break
            acknowledged = len(acks)  # every one of these was acknowledged before the kill
            server.kill()
            kills += 1
            server.start()
            with Client(server.url, admin_token=ADMIN_TOKEN) as admin:
                assert admin.campaign("one")["n"] >= acknowledged
        for thread in threads:
            thread.join(timeout=900)
        assert not failures, failures
        assert kills == 3
        assert len(acks) == total and all(ack["accepted"] == 1 for ack in acks.values())
        with Client(server.url, admin_token=ADMIN_TOKEN) as admin:
            summary = admin.campaign("one")
            estimate = admin.estimate("one", postprocess="none")
        assert summary["n"] == summary["batches"] == total == expected.n
        one_process = protocol.estimate(expected, postprocess="none")
        assert np.array_equal(np.array(estimate["estimate"]["frequencies"]), one_process.frequencies)
    finally:
        server.stop()
