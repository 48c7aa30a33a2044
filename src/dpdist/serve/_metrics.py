"""Prometheus metrics of ``dpdist serve`` (``GET /metrics``, the ``prometheus-client`` library).

Each application has its own registry; the service runs in one process (uvicorn
without workers), so a scrape sees all of it.  Running several instances behind
a load balancer, scrape each one: the counters are per process and restart at 0
with it (Prometheus' ``rate()`` and ``increase()`` handle the reset).

The metrics every request updates (batches, reports, refusals, latency,
responses, requests in flight) are plain numbers of the event loop, handed to
the registry as metric families when it is read (:class:`_RequestCollector`):
the same exposition, ``_created`` times included, without a lock and a metric
object per update.

Labels take values from small fixed sets only: the route's template (never a
campaign id or a batch id), the method, the status, a refusal's error code, a
rejected report's reason, a database error's reason.  Nothing here depends on a
report's content beyond the counts the campaign API publishes already.
"""

from __future__ import annotations

import bisect
import hashlib
import hmac
import math
import time

import anyio.to_thread
import prometheus_client.metrics
from prometheus_client import CollectorRegistry, Info
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily
from prometheus_client.exposition import choose_encoder
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.utils import floatToGoString
from starlette.responses import JSONResponse, Response

from .. import __version__
from .._guard._body import NO_RESPONSE
from .._guard._protocol import CONNECTIONS_REFUSED
from ._logs import shown_status

__all__ = ["Metrics", "MetricsMiddleware"]

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
# request latency buckets, seconds: a batch commit (fsync) takes milliseconds, an estimate up to seconds
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_BOUNDS = (*_BUCKETS, math.inf)


class _ServiceCollector:
    """Values read at scrape time: the database layer's error counts, the group commits and the thread pool's queue."""

    def __init__(self, db, service=None):
        self.db, self.service = db, service

    def collect(self):
        errors = CounterMetricFamily(
            "dpdist_database_errors", "Database operations that failed because the database could not answer, by reason",
            labels=["reason"],
        )
        for reason, count in sorted(self.db.outages.errors.items()):
            errors.add_metric([reason], count)
        yield errors
        yield CounterMetricFamily(
            "dpdist_database_reconnects", "Connections the database server had dropped, replaced by a new one",
            value=self.db.outages.reconnects,
        )
        if self.service is not None:
            committer = self.service.committer
            yield CounterMetricFamily("dpdist_group_commits", "Group commits (transactions of many batches)", value=committer.groups)
            yield CounterMetricFamily("dpdist_group_commit_items", "Batches and refusals committed by group commits",
                                      value=committer.items)
            yield GaugeMetricFamily("dpdist_batches_in_progress", "Batches between their admission and their answer "
                                    "(beyond --max-queue: 503 busy)", value=self.service.queued)
        try:  # the worker threads that run database work: busy, and requests waiting for one (the queue)

            statistics = anyio.to_thread.current_default_thread_limiter().statistics()
        except Exception:  # noqa: BLE001 - not in an event loop (e.g. a registry read from a test thread)
            return
        yield GaugeMetricFamily("dpdist_threadpool_size", "Worker threads available to requests", value=statistics.total_tokens)
        yield GaugeMetricFamily("dpdist_threadpool_busy", "Worker threads running a request's work", value=statistics.borrowed_tokens)
        yield GaugeMetricFamily(
            "dpdist_threadpool_queue", "Requests waiting for a worker thread (queue depth)", value=statistics.tasks_waiting
        )


class _Gauge:
    """A gauge kept as a plain number (the event loop's only: no lock)."""

    __slots__ = ("value",)

    def __init__(self):
        self.value = 0

    def inc(self) -> None:
        self.value += 1

    def dec(self) -> None:
        self.value -= 1


def _counted(amount) -> float:
    if amount < 0:  # as prometheus_client's Counter.inc
        raise ValueError("Counters can only be incremented by non-negative amounts.")
    return float(amount)


