"""``dpdist release``: a central-DP CDF and quantiles of one column, with the guarantee printed."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import sys
import warnings
from dataclasses import replace
from typing import Iterator

import numpy as np

from .. import plotting
from .._guarantee import PrivacyGuarantee
from .._io._pyarrow import require_pyarrow
from ..accounting import tradeoff
from .._io._atomic import atomic_writer
from .._missing import missing_policy
from ..errors import ContributionBoundWarning, DPDistError, InvalidParameterError, MissingValuesWarning
from .._validation import Described, Interval, OneOf, Options
from ._arguments import (BOUNDS, OUT, PLOT, SEEDED, IntegerText, Needs, NeedsValue, Numbers, NumberText,
                         randomness_of_release, seed_argument, state_rules)
from ._budget import add_budget_file_argument, open_budget
from ._json_text import dumps_indented
from ._commands import HELP


def add_commands(subparsers) -> None:
    release = subparsers.add_parser(
        "release",
        help=HELP["release"],
        description="Release a private CDF of COLUMN of a CSV or Parquet file with the tree CDF "
        "(a flat histogram for small epsilon*n), and the requested quantiles with their 95% intervals. "
        "Randomness comes from the OS CSPRNG unless --seed is given (reproducible research only: "
        "never publish data about people from a seeded release). Values outside --bounds (infinities "
        "included) are clipped; empty cells are missing values, refused unless --missing says what they are; a column "
        "with no values is released too.",
    )
    release.add_argument("file", metavar="FILE", help="a .csv/.tsv or .parquet file")
    release.add_argument("--column", required=True, help="the numeric column to release")
    release.add_argument("--epsilon", required=True, type=float, help="privacy budget (add/remove neighbours)")
    release.add_argument("--bounds", required=True, help="public bounds LO,HI of the column (values outside are clipped)")
    release.add_argument(
        "--quantiles", default="0.1,0.25,0.5,0.75,0.9", help="probabilities to release (default 0.1,0.25,0.5,0.75,0.9)"
    )
    release.add_argument("--method", choices=("tree", "aq"), default="tree", help="quantile method (default tree)")
    release.add_argument(
        "--interval-share", default=None, metavar="S",
        help="--method aq: spend this share of --epsilon, in (0, 1), on 95%% intervals of the quantiles "
        "(default: none, the whole budget on the quantiles; the tree's intervals cost nothing)",
    )
    release.add_argument(
        "--missing", default="refuse", metavar="refuse|drop|VALUE",
        help="empty cells (missing values): 'refuse' (the default: the release stops before anything is charged or "
        "released), 'drop' (those records left out: add/remove neighbours keep the guarantee) or a number (each "
        "counted as it); the release's notes state which, and how many is never printed",
    )
    release.add_argument(
        "--privacy-id", default=None, metavar="COLUMN",
        help="the column saying whose row each value is (a customer, a patient): each person's rows are bounded to "
        "--max-contributions (a uniformly random choice) and the guarantee is per person, not per row",
    )
    release.add_argument(
        "--max-contributions", default=None, metavar="K|auto",
        help="with --privacy-id: the rows kept per person, an int >= 1, or 'auto' (chosen privately from 10%% of "
        "--epsilon: the 0.9-quantile of the persons' numbers of rows)",
    )
    release.add_argument("--plot", default=None, help="write the released CDF and quantiles to this PNG")
    release.add_argument(
        "--json", action="store_true",
        help="print the release as JSON: the guarantee, the quantiles with their intervals and the CDF with its "
        "95%% pointwise and simultaneous bands",
    )
    release.add_argument(
        "--out", default=None,
        help="also write the release as a table (Parquet for .parquet/.pq, else CSV): one row per CDF edge "
        "(kind=cdf) and per quantile (kind=quantile), with the guarantee",
    )
    release.add_argument(
        "--seed", type=seed_argument, default=None, help="seed for reproducible research (not for publishing)"
    )
    add_budget_file_argument(release)
    release.set_defaults(handler=_run_release)
    # --max-contributions: dpdist.central's MAX_CONTRIBUTIONS (not imported here: dpdist.central loads scipy)
    persons = "the column of the persons' ids and the rows kept per person go together"
    state_rules(release, {
        "--bounds": BOUNDS,
        "--out": OUT,
        "--quantiles": Numbers("comma-separated probabilities strictly between 0 and 1, strictly increasing, without "
                               "duplicates (e.g. 0.1,0.5,0.9)", item=Interval(0.0, 1.0), increasing=True),
        "--interval-share": NumberText(Described(Interval(0.0, 1.0), "a number strictly between 0 and 1 (the share "
                                                 "of --epsilon spent on intervals)")),
        "--max-contributions": OneOf((Options(("auto",)), IntegerText(1, 2**31 - 1)),
                                     "an int >= 1 (rows kept per person) or 'auto'"),
        "--plot": PLOT,
    }, (
        NeedsValue("--interval-share", "--method", ("aq",), "aq", "the tree's intervals cost nothing"),
        Needs("--privacy-id", "--max-contributions", persons),
        Needs("--max-contributions", "--privacy-id", persons),
    ))


def _run_release(args) -> int:
    from .. import central  # lazy: loads scipy (0.4-2 s)
    from ..datasets.files import read_column  # lazy: loads scipy (0.4-2 s)


    # --bounds, --quantiles, --interval-share (with --method aq), --max-contributions (with --privacy-id) and --plot
    # are checked by the option table, before the release: a typo never spends budget
    bounds = args.bounds
    q = list(args.quantiles)
    missing = _parse_missing(args.missing)
    seed = args.seed
    unit = _parse_unit(args)
    if args.out is not None:
        _check_out(args.out)
    session, planned = _check_budget(args, bounds, q, unit)  # refused here, before the data are read
    try:
        # infinities are clipped into --bounds like any value outside them, and a column with no
        # values is released too (noise alone): whether a release succeeds must not depend on the data
        values = read_column(args.file, args.column, infinite="keep", empty="keep")
    except DPDistError as error:
        raise InvalidParameterError(f"--column {args.column!r} of {args.file!r}: {error}") from None
    _refuse_empty_cells(args, values, missing)  # before the charge
    unit = _read_ids(args, unit, values.size)  # before the charge: an id missing is refused by name
    statement = None if session is None or planned is None else session.charge(planned, f"release {args.file}:{args.column} ({args.method})")
    tree = se = band = None
    if args.method == "tree":  # one tree release; the quantiles, the bands and the plot are post-processing of it
        from ..central.many_quantiles import (
            _tree_quantiles,  # lazy: loads scipy (0.4-2 s)
        )

        with _counted(args, missing):
            tree = central.TreeHistogram.release(values, args.epsilon, bounds, rng=seed, clip=True, missing=missing,
                                                 **unit)
        se = tree.cdf_standard_error()  # the noise's spread (post-processing): the intervals and the plot's band
        band = tree.cdf_band(0.95, standard_error=se)
        release = _tree_quantiles(tree, np.asarray(q, dtype=np.float64), 0.95, se)
    else:  # AQ reads the data itself: no tree is released (nor computed), so epsilon is spent once
        with _counted(args, missing):
            release = central.quantiles(values, q, epsilon=args.epsilon, bounds=bounds, method="aq", rng=seed,
                                        clip=True, interval_share=args.interval_share, missing=missing, **unit)
    if statement is not None:
        from ..budget import with_statement  # lazy: loads scipy (0.4-2 s)

        release = with_statement(release, statement)
    assert release.guarantee is not None, "a release states its guarantee"
    randomness = randomness_of_release(seed)
    account = getattr(release.guarantee, "budget", None)  # a budget file's account (SessionGuarantee.budget)
    # the account ends the line, its assumptions last: the randomness is said of the release, before it
    guarantee = (f"{release.guarantee.describe()}, {randomness}" if account is None else
                 f"{PrivacyGuarantee.describe(release.guarantee)}, {randomness}; {account.account_line()}")
    cdf = None if tree is None else tree.leaf_cdf()[1]  # at the leaf edges, where the band is
    if args.out is not None:
        _write_release(args.out, _release_table(release, cdf, band, guarantee), release, guarantee)
        print(f"release: table written to {args.out}", file=sys.stderr)
    attacker = tradeoff(PrivacyGuarantee.from_dict(release.guarantee.to_dict()))  # the release's own guarantee
    if args.json:
        document = {"guarantee": guarantee, "tradeoff": attacker.to_dict(), "quantiles": release.as_dict(),
                    "cdf": _cdf_json(cdf, band)}
        if cdf is None:
            document["cdf_note"] = f"method {release.method} releases the quantiles only (no CDF)"
        print(dumps_indented(document))  # json.dumps(document, indent=2), the CDF's million numbers fast
    else:
        print(f"guarantee: {guarantee}")
        print(f"what an attacker can learn: {attacker.describe()}")
        print(f"method: {release.method}; values clipped to [{bounds[0]:g}, {bounds[1]:g}]")
        for note in release.notes():
            print(f"note: {note}")
        print("q\tvalue\t95% interval")
        for index, probability in enumerate(release.q):
            interval = (
                f"[{release.low[index]:.6g}, {release.high[index]:.6g}]"
                if release.low is not None and release.high is not None else "(none: --interval-share buys them)"
            )
            print(f"{probability:g}\t{release.values[index]:.6g}\t{interval}")
        if band is not None:
            print(f"cdf: {band.edges.size} edges with 95% pointwise and simultaneous bands (--json or --out for the values)")
    if args.plot:
        _plot(tree, band, release, args, bounds)
    return 0


def _parse_unit(args) -> dict:
    """``--privacy-id`` and ``--max-contributions`` as the releases' ``privacy_id`` (the column's name, for now) and
    ``max_contributions`` (both or neither, an int >= 1 or 'auto': the option table)."""
    if args.privacy_id is None:
        return {}
    return {"privacy_id": args.privacy_id, "max_contributions": args.max_contributions}


def _read_ids(args, unit: dict, rows: int) -> dict:
    """``unit`` with the ids of ``--privacy-id`` read (one per row of the values) and checked (a missing id refused,
    how many not printed)."""
    if not unit:
        return unit
    from ..central._contributions import person_codes  # lazy: loads scipy (0.4-2 s)
    from ..datasets.files import read_ids  # lazy: loads scipy (0.4-2 s)

    try:
        ids = read_ids(args.file, args.privacy_id)
        person_codes("dpdist release", ids, rows)
    except DPDistError as error:
        raise InvalidParameterError(f"--privacy-id {args.privacy_id!r} of {args.file!r}: {error}") from None
    return {**unit, "privacy_id": ids}


def _parse_missing(text: str):
    """``--missing``: ``"refuse"``, ``"drop"`` or a finite number, refused in one line naming the option."""
    try:
        value: str | float = text if text in ("refuse", "drop") else float(text)
    except ValueError:
        value = text
    policy = missing_policy("dpdist release", value, option="--missing")
    return policy.value if policy.how == "value" else policy.how


def _refuse_empty_cells(args, values: np.ndarray, missing) -> None:
    """With ``--missing refuse`` (the default) a column with empty cells stops here, before any charge: the one
    refusal that depends on the data, said to the curator who runs the command (how many is not printed)."""
    if missing == "refuse" and np.isnan(values).any():
        raise InvalidParameterError(
            f"--column {args.column!r} of {args.file!r} has empty cells (missing values; how many is not printed: a "
            "statistic of the private data). Give --missing drop to leave those records out, or --missing VALUE to "
            "count each as VALUE (the release states which). Nothing was charged or released."
        )


@contextlib.contextmanager
def _counted(args, missing) -> Iterator[None]:
    """Around the release: its MissingValuesWarning (the count, for the curator) is not printed (how many is a
    statistic of the private data); the release's notes say what was done."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MissingValuesWarning)
        warnings.simplefilter("ignore", ContributionBoundWarning)  # the rows left out: a statistic of the data
        yield


