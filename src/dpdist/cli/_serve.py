"""``dpdist serve``, ``dpdist campaign ...`` and ``dpdist submit``: the collection service and its clients.

::

    DPDIST_ADMIN_TOKEN=... dpdist serve --db campaigns.sqlite --port 8000
    dpdist campaign create --server http://127.0.0.1:8000 --config proto.json --name commute --open
    dpdist submit --server http://127.0.0.1:8000 --campaign commute data.csv --column minutes
    dpdist campaign estimate --server http://127.0.0.1:8000 commute --json --plot commute.png
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from .. import _rng
from .._io._blocks import rechunk
from .._io._shuffle import ReportShuffler
from .._rng import check_rng
from ..errors import (
    EachValueANewUserWarning,
    InvalidParameterError,
    MissingDependencyError,
    ServiceRefusedError,
)
from ..local import from_config
from ..serve._limits import DEFAULT_MAX_BODY_BYTES, add_arguments as add_limit_arguments, from_args as limits_from_args, uvicorn_options
from ._arguments import add_missing_argument, missing_cells, parse_targets, seed_argument
from ._budget import add_budget_file_argument, charge_line, open_budget
from ._campaign_rounds import show_rounds
from ._deploy import charge_collection, data_reader, json_option, load_config
from ._env import check_environment, environment_defaults
from ._estimate_text import estimate_lines
from ._memo import add_ledger_arguments, is_longitudinal, open_device_memo
from ._records import add_columns_argument, check_columns_option
from ._submit_journal import check_journal_option, journal_path, journal_records, write_journal
from ._submit_rounds import submit_rounds

__all__ = ["add_commands"]

_DEFAULT_SERVER = "http://127.0.0.1:8000"
_TOKEN_HELP = "admin token (default: the DPDIST_ADMIN_TOKEN environment variable; prefer it: options show in `ps`)"


def add_commands(subparsers) -> None:
    _add_serve(subparsers)
    _add_campaign(subparsers)
    _add_submit(subparsers)


def _server_options(parser, *, admin: bool) -> None:
    parser.add_argument(
        "--server",
        default=os.environ.get("DPDIST_SERVER", _DEFAULT_SERVER),
        help=f"base URL of the service (default: $DPDIST_SERVER, else {_DEFAULT_SERVER})",
    )
    if admin:
        parser.add_argument("--admin-token", default=None, help=_TOKEN_HELP)
    parser.add_argument("--retries", type=int, default=8, help="attempts after the first on network errors, 408, 425, 429 and 5xx (8)")


# ---------------------------------------------------------------------- serve
def _add_serve(subparsers) -> None:
    serve = subparsers.add_parser(
        "serve",
        help="run the collection service (campaigns, report ingest, estimates, dashboard)",
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
    serve.add_argument("--admin-token", default=None, help=_TOKEN_HELP + "; at least 16 characters")
    serve.add_argument(
        "--relay-token", default=None,
        help="the token of the relay (dpdist relay) that delivers to campaigns created with --relay; >= 16 characters; "
        "prefer DPDIST_RELAY_TOKEN: options show in `ps`",
    )
    serve.add_argument(
        "--max-body-bytes",
        type=int,
        default=DEFAULT_MAX_BODY_BYTES,
        help=f"largest request body accepted; larger batches get HTTP 413 (default {DEFAULT_MAX_BODY_BYTES})",
    )
    serve.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"], help="server log level")
    add_limit_arguments(serve)  # time, memory, rate, size, access log, retention (docs/deployment.md, "Limits")
    _add_operations(serve)
    serve.set_defaults(handler=_run_serve)
    environment_defaults(serve)  # last: every option, also those added above, from DPDIST_<OPTION>


def _add_operations(serve) -> None:
    """The operator's options of ``dpdist serve`` (docs/deployment.md: "Operating", "Metrics", "Behind a reverse proxy")."""
    from ..serve._health import (  # lazy: the service's code loads only when it runs (dpdist[serve])
        DEFAULT_MIN_FREE_BYTES,
        DEFAULT_READY_TIMEOUT_S,
    )

    serve.add_argument("--log-format", default="text", choices=["text", "json"],
                       help="server log: uvicorn's text lines, or one JSON object per line with request ids (default text)")
    serve.add_argument("--metrics-token", default=None,
                       help="GET /metrics needs 'Authorization: Bearer <this token>' (>= 16 characters; prefer the "
                       "environment variable: options show in `ps`); without it, the admin token")
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


def _operations(args, Operations):
    root = args.root_path.rstrip("/")
    if root and (not root.startswith("/") or any(c in root for c in " ?#%\\")):
        raise InvalidParameterError(f"The '--root-path' option must be a URL path such as /dpdist. Got {args.root_path!r}.")
    args.root_path = root
    origins = tuple(origin.strip() for origin in args.cors_origin.split(",") if origin.strip())
    return Operations(metrics_token=args.metrics_token or None, log_format=args.log_format, cors_origins=origins,
                      ready_timeout_s=args.ready_timeout, min_free_bytes=args.min_free_bytes)


def _uvicorn_operations(args) -> dict:
    from ..serve._logs import log_config  # lazy: the service's code loads only when it runs (dpdist[serve])

    return {
        "root_path": args.root_path,
        "proxy_headers": True,
        "forwarded_allow_ips": args.forwarded_allow_ips,
        "log_config": log_config(args.log_format, args.log_level),
    }


