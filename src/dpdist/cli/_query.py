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
from ..errors import ContributionBoundWarning, InvalidParameterError, MissingValuesWarning
from .._validation import Text
from ._arguments import OUT, Each, KeyValue, Needs, Numbers, seed_argument, state_rules
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
                       help="the public keys of the GROUP BY column (compared as text: a CSV's key column is read as "
                       "text); without it the groups are chosen privately from a tenth of --epsilon")
    query.add_argument("--numbers", action="append", default=[], metavar="COLUMN,...",
                       help="columns of a CSV file read as numbers besides those given --bounds (every other CSV "
                       "column is text; a cell that is no number is a missing value); repeatable")
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
                       "read (a file's header or schema only, where WHERE, a JOIN, an expression or a subquery needs "
                       "its columns' types)")
    query.add_argument("--out", default=None, help="also write the table (Parquet for .parquet/.pq, else CSV)")
    query.add_argument("--no-holder-notes", action="store_true",
                       help="for a caller who is not the holder of the data: no note of the rows left out (their "
                       "numbers and presence are statistics of the data, without noise) and no other warning")
    query.add_argument("--seed", type=seed_argument, default=None,
                       help="seed for reproducible research (not for publishing)")
    query.set_defaults(handler=_run_query)
    persons = "the column of the persons' ids and the rows kept per person go together"
    state_rules(query, {
        "--out": OUT,
        "--table": Each(KeyValue(Text(), "NAME=FILE"), keys=True),
        "--public-table": Each(KeyValue(Text(), "NAME=FILE"), keys=True),
        "--bounds": Each(KeyValue(Numbers("two numbers LO,HI", count=2), "COLUMN=LO,HI (two numbers)"), keys=True),
        "--keys": KeyValue(Text(), "COLUMN=K1,K2,..."),
    }, (Needs("--privacy-id", "--max-contributions", persons), Needs("--max-contributions", "--privacy-id", persons),
        Needs("--max-groups", "--privacy-id", persons)))


#: a cell of a number column that is a number: finite decimal digits (anything else is a missing value)
_NUMBER = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$"


def _read(path: str, text: list[str], numbers: list[str], rows: bool = True):
    """The file as a PyArrow table whose columns' types are fixed by the options, never by the cells: a CSV column is
    text, or a number where ``numbers`` names it (a cell that is no number is missing), a key column text; a
    Parquet column of the file's own type, a key column text.  An empty cell is missing.  Without ``rows``, the
    columns and their types alone (``--explain`` reads no value)."""
    pyarrow = require_pyarrow("dpdist query's files")
    import pyarrow.compute as compute  # lazy: optional extra (pyarrow)

    parquet = path.lower().endswith((".parquet", ".pq"))
    failed = _file(path, parquet, rows, pyarrow)
    if isinstance(failed, str):  # raised here, outside the except: pyarrow's message may quote a row of the file
        raise InvalidParameterError(failed)
    table = failed
    repeated = sorted({name for name in table.column_names if table.column_names.count(name) > 1})
    if repeated:
        raise InvalidParameterError(f"The --table file {path!r} has several columns named {repeated}: name each column "
                                    "once.")
    for index, name in enumerate(table.column_names):
        column = table.column(index)
        if name in text or (not parquet and name not in numbers):
            column = column if pyarrow.types.is_string(column.type) else compute.cast(column, pyarrow.string())
        elif not parquet:  # a number where the cell is one, else missing
            # pyarrow.compute makes its functions at import and its stubs lack them: pyright cannot see them
            # the missing cells as nulls() (a null made from Python's None, by pyarrow.scalar or if_else, imports pandas)
            number = compute.match_substring_regex(column, _NUMBER)  # pyright: ignore[reportAttributeAccessIssue]
            column = compute.cast(compute.if_else(  # pyright: ignore[reportAttributeAccessIssue]  (the same)
                number, column, pyarrow.nulls(len(column), pyarrow.string())), pyarrow.float64())
        table = table.set_column(index, name, column)
    return table


