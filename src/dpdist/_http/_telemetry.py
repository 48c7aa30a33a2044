"""OpenTelemetry traces of ``dpdist serve`` (its Oblivious HTTP gateway included) and ``dpdist relay``, over OTLP/HTTP;
what the servers' OpenTelemetry signals share (the metrics: :mod:`dpdist.serve._otel_metrics`).

Off unless asked for, and free when off: :func:`start` reads the standard variables, and only when they ask for
traces (``OTEL_TRACES_EXPORTER=otlp``, or an ``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``
without ``OTEL_TRACES_EXPORTER``; never with ``OTEL_SDK_DISABLED=true``) does it import OpenTelemetry (the extra
``dpdist[otel]``) and set :data:`TRACER`.  Otherwise nothing of OpenTelemetry is imported, no layer is added to the
servers, and every other hook is one test of :data:`TRACER` against None.  The exporter reads the rest of the
``OTEL_EXPORTER_OTLP_*`` variables (endpoint, headers, timeout, certificates); the sampler ``OTEL_TRACES_SAMPLER``;
the resource (:func:`resource`) is the service's name (``OTEL_SERVICE_NAME``, else the server's: ``dpdist-serve``,
``dpdist-relay``), a random instance id, and ``OTEL_RESOURCE_ATTRIBUTES``.

The spans (:class:`TracingMiddleware`, :func:`span`, :func:`linked`): one per request a server answers, one per group
commit (a child of the span of the first request it works for, linked to the others'), one per estimate computed,
and one per batch the relay delivers: the root of a trace of its own, neither a child of nor linked to any device's
request, whose ``traceparent`` the collector takes, so that a delivery through the collector's commit is one trace and
no span of the collector's shares a trace id with a device's request to the relay.  Trace and span ids are drawn from
the CSPRNG (:func:`_secret_ids`).  A span holds what an access line holds
(:func:`dpdist.serve._access.fixed_fields`): what the server made or checked against a closed form, never a request's
own text — the method when routed (else ``_OTHER``), the route's template, the status, the server's request id,
counts; no path, no parameter, no header, no report, no batch id, no token.  A ``traceparent`` is taken only from a
request that carries the relay's token (the relay's delivery: the trace context is then the relay's own); a
device's, or anyone else's, is not (its trace ids would be the client's text, and a device's trace id carried to the
collector would mark its report's batch).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import logging
import os
import secrets
import uuid
from typing import Any, Callable

__all__ = ["TRACER", "METHODS", "start", "stop", "flush", "wanted", "possible", "exportable", "resource", "route_fields", "TracingMiddleware", "span", "current", "linked", "inject"]

#: the tracer of this process while traces are on (:func:`start`), else None
TRACER: Any = None
_PROPAGATOR: Any = None
_PROVIDER: Any = None
LOG = logging.getLogger("dpdist.telemetry")
_SUPPORTED_PROTOCOLS = ("http/protobuf",)
#: this process's ``service.instance.id``
_INSTANCE = uuid.uuid4().hex


def wanted(environ=os.environ, signal: str = "traces") -> bool:
    """Whether the ``OTEL_*`` variables of ``environ`` ask for ``signal`` (``traces`` or ``metrics``; the module
    docstring); nothing is imported."""
    if environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    exporter = environ.get(f"OTEL_{signal.upper()}_EXPORTER", "").strip().lower()
    if exporter:
        return "otlp" in {name.strip() for name in exporter.split(",")}
    return bool(environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") or environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_ENDPOINT"))


def possible(environ=os.environ) -> bool:
    """Whether this deployment may send traces, so that its tracing backend is one more party: the variables ask for
    them (:func:`wanted`), or the extra that sends them is installed (a server of the installation may be started with
    them); nothing is imported."""
    return wanted(environ) or _installed()


@functools.cache
def _installed() -> bool:
    try:
        importlib.metadata.distribution("opentelemetry-sdk")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def exportable(environ=os.environ, signal: str = "traces") -> bool:
    """Whether ``signal`` is :func:`wanted` and can be exported: the extra installed, the protocol ``http/protobuf``;
    what cannot be done is said in one warning (the server then runs without the signal)."""
    if not wanted(environ, signal):
        return False
    protocol = (environ.get(f"OTEL_EXPORTER_OTLP_{signal.upper()}_PROTOCOL") or environ.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf").strip().lower()
    if protocol not in _SUPPORTED_PROTOCOLS:
        LOG.warning("OpenTelemetry %s off: OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf (%s)", signal,
                    "grpc" if protocol == "grpc" else "another value was given")
        return False
    try:
        import opentelemetry.exporter.otlp.proto.http  # lazy: optional extra dpdist[otel]
        import opentelemetry.sdk  # noqa: F401  # lazy: optional extra dpdist[otel]
    except ImportError:
        LOG.warning("OpenTelemetry %s off: the OTEL_* variables ask for them, but the extra is not installed "
                    "(pip install 'dpdist[otel]')", signal)
        return False
    return True


def resource(service_name: str):
    """The process's resource: ``service.name`` (``OTEL_SERVICE_NAME``, else ``service_name``), a random
    ``service.instance.id`` (each worker process its own), ``OTEL_RESOURCE_ATTRIBUTES``; no other detector runs (a
    process detector would export the command line, which may hold a token)."""
    from opentelemetry.sdk.resources import SERVICE_INSTANCE_ID, SERVICE_NAME, OTELResourceDetector, Resource  # lazy: optional extra dpdist[otel]

    return Resource({SERVICE_NAME: service_name, SERVICE_INSTANCE_ID: _INSTANCE}).merge(OTELResourceDetector().detect())


def start(service_name: str, environ=os.environ) -> bool:
    """Turn traces on for this process if the ``OTEL_*`` variables ask for them and can be honoured
    (:func:`exportable`); whether they are on."""
    global TRACER, _PROPAGATOR, _PROVIDER
    if TRACER is not None or not exportable(environ, "traces"):
        return TRACER is not None
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # lazy: optional extra dpdist[otel]
    from opentelemetry.sdk.trace import TracerProvider  # lazy: optional extra dpdist[otel]
    from opentelemetry.sdk.trace.export import BatchSpanProcessor  # lazy: optional extra dpdist[otel]
    from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator  # lazy: optional extra dpdist[otel]

    provider = TracerProvider(resource=resource(service_name), id_generator=_secret_ids())
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    TRACER, _PROPAGATOR, _PROVIDER = provider.get_tracer("dpdist"), TraceContextTextMapPropagator(), provider
    return True


def _secret_ids():
    """An id generator drawing from the CSPRNG: the SDK's default draws from Python's Mersenne Twister, whose state the
    collector could recover from the ids of the relay's deliveries, and so derive the ids of the relay's other spans."""
    from opentelemetry.sdk.trace.id_generator import RandomIdGenerator  # lazy: optional extra dpdist[otel]

    class SecretIds(RandomIdGenerator):
        def generate_span_id(self) -> int:
            return secrets.randbelow((1 << 64) - 1) + 1  # uniform over the valid (nonzero) ids

        def generate_trace_id(self) -> int:
            return secrets.randbelow((1 << 128) - 1) + 1

    return SecretIds()


def stop() -> None:
    """Export the spans still held and turn traces off (a server's shutdown; tests)."""
    global TRACER, _PROVIDER
    provider, TRACER, _PROVIDER = _PROVIDER, None, None
    if provider is not None:
        provider.shutdown()


def flush() -> None:
    """Export the spans held so far (a server's shutdown), waiting 5 s at most."""
    if _PROVIDER is not None:
        _PROVIDER.force_flush(5000)


#: the methods a span names (any other is ``_OTHER``)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS"})


def route_fields(scope, status: int) -> tuple[str, str, int, None, None]:
    """A request's fixed fields of a server without request ids (:class:`TracingMiddleware`'s ``facts``): its method
    if one of :data:`METHODS`, else ``OTHER``, the template of its route (``unmatched`` for none) and its status."""
    method, path = scope.get("method"), getattr(scope.get("route"), "path", None)
    return method if method in METHODS else "OTHER", path if isinstance(path, str) and path else "unmatched", status, None, None


class TracingMiddleware:
    """Pure ASGI middleware, the outermost of a server while traces are on: a span per request answered (module
    docstring).

    ``facts(scope, status)``: the request's fixed fields, ``(method, route, status, request_id, inner_route)``
    (:func:`dpdist.serve._access.fixed_fields`); ``trusted(scope)``: whether the request carries the relay's token
    (its ``traceparent`` is then taken), None: no request's is.
    """

    def __init__(self, app, *, facts: Callable, trusted: Callable | None = None):
        self.app, self.facts, self.trusted = app, facts, trusted

    async def __call__(self, scope, receive, send):
        tracer = TRACER
        if scope["type"] != "http" or tracer is None:
            await self.app(scope, receive, send)
            return
        from opentelemetry import context, trace  # lazy: optional extra dpdist[otel] (imported by start already)

        span = tracer.start_span("HTTP", context=self._parent(scope), kind=trace.SpanKind.SERVER)
        attached = context.attach(trace.set_span_in_context(span))
        status = [0]

        async def sending(message):
            if message["type"] == "http.response.start":
                status[0] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        except Exception:
            status[0] = status[0] or 500  # answered by the server's outermost error handler
            raise
        finally:
            context.detach(attached)
            _end_request(span, *self.facts(scope, status[0]))

    def _parent(self, scope):
        """The relay's trace context when the request is the relay's (module docstring), else None (a new trace)."""
        if self.trusted is None:
            return None
        value = next((value for name, value in scope["headers"] if name == b"traceparent"), None)
        if value is None or not self.trusted(scope):
            return None
        return _PROPAGATOR.extract({"traceparent": value.decode("latin-1")})


def _end_request(span, method: str, route: str, status: int, request_id: str | None, inner_route: str | None) -> None:
    """Name a request's span after its fixed fields, set them as its attributes, end it."""
    from opentelemetry.trace import Status, StatusCode  # lazy: optional extra dpdist[otel] (imported by start already)

    span.update_name(f"{method} {route}")
    attributes: dict[str, Any] = {"http.request.method": method if method != "OTHER" else "_OTHER", "http.route": route}
    if status:
        attributes["http.response.status_code"] = status
    if request_id:
        attributes["dpdist.request_id"] = request_id
    if inner_route is not None:
        attributes["dpdist.ohttp.inner_route"] = inner_route
    span.set_attributes(attributes)
    if not status or status >= 500:
        span.set_status(Status(StatusCode.ERROR))
    span.end()


def current():
    """The span context of the span in progress (None while traces are off, or outside any span): held by work that
    another thread or task does for it (:func:`linked`)."""
    if TRACER is None:
        return None
    from opentelemetry import trace  # lazy: optional extra dpdist[otel] (imported by start already)

    found = trace.get_current_span().get_span_context()
    return found if found.is_valid else None


@contextlib.contextmanager
def span(name: str, attributes: dict | None = None, *, root: bool = False):
    """``with span(name, attributes)``: a span of the work in the block, a child of the span in progress, or (``root``)
    the root of a new trace, of kind client (a request to another server: the relay's delivery); nothing while traces
    are off.  Counts may be added to the attributes the block yields."""
    tracer = TRACER
    if tracer is None:
        yield {}
        return
    from opentelemetry import context, trace  # lazy: optional extra dpdist[otel] (imported by start already)

    counts: dict = dict(attributes or {})
    with (tracer.start_as_current_span(name, context=context.Context(), kind=trace.SpanKind.CLIENT) if root
          else tracer.start_as_current_span(name)) as made:
        yield counts
        made.set_attributes(counts)


@contextlib.contextmanager
def linked(name: str, contexts: list, attributes: dict | None = None):
    """``with linked(name, contexts)``: a span of work done for many requests, a child of the first of their span
    ``contexts`` (:func:`current`; None for none) and linked to the rest, the current span in the block; nothing while
    traces are off."""
    tracer = TRACER
    if tracer is None:
        yield {}
        return
    from opentelemetry import trace  # lazy: optional extra dpdist[otel] (imported by start already)

    held = [found for found in contexts if found is not None]
    parent = trace.set_span_in_context(trace.NonRecordingSpan(held.pop(0))) if held else None
    counts: dict = dict(attributes or {})
    links = [trace.Link(found) for found in held[:_MAX_LINKS]]
    with tracer.start_as_current_span(name, context=parent, links=links) as made:
        yield counts
        made.set_attributes(counts)


#: the most links a span holds (OpenTelemetry's default limit is 128)
_MAX_LINKS = 128


def inject(headers: dict) -> dict:
    """``headers`` with the ``traceparent`` of the span in progress (as they are while traces are off)."""
    if TRACER is not None:
        _PROPAGATOR.inject(headers)
    return headers
