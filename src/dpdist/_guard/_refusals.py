"""Why a dpdist server refuses a request: the kinds of refusal of every dpdist server, with no HTTP but their status.

A :class:`Refusal` carries a short machine-readable ``code``, a sentence for
people (``detail``) and two hints for the transport: ``close`` (the request's
body was not read, so the connection should not be reused) and
``retry_after`` (seconds after which the same request may succeed).  The limits
(:mod:`._body`, :mod:`._rate`) raise some kinds; the storage, ingest and admission
layers of ``dpdist serve`` and the token issuer raise the others.  Each kind's
``status`` is the HTTP status it is answered with, and :func:`refusal_headers` the
headers every server answers it with.
"""

from __future__ import annotations

from ..errors import DPDistError

__all__ = ["Refusal", "InvalidRequest", "Unauthorized", "Forbidden", "NotFound", "TooSlow", "Conflict", "TooLarge",
           "UnsupportedMediaType", "UnsupportedContentCoding", "RateLimited", "Busy", "Failure", "refusal_headers"]


class Refusal(DPDistError):
    """A request the server does not carry out; ``code`` names why (``too_large``, ``busy``, ...).

    Parameters
    ----------
    code : str
        Short machine-readable reason.
    detail : str
        One sentence for people: what is wrong and what to do.
    close : bool
        The request's body was not read: the answer should close the connection.
    retry_after : int, optional
        Seconds after which the same request may succeed.
    """

    status = 500

    def __init__(self, code: str, detail: str, *, close: bool = False, retry_after: int | None = None):
        super().__init__(detail)
        self.code, self.detail = code, detail
        self.close, self.retry_after = close, retry_after

    def __reduce__(self):  # refusals cross process boundaries (estimates computed in another process)
        return _rebuild, (type(self), self.code, self.detail, self.close, self.retry_after)


def _rebuild(kind, code, detail, close, retry_after):
    return kind(code, detail, close=close, retry_after=retry_after)


class InvalidRequest(Refusal):
    """The request itself is wrong: a malformed id, config, option, body or batch; or it was cut short."""

    status = 400


class Unauthorized(Refusal):
    """The request lacks the token it needs (admin, submit or enrollment token, an issuer's credential)."""

    status = 401


class Forbidden(Refusal):
    """The token is right but may not do this (an enrollment token or a credential with no reports left)."""

    status = 403


class NotFound(Refusal):
    """What the request names (a campaign, a key, a file) does not exist."""

    status = 404


class TooSlow(Refusal):
    """The request's body did not arrive in time."""

    status = 408


class TooLarge(Refusal):
    """The request's body, records or rows exceed the server's limits."""

    status = 413


class Conflict(Refusal):
    """The request conflicts with the state of what it names: a campaign not open, closed, full, a batch id reused,
    a key that exists."""

    status = 409


class UnsupportedMediaType(Refusal):
    """The body's content type is none the server reads."""

    status = 415


class UnsupportedContentCoding(Refusal):
    """The request's body comes in a content coding (``Content-Encoding``: gzip, ...) that the server does not read."""

    status = 415


class RateLimited(Refusal):
    """This client sends faster than its rate limit; retry after ``retry_after`` seconds."""

    status = 429


class Busy(Refusal):
    """The server is at capacity now; retry the same request after ``retry_after`` seconds."""

    status = 503


class Failure(Refusal):
    """The server cannot answer this request because of a fault of its own (never the client's)."""

    status = 500


def refusal_headers(refusal: Refusal) -> dict[str, str]:
    """The headers ``refusal`` is answered with: a challenge for a missing token, ``Connection: close`` for a body not
    read (do not read or wait for the rest of it), ``Retry-After``."""
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(refusal, Unauthorized) else {}
    if refusal.close:
        headers["Connection"] = "close"
    if refusal.retry_after is not None:
        headers["Retry-After"] = str(int(refusal.retry_after))
    return headers
