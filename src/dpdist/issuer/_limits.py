"""The issuer's limits: the collection service's machinery (:mod:`dpdist.serve._limits`), reused from this one place.

The same bounds as ``dpdist serve`` and with the same option names and ``DPDIST_*`` variables:
header time (slowloris connections closed), body time and minimum rate, bytes of bodies held,
connections at once, keep-alive and shutdown times, and a token bucket of requests per client
address.  The issuer's bodies are small (a TokenRequest is 259 bytes, an admin request a few
hundred), so its body cap is :data:`MAX_BODY_BYTES`.  The options about batches and campaigns
(``--max-records``, ``--max-json-rows``, ...) do not apply and are not offered.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..errors import InvalidParameterError
from ..serve._limits import _HELP, BodyBudget, Limits, RateLimiter, receive_body, uvicorn_options
from ..serve._refusals import Busy, Conflict, Forbidden, InvalidRequest, NotFound, RateLimited, Refusal, TooLarge, TooSlow, Unauthorized, UnsupportedMediaType

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
#: the service's limit options the issuer takes
OPTIONS = ("max_inflight_bytes", "header_timeout", "body_timeout", "min_body_rate", "keep_alive_timeout", "limit_concurrency",
           "graceful_timeout", "rate_limit", "rate_burst", "http")
_ISSUER_HELP = {"rate_limit": "token requests per second per client address (IPv6: per /64), per process; 0: no limit (default {})",
                "rate_burst": "token requests a client address may send at once before --rate-limit applies (default {})"}


class Unprocessable(Refusal):
    """A TokenRequest the issuer cannot serve: wrong size, token type or key id (RFC 9578 section 6.2: HTTP 422)."""


def check_limits(limits: Any) -> Limits:
    """``limits`` (a :class:`Limits`, None for the defaults) checked as ``dpdist serve`` checks its own."""
    if limits is None:
        limits = Limits()
    if not isinstance(limits, Limits):
        raise InvalidParameterError(f"The 'limits' argument must be a dpdist.serve Limits or None. Got {type(limits).__name__}.")
    return limits.check(MAX_BODY_BYTES)


def add_arguments(parser) -> None:
    """The limit options of ``dpdist issuer serve`` (:data:`OPTIONS`), as ``dpdist serve`` has them."""
    defaults = Limits()
    for name in OPTIONS:
        default = getattr(defaults, name)
        options: dict[str, Any] = {"choices": ["auto", "httptools", "h11"]} if name == "http" else {}
        parser.add_argument("--" + name.replace("_", "-"), type=str if name == "http" else type(default), default=default,
                            help=_ISSUER_HELP.get(name, _HELP[name]).format(default), **options)


def from_args(args) -> Limits:
    return replace(Limits(), **{name: getattr(args, name) for name in OPTIONS}).check(MAX_BODY_BYTES)
