"""What every dpdist server on the internet runs behind: limits, refusals, sockets (docs/reference/service-limits.md, "Limits").

One place for the defences that ``dpdist serve``, ``dpdist relay`` and any other
dpdist ASGI application share, with the same option names and ``DPDIST_*``
variables on each command line (``docs/how-to/run-a-campaign.md``, "Limits"):

* :class:`Limits`: the bounds (body memory with a share per client address and
  half for anonymous bodies, header and body time, minimum body rate, idle
  connections, concurrency, rate per address, graceful shutdown, HTTP parser);
  :func:`add_arguments` / :func:`from_args` make them command-line options;
* :func:`guard`: an application behind the body, rate and memory limits
  (:mod:`._middleware`), for applications that do not read bodies through
  :func:`receive_body` themselves;
* :class:`._shutdown.ShutdownMiddleware`: a request still running when the
  graceful shutdown's time is up answered 503 ``shutting_down`` (the layer of
  :func:`guard` does it too);
* :func:`uvicorn_options`: what uvicorn enforces (header timeout and size, idle
  keep-alive, the concurrency cap answered 503 with ``Retry-After``, graceful
  shutdown), to pass to ``uvicorn.run`` / ``uvicorn.Config``;
* :class:`Refusal` and its kinds (:mod:`._refusals`): why a server refuses, each kind with its HTTP status;
* :class:`._security_headers.SecurityHeadersMiddleware`: the security headers of every answer (a content
  security policy on HTML pages);
* :func:`listening_socket`: a socket to hand to uvicorn's worker processes whose
  connections get ``TCP_NODELAY``.

A server of one process::

    from dpdist._guard import Limits, guard, uvicorn_options

    limits = Limits()                                  # or from_args(args, max_body_bytes) on a command line
    app = guard(app, limits, max_body_bytes=1 << 20)   # a Starlette app keeps its type; its Guard at app.state.guard
    uvicorn.run(app, host="127.0.0.1", port=8001, access_log=False, **uvicorn_options(limits))
"""

from ._body import BodyBudget, receive_body
from ._limits import Limits, add_arguments, from_args, protocol_class, uvicorn_options
from ._middleware import AUTHENTICATED, Guard, GuardMiddleware, guard
from ._rate import RateLimiter, address_key
from ._refusals import Busy, InvalidRequest, RateLimited, Refusal, TooLarge, TooSlow
from ._sockets import listening_socket

__all__ = [
    "AUTHENTICATED",
    "BodyBudget",
    "Busy",
    "Guard",
    "GuardMiddleware",
    "InvalidRequest",
    "Limits",
    "RateLimited",
    "RateLimiter",
    "Refusal",
    "TooLarge",
    "TooSlow",
    "add_arguments",
    "address_key",
    "from_args",
    "guard",
    "listening_socket",
    "protocol_class",
    "receive_body",
    "uvicorn_options",
]
