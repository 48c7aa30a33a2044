"""A server process leaves the objects it made before its first request out of full garbage collections (``_heap``)."""

from __future__ import annotations

import gc

import pytest

pytest.importorskip("starlette")


def test_a_server_process_freezes_its_startup_heap():
    from dpdist.serve._heap import freeze_startup_heap

    try:
        assert freeze_startup_heap() > 0 and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()


def test_the_command_line_and_the_workers_mark_their_application_as_a_server_process():
    import inspect

    from dpdist.cli import _serve
    from dpdist.serve import _workers

    assert "app.state.freeze_heap = True" in inspect.getsource(_serve)
    assert "app.state.freeze_heap = True" in inspect.getsource(_workers.worker_app)
