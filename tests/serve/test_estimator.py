"""The service's estimator process (dpdist.serve._estimator): an estimate past its time limit is stopped, one
long estimate does not hold up another campaign's, and the process does not outlive the server."""

from __future__ import annotations

import threading
import time

import httpx
import numpy as np
import pytest

pytest.importorskip("starlette")

from serve_support import ADMIN_TOKEN, ServerProcess, admin_headers  # noqa: E402 - after the extra's check


def _pids_alive(pids) -> list[int]:
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as stat:
                if stat.read().rsplit(")", 1)[1].split()[0] != "Z":
                    alive.append(pid)
        except OSError:
            pass
    return alive


@pytest.mark.slow
def test_one_long_estimate_does_not_hold_up_another_campaigns_and_its_options_are_bounded(tmp_path):
    from dpdist.client import AdminClient, Client

    server = ServerProcess(str(tmp_path / "campaigns.sqlite"), options=("--rate-limit", "0")).start()
    try:
        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            admin.create_campaign("ages", {"protocol": "sw", "epsilon": 1.0, "bounds": [0, 100]})
            admin.open_campaign("ages")
            admin.create_campaign("modes", {"protocol": "grr", "epsilon": 2.0, "domain_size": 4})
            admin.open_campaign("modes")
        rng = np.random.default_rng(0)
        with Client(server.url) as device:
            device.submit_values("ages", np.clip(rng.normal(40, 12, 2000), 0, 100))
            device.submit_values("modes", rng.integers(0, 4, 2000))

        def expensive():  # an admin's (or a bookmarked dashboard query's) options; the client gives up after 3 s
            try:
                httpx.get(f"{server.url}/api/campaigns/ages/estimate",
                          params={"max_iterations": 10**8, "tolerance": 1e-300}, headers=admin_headers(), timeout=3)
            except httpx.TimeoutException:
                pass

        thread = threading.Thread(target=expensive, daemon=True)
        thread.start()
        thread.join()
        time.sleep(1.0)
        start = time.monotonic()
        try:  # another campaign, default options: a GRR estimate takes milliseconds
            answer = httpx.get(f"{server.url}/api/campaigns/modes/estimate", headers=admin_headers(), timeout=30)
            status = answer.status_code
        except httpx.TimeoutException:
            status = None
        assert status is not None, f"the estimate of another campaign did not answer in {time.monotonic() - start:.0f} s"
        assert status in (200, 503), status
        refused = httpx.get(f"{server.url}/api/campaigns/ages/estimate", params={"max_iterations": 10**8},
                            headers=admin_headers(), timeout=30)
        assert refused.status_code == 400 and "'max_iterations'" in refused.json()["detail"], refused.text
        refused = httpx.get(f"{server.url}/api/campaigns/ages/estimate", params={"tolerance": 1e-300},
                            headers=admin_headers(), timeout=30)
        assert refused.status_code == 400 and "'tolerance'" in refused.json()["detail"], refused.text
    finally:
        server.stop()


@pytest.mark.slow
def test_an_estimate_past_its_time_limit_is_stopped_and_the_next_one_runs():
    from dpdist.serve._estimator import Estimator
    from dpdist._guard._refusals import Busy

    estimator = Estimator(time_limit=2.0)
    try:
        assert estimator.run(abs, -3)[0] == 3  # started (its imports take a few seconds on a loaded machine)
        start = time.monotonic()
        with pytest.raises(Busy) as refused:
            estimator.run(time.sleep, 30)
        assert refused.value.code == "estimate_timeout" and time.monotonic() - start < 10
        assert estimator.run(abs, -4)[0] == 4  # a new process
    finally:
        estimator.close()
    with pytest.raises(Busy) as refused:  # closed (the server stopping): nothing goes to a new process
        estimator.run(abs, -5)
    assert refused.value.code == "shutting_down"


