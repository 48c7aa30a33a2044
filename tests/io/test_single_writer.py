"""The one writer thread of every dpdist store: groups, answers after the write, keys apart, callers who gave up."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import time

import pytest

from dpdist._io._single_writer import SingleWriter


class Recorder(SingleWriter):
    """Writes nothing: records each group; an item ``"bad"`` is answered with an error, ``"crash"`` fails the group."""

    def __init__(self, **options):
        super().__init__(name="test-writer", **options)
        self.groups_seen: list[list] = []
        self.gate = threading.Event()
        self.gate.set()
        self.housekeeping = 0

    def write(self, items):
        self.gate.wait(10)
        if "crash" in items:
            raise RuntimeError("the disk is gone")
        self.groups_seen.append(list(items))
        return [ValueError(item) if item == "bad" else f"ok {item}" for item in items]

    def group_key(self, item):
        return item if str(item).startswith("batch") else None

    def failed(self, error):
        pass  # answered to every caller below; nothing to log in a test

    def between_groups(self, finishing):
        self.housekeeping += 1


def _taken(writer):
    """Wait until the writer thread took every waiting item (and waits at its gate, inside ``write``)."""
    deadline = time.monotonic() + 10
    while writer._thread is None or writer.waiting:
        assert time.monotonic() < deadline, "the writer never took its item"
        time.sleep(0.001)


def test_waiting_items_are_written_as_one_group_and_each_caller_gets_its_own_outcome():
    writer = Recorder()
    writer.gate.clear()  # the first item is being written while the others arrive
    first = writer.submit("a")
    _taken(writer)
    futures = [writer.submit(item) for item in ("b", "bad", "c")]
    writer.gate.set()
    assert first.result(10) == "ok a" and [f.result(10) for f in futures[::2]] == ["ok b", "ok c"]
    with pytest.raises(ValueError, match="bad"):
        futures[1].result(10)
    writer.stop()
    assert writer.groups_seen == [["a"], ["b", "bad", "c"]] and writer.groups == 2 and writer.items == 4
    assert writer.housekeeping >= 2  # between the groups and at the stop


def test_a_failed_write_is_every_callers_error_and_the_writer_goes_on():
    writer = Recorder()
    writer.gate.clear()
    blocker = writer.submit("x")
    _taken(writer)
    doomed = [writer.submit(item) for item in ("y", "crash")]
    writer.gate.set()
    assert blocker.result(10) == "ok x"
    for future in doomed:
        with pytest.raises(RuntimeError, match="the disk is gone"):
            future.result(10)
    assert writer.commit_now("z") == "ok z"
    writer.stop()


def _queued_behind(writer, first, items) -> tuple:
    """``first`` being written while ``items`` arrive: the futures of ``first`` and of ``items``, the writer let go."""
    writer.gate.clear()
    blocker = writer.submit(first)
    _taken(writer)
    futures = [writer.submit(item) for item in items]
    writer.gate.set()
    return blocker, futures


def test_items_of_one_key_never_share_a_group():
    writer = Recorder()
    blocker, futures = _queued_behind(writer, "x", ("batch-1", "batch-1", "other"))
    assert [f.result(10) for f in futures] == ["ok batch-1", "ok batch-1", "ok other"] and blocker.done()
    writer.stop()
    assert writer.groups_seen[1:] == [["batch-1"], ["batch-1", "other"]]


def test_a_caller_who_gave_up_before_the_writer_took_its_item_is_not_written():
    writer = Recorder()
    writer.gate.clear()
    blocker = writer.submit("x")
    _taken(writer)
    given_up, kept = writer.submit("gone"), writer.submit("kept")
    assert given_up.cancel()
    writer.gate.set()
    assert kept.result(10) == "ok kept" and blocker.result(10) == "ok x"
    writer.stop()
    assert ["gone"] not in writer.groups_seen and all("gone" not in group for group in writer.groups_seen)
    with pytest.raises(concurrent.futures.CancelledError):
        given_up.result(0)


def test_event_loop_callers_are_answered_in_their_loop():
    writer = Recorder(delay_s=0.05, min_group=4)  # waits a little for a group of four

    async def main():
        return await asyncio.gather(*(writer.commit(item) for item in ("p", "q", "r", "s")))

    assert asyncio.run(main()) == ["ok p", "ok q", "ok r", "ok s"]
    writer.stop()
    assert writer.groups_seen == [["p", "q", "r", "s"]]


class Costly(Recorder):
    """Items ``"heavy..."`` cost 60 of a group's 100; the others 0 (cheap)."""

    def item_cost(self, item):
        return 60 if str(item).startswith("heavy") or str(item).startswith("batch-heavy") else 0


