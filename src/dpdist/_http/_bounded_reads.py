"""Every read of an answer within one deadline: its head's as well as its body's.

httpx's ``timeout`` bounds each read, and a head is read in many: a server (or anything on the path) that sends
``HTTP/1.1 200 OK`` and then one byte of a header every half second keeps each read short and the answer's head never
whole, so a client waited for ever (its body's deadline, :func:`dpdist._http._deadline.request_within`, starts when
the head is whole).  :func:`bound_reads` wraps the network backend of an ``httpx.Client``'s own transports (and of its
proxies') so that each read waits at most until the deadline :func:`reads_within` set for the calling thread, and
fails as a timed-out read does once it has passed.  A transport given by the caller (a test's ``MockTransport``, an
Oblivious HTTP transport, which sends through a client of its own) is left as it is.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpcore

__all__ = ["bound_reads", "reads_within", "DeadlinePassed"]


class _Deadline(threading.local):
    """The calling thread's deadline: ``seconds`` from its first read (None: no deadline)."""
    seconds: float | None = None
    at: float | None = None


_DEADLINE = _Deadline()


class DeadlinePassed(httpcore.ReadTimeout):
    """A read refused because the answer's deadline passed (httpx raises it as :class:`httpx.ReadTimeout`)."""


@contextmanager
def reads_within(seconds: float | None) -> Iterator[None]:
    """Within this block, the calling thread's reads through a bounded backend end ``seconds`` after the first of them
    (the request sent, its answer awaited); None: each read as httpx bounds it."""
    before = _DEADLINE.seconds, _DEADLINE.at  # a request made while answering another (an OHTTP transport's)
    _DEADLINE.seconds, _DEADLINE.at = seconds, None
    try:
        yield
    finally:
        _DEADLINE.seconds, _DEADLINE.at = before


def _left(timeout: float | None) -> float | None:
    """The timeout of one read: ``timeout``, or less if the calling thread's deadline is nearer."""
    if _DEADLINE.seconds is None:
        return timeout
    now = time.monotonic()
    if _DEADLINE.at is None:
        _DEADLINE.at = now + _DEADLINE.seconds
    left = _DEADLINE.at - now
    if left <= 0:
        raise DeadlinePassed(f"the answer was not whole {_DEADLINE.seconds:g} s after the request was sent")
    return left if timeout is None else min(timeout, left)


class _BoundedStream(httpcore.NetworkStream):
    """A network stream whose reads end at the calling thread's deadline."""

    def __init__(self, inner: httpcore.NetworkStream):
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore.NetworkStream:
        return _BoundedStream(self._inner.start_tls(ssl_context, server_hostname, timeout))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BoundedBackend(httpcore.NetworkBackend):
    """A network backend whose streams are :class:`_BoundedStream`."""

    def __init__(self, inner: httpcore.NetworkBackend):
        self._inner = inner

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Any = None) -> httpcore.NetworkStream:
        return _BoundedStream(self._inner.connect_tcp(host, port, timeout, local_address, socket_options))

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Any = None) -> httpcore.NetworkStream:
        return _BoundedStream(self._inner.connect_unix_socket(path, timeout, socket_options))

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


def bound_reads(http: Any) -> None:
    """Wrap the network backends of ``http`` (an ``httpx.Client``: its transport and its proxies') once, so that
    :func:`reads_within` bounds their reads; a transport without one (given by the caller) is left."""
    # httpx builds its connection pools itself and takes no network backend: the pools' attribute is set in place
    for transport in (getattr(http, "_transport", None), *getattr(http, "_mounts", {}).values()):
        pool = getattr(transport, "_pool", None)
        backend = getattr(pool, "_network_backend", None)
        if backend is not None and not isinstance(backend, _BoundedBackend):
            setattr(pool, "_network_backend", _BoundedBackend(backend))