def _missing_extra(command: str, error: ImportError):
    module = getattr(error, "name", None) or str(error)
    return MissingDependencyError(
        f"'{command}' needs the serve extra ({module} is not installed): pip install 'dpdist[serve]'."
    )


def _admin_token(args, *, required: bool = True) -> str | None:
    token = args.admin_token or os.environ.get("DPDIST_ADMIN_TOKEN")
    if required and not token:
        raise InvalidParameterError("The admin token is missing: set DPDIST_ADMIN_TOKEN or pass --admin-token.")
    return token


def _run_serve(args) -> int:
    check_environment(args)
    try:
        import uvicorn  # lazy: optional extra dpdist[serve]

        from ..serve._operations import Operations  # lazy: optional extra dpdist[serve]
    except ImportError as error:
        raise _missing_extra("dpdist serve", error) from None
    if not 0 <= args.port <= 65535:
        raise InvalidParameterError(f"The '--port' option must be in 0..65535. Got {args.port}.")
    token = _admin_token(args)
    assert token is not None, "required"
    if len(token) < 16:
        raise InvalidParameterError("The admin token (DPDIST_ADMIN_TOKEN or --admin-token) must be at least 16 characters.")

    relay_token = args.relay_token or os.environ.get("DPDIST_RELAY_TOKEN") or None
    if relay_token is not None and len(relay_token) < 16:
        raise InvalidParameterError("The relay token (DPDIST_RELAY_TOKEN or --relay-token) must be at least 16 characters.")
    limits = limits_from_args(args, args.max_body_bytes)
    operations = _operations(args, Operations)
    if not 1 <= args.workers <= 256:
        raise InvalidParameterError(f"The '--workers' option must be an int in 1..256. Got {args.workers}.")
    app = _opened_app(args, token, limits, operations, relay_token)
    started = (f"dpdist serve: {app.state.service.store.db.dialect} database {_redacted(args.db)}; "
               f"http://{args.host}:{args.port}{args.root_path}/ (OpenAPI at {args.root_path}/openapi.json)"
               + (f"; {args.workers} worker processes" if args.workers > 1 else ""))
    if args.log_format == "json":  # every line of a JSON log is JSON
        started = json.dumps({"level": "info", "logger": "dpdist.serve", "message": started})
    print(started, file=sys.stderr, flush=True)
    options = {"log_level": args.log_level, **uvicorn_options(limits), **_uvicorn_operations(args)}
    if args.workers == 1:
        uvicorn.run(app, host=args.host, port=args.port, **options)
        return 0
    app.state.service.close()  # the database was opened to check it: each worker opens its own
    from ..serve._workers import run_workers  # lazy: the service's code loads only when it runs (dpdist[serve])

    run_workers(args.workers, db=args.db, admin_token=token, max_body_bytes=args.max_body_bytes, limits=limits,
                operations=operations, relay_token=relay_token, host=args.host, port=args.port, **options)
    return 0


def _opened_app(args, token: str, limits, operations, relay_token: str | None):
    """The application, its database opened (and its schema migrated): a wrong ``--db`` is one line naming it."""
    from ..serve import create_app  # lazy: the service's code loads only when it runs (dpdist[serve])

    try:
        return create_app(args.db, admin_token=token, max_body_bytes=args.max_body_bytes, limits=limits, operations=operations,
                          relay_token=relay_token)
    except Exception as error:
        # the driver's own errors (sqlite3.OperationalError, psycopg.OperationalError): a path or URL the user gave
        cause = error.__cause__ if type(error).__name__ == "DatabaseUnavailableError" and error.__cause__ else error
        if type(cause).__module__.split(".")[0] not in ("sqlite3", "psycopg", "psycopg2"):
            raise
        first = " ".join(str(cause).split())
        raise InvalidParameterError(f"The '--db' option {_redacted(args.db)!r}: cannot open the database ({first}).") from None


def _redacted(url: str) -> str:
    """A database URL without its password (never print credentials)."""

    if "://" not in url:
        return url
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username}:***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit(parts._replace(netloc=netloc))


# ---------------------------------------------------------------------- campaign
def _campaign_command(actions, name: str, **texts):
    """The parser of a campaign sub-command ``name`` (``help``, ``description``) that takes ``CAMPAIGN``."""
    command = actions.add_parser(name, **texts)
    command.add_argument("campaign", metavar="CAMPAIGN", help="the campaign's id")
    return command


def _admin_command(command, handler, **defaults) -> None:
    """Close an admin sub-command's parser: the server options last, then what runs it."""
    _server_options(command, admin=True)
    command.set_defaults(handler=handler, **defaults)


