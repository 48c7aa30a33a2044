"""One rule for every client's retries (``dpdist._http._retry``): a window of time from the first failure, pauses doubling to
10 s jittered over their upper half or as long as ``Retry-After`` asks, a count of attempts as a further bound, and
what a caller can say to a person about the attempts left."""

from __future__ import annotations

import pytest

from dpdist._http._retry import DEFAULT_RETRY_WINDOW_S, MAX_BACKOFF_S, Retries, describe_window


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def _run_out(retries: Retries, clock: Clock, asked=None) -> list[float]:
    """Every pause ``retries`` gives before it gives none, the clock moved by each."""
    pauses = []
    while (pause := retries.pause(asked)) is not None:
        pauses.append(pause)
        clock.now += pause
    return pauses


def test_the_window_is_filled_and_its_last_attempt_comes_at_its_end():
    clock = Clock()
    pauses = _run_out(Retries(backoff=0.25, clock=clock), clock)
    assert sum(pauses) == pytest.approx(DEFAULT_RETRY_WINDOW_S) and max(pauses) <= MAX_BACKOFF_S
    assert 0.125 <= pauses[0] <= 0.25 and 0.25 <= pauses[1] <= 0.5  # doubling, over the upper half
    assert 29 <= len(pauses) <= 60  # 0.25 s doubling to 10 s, 50-100% of each: about 35 attempts in 5 minutes


def test_the_count_bounds_the_attempts_and_the_attempts_left_count_the_next_ones():
    clock = Clock()
    retries = Retries(retries=3, clock=clock)
    assert retries.pause() is not None and retries.attempts_left() == 3 - 1 + 1  # after 1 failure: attempts 2, 3, 4
    assert retries.pause() is not None and retries.attempts_left() == 2
    assert retries.pause() is not None and retries.attempts_left() == 1
    assert retries.pause() is None
    assert Retries(window=0, clock=clock).pause() is None  # 0: never retried


def test_retry_after_is_never_cut_short():
    clock = Clock()
    retries = Retries(window=60.0, clock=clock)
    assert 20.0 <= retries.pause(20.0) <= 30.0  # as long as asked, up to 50% later
    clock.now += 55.0
    assert retries.pause(20.0) is None  # past the window: no earlier attempt than asked, so none
    assert Retries(window=10.0, clock=clock).pause(30.0) is None


def test_the_window_said_to_a_person():
    assert [describe_window(s) for s in (45, 300, 90 * 60, 3 * 3600)] == ["45 s", "5 min", "90 min", "3.0 h"]
    assert describe_window(450) == "7.5 min"


def test_the_time_spent_counts_the_first_attempt_and_the_window_counts_from_its_failure():
    clock = Clock()
    retries = Retries(window=0.0, clock=clock)  # made as the first attempt starts
    clock.now += 60.0  # the attempt times out after 60 s
    assert retries.pause() is None
    assert retries.spent == 60.0 and retries.elapsed == 0.0  # the message said "over 0.0 s"


def test_a_timed_out_attempt_says_how_long_it_took(monkeypatch):
    httpx = pytest.importorskip("httpx")
    from types import SimpleNamespace

    from dpdist.client import Client
    from dpdist.errors import ServiceUnavailableError

    clock = Clock()
    monkeypatch.setattr("dpdist._http._retry.time", SimpleNamespace(monotonic=clock))  # the retries' clock only

    def timed_out(request):
        clock.now += 60.0
        raise httpx.ReadTimeout("not whole 60 s after the request was sent", request=request)

    with Client("http://127.0.0.1:9", retry_window=0, transport=httpx.MockTransport(timed_out)) as client:
        with pytest.raises(ServiceUnavailableError) as error:
            client.config("c")
    assert "after 1 attempt(s) over 60.0 s" in str(error.value)


def test_a_retry_after_in_other_digits_is_unreadable_not_an_error():
    """``"²"`` is a digit to ``str.isdigit`` but not to ``float``: a 503's header crashed the client."""
    from dpdist._http._retry import retry_after

    assert [retry_after(value) for value in ("\u00b2", "\u0663", "1\u00b2", "\uff11")] == [None] * 4
    assert retry_after(" 7 ") == 7.0
