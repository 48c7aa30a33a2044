"""What the Python client takes as the acknowledgement of a batch (dpdist._http._acks): only the service's answer naming the campaign and the batch id sent.  Any other
200 (another batch's, another campaign's, a captive portal's page, a body cut short, JSON without the acknowledgement's
fields) was taken as "counted" and the batch was forgotten, or crashed the client (KeyError, JSONDecodeError)."""

from __future__ import annotations

import json

import httpx
import numpy as np
import pytest

pytest.importorskip("httpx")

from ack_server_support import AckServer, right_ack  # noqa: E402
from dpdist.client import Client  # noqa: E402
from dpdist.errors import ServiceUnavailableError  # noqa: E402

CONFIG = {"campaign": "c", "state": "open", "config": {"protocol": "grr", "epsilon": 1.0, "domain_size": 4}}
#: answers of 200 that are no acknowledgement of batch b of campaign c
WRONG = [
    lambda campaign, batch_id: right_ack(campaign, "another-batch"),  # a stale or cached acknowledgement
    lambda campaign, batch_id: right_ack("other", batch_id),  # a misrouted server's campaign
    b"<html><body>Welcome to the airport Wi-Fi</body></html>",  # a captive portal
    b'{"campaign": "c", "batch_id": "b', "{}",  # cut short; JSON without the fields
    lambda campaign, batch_id: json.dumps({"campaign": campaign, "batch_id": batch_id}).encode(),
    lambda campaign, batch_id: json.dumps({"campaign": campaign, "batch_id": batch_id, "accepted": "all",
                                           "rejected": {}, "duplicate": False}).encode(),
    b"[1, 2]",
]


def test_a_batch_is_resent_with_the_same_id_and_bytes_until_the_service_acknowledges_that_batch():
    with AckServer([*WRONG, right_ack], config=CONFIG) as server, Client(server.url, backoff=0.0, timeout=10) as client:
        ack = client.submit_body("c", "b1", b"the batch's bytes")
    assert ack == json.loads(right_ack("c", "b1"))
    assert len(server.requests) == len(WRONG) + 1
    assert set(server.requests) == {("/api/campaigns/c/batches/b1", b"the batch's bytes")}
    assert server.counted == [("c", "b1", b"the batch's bytes")]  # counted once


def test_values_randomized_once_are_resent_as_they_are_under_their_fresh_batch_id():
    values = np.random.default_rng(61).integers(0, 4, 50)
    with AckServer([WRONG[2], WRONG[3], right_ack], config=CONFIG) as server, \
            Client(server.url, backoff=0.0, timeout=10) as client:
        (ack,) = client.submit_values("c", values)
    assert len(server.requests) == 3 and len(set(server.requests)) == 1
    assert server.counted == [("c", ack["batch_id"], server.requests[0][1])]


def test_answers_that_never_acknowledge_fail_naming_the_server_and_keep_nothing_as_counted():
    failures = []
    with AckServer([WRONG[2]], config=CONFIG) as server, \
            Client(server.url, backoff=0.0, retries=2, timeout=10, on_retry=lambda *args: failures.append(args[0])) as client:
        with pytest.raises(ServiceUnavailableError) as error:
            client.submit_body("c", "b1", b"bytes")
    message = str(error.value)
    assert f"PUT {server.url}/api/campaigns/c/batches/b1 got no acknowledgement of batch id 'b1' of campaign 'c'" in message
    assert "a body that is not JSON" in message and "after 3 attempt(s)" in message
    assert f"Is {server.url} the dpdist service" in message and "Traceback" not in message
    assert len(server.requests) == 3 and len(set(server.requests)) == 1 and server.counted == []
    assert len(failures) == 2 and all(failure.startswith("no acknowledgement of batch id 'b1'") for failure in failures)


def test_a_campaign_in_rounds_is_acknowledged_by_its_rounds_campaign():
    with AckServer([lambda campaign, batch_id: right_ack("rounds", batch_id), right_ack],
                   config={**CONFIG, "submit_to": "rounds-r1"}) as server, \
            Client(server.url, backoff=0.0, timeout=10) as client:
        client.config("rounds")
        ack = client.submit_body("rounds", "b1", b"bytes")
    assert ack["campaign"] == "rounds-r1" and len(server.requests) == 2  # the round's campaign counts it