def _add_campaign(subparsers) -> None:
    campaign = subparsers.add_parser(
        "campaign",
        help="create, open, close, inspect, estimate and export campaigns of a dpdist service (admin)",
        description="Administer the campaigns of a running 'dpdist serve'. Every sub-command needs the admin token "
        "(DPDIST_ADMIN_TOKEN or --admin-token).",
    )
    actions = campaign.add_subparsers(dest="action", metavar="ACTION", required=True)
    _add_create(actions)
    for name, help_text in (
        ("open", "open a campaign: it accepts reports and its config is frozen"),
        ("close", "close a campaign: it accepts no more reports (acknowledged retries still get their answer)"),
        ("show", "print a campaign's state and counts as JSON"),
    ):
        action = _campaign_command(actions, name, help=help_text, description=help_text[0].upper() + help_text[1:] + ".")
        if name == "open":
            _campaign_budget_options(action)
        _admin_command(action, _run_simple, action_name=name)
    _add_enroll_and_delete(actions)
    listing = actions.add_parser("list", help="list the campaigns", description="List the campaigns of the service.")
    _admin_command(listing, _run_list)
    _add_estimate_and_export(actions)
    rounds = _campaign_command(
        actions,
        "rounds",
        help="show a campaign of adaptive quantile rounds round by round, and the quantiles released so far",
        description="Print every round of CAMPAIGN (created with --rounds) with its reports and size, then the quantiles "
        "released from the rounds so far with their intervals. --advance first closes the current round now and "
        "publishes the next (after the last round the campaign closes).",
    )
    rounds.add_argument("--advance", action="store_true", help="close the current round now and publish the next")
    rounds.add_argument("--json", action="store_true", help="print the rounds document as JSON")
    _admin_command(rounds, _run_rounds)


def _run_rounds(args) -> int:
    with _client(args, admin=True) as client:
        return show_rounds(client, args.campaign, advance=args.advance, as_json=args.json)


def _add_create(actions) -> None:
    create = actions.add_parser(
        "create",
        help="create a campaign (state 'created'; its config can change until it is opened)",
        description="Create a campaign NAME with the protocol of --config (a JSON file or inline JSON object: a "
        "protocol config such as {\"protocol\": \"grr\", \"epsilon\": 1, \"domain_size\": 8}).",
    )
    create.add_argument("--name", required=True, help="the campaign's public id: 1-64 of a-z 0-9 _ -")
    source = create.add_mutually_exclusive_group(required=True)
    source.add_argument("--config", help="protocol config: a JSON file or an inline JSON object")
    source.add_argument(
        "--rounds",
        help="instead of --config: a campaign of adaptive quantile rounds, the plan as a JSON file or inline object "
        "({\"q\": [...], \"epsilon\": ..., \"bounds\": [lo, hi], \"reports\": N}; docs/adaptive_quantiles.md)",
    )
    create.add_argument(
        "--submit-token",
        default=None,
        help="optional token devices must send to submit (>= 16 characters; devices may pass it as DPDIST_SUBMIT_TOKEN)",
    )
    create.add_argument("--keep-reports", action="store_true", help="also keep the raw reports, for 'campaign export'")
    create.add_argument("--max-reports", type=int, default=None, help="accept at most this many reports (default: no cap)")
    create.add_argument(
        "--enrollment",
        action="store_true",
        help="each device submits with its own enrollment token, good for a stated number of reports "
        "('dpdist campaign enroll'); not with --submit-token",
    )
    create.add_argument(
        "--relay", default=None, metavar="URL",
        help="collect through the relay at URL (dpdist relay, with the service's --relay-token), the URL devices send "
        "to: the campaign gets an HPKE key, refuses direct submissions and states its guarantees; not with "
        "--submit-token or --enrollment (docs/deployment.md, 'Anonymous collection')",
    )
    create.add_argument(
        "--issuer", default=None, metavar="URL",
        help="with --relay: the issuer (dpdist issuer) whose Privacy Pass tokens admit one report each; without it anyone "
        "can send reports through the relay and only the local guarantee holds against the collector",
    )
    create.add_argument("--issuer-key", default=None, metavar="NAME",
                        help="with --issuer: the name of the issuer's key for this campaign ('dpdist issuer key NAME')")
    create.add_argument(
        "--issuer-run-by-collector", action="store_true",
        help="with --issuer: say that the collector's operator also runs the issuer (it could mint tokens for itself: "
        "the campaign then states no amplified guarantee against the collector)",
    )
    create.add_argument(
        "--colluding", type=int, default=0, metavar="M",
        help="with --relay and --issuer: a public bound on the devices (credentials of the issuer) whose reports' values "
        "the collector knows, its own or colluding devices'. Each gives up to the tokens_each the issuer publishes with "
        "its key, so up to M x tokens_each of a batch's admitted reports are the collector's: the amplified guarantee is "
        "stated for batches of their size minus M x tokens_each reports, or refused when that leaves fewer than 2 "
        "(default 0)",
    )
    create.add_argument("--open", action="store_true", help="open the campaign at once")
    _campaign_budget_options(create)
    _admin_command(create, _run_create)


def _add_enroll_and_delete(actions) -> None:
    enroll = _campaign_command(
        actions,
        "enroll",
        help="issue enrollment tokens for a campaign created with --enrollment (one per device)",
        description="Issue --count enrollment tokens for CAMPAIGN, each good for --reports reports to it; print them one "
        "per line (or write them to --out). The server keeps only their SHA-256: the tokens are shown this once.",
    )
    enroll.add_argument("--count", type=int, required=True, help="number of tokens (devices), at most 10000 per call")
    enroll.add_argument("--reports", type=int, required=True, help="reports each token may send to the campaign")
    enroll.add_argument("--out", default=None, help="write the tokens to this file (created readable by its owner only)")
    _admin_command(enroll, _run_enroll)

    delete = _campaign_command(
        actions,
        "delete",
        help="delete a campaign and everything stored for it (aggregate, batch records, raw reports, tokens)",
        description="Delete CAMPAIGN and everything the server stores for it. Needs --yes.",
    )
    delete.add_argument("--yes", action="store_true", help="confirm: the deletion cannot be undone")
    _admin_command(delete, _run_delete)


