"""``dpdist serve``: the collection service.

::

    DPDIST_ADMIN_TOKEN=... dpdist serve --db campaigns.sqlite --port 8000

Its admins' commands are in :mod:`._campaign`, the devices' in :mod:`._submit`.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import sys

from .._redact import redacted_url, url_secrets
from .._shown import masked
from .._validation import Described, Integer, Text
from ..errors import InvalidParameterError
from ..serve._database import DATABASE_URL
from ..serve._limits import (
    DEFAULT_MAX_BODY_BYTES,
    add_arguments as add_limit_arguments,
    from_args as limits_from_args,
    uvicorn_options,
)
from ._arguments import PORT, state_rules, token_rule
from ._env import check_environment, environment_defaults
from ._listen import check_address
from ._secrets import command_secrets
from ._service_client import TOKEN_HELP, admin_token, missing_extra
from ._commands import HELP

__all__ = ["add_commands"]


def add_commands(subparsers) -> None:
    _add_serve(subparsers)


def _add_serve(subparsers) -> None:
    serve = subparsers.add_parser(
        "serve",
        help=HELP["serve"],
        description="Serve campaigns over HTTP: devices submit batches of reports (dpdist binary records or JSON) under "
        "client-chosen batch ids, each counted exactly once after it is durable in the database; admins create, "
        "open and close campaigns and read estimates. The OpenAPI schema is at /openapi.json, a campaign's "
        "dashboard at /campaigns/NAME/dashboard#token=ADMIN_TOKEN. Needs dpdist[serve].",
    )
    serve.add_argument(
        "--db", required=True,
        help="SQLite file (created if missing; WAL mode) or a postgresql://user@host/dbname URL (a password: in "
        "DPDIST_DB, PGPASSWORD or ~/.pgpass, not on the command line, which `ps` shows)",
    )
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8000, help="TCP port (default 8000)")
    serve.add_argument(
        "--workers", type=int, default=1,
        help="server processes on the one port (default 1); each commits batches on its own, all share the database "
        "(a SQLite file on this machine, or PostgreSQL: then also any number of hosts)",
    )
    serve.add_argument("--admin-token", default=None, help=TOKEN_HELP + "; at least 16 characters")
    serve.add_argument("--previous-admin-token", default=None,
                       help="while the admin token rotates: the one --admin-token replaces, still taken; prefer "
                       "DPDIST_PREVIOUS_ADMIN_TOKEN")
    serve.add_argument(
        "--relay-token", default=None,
        help="the token of the relay (dpdist relay) that delivers to campaigns created with --relay; >= 16 characters; "
        "prefer DPDIST_RELAY_TOKEN: options show in `ps`",
    )
    serve.add_argument(
        "--previous-relay-token", default=None,
        help="while the relay token rotates: the one --relay-token replaces, still taken from the relay (the "
        "campaigns bound to it move to --relay-token); prefer DPDIST_PREVIOUS_RELAY_TOKEN",
    )
    serve.add_argument(
        "--max-body-bytes",
        type=int,
        default=DEFAULT_MAX_BODY_BYTES,
        help=f"largest request body accepted; larger batches get HTTP 413 (default {DEFAULT_MAX_BODY_BYTES})",
    )
    serve.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"], help="server log level")
    add_limit_arguments(serve)  # time, memory, rate, size, access log, retention (docs/reference/service-limits.md, "Limits")
    _add_operations(serve)
    serve.set_defaults(handler=_run_serve)
    state_rules(serve, {
        "--port": PORT,
        "--workers": Integer(low=1, high=256),
        "--root-path": Described(Text(non_empty=False, pattern=r"(/[^ ?#%\\]*)?"), "a URL path such as /dpdist"),
        "--admin-token": token_rule(16, "DPDIST_ADMIN_TOKEN"),
        "--relay-token": token_rule(16, "DPDIST_RELAY_TOKEN"),
        "--previous-relay-token": token_rule(16, "DPDIST_PREVIOUS_RELAY_TOKEN"),
        "--metrics-token": token_rule(16, "DPDIST_METRICS_TOKEN"),
        "--previous-admin-token": token_rule(16, "DPDIST_PREVIOUS_ADMIN_TOKEN"),
        "--previous-metrics-token": token_rule(16, "DPDIST_PREVIOUS_METRICS_TOKEN"),
        "--max-body-bytes": Integer(low=1024),
        "--db": DATABASE_URL,
    })
    environment_defaults(serve)  # last: every option, also those added above, from DPDIST_<OPTION>


def _add_operations(serve) -> None:
    """The operator's options of ``dpdist serve`` (docs/how-to/operate-the-service.md: "Operating", "Metrics", "Behind a reverse proxy")."""
    from ..serve._health import (  # lazy: the service's code loads only when it runs (dpdist[serve])
        DEFAULT_MIN_FREE_BYTES,
        DEFAULT_READY_TIMEOUT_S,
        MIN_FREE_BYTES,
        READY_TIMEOUT,
    )
    from ..serve._origins import ORIGINS_TEXT  # lazy: as serve._health (no Starlette at import)

    serve.add_argument("--log-format", default="text", choices=["text", "json"],
                       help="server log: uvicorn's text lines, or one JSON object per line with request ids (default text)")
    serve.add_argument("--metrics-token", default=None,
                       help="GET /metrics needs 'Authorization: Bearer <this token>' (>= 16 characters; prefer the "
                       "environment variable: options show in `ps`); without it, the admin token")
    serve.add_argument("--previous-metrics-token", default=None,
                       help="while the metrics token rotates: the one --metrics-token replaces, still taken; prefer "
                       "DPDIST_PREVIOUS_METRICS_TOKEN")
    serve.add_argument("--root-path", default="",
                       help="the path prefix under which a reverse proxy publishes the service (e.g. /dpdist); the "
                       "proxy strips it before forwarding")
    serve.add_argument("--forwarded-allow-ips", default="127.0.0.1",
                       help="comma-separated addresses of trusted proxies whose X-Forwarded-For/-Proto headers are "
                       "believed ('*': any; default 127.0.0.1)")
    serve.add_argument("--cors-origin", default="",
                       help="comma-separated origins (https://example.org) whose pages may call the API and load the "
                       "JavaScript client from this server, or '*' (default: none, same origin only)")
    serve.add_argument("--ready-timeout", type=float, default=DEFAULT_READY_TIMEOUT_S,
                       help=f"seconds /readyz waits for the database (default {DEFAULT_READY_TIMEOUT_S:g})")
    serve.add_argument("--min-free-bytes", type=int, default=DEFAULT_MIN_FREE_BYTES,
                       help=f"SQLite: /readyz answers 503 disk_full below this much free space (default {DEFAULT_MIN_FREE_BYTES})")
    state_rules(serve, {"--ready-timeout": READY_TIMEOUT, "--min-free-bytes": MIN_FREE_BYTES, "--cors-origin": ORIGINS_TEXT})