def test_an_answer_through_an_ohttp_relay_is_checked_after_it_is_decapsulated():
    pytest.importorskip("pyhpke")
    import base64

    from dpdist import _ohttp
    from dpdist._ohttp._bhttp import Response, decode_request, encode_response

    key = _ohttp.KeyConfig(3, _ohttp.public_key_of(b"\x01" * 32))
    keys = base64.urlsafe_b64encode(_ohttp.encode_key_list([key])).rstrip(b"=").decode()
    document = json.dumps({**CONFIG, "ohttp": {"keys": keys, "gateway": "/ohttp/gateway"}}).encode()
    puts = []

    def relay(request: httpx.Request) -> httpx.Response:
        opened = _ohttp.decapsulate_request({3: b"\x01" * 32}, request.read())
        inner = decode_request(opened.message)
        body = document
        if inner.method == "PUT":
            puts.append((inner.path, inner.content))
            body = right_ack("c", "another") if len(puts) == 1 else right_ack("c", "b1")
        answer = encode_response(Response(200, ((b"content-type", b"application/json"),), body))
        return httpx.Response(200, content=opened.respond(answer), headers={"content-type": "message/ohttp-res"})

    with Client("http://collector", ohttp_relay="http://relay/ohttp", ohttp_keys=_ohttp.encode_key_list([key]),
                transport=httpx.MockTransport(relay), backoff=0.0) as client:
        ack = client.submit_body("c", "b1", b"bytes")
    assert ack["batch_id"] == "b1" and len(puts) == 2 and len(set(puts)) == 1


def test_a_relays_answer_must_name_the_report_sent():
    pytest.importorskip("pyhpke")
    from dpdist import _ohttp
    from dpdist.client._relay_route import RelayRoute

    sent = []

    def relay(request: httpx.Request) -> httpx.Response:
        sent.append((request.url.path, request.read()))
        report_id = request.url.path.rsplit("/", 1)[1]
        answers = [{"campaign": "c", "report_id": "other.0", "duplicate": False}, {"ok": True},
                   {"campaign": "c", "report_id": report_id, "duplicate": False}]
        return httpx.Response(202, json=answers[min(len(sent), 3) - 1])

    route = RelayRoute("c", "http://relay", CONFIG["config"], None, "pin", _ohttp.KeyConfig(0, _ohttp.public_key_of(b"\x05" * 32)))
    with Client("http://collector", transport=httpx.MockTransport(relay), backoff=0.0) as client:
        client._relays["c"], client._routes["c"] = {"url": "http://relay"}, route
        ack = client.submit_body("c", "b1", b'{"reports": [1]}', "application/json")
    assert ack["relayed"] == 1 and ack["duplicates"] == 0
    assert len(sent) == 3 and len(set(sent)) == 1 and sent[0][0] == "/relay/v1/campaigns/c/ohttp/b1"


def _counts(accepted: int, n_read: int | None, rejected: dict | None = None, duplicate: bool = False):
    def answer(campaign: str, batch_id: str) -> bytes:
        ack = {"campaign": campaign, "batch_id": batch_id, "accepted": accepted, "rejected": rejected or {},
               "duplicate": duplicate}
        return json.dumps(ack if n_read is None else {**ack, "n_read": n_read}).encode()
    return answer


def test_an_acknowledgement_counting_more_reports_than_were_sent_is_none():
    """``accepted: 1000000`` for a batch of 50 was counted."""
    values = np.random.default_rng(62).integers(0, 4, 50)
    more = [_counts(1_000_000, 1_000_000), _counts(51, None), _counts(3, 1_000_000), _counts(50, 49),
            _counts(50, 51, {"out_of_range": 1})]
    failures: list[str] = []
    with AckServer([*more, _counts(48, 50, {"out_of_range": 2, "other_config": 2}, duplicate=True)], config=CONFIG) as server, \
            Client(server.url, backoff=0.0, timeout=10, on_retry=lambda *args: failures.append(args[0])) as client:
        (ack,) = client.submit_values("c", values)
    assert ack["accepted"] == 48 and len(server.requests) == len(more) + 1 and len(set(server.requests)) == 1
    assert all(failure.startswith("no acknowledgement of batch id") for failure in failures)
    assert "'accepted' (at most the 50 report(s) sent: 1000000)" in failures[0]
    assert "'n_read' (an integer >= 'accepted', 50)" in failures[3]


