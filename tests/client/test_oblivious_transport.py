"""A device's side of Oblivious HTTP (dpdist.client._oblivious_transport): which key configuration it takes, what it refuses,
and what it makes of a relay's own answers."""

from __future__ import annotations

import base64
import json

import httpx
import pytest

pytest.importorskip("pyhpke")

from dpdist.client import AdminClient, Client  # noqa: E402
from dpdist.errors import CampaignIdentityError, InvalidParameterError  # noqa: E402
from dpdist import _ohttp  # noqa: E402
from dpdist.client._oblivious_transport import ObliviousTransport, campaign_key_config  # noqa: E402

KEY = _ohttp.KeyConfig(3, _ohttp.public_key_of(b"\x01" * 32))
OTHER = _ohttp.KeyConfig(3, _ohttp.public_key_of(b"\x02" * 32))


def _document(*configs, **extra) -> dict:
    keys = base64.urlsafe_b64encode(_ohttp.encode_key_list(configs)).rstrip(b"=").decode()
    return {"campaign": "c", "ohttp": {"keys": keys, "gateway": "/ohttp/gateway"}, **extra}


def test_the_newest_supported_configuration_is_taken_and_checked_against_the_given_one():
    chacha_only = _ohttp.KeyConfig(9, _ohttp.public_key_of(b"\x03" * 32), ((1, 3),))
    assert campaign_key_config("c", _document(chacha_only, KEY), None) == KEY
    assert campaign_key_config("c", _document(KEY), _ohttp.encode_key_list([OTHER, KEY])) == KEY
    with pytest.raises(CampaignIdentityError) as swapped:
        campaign_key_config("c", _document(OTHER), _ohttp.encode_key_list([KEY]))
    assert swapped.value.code == "ohttp_key_mismatch"
    rotated = _ohttp.KeyConfig(4, _ohttp.public_key_of(b"\x04" * 32))  # a rotation states a new
    assert campaign_key_config("c", _document(rotated, KEY), _ohttp.encode_key_list([KEY])) == KEY  # key first
    assert campaign_key_config("c", _document(rotated, KEY), _ohttp.encode_key_list([rotated, KEY])) == rotated
    for document, code in ((_document(chacha_only), "ohttp_key_mismatch"), ({"campaign": "c"}, "no_ohttp_gateway"),
                           (_document(KEY, relay={"url": "http://relay"}), "relayed_campaign")):
        with pytest.raises(CampaignIdentityError) as refused:
            campaign_key_config("c", document, None)
        assert refused.value.code == code


def test_client_arguments_are_checked_by_name():
    with pytest.raises(InvalidParameterError, match="'ohttp_relay'"):
        Client("http://collector", ohttp_relay="ftp://relay")
    with pytest.raises(InvalidParameterError, match="'ohttp_keys'"):
        Client("http://collector", ohttp_relay="http://relay/ohttp", ohttp_keys=b"\x00\x05xx")
    with pytest.raises(InvalidParameterError, match="'ohttp_relay' parameter of Client must be given \\(not None\\) when 'ohttp_keys' is given"):
        Client("http://collector", ohttp_keys=_ohttp.encode_key_list([KEY]))


@pytest.mark.parametrize("kind, name", [(AdminClient, "admin_token"), (Client, "submit_token")])
def test_client_tokens_must_be_printable_ascii_and_are_shown_by_length_only(kind, name):
    with pytest.raises(InvalidParameterError, match=rf"'{name}' parameter of {kind.__name__} .* printable ASCII") as refused:
        kind("http://collector", **{name: "SECRET\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9\u00e9"})
    assert "SECRET" not in str(refused.value) and "16 characters" in str(refused.value)


def _transport(answer) -> ObliviousTransport:
    return ObliviousTransport("http://relay/ohttp", KEY, transport=httpx.MockTransport(answer))


def test_the_relays_own_answers_are_passed_on_and_a_changed_answer_is_a_transport_error():
    problem = {"type": "https://iana.org/assignments/http-problem-types#ohttp-key", "title": "key identifier unknown"}
    cases = [
        (httpx.Response(400, content=json.dumps(problem), headers={"content-type": "application/problem+json"}), 400,
         "ohttp_key_mismatch"),
        (httpx.Response(502, text="dropped"), 502, None),
        (httpx.Response(200, text="hello", headers={"content-type": "text/plain"}), 502, "not_encapsulated"),
    ]
    for outer, status, code in cases:
        with httpx.Client(transport=_transport(lambda request, outer=outer: outer)) as client:
            answer = client.put("http://collector/api/campaigns/c/batches/b", content=b"x")
        assert answer.status_code == status
        if code is not None:
            assert answer.json()["error"] == code
    garbage = httpx.Response(200, content=b"\x00" * 40, headers={"content-type": "message/ohttp-res"})
    with httpx.Client(transport=_transport(lambda request: garbage)) as client, pytest.raises(httpx.RemoteProtocolError):
        client.put("http://collector/api/campaigns/c/batches/b", content=b"x")


