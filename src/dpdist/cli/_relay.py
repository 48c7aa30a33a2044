"""``dpdist relay``: run the relay that hides who sent a report from the collector (docs/deployment.md, "Anonymous collection").

::

    DPDIST_RELAY_TOKEN=... dpdist relay --queue relay.sqlite --collector https://collector.example --min-batch 1000
"""

from __future__ import annotations

import os
import sys

from ..errors import InvalidParameterError, MissingDependencyError
from ._env import check_environment, environment_defaults

__all__ = ["add_commands"]


def add_commands(subparsers) -> None:
    relay = subparsers.add_parser(
        "relay",
        help="run the relay between devices and a collector (sealed reports in, shuffled batches out)",
        description="Devices send reports sealed to the collector's key (HPKE) to the relay; the relay keeps them in a "
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
    relay.add_argument("--admin-token", default=None, help="token for GET /relay/v1/status (optional; >= 16 characters)")
    relay.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    relay.add_argument("--port", type=int, default=8001, help="TCP port (default 8001)")
    relay.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"], help="log level")
    relay.set_defaults(handler=_run_relay)
    environment_defaults(relay)


def _run_relay(args) -> int:
    check_environment(args)
    try:
        import uvicorn  # lazy: optional extra dpdist[serve]

        from ..relay import create_app  # lazy: optional extra dpdist[relay]
    except ImportError as error:
        module = getattr(error, "name", None) or str(error)
        raise MissingDependencyError(f"'dpdist relay' needs the relay extra ({module} is not installed): pip install 'dpdist[relay]'.") from None
    token = args.relay_token or os.environ.get("DPDIST_RELAY_TOKEN") or ""
    if len(token) < 16:
        raise InvalidParameterError("The relay token (DPDIST_RELAY_TOKEN or --relay-token) must be at least 16 characters.")
    if args.admin_token is not None and len(args.admin_token) < 16:
        raise InvalidParameterError("The '--admin-token' option must be at least 16 characters.")
    if not 1 <= args.min_batch <= args.max_batch:
        raise InvalidParameterError(
            f"The '--min-batch' option must be at least 1 and at most --max-batch ({args.max_batch}). Got {args.min_batch}."
        )
    if not 0 <= args.port <= 65535:
        raise InvalidParameterError(f"The '--port' option must be in 0..65535. Got {args.port}.")
    if not args.collector.startswith(("http://", "https://")):
        raise InvalidParameterError(f"The '--collector' option must be an http:// or https:// URL. Got {args.collector!r}.")
    app = create_app(args.queue, collector=args.collector, relay_token=token, min_batch=args.min_batch,
                     max_batch=args.max_batch, admin_token=args.admin_token)
    print(f"dpdist relay: queue {args.queue}; collector {args.collector}; batches of {args.min_batch}..{args.max_batch}; "
          f"http://{args.host}:{args.port}/", file=sys.stderr, flush=True)
    # no access log (it would hold addresses and times); no forwarded headers believed
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level, access_log=False, proxy_headers=False,
                server_header=False, date_header=False)
    return 0
