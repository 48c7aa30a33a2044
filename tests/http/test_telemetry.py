"""OpenTelemetry traces of the servers (src/dpdist/_http/_telemetry.py): off and nothing imported unless the ``OTEL_*``
variables ask; when on, a span per request, group commit, estimate and relay delivery, received by an OTLP/HTTP
receiver the tests start (tests/otlp_support.py), a relay's delivery through the collector's commit one trace that
no device's request shares, and no attribute holding a request's text (a token, a report, a batch id) however a client sends it."""

from __future__ import annotations

import base64
import logging
import os
import random
import re
import secrets
import sqlite3
import sys
import uuid

import httpx
import pytest

from dpdist._http import _telemetry

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
ADMIN = "admin-token-0123456789abcdef"
RELAY = "relay-token-0123456789abcdef"


@pytest.fixture
def no_otel_variables(monkeypatch):
    for name in [name for name in os.environ if name.startswith("OTEL_")]:
        monkeypatch.delenv(name)


@pytest.mark.parametrize("variables, wanted", [
    ({}, False),
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, True),
    ({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, True),
    ({"OTEL_TRACES_EXPORTER": "otlp"}, True),
    ({"OTEL_TRACES_EXPORTER": "console,otlp"}, True),
    ({"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, False),
    ({"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, False),
    ({"OTEL_SDK_DISABLED": "false", "OTEL_TRACES_EXPORTER": "otlp"}, True),
    ({"OTEL_METRICS_EXPORTER": "otlp"}, False),
])
def test_traces_are_wanted_only_when_the_standard_variables_ask_for_them(variables, wanted):
    assert _telemetry.wanted(variables) is wanted


def test_with_the_variables_unset_nothing_of_opentelemetry_is_imported_and_every_hook_is_a_no_op(no_otel_variables,
                                                                                                  monkeypatch, caplog):
    """The servers add their layer only when :func:`start` says traces are on (src/dpdist/serve/_operations.py,
    src/dpdist/relay/_app.py)."""
    for name in [name for name in sys.modules if name == "opentelemetry" or name.startswith("opentelemetry.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "opentelemetry", None)  # any import of it now raises
    assert not _telemetry.start("dpdist-relay") and not _telemetry.start("dpdist-serve") and _telemetry.TRACER is None
    assert not caplog.records and _telemetry.current() is None and _telemetry.inject({"a": "b"}) == {"a": "b"}
    with _telemetry.span("dpdist.estimate") as counts, _telemetry.linked("dpdist.group_commit", [None]) as more:
        counts["n"] = more["n"] = 1  # (nothing is made)
    _telemetry.flush()


@pytest.mark.parametrize("variables, said", [
    ({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, "pip install 'dpdist[otel]'"),
    ({"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "must be http/protobuf (grpc)"),
])
def test_variables_that_cannot_be_honoured_are_one_warning_and_the_server_runs_without_traces(variables, said, monkeypatch,
                                                                                               caplog):
    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.http", None)  # the extra absent
    with caplog.at_level(logging.WARNING, logger="dpdist.telemetry"):
        assert not _telemetry.start("dpdist-serve", variables)
    assert _telemetry.TRACER is None and [record.getMessage() for record in caplog.records] == [
        next(record.getMessage() for record in caplog.records if said in record.getMessage())]


# ---------------------------------------------------------------------- with the extra, against a receiver

@pytest.fixture
def receiver(no_otel_variables, monkeypatch):
    """An OTLP receiver, and this process's traces sent to it (turned off after the test)."""
    from otlp_support import OTLPReceiver

    with OTLPReceiver(max_seconds=300) as found:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", found.endpoint)
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
        try:
            yield found
        finally:
            _telemetry.stop()


@pytest.mark.slow  # imports OpenTelemetry's SDK (0.7 s)
def test_trace_and_span_ids_do_not_follow_the_state_of_pythons_random():
    """Drawn from the CSPRNG: the Mersenne Twister's ids, seen on the relay's deliveries, would give away its others."""
    pytest.importorskip("opentelemetry.sdk")
    draws = []
    for _ in range(2):
        random.seed(7)
        ids = _telemetry._secret_ids()
        draws.append([ids.generate_trace_id() for _ in range(4)] + [ids.generate_span_id() for _ in range(4)])
    assert draws[0] != draws[1] and all(0 < found < 2**128 for found in draws[0] + draws[1])


@pytest.mark.slow  # imports OpenTelemetry (0.7 s) and serves a campaign in process
def test_a_batch_direct_or_through_the_gateway_is_a_span_its_group_commit_a_child_and_an_estimate_too(receiver, tmp_path):
    """Only the relay's token makes the collector take a ``traceparent``: a device's starts no trace of its own."""
    pytest.importorskip("starlette")
    from starlette.testclient import TestClient

    from dpdist.serve import create_app

    app = create_app(f"sqlite:///{tmp_path / 'c.sqlite'}", admin_token=ADMIN, relay_token=RELAY)
    admin = {"authorization": f"Bearer {ADMIN}"}
    chosen = "4bf92f3577b34da6a3ce929d0e0e4736"
    with TestClient(app) as client:
        assert client.post("/api/campaigns", json={"campaign": "c1", "config": GRR}, headers=admin).status_code == 201
        assert client.post("/api/campaigns/c1/open", headers=admin).status_code == 200
        for authorization in ("", f"Bearer {RELAY}"):
            response = client.put(f"/api/campaigns/c1/batches/{uuid.uuid4().hex}", json={"reports": [1, 2, 3]},
                                  headers={"traceparent": f"00-{chosen}-00f067aa0ba902b7-01", "authorization": authorization})
            assert response.status_code == 200
        assert client.get("/api/campaigns/c1/estimate", headers=admin).status_code == 200
        assert _through_gateway(client, f"/api/campaigns/c1/batches/{uuid.uuid4().hex}").status_code == 200
    _telemetry.flush()
    spans = [span for _, span in receiver.spans()]
    by_id = {span.span_id: span for span in spans}
    batches = [span for span in spans if span.name == "PUT /api/campaigns/{campaign}/batches/{batch_id}"]
    assert [span.trace_id.hex() == chosen for span in batches] == [False, True]
    assert batches[1].parent_span_id.hex() == "00f067aa0ba902b7" and not batches[0].parent_span_id
    commits = [span for span in spans if span.name == "dpdist.group_commit"]
    assert sorted(by_id[span.parent_span_id].name for span in commits) == ["POST /ohttp/gateway", *[batches[0].name] * 2]
    assert sorted(_attributes(span)["dpdist.group.reports"] for span in commits) == [1, 3, 3]
    (estimate,) = [span for span in spans if span.name == "dpdist.estimate"]
    assert by_id[estimate.parent_span_id].name == "GET /api/campaigns/{campaign}/estimate"
    (gateway,) = [span for span in spans if span.name == "POST /ohttp/gateway"]
    assert _attributes(gateway)["dpdist.ohttp.inner_route"] == "PUT /api/campaigns/{campaign}/batches/{batch_id}"
    assert [by_id[span.parent_span_id].span_id for span in commits if span.trace_id == gateway.trace_id] == [gateway.span_id]
    assert _attributes(batches[0]) == {"http.request.method": "PUT", "http.route": batches[0].name.split()[1],
                                       "http.response.status_code": 200,
                                       "dpdist.request_id": _attributes(batches[0])["dpdist.request_id"]}


def _through_gateway(client, path: str):
    """A one-report batch ``PUT`` to ``path``, encapsulated to the Oblivious HTTP gateway of the app of ``client``."""
    from dpdist import _ohttp
    from dpdist._ohttp import _bhttp

    config = _ohttp.decode_key_list(client.get("/ohttp/keys").content)[0]
    inner = _bhttp.encode_request(_bhttp.Request("PUT", "https", "collector", path, ((b"content-type", b"application/json"),),
                                                 b'{"reports": [5]}'))
    return client.post("/ohttp/gateway", content=_ohttp.encapsulate_request(config, inner)[0],
                       headers={"content-type": "message/ohttp-req"})


def _attributes(span) -> dict:
    from otlp_support import attributes

    return attributes(span.attributes)


# ---------------------------------------------------------------------- end to end: device -> relay -> collector

#: every attribute a span may hold, and the closed form of its value
_FORMS = {
    "http.request.method": re.compile(r"GET|HEAD|POST|PUT|DELETE|OPTIONS|_OTHER"),
    "dpdist.request_id": re.compile(r"[0-9a-f]{32}"),
    "dpdist.ohttp.inner_route": re.compile(r"(GET|HEAD|POST|PUT|DELETE|OPTIONS|OTHER) /[a-z/{}_]*"),
}
_COUNTS = {"http.response.status_code", "dpdist.group.items", "dpdist.group.batches", "dpdist.group.reports",
           "dpdist.estimate.bytes", "dpdist.batch.reports"}


def _templates() -> set[str]:
    """The route templates of ``dpdist serve`` and ``dpdist relay``, and ``unmatched``."""
    from dpdist.relay._app import ROUTES as RELAY_ROUTES
    from dpdist.serve._ohttp_gateway import ROUTES as OHTTP_ROUTES
    from dpdist.serve._operations import ROUTES as OPERATIONS_ROUTES
    from dpdist.serve._routes import ROUTES

    return {route.path for route in (*ROUTES, *OHTTP_ROUTES, *OPERATIONS_ROUTES, *RELAY_ROUTES)} | {"unmatched"}


def _closed_form(key: str, value, templates: set[str]) -> bool:
    if key in _COUNTS:
        return isinstance(value, int) and not isinstance(value, bool)
    if key == "http.route":
        return value in templates or value in ("/static", "/static/dpdist-client")
    if key == "dpdist.batch.settled":
        return isinstance(value, bool)
    return key in _FORMS and isinstance(value, str) and _FORMS[key].fullmatch(value) is not None


@pytest.mark.slow  # a collector and a relay as processes, ~10,000 requests sent to them
def test_a_relay_delivery_is_one_trace_to_the_commit_apart_from_the_devices_and_no_attribute_holds_a_secret(receiver, tmp_path,
                                                                                                          monkeypatch):
    pytest.importorskip("pyhpke")
    from dpdist._shown import masked
    from dpdist.client import Client
    from dpdist.relay._app import ROUTES as RELAY_ROUTES
    from log_secrets_support import send_every_way, send_through_gateway
    from relay_support import RELAY_TOKEN, CollectorProcess, RelayProcess
    from serve_support import ADMIN_TOKEN

    monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
    submit = uuid.uuid4().hex  # 32 hexadecimal digits: a trace id's form
    metrics_token = "metrics-" + secrets.token_hex(12)
    monkeypatch.setenv("DPDIST_METRICS_TOKEN", metrics_token)  # (the collector's; its environment is this one's)
    collector = CollectorProcess(str(tmp_path / "campaigns.sqlite"), log_path=tmp_path / "collector.log").start()
    relay = RelayProcess(tmp_path / "queue.sqlite", collector.url, min_batch=3, max_batch=3, log_path=tmp_path / "relay.log",
                         options=("--rate-limit", "0")).start()
    try:
        with httpx.Client(base_url=collector.url, headers={"authorization": f"Bearer {ADMIN_TOKEN}"}, timeout=30) as admin:
            for campaign, extra in (("traced", {"relay": {"url": relay.url}}), ("c1", {"submit_token": submit})):
                assert admin.post("/api/campaigns", json={"campaign": campaign, "config": GRR, **extra}).status_code == 201
                assert admin.post(f"/api/campaigns/{campaign}/open").status_code == 200
        with Client(collector.url) as device:
            device.submit_values("traced", [1, 2, 3])
        # each process exports its spans in batches of its own: the relay's delivery, the collector's request and its
        # group commit are each awaited
        spans = receiver.wait_for(lambda found: {"dpdist.relay.deliver", "dpdist.group_commit",
                                                 "PUT /api/campaigns/{campaign}/relayed/{batch_id}"} <= {span.name for _, span in found})
        devices = _check_delivery_trace(spans)
        held = {"admin token": ADMIN_TOKEN, "relay token": RELAY_TOKEN, "submit token": submit, "metrics token": metrics_token,
                "privacy pass token": base64.urlsafe_b64encode(secrets.token_bytes(322)).decode().rstrip("=")}
        serve_routes = _service_routes()
        device_routes = [(method, template) for method, template in serve_routes if template.startswith("/api/campaigns/{campaign}/")
                         and template.split("/")[4] in ("batches", "config", "identity")]
        relay_routes = [(method, route.path) for route in RELAY_ROUTES for method in sorted(route.methods - {"HEAD"})]
        sent = 0
        for secret in held.values():
            for credential in (f"Bearer {submit}", f"Bearer {ADMIN_TOKEN}"):
                sent += send_every_way(collector.url, secret, serve_routes, {"campaign": "c1", "key_id": "1"}, credential)
            sent += send_through_gateway(collector.url, secret, device_routes, {"campaign": "c1"})
            sent += send_every_way(relay.url, secret, relay_routes, {"campaign": "traced", "report_id": "0" * 32},
                                   f"Bearer {ADMIN_TOKEN}")
    finally:
        relay.stop()
        collector.stop()
    batch_ids = {row[0] for row in sqlite3.connect(collector.db_url).execute("SELECT batch_id FROM batches")}
    held.update({f"batch id {number}": batch_id for number, batch_id in enumerate(batch_ids)})
    spans = receiver.spans()
    assert sent > 6000 and len(spans) > sent // 2, (sent, len(spans))
    templates, wrong, holding = _templates(), [], []
    for resource, span in spans:
        assert resource.keys() == {"service.name", "service.instance.id"} and resource["service.name"] in ("dpdist-serve", "dpdist-relay")
        assert re.fullmatch(r"[0-9a-f]{32}", resource["service.instance.id"])
        found = _attributes(span)
        wrong += [(key, value) for key, value in found.items() if not _closed_form(key, value, templates)]
        wrong += [("link", link) for link in span.links if link.attributes] + [("event", event) for event in span.events]
        if resource["service.name"] == "dpdist-serve":  # no collector's span in a device's trace, or linked to one
            wrong += [("device's trace", span.name) for found in (span, *span.links) if found.trace_id in devices]
        text = f"{span.name} {found}"
        holding += [(name, text) for name, secret in held.items() if masked(text, (secret,)) != text]
        holding += [(name, span.trace_id.hex()) for name, secret in held.items() if secret in (span.trace_id.hex(), span.span_id.hex())]
    assert receiver.metrics  # the collector's metrics, on by the same variable: their labels from fixed sets too
    text = str(receiver.metrics)
    holding += [(name, "a metric") for name, secret in held.items() if masked(text, (secret,)) != text]
    assert not wrong, wrong[:10]
    assert not holding, holding[:10]


def _check_delivery_trace(found) -> set:
    """The relay's delivery of a batch, the collector's request and its group commit: one trace, each span the parent of
    the next, the delivery its root (kind client), neither a child of nor linked to the device's three requests to the
    relay, each a trace of its own; the collector's spans share no trace id with those requests (returned)."""
    from opentelemetry.proto.trace.v1.trace_pb2 import Span  # (an extra the test's receiver needs)

    spans = [span for _, span in found]
    (delivery,) = [span for span in spans if span.name == "dpdist.relay.deliver"]
    (relayed,) = [span for span in spans if span.name == "PUT /api/campaigns/{campaign}/relayed/{batch_id}"]
    (commit,) = [span for span in spans if span.name == "dpdist.group_commit" and span.parent_span_id == relayed.span_id]
    assert not delivery.parent_span_id and not delivery.links and delivery.kind == Span.SPAN_KIND_CLIENT
    assert relayed.parent_span_id == delivery.span_id
    assert {span.trace_id for span in (delivery, relayed, commit)} == {delivery.trace_id}
    devices = {span.trace_id for span in spans if span.name == "PUT /relay/v1/campaigns/{campaign}/ohttp/{report_id}"}
    assert len(devices) == 3 and delivery.trace_id not in devices
    collector = [span for resource, span in found if resource["service.name"] == "dpdist-serve"]
    assert not {span.trace_id for span in collector} & devices
    assert _attributes(commit)["dpdist.group.reports"] == 3 and _attributes(delivery)["dpdist.batch.reports"] == 3
    return devices


def _service_routes() -> list[tuple[str, str]]:
    """Every ``(method, template)`` ``dpdist serve`` routes."""
    from dpdist.serve._ohttp_gateway import ROUTES as OHTTP_ROUTES
    from dpdist.serve._operations import ROUTES as OPERATIONS_ROUTES
    from dpdist.serve._routes import ROUTES

    return [(method, route.path) for route in (*ROUTES, *OHTTP_ROUTES, *OPERATIONS_ROUTES)
            for method in sorted(route.methods - {"HEAD"})]