@pytest.mark.slow
def test_the_estimator_does_not_outlive_the_server(tmp_path):
    import subprocess
    import sys

    server = ServerProcess(str(tmp_path / "campaigns.sqlite"), options=("--rate-limit", "0", "--graceful-timeout", "2"))
    # its own session, but SIGTERM only to the server: what systemd's KillMode=mixed or a `kill PID` does
    server.start()
    try:
        from dpdist.client import AdminClient, Client

        with AdminClient(server.url, admin_token=ADMIN_TOKEN) as admin:
            admin.create_campaign("ages", {"protocol": "sw", "epsilon": 1.0, "bounds": [0, 100]})
            admin.open_campaign("ages")
        with Client(server.url) as device:
            device.submit_values("ages", np.clip(np.random.default_rng(1).normal(40, 12, 2000), 0, 100))
        # within the bounds of the options, still long: 1,000 bootstrap replicates of EMS at its tightest tolerance
        thread = threading.Thread(target=lambda: httpx.get(
            f"{server.url}/api/campaigns/ages/estimate", params={"replicates": 1000, "tolerance": 1e-12},
            headers=admin_headers(), timeout=60), daemon=True)
        thread.start()
        time.sleep(4.0)
        children = [pid for pid in server.pids() if pid != server.process.pid]
        assert children, "the estimator process was started"
        server.process.terminate()
        server.process.wait(timeout=30)
        time.sleep(5.0)
        group = subprocess.run(["pgrep", "-g", str(server.process.pid)], capture_output=True, text=True).stdout.split()
        left = _pids_alive(sorted({*children, *map(int, group)}))
        assert not left, f"processes of the stopped server still running: {left} ({sys.platform})"
    finally:
        server.stop()


@pytest.mark.slow
def test_estimates_waiting_for_the_estimator_are_bounded(monkeypatch):
    """60 estimate requests queued behind the one estimator held the server's
    thread pool and a device's config fetch waited 14-22 s. Past MAX_WAITING waiters an estimate is refused at once
    (503 estimates_busy) instead of holding a thread."""
    import threading
    import time

    from dpdist.serve import _estimator
    from dpdist._guard._refusals import Busy

    monkeypatch.setattr(_estimator, "MAX_WAITING", 1)
    estimator = _estimator.Estimator()
    try:
        estimator.run(time.sleep, 0.0)  # started (its imports done) before the race
        threads = [threading.Thread(target=estimator.run, args=(time.sleep, 2.0)) for _ in range(2)]
        for thread in threads:  # one running, one waiting
            thread.start()
        time.sleep(0.5)
        start = time.monotonic()
        with pytest.raises(Busy) as refused:
            estimator.run(time.sleep, 0.0)
        assert time.monotonic() - start < 0.5 and refused.value.code == "estimates_busy"
        for thread in threads:
            thread.join(timeout=30)
        estimator.run(time.sleep, 0.0)  # the queue drained: answered again
    finally:
        estimator.close()


def test_the_estimator_is_stopped_by_the_close_of_the_last_cache_of_the_process_not_of_the_first(monkeypatch):
    """Every app of a process shares one estimator: closing one app must not kill an estimate another app has in
    flight, and the close of the last one open stops it (each close counts once)."""
    from dpdist.serve import _estimate_cache

    class Child:  # stands for the estimator process: what the closes do to it
        closed = 0

        def close(self):
            self.closed += 1

    child = Child()
    monkeypatch.setattr(_estimate_cache, "_OPEN_CACHES", 0)
    monkeypatch.setattr(_estimate_cache, "_ESTIMATOR", child)
    first, second = _estimate_cache.EstimateCache(store=None), _estimate_cache.EstimateCache(store=None)
    first.close()
    first.close()
    assert child.closed == 0 and _estimate_cache._ESTIMATOR is child
    second.close()
    assert child.closed == 1 and _estimate_cache._ESTIMATOR is None
    third = _estimate_cache.EstimateCache(store=None)
    monkeypatch.setattr(_estimate_cache, "_ESTIMATOR", child)
    third.close()
    assert child.closed == 2 and _estimate_cache._ESTIMATOR is None


def test_an_estimate_in_flight_when_the_estimator_closes_is_refused_503(monkeypatch):
    """An estimate whose estimator the close of the last cache killed raised the process's EOFError (a
    500 to an application that embeds the service); now 503 shutting_down."""
    from dpdist.errors import DPDistError
    from dpdist.serve import _estimator

    estimator = _estimator.Estimator()

    class Process:  # stands for the child: the close kills it while the estimate waits for its answer
        stdin = stdout = None

        def poll(self):
            return None

    monkeypatch.setattr(estimator, "_started", lambda: Process())
    monkeypatch.setattr(estimator, "_stop", lambda: None)
    monkeypatch.setattr(_estimator, "_write", lambda stream, value: None)

    def killed(stream):
        estimator._closed = True  # what close() does, from another thread, meanwhile
        raise EOFError("the estimator process ended")

    monkeypatch.setattr(_estimator, "_read", killed)
    with pytest.raises(DPDistError) as refused:
        estimator.run(len, [1])
    assert getattr(refused.value, "code", None) == "shutting_down" and refused.value.status == 503
