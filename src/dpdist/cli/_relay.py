"""``dpdist relay``: run the relay that hides who sent a report from the collector (docs/how-to/anonymous-collection.md, "Anonymous collection").

::

    DPDIST_RELAY_TOKEN=... dpdist relay --queue relay.sqlite --collector https://collector.example --min-batch 1000
"""

from __future__ import annotations

import os
import re
import sys

from .._guard import add_arguments as add_limit_arguments, from_args as limits_from_args, uvicorn_options
from .._redact import redacted_url
from ..errors import InvalidParameterError, MissingDependencyError
from ..relay._arguments import COLLECTOR, QUEUE, RULES, relay_token
from .._wire._frames import MAX_SEALED_BYTES
from ._arguments import PORT, state_rules
from ._env import check_environment, environment_defaults
from ._listen import check_address
from ._commands import HELP

__all__ = ["add_commands"]


def add_commands(subparsers) -> None:
    relay = subparsers.add_parser(
        "relay",
        help=HELP["relay"],
        description="Devices send reports sealed to the collector's key (HPKE) to the relay, in dpdist's envelope "
        "(PUT /relay/v1/campaigns/{c}/reports/{id}) or as RFC 9458 Oblivious HTTP requests (message/ohttp-req, "
        "PUT /relay/v1/campaigns/{c}/ohttp/{id}), each envelope batched with at least --min-batch of its own; the relay keeps them in a "
        "durable queue without addresses or times, and once at least --min-batch reports of a campaign wait, it "
        "shuffles them with the CSPRNG and delivers them to the collector (dpdist serve) as one batch, retried until "
        "acknowledged and counted once. The relay cannot read the reports; the collector cannot tell who sent them. "
        "Needs dpdist[relay].",
    )
    relay.add_argument("--queue", required=True,
                       help="SQLite file of the relay's queue (created if missing; WAL mode; not the collector's --db)")
    relay.add_argument("--collector", required=True, help="base URL of the collector (dpdist serve), e.g. https://collector.example")
    relay.add_argument(
        "--relay-token", default=None,
        help="the token the collector expects from this relay (dpdist serve --relay-token); prefer the environment "
        "variable: options show in `ps`",
    )
    relay.add_argument("--min-batch", type=int, default=1000,
                       help="K: a campaign's reports are forwarded only in batches of at least this many (public; default 1000)")
    relay.add_argument("--max-batch", type=int, default=10000, help="at most this many reports per forwarded batch (default 10000)")
    relay.add_argument("--relay-admin-token", "--admin-token", dest="admin_token", default=None,
                       help="the relay's own admin token, for GET /relay/v1/status and DELETE /relay/v1/campaigns/C/queue "
                       "(drops the reports waiting for campaign C) (optional; >= 16 characters; never the collector's "
                       "DPDIST_ADMIN_TOKEN)")
    relay.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    relay.add_argument("--port", type=int, default=8001, help="TCP port (default 8001)")
    relay.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"], help="log level")
    relay.add_argument("--max-body-bytes", type=int, default=MAX_SEALED_BYTES,
                       help=f"largest request body (one sealed submission) accepted; larger: HTTP 413 (default {MAX_SEALED_BYTES})")
    add_limit_arguments(relay)  # the limits of dpdist serve, same names and defaults (docs/reference/service-limits.md, "Limits")
    relay.set_defaults(handler=_run_relay)
    state_rules(relay, {  # the rules of dpdist.relay.create_app, as options (a token: printable ASCII, as --submit-token)
        "--port": PORT, "--queue": QUEUE, "--collector": COLLECTOR, "--relay-token": relay_token("DPDIST_RELAY_TOKEN"),
        "--relay-admin-token": relay_token("DPDIST_RELAY_ADMIN_TOKEN"),
        "--min-batch": RULES["min_batch"], "--max-batch": RULES["max_batch"], "--max-body-bytes": RULES["max_body_bytes"],
    })
    environment_defaults(relay)


def _run_relay(args) -> int:
    check_environment(args)
    try:
        import uvicorn  # lazy: optional extra dpdist[serve]

        from ..relay import (
            create_app,  # lazy: the relay's code loads only when it runs (dpdist[relay])
        )
    except ImportError as error:
        module = getattr(error, "name", None) or str(error)
        raise MissingDependencyError(f"'dpdist relay' needs the relay extra ({module} is not installed): pip install 'dpdist[relay]'.") from None
    check_address(args.host, args.port, "dpdist relay")  # in use: one line naming --port, before the queue opens
    limits = limits_from_args(args, args.max_body_bytes)
    token = args.relay_token or os.environ.get("DPDIST_RELAY_TOKEN") or ""
    try:  # the library checks the settings (batch bounds, tokens, collector URL); named here as options
        app = create_app(args.queue, collector=args.collector, relay_token=token, min_batch=args.min_batch,
                         max_batch=args.max_batch, admin_token=args.admin_token, limits=limits,
                         max_body_bytes=args.max_body_bytes)
    except InvalidParameterError as error:
        raise InvalidParameterError(_as_option(str(error))) from None
    _check_queue(args.queue)
    print(f"dpdist relay: queue {args.queue}; collector {redacted_url(args.collector)}; batches of {args.min_batch}..{args.max_batch}; "
          f"http://{args.host}:{args.port}/", file=sys.stderr, flush=True)
    # no access log (it would hold addresses and times); no forwarded headers believed; the limits of dpdist serve
    options = {**uvicorn_options(limits), "log_level": args.log_level, "access_log": False, "proxy_headers": False,
               "date_header": False}
    uvicorn.run(app, host=args.host, port=args.port, **options)
    return 0


def _check_queue(path: str) -> None:
    """A ``--queue`` SQLite cannot open (a file it cannot write, not a database, ``/dev/null``, the collector's own
    database) refused in one line naming it, before the server starts (its lifespan would print a traceback)."""
    from ..relay._queue import RelayQueue  # lazy: the relay's code loads only when it runs (dpdist[relay])

    try:
        RelayQueue(path).close()
    except Exception as error:  # sqlite3.Error, OSError: the driver's words say why
        first = " ".join(str(error).split()) or type(error).__name__
        raise InvalidParameterError(f"The '--queue' option: {path} cannot be opened as the relay's SQLite queue file "
                                    f"({first}).") from None


#: the options (and variables) of create_app's arguments
_OPTIONS = {"relay_token": "--relay-token (or DPDIST_RELAY_TOKEN)", "admin_token": "--relay-admin-token (or DPDIST_RELAY_ADMIN_TOKEN)"}


def _as_option(message: str) -> str:
    """A :func:`dpdist.relay.create_app` refusal naming the option: "The 'min_batch' argument of ... must" -> "The
    '--min-batch' option must"."""
    match = re.match(r"The '([a-z_]+)' (?:argument|parameter) of dpdist\.relay\.create_app (must .*)", message, re.S)
    if match is None:
        return message
    name, rest = match.groups()
    rest = re.sub(r"'(min_batch|max_batch)'", lambda other: repr("--" + other.group(1).replace("_", "-")), rest)
    return f"The {_OPTIONS.get(name, repr('--' + name.replace('_', '-')))} option {rest}"
