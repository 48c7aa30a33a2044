"""``dpdist campaign ...``: the admin's commands of a running ``dpdist serve``.

::

    dpdist campaign create --server http://127.0.0.1:8000 --config proto.json --name commute --open
    dpdist campaign estimate --server http://127.0.0.1:8000 commute --json --plot commute.png
"""

from __future__ import annotations

import json
import sys

from .._io._atomic import atomic_writer, write_text_atomically
from .._redact import redacted_url
from .._shown import shown
from .._validation import HttpUrl, Described, Integer, Text
from ..errors import InvalidParameterError, ServiceRefusedError
from ._arguments import KEY_VALUE, OUT, PLOT, TARGETS, Each, Excludes, Needs, NeedsAny, state_rules, token_rule
from ._budget import add_budget_file_argument, charge_line, open_budget
from ._campaign_rounds import show_rounds
from ._deploy import json_option, load_config
from ._printed import printed_lines
from ._estimate_text import estimate_lines
from ._service_client import admin_client, server_options
from ._commands import HELP

__all__ = ["add_commands"]


def add_commands(subparsers) -> None:
    _add_campaign(subparsers)


def _campaign_command(actions, name: str, **texts):
    """The parser of a campaign sub-command ``name`` (``help``, ``description``) that takes ``CAMPAIGN``."""
    command = actions.add_parser(name, **texts)
    command.add_argument("campaign", metavar="CAMPAIGN", help="the campaign's id")
    return command


def _admin_command(command, handler, **defaults) -> None:
    """Close an admin sub-command's parser: the server options last, then what runs it."""
    server_options(command, admin=True)
    command.set_defaults(handler=handler, **defaults)


