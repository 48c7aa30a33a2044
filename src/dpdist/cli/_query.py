"""``dpdist query``: one SELECT over CSV and Parquet files (dpdist.sql), its plan, and its table as CSV."""

from __future__ import annotations

import csv
import functools
import io
import json
import sys
import warnings

from .._io._pyarrow import require_pyarrow
from .._io._atomic import atomic_writer
from ..errors import ContributionBoundWarning, InvalidParameterError
from ._arguments import OUT, Needs, state_rules
from ._commands import HELP


def add_commands(subparsers) -> None:
    query = subparsers.add_parser(
        "query",
        help=HELP["query"],
        description="Release the statistics of one SELECT (COUNT, SUM, AVG, VARIANCE, STDDEV, MIN, MAX, QUANTILES, "
        "PERCENTILE_CONT, MEDIAN, HISTOGRAM, CDF, per GROUP BY key or expression; COUNT(DISTINCT person) with "
        "--privacy-id person) of CSV or Parquet files under one budget split in equal shares (dpdist.sql). Prints the "
        "plan, the guarantee and one CSV row per group with each cell's interval. WHERE filters the rows first; JOIN "
        "reads public tables (--public-table) or other tables of the same persons on --privacy-id; HAVING keeps the "
        "groups whose released values meet it; AS names the columns. ORDER BY, window functions and subqueries other "
        "than a per-person one are refused. Randomness comes from the OS CSPRNG unless --seed is given.",
    )
    query.add_argument("statement", metavar="SQL", help="one SELECT ... FROM NAME [GROUP BY ...]")
    query.add_argument("--table", action="append", required=True, metavar="NAME=FILE",
                       help="a table of the statement: its name and its .csv/.tsv or .parquet file (repeatable)")
    query.add_argument("--public-table", action="append", default=[], metavar="NAME=FILE",
                       help="a public table the statement joins to (covered by no guarantee; repeatable)")
    query.add_argument("--epsilon", required=True, type=float, help="the whole query's budget (add/remove neighbours)")
    query.add_argument("--bounds", action="append", default=[], metavar="COLUMN=LO,HI",
                       help="the public bounds of an aggregated column (repeatable; values outside are clipped)")
    query.add_argument("--keys", default=None, metavar="COLUMN=K1,K2,...",
                       help="the public keys of the GROUP BY column (compared as text); without it the groups are "
                       "chosen privately from a tenth of --epsilon")
    query.add_argument("--privacy-id", default=None, metavar="COLUMN",
                       help="the column of the persons' ids: the guarantee is per person")
    query.add_argument("--max-contributions", type=int, default=None, metavar="K",
                       help="with --privacy-id: the rows kept per person and group")
    query.add_argument("--max-groups", type=int, default=None, metavar="M",
                       help="with --privacy-id: the groups kept per person (default 1)")
    query.add_argument("--min-persons", type=int, default=None, metavar="N",
                       help="withhold the groups whose noisy count of persons is below N (a tenth of --epsilon)")
    query.add_argument("--explain", type=int, default=None, metavar="N",
                       help="print the plan with each statistic's expected error at N rows per group; no value is "
                       "read (a file is opened only where WHERE, a JOIN, an expression or a subquery needs its columns' "
                       "types)")
    query.add_argument("--out", default=None, help="also write the table (Parquet for .parquet/.pq, else CSV)")
    query.add_argument("--seed", type=int, default=None, help="seed for reproducible research (not for publishing)")
    query.set_defaults(handler=_run_query)
    persons = "the column of the persons' ids and the rows kept per person go together"
    state_rules(query, {"--out": OUT}, (Needs("--privacy-id", "--max-contributions", persons),
                                        Needs("--max-contributions", "--privacy-id", persons),
                                        Needs("--max-groups", "--privacy-id", persons)))


def _pairs(option: str, given: list[str]) -> dict[str, str]:
    found = {}
    for text in given:
        name, sep, value = text.partition("=")
        if not sep or not name or not value:
            raise InvalidParameterError(f"The {option} option takes NAME=VALUE. Got {text!r} instead.")
        found[name] = value
    return found


def _bounds(given: list[str]) -> dict[str, tuple[float, float]]:
    bounds = {}
    for column, text in _pairs("--bounds", given).items():
        try:
            low, high = (float(part) for part in text.split(","))
        except ValueError:
            raise InvalidParameterError(f"The --bounds option takes COLUMN=LO,HI (two numbers). Got {column}={text!r} "
                                        "instead.") from None
        bounds[column] = (low, high)
    return bounds