def _check_budget(args, bounds, q, unit: dict):
    """The ``--budget-file`` session and what this release will charge it, refused now if it would overspend."""

    session = open_budget(args)
    if session is None:
        return None, None

    from .. import central  # lazy: loads scipy (0.4-2 s)
    from ..budget import planned_guarantee  # lazy: loads scipy (0.4-2 s)

    nothing = np.empty(0)
    unit = {**unit, "privacy_id": nothing} if unit else {}
    if args.method == "tree":
        planned = planned_guarantee(central.TreeHistogram.release, (nothing, args.epsilon, bounds), {"clip": True, **unit})
    else:
        planned = planned_guarantee(central.quantiles, (nothing, q), {"epsilon": args.epsilon, "bounds": bounds, "method": "aq",
                                                                       "interval_share": args.interval_share, **unit})
    session.check(planned, f"release {args.file}:{args.column} ({args.method})")
    return session, planned


def _cdf_json(cdf, band):
    """The released CDF at the leaf edges with its bands (``None`` without a tree)."""
    if cdf is None:
        return None
    return {
        "edges": band.edges.tolist(),
        "cdf": cdf.tolist(),
        "level": band.level,
        "lower": band.lower.tolist(),
        "upper": band.upper.tolist(),
        "simultaneous_lower": band.simultaneous_lower.tolist(),
        "simultaneous_upper": band.simultaneous_upper.tolist(),
        "method": band.method,
        "covers": "the data's CDF at each edge (its share of values below the edge)",
    }


