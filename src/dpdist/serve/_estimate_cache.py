"""Estimates computed once per change of a campaign, not once per viewer, and never on the ingest path.

An estimate document (:func:`~._estimates.estimate_json`) is kept per campaign
and query, with the version of the aggregate it was computed from (creation
time, state, config, reports, batches, refusals: :class:`~._aggregates.Totals`,
one cheap query).  A request for an unchanged version gets the kept document; concurrent
requests for one key wait for one computation (single flight).

A changed version is computed again, except that a key's computations start at
most every ``2 x`` the CPU time of its last one: a heavy estimate (PEM at
n = 10^6 takes seconds) asked for by any number of open dashboards while reports
keep arriving costs at most half a core, and the document served meanwhile is
the last one computed (its ``n`` says which).

The computation runs in a separate process (:mod:`._estimator`, one per server
process, started with the first estimate, at a lower CPU priority): the event
loop and the group commits never wait for the GIL of a long estimate.  Every
cache of the process shares it; the close of the last cache still open stops it
(closing one of two apps of a process leaves the other's estimate in flight).
"""

from __future__ import annotations

import collections
import json
import threading
import time

from ._estimates import estimate_json, estimate_png
from ._estimator import Estimator

__all__ = ["EstimateCache"]

#: documents kept (least recently used dropped)
SIZE = 256
#: a key's computations start at most every SPACING x the CPU seconds of its last one
SPACING = 2.0


class _Entry:
    __slots__ = ("lock", "version", "document", "started", "cost")

    def __init__(self):
        self.lock = threading.Lock()
        self.version: tuple | None = None
        self.document: dict | None = None
        self.started, self.cost = 0.0, 0.0


class EstimateCache:
    """The estimates of one :class:`~._store.Store` (see the module); ``computed`` counts the computations."""

    def __init__(self, store):
        self.store = store
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._guard = threading.Lock()
        self.computed = 0
        self._closed = False
        _opened()

    def document(self, campaign_id: str, query: dict) -> dict:
        """``GET /api/campaigns/{id}/estimate``: the estimate document of the campaign's current aggregate."""
        version = self._version(campaign_id)
        entry = self._entry((campaign_id, tuple(sorted(query.items()))))
        with entry.lock:  # one computation per key at a time; the others wait for it and take its document
            if entry.version == version and entry.document is not None:
                return entry.document
            if entry.document is not None and time.monotonic() - entry.started < SPACING * entry.cost:
                return entry.document  # computed a moment ago from an older version: computing again would cost more
            entry.started = time.monotonic()
            campaign = self.store.get(campaign_id, statistic=True)

            document, entry.cost = _compute(estimate_json, campaign, query)
            entry.version, entry.document = _version_of(campaign), document
            with self._guard:
                self.computed += 1
            return document

    def png(self, campaign_id: str, query: dict) -> bytes:
        """``GET /api/campaigns/{id}/estimate.png`` (drawn on every request: a download, not a dashboard's poll), from
        the document of :meth:`document` for the same query: the figure draws the band the JSON serves."""
        served = self.document(campaign_id, query)
        return _compute(estimate_png, self.store.get(campaign_id, statistic=True), query, served)[0]

    def close(self) -> None:
        """Forget the entries; the last cache of the process still open stops the estimator process (it must not
        outlive the server, nor take new work).  Closing twice is closing once."""
        with self._guard:
            self._entries.clear()
            closed, self._closed = self._closed, True
        if not closed and _closed_last():
            stop_estimator()

    def _version(self, campaign_id: str) -> tuple:
        row = self.store.row(campaign_id)
        totals = self.store.totals(campaign_id)
        return (row.created_ms, row.state, json.dumps(row.config, sort_keys=True), totals.n, totals.batches, totals.refusals)

    def _entry(self, key: tuple) -> _Entry:
        with self._guard:
            entry = self._entries.get(key)
            if entry is None:
                entry = self._entries[key] = _Entry()
                while len(self._entries) > SIZE:
                    self._entries.popitem(last=False)
            else:
                self._entries.move_to_end(key)
            return entry


def _version_of(campaign) -> tuple:
    return (campaign.created_ms, campaign.state, json.dumps(campaign.config, sort_keys=True), campaign.n, campaign.batches,
            sum(campaign.refused.values()))


# ---------------------------------------------------------------------- the estimator process
_ESTIMATOR = None
_ESTIMATOR_LOCK = threading.Lock()
_OPEN_CACHES = 0  # caches created and not closed yet: the estimator is theirs


def _opened() -> None:
    global _OPEN_CACHES
    with _ESTIMATOR_LOCK:
        _OPEN_CACHES += 1


def _closed_last() -> bool:
    """Count one cache closed; whether it was the last one open."""
    global _OPEN_CACHES
    with _ESTIMATOR_LOCK:
        _OPEN_CACHES -= 1
        return _OPEN_CACHES <= 0


def stop_estimator() -> None:
    """Stop this process's estimator process, if one runs (the next estimate starts a new one)."""
    global _ESTIMATOR
    with _ESTIMATOR_LOCK:
        estimator, _ESTIMATOR = _ESTIMATOR, None
    if estimator is not None:
        estimator.close()


def _compute(function, campaign, query, *more) -> tuple:
    """``function(campaign, query, *more)`` in the estimator process (one per server process), and the CPU seconds it
    took there."""
    global _ESTIMATOR
    with _ESTIMATOR_LOCK:
        if _ESTIMATOR is None:
            _ESTIMATOR = Estimator()
    return _ESTIMATOR.run(function, campaign, query, *more)
