"""dpdist.client.Client and issuer_of: the URLs they take (more of the client: tests/serve/test_app.py and beyond)."""

from __future__ import annotations

import pytest

from dpdist.errors import InvalidParameterError

pytest.importorskip("httpx")

from dpdist.client import Client, issuer_of  # noqa: E402 - after the extra's check

ADMIN = "admin-token-0123456789"


@pytest.mark.parametrize("relay", [{"url": "http://alice:S3cretPW@relay.example"}, {"url": "https://alice@relay.example:1/x"},
                                   {"url": "http://relay.example", "issuer": {"url": "http://alice:S3cretPW@issuer.example"}}])
def test_a_relayed_campaign_s_urls_with_a_password_are_refused_before_anything_is_sent(relay):
    """The relay's and the issuer's URLs are published to every device with the campaign's config (a bad port: the
    service refuses it, tests/serve/test_relayed.py)."""
    with Client("http://127.0.0.1:1", admin_token=ADMIN, retries=0) as client:  # nothing listens: refused first
        with pytest.raises(InvalidParameterError, match=r"relay\['") as refused:
            client.create_campaign("c", {"protocol": "grr", "version": 1, "epsilon": 1.0, "domain_size": 2}, relay=relay)
    assert "S3cretPW" not in str(refused.value)


def test_an_issuer_named_with_a_password_is_refused_before_it_is_asked():
    with pytest.raises(InvalidParameterError, match="'url' parameter of issuer_of.*without user:password@") as refused:
        issuer_of("http://alice:S3cretPW@127.0.0.1:1", "k")
    assert "S3cretPW" not in str(refused.value) and "alice:***@127.0.0.1:1" in str(refused.value)


def _answering(status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> Client:
    """A client whose every request gets this answer (the bytes of its headers as given)."""
    import httpx

    transport = httpx.MockTransport(lambda request: httpx.Response(status, headers=headers or [], content=body))
    return Client("http://h", admin_token=ADMIN, transport=transport, retries=0)


@pytest.mark.parametrize("kind, body", [(b"text/html", b"<html>portal</html>"), (b"image/png", b"<html>portal</html>"),
                                        (b"application/json", b"\x89PNG\r\n\x1a\n...")])
def test_a_plot_that_is_not_a_png_is_refused(kind, body):
    from dpdist.errors import ServiceRefusedError

    with pytest.raises(ServiceRefusedError, match="not a PNG image") as error:
        _answering(200, body, [(b"Content-Type", kind)]).estimate_png("c")
    assert error.value.code == "unexpected_answer"
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256))
    assert _answering(200, png, [(b"Content-Type", b"image/png")]).estimate_png("c") == png


@pytest.mark.parametrize("call", ["campaigns", "estimate", "open_campaign", "close_campaign", "delete_campaign",
                                  "create_campaign"])
@pytest.mark.parametrize("body", [b'{"x": 1}', b'{"campaigns": [1, 2], "campaign": 3}', b'{"campaigns": null}'])
def test_a_route_s_answer_without_what_it_holds_is_refused(call, body):
    from dpdist.errors import ServiceRefusedError

    client = _answering(200, body, [(b"Content-Type", b"application/json")])
    arguments = {"campaigns": (), "create_campaign": ("c", {"protocol": "grr"})}.get(call, ("c",))
    with pytest.raises(ServiceRefusedError, match="is not what a dpdist service answers") as error:
        getattr(client, call)(*arguments)
    assert error.value.code == "unexpected_answer"


@pytest.mark.parametrize("status, body, headers", [
    (401, b'{"error": "unauthorized", "detail": "bad token %s"}', []),
    (404, b"<h1>NF Authorization: Bearer %s</h1>", [(b"Content-Type", b"text/html")]),
    (200, b"<html>hi %s</html>", [(b"Content-Type", b"text/html")]),
    (200, b"{}", [(b"Content-Type", b"text/%s")]),
    (307, b"", [(b"Location", b"http://h/?token=%s&admin_token=X9")]),
])
def test_the_client_s_own_token_echoed_by_a_server_is_never_shown(status, body, headers):
    from dpdist.errors import ServiceRefusedError

    token = ADMIN.encode()
    client = _answering(status, body.replace(b"%s", token), [(name, value.replace(b"%s", token)) for name, value in headers])
    with pytest.raises(ServiceRefusedError) as error:
        client.campaigns()
    assert ADMIN not in str(error.value) and "***" in str(error.value), str(error.value)


@pytest.mark.parametrize("status, body, headers", [
    (409, b'{"error": "conflict", "detail": "x\\u001b[2J\\u001b]0;pwned\\u0007 line1\\nline2"}', [(b"Content-Type", b"application/json")]),
    (404, b"<h1>\x1b[31mNF</h1>\nline2", [(b"Content-Type", b"text/html")]),
    (200, b"<p>", [(b"Content-Type", b"text/\x1b[31mhtml\x1b]0;t\x07")]),
])
def test_control_characters_of_a_server_s_answer_are_escaped_in_one_line(status, body, headers):
    from dpdist.errors import ServiceRefusedError

    with pytest.raises(ServiceRefusedError) as error:
        _answering(status, body, headers).campaigns()
    message = str(error.value)
    assert message.isprintable() and "\\x1b[" in message, message


def test_a_refusal_without_a_reason_says_so():
    from dpdist.errors import ServiceRefusedError

    with pytest.raises(ServiceRefusedError, match=r"HTTP 600 \(no reason given\)$"):
        _answering(600, b"").campaigns()
    with pytest.raises(ServiceRefusedError, match=r"HTTP 404 Not Found$"):
        _answering(404, b"Not Found").campaigns()


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/?x", "http://127.0.0.1:9#f", "http://127.0.0.1:9/base/?x=1"])
def test_issuer_of_refuses_a_query_or_fragment_before_any_request(url):
    """It went to ``GET /?x/issuer/v1/keys/k1`` (or ``/``), and the refusal was a misleading 404 (attack66 F7)."""
    import httpx

    def never(request):
        raise AssertionError(f"sent {request.url}")

    with pytest.raises(InvalidParameterError, match="without a query or fragment"):
        issuer_of(url, "k1", transport=httpx.MockTransport(never))


def test_the_issuer_s_key_is_read_up_to_the_answer_limit():
    """A device checks the issuer's key of a relayed campaign; an answer past the limit (an acknowledgement's, 1 MiB:
    a key is a few hundred bytes) is no key (attack66 F6, attack69 F2)."""
    import httpx

    from dpdist.errors import CampaignIdentityError
    from dpdist.privacypass import b64url_encode
    from dpdist.serve._relay_route import RelayRoute

    key = bytes(range(32))
    padding = {"within": b" " * (512 << 10), "past": b" " * (2 << 20)}
    answer = b'{"token_key": "%s"}' % b64url_encode(key).encode()
    issuer = {"url": "http://issuer", "key": "k1"}
    route = RelayRoute("c", "http://relay", b"", {}, issuer, "")
    route._check_issuer_key(issuer, key, httpx.MockTransport(
        lambda request: httpx.Response(200, content=answer + padding["within"])))  # within the limit: the key is read
    with pytest.raises(CampaignIdentityError) as error:
        route._check_issuer_key(issuer, key, httpx.MockTransport(
            lambda request: httpx.Response(200, content=answer + padding["past"])))
    assert error.value.code == "issuer_key_mismatch"
