"""A request cut short by the server's shutdown: 503 ``shutting_down``, not uvicorn's 500 (dpdist._guard._shutdown).

Each test runs a fake ASGI application in a task of its own, as uvicorn runs a request, and cancels that task as
uvicorn's shutdown does once ``--graceful-timeout`` is up (``task.cancel(msg)``, the task not awaited); the real
servers are tested in tests/serve/test_serve_abuse.py (``dpdist serve`` and SIGTERM) and tests/serve/test_limits.py
(``dpdist serve`` and ``dpdist relay`` in this process).
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time

import anyio
import pytest
from starlette.concurrency import run_in_threadpool

from dpdist._guard import Limits, guard
from dpdist._guard._shutdown import ShutdownMiddleware

#: what uvicorn's shutdown says when it cancels a request's task (uvicorn/server.py)
UVICORN = "Task cancelled, timeout graceful shutdown exceeded"
SCOPE = {"type": "http", "method": "GET", "path": "/slow", "headers": [], "client": ("127.0.0.1", 5000)}
BOUND_S = 5.0
needs_cancelling = pytest.mark.skipif(sys.version_info < (3, 11), reason="Task.cancelling: Python 3.11+")


def serve(app, wait, *, cancel: bool = True) -> tuple[asyncio.Task, list]:
    """Run ``app`` on one request; once the application's ``wait`` (a coroutine function: what it awaits last) has
    begun, cancel its task as uvicorn's shutdown does (``cancel``); the task, ended, and the messages it sent."""

    async def main():
        reached, sent = asyncio.Event(), []

        async def waiting(*arguments):
            reached.set()
            await wait(*arguments)

        async def send(message):
            sent.append(message)

        async def receive():
            await asyncio.Event().wait()  # the body does not come

        task = asyncio.create_task(app(dict(SCOPE), receive, send, waiting))
        await asyncio.wait_for(reached.wait(), BOUND_S)
        await asyncio.sleep(0.01)  # into the wait
        if cancel:
            task.cancel(msg=UVICORN)
        await asyncio.wait([task], timeout=BOUND_S)  # uvicorn does not wait: the test bounds how long the task takes
        assert task.done(), "the request's task did not end"
        return task, sent

    return asyncio.run(main())


def application(answer_first: bool = False, stack=None):
    """A fake application (``app(scope, receive, send, wait)``) behind ``stack`` (a function of an ASGI app: the layer
    under test); ``answer_first``: it begins its answer before it waits."""

    def build(wait):
        async def app(scope, receive, send):
            if answer_first:
                await send({"type": "http.response.start", "status": 200, "headers": []})
            await wait()
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"{}"})

        return stack(app) if stack else app

    async def run(scope, receive, send, wait):
        await build(wait)(scope, receive, send)

    return run


def shutdown_layer(refused=None):
    return lambda app: ShutdownMiddleware(app, refused=refused)


def guard_layer():
    return lambda app: guard(app, Limits(), max_body_bytes=1 << 20)


LAYERS = {"shutdown": shutdown_layer, "guard": guard_layer}


def assert_503(sent: list) -> dict:
    """The answer is 503 shutting_down with Retry-After and the connection closed; its JSON document."""
    assert [message["type"] for message in sent] == ["http.response.start", "http.response.body"]
    start, body = sent
    headers = dict(start["headers"])
    assert start["status"] == 503
    assert headers[b"retry-after"] == b"5" and headers[b"connection"] == b"close"
    assert headers[b"content-type"] == b"application/json" and int(headers[b"content-length"]) == len(body["body"])
    document = json.loads(body["body"])
    assert document["error"] == "shutting_down" and "retry" in document["detail"]
    return document


def forever():
    return asyncio.Event().wait()


