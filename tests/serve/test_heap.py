"""A server process leaves the objects it made before its first request out of full garbage collections (``_heap``)."""

from __future__ import annotations

import gc
import weakref

import pytest

pytest.importorskip("starlette")


def test_a_server_process_freezes_its_startup_heap():
    from dpdist.serve._heap import freeze_startup_heap

    class Node:
        pass

    before = gc.get_freeze_count()
    node = Node()
    node.itself = node  # a cycle nobody holds: collected first, not frozen
    gone = weakref.ref(node)
    del node
    assert freeze_startup_heap() > before  # (frozen objects are still freed by their counts: no exact figure)
    assert gone() is None
    # no gc.unfreeze(): it would also unfreeze what tests/conftest.py froze after collection, and every later full
    # collection of this process would walk those objects again (the pytest process freezes its heap the same way)


def test_the_command_line_and_the_workers_mark_their_application_as_a_server_process():
    import inspect

    from dpdist.cli import _serve
    from dpdist.serve import _workers

    assert "app.state.freeze_heap = True" in inspect.getsource(_serve)
    assert "app.state.freeze_heap = True" in inspect.getsource(_workers.worker_app)
