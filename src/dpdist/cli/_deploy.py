"""``dpdist privatize`` and ``dpdist aggregate``; the state mode of ``dpdist estimate``.

A deployment in three steps, each a separate process::

    dpdist privatize --config proto.json --column C data.parquet --out reports.parquet
    dpdist aggregate --config proto.json reports/*.parquet --state state.bin
    dpdist estimate --state state.bin --out estimate.csv --plot estimate.png

``aggregate`` is incremental and crash-safe: each report file is added and the
state (committing the file's identity in its ingest journal) is replaced
atomically before the next file, so a killed run leaves a valid state that
already holds the files it finished, and re-running refuses (or with
``--skip-ingested`` skips) files already counted; of a binary file that
concatenates files, ``--skip-ingested`` adds the records of the files not
counted yet (it refuses the file when some records carry no file id).  A
file's identity is the random file id its writer stored in it (files written
before ids: its SHA-256 content fingerprint), so two devices' byte-identical
files are both counted.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import warnings
from pathlib import Path
from typing import Any, Callable, Iterator, cast

import numpy as np

from .. import _json, _rng, local, plotting, uncertainty
from .._io._atomic import atomic_path, exclusive_lock, real_path, remove_stale_temporaries
from .._io._blocks import rechunk
from .._io._columns import count_rows, iter_column, iter_columns
from .._io._dedupe import identities_of
from .._io._files import summarize_file
from .._io._shuffle import ReportShuffler
from .._rng import (
    block_generator,
    check_rng,
    order_generator,
    root_seed_sequence,
)
from .._validation import Described, ExistingFile, Integer, Text
from ..errors import (
    DPDistError,
    EachValueANewUserWarning,
    EmptyAggregateError,
    IncompatibleStateError,
    InvalidParameterError,
)
from ..io import (
    ReportWriter,
    SavedState,
    iter_report_batches,
    load_state,
    protocol_of_file,
    record_ingested,
)
from ..local.words import words_in_alphabet
from ._arguments import (
    BOUNDS,
    OUT,
    Each,
    Excludes,
    Needs,
    add_missing_argument,
    missing_cells,
    seed_argument,
    state_rules,
)
from ._bounds import values_in_bounds
from ._budget import add_budget_file_argument, charge_line, open_budget
from ._memo import add_ledger_arguments, is_longitudinal, open_device_memo
from ._records import RecordValues, add_columns_argument, check_columns_option
from ._commands import HELP

__all__ = ["add_commands", "load_config", "json_option", "read_labels", "run_estimate_from_state", "data_reader"]

_BLOCK_SIZE = 1 << 16


def add_commands(subparsers) -> None:
    _add_privatize(subparsers)
    _add_aggregate(subparsers)


def _add_privatize(subparsers) -> None:
    privatize = subparsers.add_parser(
        "privatize",
        help=HELP["privatize"],
        description="Randomize each value of COLUMN (--column; a multi-attribute protocol: each row's record of "
        "--columns) with the protocol of --config and write one report per "
        "value to --out (Parquet for .parquet/.pq, else the dpdist binary record format), in a uniformly random "
        "order: report i is not the report of row i (over 128 MiB of reports, the shuffle goes through temporary "
        "files of reports next to --out). Without --seed the randomness, and the order, come from the OS-keyed "
        "CSPRNG. With --seed, block b of --block-size values draws from SeedSequence(--seed).spawn(...)[b] and "
        "the order from the seed's own stream, so a run is reproducible (research only: a seeded run is "
        "not secret, never publish its reports about people).",
    )
    privatize.add_argument("data", metavar="DATA", help="a .csv, .tsv or .parquet file")
    privatize.add_argument("--config", required=True, help="protocol config: a JSON file or an inline JSON object")
    privatize.add_argument("--column", default=None, help="column holding the users' values")
    add_columns_argument(privatize, "a multi-attribute protocol of --config (docs/explanation/multi-attribute.md)")
    privatize.add_argument("--out", required=True, help="report file to write (replaced atomically)")
    privatize.add_argument(
        "--labels",
        default=None,
        help="a text file with one label per line: the public label domain of a frequency protocol "
        "(written into the report file's config; values outside it are skipped and counted)",
    )
    privatize.add_argument(
        "--bounds", default=None, help="public bounds LO,HI of a numeric column for a frequency protocol (binned)"
    )
    privatize.add_argument(
        "--bins", type=int, default=None, help="equal bins over --bounds (default and only value: the domain_size)"
    )
    privatize.add_argument(
        "--clip",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="numbers outside the bounds (of the config, or --bounds) are clipped to the nearest bound (wrapped around "
        "the circle for opm-circular, a protocol's or an attribute's) before randomization and counted in the summary (the default, as in 'dpdist release'); --no-clip refuses them",
    )
    add_missing_argument(privatize)
    privatize.add_argument(
        "--seed", type=seed_argument, default=None, help="root seed for reproducible research (default: the CSPRNG)"
    )
    privatize.add_argument("--secure", action="store_true", help="refuse --seed: always the OS-keyed CSPRNG")
    privatize.add_argument(
        "--memo",
        default=None,
        metavar="FILE",
        help="longitudinal protocols: every row is a value of this one device, reported through its memo in FILE "
        "(created on first use, saved before the reports are written); without it each row is a different user",
    )
    add_ledger_arguments(privatize)
    add_budget_file_argument(privatize)
    privatize.add_argument("--block-size", type=int, default=_BLOCK_SIZE, help=f"values per block ({_BLOCK_SIZE})")
    privatize.add_argument("--no-progress", action="store_true", help="no progress bar")
    privatize.set_defaults(handler=_run_privatize)
    state_rules(privatize, {"--block-size": Integer(low=1), "--bounds": BOUNDS, "--out": OUT}, (
        Excludes("--seed", "--secure", "the CSPRNG takes no seed"),
        Excludes("--column", "--columns"),
        Needs("--bins", "--bounds", "the public range of the column"),
        BUDGET_FILE_WITHOUT_MEMO,
    ))


def _add_aggregate(subparsers) -> None:
    aggregate = subparsers.add_parser(
        "aggregate",
        help=HELP["aggregate"],
        description="Add the reports of each FILE to --state (created if missing). Invalid reports are "
        "rejected and counted by reason; each file's accepted and rejected counts are printed. The state is "
        "replaced atomically after each file, together with the file's id (its SHA-256 content fingerprint "
        "for files written before ids); a file already ingested is refused (or skipped with --skip-ingested). "
        "A file with no valid report, or written under another config, is not added and makes the command "
        "exit with status 3 (unless --allow-rejected).",
    )
    aggregate.add_argument("files", metavar="FILE", nargs="+", help="report files (Parquet or dpdist binary)")
    aggregate.add_argument("--state", required=True, help="aggregator state file (read, then replaced)")
    aggregate.add_argument(
        "--config", default=None, help="protocol config (JSON file or inline); default: the state's, else the first file's"
    )
    aggregate.add_argument("--skip-ingested", action="store_true", help="skip files already in the state")
    aggregate.add_argument(
        "--allow-rejected",
        action="store_true",
        help="count a file even when none of its reports is valid or it was written under another config "
        "(default: such a file is not added, and the command exits with status 3)",
    )
    aggregate.add_argument("--no-progress", action="store_true", help="no progress bar")
    aggregate.set_defaults(handler=_run_aggregate)
    state_rules(aggregate, {"FILE": Each(ExistingFile()),
                            "--state": Described(Text(), "the path of the aggregator state file (a non-empty string)")})


def load_config(text: str, option: str = "--config"):
    """A protocol from a JSON file path or an inline JSON object."""

    return local.from_config(json_option(text, option, "object"))


def json_option(text: str, option: str, kind: str = "object") -> Any:
    """The JSON value of an option: inline (an object or a list) or in the file ``text`` names."""

    source = text
    if not text.lstrip().startswith(("{", "[")):
        try:
            text = Path(text).read_text()
        except OSError as error:
            raise InvalidParameterError(
                f"The '{option}' option must be a JSON file or an inline JSON {kind}. Got {source!r} ({error.strerror})."
            ) from None
    try:
        return _json.loads(text)
    except ValueError as error:
        raise InvalidParameterError(f"The '{option}' option {source!r} is not valid JSON ({error}).") from None


def read_labels(path: str, option: str = "--labels") -> list[str]:
    """The label domain in a text file: one label per line (surrounding spaces and empty lines ignored)."""

    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        raise InvalidParameterError(
            f"The '{option}' option must be a UTF-8 text file with one label per line. Got {path!r} ({reason})."
        ) from None
    labels = [line.strip() for line in text.splitlines() if line.strip()]
    duplicates = sorted({label for label in labels if labels.count(label) > 1}) if len(set(labels)) != len(labels) else []
    if len(labels) < 2 or duplicates:
        raise InvalidParameterError(
            f"The '{option}' file {path!r} must hold at least 2 distinct labels, one per line. "
            f"Got {len(labels)} label(s)" + (f", repeated: {duplicates[:5]}." if duplicates else ".")
        )
    return labels


def with_labels(protocol, labels: list[str], option: str = "--labels"):
    """``protocol`` with the label domain ``labels`` (its domain_size must match, if it states one)."""

    if protocol.tags.kind != "frequency":
        raise InvalidParameterError(
            f"The '{option}' option needs a frequency protocol; {protocol.name!r} is {protocol.tags.kind}."
        )
    if protocol.domain_size != len(labels):
        raise InvalidParameterError(
            f"The '{option}' file holds {len(labels)} labels but the protocol's domain_size is "
            f"{protocol.domain_size}; they must agree."
        )
    return local.from_config({**protocol.config(), "labels": labels})


def _progress(total, unit, disable):
    from tqdm import tqdm  # lazy: tqdm loads when a progress bar is shown

    return tqdm(total=total, unit=unit, unit_scale=True, disable=True if disable else None, file=sys.stderr)


# ---------------------------------------------------------------------- privatize
def _run_privatize(args) -> int:


    protocol = load_config(args.config)
    check_columns_option(protocol, args.column, args.columns)
    if args.labels is not None:
        protocol = with_labels(protocol, read_labels(args.labels))
    binning = _privatize_binning(protocol, args)
    # no seed: every block draws from its own CSPRNG stream (check_rng(None)); a seed: reproducible blocks
    root = None if args.seed is None else root_seed_sequence(args.seed)
    prepare, read = data_reader(protocol, args.data, args.column, args.columns, clip=args.clip, binning=binning)
    if args.missing == "refuse":  # a pass over the file, so that a refusal comes before any charge or report
        missing_cells(args, sum(n_missing for _, n_missing in read()), f"{args.data}:{args.column or args.columns}")
    charged = charge_collection(args, protocol, f"privatize {args.data}:{args.column or args.columns} ({protocol.name})")
    missing = 0

    def values():
        nonlocal missing
        for chunk, n_missing in read():
            missing += n_missing
            yield prepare(chunk)

    # the file's order must say nothing about the rows': every report is drawn, then all are written in a
    # uniformly random order (the CSPRNG's; a seed's own stream with --seed, so a seeded run stays reproducible)
    order = _rng.secure_generator() if root is None else order_generator(root)
    with (
        open_device_memo(
            args.memo, protocol, seeded=args.seed is not None, budget=args.budget, accounting=args.accounting
        ) as memo,
        _progress(count_rows(args.data), "value", args.no_progress) as bar,
        ReportWriter(args.out, protocol) as writer,
        ReportShuffler(protocol, order, directory=Path(args.out).resolve().parent) as shuffler,
    ):
        for index, block in enumerate(rechunk(values(), args.block_size)):
            rng = None if root is None else block_generator(root, index)
            if memo is None:
                with warnings.catch_warnings():  # the summary line says it: each row is a different user
                    warnings.simplefilter("ignore", EachValueANewUserWarning)
                    shuffler.add(protocol.privatize(block, rng=rng, secure=args.secure))
            else:
                shuffler.add(memo.reports(block, check_rng(rng, secure=args.secure, owner="dpdist privatize")))
            bar.update(block.size)
        for reports in shuffler.blocks(args.block_size):
            writer.write(reports)
    note = "".join(f"; {phrase}" for phrase in missing_cells(args, missing, f"{args.data}:{args.column or args.columns}"))
    note += "".join(f"; {phrase}" for phrase in prepare.notes())
    if memo is not None:
        note += f"; one device, its memo saved in {args.memo}"
    elif is_longitudinal(protocol):
        note += "; each row randomized as a different user (one device over rounds: --memo FILE)"
    print(f"privatize: {writer.n_written} report(s) of {protocol.name} written to {args.out}{note}.")
    if charged:
        print(f"privatize: {charged}.")
    return 0


def data_reader(
    protocol, path, column: str | None, columns: str | None, *, clip: bool, binning=None
) -> tuple[Any, Callable[[], Iterator[tuple[Any, int]]]]:
    """``(prepare, read)``: ``read()`` yields the data's chunks and missing counts, ``prepare`` makes them values.

    One column (``--column``), or one record per row of the attributes' columns (``--columns``,
    a multi-attribute protocol; a row with a missing cell is skipped and counted).
    """

    if columns is not None:
        records = RecordValues(protocol.attributes, columns, clip=clip, protocol=protocol)
        return records, lambda: iter_columns(path, records.columns, text=records.text())
    assert column is not None, "one of --column and --columns (check_columns_option)"
    prepare = ColumnValues(protocol, column, clip=clip, binning=binning)
    return prepare, lambda: iter_column(path, column, text=reads_text(protocol))


#: a budget file charges a collection whose rows are different users; a memo's rows are one device's values
BUDGET_FILE_WITHOUT_MEMO = Excludes("--budget-file", "--memo", "it charges a collection in which each row is a different "
                                    "user; with '--memo' the rows are one device's values, whose account is its ledger "
                                    "('--budget')")


def charge_collection(args, protocol, label: str) -> str:
    """Charge ``--budget-file`` one report per user of ``protocol`` (before any value is read), as
    :meth:`~dpdist.budget.BudgetSession.campaign` charges it (the protocol's exact loss per report); the line to print."""

    session = open_budget(args)  # not with --memo (BUDGET_FILE_WITHOUT_MEMO, in the commands' option tables)
    if session is None:
        return ""
    return charge_line(session, session.campaign(protocol, label=label))


def _privatize_binning(protocol, args):
    """``(bounds, bins)`` when a frequency protocol privatizes a numeric column binned over --bounds, else None."""

    if args.bins is None and args.bounds is None:
        return None
    if protocol.tags.kind != "frequency":
        raise InvalidParameterError(
            f"The '--bins' and '--bounds' options bin a numeric column for a frequency protocol; the "
            f"{protocol.tags.kind} protocol {protocol.name!r} takes its bins and bounds from --config."
        )
    if protocol.labels is not None or args.labels is not None:
        raise InvalidParameterError("The '--bins' and '--bounds' options cannot be used with labels (--labels).")
    bins = protocol.domain_size if args.bins is None else args.bins
    if bins != protocol.domain_size:
        raise InvalidParameterError(
            f"The '--bins' option must equal the protocol's domain_size ({protocol.domain_size}). Got {bins}."
        )
    return args.bounds, bins  # a pair (lo, hi) or None: the option table


class ColumnValues:
    """Turns chunks of a data column into ``protocol``'s values, as ``privatize`` and ``submit`` both do.

    Labels outside a labelled protocol's domain, and words with a character outside a
    ``pem`` protocol's alphabet, are skipped and counted; numbers outside a numerical
    protocol's bounds (or outside ``--bounds`` of a binned frequency protocol) are clipped
    to the nearest bound and counted (``clip``, the default), or refused.  The counts stay
    on this machine: :meth:`notes` words them for the user.
    """

    def __init__(self, protocol, column: str, *, clip: bool = True, binning=None):
        self.protocol, self.column, self.clip, self.binning = protocol, column, clip, binning
        self.unknown = self.outside_alphabet = self.clipped = 0

    def __call__(self, chunk: np.ndarray) -> np.ndarray:
        protocol = self.protocol
        if protocol.labels is not None:
            items = protocol.encode(chunk, on_unknown="drop")
            self.unknown += chunk.size - items.size
            return items
        if protocol.tags.words:
            known = words_in_alphabet(chunk, protocol.codec.alphabet)
            self.outside_alphabet += int(known.size - np.count_nonzero(known))
            return chunk[known]
        if self.binning is not None:
            (low, high), bins = self.binning
            from ..datasets import bucketize  # lazy: loads scipy (0.4-2 s)

            return bucketize(self._in_bounds(np.asarray(chunk, dtype=np.float64), (low, high), "'--bounds'"), (low, high), bins)
        if protocol.tags.kind == "numerical":
            return self._in_bounds(chunk, protocol.bounds, "the bounds of the config", wrap=self._wraps())
        return _as_protocol_values(protocol, chunk)

    def _wraps(self) -> bool:
        """The config's bounds are one period of a circle (opm-circular): values outside wrap around."""
        return self.binning is None and bool(getattr(self.protocol, "circular", False))

    def _in_bounds(self, values, bounds, where: str, wrap: bool = False) -> np.ndarray:
        values, moved = values_in_bounds(values, bounds, clip=self.clip, column=f"{self.column!r}", where=where, wrap=wrap)
        self.clipped += moved
        return values

    def notes(self) -> list[str]:
        """What was skipped or clipped, one phrase each (empty when nothing was)."""
        notes = []
        if self.unknown:
            notes.append(f"{self.unknown} value(s) outside the label domain rejected")
        if self.outside_alphabet:
            notes.append(f"{self.outside_alphabet} word(s) with a character outside the alphabet rejected")
        if self.clipped:
            bounds = self.binning[0] if self.binning is not None else self.protocol.bounds
            how = "wrapped around the circle" if self._wraps() else "clipped to the nearest bound"
            notes.append(
                f"{self.clipped} value(s) outside the bounds [{bounds[0]:g}, {bounds[1]:g}] {how} "
                "(counted here, never sent; --no-clip refuses them)"
            )
        return notes


def reads_text(protocol) -> bool:
    """Whether a data column is read as text for ``protocol``: labels, or words (a ``pem`` over an alphabet)."""
    return protocol.labels is not None or protocol.tags.words


def _as_protocol_values(protocol, chunk: np.ndarray) -> np.ndarray:
    """Integral floats (e.g. a CSV column with gaps) become items for a categorical protocol."""
    if protocol.tags.takes_items and np.issubdtype(chunk.dtype, np.floating):
        if np.all(np.isfinite(chunk)) and np.all(chunk == np.floor(chunk)):
            return chunk.astype(np.int64)
    return chunk


# ---------------------------------------------------------------------- aggregate
def _run_aggregate(args) -> int:
    state_path = Path(args.state)
    # each FILE an existing file: the option table
    with exclusive_lock(state_path, "dpdist aggregate"):
        written = real_path(state_path)  # where the writes go (a symbolic link followed)
        remove_stale_temporaries(written.parent, written.name)  # a killed run's
        protocol = load_config(args.config) if args.config else None
        if state_path.exists():
            saved = load_state(state_path, protocol)
        else:
            protocol = protocol or protocol_of_file(args.files[0])
            saved = SavedState(protocol.aggregator(), {})
        protocol = saved.aggregator.protocol
        todo = _files_to_aggregate(args, saved, state_path)
        refused = _aggregate_files(args, todo, saved, state_path)
    aggregator = saved.aggregator
    if not state_path.exists():  # every file refused or skipped, and no earlier state: nothing was written
        print(f"aggregate: no state written to {state_path}: no file was added.")
        return 3 if refused else 0
    print(
        f"aggregate: state {state_path} holds {aggregator.n} report(s) of {protocol.name} from "
        f"{len({id(record) for record in saved.ingested.values()})} file(s); rejected {_plain_counts(aggregator.rejected) or 0}."
    )
    return 3 if refused else 0


def _files_to_aggregate(args, saved, state_path: Path) -> list:
    """``(name, summary, identities to record, file ids to skip)`` of each file (or part) not yet counted.

    A file already ingested is refused, or skipped with ``--skip-ingested`` (a file joining
    several files: the parts already counted are skipped, the others added).
    """

    todo: list[tuple[str, Any, list[str], frozenset[str]]] = []
    seen: dict[str, dict[str, str]] = {}
    for name in args.files:
        summary = summarize_file(name)
        keys = identities_of(summary)
        known = [key for key in keys if key in saved.ingested or key in seen]
        if not known:
            seen.update({key: {"file": name} for key in keys})
            todo.append((name, summary, keys, frozenset()))
            continue
        earlier = saved.ingested.get(known[0]) or seen[known[0]]
        # a binary file made by concatenating files carries each one's id: some parts may be new
        new = [] if any(key.startswith("sha256:") for key in known) else [key for key in keys if key not in known]
        without_id = any(key.startswith("sha256:") for key in keys)
        if not args.skip_ingested:
            raise IncompatibleStateError(
                f"The report file {name!r} was already ingested into {str(state_path)!r} as "
                f"{earlier['file']!r} (same file id, or same content for files without one)"
                + (f", in part ({len(known)} of the {len(keys)} files it joins)" if new else "")
                + "; refusing to count its reports twice (nothing was added). Use --skip-ingested to skip "
                + ("the parts already counted and add the others." if new and not without_id else "such files.")
            )
        if not new:
            print(f"aggregate: skipping {name} (already ingested as {earlier['file']}).", file=sys.stderr)
            continue
        if without_id:
            raise IncompatibleStateError(
                f"The report file {name!r} holds records of files already ingested into {str(state_path)!r} "
                f"(as {earlier['file']!r}) and records without a file id, of which dpdist cannot tell whether "
                "they were counted; refusing to skip it (its new reports would be lost) or to add it (the "
                "others would be counted twice). Nothing was added: split the file into the files it joins."
            )
        print(
            f"aggregate: {name}: skipping the records of {len(known)} file id(s) already ingested "
            f"(as {earlier['file']}); adding those of the other {len(new)}.",
            file=sys.stderr,
        )
        seen.update({key: {"file": name} for key in new})
        todo.append((name, summary, new, frozenset(key.removeprefix("id:") for key in known)))
    return todo


def _aggregate_files(args, todo: list, saved, state_path: Path) -> int:
    """Add each file of ``todo`` to the saved state, recording it as ingested; the number of files refused."""

    protocol = saved.aggregator.protocol
    refused = 0
    total = sum(summary.rows_except(skip) for _, summary, _, skip in todo)
    with _progress(total, "report", args.no_progress) as bar:
        for name, _, keys, skip in todo:
            added = protocol.aggregator()
            for batch in iter_report_batches(name, protocol, skip_file_ids=skip):
                added.add_batch(batch)
                bar.update(batch.n_read)
            rejected = f", rejected {_plain_counts(added.rejected)}" if added.rejected else ""
            if (added.n == 0 or "other_config" in added.rejected) and not args.allow_rejected:
                refused += 1
                print(
                    f"aggregate: {name}: not added: {added.n} valid report(s){rejected}"
                    f"{_config_difference(name, protocol) if 'other_config' in added.rejected else ''} "
                    "(use --allow-rejected to count such a file's valid reports anyway).",
                    file=sys.stderr,
                )
                continue
            saved.aggregator.merge(added)
            record_ingested(state_path, saved, keys, {"file": str(name), "n": added.n, "rejected": dict(added.rejected)})
            print(f"aggregate: {name}: accepted {added.n} report(s){rejected}.", file=sys.stderr)
    return refused


def _config_difference(name, protocol) -> str:
    """Which config entries of the file ``name`` differ from ``protocol``'s (e.g. labels given to privatize only)."""

    try:
        theirs = protocol_of_file(name).config()
    except DPDistError:
        return ""
    ours = protocol.config()
    keys = sorted(key for key in set(theirs) | set(ours) if theirs.get(key) != ours.get(key))
    shown = ", ".join(f"{key}: file {_short_value(theirs.get(key))} vs state {_short_value(ours.get(key))}" for key in keys)
    return f"; its config differs from the state's ({shown})" if keys else ""


def _short_value(value) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _plain_counts(counts: dict) -> dict:
    return {str(reason): int(count) for reason, count in counts.items()}


# ---------------------------------------------------------------------- estimate --state
def run_estimate_from_state(args) -> int:
    """``dpdist estimate --state STATE [--out CSV] [--plot PNG]``: estimate from a saved aggregator.

    Only the state file is read: the ingest journal beside it (which ``aggregate``
    needs to refuse files counted before) plays no part in an estimate.
    """

    aggregator = load_state(args.state, journal=False).aggregator  # --plot checked by the option table
    protocol = aggregator.protocol
    if aggregator.n == 0:
        raise EmptyAggregateError(f"--state {args.state} holds no report yet: add report files to it with "
                                  "'dpdist aggregate' first.")
    options = {}
    if args.postprocess is not None:
        if protocol.tags.kind != "frequency":
            raise InvalidParameterError(
                f"The '--postprocess' option applies to frequency protocols; the state's {protocol.name!r} is numerical."
            )
        options["postprocess"] = args.postprocess
    recovery = {"recover": getattr(args, "recover", None), "fake_fraction": getattr(args, "fake_fraction", None),
                "targets": getattr(args, "targets", None)}  # item ids: the option table
    if any(value is not None for value in recovery.values()):
        if protocol.tags.kind != "frequency":
            raise InvalidParameterError(
                f"The '--recover' option applies to frequency protocols; the state's {protocol.name!r} is "
                f"{protocol.tags.kind}."
            )
        # --fake-fraction and --targets go with --recover ldprecover: the option table
        options.update({key: value for key, value in recovery.items() if value is not None})
    estimate = protocol.estimate(aggregator, **options)

    replicates = getattr(args, "replicates", 0)  # checked by the option table of 'dpdist estimate'
    if replicates and estimate.needs_band():  # a CDF without analytic intervals: bootstrap its band
        estimate = uncertainty.cdf_band(protocol, aggregator, replicates=replicates, **options)
    print(f"{protocol.name} (epsilon={protocol.epsilon:g}): estimate from {aggregator.n} report(s) in {args.state}"
          + (f"; rejected {aggregator.rejected}" if aggregator.rejected else ""))
    # any estimate meets the result contract (dpdist.estimates.Estimate): no switch on its type
    if estimate.guarantee is not None:
        print(f"  guarantee  {estimate.guarantee.describe()}")
    if protocol.tags.memoized:  # one device's reports over time: both relations, stated as values
        print(f"  over time  {cast(Any, protocol).describe_over_time()}")  # a memoized protocol (tags)
    print_estimate_and_files(estimate, args, label=f"{protocol.name}, eps={protocol.epsilon:g}, n={estimate.n}")
    return 0


def print_estimate_and_files(estimate, args, label: str) -> None:
    """The estimate's summary and notes on stdout, its table to ``--out`` and its figure to ``--plot`` when given."""
    for name, value in estimate.summary().items():
        print(f"  {name:<10} {value:.6g}")
    for note in estimate.notes():  # what the estimate says of itself (docs/reference/results.md)
        print(f"  note       {note}")
    if args.out:
        _write_table(estimate.table(), args.out)
        print(f"  table  {args.out}")
    if args.plot:
        plotting.save_estimate(estimate, args.plot, label=label)
        print(f"  plot   {args.plot}")


def _write_table(columns: dict, path) -> None:
    """Named columns as CSV: integers as such, floats with all 17 significant digits, text quoted as CSV requires."""

    def cell(value) -> str:
        if isinstance(value, (int, np.integer)):
            return str(int(value))
        if isinstance(value, (float, np.floating)):
            return format(float(value), ".17g")
        return str(value)

    with atomic_path(path) as temporary, open(temporary, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(list(columns))
        for row in zip(*(np.asarray(column).tolist() for column in columns.values())):
            writer.writerow([cell(value) for value in row])