_RELEASE_COLUMNS = (
    "kind", "q", "x", "x_low", "x_high", "cdf", "cdf_low", "cdf_high", "cdf_simultaneous_low",
    "cdf_simultaneous_high", "level", "guarantee",
)


def _release_table(release, cdf, band, guarantee: str) -> dict:
    """One table: a row per CDF edge (``kind=cdf``: ``x``, ``cdf`` and its bands) and per quantile
    (``kind=quantile``: ``q``, the value ``x`` and its interval ``x_low``, ``x_high``); each column has
    one meaning, empty (NaN) where it does not apply, and every row carries the guarantee."""

    nan = float("nan")
    rows = []
    if cdf is not None:
        for i, x in enumerate(band.edges):
            rows.append(("cdf", nan, x, nan, nan, cdf[i], band.lower[i], band.upper[i], band.simultaneous_lower[i],
                         band.simultaneous_upper[i], band.level, guarantee))
    for i, probability in enumerate(release.q):
        low = nan if release.low is None else release.low[i]
        high = nan if release.high is None else release.high[i]
        rows.append(("quantile", probability, release.values[i], low, high, nan, nan, nan, nan, nan, release.level,
                     guarantee))
    columns = list(zip(*rows))
    return {
        name: (list(column) if name in ("kind", "guarantee") else np.asarray(column, dtype=np.float64))
        for name, column in zip(_RELEASE_COLUMNS, columns)
    }