def _operations(args, Operations):
    root = args.root_path.rstrip("/")
    args.root_path = root
    origins = tuple(origin.strip() for origin in args.cors_origin.split(",") if origin.strip())
    return Operations(metrics_token=args.metrics_token or None, previous_metrics_token=args.previous_metrics_token or None,
                      log_format=args.log_format, cors_origins=origins,
                      ready_timeout_s=args.ready_timeout, min_free_bytes=args.min_free_bytes)


def _uvicorn_operations(args) -> dict:
    from ..serve._logs import log_config  # lazy: the service's code loads only when it runs (dpdist[serve])

    return {
        "root_path": args.root_path,
        "proxy_headers": True,
        "forwarded_allow_ips": args.forwarded_allow_ips,
        "log_config": log_config(args.log_format, args.log_level, command_secrets(args)),  # in every worker too
    }


def _say(args, level: str, message: str) -> None:
    """A line of the server's log before uvicorn's own: in the JSON format, a record as every other (its ``time``,
    ``level``, ``logger``, ``message``: the banner had none of a ``time``)."""
    if args.log_format == "json":  # every line of a JSON log is JSON
        from ..serve._logs import JsonFormatter  # lazy: the service's code loads only when it runs (dpdist[serve])

        record = logging.LogRecord("dpdist.serve", logging.getLevelName(level.upper()), "", 0, message, (), None)
        message = JsonFormatter().format(record)
    print(message, file=sys.stderr, flush=True)


