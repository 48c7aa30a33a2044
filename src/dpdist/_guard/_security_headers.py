"""The security headers of every dpdist server's answers (pure ASGI, no body copies but HTML's).

:class:`SecurityHeadersMiddleware` puts ``X-Content-Type-Options: nosniff`` and ``Referrer-Policy: no-referrer`` on
every response; on HTML pages a Content-Security-Policy that allows scripts, styles, fetches and images from this
origin only, and a page's own inline ``<script>`` and ``<style>`` blocks by their SHA-256 (no ``'unsafe-inline'``;
the service's own pages have none, the participation page has its module script), and no framing
(``frame-ancestors 'none'``, ``X-Frame-Options: DENY``); and ``Strict-Transport-Security`` when the request came
over HTTPS (directly, or through a proxy trusted by ``--forwarded-allow-ips``).  ``dpdist serve`` and the token
issuer answer behind it; the service's fast routes add :func:`security_headers` themselves.
"""

from __future__ import annotations

import base64
import hashlib
import re

__all__ = ["SecurityHeadersMiddleware", "content_security_policy", "security_headers", "CONNECT_HEADER"]

_INLINE_SCRIPT = re.compile(r"<script\b(?![^>]*\bsrc\s*=)[^>]*>(.*?)</script\s*>", re.S | re.I)
_INLINE_STYLE = re.compile(r"<style\b[^>]*>(.*?)</style\s*>", re.S | re.I)
_ALL_RESPONSES = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
_HSTS = (b"strict-transport-security", b"max-age=31536000")


def security_headers(scope) -> list[tuple[bytes, bytes]]:
    """The security headers of every response but HTML pages' (which add their content security policy)."""
    return [*_ALL_RESPONSES, _HSTS] if scope.get("scheme") == "https" else _ALL_RESPONSES


def _sha256_sources(pattern: re.Pattern, page: str) -> str:
    return " ".join(
        "'sha256-" + base64.b64encode(hashlib.sha256(block.encode()).digest()).decode() + "'"
        for block in pattern.findall(page)
    )


#: a response header by which a page names the other origins it talks to (a relayed campaign's relay and issuer);
#: the middleware adds them to the page's ``connect-src`` and does not send the header
CONNECT_HEADER = b"x-dpdist-connect-src"


def content_security_policy(page: str, connect: str = "") -> str:
    """The CSP of an HTML ``page``: scripts and styles from this origin and its inline ones by hash, fetches and images
    from this origin only (and ``connect``: more origins it may send requests to, separated by spaces)."""
    scripts, styles = _sha256_sources(_INLINE_SCRIPT, page), _sha256_sources(_INLINE_STYLE, page)
    return "; ".join(
        [
            "default-src 'none'",
            f"script-src 'self' {scripts}".rstrip(),
            f"style-src 'self' {styles}".rstrip(),
            f"connect-src 'self' {connect}".rstrip(),
            "img-src 'self' data:",
            "base-uri 'none'",
            "form-action 'self'",
            "frame-ancestors 'none'",
        ]
    )


class SecurityHeadersMiddleware:
    """Adds the security headers (see the module); HTML bodies are held to hash their inline blocks."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        held: dict = {}

        async def sending(message):
            if message["type"] == "http.response.start":
                headers = [*message.get("headers", []), *security_headers(scope)]
                message = {**message, "headers": headers}
                content_type = next((value for name, value in headers if name.lower() == b"content-type"), b"")
                if content_type.startswith(b"text/html"):
                    held["start"], held["body"] = message, []
                    return
                await send(message)
            elif message["type"] == "http.response.body" and "start" in held:
                held["body"].append(message.get("body", b""))
                if message.get("more_body", False):
                    return
                body = b"".join(held["body"])
                start = held.pop("start")
                connect = next((value.decode("ascii") for name, value in start["headers"] if name.lower() == CONNECT_HEADER), "")
                policy = content_security_policy(body.decode("utf-8", "replace"), connect).encode()
                headers = [(name, value) for name, value in start["headers"] if name.lower() != CONNECT_HEADER]
                if scope.get("method") != "HEAD":  # a HEAD answer keeps the length of the page it did not send
                    headers = [(name, value) for name, value in headers if name.lower() != b"content-length"]
                    headers.append((b"content-length", str(len(body)).encode()))
                headers += [(b"content-security-policy", policy), (b"x-frame-options", b"DENY")]
                await send({**start, "headers": headers})
                await send({"type": "http.response.body", "body": body, "more_body": False})
            else:
                await send(message)

        await self.app(scope, receive, sending)
