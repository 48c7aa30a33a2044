"""What bounds a client of ``dpdist serve``: memory, time, connections, rate and size (docs/reference/service-limits.md, "Limits").

An unauthenticated client must not be able to make the server hold memory,
connections or CPU beyond stated bounds.  The bounds every dpdist server shares
(memory, time, connections, rate: :mod:`dpdist._guard`) and those of the
service's own work, all options of ``dpdist serve`` (``docs/how-to/run-a-campaign.md``,
"Limits"):

* **before the body**: a batch's campaign is looked up and its submit or
  enrollment token checked before one byte of the body is read; a refusal
  closes the connection (``Connection: close``), so an unread body costs nothing;
* **in-flight body bytes** (``--max-inflight-bytes``): the bytes of request
  bodies held by the process at once, over all requests, with a share per client
  address (``--max-inflight-bytes-per-address``) and half for the bodies of
  campaigns that take no token (:mod:`dpdist._guard._body`); a body
  that would pass one is refused at once with 503 and ``Retry-After``;
* **body time** (``--body-timeout``, ``--min-body-rate``, ``--body-idle-timeout``):
  a body must arrive within the deadline, and by ``t`` seconds after its headers
  have delivered at least ``min_body_rate * (t - 5)`` bytes, banking at most
  ``body_idle_timeout`` seconds of that credit (no pause longer); otherwise 408
  and the connection is closed;
* **header time** (``--header-timeout``): a connection whose request headers are
  not complete within it (from the connection's start, or from the first byte of
  a following request) is closed: slowloris connections do not accumulate;
* **idle keep-alive** (``--keep-alive-timeout``), **connections**
  (``--limit-concurrency``: beyond it 503 with ``Retry-After``), request headers of at
  most 16 KiB (h11's limit, and :mod:`dpdist._guard._protocol_httptools`'s), and a **graceful-shutdown** deadline
  (``--graceful-timeout``) after which SIGTERM cancels requests still running;
* **rate** (``--rate-limit``, ``--rate-burst``): a token bucket of batches per
  client address (IPv6: per /64), in memory, per process;
* **size of work**: records per binary batch (``--max-records``), rows per JSON
  batch (``--max-json-rows``), rows classified one by one (:data:`MAX_CHECKED_ROWS`),
  and a campaign's statistic (``--max-statistic-bytes``);
* **work in progress** (``--max-queue``): batches being served, from their
  admission to their answer; beyond it a batch is refused with 503 ``busy`` and
  ``Retry-After`` before its body is read (answers within milliseconds,
  never minutes of silence); ``--commit-delay`` bounds how long a group commit
  waits for more batches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from .._guard._body import BodyBudget, receive_body
from .._guard._limits import BODY_GRACE_S, HELP as GUARD_HELP, HTTP_CHOICES, MAX_HEADER_BYTES
from .._guard._limits import Limits as ServerLimits
from .._guard._limits import add_arguments as add_server_arguments
from .._guard._limits import from_args as server_limits_from_args
from .._guard._limits import protocol_class, uvicorn_options
from .._guard._rate import MAX_RATE_KEYS, RateLimiter
from .._wire._report_bound import DEFAULT_MAX_BATCH_WORK, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_STATISTIC_BYTES

__all__ = ["DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_STATISTIC_BYTES", "DEFAULT_MAX_BATCH_WORK", "Limits", "BodyBudget", "RateLimiter", "receive_body",
           "uvicorn_options", "protocol_class", "add_arguments", "from_args", "BODY_GRACE_S", "HTTP_CHOICES",
           "MAX_HEADER_BYTES", "MAX_RATE_KEYS", "MAX_CHECKED_ROWS"]

#: rows of a JSON batch classified one by one (booleans, nulls, wrong shapes; structured layouts)
MAX_CHECKED_ROWS = 10_000


@dataclass(frozen=True)
class Limits(ServerLimits):
    """The bounds of one ``dpdist serve`` process: those of every dpdist server (:class:`dpdist._guard.Limits`) and
    the service's own (defaults: safe for a server on the internet)."""

    max_records: int = 1024
    max_json_rows: int = 100_000
    max_statistic_bytes: int = DEFAULT_MAX_STATISTIC_BYTES
    max_batch_work: int = DEFAULT_MAX_BATCH_WORK
    access_log: str = "anonymous"
    retention_days: float | None = None
    max_queue: int = 256
    commit_delay: float = 0.002

    def check(self, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> "Limits":
        """Refuse out-of-range values, naming the option of ``dpdist serve``."""
        super().check(max_body_bytes)
        need = self._need
        for name in ("max_records", "max_json_rows", "max_statistic_bytes", "max_batch_work", "max_queue"):
            value = getattr(self, name)
            need(isinstance(value, int) and not isinstance(value, bool) and value > 0, name, "an int > 0")
        need(isinstance(self.commit_delay, (int, float)) and not isinstance(self.commit_delay, bool)
             and 0 <= self.commit_delay <= 0.1, "commit_delay", "a number of seconds in [0, 0.1]")
        need(self.access_log in ("anonymous", "full", "off"), "access_log", "one of 'anonymous', 'full', 'off'")
        need(self.retention_days is None or (isinstance(self.retention_days, (int, float)) and self.retention_days > 0
                                             and math.isfinite(self.retention_days)), "retention_days", "a number of days > 0")
        return self


# ---------------------------------------------------------------------- command line
_HELP = {
    **GUARD_HELP,
    "rate_limit": "batches per second per client address (IPv6: per /64), in memory only, per process; 0: no limit "
    "(default {})",
    "rate_burst": "batches a client address may send at once before --rate-limit applies (default {})",
    "max_records": "binary report records per batch; more is refused with 413 (default {})",
    "max_json_rows": "rows per JSON batch; more is refused with 413 (default {})",
    "max_batch_work": "element operations one batch's reports may cost the collector to count (reports per batch x the "
    "protocol's aggregation_work: 1 for GRR, d for OLH or OUE); a batch over it is refused with 413, and the campaign's "
    "config answer says how many reports fit (max_batch_reports) (default {})",
    "max_statistic_bytes": "largest campaign statistic (protocol statistic size x 8 bytes) accepted at creation (default {})",
    "access_log": "access log lines: 'anonymous' (no client address, no path, no query string), 'full' "
    "(client address and path with its campaign, no batch id, no query string) or 'off' (default {})",
    "retention_days": "delete kept raw reports older than this, and the batch records of campaigns closed longer ago "
    "(aggregates stay; default: keep)",
    "max_queue": "batches served at once (from their admission to their answer), per process; beyond it 503 with "
    "Retry-After before the body is read (default {})",
    "commit_delay": "seconds a group commit waits for more batches when fewer than 8 wait (default {})",
}


def add_arguments(parser) -> None:
    """The options of ``dpdist serve`` that set :class:`Limits`."""
    add_server_arguments(parser, Limits, _HELP, kinds={"access_log": str, "retention_days": float},
                         choices={"access_log": ["anonymous", "full", "off"]})


def from_args(args, max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> Limits:
    return server_limits_from_args(args, max_body_bytes, Limits, _HELP)