def _add_estimate_and_export(actions) -> None:
    estimate = _campaign_command(
        actions,
        "estimate",
        help="print a campaign's current estimate (text, --json) and/or plot it (--plot)",
        description="Fetch the campaign's current estimate. --option KEY=VALUE (repeatable) passes an option to the "
        "protocol's estimate(), e.g. --option postprocess=norm-sub.",
    )
    estimate.add_argument("--json", action="store_true", help="print the estimate document as JSON")
    estimate.add_argument("--plot", default=None, metavar="PNG", help="write the estimate's plot to this PNG file")
    estimate.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="estimator option (repeatable)")
    estimate.add_argument(
        "--targets", default=None, metavar="ITEMS",
        help="with --option recover=ldprecover: the attacked items when known, e.g. 3,7 (the option 'targets')",
    )
    estimate.add_argument("--level", type=float, default=0.95, help="confidence level of the bands (0.95)")
    estimate.add_argument(
        "--width", type=float, default=None, metavar="W",
        help="say whether the confidence sequence is narrower than W, or at about which n it will be",
    )
    estimate.add_argument(
        "--replicates", type=int, default=None, metavar="B",
        help="bootstrap replicates of a distribution's fixed-n band (service default 100; 0: none)",
    )
    _admin_command(estimate, _run_estimate)

    export = _campaign_command(
        actions,
        "export",
        help="download a campaign's kept raw reports to a report file",
        description="Write the raw reports kept by a campaign created with --keep-reports to --out (Parquet for "
        ".parquet/.pq, else dpdist binary records); the file carries the campaign's export file id, so "
        "'dpdist aggregate' refuses to count two exports of one campaign twice.",
    )
    export.add_argument("--out", required=True, help="report file to write (replaced atomically)")
    _admin_command(export, _run_export)


def _client(args, *, admin: bool):
    try:
        import httpx  # noqa: F401 - the client's transport  # lazy: optional extra dpdist[serve]

        from ..serve.client import Client  # lazy: the service's code loads only when it runs (dpdist[serve])
    except ImportError as error:
        raise _missing_extra(f"dpdist {args.command}", error) from None
    if args.retries < 0:
        raise InvalidParameterError(f"The '--retries' option must be an int >= 0. Got {args.retries}.")
    credential = (getattr(args, "issuer_credential", None) or os.environ.get("DPDIST_ISSUER_CREDENTIAL")) if not admin else None
    issuer = getattr(args, "issuer", None) if not admin else None
    if credential and not (isinstance(issuer, str) and issuer.startswith(("http://", "https://"))):
        raise InvalidParameterError("The '--issuer' option (or DPDIST_ISSUER) must be the http:// or https:// URL of the issuer "
                                    f"the issuer credential is for: a credential is sent to that issuer only. Got {issuer!r}.")
    return Client(
        args.server,
        admin_token=_admin_token(args) if admin else None,
        submit_token=(getattr(args, "submit_token", None) or os.environ.get("DPDIST_SUBMIT_TOKEN")) if not admin else None,
        retries=args.retries,
        on_retry=_say_retrying(args.server),
        pins={args.campaign: args.pin} if getattr(args, "pin", None) else None,
        issuer_credential=credential,
        issuer=issuer,
    )


def _say_retrying(server: str):
    """An ``on_retry`` that prints one line at the first failure: no silence while the client retries."""
    from ..serve.client import retry_schedule  # lazy: the service's code loads only when it runs (dpdist[serve])

    said = False

    def on_retry(failure: str, attempt: int, wait: float, remaining: int) -> None:
        nonlocal said
        if not said:
            said = True
            total = sum(retry_schedule(attempt + remaining - 1)[attempt - 1 :])
            print(f"dpdist: {server} did not answer ({failure}); retrying {remaining} more time(s) over at most "
                  f"about {total:.0f} s (--retries; Ctrl-C to stop).", file=sys.stderr, flush=True)

    return on_retry


def _print_json(document) -> None:
    print(json.dumps(document, indent=2, sort_keys=True))


def _campaign_budget_options(parser) -> None:
    add_budget_file_argument(parser)
    parser.add_argument(
        "--reports-per-device", type=int, default=1, metavar="K",
        help="with --budget-file: reports each device may send to the campaign (default 1); the charge is their "
        "composition (guarantee_over(K) for a memoized protocol)",
    )


def _open_charged(client, args, campaign: str) -> tuple[dict, str]:
    """Open ``campaign``, charging ``--budget-file`` first; the campaign's summary and the line to print."""

    session = open_budget(args)
    if session is None:
        return client.open_campaign(campaign), ""
    if args.reports_per_device < 1:
        raise InvalidParameterError(f"The '--reports-per-device' option must be an int >= 1. Got {args.reports_per_device}.")
    summary = client.campaign(campaign)
    if summary["state"] != "created":
        raise InvalidParameterError(f"Campaign {campaign!r} is {summary['state']}: only a created campaign opens (and is charged).")
    statement = session.campaign(summary["config"], reports=args.reports_per_device,
                                 label=f"campaign {campaign} at {args.server}")
    try:
        return client.open_campaign(campaign), charge_line(session, statement)
    except ServiceRefusedError:
        session._cancel(statement.charge)  # the service refused to open it: no report was collected, nothing spent
        raise  # (a request lost in transit may have opened it: that charge stands)