class _RequestCollector:
    """The metrics every request updates, kept as plain numbers and given to ``prometheus_client`` as metric families
    when ``/metrics`` is read: the names, help texts, labels, values, buckets and ``_created`` times of the
    ``Counter``, ``Histogram`` and ``Gauge`` objects they replace (each an object per label set with a lock per update:
    seven locked updates a request, about 9 us of the event loop).  Updated on the event loop only."""

    def __init__(self):
        now = time.time()
        self.batches = {"new": [0.0, now], "duplicate": [0.0, now]}  # label value -> [value, created]
        self.reports = [0.0, now]
        self.rejected: dict[str, list] = {}
        self.relayed: dict[str, list] = {}  # envelope -> [value, created]
        self.refused: dict[str, list] = {}
        self.latency: dict[tuple, list] = {}  # (method, route) -> [bucket counts..., sum, created]
        self.responses: dict[tuple, list] = {}  # (method, route, status) -> [value, created]
        self.in_flight = _Gauge()
        self.bounds = _BOUNDS

    @staticmethod
    def child(children: dict, key) -> list:
        """A label set's [value, created], made at its first use (as ``.labels()`` makes a child)."""
        found = children.get(key)
        if found is None:
            found = children[key] = [0.0, time.time()]
        return found

    def collect(self):
        created = getattr(prometheus_client.metrics, "_use_created", True)  # PROMETHEUS_DISABLE_CREATED_SERIES

        def counter(name, documentation, labels, children):
            family = CounterMetricFamily(name, documentation, labels=labels)
            for key, (value, made) in list(children.items()):  # a copy: a scrape from another thread sees no change
                family.add_metric(key, value, created=made if created else None)
            return family

        yield counter("dpdist_batches", "Batches acknowledged (duplicate: a retry of a batch already counted)", ["outcome"],
                      {(outcome,): child for outcome, child in list(self.batches.items())})
        yield counter("dpdist_reports_accepted", "Reports counted into a campaign's aggregate", [], {(): self.reports})
        yield counter("dpdist_reports_rejected", "Reports of acknowledged batches that were not counted, by reason", ["reason"],
                      {(reason,): child for reason, child in list(self.rejected.items())})
        yield counter("dpdist_relayed_reports", "Reports of relayed batches counted, by envelope (ohttp: RFC 9458; sealed_v1: "
                      "dpdist's own, deprecated, from devices of earlier versions, taken until dpdist 0.2.0)", ["envelope"],
                      {(envelope,): child for envelope, child in list(self.relayed.items())})
        refused = {(reason,): child for reason, child in list(self.refused.items())}
        refused.update({(reason,): child for reason, child in list(CONNECTIONS_REFUSED.items())})  # by the protocol
        yield counter("dpdist_requests_refused", "Requests refused with an error body, by its error code", ["reason"],
                      refused)
        latency = HistogramMetricFamily("dpdist_request_duration_seconds",
                                        "Time from a request's arrival to the end of its response", labels=["method", "route"])
        for key, counts in list(self.latency.items()):
            buckets, total = [], 0.0
            for bound, count in zip(self.bounds, counts):
                total += count
                buckets.append((floatToGoString(bound), total))
            latency.add_metric(key, buckets, counts[-2])
            if created:
                latency.add_sample(latency.name + "_created", dict(zip(("method", "route"), key)), counts[-1])
        yield latency
        yield counter("dpdist_http_responses", "HTTP responses by route and status", ["method", "route", "status"],
                      self.responses)
        yield GaugeMetricFamily("dpdist_requests_in_flight", "Requests being served now", value=self.in_flight.value)