def _is_parquet(path: str) -> bool:
    return path.lower().endswith((".parquet", ".pq"))


def _check_out(path: str) -> None:
    """Refuse a table format that cannot be written before any budget is spent."""
    if _is_parquet(path):
        require_pyarrow("Parquet release tables")


def _write_release(path: str, table: dict, release, guarantee: str) -> None:
    """Write ``table`` atomically: Parquet (the guarantee also in the schema's metadata) or CSV."""


    if _is_parquet(path):
        pa = require_pyarrow("Parquet release tables")
        metadata = {"dpdist.guarantee": guarantee,
                    "dpdist.guarantee_json": json.dumps(None if release.guarantee is None else release.guarantee.to_dict())}
        arrow = pa.table({name: pa.array(column) for name, column in table.items()}).replace_schema_metadata(metadata)
        with atomic_writer(path) as handle:
            pa.parquet.write_table(arrow, handle)
        return
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(table)
    for row in zip(*table.values()):
        writer.writerow(["" if isinstance(v, float) and v != v else (repr(float(v)) if not isinstance(v, str) else v)
                         for v in row])
    with atomic_writer(path) as handle:
        handle.write(text.getvalue().encode("utf-8"))


def _plot(tree, band, release, args, bounds) -> None:
    """The released CDF with its bands and the quantiles with their intervals, each drawn by its result."""


    plotting.headless()
    import matplotlib.pyplot as plt  # lazy: loads matplotlib (1-2 s)

    figure, axis = plt.subplots(figsize=(7, 4))
    if tree is not None:  # the band is post-processing of the release: no budget
        replace(tree.to_distribution(), band=band).plot(axis, kind="cdf", label="private CDF", color="C0")
    release.plot(axis, label="private quantiles")
    axis.set_xlim(*bounds)
    axis.set_ylim(0, 1)
    axis.set_xlabel(args.column)
    axis.set_ylabel("cumulative probability")
    axis.set_title(f"{args.column}: {release.method}, epsilon = {args.epsilon:g}")
    axis.legend(loc="lower right", fontsize=8)
    figure.tight_layout()
    if args.seed is not None:  # as the text, the JSON and the table say it (the image did not)
        figure.text(0.5, 0.995, SEEDED, ha="center", va="top", fontsize=7, color="firebrick")
    plotting.save_figure(figure, args.plot, dpi=120)
    print(f"release: plot written to {args.plot}", file=sys.stderr)