@needs_cancelling
@pytest.mark.parametrize("layer", LAYERS)
def test_a_request_the_shutdown_cancels_is_answered_503_and_its_task_ends(layer, caplog):
    refused = []
    stack = shutdown_layer(lambda scope, code: refused.append(code)) if layer == "shutdown" else guard_layer()
    with caplog.at_level(logging.DEBUG):
        task, sent = serve(application(stack=stack), forever)
    assert_503(sent)
    assert not task.cancelled() and task.exception() is None  # the task ended at once: nothing raised to uvicorn
    assert refused == (["shutting_down"] if layer == "shutdown" else [])
    warnings = [record for record in caplog.records if record.levelno >= logging.WARNING]
    assert len(warnings) == 1 and warnings[0].levelno == logging.WARNING and warnings[0].exc_info is None
    assert "503 shutting_down" in warnings[0].getMessage()


@needs_cancelling
@pytest.mark.parametrize("layer", LAYERS)
def test_a_request_waiting_for_a_thread_or_inside_a_cancel_scope_is_answered_503(layer):
    """What a long estimate does (run_in_threadpool: anyio's shielded wait for a thread, which uvicorn's cancellation
    still ends), and a wait inside the application's own cancel scope (which does not catch a cancellation from
    outside)."""

    async def in_a_thread():
        await run_in_threadpool(time.sleep, 0.3)

    async def in_a_scope():
        with anyio.CancelScope():
            await forever()

    for wait in (in_a_thread, in_a_scope):
        task, sent = serve(application(stack=LAYERS[layer]()), wait)
        assert_503(sent)
        assert not task.cancelled()


@pytest.mark.parametrize("layer", LAYERS)
def test_the_applications_own_cancellations_are_not_taken_for_the_shutdown(layer):
    """A cancel scope or a timeout that cancels inside the application catches its own cancellation: the application
    answers as it would; a CancelledError that leaves the application while its task is not being cancelled (a
    future cancelled elsewhere) propagates, answered by no one here."""

    async def scopes():
        with anyio.move_on_after(0.01):
            await forever()
        with anyio.CancelScope() as scope:
            scope.cancel()
            await anyio.sleep(1)
        with pytest.raises((asyncio.TimeoutError, TimeoutError)):
            await asyncio.wait_for(forever(), 0.01)

    task, sent = serve(application(stack=LAYERS[layer]()), scopes, cancel=False)
    assert [message.get("status") for message in sent] == [200, None] and task.exception() is None

    async def cancelled_elsewhere():
        future = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().call_soon(future.cancel)
        await future

    if sys.version_info >= (3, 11):  # (3.10 has no count of a task's cancellations: module dpdist._guard._shutdown)
        task, sent = serve(application(stack=LAYERS[layer]()), cancelled_elsewhere, cancel=False)
        assert task.cancelled() and sent == []


@pytest.mark.parametrize("layer", LAYERS)
def test_an_answer_already_begun_is_left_to_uvicorn(layer, caplog):
    """The cancellation propagates (uvicorn closes the connection), and no 503 follows the answer begun."""
    with caplog.at_level(logging.WARNING):
        task, sent = serve(application(answer_first=True, stack=LAYERS[layer]()), forever)
    assert task.cancelled()
    assert [message["status"] for message in sent] == [200]
    assert not caplog.records


@needs_cancelling
def test_a_request_cancelled_while_the_guard_waits_for_its_body_is_answered_503():
    """The body layer of dpdist._guard waits for the body's next bytes with a deadline (asyncio.timeout): the
    shutdown's cancellation passes it, and is answered."""

    async def run(scope, receive, send, wait):
        async def reading(scope, receive, send):
            await wait(receive)  # the body never comes (within the body timeout)
            await send({"type": "http.response.start", "status": 200, "headers": []})

        await guard(reading, Limits(), max_body_bytes=1 << 20)({**scope, "method": "PUT"}, receive, send)

    task, sent = serve(run, lambda receive: receive())
    assert_503(sent)
    assert not task.cancelled()
