"""Why the service refuses a request: domain errors, with no HTTP in them.

The storage, ingest and admission layers raise a :class:`Refusal` of the kind
that fits (the request is invalid, names an unknown campaign, conflicts with the
campaign's state, ...) with a short machine-readable ``code`` and a sentence for
people.  One place, :mod:`._http`, turns each kind into an HTTP status and a JSON
body ``{"error": code, "detail": detail}``.

Two hints travel with a refusal for the transport: ``close`` (the request's body
was not read, so the connection should not be reused) and ``retry_after``
(seconds after which the same request may succeed).
"""

from __future__ import annotations

from ..errors import DPDistError

__all__ = [
    "Refusal",
    "InvalidRequest",
    "Unauthorized",
    "Forbidden",
    "NotFound",
    "TooSlow",
    "Conflict",
    "TooLarge",
    "UnsupportedMediaType",
    "RateLimited",
    "Busy",
    "Failure",
]


class Refusal(DPDistError):
    """A request the service does not carry out; ``code`` names why (``campaign_closed``, ``too_large``, ...).

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

    def __init__(self, code: str, detail: str, *, close: bool = False, retry_after: int | None = None):
        super().__init__(detail)
        self.code, self.detail = code, detail
        self.close, self.retry_after = close, retry_after

    def __reduce__(self):  # refusals cross process boundaries (estimates computed in another process)
        return _rebuild, (type(self), self.code, self.detail, self.close, self.retry_after)


def _rebuild(kind, code, detail, close, retry_after):
    return kind(code, detail, close=close, retry_after=retry_after)


class InvalidRequest(Refusal):
    """The request itself is wrong: a malformed id, config, option, body or batch."""


class Unauthorized(Refusal):
    """The request lacks the token it needs (admin, submit or enrollment token)."""


class Forbidden(Refusal):
    """The token is right but may not do this (an enrollment token with no reports left)."""


class NotFound(Refusal):
    """The campaign (or file) named does not exist."""


class TooSlow(Refusal):
    """The request's body did not arrive in time."""


class Conflict(Refusal):
    """The request conflicts with the campaign's state: not open, closed, full, a batch id reused, ..."""


class TooLarge(Refusal):
    """The request's body, records or rows exceed the server's limits."""


class UnsupportedMediaType(Refusal):
    """The body's content type is none the service reads."""


class RateLimited(Refusal):
    """This client sends faster than its rate limit; retry after ``retry_after`` seconds."""


class Busy(Refusal):
    """The server is at capacity now; retry the same request after ``retry_after`` seconds."""


class Failure(Refusal):
    """The service cannot answer this request because of a fault of its own (never the client's)."""
