"""Prometheus metrics of ``dpdist serve`` (``GET /metrics``, the ``prometheus-client`` library).

Each application has its own registry; the service runs in one process (uvicorn
without workers), so a scrape sees all of it.  Running several instances behind
a load balancer, scrape each one: the counters are per process and restart at 0
with it (Prometheus' ``rate()`` and ``increase()`` handle the reset).

Labels take values from small fixed sets only: the route's template (never a
campaign id or a batch id), the method, the status, a refusal's error code, a
rejected report's reason, a database error's reason.  Nothing here depends on a
report's content beyond the counts the campaign API publishes already.
"""

from __future__ import annotations

import hashlib
import hmac
import time

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.exposition import choose_encoder
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from starlette.responses import JSONResponse, Response

__all__ = ["Metrics", "MetricsMiddleware"]

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
# request latency buckets, seconds: a batch commit (fsync) takes milliseconds, an estimate up to seconds
_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


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
            import anyio.to_thread

            statistics = anyio.to_thread.current_default_thread_limiter().statistics()
        except Exception:  # noqa: BLE001 - not in an event loop (e.g. a registry read from a test thread)
            return
        yield GaugeMetricFamily("dpdist_threadpool_size", "Worker threads available to requests", value=statistics.total_tokens)
        yield GaugeMetricFamily("dpdist_threadpool_busy", "Worker threads running a request's work", value=statistics.borrowed_tokens)
        yield GaugeMetricFamily(
            "dpdist_threadpool_queue", "Requests waiting for a worker thread (queue depth)", value=statistics.tasks_waiting
        )


class Metrics:
    """The metrics of one application, and the ``/metrics`` endpoint.

    ``/metrics`` needs ``Authorization: Bearer <token>``; without a ``token``, ``check_admin(request)``
    decides (the admin token): counts of reports and refusals were the admins' to see before.
    """

    def __init__(self, db, *, token: str | None = None, check_admin=None, service=None):
        from .. import __version__

        self.registry = registry = CollectorRegistry(auto_describe=True)
        self._token_sha256 = hashlib.sha256(token.encode()).digest() if token else None
        self._check_admin = check_admin
        ProcessCollector(registry=registry)
        PlatformCollector(registry=registry)
        Info("dpdist", "The dpdist version and the database engine", registry=registry).info(
            {"version": __version__, "database": db.dialect}
        )
        self.batches = Counter(
            "dpdist_batches", "Batches acknowledged (duplicate: a retry of a batch already counted)", ["outcome"],
            registry=registry,
        )
        self.reports = Counter("dpdist_reports_accepted", "Reports counted into a campaign's aggregate", registry=registry)
        self.rejected = Counter(
            "dpdist_reports_rejected", "Reports of acknowledged batches that were not counted, by reason", ["reason"],
            registry=registry,
        )
        self.refused = Counter(
            "dpdist_requests_refused", "Requests refused with an error body, by its error code", ["reason"], registry=registry
        )
        self.latency = Histogram(
            "dpdist_request_duration_seconds", "Time from a request's arrival to the end of its response",
            ["method", "route"], buckets=_BUCKETS, registry=registry,
        )
        self.responses = Counter(
            "dpdist_http_responses", "HTTP responses by route and status", ["method", "route", "status"], registry=registry
        )
        self.in_flight = Gauge("dpdist_requests_in_flight", "Requests being served now", registry=registry)
        self._children: dict[tuple, tuple] = {}  # (method, route template, status): from small fixed sets
        registry.register(_ServiceCollector(db, service))
        self._new, self._duplicate = self.batches.labels("new"), self.batches.labels("duplicate")  # every request's

    # ------------------------------------------------------------------ events
    def acknowledged(self, ack: dict) -> None:
        """A batch's acknowledgement went out."""
        if ack.get("duplicate"):
            self._duplicate.inc()
            return
        self._new.inc()
        self.reports.inc(int(ack.get("accepted", 0)))
        for reason, count in (ack.get("rejected") or {}).items():
            self.rejected.labels(str(reason)).inc(int(count))

    def refused_request(self, code: str) -> None:
        self.refused.labels(code).inc()

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        """One response: its latency and its status (the labelled children are looked up once per label set)."""
        key = (method, route, status)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = (self.latency.labels(method, route), self.responses.labels(method, route, str(status)))
        children[0].observe(seconds)
        children[1].inc()

    # ------------------------------------------------------------------ endpoint
    async def endpoint(self, request) -> Response:
        if self._token_sha256 is None and self._check_admin is not None:
            self._check_admin(request)  # refused (401) unless the admin token
        elif self._token_sha256 is not None:
            header = request.headers.get("authorization", "")
            scheme, _, offered = header.partition(" ")
            digest = hashlib.sha256((offered.strip() if scheme.lower() == "bearer" else "").encode()).digest()
            if not hmac.compare_digest(digest, self._token_sha256):
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
            method = scope.get("method", "") if scope.get("method", "") in _METHODS else "other"
            metrics.observe(method, route_label(scope), status[0], time.perf_counter() - start)