def test_the_counts_of_an_answer_of_dpdist_serve_fit_the_batch():
    """Every acknowledgement ``dpdist serve`` gives: a new batch, one with rejected rows (a row may count under several
    reasons), a duplicate (the first time's counts, of the same bytes) and an answer without ``n_read``."""
    from dpdist._http._acks import batch_ack_problem

    answers = [_counts(3, 3), _counts(1, 3, {"out_of_range": 2, "missing": 2}), _counts(0, 3, {"other_config": 3}),
               _counts(3, 3, duplicate=True), _counts(2, None, {"out_of_range": 1}), _counts(0, 0)]
    for answer in answers:
        response = httpx.Response(200, content=answer("c", "b"))
        assert batch_ack_problem(response, "c", "b", 3) is None
        assert batch_ack_problem(response, "c", "b") is None
    assert batch_ack_problem(httpx.Response(200, content=_counts(4, 4)("c", "b")), "c", "b", 3) is not None


def test_only_a_success_acknowledges_a_redirect_naming_the_batch_is_resent():
    """A 302 or 307 whose body named the batch was counted."""
    puts: list[tuple[str, bytes]] = []
    redirects = [(302, "http://portal.example/login"), (307, "http://127.0.0.2:18433/api/campaigns/c/batches/b1")]

    def server(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json=CONFIG)
        puts.append((request.url.path, request.read()))
        if len(puts) <= len(redirects):
            status, location = redirects[len(puts) - 1]
            return httpx.Response(status, content=right_ack("c", "b1"), headers={"Location": location})
        return httpx.Response(200, content=right_ack("c", "b1"))

    failures: list[str] = []
    with Client("http://collector", transport=httpx.MockTransport(server), backoff=0.0,
                on_retry=lambda *args: failures.append(args[0])) as client:
        ack = client.submit_body("c", "b1", b"bytes")
    assert ack["batch_id"] == "b1" and len(puts) == 3 and len(set(puts)) == 1
    assert failures == ["no acknowledgement: HTTP 302 (a redirect to 'http://portal.example/login', not followed)",
                        f"no acknowledgement: HTTP 307 (a redirect to {redirects[1][1]!r}, not followed)"]
    with Client("http://collector", transport=httpx.MockTransport(lambda request: httpx.Response(
            302, content=right_ack("c", "b1"), headers={"Location": "/elsewhere"})), backoff=0.0, retries=1) as client:
        with pytest.raises(ServiceUnavailableError, match="HTTP 302 .a redirect to '/elsewhere', not followed.") as error:
            client.submit_body("c", "b1", b"bytes")
    assert "Nothing is taken as counted" in str(error.value)


def test_what_an_answer_that_is_no_acknowledgement_names_is_escaped_and_masked():
    from dpdist._http._acks import batch_ack_problem

    request = httpx.Request("PUT", "http://h/x", headers={"Authorization": "Bearer submit-token-0123456789"})
    page = httpx.Response(200, headers={"Content-Type": "text/\x1b[31mhtml"}, content=b"<p>", request=request)
    assert "text/\\x1b[31mhtml)" in str(batch_ack_problem(page, "c", "b1"))
    echo = httpx.Response(200, json={"campaign": "c", "batch_id": "submit-token-0123456789\x1b[2J"}, request=request)
    problem = str(batch_ack_problem(echo, "c", "b1"))
    assert "submit-token-0123456789" not in problem and "'***\\x1b[2J'" in problem, problem


def test_an_acknowledgement_is_parsed_with_the_values_of_its_bound_on_bytes():
    from dpdist._http import _acks
    from dpdist._http._deadline import ACK_ANSWER_BYTES

    assert _acks._ACK_BYTES == ACK_ANSWER_BYTES
