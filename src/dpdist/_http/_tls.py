"""The certificate-verifying TLS context every HTTP client of a dpdist process shares.

``httpx.Client()`` without a ``verify`` context builds one and loads the whole CA bundle for it (about 20-27 ms of
CPU), for each client, also for a plain ``http://`` server; a device fetches one Privacy Pass token per report
and the service client makes one client per command.  An :class:`ssl.SSLContext` may serve any number of clients
and connections (httpx's "SSL" guide: reuse one context), so one is built per CA setting and kept.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["verifying_context"]

#: the contexts built so far, one per CA setting of the environment (``SSL_CERT_FILE``, ``SSL_CERT_DIR``)
_CONTEXTS: dict[tuple[str, str], Any] = {}


def verifying_context() -> Any:
    """httpx's default verifying context (``verify=True``: the certifi bundle, or ``SSL_CERT_FILE`` /
    ``SSL_CERT_DIR`` when set), built once per CA setting and shared.  The CA setting is read when a client is
    made, as httpx reads it.

    Returns
    -------
    ssl.SSLContext
        The context to pass as ``verify=`` to ``httpx.Client`` / ``httpx.AsyncClient`` / a transport.
    """
    import httpx  # lazy: optional extra dpdist[serve]

    key = (os.environ.get("SSL_CERT_FILE", ""), os.environ.get("SSL_CERT_DIR", ""))
    context = _CONTEXTS.get(key)
    if context is None:
        context = _CONTEXTS.setdefault(key, httpx.create_ssl_context())
    return context
