"""The issuer's limits: those of every dpdist server (:mod:`dpdist._guard`), with the same option names and
``DPDIST_*`` variables as ``dpdist serve`` and ``dpdist relay``.

Header time (slowloris connections closed), body time and minimum rate, bytes of bodies held (with
a share per client address), connections at once (503 with ``Retry-After`` beyond), keep-alive and
shutdown times, and a token bucket of requests per client address, kept in memory only for its
window.  The issuer's bodies are small (a TokenRequest is 259 bytes, an admin request a few
hundred), so its body cap is :data:`MAX_BODY_BYTES`.  The options about batches and campaigns
(``--max-records``, ``--max-json-rows``, ...) do not apply and are not offered.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from .._guard import BodyBudget, Limits, RateLimiter, receive_body, uvicorn_options
from .._guard import add_arguments as add_limit_arguments
from .._guard import from_args as limits_from_args
from .._guard._limits import HELP
from .._guard._refusals import Busy, Conflict, Forbidden, InvalidRequest, NotFound, RateLimited, Refusal, TooLarge, TooSlow, Unauthorized, UnsupportedMediaType

__all__ = [
    "MAX_BODY_BYTES",
    "OPTIONS",
    "BodyBudget",
    "Limits",
    "RateLimiter",
    "add_arguments",
    "check_limits",
    "from_args",
    "receive_body",
    "uvicorn_options",
    "Refusal",
    "Busy",
    "Conflict",
    "Forbidden",
    "InvalidRequest",
    "NotFound",
    "RateLimited",
    "TooLarge",
    "TooSlow",
    "Unauthorized",
    "UnsupportedMediaType",
    "Unprocessable",
]

#: the largest request body the issuer reads (a TokenRequest is 259 bytes; an admin request a few hundred)
MAX_BODY_BYTES = 64 << 10
#: the limit options the issuer takes: those of every dpdist server (:class:`dpdist._guard.Limits`)
OPTIONS = tuple(field.name for field in fields(Limits) if field.name in HELP)
_ISSUER_HELP = {"rate_limit": "token requests per second per client address (IPv6: per /64), per process; 0: no limit (default {})",
                "rate_burst": "token requests a client address may send at once before --rate-limit applies (default {})"}


class Unprocessable(Refusal):
    """A TokenRequest the issuer cannot serve: wrong size, token type or key id (RFC 9578 section 6.2: HTTP 422)."""

    status = 422


def check_limits(limits: Any) -> Limits:
    """``limits`` (a :class:`dpdist._guard.Limits`, ``dpdist.serve``'s included; None for the defaults) checked as
    ``dpdist serve`` checks its own."""
    return (Limits() if limits is None else limits).check(MAX_BODY_BYTES)  # its type: create_app's table


def add_arguments(parser) -> None:
    """The limit options of ``dpdist issuer serve`` (:data:`OPTIONS`), as ``dpdist serve`` has them."""
    add_limit_arguments(parser, Limits, {**HELP, **_ISSUER_HELP})


def from_args(args) -> Limits:
    return limits_from_args(args, MAX_BODY_BYTES, Limits, {**HELP, **_ISSUER_HELP})
