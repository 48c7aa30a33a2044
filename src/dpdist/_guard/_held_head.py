"""A response's head and its first body bytes in one write: one ``send`` system call for the usual answer, not two.

uvicorn's request cycle writes a response's status line and headers to the
transport when the application sends ``http.response.start``, and its body when
it sends ``http.response.body``: two writes, and asyncio's transport makes each
write to an empty buffer a ``send`` of its own at once.  A device's batch is
answered with both messages back to back, so every answer cost two ``send``
calls on the loop's thread, the first carrying only the head (about 10-17 us of
the event loop a request on loopback; docs/reference/benchmarks/service.md, "Fifteenth round").

:class:`HeldHead` is the transport of one request's cycle: it holds the cycle's
first write (the head) until the next one, written with it at once, or until the
event loop's next turn (``call_soon``), whichever comes first; every later write
goes straight through, in order.  The bytes on the wire are the same, in the
same order; only their grouping into ``send`` calls changes (a first body write over
:data:`JOIN_AT_MOST` follows the head in a write of its own rather than be copied to join it).  A cycle that may
write ``100 Continue`` before its head (a request with ``Expect: 100-continue``)
keeps the plain transport.
"""

from __future__ import annotations

import asyncio

__all__ = ["HeldHead", "JOIN_AT_MOST"]

#: the largest first body write joined to the head (a larger one follows it in a write of its own: no copy of it)
JOIN_AT_MOST = 64 << 10


class HeldHead:
    """The transport ``transport`` as one request cycle writes to it (see the module); anything else is the
    transport's own."""

    __slots__ = ("transport", "_loop", "_held", "_first")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop):
        self.transport, self._loop = transport, loop
        self._held: bytes | None = None
        self._first = True  # the cycle's first write (its head) is still to come

    def write(self, data: bytes) -> None:
        held = self._held
        if held is not None:  # the head, written with what follows it (a large body after it: not copied to join it)
            self._held = None
            if len(data) > JOIN_AT_MOST:
                self.transport.write(held)
                self.transport.write(data)
            else:
                self.transport.write(held + data)
        elif self._first and data and not self.transport.is_closing():
            self._first = False
            self._held = data
            self._loop.call_soon(self.flush)  # at the loop's next turn, if nothing follows before
        else:
            self._first = False
            self.transport.write(data)

    def flush(self) -> None:
        """Write the head held, if any."""
        held = self._held
        if held is not None:
            self._held = None
            self.transport.write(held)

    def close(self) -> None:
        self.flush()
        self.transport.close()

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def __getattr__(self, name: str):
        return getattr(self.transport, name)