def _run_create(args) -> int:
    if args.rounds is not None:
        return _create_rounds(args)
    protocol = load_config(args.config)
    if args.budget_file is not None and not args.open:
        raise InvalidParameterError(
            "The '--budget-file' option charges a campaign when it opens: add '--open', or give it to 'campaign open'."
        )
    charged = ""
    with _client(args, admin=True) as client:
        summary = client.create_campaign(
            args.name,
            protocol.config(),
            submit_token=args.submit_token,
            keep_reports=args.keep_reports,
            max_reports=args.max_reports,
            enrollment=args.enrollment,
            relay=_relay_settings(args),
        )
        if args.open:
            summary, charged = _open_charged(client, args, args.name)
        public = client.config(args.name) if summary.get("relayed") else None
    print(f"campaign {summary['campaign']}: {summary['state']}, protocol {protocol.name} (epsilon={protocol.epsilon:g}).")
    server = args.server.rstrip("/")
    print(f"campaign {summary['campaign']}: config {server}/api/campaigns/{summary['campaign']}/config; participation page "
          f"{server}/campaigns/{summary['campaign']}/participate; dashboard {server}/campaigns/{summary['campaign']}/dashboard")
    if public is not None:
        relay = public["relay"]
        central = (public.get("anonymity") or {}).get("central") or {}
        print(f"campaign {summary['campaign']}: collected through the relay {relay['url']} only (direct submissions refused); "
              f"pin {relay['pin']} (devices given the relay's URL check the campaign's key and config against it)"
              + (f"; {central['reason']}" if "reason" in central else
                 "; its amplified central guarantee is stated as the relay's batches arrive ('anonymity')") + ".")
        admission = (public.get("anonymity") or {}).get("admission") or {}
        if admission.get("issuer") and admission.get("tokens_each") is not None:
            print(f"campaign {summary['campaign']}: colluding {admission['colluding']} device(s) x tokens_each "
                  f"{admission['tokens_each']} (the issuer's, per credential) = {admission['colluding_reports']} report(s) the "
                  "collector may know in any batch; the central guarantee is stated at the smallest batch minus these.")
    if charged:
        print(f"campaign {summary['campaign']}: {charged}.")
    return 0


def _relay_settings(args) -> dict | None:
    """The ``"relay"`` of a new campaign from ``--relay``, ``--issuer``, ``--issuer-key``, ``--colluding``: the issuer's
    key for the campaign is read from the issuer itself."""

    given = [option for option, value in (("--issuer", args.issuer), ("--issuer-key", args.issuer_key),
                                          ("--issuer-run-by-collector", args.issuer_run_by_collector),
                                          ("--colluding", args.colluding)) if value]
    if args.relay is None:
        if given:
            raise InvalidParameterError(f"The '{given[0]}' option needs '--relay URL'.")
        return None
    if args.colluding < 0:
        raise InvalidParameterError(f"The '--colluding' option must be an int >= 0. Got {args.colluding}.")
    if (args.issuer is None) != (args.issuer_key is None):
        raise InvalidParameterError("The '--issuer' and '--issuer-key' options go together: the issuer's URL and the name "
                                    "of its key for this campaign.")
    if args.issuer_run_by_collector and args.issuer is None:
        raise InvalidParameterError("The '--issuer-run-by-collector' option needs '--issuer URL'.")
    issuer = None
    if args.issuer is not None:
        from ..serve.client import issuer_of  # lazy: the service's code loads only when it runs (dpdist[serve])

        issuer = issuer_of(args.issuer, args.issuer_key, independent=not args.issuer_run_by_collector)
    return {"url": args.relay, "issuer": issuer, "colluding": args.colluding}


def _create_rounds(args) -> int:
    """``campaign create --rounds PLAN``: a campaign that runs adaptive quantile rounds (the service checks the plan)."""

    plan = json_option(args.rounds, "--rounds", "object")
    if not isinstance(plan, dict):
        raise InvalidParameterError(f"The '--rounds' option must be a JSON object (the plan). Got {args.rounds!r}.")
    for option, given in (("--budget-file", args.budget_file is not None), ("--relay", args.relay),
                          ("--enrollment", args.enrollment), ("--max-reports", args.max_reports is not None)):
        if given:
            raise InvalidParameterError(
                f"The '{option}' option does not apply to a campaign of rounds (--rounds): its rounds are capped by the "
                "plan's \"reports\", and relays, enrollment tokens and budget files are not supported for rounds."
            )
    with _client(args, admin=True) as client:
        summary = client.create_campaign(
            args.name, None, rounds=plan, submit_token=args.submit_token, keep_reports=args.keep_reports
        )
        if args.open:
            summary = client.open_campaign(args.name)
    print(f"campaign {summary['campaign']}: {summary['state']}, adaptive quantile rounds "
          f"(q={plan.get('q')}, epsilon={plan.get('epsilon')}, reports={plan.get('reports')}).")
    server, name = args.server.rstrip("/"), summary["campaign"]  # as 'campaign create --config' says them
    print(f"campaign {name}: config {server}/api/campaigns/{name}/config; participation page "
          f"{server}/campaigns/{name}/participate; dashboard {server}/campaigns/{name}/dashboard; rounds "
          f"'dpdist campaign rounds {name}'")
    return 0