def test_a_queue_of_costly_items_holds_a_cheap_one_one_group_not_the_whole_queue():
    """20 costly batches queued at once (one client's burst) were one group, and another campaign's cheap
    batch waited for all of them (30.7 s); a group takes costly items up to its bound, cheap ones ahead of the rest."""
    writer = Costly(max_group_cost=100)
    first, futures = _queued_behind(writer, "a", ("heavy1", "heavy2", "heavy3", "cheap", "batch-heavy4", "batch-heavy4"))
    assert first.result(10) == "ok a" and all(future.result(10).startswith("ok") for future in futures)
    writer.stop()
    # the first costly item goes whatever it costs; the cheap one goes ahead of the costly ones left; an item after a
    # left one of its key waits with it (and the same key twice never shares a group)
    assert writer.groups_seen == [["a"], ["heavy1", "cheap"], ["heavy2"], ["heavy3"], ["batch-heavy4"], ["batch-heavy4"]]


def test_without_a_cost_bound_the_groups_are_as_before():
    writer = Costly()
    first, futures = _queued_behind(writer, "a", ("heavy1", "heavy2", "cheap"))
    assert first.result(10) == "ok a" and [future.result(10) for future in futures]
    writer.stop()
    assert writer.groups_seen == [["a"], ["heavy1", "heavy2", "cheap"]]


class Finishing(Recorder):
    """Its last housekeeping (at the stop) says it has begun and waits until the test handed over one more item."""

    def __init__(self):
        super().__init__()
        self.finishing, self.handed = threading.Event(), threading.Event()

    def between_groups(self, finishing):
        if finishing:
            self.finishing.set()
            self.handed.wait(10)


def test_an_item_handed_over_while_the_writer_finishes_is_written_not_left_waiting():
    """The thread had decided to end, but not yet said so, when the item came: nobody took it, and its caller (a relay
    request) waited for good."""
    writer = Finishing()
    assert writer.submit("a").result(10) == "ok a"
    stopping = threading.Thread(target=writer.stop)
    stopping.start()
    assert writer.finishing.wait(10)
    late = writer.submit("late")
    writer.handed.set()
    assert late.result(10) == "ok late"
    stopping.join(10)
    assert writer.groups_seen == [["a"], ["late"]]


class Breaking(Recorder):
    """Its housekeeping raises once (a bug) when ``broken`` is set: the thread dies."""

    broken = False

    def between_groups(self, finishing):
        if self.broken:
            self.broken = False
            raise RuntimeError("housekeeping bug")


def test_a_writer_thread_that_dies_answers_every_caller_still_waiting_and_the_next_item_starts_another(caplog):
    writer = Breaking()
    writer.broken = True  # the housekeeping after x's group raises while y waits
    blocker, (waiting,) = _queued_behind(writer, "x", ("y",))
    assert blocker.result(10) == "ok x"
    with pytest.raises(RuntimeError, match="test-writer: the writer thread ended .*housekeeping bug"):
        waiting.result(10)

    async def in_a_loop():
        return await writer.commit("z")

    assert asyncio.run(in_a_loop()) == "ok z"
    writer.stop()
    assert "test-writer: the writer thread ended" in caplog.text and "housekeeping bug" in caplog.text
