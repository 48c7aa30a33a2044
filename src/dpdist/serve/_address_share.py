"""One client address carrying most of the batches: a warning, once, in the service's log (docs/reference/service-limits.md, "Limits").

The rate limit (``--rate-limit``, ``--rate-burst``) is per client address.  Devices that
reach the service from one address share one bucket: behind a proxy whose address is not
in ``--forwarded-allow-ips`` (so the proxy's address is every client's), behind a carrier
NAT, or a simulation on one machine (``dpdist demo --campaign`` configures its own
service for that).  They are then throttled together, 429 after the first
``--rate-burst`` batches, and nothing said why.

:class:`AddressShare` counts the batches of each address over blocks of
:data:`WINDOW` batches; when one address sent more than :data:`SHARE` of a block while
the rate limit is on, it logs one warning (logger ``dpdist.serve``) naming the two
options, once per process.  The counts live in memory for one block only; the warning
names no address (``--access-log full`` lines carry them, when the operator asks).
"""

from __future__ import annotations

import logging
from collections import Counter

from ._limits import RateLimiter

__all__ = ["AddressShare", "WINDOW", "SHARE"]

LOG = logging.getLogger("dpdist.serve")

#: batches per block over which the addresses' shares are counted
WINDOW = 256
#: the share of a block's batches from one address that is "most of the traffic"
SHARE = 0.5


class AddressShare:
    """Warns once when one address sends most of the batches while the rate limit is on (module docstring).

    Event loop (or one thread) only: no lock.
    """

    def __init__(self, rate_limit: float, rate_burst: int, *, window: int = WINDOW, share: float = SHARE):
        self.rate_limit, self.rate_burst = float(rate_limit), int(rate_burst)
        self.window, self.share = int(window), float(share)
        self.warned = False
        self._done = self.rate_limit <= 0  # no rate limit: one address may send everything
        self._counts: Counter[str] = Counter()
        self._seen = 0

    def saw(self, host: str | None) -> None:
        """One batch arrived from ``host`` (before the rate limit answers it)."""
        if self._done:
            return
        self._counts[RateLimiter.key(host)] += 1
        self._seen += 1
        if self._seen < self.window:
            return
        top = max(self._counts.values())
        self._counts.clear()
        self._seen = 0
        if top > self.share * self.window:
            self.warned = self._done = True
            LOG.warning(
                "One client address sent %d of the last %d batches. The rate limit (--rate-limit %g batches/s, "
                "--rate-burst %d) is per address: devices that share an address share it and get 429 together. "
                "Behind a proxy, give its address to --forwarded-allow-ips so that each device's own address counts; "
                "devices behind one NAT (or a simulation on one machine) need a higher --rate-limit (0: none). "
                "(Said once.)", top, self.window, self.rate_limit, self.rate_burst,
            )
