"""``dpdist submit``: a device randomizes a column on this machine (CSPRNG) and submits it, or submits report files.

::

    dpdist submit --server http://127.0.0.1:8000 --campaign commute data.csv --column minutes
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings
from pathlib import Path

from .. import _rng
from .._io._blocks import rechunk
from .._io._shuffle import ReportShuffler
from .._rng import check_rng
from .._validation import Described, ExistingFile, HttpUrl, Integer, Interval, Text
from ..errors import EachValueANewUserWarning, ServiceUnavailableError
from .._wire._report_bound import protocol_of_answer
from ._arguments import (Each, Excludes, NeedsAny, NeedsCount, add_missing_argument, missing_cells, seed_argument, state_rules,
                         token_rule)
from ._budget import add_budget_file_argument, charge_line, open_budget
from ._deploy import BUDGET_FILE_WITHOUT_MEMO, data_reader
from ._memo import add_ledger_arguments, is_longitudinal, open_device_memo
from ._records import add_columns_argument, check_columns_option
from ._service_client import add_ohttp_arguments, device_client, server_options
from ._submit_journal import check_journal_option, journal_path, journal_records, write_journal
from ._submit_rounds import submit_rounds
from ._commands import HELP

__all__ = ["add_commands"]


def add_commands(subparsers) -> None:
    _add_submit(subparsers)


def _add_submit(subparsers) -> None:
    submit = subparsers.add_parser(
        "submit",
        help=HELP["submit"],
        description="Fetch the campaign's config from the service, randomize each value of COLUMN of DATA on this "
        "machine with the OS-keyed CSPRNG, and submit the reports in a uniformly random order (CSPRNG; not the "
        "file's) in batches of --batch-size, each under a fresh "
        "random batch id and retried with the same bytes until acknowledged. With --reports, DATA are report "
        "files written by 'dpdist privatize', each submitted as one batch under its own file id (a file of over 8 MiB "
        "of reports in parts of 8 MiB, each under '<file id>.part<k>'), so a file submitted twice is counted once. "
        "To a campaign in rounds (adaptive quantiles), each row is one device answering one round: the rows are split "
        "at random (CSPRNG) into the rounds in proportion to their sizes, and each round's share is sent once the round "
        "is open, never more than its room (docs/explanation/adaptive-quantiles.md).",
    )
    submit.add_argument("data", metavar="DATA", nargs="+", help="a .csv, .tsv or .parquet file (or report files with --reports)")
    submit.add_argument("--campaign", required=True, help="the campaign's public id")
    submit.add_argument("--column", default=None, help="column holding the values (not with --reports)")
    add_columns_argument(submit, "a multi-attribute campaign, not with --reports")
    submit.add_argument("--reports", action="store_true", help="DATA are report files to submit as they are")
    add_ohttp_arguments(submit)
    submit.add_argument("--batch-size", type=int, default=10_000, help="reports per batch (10000; fewer if the service's body holds fewer)")
    submit.add_argument(
        "--clip",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="numbers outside the campaign's bounds are clipped to the nearest bound (wrapped around the circle "
        "for opm-circular, a protocol's or an attribute's) before randomization and counted on this machine (the default, as in 'dpdist release'); --no-clip refuses the file",
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
    _add_access_options(submit)
    server_options(submit, admin=False)
    submit.set_defaults(handler=_run_submit)
    state_rules(submit, {
        "--batch-size": Integer(low=1),
        "--submit-token": token_rule(source="DPDIST_SUBMIT_TOKEN"),
        # before the server is contacted: a missing file is said at once, not after --retry-window of retries
        "DATA": Each(ExistingFile("the path of an existing data file (report files with --reports)")),
        "--campaign": Described(Text(), "a campaign's public id (a non-empty string)"),
        "--wait": Described(Interval(0.0, math.inf, closed="left"), "a number of seconds >= 0"),
        "--issuer": HttpUrl("the http:// or https:// URL of an issuer, with a host", no_userinfo=HttpUrl.TOKEN_SENT,
                            base=True),
    }, (
        Excludes("--column", "--columns"),
        NeedsAny(("--column", "--columns", "--reports"), why="values to randomize or report files"),
        *(NeedsCount(option, "DATA", high=1, why="the values of one data file (several files are report files, with "
                     "--reports)") for option in ("--column", "--columns")),
        *(Excludes(option, "--reports", "values to randomize, or report files: not both") for option in ("--column",
                                                                                                      "--columns")),
        Excludes("--memo", "--reports", "it randomizes '--column' values as one device; report files are already randomized"),
        Excludes("--budget-file", "--reports", "it charges the randomization of '--column' values; report files were "
                 "charged when they were randomized ('dpdist privatize --budget-file')"),
        BUDGET_FILE_WITHOUT_MEMO,
        *_NOT_WITH_REPORTS,
    ))


#: settings of the randomization of '--column' values, which report files do not go through (ignored otherwise)
_NOT_WITH_REPORTS = (
    Excludes("--journal", "--reports", "it keeps the batches randomized from '--column' values; report files are sent "
             "as they are"),
    Excludes("--split-seed", "--reports", "it splits the rows of '--column' values into rounds; report files are sent "
             "as they are"),
)


def _add_access_options(submit) -> None:
    """What a campaign may ask of a device before it accepts its reports: a submit token, a relayed campaign's pin,
    an issuer's credential."""
    submit.add_argument(
        "--submit-token",
        default=None,
        help="the campaign's submit token, if it has one (default: the DPDIST_SUBMIT_TOKEN environment variable; "
        "prefer it: options show in `ps`)",
    )
    submit.add_argument(
        "--pin", default=None,
        help="a relayed campaign's pin (printed by 'campaign create'): needed when --server is the campaign's relay; the "
        "campaign's key and config served there must hash to it (docs/how-to/run-a-campaign.md, 'Keys the relay cannot swap')",
    )
    submit.add_argument(
        "--issuer-credential", default=None,
        help="this device's credential for the issuer of a relayed campaign that admits reports by token (default: the "
        "DPDIST_ISSUER_CREDENTIAL environment variable; prefer it: options show in `ps`)",
    )
    submit.add_argument("--issuer", default=None, metavar="URL",
                        help="the issuer the credential is for: a campaign naming another issuer is refused")
    submit.add_argument(
        "--relay-envelope", default="auto", choices=("auto", "dpdist", "ohttp"),
        help="deprecated, no effect (removed in 0.2.0): every report of a relayed campaign travels to its relay as an "
        "RFC 9458 request encapsulated to the key configuration of the campaign's identity")


