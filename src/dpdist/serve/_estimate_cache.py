"""Estimates computed once per change of a campaign, not once per viewer, and never on the ingest path.

An estimate document (:func:`~._estimates.estimate_json`), as the answer's body
(:func:`~._estimates.estimate_body`), is kept per campaign and query, with the version of the aggregate it was computed from (creation
time, state, config, reports, batches, refusals: :class:`~._aggregates.Totals`,
one cheap query).  A request for an unchanged version gets the kept document; concurrent
requests for one key wait for one computation (single flight).

A changed version is computed again, except that a key's computations start at
most every ``2 x`` the CPU time of its last one: a heavy estimate (PEM at
n = 10^6 takes seconds) asked for by any number of open dashboards while reports
keep arriving costs at most half a core, and the document served meanwhile is
the last one computed (its ``n`` says which), answered 304 to a request that
holds it.  Only new reports, batches or refusals wait so: a campaign closed,
given another config, or deleted and created again under its id is computed at
once (its last document served the old campaign's numbers, state and epsilon for
the new one).

The computation runs in a separate process (:mod:`._estimator`, one per server
process, started with the first estimate, at a lower CPU priority), which also
renders the document as the answer's bytes: the event loop and the group commits
never wait for the GIL of a long estimate, nor for its JSON (a domain of 2*10^6
items: 321 MB, 7.5 s of the loop when the route rendered it).  Every
cache of the process shares it; the close of the last cache still open stops it
(closing one of two apps of a process leaves the other's estimate in flight).  While traces are on
(:mod:`dpdist._http._telemetry`), each computation is a span, a child of the request's that started it.
"""

from __future__ import annotations

import asyncio
import collections
import hashlib
import json
import threading
import time

from starlette.concurrency import run_in_threadpool

from .._http import _telemetry
from ._estimates import estimate_body, estimate_options, estimate_png, view_parameters
from ._estimator import Estimator, stopping
from .._guard._refusals import Conflict, Failure

__all__ = ["EstimateCache"]

#: documents kept (least recently used dropped), and their bytes at most (the one just computed is kept whatever its size)
SIZE = 256
MAX_BYTES = 512 * 2**20
#: the most items a figure draws (a frequency estimate's bars: 12 s for 10^4 items, 108 s for 10^5, past the
#: estimator's time limit under load at 2*10^6)
MAX_DRAWN_ITEMS = 20_000
#: a key's computations start at most every SPACING x the CPU seconds of its last one
SPACING = 2.0


class _Entry:
    __slots__ = ("lock", "version", "body", "tag", "started", "cost")

    def __init__(self):
        self.lock = threading.Lock()
        self.version: tuple | None = None
        self.body: bytes | None = None
        self.tag = ""  # the body's entity tag (its SHA-256's first 32 hex digits): a dashboard asks again with it
        self.started, self.cost = 0.0, 0.0


