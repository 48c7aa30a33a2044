"""What the relay asks of the collector: each answer bounded in time and in bytes, and what it logs of them.

The relay asks the collector for its public pages (a campaign's config and identity) and delivers batches to it.  Its
answers are read as dpdist's clients read a server's (:func:`dpdist._http._deadline.request_within_async`): at most
:data:`dpdist._http._deadline.ACK_ANSWER_BYTES` of body once decoded for a batch's acknowledgement, :data:`dpdist._http._deadline.PAGE_ANSWER_BYTES`
for a page (a ~1 MB gzip answer that unpacks to 1 GiB took the relay to 3.1 GB, retried; an answer of 48 MiB of
``[{},{},...]`` held 1.4 GB while parsed), its JSON refused unparsed past the values those bytes should
hold (:func:`dpdist._json.loads_within`), and the whole exchange - the request sent, the head and the body - within a deadline (a
collector that answers a head and then one byte every half second held the relay's delivery, every campaign's, for
minutes: the per-read timeout restarts with each byte).  An answer past either bound is no answer: the relay treats
it as a network error (a batch is sent again with the same id and bytes; a page is "collector unavailable").
"""

from __future__ import annotations

__all__ = ["delivery_deadline", "ANSWER_DEADLINE_S", "PAGE_DEADLINE_S", "PAGES_KEPT_BYTES",
           "UPLOAD_RATE"]

#: seconds a delivery's exchange may take (the request's body sent, the head and the body of the answer), plus the
#: time of its body at :data:`UPLOAD_RATE`
ANSWER_DEADLINE_S = 60.0
#: seconds the exchange of a GET of the collector's public pages may take (a device waits on it)
PAGE_DEADLINE_S = 30.0
#: bytes of public pages the relay keeps at once (past it, what it kept is dropped and asked for again)
PAGES_KEPT_BYTES = 64 << 20
#: bytes per second a batch's body is given on top of :data:`ANSWER_DEADLINE_S` (a 1 MiB batch: 16 s more)
UPLOAD_RATE = 64 << 10


def delivery_deadline(seconds: float, body_bytes: int) -> float:
    """The seconds the delivery of a batch of ``body_bytes`` may take: ``seconds`` and its body at
    :data:`UPLOAD_RATE`, to a tenth of a second (a log line says ``76``, not ``76.0002``)."""
    return round(seconds + body_bytes / UPLOAD_RATE, 1)

