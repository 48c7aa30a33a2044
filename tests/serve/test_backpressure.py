"""The overload signals of ``dpdist serve`` (``serve/_backpressure.py``): the loop's lag, Retry-After, the lag's measure
ended with the server's lifespan."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")


def test_the_lifespan_end_leaves_no_measure_of_the_loop_pending(tmp_path):
    """The lag's measure (a task on the server's loop, started by the first batch) was left running when the lifespan
    ended: a loop stopped after it (not cancelling what is left, as the relay's tests' loop) was destroyed with it pending
    ("Task was destroyed but it is pending: Backpressure._measure").  The lifespan's end now stops it."""
    import asyncio

    import httpx

    from dpdist.serve import create_app
    from serve_support import ADMIN_TOKEN

    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN_TOKEN)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}

    async def serve_one_batch():
        async with app.router.lifespan_context(app), httpx.AsyncClient(
                transport=httpx.ASGITransport(app), base_url="http://collector") as client:
            assert (await client.post("/api/campaigns", json={"campaign": "lag", "config": config}, headers=admin)).status_code == 201
            assert (await client.post("/api/campaigns/lag/open", headers=admin)).status_code == 200
            assert (await client.put("/api/campaigns/lag/batches/b1", json={"reports": [1, 2]})).status_code == 200
            measure = app.state.service.pressure._task
            assert measure is not None and not measure.done()  # the batch started the measure
        return measure

    loop = asyncio.new_event_loop()
    try:
        measure = loop.run_until_complete(serve_one_batch())
        assert measure.cancelled()  # ended with the lifespan, before the loop stopped
    finally:
        loop.close()


def test_a_stopped_measure_starts_again_on_the_next_watch():
    import asyncio

    from dpdist.serve._backpressure import Backpressure

    async def watch_stop_watch():
        pressure = Backpressure()
        pressure.watch()
        first = pressure._task
        pressure.stop()
        await asyncio.sleep(0)
        pressure.watch()  # a lifespan run again on the same loop (tests; uvicorn's reload)
        second = pressure._task
        pressure.stop()
        await asyncio.sleep(0)
        return first, second

    first, second = asyncio.run(watch_stop_watch())
    assert first.cancelled() and second is not first and second.cancelled()


def test_the_retry_after_of_a_short_overload_is_bounded_by_how_long_it_has_lasted():
    """A 5 s flood's refusals over the second's acknowledgements told honest devices to wait 20-30 s
    after the flood had ended.  Now Retry-After is at most one second more than the overload has lasted: a device refused
    1 s into a flood is told 2 s; an overload that lasts still reaches the refusal ratio, up to 30 s; after CALM_S
    seconds without a refusal, a new overload starts from 1 s again."""
    from dpdist.serve._backpressure import CALM_S, MAX_RETRY_AFTER_S, Backpressure

    now = [1000.0]
    pressure = Backpressure(clock=lambda: now[0])

    def flood_second(refusals: int, acknowledged: int = 1) -> int:
        """One second of a flood: its refusals and acknowledgements; the Retry-After of its last refusal."""
        for _ in range(acknowledged):
            pressure.acknowledged()
        answers = [pressure.retry_after() for _ in range(refusals)]
        now[0] += 1.0
        return answers[-1]

    answers = [flood_second(100) for _ in range(40)]  # 100 refusals per acknowledged batch, second after second
    assert answers[0] == 1 and answers[1] == 2 and answers[4] == 5  # the ratio would say 30 from the second second
    assert answers[-1] == MAX_RETRY_AFTER_S  # a lasting overload: the ratio, capped at 30 s, as before
    assert all(later >= earlier for earlier, later in zip(answers, answers[1:]))
    now[0] += CALM_S + 1.0  # the flood ended
    assert flood_second(100) == 1  # a new overload starts again from 1 s
    quiet = Backpressure(clock=lambda: now[0])
    for _ in range(10):
        quiet.acknowledged()
    now[0] += 1.0
    for second in range(5):  # a light overload: the ratio (1 refusal per 10 acknowledged) says 1 s, kept
        assert quiet.retry_after() == 1
        for _ in range(10):
            quiet.acknowledged()
        now[0] += 1.0


def test_the_loop_lag_leaves_out_the_time_other_processes_held_the_processor(tmp_path, monkeypatch):
    """On a busy machine the event loop's timer fired late because other processes held the core,
    and the service refused requests a bare app served.  The lag that refuses is the loop's own: the time its thread
    waited in the run queue is left out, except what the process's other threads (the committer) ran meanwhile."""
    import time

    from dpdist.serve import _backpressure
    from dpdist.serve._backpressure import Starved

    counters = tmp_path / "schedstat"
    counters.write_text("100000000 50000000 1\n")  # this thread: 0.1 s on a processor, 0.05 s waiting for one
    process = [2.0]
    monkeypatch.setattr(_backpressure.time, "process_time", lambda: process[0])
    starved = Starved(str(counters))
    mark = starved.mark()
    with open(counters, "r+") as rewrite:  # 10 ms of its own work, 80 ms more in the run queue
        rewrite.write("110000000 130000000 2\n")
    process[0] += 0.010  # nothing else of the process ran: the 80 ms were other processes'
    assert abs(starved.since(mark) - 0.080) < 1e-9
    process[0] += 0.060  # the committer ran 60 ms of them: only 20 ms were the machine's
    assert abs(starved.since(mark) - 0.020) < 1e-9
    process[0] += 0.100  # more than the wait: none of it was the machine's
    assert starved.since(mark) == 0.0
    assert Starved(str(tmp_path / "absent")).since(Starved(str(tmp_path / "absent")).mark()) == 0.0
    monkeypatch.undo()
    real = Starved()  # this thread's own counters (Linux): a wait is never negative
    mark = real.mark()
    time.sleep(0.01)
    assert real.since(mark) >= 0.0


@pytest.mark.parametrize("machine_held_it", [False, True])
def test_a_loop_late_by_its_own_work_is_overloaded_and_one_late_by_the_machine_is_not(machine_held_it, monkeypatch):
    import asyncio
    import time

    from dpdist.serve import _backpressure

    class Machine:  # the run-queue wait the kernel would report: all of the loop's lateness, or none of it
        def mark(self):
            return time.monotonic()

        def since(self, mark):
            return time.monotonic() - mark if machine_held_it else 0.0

    monkeypatch.setattr(_backpressure, "Starved", Machine)

    async def late_loop():
        pressure = _backpressure.Backpressure()
        pressure.watch()
        await asyncio.sleep(0.05)
        time.sleep(0.15)  # the loop's thread held for 150 ms
        await asyncio.sleep(0.001)
        return pressure.overloaded

    assert asyncio.run(late_loop()) is not machine_held_it