class EstimateCache:
    """The estimates of one :class:`~._store.Store` (see the module); ``computed`` counts the computations."""

    def __init__(self, store):
        self.store = store
        self._entries: collections.OrderedDict = collections.OrderedDict()
        self._guard = threading.Lock()
        self.computed = 0
        self._closed = False
        self._flights: dict[tuple, asyncio.Future] = {}  # the requests' computations in flight (shared)
        _opened()

    def body(self, campaign_id: str, query: dict) -> bytes:
        """``GET /api/campaigns/{id}/estimate``: the estimate document of the campaign's current aggregate, as the
        answer's JSON bytes (:func:`~._estimates.estimate_body`)."""
        body = self.tagged(campaign_id, query)[0]
        assert body is not None  # nothing held: a body
        return body

    def tagged(self, campaign_id: str, query: dict, held: str = "") -> tuple[bytes | None, str]:
        """:meth:`body` and its entity tag; no body (None) when ``held`` (a request's ``If-None-Match``) names the tag
        of the current document, which is answered 304 then: a dashboard polling an unchanged 321 MB document fetched
        it whole every few seconds.  A document dropped for the byte budget keeps its tag, so that one
        held is not computed again (a 643 MB one was, 85 s, each time another estimate had pushed it out)."""
        version = self._version(campaign_id)
        entry = self._entry((campaign_id, _query_key(query)))
        with entry.lock:  # one computation per key at a time; the others wait for it and take its document
            # the document of this version, or one computed a moment ago from an older count of the same campaign
            # (computing again would cost more); either answered 304 to a request that holds it (the
            # throttled one was sent whole, under the tag the request named)
            served = entry.version == version or (entry.body is not None and _recent(entry, version))
            if served and entry.tag and _names(held, entry.tag):
                return None, entry.tag
            if served and entry.body is not None:
                return entry.body, entry.tag
            entry.started, entry.body = time.monotonic(), None  # the old document is not held beside the new one
            campaign = self.store.get(campaign_id, statistic=True)

            with _telemetry.span("dpdist.estimate") as counts:  # (a span while traces are on)
                body, entry.cost = _computed(estimate_body, campaign, query)
                counts["dpdist.estimate.bytes"] = len(body)
            entry.version, entry.body, entry.tag = _version_of(campaign), body, hashlib.sha256(body).hexdigest()[:32]
            with self._guard:
                self.computed += 1
                self._trim(entry)
            return body, entry.tag

    async def shared(self, campaign_id: str, query: dict, held: str = "") -> tuple[bytes | None, str]:
        """:meth:`tagged` for a request, in flight once: concurrent requests for one estimate (the same campaign, query
        and held tag; a client's retry of a request it gave up on) await one computation, holding no worker thread
        while they wait (those blocked on the key's lock held the threads the pages' other requests, such as the
        participation page's config, waited for), and a request whose client left does not stop it.  A request that
        joins a flight gets its document, as a throttled one does; the next asks again."""
        key = (campaign_id, json.dumps(sorted(query.items())), held)
        flight = self._flights.get(key)
        if flight is None:
            flight = self._flights[key] = asyncio.ensure_future(run_in_threadpool(self.tagged, campaign_id, query, held))
            flight.add_done_callback(lambda done: self._landed(key, done))
        return await asyncio.shield(flight)

    def _landed(self, key: tuple, flight: asyncio.Future) -> None:
        """Forget a flight once it ended (its error read: every request that awaited it was answered it)."""
        self._flights.pop(key, None)
        if not flight.cancelled():
            flight.exception()

    def png(self, campaign_id: str, query: dict) -> bytes:
        """``GET /api/campaigns/{id}/estimate.png`` (drawn on every request: a download, not a dashboard's poll), from
        the document of :meth:`body` for the same query: the figure draws the band the JSON serves."""
        protocol = self.store.row(campaign_id).protocol
        # a frequency estimate's figure draws a bar an item (a heavy hitters' one, its top k)
        items = getattr(protocol, "domain_size", 0) if protocol.tags.kind == "frequency" else 0
        if items > MAX_DRAWN_ITEMS:
            raise Conflict("too_many_items_to_plot", f"Campaign {campaign_id!r} estimates {items} items; its figure is "
                           f"drawn for at most {MAX_DRAWN_ITEMS} (drawing takes about a second a thousand items, and one "
                           "estimator serves every campaign). Read the estimate as JSON (GET .../estimate, or "
                           "`dpdist campaign estimate --json`).")
        served = self.body(campaign_id, query)
        return _computed(estimate_png, self.store.get(campaign_id, statistic=True), query, served)[0]

    def close(self) -> None:
        """Forget the entries; the last cache of the process still open stops the estimator process (it must not
        outlive the server, nor take new work).  Closing twice is closing once."""
        with self._guard:
            self._entries.clear()
            closed, self._closed = self._closed, True
        if not closed and _closed_last():
            stop_estimator()

    def reopen(self) -> None:
        """Open again a cache closed by the end of its app's lifespan, as the app starts again (a lifespan run twice in
        one process refused every estimate of the second)."""
        with self._guard:
            closed, self._closed = self._closed, False
        if closed:
            _opened()

    def _version(self, campaign_id: str) -> tuple:
        row = self.store.row(campaign_id)
        totals = self.store.totals(campaign_id)
        return (row.created_ms, row.state, _digest(row.config), totals.n, totals.batches, totals.refusals)

    def _trim(self, kept: _Entry) -> None:
        """Drop the least recently used documents but ``kept`` while the documents hold more than :data:`MAX_BYTES`
        (256 documents of a domain of 2*10^6 items would hold 80 GB); each keeps its version and tag.  Under the
        guard."""
        held = sum(len(entry.body) for entry in self._entries.values() if entry.body is not None)
        for entry in list(self._entries.values()):
            if held <= MAX_BYTES:
                break
            if entry is not kept and entry.body is not None:
                held -= len(entry.body)
                entry.body = None

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