def _read(path: str, as_text: list[str]):
    """The file as a PyArrow table, the key columns as text (keys on the command line are text)."""
    pyarrow = require_pyarrow("dpdist query's files")
    from pyarrow import csv as arrow_csv  # lazy: optional extra (pyarrow)

    try:
        if path.lower().endswith((".parquet", ".pq")):
            table = pyarrow.parquet.read_table(path)
        else:
            options = arrow_csv.ParseOptions(delimiter="\t" if path.lower().endswith(".tsv") else ",")
            table = arrow_csv.read_csv(path, parse_options=options)
    except OSError as error:  # the file itself (missing, unreadable): its message names the path, not its rows
        raise InvalidParameterError(f"The --table file {path!r} could not be read: "
                                    f"{(str(error).splitlines() or [''])[0][:200]}") from None
    except pyarrow.ArrowException as error:  # its content: a parser's message may quote a row of the table
        raise InvalidParameterError(f"The --table file {path!r} could not be read as "
                                    f"{'Parquet' if path.lower().endswith(('.parquet', '.pq')) else 'CSV'}: pyarrow's "
                                    f"{type(error).__name__} (its message, which may quote the file's rows, is not "
                                    "printed)") from None
    for column in as_text:
        if column in table.column_names:
            index = table.column_names.index(column)
            table = table.set_column(index, column, pyarrow.compute.cast(table.column(column), pyarrow.string()))
    return table


def _run_query(args) -> int:
    from ..queries import sql  # lazy: loads scipy (0.4-2 s)

    keys = None
    if args.keys is not None:
        column, values = next(iter(_pairs("--keys", [args.keys]).items()))
        keys = {column: values.split(",")}
    tables, public = ({name: functools.partial(_read, path, list(keys or {})) for name, path in
                       _pairs(option, given).items()} for option, given in (("--table", args.table),
                                                                            ("--public-table", args.public_table)))
    built = sql(args.statement, tables, epsilon=args.epsilon, bounds=_bounds(args.bounds), keys=keys,
                privacy_id=args.privacy_id, max_contributions=args.max_contributions, max_groups=args.max_groups,
                rng=args.seed, public_tables=public, min_persons=args.min_persons)  # a file is read where it is needed
    if args.explain is not None:
        print(built.explain(n=args.explain))
        return 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ContributionBoundWarning)
        result = built.release()
    columns = result.columns()
    print(result.describe())
    if args.seed is not None:
        print("note: seeded (--seed): reproducible research only, NOT for publication")
    for warned in caught:
        print(_left_out(warned.message), file=sys.stderr)
    _write_csv(sys.stdout, columns)
    if args.out is not None:
        _write_out(args.out, columns)
    return 0


def _left_out(warning) -> str:
    """The rows bounding left out, per statistic, and the options that would keep them: for you, who ran the command
    on the data (on stderr, in no release and not in the table printed)."""
    details = getattr(warning, "details", {})
    if not details:
        return "note for the holder of the data: rows beyond the contribution bounds were left out"
    each = ", ".join(f"{label} {count:,}" for label, count in details["statistics"].items() if count is not None)
    keeps = " ".join(f"--{name.replace('_', '-')} {value}" for name, value in details["keeps"].items() if value)
    return (f"note for the holder of the data (in no release): bounding each person's rows left out {details['rows']:,} "
            f"row(s); per statistic: {each} (persons(): (person, group) pairs)"
            + (f"; {keeps} would keep every row" if keeps else ""))


def _write_csv(stream, columns: dict[str, list]) -> None:
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(columns)
    for row in zip(*columns.values()):
        writer.writerow([json.dumps(value) if not isinstance(value, str) else value for value in row])


def _write_out(path: str, columns: dict[str, list]) -> None:
    if path.lower().endswith((".parquet", ".pq")):
        pyarrow = require_pyarrow("dpdist query --out .parquet")
        buffer = io.BytesIO()
        pyarrow.parquet.write_table(pyarrow.table(columns), buffer)
        data = buffer.getvalue()
    else:
        text = io.StringIO()
        _write_csv(text, columns)
        data = text.getvalue().encode()
    with atomic_writer(path) as handle:
        handle.write(data)
