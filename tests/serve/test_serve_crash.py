"""Kill -9 the service at random moments while clients submit with retries; nothing lost, nothing twice.

Four client threads submit pre-encoded batches (binary and JSON, some with
invalid rows) with retries; a killer thread SIGKILLs the server at random
(seeded) moments and restarts it.  Afterwards every batch has been
acknowledged, and the campaign's n, rejected counts, batch count and estimate
equal a one-process aggregation of the same reports: every acknowledged batch
is counted exactly once.  The same under one report per request from 16 devices
(group commits of many requests), with one and with two worker processes, each
restart checked to count every report acknowledged before its kill.

Devices ride out restarts on their first run: ``dpdist submit`` commands (its defaults but a small batch size) send
their values while the service is SIGKILLed and started again only after 6 s with nothing listening (a restart under
load took 2.3-3.9 s at load 6, longer at load 10); one of them starts while nothing listens, so it has never been
answered.  Every command finishes on its first run (the retry window, 5 minutes by default, covers the restarts) and
the campaign counts each value once; with a fresh client reported down after 4 s of refused connections, and 8
retries, every command exited 2.
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
import uuid

import httpx
import numpy as np
import pytest

from dpdist import io, local
import server_zygote
from serve_support import ADMIN_TOKEN, ServerProcess, database_url, patient_client, start_clients

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
    with database_url(request.param, tmp_path) as url:
        yield url


def open_campaign(url: str, name: str, config: dict) -> None:
    with patient_client(url, admin_token=ADMIN_TOKEN) as admin:
        admin.create_campaign(name, config)
        admin.open_campaign(name)


#: seconds a restart may take (three processes starting under that load)
RESTART_S = 180.0


def kill_at_marks(server, threads, acks: dict, total: int, marks, *, jitter=None, after_restart=None,
                  timeline: list | None = None) -> int:
    """SIGKILL and restart the server each time the acknowledged batches pass a mark (plus a random delay from
    ``jitter``), so that the kills fall mid-load however fast this machine is; ``after_restart(acknowledged before the
    kill)`` checks the restarted server. Each kill's mark, acknowledged batches and seconds to kill and to restart are
    appended to ``timeline`` (for the tests' failure messages). Returns the number of kills."""
    kills = 0
    for mark in marks:
        while any(thread.is_alive() for thread in threads) and len(acks) < mark * total:
            time.sleep(0.01)  # a kill within 10 ms of its mark, still mid-load; polling every 2 ms cost 2 % of a core
        if not any(thread.is_alive() for thread in threads):
            break
        if jitter is not None:
            time.sleep(jitter.uniform(0.0, 0.05))
        acknowledged = len(acks)
        began = time.monotonic()
        server.kill()
        killed = time.monotonic()
        kills += 1
        entry = {"mark": mark, "acknowledged": acknowledged, "kill_s": round(killed - began, 3)}
        if timeline is not None:
            timeline.append(entry)
        try:
            server.start(timeout=RESTART_S)
        except RuntimeError as error:
            error.add_note(f"kills so far: {timeline}")
            raise
        entry["restart_s"] = round(time.monotonic() - killed, 3)
        if after_restart is not None:
            after_restart(acknowledged)
    return kills


def finish(threads, timeout: float = 900.0) -> None:
    """Wait for the client threads to send all their batches, at most ``timeout`` seconds in all."""
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
    assert not any(thread.is_alive() for thread in threads), f"client threads still send after {timeout:.0f} s"


def test_sigkill_loses_nothing_and_counts_nothing_twice(database, tmp_path):
    plan, expected = make_batches(seed=20261122)
    server = ServerProcess(database, log_path=tmp_path / "server.log").start()
    stop, timeline = threading.Event(), []
    try:
        open_campaign(server.url, "crash", CONFIG)
        acks, failures, threads = start_clients(
            server.url, plan, lambda client, batch: client.submit_body("crash", *batch), stop=stop
        )
        kills = kill_at_marks(server, threads, acks, CLIENTS * BATCHES, (0.1, 0.25, 0.4, 0.55, 0.7, 0.85),
                              jitter=random.Random(7), timeline=timeline)
        finish(threads)
        assert not failures, (failures, timeline)
        assert kills >= 3, timeline
        assert len(acks) == CLIENTS * BATCHES, timeline  # every batch acknowledged
        with patient_client(server.url, admin_token=ADMIN_TOKEN) as admin:
            summary = admin.campaign("crash")
            estimate = admin.estimate("crash", postprocess="none")
        assert summary["batches"] == CLIENTS * BATCHES
        assert summary["n"] == expected.n == sum(ack["accepted"] for ack in acks.values())
        assert summary["rejected"] == {k: v for k, v in expected.rejected.items() if v}
        protocol = local.from_config(CONFIG)
        one_process = protocol.estimate(expected, postprocess="none")
        assert np.array_equal(np.array(estimate["estimate"]["frequencies"]), one_process.frequencies)
    finally:
        stop.set()
        server.stop()


ONE_CONFIG = {"protocol": "grr", "epsilon": 1.0, "domain_size": 16}
DEVICES, REPORTS_EACH = 16, 60


@pytest.mark.parametrize("workers", [1, 2])
def test_sigkill_under_one_report_per_request_loses_no_acknowledged_report(database, tmp_path, workers):
    """16 devices send one report per request (group commits of many requests; with 2 worker processes
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
    stop, timeline = threading.Event(), []
    try:
        open_campaign(server.url, "one", ONE_CONFIG)
        # a batch of one report, under its random file id
        acks, failures, threads = start_clients(
            server.url, plan, lambda client, batch: client.submit_reports("one", protocol, batch[1], batch_id=batch[0]), stop=stop
        )
        total = DEVICES * REPORTS_EACH

        def counted_after_restart(acknowledged: int) -> None:  # every one acknowledged before the kill
            with patient_client(server.url, admin_token=ADMIN_TOKEN) as admin:
                timeline[-1]["n_after"] = admin.campaign("one")["n"]
            assert timeline[-1]["n_after"] >= acknowledged, timeline

        kills = kill_at_marks(server, threads, acks, total, (0.15, 0.45, 0.75), after_restart=counted_after_restart,
                              timeline=timeline)
        finish(threads)
        assert not failures, (failures, timeline)
        assert kills == 3, timeline
        assert len(acks) == total and all(ack["accepted"] == 1 for ack in acks.values()), timeline
        with patient_client(server.url, admin_token=ADMIN_TOKEN) as admin:
            summary = admin.campaign("one")
            estimate = admin.estimate("one", postprocess="none")
        assert summary["n"] == summary["batches"] == total == expected.n
        one_process = protocol.estimate(expected, postprocess="none")
        assert np.array_equal(np.array(estimate["estimate"]["frequencies"]), one_process.frequencies)
    finally:
        stop.set()
        server.stop()


def test_two_servers_on_one_postgresql_count_once_while_one_is_sigkilled(tmp_path):
    """Several hosts: two ``dpdist serve`` processes (as on two hosts behind a load balancer) share one
    PostgreSQL; 16 devices send one report per request, half to each, to an open campaign and to one capped at 200.
    One server is SIGKILLed three times: every report acknowledged before a kill is counted (read through the other
    server: its parts and both servers' log rows, orphans included), every report of the open campaign is counted
    once, and the capped campaign takes exactly 200 although both servers admit batches into it."""
    protocol = local.from_config(ONE_CONFIG)
    rng = np.random.default_rng(20261124)
    plan = [[(uuid.uuid4().hex, protocol.privatize(rng.integers(0, 16, 1), rng=rng)) for _ in range(REPORTS_EACH // 2)]
            for _ in range(DEVICES)]
    expected = protocol.aggregator()
    for device in plan:
        for _, report in device:
            expected.add(report)

    def send(client, batch):
        ack = client.submit_reports("one", protocol, batch[1], batch_id=batch[0])
        try:
            capped = client.submit_reports("capped", protocol, batch[1], batch_id=batch[0][::-1])["accepted"]
        except Exception as error:  # noqa: BLE001 - refused once full
            capped = getattr(error, "code", repr(error))
        return {**ack, "capped": capped}

    with database_url("postgresql", tmp_path) as url:
        servers = [ServerProcess(url, log_path=tmp_path / f"server{k}.log", options=("--rate-limit", "0")).start()
                   for k in range(2)]
        stop, timeline = threading.Event(), []
        try:
            with patient_client(servers[1].url, admin_token=ADMIN_TOKEN) as admin:
                for name, cap in (("one", None), ("capped", 200)):
                    admin.create_campaign(name, ONE_CONFIG, max_reports=cap)
                    admin.open_campaign(name)
            half = DEVICES // 2
            killed = start_clients(servers[0].url, plan[:half], send, stop=stop)
            other = start_clients(servers[1].url, plan[half:], send, stop=stop)

            def counted_after_restart(acknowledged: int) -> None:  # the killed server's, and the other's so far
                by_the_other = len(other[0])
                with patient_client(servers[1].url, admin_token=ADMIN_TOKEN) as admin:
                    timeline[-1]["n_after"] = admin.campaign("one")["n"]
                timeline[-1]["by_the_other"] = by_the_other
                assert timeline[-1]["n_after"] >= acknowledged + by_the_other, timeline

            kills = kill_at_marks(servers[0], killed[2], killed[0], half * len(plan[0]), (0.2, 0.5, 0.8),
                                  after_restart=counted_after_restart, timeline=timeline)
            finish(killed[2] + other[2])
            assert not killed[1] and not other[1], (killed[1] + other[1], timeline)
            assert kills == 3, timeline
            acks = {**killed[0], **other[0]}
            total = DEVICES * len(plan[0])
            assert len(acks) == total and all(ack["accepted"] == 1 for ack in acks.values()), timeline
            capped = [ack["capped"] for ack in acks.values()]
            assert capped.count(1) == 200 and capped.count("campaign_full") == total - 200
            for server in servers:  # both hosts read the same aggregate
                with patient_client(server.url, admin_token=ADMIN_TOKEN) as admin:
                    summary = admin.campaign("one")
                    assert summary["n"] == summary["batches"] == total == expected.n
                    assert admin.campaign("capped")["n"] == 200
                    estimate = admin.estimate("one", postprocess="none")
                    one_process = protocol.estimate(expected, postprocess="none")
                    assert np.array_equal(np.array(estimate["estimate"]["frequencies"]), one_process.frequencies)
        finally:
            stop.set()
            for server in servers:
                server.stop()


# Devices ride out restarts on their first run: dpdist submit across SIGKILLs with nothing listening for seconds

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 16}
ADMIN = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
#: seconds nothing listens after each kill (longer than the 4 s after which a fresh client of main gave up)
DOWN_S = 6.0


def _submit(url: str, data, journal):
    """``dpdist submit`` of ``data`` running (:func:`server_zygote.started`: ``communicate()`` gives its output)."""
    return server_zygote.started([sys.executable, "-m", "dpdist.cli", "submit", str(data), "--campaign", "c", "--column", "v",
                                  "--server", url, "--batch-size", "50", "--journal", str(journal)],
                                 {k: v for k, v in os.environ.items() if not k.startswith("DPDIST_")}, journal.parent)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgresql"])
def test_submitters_finish_on_their_first_run_across_restarts(kind, tmp_path):
    values = np.random.default_rng(61).integers(0, 16, 4 * 600)
    files = []
    for index in range(4):
        path = tmp_path / f"device{index}.csv"
        path.write_text("v\n" + "\n".join(str(value) for value in values[index * 600 : (index + 1) * 600]) + "\n")
        files.append(path)
    with database_url(kind, tmp_path) as url:
        server = ServerProcess(url, options=("--rate-limit", "0")).start(timeout=120)
        try:
            assert httpx.post(f"{server.url}/api/campaigns", json={"campaign": "c", "config": GRR}, headers=ADMIN,
                              timeout=60).status_code == 201
            assert httpx.post(f"{server.url}/api/campaigns/c/open", headers=ADMIN, timeout=60).status_code == 200
            running = [_submit(server.url, files[index], tmp_path / f"journal{index}") for index in range(3)]
            time.sleep(1.5)
            for kill in range(3):
                server.kill()
                if kill == 0:  # a device that starts while nothing listens: never answered before
                    running.append(_submit(server.url, files[3], tmp_path / "journal3"))
                time.sleep(DOWN_S)
                server.start(timeout=120)
                time.sleep(1.0)
            outcomes = [process.communicate(timeout=600) for process in running]
            codes = [process.returncode for process in running]
            assert codes == [0] * 4, [error[-800:] for _, error in outcomes]
            assert all("did not answer" in error and "--retry-window" in error for _, error in outcomes[3:])
            document = httpx.get(f"{server.url}/api/campaigns/c", headers=ADMIN, timeout=60).json()
            assert document["n"] == len(values) and document["batches"] == 4 * 600 // 50  # each value once
        finally:
            server.stop()