def _add_campaign(subparsers) -> None:
    campaign = subparsers.add_parser(
        "campaign",
        help=HELP["campaign"],
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
    with admin_client(args) as client:
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
        "({\"q\": [...], \"epsilon\": ..., \"bounds\": [lo, hi], \"reports\": N}; docs/explanation/adaptive-quantiles.md)",
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
        "--submit-token or --enrollment (docs/how-to/run-a-campaign.md, 'Anonymous collection')",
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
    rounds_only = ("a campaign of rounds is capped by its plan's \"reports\", and relays, enrollment tokens and budget "
                   "files are not supported for rounds")
    state_rules(create, {"--colluding": Integer(low=0), "--submit-token": token_rule(16),
                         "--relay": HttpUrl("the http:// or https:// URL of the relay, with a host", no_userinfo=HttpUrl.PUBLISHED),
                         "--issuer": HttpUrl("the http:// or https:// URL of an issuer, with a host", no_userinfo=HttpUrl.PUBLISHED,
                                          base=True),
                         "--issuer-key": Described(Text(), "the name of the issuer's key (a non-empty str)")}, (
        *(Needs(option, "--relay") for option in ("--issuer", "--issuer-key", "--issuer-run-by-collector", "--colluding")),
        Needs("--issuer", "--issuer-key", "the name of the issuer's key for this campaign"),
        Needs("--issuer-key", "--issuer", "the issuer's URL"),
        Needs("--issuer-run-by-collector", "--issuer"),
        Needs("--budget-file", "--open", "it charges a campaign when it opens (or give it to 'campaign open')"),
        *(Excludes(option, "--rounds", rounds_only) for option in ("--budget-file", "--relay", "--enrollment", "--max-reports")),
    ))


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
    state_rules(enroll, {"--count": Integer(low=1), "--reports": Integer(low=1)})

    delete = _campaign_command(
        actions,
        "delete",
        help="delete a campaign and everything stored for it (aggregate, batch records, raw reports, tokens)",
        description="Delete CAMPAIGN and everything the server stores for it. Needs --yes.",
    )
    delete.add_argument("--yes", action="store_true", help="confirm: the deletion cannot be undone")
    _admin_command(delete, _run_delete)
    state_rules(delete, relations=(NeedsAny(("--yes",), why="it deletes the campaign and all its data for good"),))


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
    state_rules(estimate, {"--option": Each(KEY_VALUE, keys=True), "--targets": TARGETS, "--plot": PLOT})

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
    state_rules(export, {"--out": OUT})


def _print_json(document) -> None:
    print(json.dumps(document, indent=2, sort_keys=True))


def _campaign_budget_options(parser) -> None:
    add_budget_file_argument(parser)
    parser.add_argument(
        "--reports-per-device", type=int, default=1, metavar="K",
        help="with --budget-file: reports each device may send to the campaign (default 1); the charge is their "
        "composition (guarantee_over(K) for a memoized protocol)",
    )
    state_rules(parser, {"--reports-per-device": Integer(low=1)})


def _open_charged(client, args, campaign: str) -> tuple[dict, str]:
    """Open ``campaign``, charging ``--budget-file`` first; the campaign's summary and the line to print."""

    session = open_budget(args)
    if session is None:
        return client.open_campaign(campaign), ""
    summary = client.campaign(campaign)
    if summary["state"] != "created":
        raise InvalidParameterError(f"Campaign {campaign!r} is {summary['state']}: only a created campaign opens (and is charged).")
    statement = session.campaign(summary["config"], reports=args.reports_per_device,
                                 label=f"campaign {campaign} at {redacted_url(args.server)}")
    try:
        return client.open_campaign(campaign), charge_line(session, statement)
    except ServiceRefusedError:
        session._cancel(statement.charge)  # the service refused to open it: no report was collected, nothing spent
        raise  # (a request lost in transit may have opened it: that charge stands)


def _run_create(args) -> int:
    if args.rounds is not None:
        return _create_rounds(args)
    protocol = load_config(args.config)
    charged = ""
    with admin_client(args) as client:
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
    print(said(f"campaign {summary['campaign']}: {summary['state']}, protocol {protocol.name} (epsilon={protocol.epsilon:g})."))
    server = redacted_url(args.server.rstrip("/"))  # shown: never its password
    print(said(f"campaign {summary['campaign']}: config {server}/api/campaigns/{summary['campaign']}/config; participation "
               f"page {server}/campaigns/{summary['campaign']}/participate; dashboard {server}/campaigns/{summary['campaign']}/dashboard"))
    if public is not None:
        relay = public["relay"]
        central = (public.get("anonymity") or {}).get("central") or {}
        print(said(f"campaign {summary['campaign']}: collected through the relay {redacted_url(relay['url'])} only (direct "
                   f"submissions refused); pin {relay['pin']} (devices given the relay's URL check the campaign's key and "
                   "config against it)" + (f"; {central['reason']}" if "reason" in central else
                                            "; its amplified central guarantee is stated as the relay's batches arrive "
                                            "('anonymity')") + "."))
        admission = (public.get("anonymity") or {}).get("admission") or {}
        if admission.get("issuer") and admission.get("tokens_each") is not None:
            print(said(f"campaign {summary['campaign']}: colluding {admission['colluding']} device(s) x tokens_each "
                       f"{admission['tokens_each']} (the issuer's, per credential) = {admission['colluding_reports']} "
                       "report(s) in any batch that may not be honest devices' (the collector's or the relay's); the central guarantee is stated at the smallest "
                       "batch minus these."))
    if charged:
        print(said(f"campaign {summary['campaign']}: {charged}."))
    return 0


def _relay_settings(args) -> dict | None:
    """The ``"relay"`` of a new campaign from ``--relay``, ``--issuer``, ``--issuer-key``, ``--colluding``: the issuer's
    key for the campaign is read from the issuer itself."""

    if args.relay is None:  # the options that need it are refused by the option table
        return None
    issuer = None
    if args.issuer is not None:
        from ..client import issuer_of  # lazy: the client's code loads only when it runs (dpdist[serve])

        issuer = issuer_of(args.issuer, args.issuer_key, independent=not args.issuer_run_by_collector)
    return {"url": args.relay, "issuer": issuer, "colluding": args.colluding}


def _create_rounds(args) -> int:
    """``campaign create --rounds PLAN``: a campaign that runs adaptive quantile rounds (the service checks the plan)."""

    plan = json_option(args.rounds, "--rounds", "object")
    if not isinstance(plan, dict):
        raise InvalidParameterError(f"The '--rounds' option must be a JSON object (the plan). Got {args.rounds!r}.")
    with admin_client(args) as client:
        summary = client.create_campaign(
            args.name, None, rounds=plan, submit_token=args.submit_token, keep_reports=args.keep_reports
        )
        if args.open:
            summary = client.open_campaign(args.name)
    print(said(f"campaign {summary['campaign']}: {summary['state']}, adaptive quantile rounds "
               f"(q={plan.get('q')}, epsilon={plan.get('epsilon')}, reports={plan.get('reports')})."))
    server, name = redacted_url(args.server.rstrip("/")), summary["campaign"]  # as 'campaign create --config' says them
    print(said(f"campaign {name}: config {server}/api/campaigns/{name}/config; participation page "
               f"{server}/campaigns/{name}/participate; dashboard {server}/campaigns/{name}/dashboard; rounds "
               f"'dpdist campaign rounds {name}'"))
    return 0


def _run_simple(args) -> int:
    charged = ""
    with admin_client(args) as client:
        if args.action_name == "open":
            summary, charged = _open_charged(client, args, args.campaign)
        elif args.action_name == "close":
            summary = client.close_campaign(args.campaign)
        else:
            _print_json(client.campaign(args.campaign))
            return 0
    print(said(f"campaign {summary['campaign']}: {summary['state']}; n={summary['n']}, batches={summary['batches']}."))
    if charged:
        print(said(f"campaign {summary['campaign']}: {charged}."))
    return 0


def _run_enroll(args) -> int:
    with admin_client(args) as client:
        tokens = client.enroll(args.campaign, args.count, args.reports)
    text = "".join(token + "\n" for token in tokens)
    if args.out is None:
        sys.stdout.write(text)
    else:
        write_text_atomically(args.out, text, private=True)
        print(f"campaign {args.campaign}: {len(tokens)} enrollment token(s) of {args.reports} report(s) each written to {args.out}.")
    return 0


def _run_delete(args) -> int:
    # --yes given: the option table
    with admin_client(args) as client:
        result = client.delete_campaign(args.campaign)
    print(f"campaign {args.campaign}: deleted ({result['batches']} batch record(s), {result['kept_report_batches']} "
          "batch(es) of kept reports).")
    return 0


def said(text: str) -> str:
    """A line built from a server's answer as printed: control characters (ESC, BEL, newlines, bidi overrides)
    escaped, credentials masked (:func:`dpdist._shown.shown`), whole (a campaign's name, state or
    protocol retitled, cleared or reversed the terminal)."""
    return shown(text, (), None)


def _run_list(args) -> int:
    with admin_client(args) as client:
        for summary in client.campaigns():
            fields = (summary["campaign"], summary["state"], summary["config"]["protocol"], f"n={summary['n']}")
            print("\t".join(said(str(field)) for field in fields))
    return 0


def _parse_options(pairs: list[str]) -> dict:
    options = {}
    for pair in pairs:
        key, _, value = pair.partition("=")  # KEY=VALUE: the option table
        options[key] = value
    return options


def _run_estimate(args) -> int:
    options = _parse_options(args.option)
    targets = args.targets  # item ids, or None: the option table
    if targets is not None:
        if "targets" in options:
            raise InvalidParameterError("The '--targets' option and '--option targets=...' name the same option: give one.")
        options["targets"] = ",".join(str(item) for item in targets)
    view = {key: value for key, value in (("width", args.width), ("replicates", args.replicates)) if value is not None}
    with admin_client(args) as client:
        document = client.estimate(args.campaign, level=args.level, **view, **options)
        lines = None if args.json else printed_lines(
            _summary_lines, document, f"GET {client.server}/api/campaigns/{args.campaign}/estimate", "an estimate")
        if args.plot:
            # the same query as the document: the figure draws the band the text and the JSON give
            with atomic_writer(args.plot) as handle:
                handle.write(client.estimate_png(args.campaign, level=args.level, **view, **options))
    if lines is None:
        _print_json(document)
    else:
        print("\n".join(lines))
    if args.plot:
        print(f"  plot   {args.plot}", file=sys.stderr if args.json else sys.stdout)
    return 0


def _summary_lines(document: dict) -> list[str]:
    """The estimate as text: values by label with the fixed-n interval and the confidence sequence side by side."""

    rejected = f"; rejected {document['rejected']}" if document["rejected"] else ""
    lines = [said(f"campaign {document['campaign']} ({document['state']}): {document['protocol']} "
                  f"(epsilon={document['epsilon']:g}), n={document['n']} from {document['batches']} batch(es){rejected}")]
    if document.get("guarantee"):
        lines.append(said(f"  privacy: {document['guarantee']}"))
    lines += ["  " + said(line) for line in estimate_lines(document["estimate"])]
    diagnostics = document.get("diagnostics") or {}
    ran = ((diagnostics.get("test") and not diagnostics.get("detail")) or (diagnostics.get("constraint") or {}).get("test")
           or (diagnostics.get("top") or {}).get("test"))
    if ran:  # protocols without a test: no line
        lines.append("  " + said(str(diagnostics["summary"])))
    return lines


def _run_export(args) -> int:
    with admin_client(args) as client:
        count = client.export(args.campaign, args.out)
    print(f"campaign {args.campaign}: {count} report(s) written to {args.out}.")
    return 0