def _run_submit(args) -> int:
    # --column, --columns (values to randomize) or --reports (report files), one of them: the option table
    # one DATA file with --column or --columns: the option table
    # reports of batches the campaign had already counted (a re-submitted file) are not counted again: said apart
    accepted, duplicates, again_reports, batches, relayed = 0, 0, 0, 0, None
    rejected: dict[str, int] = {}
    with device_client(args) as client:
        if args.reports:  # each part's acknowledgement as it comes: a later part's failure still says what was counted
            acks = (ack for path in args.data for ack in client.submit_file_parts(args.campaign, path))
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
        except BaseException as error:
            _note_failure(args, error, batches - duplicates, accepted, duplicates, again_reports)
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


def _note_failure(args, error: BaseException, counted: int, accepted: int, duplicates: int, again: int) -> None:
    """Say, when a run stops on ``error``, what it counted (``counted`` batches of ``accepted`` reports; ``duplicates``
    batches of ``again`` reports counted already, by an earlier run or earlier in this one) and how the rest is sent:
    the batches are journaled, or the report files keep their ids, so the same command resends them and the counted
    ones count once."""
    if not (counted or duplicates) and not isinstance(error, ServiceUnavailableError):
        return
    kept = "the randomized batches are kept in a journal" if not args.reports else "a report file keeps its file id"
    before = f" ({duplicates} batch(es) of {again} report(s) had been counted already)" if duplicates else ""
    if isinstance(error, ServiceUnavailableError):  # the service did not answer for the whole --retry-window
        if not (counted or duplicates):  # (it may not have answered the campaign's config: nothing randomized yet)
            print("submit: note: nothing was counted yet; run the same command again once the service answers, or "
                  "give a longer --retry-window.", file=sys.stderr)
            return
        print(f"submit: note: {counted} batch(es) of {accepted} accepted report(s) were counted before the service "
              f"stopped answering and stay counted{before}; run the same command again to send the rest ({kept}, and a "
              f"batch already counted is not counted twice), or give a longer --retry-window.", file=sys.stderr)
        return
    # a refusal: the same command meets it again unless what refused changed (a campaign closed or full stays so)
    print(f"submit: note: {counted} batch(es) of {accepted} accepted report(s) were counted by this run before this "
          f"failure and stay counted{before}; the same command sends only what was not counted ({kept}, and batches "
          f"already counted are not counted twice), and is refused again unless what refused it changed.", file=sys.stderr)


def _submit_column(client, args):


    document = client.config(args.campaign)
    if document.get("rounds") is not None:  # each row one device answering one round (docs/explanation/adaptive-quantiles.md)
        yield from submit_rounds(client, args, document)
        return
    relayed = document.get("relay") is not None
    protocol = (client.protocol(args.campaign) if relayed  # a relayed one's: its identity's
                else protocol_of_answer(args.campaign, document["config"]))
    check_columns_option(protocol, args.column, args.columns)
    selected = args.column if args.columns is None else args.columns
    session = open_budget(args)
    label = f"submit {args.data[0]}:{selected} to {args.campaign} ({protocol.name})"
    # reports of a size the service's body holds, in batches it holds: refused before the data are read or anything
    # drawn, and the memory of randomizing one batch bounded by that body
    batch_size = client.batch_rows(args.campaign, protocol, args.batch_size)
    if session is not None:
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
            for block in rechunk(values, batch_size):
                if memo is None:
                    with warnings.catch_warnings():  # the note above says it: each row is a different user
                        warnings.simplefilter("ignore", EachValueANewUserWarning)
                        shuffler.add(protocol.privatize(block, secure=True))
                else:
                    shuffler.add(memo.reports(block, check_rng(None, secure=True, owner="dpdist submit")))
            write_journal(journal, protocol, shuffler.blocks(batch_size))
    for batch_id, body in journal_records(journal):
        yield client.submit_body(args.campaign, batch_id, body)

