"""``dpdist privatize`` and ``dpdist aggregate``; the state mode of ``dpdist estimate``.

A deployment in three steps, each a separate process::

    dpdist privatize --config proto.json --column C data.parquet --out reports.parquet
    dpdist aggregate --config proto.json reports/*.parquet --state state.bin
    dpdist estimate --state state.bin --out estimate.csv --plot estimate.png

``aggregate`` is incremental and crash-safe: each report file is added and the
state (committing the file's identity in its ingest journal) is replaced
atomically before the next file, so a killed run leaves a valid state that
already holds the files it finished, and re-running refuses (or with
``--skip-ingested`` skips) files already counted.  A file's identity is the
random file id its writer stored in it (files written before ids: its SHA-256
content fingerprint), so two devices' byte-identical files are both counted.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

__all__ = ["add_commands", "load_config", "run_estimate_from_state"]

_BLOCK_SIZE = 1 << 16


def add_commands(subparsers) -> None:
    from .cli import seed_argument

    privatize = subparsers.add_parser(
        "privatize",
        help="randomize a column of a CSV/Parquet file into a report file (client side, in batch)",
        description="Randomize each value of COLUMN with the protocol of --config and write one report per "
        "value to --out (Parquet for .parquet/.pq, else the dpdist binary record format). Without --seed "
        "the randomness comes from the OS-keyed CSPRNG. With --seed, block b of --block-size values draws "
        "from SeedSequence(--seed).spawn(...)[b], so a run is reproducible (research only: a seeded run is "
        "not secret, never publish its reports about people).",
    )
    privatize.add_argument("data", metavar="DATA", help="a .csv, .tsv or .parquet file")
    privatize.add_argument("--config", required=True, help="protocol config: a JSON file or an inline JSON object")
    privatize.add_argument("--column", required=True, help="column holding the users' values")
    privatize.add_argument("--out", required=True, help="report file to write (replaced atomically)")
    privatize.add_argument(
        "--seed", type=seed_argument, default=None, help="root seed for reproducible research (default: the CSPRNG)"
    )
    privatize.add_argument("--secure", action="store_true", help="refuse --seed: always the OS-keyed CSPRNG")
    privatize.add_argument("--block-size", type=int, default=_BLOCK_SIZE, help=f"values per block ({_BLOCK_SIZE})")
    privatize.add_argument("--no-progress", action="store_true", help="no progress bar")
    privatize.set_defaults(handler=_run_privatize)

    aggregate = subparsers.add_parser(
        "aggregate",
        help="add report files to a durable aggregator state (incremental, no file counted twice)",
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


def load_config(text: str, option: str = "--config"):
    """A protocol from a JSON file path or an inline JSON object."""
    from . import local
    from .errors import InvalidParameterError

    source = text
    if not text.lstrip().startswith("{"):
        try:
            text = Path(text).read_text()
        except OSError as error:
            raise InvalidParameterError(
                f"The '{option}' option must be a JSON file or an inline JSON object. Got {source!r} ({error.strerror})."
            ) from None
    try:
        config = json.loads(text)
    except ValueError as error:
        raise InvalidParameterError(f"The '{option}' option {source!r} is not valid JSON ({error}).") from None
    return local.from_config(config)


def _progress(total, unit, disable):
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, unit_scale=True, disable=True if disable else None, file=sys.stderr)


# ---------------------------------------------------------------------- privatize
def _run_privatize(args) -> int:
    from ._io._blocks import rechunk
    from ._rng import block_generator, root_seed_sequence
    from ._io._columns import count_rows, iter_column
    from .errors import InvalidParameterError
    from .io import ReportWriter

    protocol = load_config(args.config)
    if args.block_size < 1:
        raise InvalidParameterError(f"The '--block-size' option must be an int >= 1. Got {args.block_size} instead.")
    if args.secure and args.seed is not None:
        raise InvalidParameterError("The '--seed' option cannot be used with '--secure' (the CSPRNG takes no seed).")
    # no seed: every block draws from its own CSPRNG stream (check_rng(None)); a seed: reproducible blocks
    root = None if args.seed is None else root_seed_sequence(args.seed)
    missing = 0

    def values():
        nonlocal missing
        for chunk, n_missing in iter_column(args.data, args.column):
            missing += n_missing
            yield _as_protocol_values(protocol, chunk)

    with _progress(count_rows(args.data), "value", args.no_progress) as bar, ReportWriter(args.out, protocol) as writer:
        for index, block in enumerate(rechunk(values(), args.block_size)):
            rng = None if root is None else block_generator(root, index)
            writer.write(protocol.privatize(block, rng=rng, secure=args.secure))
            bar.update(block.size)
    note = f"; {missing} missing cell(s) skipped" if missing else ""
    print(f"privatize: {writer.n_written} report(s) of {protocol.name} written to {args.out}{note}.")
    return 0


def _as_protocol_values(protocol, chunk: np.ndarray) -> np.ndarray:
    """Integral floats (e.g. a CSV column with gaps) become items for a categorical protocol."""
    if protocol.tags.kind == "frequency" and np.issubdtype(chunk.dtype, np.floating):
        if np.all(np.isfinite(chunk)) and np.all(chunk == np.floor(chunk)):
            return chunk.astype(np.int64)
    return chunk


# ---------------------------------------------------------------------- aggregate
def _run_aggregate(args) -> int:
    from ._io._atomic import exclusive_lock
    from .errors import IncompatibleStateError, InvalidParameterError
    from .io import SavedState, count_reports, file_identities, iter_report_batches, load_state, protocol_of_file, record_ingested

    state_path = Path(args.state)
    for name in args.files:
        if not Path(name).is_file():
            raise InvalidParameterError(f"Each FILE of 'dpdist aggregate' must be an existing file. Got {name!r}.")
    with exclusive_lock(state_path, "dpdist aggregate"):
        _remove_stale_temporary_files(state_path)
        protocol = load_config(args.config) if args.config else None
        if state_path.exists():
            saved = load_state(state_path, protocol)
        else:
            protocol = protocol or protocol_of_file(args.files[0])
            saved = SavedState(protocol.aggregator(), {})
        protocol = saved.aggregator.protocol

        todo, seen = [], {}
        for name in args.files:
            keys = file_identities(name)
            earlier = next((saved.ingested.get(key) or seen.get(key) for key in keys if key in saved.ingested or key in seen), None)
            if earlier is not None:
                if not args.skip_ingested:
                    raise IncompatibleStateError(
                        f"The report file {name!r} was already ingested into {str(state_path)!r} as "
                        f"{earlier['file']!r} (same file id, or same content for files without one); refusing "
                        "to count its reports twice (nothing was added). Use --skip-ingested to skip such files."
                    )
                print(f"aggregate: skipping {name} (already ingested as {earlier['file']}).", file=sys.stderr)
                continue
            seen.update({key: {"file": name} for key in keys})
            todo.append((name, keys))

        refused = 0
        total = sum(count_reports(name) for name, _ in todo)
        with _progress(total, "report", args.no_progress) as bar:
            for name, keys in todo:
                added = protocol.aggregator()
                for batch in iter_report_batches(name, protocol):
                    added.add_batch(batch)
                    bar.update(batch.n_read)
                rejected = f", rejected {_plain_counts(added.rejected)}" if added.rejected else ""
                if (added.n == 0 or "other_config" in added.rejected) and not args.allow_rejected:
                    refused += 1
                    print(
                        f"aggregate: {name}: not added: {added.n} valid report(s){rejected} "
                        "(use --allow-rejected to count such a file's valid reports anyway).",
                        file=sys.stderr,
                    )
                    continue
                saved.aggregator.merge(added)
                record_ingested(state_path, saved, keys, {"file": str(name), "n": added.n, "rejected": dict(added.rejected)})
                print(f"aggregate: {name}: accepted {added.n} report(s){rejected}.", file=sys.stderr)
    aggregator = saved.aggregator
    print(
        f"aggregate: state {state_path} holds {aggregator.n} report(s) of {protocol.name} from "
        f"{len({id(record) for record in saved.ingested.values()})} file(s); rejected {_plain_counts(aggregator.rejected) or 0}."
    )
    return 3 if refused else 0


def _plain_counts(counts: dict) -> dict:
    return {str(reason): int(count) for reason, count in counts.items()}


def _remove_stale_temporary_files(state_path: Path) -> None:
    """Temp files of a killed run (``.state.bin.*.tmp``); safe to delete while we hold the lock."""
    directory = state_path.parent if str(state_path.parent) else Path(".")
    for stale in directory.glob(f".{state_path.name}.*.tmp"):
        stale.unlink(missing_ok=True)


# ---------------------------------------------------------------------- estimate --state
def run_estimate_from_state(args) -> int:
    """``dpdist estimate --state STATE [--out CSV] [--plot PNG]``: estimate from a saved aggregator."""
    from .io import load_state

    saved = load_state(args.state)
    protocol, aggregator = saved.aggregator.protocol, saved.aggregator
    options = {"postprocess": args.postprocess} if protocol.tags.kind == "frequency" else {}
    estimate = protocol.estimate(aggregator, **options)
    print(f"{protocol.name} (epsilon={protocol.epsilon:g}): estimate from {aggregator.n} report(s) in {args.state}"
          + (f"; rejected {aggregator.rejected}" if aggregator.rejected else ""))
    # any estimate meets the result protocol (dpdist.estimates.Estimate): no switch on its type
    if estimate.guarantee is not None:
        print(f"  guarantee  {estimate.guarantee.describe()}")
    for name, value in estimate.summary().items():
        print(f"  {name:<10} {value:.6g}")
    if args.out:
        _write_table(estimate.table(), args.out)
        print(f"  table  {args.out}")
    if args.plot:
        _plot_estimate(estimate, f"{protocol.name}, eps={protocol.epsilon:g}, n={estimate.n}", args.plot)
        print(f"  plot   {args.plot}")
    return 0


def _write_table(columns: dict, path) -> None:
    """Named columns as CSV: integers as such, floats with all 17 significant digits."""
    formats = ["%d" if np.issubdtype(np.asarray(c).dtype, np.integer) else "%.17g" for c in columns.values()]
    table = np.column_stack([np.asarray(c) for c in columns.values()])
    np.savetxt(path, table, delimiter=",", header=",".join(columns), comments="", fmt=formats)


def _plot_estimate(estimate, label: str, path, *, truth=None, xlabel: str | None = None) -> None:
    """Plot a Distribution (over the histogram of ``truth`` if given) or a FrequencyEstimate to ``path``."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from .errors import InvalidParameterError
    from .estimates import Distribution, FrequencyEstimate

    fig, ax = plt.subplots(figsize=(6, 3.5))
    if isinstance(estimate, Distribution):
        if truth is not None:
            heights, edges = np.histogram(truth, bins=estimate.edges, density=True)
            ax.stairs(heights, edges, label="true (for comparison)", color="0.6")
        estimate.plot(ax=ax, label=label)
        if xlabel:
            ax.set_xlabel(xlabel)
    elif isinstance(estimate, FrequencyEstimate):
        items = np.arange(estimate.domain_size)
        ax.bar(items, estimate.frequencies, yerr=1.96 * estimate.standard_error, label=label, color="C0", ecolor="0.4")
        ax.set_xlabel("item")
        ax.set_ylabel("frequency")
        ax.legend()
    else:
        plt.close(fig)
        raise InvalidParameterError(
            f"The '--plot' option needs a frequency or distribution estimate; got {type(estimate).__name__}."
        )
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
