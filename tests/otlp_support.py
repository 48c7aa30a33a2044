"""An OTLP/HTTP receiver for the tests: it listens on 127.0.0.1, takes ``POST /v1/traces`` and ``/v1/metrics``
(protobuf), keeps what it decoded (with opentelemetry-proto's classes, which ship with the exporter), and stops by itself after ``max_requests``
requests or ``max_seconds`` seconds, whichever comes first.
"""

from __future__ import annotations

import http.server
import threading
import time

import pytest

trace_service = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")
metrics_service = pytest.importorskip("opentelemetry.proto.collector.metrics.v1.metrics_service_pb2")
#: what each path takes: its request and answer messages
_SERVICES = {"/v1/traces": (trace_service.ExportTraceServiceRequest, trace_service.ExportTraceServiceResponse),
             "/v1/metrics": (metrics_service.ExportMetricsServiceRequest, metrics_service.ExportMetricsServiceResponse)}


class OTLPReceiver:
    """``with OTLPReceiver() as receiver``: :attr:`endpoint` for ``OTEL_EXPORTER_OTLP_ENDPOINT``; :attr:`requests`, the
    ``ExportTraceServiceRequest`` messages received, :attr:`metrics` the ``ExportMetricsServiceRequest`` ones; :meth:`spans` flattens them with their resources."""

    def __init__(self, max_requests: int = 2000, max_seconds: float = 600.0):
        self.requests: list = []  # of traces
        self.metrics: list = []
        self.max_requests, self.max_seconds = max_requests, max_seconds
        receiver = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("content-length", 0)))
                request, response = _SERVICES.get(self.path, (None, trace_service.ExportTraceServiceResponse))
                if request is not None:
                    message = request()
                    message.ParseFromString(body)
                    (receiver.requests if self.path == "/v1/traces" else receiver.metrics).append(message)
                answer = response().SerializeToString()
                self.send_response(200 if request is not None else 404)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)
                if len(receiver.requests) + len(receiver.metrics) >= receiver.max_requests:
                    threading.Thread(target=receiver.server.shutdown, daemon=True).start()

            def log_message(self, *arguments):  # quiet
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._timer = threading.Timer(max_seconds, self.server.shutdown)
        self._timer.daemon = True

    def __enter__(self) -> "OTLPReceiver":
        self._thread.start()
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        self.server.shutdown()
        self.server.server_close()

    def spans(self) -> list[tuple[dict, object]]:
        """Every span received, as ``(resource attributes, span)``."""
        return [(attributes(resource_spans.resource.attributes), span) for message in self.requests
                for resource_spans in message.resource_spans for scope in resource_spans.scope_spans for span in scope.spans]

    def wait_for(self, found, timeout: float = 60.0) -> list:
        """The spans once ``found(spans)`` is true (the exporters send every few hundred milliseconds)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            spans = self.spans()
            if found(spans):
                return spans
            time.sleep(0.1)
        raise AssertionError(f"the receiver did not get the spans wanted: {[span.name for _, span in self.spans()]}")


def attributes(key_values) -> dict:
    """OTLP ``KeyValue`` list as a dict of plain values."""
    return {item.key: value_of(item.value) for item in key_values}


def value_of(value):
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [value_of(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return attributes(value.kvlist_value.values)
    return getattr(value, kind) if kind else None