@pytest.mark.parametrize("body, headers, said", [
    (b" " * ((1 << 20) + 1), {}, "is larger than dpdist reads"),
    (b"\x1f\x8b\x08\x00not gzip", {"content-encoding": "gzip"}, "is corrupt or cut short"),
    (b"{}", {"content-encoding": "br"}, "is in a coding dpdist does not read"),
])
def test_a_refusal_of_the_relays_own_answer_names_the_relay_not_the_service(body, headers, said):
    """The relay's oversize answer said "Is that URL the dpdist service" (it is the relay's URL)."""
    from dpdist.errors import ServiceRefusedError

    outer = httpx.Response(200, stream=httpx.ByteStream(body), headers={"content-type": "message/ohttp-res", **headers})
    with httpx.Client(transport=_transport(lambda request: outer)) as client, \
            pytest.raises(ServiceRefusedError) as refused:
        client.put("http://collector/api/campaigns/c/batches/b", content=b"x")
    message = str(refused.value)
    assert said in message and "POST http://relay/ohttp" in message, message
    assert "Is that URL the Oblivious HTTP relay" in message and "the dpdist service" not in message, message


def test_what_the_relay_receives_is_one_encapsulated_request_to_the_configuration():
    seen = []

    def relay(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(502)

    with httpx.Client(transport=_transport(relay)) as client:
        client.put("http://collector/api/campaigns/c/batches/b", content=b"secret body", headers={"authorization": "Bearer t"})
    (request,) = seen
    assert request.method == "POST" and str(request.url) == "http://relay/ohttp"
    assert request.headers["content-type"] == "message/ohttp-req"
    body = request.read()
    assert body[:7] == bytes([3]) + bytes.fromhex("002000010001")
    assert b"secret" not in body and b"Bearer" not in body and b"authorization" not in bytes(request.headers.raw[0][0])
    opened = _ohttp.decapsulate_request({3: b"\x01" * 32}, body)
    from dpdist._ohttp._bhttp import decode_request

    inner = decode_request(opened.message)
    assert (inner.method, inner.path, inner.content, inner.header("authorization")) == (
        "PUT", "/api/campaigns/c/batches/b", b"secret body", "Bearer t")
    # no user-agent (it named python-httpx and its version) nor accept: the fields every dpdist client sends
    assert sorted(name for name, _ in inner.headers) == [b"authorization", b"dpdist-ohttp-answer"], inner


def test_a_device_given_its_keys_fetches_the_config_through_the_relay_too():
    """With ``ohttp_keys`` the collector never sees the device's address, not even for the config (it would otherwise
    link the address to the encapsulated batch that follows by time)."""
    from dpdist._ohttp._bhttp import Response, decode_request, encode_response

    document = json.dumps(_document(KEY, config={"protocol": "grr"})).encode()
    hosts, inner_paths = [], []

    def relay(request: httpx.Request) -> httpx.Response:
        hosts.append(request.url.host)
        opened = _ohttp.decapsulate_request({3: b"\x01" * 32}, request.read())
        inner_paths.append(decode_request(opened.message).path)
        answer = encode_response(Response(200, ((b"content-type", b"application/json"),), document))
        return httpx.Response(200, content=opened.respond(answer), headers={"content-type": "message/ohttp-res"})

    with Client("http://collector", ohttp_relay="http://relay/ohttp", ohttp_keys=_ohttp.encode_key_list([KEY]),
                transport=httpx.MockTransport(relay), retries=0) as client:
        assert client.config("c")["ohttp"] == _document(KEY)["ohttp"]
    assert hosts == ["relay"] and inner_paths == ["/api/campaigns/c/config"]
    with pytest.raises(InvalidParameterError, match="X25519"):
        Client("http://collector", ohttp_relay="http://relay/ohttp",
               ohttp_keys=_ohttp.encode_key_list([_ohttp.KeyConfig(9, KEY.public_key, ((1, 3),))]))


def test_a_relay_echoing_the_basic_credential_of_its_url_bare_or_decoded_has_it_masked_and_is_named():
    """``--ohttp-relay http://u:pw@...``: a relay answering 400 with the Basic credential bare (its
    base64, its ``u:pw`` decoded) had it shown, and the line said "The server refused"."""
    from dpdist.errors import ServiceRefusedError

    def relay(request: httpx.Request) -> httpx.Response:
        credential = request.headers["authorization"].split()[-1]
        said = f"you sent {credential}, that is {base64.b64decode(credential).decode()}, password OHSECRET9"
        return httpx.Response(400, json={"error": "unauthorized", "detail": said})

    with Client("http://collector", ohttp_relay="http://u:OHSECRET9@relay/ohttp", ohttp_keys=_ohttp.encode_key_list([KEY]),
                transport=httpx.MockTransport(relay), retries=0, retry_window=0) as client:
        with pytest.raises(ServiceRefusedError) as refused:
            client.config("c")
    message = str(refused.value)
    encoded = base64.b64encode(b"u:OHSECRET9").decode()
    assert "OHSECRET9" not in message and encoded not in message, message
    assert message.startswith("The Oblivious HTTP relay refused GET /api/campaigns/c/config: HTTP 400 unauthorized"), message