def _query_key(query: dict) -> str:
    """A query's key as its document reads it (the options, the level, the view's parameters), not as spelled:
    ``level=0.95`` and ``level=0.950`` share one document (each was computed and kept on its own).  A query refused
    there raises what its computation would."""
    options, level = estimate_options(query)
    width, replicates = view_parameters(query)
    return json.dumps([options, level, width, replicates], sort_keys=True)


def _version_of(campaign) -> tuple:
    return (campaign.created_ms, campaign.state, _digest(campaign.config), campaign.n, campaign.batches,
            sum(campaign.refused.values()))


def _digest(config: dict) -> bytes:
    """A config as a version holds it: its canonical JSON's SHA-256 (each of the 256 entries held its campaign's whole
    config, up to about 1 MB, besides the documents' budget: 246 MB)."""
    return hashlib.sha256(json.dumps(config, sort_keys=True).encode()).digest()


def _recent(entry: _Entry, version: tuple) -> bool:
    """Whether ``entry``'s document, of an older ``version`` of the same campaign (its creation, state and config: only
    its counts moved since), was computed so recently that computing again would cost more (see the module)."""
    return (entry.version is not None and entry.version[:3] == version[:3]
            and time.monotonic() - entry.started < SPACING * entry.cost)


def _names(held: str, tag: str) -> bool:
    """Whether the ``If-None-Match`` value ``held`` (its lines joined by commas) names the entity tag ``tag``: ``*``
    alone, or a list of tags compared weakly (``W/`` aside), RFC 9110 section 13.1.2 (a substring test took
    ``garbage"TAG"garbage``)."""
    held = held.strip()
    if held == "*":
        return True
    quoted = f'"{tag}"'
    return any(part.strip().removeprefix("W/") == quoted for part in held.split(","))


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
        if _OPEN_CACHES <= 0:  # the last cache closed (a server stopping): a request that waited for the key of one
            # being computed started a new estimator after the old was stopped, and held the process 120 s
            raise stopping()
        if _ESTIMATOR is None:
            _ESTIMATOR = Estimator()
    return _ESTIMATOR.run(function, campaign, query, *more)


def _computed(function, campaign, query, *more) -> tuple:
    """:func:`_compute`, a MemoryError of the estimator process (arrays of the campaign's domain: GRR at d = 8*10^6
    asked for 13 GB) said as such: a 500 ``estimate_out_of_memory``, not ``internal``."""
    try:
        return _compute(function, campaign, query, *more)
    except MemoryError:
        stop_estimator()  # its next estimate starts a new process: this one kept what it had allocated (8.6 GB)
        raise Failure("estimate_out_of_memory", f"The estimate of campaign {campaign.id!r} needs more memory than the "
                      "estimator process could allocate (it grows with the campaign's domain); run it where more memory "
                      "is free (a campaign that keeps its reports: `dpdist campaign export`, then `dpdist aggregate` and "
                      "`dpdist estimate --state` there).") from None

