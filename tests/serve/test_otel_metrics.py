"""The metrics of ``/metrics`` over OTLP/HTTP (src/dpdist/serve/_otel_metrics.py): off without the ``OTEL_*``
variables; on, the same names, help texts, labels and values as a scrape, received by a test receiver
(tests/otlp_support.py)."""

from __future__ import annotations

import os
import sys
import uuid

import pytest

from dpdist.serve import _otel_metrics

pytest.importorskip("starlette")

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
ADMIN = "admin-token-0123456789abcdef"


def test_without_the_variables_no_export_starts_and_nothing_is_imported(monkeypatch):
    for name in [name for name in os.environ if name.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # any import of it now raises
    assert _otel_metrics.start(registry=None) is None
    assert _otel_metrics.start(None, environ={"OTEL_TRACES_EXPORTER": "otlp", "OTEL_METRICS_EXPORTER": "none"}) is None


@pytest.mark.slow  # imports OpenTelemetry (0.7 s) and serves a campaign in process
def test_the_exported_metrics_are_the_scraped_ones_under_their_names(monkeypatch, tmp_path):
    from prometheus_client.parser import text_string_to_metric_families
    from starlette.testclient import TestClient

    from dpdist.serve import create_app
    from otlp_support import OTLPReceiver, attributes

    for name in [name for name in os.environ if name.startswith("OTEL_")]:
        monkeypatch.delenv(name)
    admin = {"authorization": f"Bearer {ADMIN}"}
    with OTLPReceiver(max_seconds=300) as receiver:
        monkeypatch.setenv("OTEL_METRICS_EXPORTER", "otlp")
        monkeypatch.setenv("OTEL_TRACES_EXPORTER", "none")
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint)
        monkeypatch.setenv("OTEL_METRIC_EXPORT_INTERVAL", "600000")  # only the export at shutdown
        app = create_app(f"sqlite:///{tmp_path / 'c.sqlite'}", admin_token=ADMIN)
        with TestClient(app) as client:
            assert client.post("/api/campaigns", json={"campaign": "c1", "config": GRR}, headers=admin).status_code == 201
            assert client.post("/api/campaigns/c1/open", headers=admin).status_code == 200
            for reports in ([1, 2, 3], [4, 99]):  # 99: rejected (out of the domain)
                assert client.put(f"/api/campaigns/c1/batches/{uuid.uuid4().hex}", json={"reports": reports}).status_code == 200
            assert client.put("/api/campaigns/nope/batches/x", json={"reports": [1]}).status_code == 404
            scraped = client.get("/metrics", headers=admin).text
    (message,) = receiver.metrics
    (resource_metrics,) = message.resource_metrics
    assert attributes(resource_metrics.resource.attributes)["service.name"] == "dpdist-serve"
    exported = {metric.name: metric for scope in resource_metrics.scope_metrics for metric in scope.metrics}
    families = {family.name: family for family in text_string_to_metric_families(scraped)}
    compared = 0
    for name in ("dpdist_batches", "dpdist_reports_accepted", "dpdist_reports_rejected", "dpdist_requests_refused",
                 "dpdist_http_responses", "dpdist_group_commits"):
        family, metric = families[name], exported[name]
        assert metric.description == family.documentation and metric.sum.is_monotonic
        scrape = {tuple(sorted(sample.labels.items())): sample.value for sample in family.samples
                  if sample.name == name + "_total"}
        points = {tuple(sorted(attributes(point.attributes).items())): point.as_double for point in metric.sum.data_points}
        assert points.keys() >= scrape.keys() and scrape, name  # (the last requests may have come after the scrape)
        assert all(points[key] >= value for key, value in scrape.items()) and points, name
        compared += 1
    assert {key: value for key, value in _points(exported["dpdist_batches"]).items()} == {(("outcome", "new"),): 2.0,
                                                                                           (("outcome", "duplicate"),): 0.0}
    assert _points(exported["dpdist_reports_accepted"]) == {(): 4.0}
    histogram = exported["dpdist_request_duration_seconds"].histogram
    family = families["dpdist_request_duration_seconds"]
    bounds = sorted({float(sample.labels["le"]) for sample in family.samples if sample.name.endswith("_bucket")} - {float("inf")})
    for point in histogram.data_points:
        assert list(point.explicit_bounds) == bounds and sum(point.bucket_counts) == point.count >= 1
    assert {tuple(sorted(attributes(point.attributes).items())) for point in histogram.data_points} >= {
        (("method", "PUT"), ("route", "/api/campaigns/{campaign}/batches/{batch_id}"))}
    assert _points(exported["dpdist_info"])  # version and database as attributes
    assert "dpdist_requests_in_flight" in exported and "process_cpu_seconds" in exported and compared == 6


def _points(metric) -> dict:
    from otlp_support import attributes

    data = metric.sum if metric.WhichOneof("data") == "sum" else metric.gauge
    return {tuple(sorted(attributes(point.attributes).items())): point.as_double for point in data.data_points}
