"""A campaign config is an instruction to the device. A config answer whose one report cannot fit the body
the service takes (or whose statistic is over what the service accepts at campaign creation) is refused before anything
is drawn or charged; batches are cut to fit that body (dpdist._wire._report_bound)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from dpdist.errors import ServiceRefusedError
from dpdist.local import from_config

pytest.importorskip("httpx")

import httpx  # noqa: E402 - after the extra's check
from dpdist.client import Client  # noqa: E402 - after the extra's check
from dpdist.local.frequency.oue import OUE  # noqa: E402 - after the extra's check
from dpdist._wire import _report_bound  # noqa: E402 - after the extra's check
from dpdist._wire._report_bound import DEFAULT_MAX_BODY_BYTES  # noqa: E402

URL = "http://collector.example"


def _service(config: dict, max_body_bytes=DEFAULT_MAX_BODY_BYTES, **fields) -> tuple[Client, list[bytes]]:
    """A client of a service answering ``config`` (and ``max_body_bytes``) for the config GET and acknowledging every
    batch; the bodies it was sent."""
    bodies: list[bytes] = []

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            document = {"campaign": "c", "state": "open", "config": config}
            if max_body_bytes is not None:
                document["max_body_bytes"] = max_body_bytes
            document.update(fields)
            return httpx.Response(200, json=document)
        bodies.append(request.content)
        batch_id = request.url.path.rsplit("/", 1)[1]
        n = _rows(request.content)
        return httpx.Response(200, json={"campaign": "c", "batch_id": batch_id, "n_read": n, "accepted": n,
                                         "rejected": {}, "duplicate": False})

    return Client(URL, retry_window=0, transport=httpx.MockTransport(answer)), bodies


def _rows(body: bytes) -> int:
    header_bytes = int.from_bytes(body[10:14], "little")
    return json.loads(body[14 : 14 + header_bytes])["shape"][0]


@pytest.fixture
def no_draw(monkeypatch):
    """Any randomization fails the test: a refusal must come before it."""
    def drawn(*args, **kwargs):
        raise AssertionError("privatize was called: the config must be refused before anything is drawn")
    monkeypatch.setattr(OUE, "privatize", drawn)


def test_the_size_of_a_record_is_what_encode_record_writes():
    from dpdist.io import encode_record

    protocol = from_config({"protocol": "oue", "epsilon": 1.0, "domain_size": 1000})
    reports = protocol.privatize(np.arange(37) % 1000, rng=1)
    assert _report_bound.record_bytes(protocol, 37) >= len(encode_record(protocol, reports, "0" * 32))
    assert _report_bound.record_bytes(protocol, 37) - len(encode_record(protocol, reports, "0" * 32)) <= 10  # the CRC


def test_a_config_of_a_huge_domain_is_refused_before_anything_is_drawn(no_draw):
    """The attack: the real config with domain_size = 2*10^7 made a device allocate 1.69 GB for 300 values."""
    client, bodies = _service({"protocol": "oue", "epsilon": 1.0, "domain_size": 20_000_000})
    with client, pytest.raises(ServiceRefusedError) as refusal:
        client.submit_values("c", np.arange(300) % 8)
    assert refusal.value.code == "unexpected_answer" and bodies == []
    assert "domain_size = 20000000" in str(refusal.value) and "160000000 bytes" in str(refusal.value)


def test_a_report_larger_than_the_service_s_body_is_refused_naming_it(no_draw):
    client, bodies = _service({"protocol": "oue", "epsilon": 1.0, "domain_size": 8192}, max_body_bytes=1024)
    with client, pytest.raises(ServiceRefusedError) as refusal:
        client.submit_values("c", np.arange(10))
    text = str(refusal.value)
    assert refusal.value.code == "unexpected_answer" and bodies == []
    assert "'max_body_bytes' = 1024" in text and "domain_size = 8192" in text and "reports of " in text


@pytest.mark.parametrize("stated", [0, -5, "16777216", True, 1.5])
def test_a_body_limit_that_is_no_count_of_bytes_is_refused(no_draw, stated):
    client, bodies = _service({"protocol": "oue", "epsilon": 1.0, "domain_size": 64}, max_body_bytes=stated)
    with client, pytest.raises(ServiceRefusedError, match="'max_body_bytes'") as refusal:
        client.submit_values("c", np.arange(10))
    assert refusal.value.code == "unexpected_answer" and bodies == []


def test_a_server_cannot_raise_the_device_s_body_ceiling():
    assert _report_bound.body_limit({"max_body_bytes": 10**12}, "c") == DEFAULT_MAX_BODY_BYTES
    assert _report_bound.body_limit({}, "c") == DEFAULT_MAX_BODY_BYTES  # an older service: the ceiling
    assert _report_bound.body_limit({"max_body_bytes": 4096}, "c") == 4096


def test_batches_are_cut_to_the_body_the_service_takes():
    """Without the cut, one batch of 200 OUE reports of 128 bytes (26 kB) went to a service taking 4 kB."""
    config = {"protocol": "oue", "epsilon": 1.0, "domain_size": 1024}
    client, bodies = _service(config, max_body_bytes=4096)
    with client:
        acks = client.submit_values("c", np.arange(200) % 1024, batch_size=10_000)
    assert len(bodies) > 1 and all(len(body) <= 4096 for body in bodies)
    assert sum(_rows(body) for body in bodies) == 200 == sum(ack["accepted"] for ack in acks)
    assert max(_rows(body) for body in bodies) == _report_bound.rows_per_body(from_config(config), {"max_body_bytes": 4096},
                                                                               "c", 10_000)


class _NoLedger:
    """A ledger that fails the test when charged: the refusal comes first."""

    def answered(self, *args):  # pragma: no cover - a campaign in rounds only
        return False

    def report(self, *args, **kwargs):
        raise AssertionError("the ledger was charged: the config must be refused before")


def test_a_device_s_ledger_is_not_charged_for_a_refused_config(no_draw):
    client, bodies = _service({"protocol": "oue", "epsilon": 1.0, "domain_size": 20_000_000})
    with client, pytest.raises(ServiceRefusedError, match="unexpected|statistic"):
        client.submit_values("c", [3], ledger=_NoLedger())  # type: ignore[arg-type]
    assert bodies == []


def test_a_config_whose_record_header_a_service_refuses_is_refused_before_anything_is_drawn(monkeypatch):
    """Every batch of 150,000 labels was refused as malformed (a header of 1.2 MB), after the draw."""
    from dpdist.local.frequency.grr import GRR

    def drawn(*args, **kwargs):
        raise AssertionError("privatize was called: the config must be refused before anything is drawn")

    monkeypatch.setattr(GRR, "privatize", drawn)
    labels = [f"l{k:06d}" for k in range(150_000)]
    client, bodies = _service({"protocol": "grr", "epsilon": 1.0, "labels": labels})
    with client, pytest.raises(ServiceRefusedError, match="record header") as refusal:
        client.submit_values("c", ["l000001"])
    assert refusal.value.code == "unexpected_answer" and bodies == []


@pytest.mark.parametrize("config", [{"protocol": "hcms", "epsilon": 1.0, "domain_size": 8, "width": 1 << 22},
                                    {"protocol": "no-such-protocol", "epsilon": 1.0},
                                    {"protocol": "oue", "epsilon": -1.0, "domain_size": 8},
                                    {"protocol": "oue", "epsilon": 1e308, "domain_size": 8},
                                    {"protocol": "sw", "epsilon": 1.0, "b": 1e308},  # OverflowError
                                    {"protocol": "grr", "version": 2, "epsilon": 1.0, "domain_size": 8},
                                    {"protocol": "grr", "version": True, "epsilon": 1.0, "domain_size": 8},
                                    {"protocol": "grr", "version": "\x1b[2J" + "x" * 300_000}])  # escaped, cut
def test_a_config_answer_this_dpdist_cannot_build_is_the_server_s_not_the_caller_s(no_draw, config):
    """A hostile config's parameter out of range was an InvalidParameterError, the app's own mistake."""
    client, bodies = _service(config)
    with client, pytest.raises(ServiceRefusedError, match="is not a config this dpdist can use") as refusal:
        client.submit_values("c", np.arange(3))
    assert refusal.value.code == "unexpected_answer" and bodies == [] and "\n" not in str(refusal.value)
    assert len(str(refusal.value)) < 1000 and "\x1b" not in str(refusal.value)


def test_batches_hold_no_more_reports_than_the_answer_s_max_batch_reports():
    """What counting a batch costs the collector bounds it too (``--max-batch-work``, tests/serve/test_batch_work.py)."""
    client, bodies = _service({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}, max_batch_reports=3)
    with client:
        acks = client.submit_values("c", np.arange(10) % 8, batch_size=10_000)
    assert [_rows(body) for body in bodies] == [3, 3, 3, 1] and sum(ack["accepted"] for ack in acks) == 10


@pytest.mark.parametrize("stated", [0, -1, True, 2.5, "3", [3]])
def test_a_max_batch_reports_that_is_not_a_count_is_refused_before_anything_is_drawn(stated, no_draw):
    client, bodies = _service({"protocol": "oue", "epsilon": 1.0, "domain_size": 8}, max_batch_reports=stated)
    with client, pytest.raises(ServiceRefusedError) as refusal:
        client.submit_values("c", np.arange(10) % 8)
    assert refusal.value.code == "unexpected_answer" and "max_batch_reports" in str(refusal.value) and bodies == []


def test_an_answer_without_max_batch_reports_bounds_batches_by_the_body_only():
    client, bodies = _service({"protocol": "grr", "epsilon": 1.0, "domain_size": 8}, max_batch_reports=None)
    with client:
        assert client.submit_values("c", np.arange(10) % 8, batch_size=10_000)[0]["accepted"] == 10
    assert [_rows(body) for body in bodies] == [10]


def test_a_report_file_is_sent_in_parts_no_larger_than_a_batch_may_cost_to_count(tmp_path):
    """`dpdist submit --reports` of 5,000 OLH reports (d = 10^5) was one batch, refused 413 (the service
    takes 663 at its default --max-batch-work); the parts now hold at most that many, and depend on the file alone."""
    from dpdist import io
    from dpdist.serve._ingest import max_batch_reports

    config = {"protocol": "olh", "epsilon": 1.0, "domain_size": 100_000}
    protocol = from_config(config)
    path = tmp_path / "reports.bin"
    io.write_reports(path, protocol, protocol.privatize(np.arange(1500) % 50, rng=2))
    client, bodies = _service(config, max_batch_reports=max_batch_reports(protocol))
    with client:
        acks = client.submit_file("c", path)
    assert [_rows(body) for body in bodies] == [663, 663, 174] and sum(ack["accepted"] for ack in acks) == 1500


def test_a_report_file_whose_parts_a_campaign_under_a_lower_bound_refuses_is_refused_before_anything_is_sent(tmp_path):
    """Under --max-batch-work 2^25 a GRR campaign at d = 8*10^6 says max_batch_reports 1; a report file's
    parts (which depend on the file alone) were each refused 413 too_many_rows, 'send fewer reports per batch', which a
    `dpdist submit --reports` user cannot do. Now refused before sending, saying why and what to do."""
    from dpdist import io

    config = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
    protocol = from_config(config)
    path = tmp_path / "reports.bin"
    io.write_reports(path, protocol, protocol.privatize(np.arange(5) % 8, rng=2))
    client, bodies = _service(config, max_batch_reports=4)
    with client, pytest.raises(ServiceRefusedError) as refusal:
        client.submit_file("c", path)
    said = str(refusal.value)
    assert refusal.value.code == "too_many_rows" and bodies == []
    assert "at most 4 report(s) a batch" in said and "parts of 5" in said and "--column" in said
    client, bodies = _service(config, max_batch_reports=5)  # at the bound: sent
    with client:
        assert client.submit_file("c", path)[0]["accepted"] == 5
