"""A 2xx answer read as a dpdist service's (or issuer's) JSON object, or refused in one line.

Every answer a client reads (:class:`dpdist.client.Client`'s admin and device calls, ``issuer_of``, ``dpdist issuer
...``) goes through :func:`answer_document`.  A success that is not the object dpdist serves - a proxy's or captive
portal's page, another server, an older dpdist - ended in ``KeyError``/``JSONDecodeError`` ("internal error ... a bug
of dpdist") or was printed as if it were the answer; it is now a :class:`ServiceRefusedError` (code
``unexpected_answer``) naming the request, the status, the content type and the start of the body (masked).
"""

from __future__ import annotations

from typing import Any

from ._redact import redacted_text
from .errors import ServiceRefusedError

__all__ = ["answer_document", "UNEXPECTED"]

#: the ``code`` of the error of an answer that is not a dpdist service's
UNEXPECTED = "unexpected_answer"


def answer_document(method: str, url: str, response: Any, keys: tuple[str, ...] = (),
                    what: str = "a dpdist service") -> dict:
    """The JSON object answered to ``method url``, which holds ``keys``.

    Parameters
    ----------
    method, url : str
        The request (shown masked).
    response : httpx.Response
        Its answer (a success: refusals and redirects are read before).
    keys : tuple of str
        The keys the caller reads.
    what : str
        Who should have answered (``"a dpdist service"``, ``"a dpdist issuer"``).

    Returns
    -------
    dict
        The answer's object.

    Raises
    ------
    ServiceRefusedError
        ``"The answer to GET http://h/api/campaigns is not what a dpdist service answers (HTTP 200, text/html,
        no 'campaigns'): '<html>...'. Is http://h the service ..."``, its ``code`` ``"unexpected_answer"``.
    """
    why: str | None
    try:
        document = response.json()
    except ValueError:  # not JSON (a page), or cut short
        why = "not JSON"
    else:
        if isinstance(document, dict):
            why = next((f"no {key!r}" for key in keys if key not in document), None)
            if why is None:
                return document
        else:
            why = "not a JSON object"
    kind = response.headers.get("Content-Type", "no content type").split(";")[0].strip() or "no content type"
    excerpt = " ".join(response.text[:120].split())
    raise ServiceRefusedError(redacted_text(
        f"The answer to {method} {url} is not what {what} answers (HTTP {response.status_code}, {kind}, {why}): "
        f"{excerpt!r}. Is that URL {what}, not a proxy, a captive portal or another server answering in its place?"),
        status=response.status_code, code=UNEXPECTED)