class Metrics:
    """The metrics of one application, and the ``/metrics`` endpoint.

    ``/metrics`` needs ``Authorization: Bearer <token>`` (or ``previous_token``, while it rotates); without a ``token``, ``check_admin(request)``
    decides (the admin token): counts of reports and refusals were the admins' to see before.
    """

    def __init__(self, db, *, token: str | None = None, previous_token: str | None = None, check_admin=None,
                 service=None):
        self.registry = registry = CollectorRegistry(auto_describe=True)
        # the token, and while it rotates the one it replaces (taken only beside a token)
        self._token_sha256s = tuple(hashlib.sha256(known.encode()).digest() for known in (token, token and previous_token)
                                    if known)
        self._check_admin = check_admin
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        Info("dpdist", "The dpdist version and the database engine", registry=registry).info(
            {"version": __version__, "database": db.dialect}
        )
        self._requests = requests = _RequestCollector()
        registry.register(requests)
        self.in_flight = requests.in_flight
        self._children: dict[tuple, tuple] = {}  # (method, route template, status): from small fixed sets
        registry.register(_ServiceCollector(db, service))
        self._new, self._duplicate = requests.batches["new"], requests.batches["duplicate"]  # every request's

    # ------------------------------------------------------------------ events
    def acknowledged(self, ack: dict) -> None:
        """A batch's acknowledgement went out."""
        if ack.get("duplicate"):
            self._duplicate[0] += 1.0
            return
        self._new[0] += 1.0
        requests, rejected = self._requests, ack.get("rejected")
        requests.reports[0] += _counted(int(ack.get("accepted", 0)))
        if rejected:
            for reason, count in rejected.items():
                requests.child(requests.rejected, str(reason))[0] += _counted(int(count))

    def relayed(self, groups: dict[str, int]) -> None:
        """A relayed batch was counted: its admitted reports per envelope (``ohttp``, ``sealed_v1``)."""
        for envelope, count in groups.items():
            self._requests.child(self._requests.relayed, str(envelope))[0] += _counted(count)

    def refused_request(self, code: str) -> None:
        self._requests.child(self._requests.refused, str(code))[0] += 1.0

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """One response: its latency and its status (the labelled children are looked up once per label set)."""
        key = (method, route, status)
        children = self._children.get(key)
        if children is None:
            requests = self._requests
            latency = requests.latency.get((method, route))
            if latency is None:
                latency = requests.latency[(method, route)] = [0.0] * len(requests.bounds) + [0.0, time.time()]
            children = self._children[key] = (latency, requests.child(requests.responses, (method, route, str(status))))
        latency, responses = children
        latency[-2] += seconds
        index = bisect.bisect_left(_BOUNDS, seconds)
        if index < len(_BOUNDS) and seconds <= _BOUNDS[index]:  # as Histogram.observe: the first bound >= seconds
            latency[index] += 1.0
        responses[0] += 1.0

    # ------------------------------------------------------------------ endpoint
    async def endpoint(self, request) -> Response:
        if not self._token_sha256s and self._check_admin is not None:
            self._check_admin(request)  # refused (401) unless the admin token
        elif self._token_sha256s:
            header = request.headers.get("authorization", "")
            scheme, _, offered = header.partition(" ")
            digest = hashlib.sha256((offered.strip() if scheme.lower() == "bearer" else "").encode()).digest()
            if not any([hmac.compare_digest(digest, known) for known in self._token_sha256s]):  # each compared
                return JSONResponse(
                    {"error": "unauthorized", "detail": "/metrics needs the metrics token (Authorization: Bearer ...)."},
                    status_code=401, headers={"WWW-Authenticate": "Bearer"},
                )
        encoder, content_type = choose_encoder(request.headers.get("accept"))
        return Response(encoder(self.registry), media_type=content_type, headers={"Cache-Control": "no-store"})


def route_label(scope) -> str:
    """The template of the route that served ``scope`` (``/api/campaigns/{campaign}/...``), never the path itself."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) and path else "unmatched"


class MetricsMiddleware:
    """Pure ASGI middleware: latency histogram, responses by status, requests in flight."""

    def __init__(self, app, metrics: Metrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        metrics, start, status = self.metrics, time.perf_counter(), [500]

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        metrics.in_flight.inc()
        try:
            await self.app(scope, receive, sending)
        finally:
            metrics.in_flight.dec()
            if not scope.get(NO_RESPONSE):  # not when the client went away mid-body (counted as a refusal only)
                method = scope.get("method", "") if scope.get("method", "") in _METHODS else "other"
                metrics.observe(method, route_label(scope), shown_status(scope, status[0]), time.perf_counter() - start)