def _run_simple(args) -> int:
    charged = ""
    with _client(args, admin=True) as client:
        if args.action_name == "open":
            summary, charged = _open_charged(client, args, args.campaign)
        elif args.action_name == "close":
            summary = client.close_campaign(args.campaign)
        else:
            _print_json(client.campaign(args.campaign))
            return 0
    print(f"campaign {summary['campaign']}: {summary['state']}; n={summary['n']}, batches={summary['batches']}.")
    if charged:
        print(f"campaign {summary['campaign']}: {charged}.")
    return 0


def _run_enroll(args) -> int:
    for option, value in (("--count", args.count), ("--reports", args.reports)):
        if value < 1:
            raise InvalidParameterError(f"The '{option}' option must be an int >= 1. Got {value}.")
    with _client(args, admin=True) as client:
        tokens = client.enroll(args.campaign, args.count, args.reports)
    text = "".join(token + "\n" for token in tokens)
    if args.out is None:
        sys.stdout.write(text)
    else:
        descriptor = os.open(args.out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(text)
        print(f"campaign {args.campaign}: {len(tokens)} enrollment token(s) of {args.reports} report(s) each written to {args.out}.")
    return 0


def _run_delete(args) -> int:
    if not args.yes:
        raise InvalidParameterError(f"'dpdist campaign delete {args.campaign}' deletes it and all its data for good: add '--yes'.")
    with _client(args, admin=True) as client:
        result = client.delete_campaign(args.campaign)
    print(f"campaign {args.campaign}: deleted ({result['batches']} batch record(s), {result['kept_report_batches']} "
          "batch(es) of kept reports).")
    return 0


def _run_list(args) -> int:
    with _client(args, admin=True) as client:
        for summary in client.campaigns():
            print(f"{summary['campaign']}\t{summary['state']}\t{summary['config']['protocol']}\tn={summary['n']}")
    return 0


def _parse_options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InvalidParameterError(f"The '--option' option must be KEY=VALUE. Got {pair!r}.")
        options[key] = value
    return options


def _run_estimate(args) -> int:
    options = _parse_options(args.option)
    targets = parse_targets(args.targets)
    if targets is not None:
        if "targets" in options:
            raise InvalidParameterError("The '--targets' option and '--option targets=...' name the same option: give one.")
        options["targets"] = ",".join(str(item) for item in targets)
    view = {key: value for key, value in (("width", args.width), ("replicates", args.replicates)) if value is not None}
    with _client(args, admin=True) as client:
        document = client.estimate(args.campaign, level=args.level, **view, **options)
        if args.plot:
            # the same query as the document: the figure draws the band the text and the JSON give
            Path(args.plot).write_bytes(client.estimate_png(args.campaign, level=args.level, **view, **options))
    if args.json:
        _print_json(document)
    else:
        _print_summary(document)
    if args.plot:
        print(f"  plot   {args.plot}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _print_summary(document: dict) -> None:
    """The estimate as text: values by label with the fixed-n interval and the confidence sequence side by side."""

    rejected = f"; rejected {document['rejected']}" if document["rejected"] else ""
    print(f"campaign {document['campaign']} ({document['state']}): {document['protocol']} "
          f"(epsilon={document['epsilon']:g}), n={document['n']} from {document['batches']} batch(es){rejected}")
    if document.get("guarantee"):
        print(f"  privacy: {document['guarantee']}")
    for line in estimate_lines(document["estimate"]):
        print("  " + line)
    diagnostics = document.get("diagnostics") or {}
    ran = (diagnostics.get("test") and not diagnostics.get("detail")) or (diagnostics.get("constraint") or {}).get("test")
    if ran:  # protocols without a test: no line
        print("  " + diagnostics["summary"])


def _run_export(args) -> int:
    with _client(args, admin=True) as client:
        count = client.export(args.campaign, args.out)
    print(f"campaign {args.campaign}: {count} report(s) written to {args.out}.")
    return 0


# ---------------------------------------------------------------------- submit
def _add_submit(subparsers) -> None:
    submit = subparsers.add_parser(
        "submit",
        help="randomize a column locally (CSPRNG) and submit it to a campaign, or submit report files",
        description="Fetch the campaign's config from the service, randomize each value of COLUMN of DATA on this "
        "machine with the OS-keyed CSPRNG, and submit the reports in a uniformly random order (CSPRNG; not the "
        "file's) in batches of --batch-size, each under a fresh "
        "random batch id and retried with the same bytes until acknowledged. With --reports, DATA are report "
        "files written by 'dpdist privatize', each submitted as one batch under its own file id (a file of over 8 MiB "
        "of reports in parts of 8 MiB, each under '<file id>.part<k>'), so a file submitted twice is counted once. "
        "To a campaign in rounds (adaptive quantiles), each row is one device answering one round: the rows are split "
        "at random (CSPRNG) into the rounds in proportion to their sizes, and each round's share is sent once the round "
        "is open, never more than its room (docs/adaptive_quantiles.md).",
    )
    submit.add_argument("data", metavar="DATA", nargs="+", help="a .csv, .tsv or .parquet file (or report files with --reports)")
    submit.add_argument("--campaign", required=True, help="the campaign's public id")
    submit.add_argument("--column", default=None, help="column holding the values (not with --reports)")
    add_columns_argument(submit, "a multi-attribute campaign, not with --reports")
    submit.add_argument("--reports", action="store_true", help="DATA are report files to submit as they are")
    submit.add_argument("--batch-size", type=int, default=10_000, help="reports per batch (10000)")
    submit.add_argument(
        "--clip",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="numbers outside the campaign's bounds are clipped to the nearest bound before randomization and "
        "counted on this machine (the default, as in 'dpdist release'); --no-clip refuses the file",
    )
    add_missing_argument(submit)
    submit.add_argument(
        "--memo",
        default=None,
        metavar="FILE",
        help="longitudinal campaigns: every row is a value of this one device, reported through its memo in FILE "
        "(created on first use, saved before any report is sent); without it each row is a different user",
    )
    add_ledger_arguments(submit)
    add_budget_file_argument(submit)
    submit.add_argument(
        "--journal", default=None, metavar="FILE",
        help="with --column: where the randomized batches are kept before they are sent, so that running the same "
        "command again after a failure resends them instead of randomizing again (default: a file under "
        "~/.cache/dpdist/submit named by the server, campaign, config, column, file content and memo; a campaign in "
        "rounds keeps a directory of parts)",
    )
    submit.add_argument(
        "--wait", type=float, default=0.0, metavar="SECONDS",
        help="a campaign in rounds: how long rows wait for their round to open (other devices filling the rounds "
        "before it) before the command stops; running it again sends them (default 0: stop at once)",
    )
    submit.add_argument(
        "--split-seed", type=seed_argument, default=None, metavar="SEED",
        help="a campaign in rounds, for tests: split the rows into rounds from this seed instead of the CSPRNG (the "
        "reports are still drawn from the CSPRNG)",
    )
    submit.add_argument(
        "--submit-token",
        default=None,
        help="the campaign's submit token, if it has one (default: the DPDIST_SUBMIT_TOKEN environment variable; "
        "prefer it: options show in `ps`)",
    )
    submit.add_argument(
        "--pin", default=None,
        help="a relayed campaign's pin (printed by 'campaign create'): needed when --server is the campaign's relay; the "
        "campaign's key and config served there must hash to it (docs/deployment.md, 'Keys the relay cannot swap')",
    )
    submit.add_argument(
        "--issuer-credential", default=None,
        help="this device's credential for the issuer of a relayed campaign that admits reports by token (default: the "
        "DPDIST_ISSUER_CREDENTIAL environment variable; prefer it: options show in `ps`)",
    )
    submit.add_argument("--issuer", default=None, metavar="URL",
                        help="the issuer the credential is for: a campaign naming another issuer is refused")
    _server_options(submit, admin=False)
    submit.set_defaults(handler=_run_submit)


def _run_submit(args) -> int:
    if args.batch_size < 1:
        raise InvalidParameterError(f"The '--batch-size' option must be an int >= 1. Got {args.batch_size}.")
    if not 0 <= args.wait < float("inf"):
        raise InvalidParameterError(f"The '--wait' option must be a number of seconds >= 0. Got {args.wait}.")
    if args.column is not None and args.columns is not None:
        raise InvalidParameterError("The '--column' and '--columns' options cannot be used together.")
    if args.reports == (args.column is not None or args.columns is not None):
        raise InvalidParameterError(
            "Give either '--column' or '--columns' (values to randomize) or '--reports' (report files), not both or neither."
        )
    if not args.reports and len(args.data) != 1:
        raise InvalidParameterError(f"With '--column', DATA is one file. Got {len(args.data)}.")
    if args.memo is not None and args.reports:
        raise InvalidParameterError("The '--memo' option randomizes '--column' values as one device; report files are already randomized.")
    if args.budget_file is not None and args.reports:
        raise InvalidParameterError(
            "The '--budget-file' option charges the randomization of '--column' values; report files were charged "
            "when they were randomized ('dpdist privatize --budget-file')."
        )
    # reports of batches the campaign had already counted (a re-submitted file) are not counted again: said apart
    accepted, duplicates, again_reports, batches, relayed = 0, 0, 0, 0, None
    rejected: dict[str, int] = {}
    with _client(args, admin=False) as client:
        if args.reports:
            acks = (ack for path in args.data for ack in client.submit_file(args.campaign, path))
        else:
            acks = _submit_column(client, args)
        try:
            for ack in acks:
                batches += 1
                if "relayed" in ack:  # a relayed campaign: the relay's acknowledgement of sealed reports
                    relayed = (relayed or 0) + ack["relayed"] - ack["duplicates"]
                    again_reports += ack["duplicates"]
                    continue
                if ack["duplicate"]:
                    duplicates += 1
                    again_reports += ack["accepted"]
                    continue
                accepted += ack["accepted"]
                for reason, count in ack["rejected"].items():
                    rejected[reason] = rejected.get(reason, 0) + count
        except BaseException:
            if batches and not args.reports:
                # the batches are journaled: the same command resends them, and the counted ones count once
                print(
                    f"submit: note: {batches} batch(es) of {accepted} accepted report(s) were counted before this "
                    f"failure and stay counted; run the same command again to send the rest (the randomized batches "
                    f"are kept in a journal, and batches already counted are not counted twice).",
                    file=sys.stderr,
                )
            raise
    note = f"; rejected {rejected}" if rejected else ""
    again = (f"; {duplicates} batch(es) of {again_reports} report(s) had already been counted and were not counted again"
             if duplicates else "")
    if relayed is not None:
        print(f"submit: campaign {args.campaign}: {relayed} report(s) accepted by the relay, sealed for the collector, which "
              f"counts them once the relay forwards a batch of its minimum size"
              + (f"; {again_reports} report(s) the relay had already accepted" if again_reports else "") + ".")
        return 0
    print(f"submit: campaign {args.campaign}: {batches} batch(es) acknowledged, {accepted} report(s) accepted{note}{again}.")
    return 0


def _submit_column(client, args):


    document = client.config(args.campaign)
    if document.get("rounds") is not None:  # each row one device answering one round (docs/adaptive_quantiles.md)
        yield from submit_rounds(client, args, document)
        return
    relayed = document.get("relay") is not None
    protocol = client.protocol(args.campaign) if relayed else from_config(document["config"])  # a relayed one's: its identity's
    check_columns_option(protocol, args.column, args.columns)
    selected = args.column if args.columns is None else args.columns
    session = open_budget(args)
    label = f"submit {args.data[0]}:{selected} to {args.campaign} ({protocol.name})"
    if session is not None:
        if args.memo is not None:
            charge_collection(args, protocol, label)  # refuses the combination
        session.check(protocol.guarantee, label)  # refused before the data are read
    # every value is checked before the first batch leaves: a bad row in batch k must not stop the run
    # after batches 1..k-1 were counted, since re-running the corrected file would count them twice.
    # Unknown labels (and words outside a pem alphabet) are skipped and counted, numbers outside the bounds
    # clipped and counted, as by 'dpdist privatize': the counts are printed here and never sent
    rows, missing, (checked, read) = 0, 0, data_reader(protocol, args.data[0], args.column, args.columns, clip=args.clip)
    for chunk, n_missing in read():
        chunk_values = checked(chunk)
        protocol._check_values(chunk_values)
        rows, missing = rows + len(chunk_values), missing + n_missing
    for note in missing_cells(args, missing, f"{args.data[0]}:{selected}") + checked.notes():
        print(f"submit: note: {note}.", file=sys.stderr)
    prepare, read = data_reader(protocol, args.data[0], args.column, args.columns, clip=args.clip)
    values = (prepare(chunk) for chunk, _ in read())
    if args.memo is None and is_longitudinal(protocol):
        print(
            f"submit: note: each row is randomized as a different user of {protocol.name}; "
            "one device reporting over rounds uses '--memo FILE'.",
            file=sys.stderr,
        )
    journal = (Path(args.journal) if args.journal else
               journal_path(args.server, args.campaign, protocol.config(), selected, args.data[0], args.memo,
                            device=client.issuer_credential))
    if args.journal:
        check_journal_option(journal, directory=False)
    if relayed:  # the reports' tokens, kept beside the journal: a resend carries the token its report was sent with
        client.keep_tokens(journal.with_name(journal.name + ".tokens"))
    if journal.exists():
        print(f"submit: note: resuming from the journal {journal}: its batches were randomized by an earlier run and "
              "are sent again as they are; batches the campaign already counted are not counted twice.", file=sys.stderr)
    else:
        if relayed:  # every report's token before any value is randomized: a refusal never depends on a value
            client.prepare_tokens(args.campaign, rows)
        if session is not None:  # charged once, when the values are randomized (a resumed journal is not)
            print(f"submit: {charge_line(session, session.charge(protocol.guarantee, label))}.", file=sys.stderr)
        # every row is randomized first, then the reports leave in a uniformly random order (CSPRNG): batch k
        # and the rows within it say nothing about where a row was in the file; the batches are journaled
        # before the first is sent, so a re-run after a kill resends them instead of randomizing again
        with (
            open_device_memo(
                args.memo, protocol, collector=args.server, budget=args.budget, accounting=args.accounting
            ) as memo,
            ReportShuffler(protocol, _rng.secure_generator()) as shuffler,
        ):
            for block in rechunk(values, args.batch_size):
                if memo is None:
                    with warnings.catch_warnings():  # the note above says it: each row is a different user
                        warnings.simplefilter("ignore", EachValueANewUserWarning)
                        shuffler.add(protocol.privatize(block, secure=True))
                else:
                    shuffler.add(memo.reports(block, check_rng(None, secure=True, owner="dpdist submit")))
            write_journal(journal, protocol, shuffler.blocks(args.batch_size))
    pause = _test_pause_after_batches()
    for index, (batch_id, body) in enumerate(journal_records(journal)):
        yield client.submit_body(args.campaign, batch_id, body)
        if pause is not None and index + 1 == pause[0]:
            time.sleep(pause[1])


def _test_pause_after_batches():
    """For the crash tests: ``DPDIST_TEST_PAUSE_AFTER_BATCHES=k:seconds`` sleeps after k acknowledged batches."""
    setting = os.environ.get("DPDIST_TEST_PAUSE_AFTER_BATCHES")
    if not setting:
        return None
    count, seconds = setting.split(":")
    return int(count), float(seconds)
