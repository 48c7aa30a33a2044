"""Why the service refuses a request: domain errors, with no HTTP in them.

The storage, ingest and admission layers raise a :class:`Refusal` of the kind
that fits (the request is invalid, names an unknown campaign, conflicts with the
campaign's state, ...) with a short machine-readable ``code`` and a sentence for
people.  One place, :mod:`._http`, turns each kind into an HTTP status and a JSON
body ``{"error": code, "detail": detail}``.

The kinds the limits raise (:class:`InvalidRequest`, :class:`TooSlow`,
:class:`TooLarge`, :class:`UnsupportedContentCoding`, :class:`RateLimited`, :class:`Busy`) and their base
:class:`Refusal` are those of every dpdist server (:mod:`dpdist._guard._refusals`);
the service adds its own kinds here.  Two hints travel with a refusal for the
transport: ``close`` (the request's body was not read, so the connection should
not be reused) and ``retry_after`` (seconds after which the same request may
succeed).
"""

from __future__ import annotations

from .._guard._refusals import Busy, InvalidRequest, RateLimited, Refusal, TooLarge, TooSlow, UnsupportedContentCoding

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
    "UnsupportedContentCoding",
    "RateLimited",
    "Busy",
    "Failure",
]


class Unauthorized(Refusal):
    """The request lacks the token it needs (admin, submit or enrollment token)."""


class Forbidden(Refusal):
    """The token is right but may not do this (an enrollment token with no reports left)."""


class NotFound(Refusal):
    """The campaign (or file) named does not exist."""


class Conflict(Refusal):
    """The request conflicts with the campaign's state: not open, closed, full, a batch id reused, ..."""


class UnsupportedMediaType(Refusal):
    """The body's content type is none the service reads."""


class Failure(Refusal):
    """The service cannot answer this request because of a fault of its own (never the client's)."""
