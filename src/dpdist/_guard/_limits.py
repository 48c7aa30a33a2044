"""The bounds of any dpdist server on the internet: memory, time, connections, rate and size (docs/reference/service-limits.md, "Limits").

An unauthenticated client must not be able to make a server hold memory,
connections or CPU beyond stated bounds.  :class:`Limits` holds the bounds
every dpdist ASGI application shares (``dpdist serve``, ``dpdist relay``, any
other), each an option of the same name on their command lines
(:func:`add_arguments`, and ``DPDIST_<OPTION>`` in the environment):

* **in-flight body bytes** (``--max-inflight-bytes``): the bytes of request
  bodies a process holds at once, over all requests; inside it a share per
  client address (``--max-inflight-bytes-per-address``) and half for bodies
  without a checked credential (:mod:`._body`); a body that would pass one is
  refused at once with 503 and ``Retry-After``;
* **body time** (``--body-timeout``, ``--min-body-rate``, ``--body-idle-timeout``):
  a body must arrive within the deadline, and by ``t`` seconds after its headers
  have delivered at least ``min_body_rate * (t - 5)`` bytes, never banking more
  than ``body_idle_timeout`` seconds of that credit (it may pause that long, no
  longer: :func:`._body.next_deadline`); otherwise 408 and the connection is
  closed;
* **header time** (``--header-timeout``): a connection whose request headers are
  not complete within it (from the connection's start, or from the first byte of
  a following request) is closed: slowloris connections do not accumulate
  (:mod:`._protocol`);
* **idle keep-alive** (``--keep-alive-timeout``), **connections**
  (``--limit-concurrency``: beyond it 503 with ``Retry-After``), request headers
  of at most 16 KiB (h11's limit, and :mod:`._protocol_httptools`'s), and a
  **graceful-shutdown** deadline (``--graceful-timeout``) after which SIGTERM
  cancels requests still running;
* **incomplete heads per address** (``--max-pending-heads-per-address``): the
  connections one client address (IPv6: /64) holds whose request headers are not
  complete; one more is closed as it opens (:mod:`._protocol`);
* **rate** (``--rate-limit``, ``--rate-burst``): a token bucket of requests per
  client address (IPv6: per /64), in memory only, per process, each address
  forgotten once its bucket is full again (:mod:`._rate`).

:func:`uvicorn_options` gives uvicorn the bounds it enforces (the protocol
class, timeouts, connections); :func:`._middleware.guard` puts an application
behind the rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from ..errors import InvalidParameterError
from ._body import BodyBudget
from ._rate import DEFAULT_MAX_PENDING_HEADS

__all__ = ["Limits", "HELP", "DEFAULT_MAX_PENDING_HEADS", "HTTP_CHOICES", "MAX_HEADER_BYTES", "BODY_GRACE_S", "add_arguments", "from_args",
           "protocol_class", "uvicorn_options"]

#: seconds a body may take before the minimum rate applies
BODY_GRACE_S = 5.0
#: request line and headers, at most (h11's default limit, stated; enforced on httptools by _protocol_httptools)
MAX_HEADER_BYTES = 16 << 10
#: HTTP parsers of ``--http``: httptools when installed (``auto``), else h11 (:mod:`._protocol`)
HTTP_CHOICES = ("auto", "httptools", "h11")


@dataclass(frozen=True)
class Limits:
    """The bounds of one dpdist server process (defaults: safe for a server on the internet).

    ``max_inflight_bytes_per_address`` None: the larger of the server's largest body and an eighth of
    ``max_inflight_bytes`` (:meth:`address_share`).
    """

    max_inflight_bytes: int = 128 << 20
    max_inflight_bytes_per_address: int | None = None
    header_timeout: float = 10.0
    body_timeout: float = 120.0
    min_body_rate: int = 1024
    body_idle_timeout: float = 10.0
    keep_alive_timeout: int = 5
    limit_concurrency: int = 1000
    graceful_timeout: int = 10
    rate_limit: float = 20.0
    rate_burst: int = 100
    http: str = "auto"
    max_pending_heads_per_address: int = DEFAULT_MAX_PENDING_HEADS
    body_grace: float = BODY_GRACE_S  # not an option: tests shorten it

    def _need(self, ok: bool, name: str, allowed: str) -> None:
        if not ok:
            option = "--" + name.replace("_", "-")
            raise InvalidParameterError(f"The '{option}' option must be {allowed}. Got {getattr(self, name)!r}.")

    def check(self, max_body_bytes: int) -> "Limits":
        """Refuse out-of-range values, naming the command-line option (``max_body_bytes``: the server's largest body)."""
        need = self._need

        def positive(name, kind=(int, float)):
            value = getattr(self, name)
            need(isinstance(value, kind) and not isinstance(value, bool) and math.isfinite(value) and value > 0, name,
                 "a number > 0" if kind is not int else "an int > 0")

        for name in ("header_timeout", "body_timeout", "body_idle_timeout"):
            positive(name)
        # set above --body-timeout it could never apply; the default (10 s) is simply bounded by a shorter body timeout
        need(self.body_idle_timeout <= self.body_timeout or self.body_idle_timeout == type(self).body_idle_timeout,
             "body_idle_timeout",
             f"at most --body-timeout ({self.body_timeout}): a body may not pause longer than it may take")
        for name in ("min_body_rate", "keep_alive_timeout", "limit_concurrency", "graceful_timeout", "rate_burst",
                     "max_pending_heads_per_address"):
            positive(name, int)
        need(isinstance(self.max_inflight_bytes, int) and not isinstance(self.max_inflight_bytes, bool)
             and self.max_inflight_bytes >= max_body_bytes, "max_inflight_bytes", f"an int >= --max-body-bytes ({max_body_bytes})")
        per_address = self.max_inflight_bytes_per_address
        need(per_address is None or (isinstance(per_address, int) and not isinstance(per_address, bool)
                                     and max_body_bytes <= per_address <= self.max_inflight_bytes),
             "max_inflight_bytes_per_address",
             f"an int from --max-body-bytes ({max_body_bytes}) to --max-inflight-bytes ({self.max_inflight_bytes})")
        need(isinstance(self.rate_limit, (int, float)) and not isinstance(self.rate_limit, bool)
             and math.isfinite(self.rate_limit) and self.rate_limit >= 0, "rate_limit", "a number >= 0 (0: no rate limit)")
        need(self.http in HTTP_CHOICES, "http", "one of " + ", ".join(repr(choice) for choice in HTTP_CHOICES))
        return self

    def address_share(self, max_body_bytes: int) -> int:
        """The request-body bytes one client address may hold at once."""
        if self.max_inflight_bytes_per_address is not None:
            return self.max_inflight_bytes_per_address
        return min(self.max_inflight_bytes, max(max_body_bytes, self.max_inflight_bytes // 8))

    def budget(self, max_body_bytes: int) -> BodyBudget:
        """A process's :class:`._body.BodyBudget` under these limits."""
        return BodyBudget(self.max_inflight_bytes, self.address_share(max_body_bytes))


# ---------------------------------------------------------------------- uvicorn
def protocol_class(header_timeout: float | None = None, http: str = "auto", max_pending_heads: int | None = None):
    """uvicorn's HTTP protocol with a header timeout, a header-size limit, 503s with ``Retry-After`` beyond
    ``--limit-concurrency``, and without uvicorn's access line.

    ``http``: ``"httptools"`` (:mod:`._protocol_httptools`), ``"h11"``
    (:mod:`._protocol`), or ``"auto"``: httptools when it is installed, else h11.
    Without ``header_timeout``, the class reads it from its uvicorn ``Config``
    (``config.dpdist_header_timeout``): the class of the worker processes of
    ``dpdist serve --workers N``, importable by name; likewise ``max_pending_heads``
    (``config.dpdist_max_pending_heads``, :data:`DEFAULT_MAX_PENDING_HEADS` without it).
    """
    from ._protocol import HeaderTimeoutH11Protocol  # lazy: uvicorn's h11 protocol (dpdist[serve]) only when a server runs: the command line reads this module's options

    base: type = HeaderTimeoutH11Protocol
    if http != "h11":
        try:
            from ._protocol_httptools import HeaderTimeoutHttpToolsProtocol  # lazy: uvicorn's httptools protocol, tried (optional)
        except ImportError:
            if http == "httptools":
                raise InvalidParameterError("The '--http' option is 'httptools' but httptools is not installed "
                                            "(pip install httptools, or --http h11).") from None
        else:
            base = HeaderTimeoutHttpToolsProtocol
    if header_timeout is None and max_pending_heads is None:
        return base
    attributes = {"header_timeout": None if header_timeout is None else float(header_timeout),
                  "max_pending_heads": None if max_pending_heads is None else int(max_pending_heads)}
    return type(base.__name__, (base,), attributes)


def uvicorn_options(limits: Limits) -> dict:
    """Keyword arguments of ``uvicorn.run`` / ``uvicorn.Config`` that enforce ``limits``."""
    return {
        "http": protocol_class(limits.header_timeout, limits.http, limits.max_pending_heads_per_address),
        "timeout_keep_alive": limits.keep_alive_timeout,
        "limit_concurrency": limits.limit_concurrency,
        "timeout_graceful_shutdown": limits.graceful_timeout,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "server_header": False,
    }


# ---------------------------------------------------------------------- command line
#: the help of each option (``{}``: its default)
HELP = {
    "max_inflight_bytes": "request-body bytes held at once over all requests; beyond it 503 with Retry-After (default {})",
    "max_inflight_bytes_per_address": "request-body bytes one client address (IPv6: /64) may hold at once; beyond it "
    "503 with Retry-After (default: the larger of --max-body-bytes and 1/8 of --max-inflight-bytes)",
    "header_timeout": "seconds for a connection's request headers to arrive; slower connections are closed (default {})",
    "body_timeout": "seconds for a request body to arrive; slower bodies get 408 (default {})",
    "min_body_rate": f"bytes per second a body must average after its first {BODY_GRACE_S:g} s, else 408 (default {{}})",
    "body_idle_timeout": "seconds of --min-body-rate credit a body may bank: the longest it may pause, and the window "
    "over which it must keep the rate; else 408 (default {})",
    "keep_alive_timeout": "seconds an idle keep-alive connection stays open (default {})",
    "limit_concurrency": "connections and requests at once; beyond it 503 with Retry-After (default {})",
    "graceful_timeout": "seconds SIGTERM waits for running requests before cancelling them (default {})",
    "rate_limit": "requests that send something (PUT, POST) per second per client address (IPv6: per /64), in "
    "memory only, per process; 0: no limit (default {})",
    "rate_burst": "requests a client address may send at once before --rate-limit applies (default {})",
    "max_pending_heads_per_address": "connections one client address (IPv6: /64) may hold whose request headers are "
    "not complete; more are closed as they open (default {})",
    "http": "HTTP parser: 'httptools' (C, the faster), 'h11' (pure Python), or 'auto': httptools when installed "
    "(default {})",
}
#: option types that the default's type does not say (None defaults) and choices
_KINDS = {"max_inflight_bytes_per_address": int, "http": str}
_CHOICES = {"http": list(HTTP_CHOICES)}


def add_arguments(parser, limits_class: type = Limits, help: dict | None = None, kinds: dict | None = None,
                  choices: dict | None = None) -> None:
    """The options of a server's command line that set ``limits_class`` (a :class:`Limits` or a subclass of it),
    one per field named in ``help`` (default :data:`HELP`)."""
    help = HELP if help is None else help
    kinds, choices = {**_KINDS, **(kinds or {})}, {**_CHOICES, **(choices or {})}
    defaults = limits_class()
    for field in fields(limits_class):
        if field.name not in help:
            continue
        default = getattr(defaults, field.name)
        options = {"choices": choices[field.name]} if field.name in choices else {}
        parser.add_argument("--" + field.name.replace("_", "-"), type=kinds.get(field.name, type(default)),
                            default=default, help=help[field.name].format(default), **options)


def from_args(args, max_body_bytes: int, limits_class: type = Limits, help: dict | None = None):
    """The checked ``limits_class`` of parsed options (:func:`add_arguments`)."""
    help = HELP if help is None else help
    values = {field.name: getattr(args, field.name) for field in fields(limits_class) if field.name in help}
    return limits_class(**values).check(max_body_bytes)
