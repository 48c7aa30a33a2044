"""Every way a client can send a secret to a dpdist server, and the lines of its log that hold one.

:func:`send_every_way` sends one secret to a running server (``dpdist serve``, ``relay`` or ``issuer``) in every place
a request has: each header a client may set (``Authorization`` in three schemes, ``X-Request-ID``, ``traceparent``,
``tracestate``, ``baggage``, ``Cookie``, forwarding and other headers, a header's name), the path (in each parameter
of each route template the server routes, as sent and percent-encoded, and paths it does not route), the query
string, the body (JSON, a form, plain text) and the method, and as raw bytes uvicorn's parsers refuse or take apart
(a request line, a version, a ``Host``, a length, a transfer coding, WebSocket and h2c upgrades).
:func:`send_through_gateway` sends it inside requests encapsulated to ``dpdist serve``'s Oblivious HTTP gateway (each
device route's parameters, the inner headers and query).  :func:`lines_holding` finds the log lines that hold a secret
in any spelling :func:`dpdist._shown.masked` knows (as sent, percent-encoded, JSON-escaped, in base64, ...).
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import socket
from urllib.parse import quote

import httpx

from dpdist._http._tls import verifying_context
from dpdist._shown import masked

#: headers a client may send with a secret in them (``{}``: the secret)
HEADERS = {
    "authorization": "Bearer {}", "x-request-id": "{}", "traceparent": "00-{}-00f067aa0ba902b7-01", "tracestate": "dpdist={}",
    "baggage": "token={}", "cookie": "token={}; session={}", "x-forwarded-for": "{}", "forwarded": "for={}",
    "x-real-ip": "{}", "user-agent": "{}", "referer": "https://example.org/?token={}", "x-api-key": "{}",
    "content-type": "{}", "accept": "{}", "if-none-match": '"{}"', "origin": "https://{}.example.org",
}
_PARAMETER = re.compile(r"\{([^}:]+)(?::[^}]+)?\}")


def filled_paths(template: str, secret: str, known: dict[str, str]) -> list[str]:
    """``template`` with ``secret`` (as sent, and percent-encoded) in each of its parameters in turn, the others
    ``known`` values (a campaign the server holds, ...), and in all of them at once."""
    names = _PARAMETER.findall(template)
    paths = []
    for value in dict.fromkeys((secret, quote(secret, safe=""))):
        paths.append(_PARAMETER.sub(lambda found: value, template))
        for name in names:
            paths.append(_PARAMETER.sub(lambda found: value if found.group(1) == name else known.get(found.group(1), "x"), template))
    return list(dict.fromkeys(paths))


def send_every_way(url: str, secret: str, routes: list[tuple[str, str]], known: dict[str, str], credential: str) -> int:
    """Send ``secret`` every way (see the module) to the server at ``url``, whose ``routes`` are ``(method, template)``
    pairs; ``known`` fills the other parameters of a template (``{"campaign": "c1"}``), ``credential`` is a valid
    ``Authorization`` header value sent beside the secret in some requests (so that a route goes past its token check).
    The number of requests sent."""
    sent = 0
    encoded = base64.b64encode(f"user:{secret}".encode()).decode()
    with httpx.Client(base_url=url, timeout=10, verify=verifying_context()) as client:
        def send(method, path, **options):
            nonlocal sent
            with contextlib.suppress(httpx.HTTPError):
                client.request(method, path, **options)
            sent += 1

        for method, template in routes:
            for path in filled_paths(template, secret, known):
                send(method, path, headers={"x-request-id": secret}, content=json.dumps({"token": secret}))
                send(method, path, headers={"authorization": credential})
            example = _PARAMETER.sub(lambda found: known.get(found.group(1), "x"), template)
            for query in (f"q={secret}", quote(secret, safe=""), f"token={secret}", f"access_token={secret}", f"{secret}=1"):
                send(method, f"{example}?{query}", headers={"authorization": credential})
            for name, value in HEADERS.items():
                send(method, example, headers={name: value.format(secret, secret), "authorization": credential}
                     if name != "authorization" else {name: value.format(secret)}, content=secret)
            for authorization in (f"Basic {encoded}", f'PrivateToken token="{secret}"', secret):
                send(method, example, headers={"authorization": authorization}, data={"token": secret})
            if re.fullmatch(r"[A-Za-z0-9!#$%&'*+.^_`|~-]+", secret):  # a header's name
                send(method, example, headers={secret: "1", "authorization": credential})
        for path in (f"/{secret}", f"/{quote(secret, safe='')}", f"/x/{secret}/y", f"/static/{secret}.js", f"/{secret}?{secret}"):
            send("GET", path)
            send("POST", path, content=secret, headers={"x-request-id": secret})
    port = httpx.URL(url).port
    for raw in _raw_requests(secret):
        _send_raw(port, raw)
        sent += 1
    return sent


def _raw_requests(secret: str) -> list[bytes]:
    """Requests of bytes no HTTP client sends, each holding ``secret``."""
    upgrade = ("Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
               "Sec-WebSocket-Version: 13\r\n")
    return [text.encode("utf-8") for text in (
        f"{secret} / HTTP/1.1\r\nHost: x\r\n\r\n",
        f"GET /{secret} HTTP/9.9\r\nHost: x\r\n\r\n",
        f"GET /{secret} {secret}\r\n\r\n",
        f"GET /api/campaigns/{secret}/config?x={secret} HTTP/1.1\r\nHost: x\r\n{upgrade}\r\n",
        f"GET /{secret}?x={secret} HTTP/1.1\r\nHost: x\r\n{upgrade}\r\n",
        f"GET /{secret} HTTP/1.1\r\nHost: x\r\nUpgrade: h2c\r\nConnection: Upgrade, HTTP2-Settings\r\nHTTP2-Settings: AAMAAABkAARAAAAAAAIAAAAA\r\n\r\n",
        f"GET / HTTP/1.1\r\nHost: {secret}\r\n{secret}\r\n\r\n",
        f"GET /\x00{secret} HTTP/1.1\r\nHost: x\r\n\r\n",
        f"PUT /x HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: {secret}\r\n\r\nhello",
        f"GET / HTTP/1.1\r\nHost: x\r\nX-Request-ID: {secret}\r\nContent-Length: {secret}\r\n\r\n",
        f"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n{secret}\r\n\r\n",
        f"GET / HTTP/1.1\r\nHost: x\r\nX-Request-ID: {secret}\r\nX-Request-ID: {secret}\r\n{'A' * 70000}: {secret}\r\n\r\n",
    )]


def _send_raw(port: int, data: bytes) -> None:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(data)
        connection.shutdown(socket.SHUT_WR)
        with contextlib.suppress(OSError):
            while connection.recv(65536):
                pass


def send_through_gateway(url: str, secret: str, routes: list[tuple[str, str]], known: dict[str, str]) -> int:
    """Send ``secret`` inside requests encapsulated to the Oblivious HTTP gateway of the ``dpdist serve`` at ``url``:
    in each parameter of each of ``routes`` (the devices'), in the inner ``X-Request-ID`` and ``Authorization``, the
    inner query and body; the outer request carries it as its ``X-Request-ID``.  The number of requests sent."""
    from dpdist import _ohttp
    from dpdist._ohttp import _bhttp

    sent = 0
    with httpx.Client(base_url=url, timeout=10, verify=verifying_context()) as client:
        config = _ohttp.decode_key_list(client.get("/ohttp/keys").content)[0]
        for method, template in routes:
            example = _PARAMETER.sub(lambda found: known.get(found.group(1), "x"), template)
            inner_paths = [*filled_paths(template, secret, known), f"{example}?q={secret}", f"{example}?token={secret}"]
            for path in inner_paths:
                for header in ((b"x-request-id", secret.encode()), (b"authorization", f"Bearer {secret}".encode())):
                    inner = _bhttp.encode_request(_bhttp.Request(method, "https", "collector", path, (header,), secret.encode()))
                    client.post("/ohttp/gateway", content=_ohttp.encapsulate_request(config, inner)[0],
                                headers={"content-type": "message/ohttp-req", "x-request-id": secret})
                    sent += 1
    return sent


def lines_holding(text: str, secrets: dict[str, str]) -> dict[str, list[str]]:
    """The lines of ``text`` holding each of ``secrets`` (by name) in any spelling :func:`dpdist._shown.masked`
    masks."""
    found: dict[str, list[str]] = {}
    for line in text.splitlines():
        for name, secret in secrets.items():
            if masked(line, (secret,)) != line:
                found.setdefault(name, []).append(line)
    return found