def _file(path: str, parquet: bool, rows: bool, pyarrow):
    """The file read (CSV cells all as text), or the one line saying why it could not be."""
    from pyarrow import csv as arrow_csv  # lazy: optional extra (pyarrow)

    try:
        if parquet:
            return pyarrow.parquet.read_table(path) if rows else pyarrow.parquet.read_schema(path).empty_table()
        delimiter = "\t" if path.lower().endswith(".tsv") else ","
        with open(path, newline="", encoding="utf-8-sig") as handle:  # the header alone: no row is read for it
            names = next(csv.reader(handle, delimiter=delimiter), [])
        if not rows:
            return pyarrow.Table.from_arrays([pyarrow.array([], pyarrow.string())] * len(names), names=names)
        typed = arrow_csv.ConvertOptions(column_types={name: pyarrow.string() for name in names}, null_values=[""],
                                         strings_can_be_null=True)
        return arrow_csv.read_csv(path, parse_options=arrow_csv.ParseOptions(delimiter=delimiter),
                                  read_options=arrow_csv.ReadOptions(column_names=names, skip_rows=1),
                                  convert_options=typed)
    except OSError as error:  # the file itself (missing, unreadable): its message names the path, not its rows
        return f"The --table file {path!r} could not be read: {(str(error).splitlines() or [''])[0][:200]}"
    except pyarrow.ArrowException as error:  # its content: a parser's message may quote a row of the table
        return (f"The --table file {path!r} could not be read as {'Parquet' if parquet else 'CSV'}: pyarrow's "
                f"{type(error).__name__} (its message, which may quote the file's rows, is not printed)")


def _run_query(args) -> int:
    from ..queries import sql  # lazy: loads scipy (0.4-2 s)

    keys = None if args.keys is None else {args.keys[0]: args.keys[1].split(",")}  # (COLUMN, text): the option table
    bounds = dict(args.bounds)
    numbers = [*bounds, *(name for given in args.numbers for name in given.split(",") if name)]
    tables, public = ({name: functools.partial(_read, path, list(keys or {}), numbers, args.explain is None)
                       for name, path in given} for given in (args.table, args.public_table))
    try:
        built = sql(args.statement, tables, epsilon=args.epsilon, bounds=bounds, keys=keys,
                    privacy_id=args.privacy_id, max_contributions=args.max_contributions, max_groups=args.max_groups,
                    rng=args.seed, public_tables=public, min_persons=args.min_persons,
                    holder_notes=not args.no_holder_notes)  # a file read where needed
    except InvalidParameterError as error:  # a refusal of the statement's types (public): said with what a CSV is
        if " is a string and " not in str(error):
            raise
        raise InvalidParameterError(f"{error} (dpdist query reads a CSV column as text: name the columns of numbers "
                                    "with --numbers, or give them --bounds)") from None
    if args.explain is not None:
        print(built.explain(n=args.explain))
        return 0
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ContributionBoundWarning)
        warnings.simplefilter("always", MissingValuesWarning)
        result = built.release()
    columns = result.columns()
    print(result.describe())
    if args.seed is not None:
        print("note: seeded (--seed): reproducible research only, NOT for publication")
    for warned in caught:
        print(_left_out(warned.message), file=sys.stderr)  # any other warning: its own line
    _write_csv(sys.stdout, columns)
    if args.out is not None:
        _write_out(args.out, columns)
    return 0


def _left_out(warning) -> str:
    """The rows bounding left out, per statistic, and the options that would keep them: for you, who ran the command
    on the data (on stderr, in no release and not in the table printed)."""
    details = getattr(warning, "details", {})
    if isinstance(warning, MissingValuesWarning):
        each = "".join(f", {label} {count:,}" for label, count in details.get("statistics", {}).items())
        return (f"note for the holder of the data (in no release): rows left out for a missing id or key: "
                f"{details.get('ids_or_keys', 0):,}; rows of a missing value, per statistic{each or ': none'}")
    if not isinstance(warning, ContributionBoundWarning):
        return f"warning: {warning}"
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