def _run_serve(args) -> int:
    check_environment(args)
    try:
        import uvicorn  # lazy: optional extra dpdist[serve]

        from ..serve._operations import Operations  # lazy: optional extra dpdist[serve]
    except ImportError as error:
        raise missing_extra("dpdist serve", error) from None
    token = admin_token(args)  # --admin-token or DPDIST_ADMIN_TOKEN (its default): at least 16 characters, the table
    # --relay-token or DPDIST_RELAY_TOKEN (its default): at least 16 characters, the table
    relay_token = args.relay_token or os.environ.get("DPDIST_RELAY_TOKEN") or None
    previous = args.previous_relay_token or None
    check_address(args.host, args.port, "dpdist serve")  # in use: one line naming --port, before the database opens
    limits = limits_from_args(args, args.max_body_bytes)
    if args.log_level not in ("trace", "debug", "info"):  # access lines are written at info
        limits = dataclasses.replace(limits, access_log="off")
    operations = _operations(args, Operations)
    app = _opened_app(args, token, limits, operations, (relay_token, previous))
    started = (f"dpdist serve: {app.state.service.store.db.dialect} database {redacted_url(args.db)}; "
               f"http://{args.host}:{args.port}{args.root_path}/ (OpenAPI at {args.root_path}/openapi.json)"
               + (f"; {args.workers} worker processes" if args.workers > 1 else ""))
    _say(args, "info", started)
    if _believes_anyone(args.forwarded_allow_ips, args.host):  # X-Forwarded-For from anyone: limits per claimed address
        _say(args, "warning", f"dpdist serve: note: --forwarded-allow-ips '*' believes X-Forwarded-For from anyone who "
             f"reaches {args.host}:{args.port}: every per-address limit (--rate-limit, body memory) is then per address "
             "a client claims; list the proxy's address instead (docs/how-to/run-a-campaign.md, 'Behind a reverse proxy').")
    options = {"log_level": args.log_level, **uvicorn_options(limits), **_uvicorn_operations(args)}
    if args.workers == 1:
        app.state.freeze_heap = True  # a server process: its startup heap left out of full collections (serve/_heap.py)
        uvicorn.run(app, host=args.host, port=args.port, **options)
        return 0
    app.state.service.close()  # the database was opened to check it: each worker opens its own
    from ..serve._workers import run_workers  # lazy: the service's code loads only when it runs (dpdist[serve])

    run_workers(args.workers, db=args.db, admin_token=token, max_body_bytes=args.max_body_bytes, limits=limits,
                operations=operations, relay_token=relay_token, previous_relay_token=previous,
                previous_admin_token=args.previous_admin_token or None, host=args.host, port=args.port, **options)
    return 0


def _opened_app(args, token: str, limits, operations, relay_tokens: tuple[str | None, str | None]):
    """The application, its database opened (and its schema migrated): a wrong ``--db`` is one line naming it."""
    from ..serve import create_app  # lazy: the service's code loads only when it runs (dpdist[serve])

    try:
        return create_app(args.db, admin_token=token, max_body_bytes=args.max_body_bytes, limits=limits, operations=operations,
                          relay_token=relay_tokens[0], previous_relay_token=relay_tokens[1],
                          previous_admin_token=args.previous_admin_token or None)
    except Exception as error:
        # the driver's own errors (sqlite3.OperationalError, psycopg.OperationalError): a path or URL the user gave
        cause = error.__cause__ if type(error).__name__ == "DatabaseUnavailableError" and error.__cause__ else error
        if type(cause).__module__.split(".")[0] not in ("sqlite3", "psycopg", "psycopg2"):
            raise
        # a driver may quote the password it read (the command's streams mask it too: _secrets)
        first = " ".join(masked(str(cause), url_secrets(args.db)).split())
        raise InvalidParameterError(f"The '--db' option {redacted_url(args.db)!r}: cannot open the database ({first}).") from None


def _believes_anyone(forwarded_allow_ips: str, host: str) -> bool:
    """Whether ``--forwarded-allow-ips`` is ``*`` while ``--host`` is not a loopback address (others can reach it)."""
    if "*" not in (item.strip() for item in forwarded_allow_ips.split(",")):
        return False
    return host not in ("127.0.0.1", "::1", "localhost") and not host.startswith("127.")

