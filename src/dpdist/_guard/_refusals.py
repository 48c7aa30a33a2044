"""Why a dpdist server refuses a request before its application sees it: the refusals the limits raise.

A :class:`Refusal` carries a short machine-readable ``code``, a sentence for
people (``detail``) and two hints for the transport: ``close`` (the request's
body was not read, so the connection should not be reused) and
``retry_after`` (seconds after which the same request may succeed).  The kinds
here are those of the limits (:mod:`._body`, :mod:`._rate`); ``dpdist serve``
adds its own kinds (``dpdist.serve._refusals``) on the same base, and each
kind's ``status`` is the HTTP status it is answered with.
"""

from __future__ import annotations

from ..errors import DPDistError

__all__ = ["Refusal", "InvalidRequest", "TooSlow", "TooLarge", "UnsupportedContentCoding", "RateLimited", "Busy"]


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


class TooSlow(Refusal):
    """The request's body did not arrive in time."""

    status = 408


class TooLarge(Refusal):
    """The request's body, records or rows exceed the server's limits."""

    status = 413


class UnsupportedContentCoding(Refusal):
    """The request's body comes in a content coding (``Content-Encoding``: gzip, ...) that the server does not read."""

    status = 415


class RateLimited(Refusal):
    """This client sends faster than its rate limit; retry after ``retry_after`` seconds."""

    status = 429


class Busy(Refusal):
    """The server is at capacity now; retry the same request after ``retry_after`` seconds."""

    status = 503
