"""The metrics of ``/metrics`` (:mod:`._metrics`) exported over OTLP/HTTP too, when the ``OTEL_*`` variables ask.

With the extra ``dpdist[otel]`` and ``OTEL_METRICS_EXPORTER=otlp`` (or, without it, an ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_METRICS_ENDPOINT``: :func:`dpdist._http._telemetry.wanted`), a thread of the server process reads
the application's Prometheus registry every ``OTEL_METRIC_EXPORT_INTERVAL`` milliseconds (60,000 by default) and at
shutdown, and exports what it read: the same metrics under the same names, help texts and labels (attributes), so
that an alert written for one reads the other.  A counter is a cumulative monotonic sum named as its family
(``dpdist_batches``: a Prometheus backend adds ``_total`` as the exposition does), started at its ``_created`` time;
a gauge a gauge; a histogram a cumulative histogram of the same bounds (``dpdist_request_duration_seconds``); an info
metric a gauge of 1 with its labels (``dpdist_info``).  Reading the registry is what a scrape does: nothing is added to
a request's path.  Off, nothing of OpenTelemetry is imported.
"""

from __future__ import annotations

import math
import os
import threading
import time

from .._http import _telemetry

__all__ = ["MetricsExport", "start", "metrics_data"]


class MetricsExport:
    """The thread that exports ``registry`` every ``interval_s`` seconds (see the module); :meth:`stop` exports once
    more and ends it."""

    def __init__(self, registry, service_name: str, interval_s: float):
        from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter  # lazy: optional extra dpdist[otel]

        self.registry, self.interval_s = registry, interval_s
        self.resource, self.exporter = _telemetry.resource(service_name), OTLPMetricExporter()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dpdist-otel-metrics", daemon=True)
        self._thread.start()

    def export(self) -> None:
        """Read the registry and export it now (a failure is the exporter's to log)."""
        self.exporter.export(metrics_data(self.registry.collect(), self.resource))

    def _run(self) -> None:
        while not self._stopped.wait(self.interval_s):
            try:
                self.export()
            except Exception:  # noqa: BLE001 - never ends the thread: the next interval tries again
                _telemetry.LOG.exception("exporting the metrics over OTLP failed")

    def stop(self) -> None:
        """Export once more, then stop (a server's shutdown)."""
        self._stopped.set()
        self._thread.join(timeout=5)
        try:
            self.export()
        finally:
            self.exporter.shutdown()


def start(registry, service_name: str = "dpdist-serve", environ=os.environ) -> MetricsExport | None:
    """A :class:`MetricsExport` of ``registry`` if the ``OTEL_*`` variables ask for metrics and they can be exported,
    else None (nothing imported)."""
    if not _telemetry.exportable(environ, "metrics"):
        return None
    interval_ms = environ.get("OTEL_METRIC_EXPORT_INTERVAL", "")
    interval_s = float(interval_ms) / 1000 if interval_ms.isdigit() and int(interval_ms) > 0 else 60.0
    return MetricsExport(registry, service_name, interval_s)


def metrics_data(families, resource):
    """The OpenTelemetry ``MetricsData`` of Prometheus metric families (a registry's ``collect()``), read now."""
    from opentelemetry.sdk.metrics.export import MetricsData, ResourceMetrics, ScopeMetrics  # lazy: optional extra dpdist[otel]
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope  # lazy: optional extra dpdist[otel]

    now = time.time_ns()
    metrics = [metric for family in families for metric in _metrics_of(family, now)]
    scope = ScopeMetrics(InstrumentationScope("dpdist.serve"), metrics, "")
    return MetricsData([ResourceMetrics(resource, [scope], "")])


def _metrics_of(family, now: int) -> list:
    """One Prometheus family as OpenTelemetry metrics (none for a type without a counterpart)."""
    from opentelemetry.sdk.metrics.export import AggregationTemporality, Gauge, Metric, NumberDataPoint, Sum  # lazy: optional extra dpdist[otel]

    created = {_key(sample.labels): int(sample.value * 1e9) for sample in family.samples if sample.name.endswith("_created")}
    if family.type == "histogram":
        return [Metric(family.name, family.documentation, family.unit or None, _histogram(family, created, now))]
    wanted = {"counter": family.name + "_total", "gauge": family.name, "info": family.name + "_info"}.get(family.type)
    points = [NumberDataPoint(dict(sample.labels), created.get(_key(sample.labels), now), now, float(sample.value))
              for sample in family.samples if sample.name == wanted]
    if wanted is None or not points:
        return []
    name = wanted if family.type == "info" else family.name
    if family.type == "counter":
        return [Metric(name, family.documentation, family.unit or None, Sum(points, AggregationTemporality.CUMULATIVE, True))]
    return [Metric(name, family.documentation, family.unit or None, Gauge(points))]


def _histogram(family, created: dict, now: int):
    """A Prometheus histogram family (cumulative ``_bucket`` counts by ``le``, ``_count``, ``_sum``) as an OpenTelemetry
    cumulative histogram of the same finite bounds."""
    from opentelemetry.sdk.metrics.export import AggregationTemporality, Histogram, HistogramDataPoint  # lazy: optional extra dpdist[otel]

    series: dict[tuple, dict] = {}
    for sample in family.samples:
        labels = {name: value for name, value in sample.labels.items() if name != "le"}
        found = series.setdefault(_key(labels), {"labels": labels, "buckets": []})
        if sample.name.endswith("_bucket"):
            found["buckets"].append((float(sample.labels["le"]), sample.value))
        elif sample.name.endswith("_count"):
            found["count"] = sample.value
        elif sample.name.endswith("_sum"):
            found["sum"] = float(sample.value)
    points = []
    for key, found in series.items():
        buckets = sorted(found["buckets"])
        cumulative = [count for _, count in buckets]
        counts = [int(count - before) for count, before in zip(cumulative, [0.0, *cumulative[:-1]])]
        bounds = [bound for bound, _ in buckets if not math.isinf(bound)]
        points.append(HistogramDataPoint(found["labels"], created.get(key, now), now, int(found.get("count", 0)),
                                         found.get("sum", 0.0), counts, bounds, None, None))  # type: ignore[arg-type]
    return Histogram(points, AggregationTemporality.CUMULATIVE)


def _key(labels: dict) -> tuple:
    return tuple(sorted((name, value) for name, value in labels.items() if name != "le"))
