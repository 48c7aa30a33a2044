"""The objects a server process made before its first request, left out of the garbage collector's full collections.

A ``dpdist serve`` process holds tens of thousands of objects from its start
(modules, the protocols, numpy, uvicorn, Starlette, prometheus-client) that live
as long as it does.  Every request allocates and frees short-lived objects, and
now and then Python's cyclic collector runs a full (generation 2) collection
that walks every one of them again: in process, one every few thousand requests,
about 4 us of CPU a request on average (docs/reference/benchmarks/service.md, "The service under real traffic").  :func:`freeze_startup_heap`
collects once and moves what survives to the permanent generation
(:func:`gc.freeze`), so that full collections walk only what requests made.
Objects made later are collected as before; the frozen ones are freed by their
reference counts as usual, only a cycle among them is never collected (they are
the process's own, for its lifetime).
"""

from __future__ import annotations

import gc

__all__ = ["freeze_startup_heap"]


def freeze_startup_heap() -> int:
    """Collect, then leave every surviving object out of later collections; how many objects were frozen."""
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
