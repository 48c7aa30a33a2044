"""``dpdist reproduce``, ``dpdist datasets`` and ``dpdist estimate`` (its ``--state`` mode is in ``dpdist.cli._deploy``)."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from .. import local, plotting, uncertainty
from .._io._columns import iter_column
from .._validation import Alphabet, ExistingFile, Integer, Options
from ..errors import InvalidParameterError, InvalidValueTypeError
from ..local._registry import registered_class
from ..local.frequency._oracle import FrequencyOracle
from ..local.frequency.auto import choose_protocol
from ..local.frequency.pem import PEM
from ..local.numerical._mean import MeanProtocol
from ..local.words import MAX_BITS, StringCodec, words_in_alphabet
from ..local.joint import JOINT_METHODS
from ._arguments import (
    BOUNDS,
    Each,
    NeedsAny,
    PLOT,
    REPLICATES,
    TARGETS,
    Excludes,
    Name,
    Needs,
    NeedsCount,
    NeedsValue,
    OutputFile,
    ValueNeeds,
    add_missing_argument,
    missing_cells,
    seed_argument,
    state_rules,
)
from ._deploy import read_labels, run_estimate_from_state
from ._bounds import values_in_bounds
from ._estimate_joint import run_estimate_joint
from ._simulation import PLOT_NOTE, simulation_lines
from ._estimate_records import MULTI_CHOOSERS, run_estimate_records
from ._records import add_columns_argument
from ._commands import HELP


def add_commands(subparsers) -> None:
    _add_reproduce(subparsers)
    listing = subparsers.add_parser("datasets", help=HELP["datasets"])
    listing.set_defaults(handler=_run_datasets)
    _add_estimate(subparsers)


def _add_reproduce(subparsers) -> None:
    reproduce = subparsers.add_parser(
        "reproduce",
        help=HELP["reproduce"],
        description="Run an experiment spec. NAME is a paper spec (toy, wavelet, wiener, central, sw-ems, cp), "
        "'paper:figure', or the path of a TOML spec. Finished cells are cached in OUT/cells, so an "
        "interrupted run resumes where it stopped.",
    )
    reproduce.add_argument("name", metavar="NAME")
    reproduce.add_argument("--quick", action="store_true", help="the spec's smaller grid and fewer repeats")
    reproduce.add_argument("--repeats", type=int, default=None, help="repeats per setting (overrides the spec)")
    reproduce.add_argument("--jobs", type=int, default=1, help="worker processes (default 1)")
    reproduce.add_argument(
        "--plan", action="store_true",
        help="run 40 random cells (cached for the real run) and print the estimated time of the rest",
    )
    reproduce.add_argument(
        "--scheduler", default=None, metavar="ADDRESS",
        help="run the cells on a Dask cluster, e.g. tcp://host:8786 (the dask extra; not with --jobs)",
    )
    reproduce.add_argument("--seed", type=seed_argument, default=None, help="root seed (overrides the spec)")
    reproduce.add_argument("--out", default=None, help="output folder (default: results/NAME)")
    reproduce.add_argument("--no-progress", action="store_true", help="no progress bar")
    reproduce.add_argument(
        "--page", default=None, metavar="PAGE",
        help="also write the generated part of a reproduction page (Markdown): run, verdicts, claims table, what "
        "is run; and every cell's values beside it, PAGE's NAME.cells.jsonl (docs/how-to/run-experiments.md, 'Pages')",
    )
    reproduce.set_defaults(handler=_run_reproduce)
    state_rules(reproduce, {"--repeats": Integer(low=1), "--jobs": Integer(low=1),
                            "--page": OutputFile("the path of a Markdown file to write (not a directory), in a "
                                                 "directory that exists")},
                (Excludes("--scheduler", "--jobs", "it runs the cells on a Dask cluster"),))


def _add_estimate(subparsers) -> None:
    estimate = subparsers.add_parser(
        "estimate",
        help=HELP["estimate"],
        description="Two modes. One-shot: 'dpdist estimate FILE --column C --protocol P --epsilon E' simulates "
        "one LDP collection on a column and compares with the truth: the data's own exact statistics (and, with "
        "--plot, its histogram), not private, so its output is not for publication ('dpdist release' releases a "
        "column with central DP). State: 'dpdist estimate --state STATE "
        "[--out CSV] [--plot PNG]' estimates from an aggregator state written by 'dpdist aggregate' "
        "(FILE, --column, --protocol, --epsilon are then not allowed: the config is in the state).",
    )
    _add_one_shot_options(estimate)
    _add_state_options(estimate)
    _add_value_options(estimate)
    _add_recovery_options(estimate)
    estimate.add_argument("--seed", type=seed_argument, default=None, help="seed of the simulated randomization (reproducible: not for publication)")
    estimate.add_argument("--plot", default=None, help="write a plot of the estimate (PNG/SVG/PDF)")
    estimate.add_argument(
        "--replicates",
        type=int,
        default=200,
        help="bootstrap replicates of the 95%% confidence bands of a numerical protocol's CDF, drawn in the "
        "plot and giving intervals for the mean and quantiles (default 200; 0: no bands)",
    )
    estimate.set_defaults(handler=_run_estimate)
    saved_state = "a campaign's saved state (state mode)"
    state_rules(estimate, {
        "--replicates": REPLICATES,
        "--bins": Integer(low=2),
        "--joint-method": Options(JOINT_METHODS),
        "--protocol": Name(tuple(sorted([*local.available(), *_CHOOSERS, *MULTI_CHOOSERS]))),
        "--bounds": BOUNDS,
        "--targets": TARGETS,
        "--plot": PLOT,
        "FILE": ExistingFile("the path of an existing data file"),
        "--state": Each(ExistingFile("the path of an aggregator state file ('dpdist aggregate')")),
        "--alphabet": Alphabet(),
    }, (
        *(Needs(option, "--state", saved_state) for option in ("--recover", "--fake-fraction", "--targets", "--out",
                                                              "--joint-method")),
        *(Excludes("--state", option, "the config is the state's") for option in (
            "--column", "--columns", "--attributes", "--protocol", "--epsilon", "--bins", "--bounds", "--seed",
            "--labels", "--epsilon-1", "--alphabet")),
        Excludes("--column", "--columns"),
        *(Excludes("--columns", option, "each attribute's domain is in '--attributes'") for option in (
            "--labels", "--bounds", "--bins", "--alphabet", "--epsilon-1")),
        Needs("--attributes", "--columns", "it is the schema of '--columns' (a multi-attribute protocol)"),
        Excludes("--state", "FILE", "the config is the state's"),
        NeedsAny(("--state", "FILE"), why="FILE, --column (or --columns), --protocol and --epsilon in one-shot mode, "
                 "--state STATE in state mode"),
        NeedsAny(("--column", "--columns"), "FILE", "the column(s) of the data"),
        *(Needs("FILE", option, "one-shot mode") for option in ("--protocol", "--epsilon")),
        *_state_count_relations(),
        *_protocol_relations(),
    ))


def _state_count_relations() -> tuple:
    """The options of one ``--state``, and of several (a joint estimate)."""
    joint = NeedsCount("--joint-method", "--state", low=2, why="a joint estimate of several campaigns")
    recovery = tuple(relation for option in ("--fake-fraction", "--targets") for relation in (
        Needs(option, "--recover", "it applies with '--recover ldprecover'"),
        NeedsValue(option, "--recover", ("ldprecover",), "ldprecover")))
    one = "a recovery is of one campaign"
    return (joint, *recovery, *(NeedsCount(option, "--state", high=1, why=one)
                                for option in ("--recover", "--fake-fraction", "--targets")),
            NeedsCount("--postprocess", "--state", high=1, why="the joint estimate of several lies in the simplex already"))


def _protocol_relations() -> tuple:
    """What the one-shot mode's ``--protocol`` (its kind, its parameters) needs and allows."""
    multi = (*local.available("multi"), *MULTI_CHOOSERS)
    words = tuple(local.available("heavy_hitters"))
    numerical = tuple(local.available("numerical"))
    longitudinal = tuple(name for name in local.available() if "epsilon_1" in local.parameter_names(name))
    without_bins = tuple(name for name in numerical if "bins" not in local.parameter_names(name))
    return (
        NeedsValue("--columns", "--protocol", multi, "a multi-attribute protocol", "docs/explanation/multi-attribute.md"),
        ValueNeeds("--protocol", multi, "--columns", "a multi-attribute protocol", "it takes a record of several "
                   "attributes: name their columns with '--columns C1,C2,...' and their schema with '--attributes'"),
        Needs("--columns", "--attributes", "a JSON list (or a file of one) of each attribute's name and domain, e.g. "
              '[{"name": "sex", "labels": ["f", "m"]}, {"name": "age", "bounds": [0, 100]}]'),
        ValueNeeds("--protocol", longitudinal, "--epsilon-1", "a longitudinal protocol", "the budget of one report "
                   "(below --epsilon, its bound for any number of reports of one value), e.g. --epsilon 4 --epsilon-1 1"),
        NeedsValue("--epsilon-1", "--protocol", longitudinal, f"a longitudinal protocol ({', '.join(longitudinal)})",
                   "the others have a single budget, --epsilon"),
        NeedsValue("--alphabet", "--protocol", words, "pem", "words"),
        NeedsValue("--labels", "--protocol", (*local.available("frequency"), *_CHOOSERS), "a frequency protocol",
                   "see 'dpdist list'; a column of words goes to pem without --labels"),
        *(Excludes("--labels", option, "it applies to numbers") for option in ("--bins", "--bounds")),
        *(NeedsValue(option, "--protocol", words, "pem", "heavy hitters of words or items", excluded=True)
          for option in ("--bins", "--bounds", "--postprocess")),
        NeedsValue("--postprocess", "--protocol", numerical, "a numerical protocol",
                   "it applies to frequency protocols", excluded=True),
        NeedsValue("--bins", "--protocol", without_bins, "a protocol without a 'bins' parameter", excluded=True),
    )


def _add_one_shot_options(estimate) -> None:
    """``dpdist estimate FILE --column C --protocol P --epsilon E``: the data and the simulated collection."""
    estimate.add_argument("file", metavar="FILE", nargs="?", default=None, help="data file (one-shot mode)")
    estimate.add_argument("--column", default=None, help="column name (one-shot mode)")
    add_columns_argument(estimate, "one-shot mode, a multi-attribute protocol of --attributes (docs/explanation/multi-attribute.md)")
    estimate.add_argument(
        "--attributes",
        default=None,
        metavar="SCHEMA",
        help="with --columns: the attributes' public schema, a JSON file or inline JSON list (or a protocol config "
        "naming them, as privatize's --config), e.g. "
        '[{"name": "sex", "labels": ["f", "m"]}, {"name": "age", "bounds": [0, 100]}]',
    )
    estimate.add_argument("--protocol", default=None, help="registered protocol name, see 'dpdist list' (one-shot mode)")
    estimate.add_argument("--epsilon", type=float, default=None, help="privacy budget (one-shot mode)")
    estimate.add_argument(
        "--epsilon-1",
        type=float,
        default=None,
        help="longitudinal protocols (l-grr, l-osue, loloha): the budget of one report; --epsilon is then the "
        "bound for any number of reports of one value (one-shot mode)",
    )


def _add_state_options(estimate) -> None:
    """``dpdist estimate --state STATE``: estimates from aggregator states (one, or several jointly) and their CSV."""
    estimate.add_argument(
        "--state",
        action="append",
        default=None,
        help="aggregator state from 'dpdist aggregate' (state mode); repeat it for one joint estimate of several "
        "campaigns on one domain (dpdist.local.estimate_jointly)",
    )
    estimate.add_argument(
        "--joint-method",
        default=None,
        help="with several --state: 'likelihood' (default: EM on the joint likelihood) or 'inverse-variance'",
    )
    estimate.add_argument("--out", default=None, help="write the estimate as CSV (state mode)")


def _add_value_options(estimate) -> None:
    """What the values are: bins, labels, bounds (clipped or refused), a word alphabet; the frequencies' post-processing."""
    estimate.add_argument(
        "--bins",
        type=int,
        default=None,
        help="bins: for a frequency protocol on numbers (32), or a numerical protocol's 'bins' parameter",
    )
    estimate.add_argument(
        "--labels",
        default=None,
        help="a text file with one label per line: the column holds labels of a categorical domain (one-shot mode)",
    )
    estimate.add_argument("--bounds", default=None, help="public bounds LO,HI (default: the column's min,max)")
    estimate.add_argument(
        "--clip",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="values outside --bounds are clipped to the nearest bound and counted (the default, as in "
        "'dpdist release'); --no-clip refuses them",
    )
    add_missing_argument(estimate)
    estimate.add_argument(
        "--alphabet",
        default=None,
        help="pem on a column of words: the public alphabet (default: the column's characters, not private)",
    )
    estimate.add_argument(
        "--postprocess",
        default=None,
        help="post-processing of frequencies, as in Python's proto.estimate (default: none, the unbiased "
        "estimate; norm-sub for bins turned into a distribution)",
    )


def _add_recovery_options(estimate) -> None:
    """A poisoned frequency campaign's recovery (``--state`` mode)."""
    estimate.add_argument(
        "--recover",
        default=None,
        help="with --state, a frequency campaign fake users may have poisoned: 'ldprecover' estimates the genuine "
        "users' frequencies (docs/explanation/frequency-oracles.md, 'Poisoned campaigns')",
    )
    estimate.add_argument(
        "--fake-fraction",
        type=float,
        default=None,
        help="with --recover: the known fraction of fake reports, in [0, 0.5) (default: learned for grr, 0 otherwise)",
    )
    estimate.add_argument(
        "--targets",
        default=None,
        metavar="ITEMS",
        help="with --recover: the attacked items when known, e.g. 3,7 (the fake mass is removed from them only)",
    )


def _run_reproduce(args) -> int:
    from ..experiments import (  # lazy: loads scipy (0.4-2 s)
        SpecNotWrittenError,
        get_spec,
        reproduce,
    )

    try:
        spec = get_spec(args.name)
    except SpecNotWrittenError as error:
        print(f"dpdist: {error}", file=sys.stderr)
        return 2
    except InvalidParameterError as error:
        print(f"dpdist: error: {error}", file=sys.stderr)
        return 2
    spec = spec.with_options(quick=args.quick, repeats=args.repeats, seed=args.seed)
    out = args.out or f"results/{spec.name.replace(':', '-')}"
    command = "dpdist " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if _called_as_cli() else _command(args)
    if args.plan:
        from ..experiments import plan_run  # lazy: loads scipy (0.4-2 s)

        plan = plan_run(spec, out, jobs=args.jobs)
        print(f"{spec.name} ({spec.run} run, {spec.repeats} repeats): {plan.describe(args.jobs)}.")
        return 0
    try:
        result = reproduce(
            spec, out, jobs=args.jobs, progress=not args.no_progress, command=command, scheduler=args.scheduler
        )
    except KeyboardInterrupt:
        cached = len(list(Path(out, "cells").glob("*.json")))
        print(
            f"\ndpdist: reproduce {spec.name} interrupted; {cached} finished cells are kept in {out}/cells. "
            f"Run the same command again to resume: {command}",
            file=sys.stderr,
        )
        return 130
    if args.page is not None:
        from ..experiments._pages import write_page  # lazy: loads scipy (0.4-2 s)

        page = Path(args.page)  # a file to write, not a directory: the option table
        print(f"page: {write_page(page, result, result.claims, out, command)}")
    outcomes = [claim["outcome"] for claim in result.claims]
    print(
        f"{spec.name}: {result.computed} cells computed, {result.reused} reused, {len(result.failures)} failed "
        f"in {result.seconds:.1f} s; claims: {outcomes.count('holds')} hold, "
        f"{outcomes.count('holds and understated')} hold and are understated, "
        f"{outcomes.count('does not hold')} do not hold, {outcomes.count('inconclusive')} inconclusive, "
        f"{outcomes.count('underpowered')} underpowered"
        + (f" (quick run: {spec.repeats} repeats, a smaller grid; verdicts are indicative)." if spec.run == "quick" else ".")
    )
    print(f"report: {result.files['report']}")
    if result.failures:
        print(f"first failure: {result.failures[0]['cell']}: {result.failures[0]['error']}", file=sys.stderr)
        return 1
    return 0


def _called_as_cli() -> bool:
    return bool(sys.argv) and sys.argv[0].endswith("dpdist") and len(sys.argv) > 1 and sys.argv[1] == "reproduce"


def _command(args) -> str:
    parts = ["dpdist", "reproduce", shlex.quote(args.name)]
    if args.quick:
        parts.append("--quick")
    for option in ("repeats", "jobs", "scheduler", "seed", "out", "page"):
        value = getattr(args, option)
        if value is not None:
            parts += [f"--{option}", shlex.quote(str(value))]
    return " ".join(parts)


def _run_datasets(args) -> int:
    from .. import datasets  # lazy: loads scipy (0.4-2 s)

    rows = datasets.describe()
    header = ("name", "kind", "size", "bounds/domain", "description")
    widths = [max(len(str(row[i])) for row in [header, *rows]) for i in range(4)]
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths)) + "  " + header[4])
    for row in rows:
        print("  ".join(str(v).ljust(w) for v, w in zip(row, widths)) + "  " + row[4])
    return 0


#: What ``dpdist estimate`` accepts besides the registered protocols: ``auto`` (a frequency oracle chosen
#: for epsilon and d, see ``dpdist list``).
_CHOOSERS = ("auto",)


def _protocol_kind(name: str) -> str:
    """``"frequency"``, ``"heavy_hitters"``, ``"numerical"`` or ``"multi"`` of a name ``dpdist list`` shows."""

    if name in _CHOOSERS:
        return "frequency"
    return next(kind for kind in ("frequency", "heavy_hitters", "numerical", "multi", "key_value") if name in local.available(kind))


def _run_estimate(args) -> int:
    if args.state is not None:
        if len(args.state) > 1:  # the options of one --state, and of several: the option table
            return run_estimate_joint(args)
        args.state = args.state[0]
        return run_estimate_from_state(args)
    # one-shot mode: FILE, --column (or --columns), --protocol and --epsilon, none of the state mode's (the option table)
    if args.columns is not None:
        return run_estimate_records(args)
    name = args.protocol  # a name 'dpdist list' shows; a multi-attribute one only with --columns: the option table
    kind = _protocol_kind(name)
    if kind == "key_value":
        raise InvalidParameterError(
            f"The protocol {name!r} takes each user's set of (key, value) pairs, which 'dpdist estimate' does not read "
            "from a column: estimate it with the Python API (dpdist.local.keyvalue.KeyValueSets, docs/explanation/key-value.md) or "
            "collect it with 'dpdist serve'."
        )
    # --epsilon-1 is given with, and only with, a longitudinal protocol: the option table
    extras = {} if args.epsilon_1 is None else {"epsilon_1": args.epsilon_1}
    if kind == "heavy_hitters":
        return _run_estimate_heavy_hitters(args)
    if args.labels is not None:
        return _run_estimate_labels(args, extras)
    return _run_estimate_numbers(args, kind, extras)


def _run_estimate_numbers(args, kind: str, extras: dict) -> int:
    """One-shot mode on a column of numbers: a distribution (binned for a frequency protocol) or a mean."""

    from ..experiments import run_local_protocol  # lazy: loads scipy (0.4-2 s)

    name = args.protocol
    bounds = args.bounds  # a pair (lo, hi), or None: the option table
    values, data, clipped, missing_notes = _numeric_column(args, bounds)
    params = {"epsilon": args.epsilon, **extras}
    if kind == "frequency":
        params.update(bins=32 if args.bins is None else args.bins, postprocess=args.postprocess or "norm-sub")
    elif args.bins is not None:  # --postprocess, and --bins without a 'bins' parameter, refused by the option table
        params["bins"] = args.bins
    means_only = kind == "numerical" and _estimates_a_mean(name)
    rng = np.random.default_rng(args.seed)
    if kind == "numerical" and args.replicates and not means_only:
        estimate = _numerical_with_band(name, values, data, params, rng, args.replicates)
    else:
        estimate = run_local_protocol(name, values, data, params, rng)
    low, high = data.bounds
    chosen = ""
    if name in _CHOOSERS:
        chosen = f" (chose {choose_protocol(epsilon=args.epsilon, domain_size=params['bins'])})"
    print("\n".join(simulation_lines(estimate, args.seed)))
    print(f"{name}{chosen} with epsilon={args.epsilon:g} on {values.size} values of {args.column!r} "
          f"in [{low:g}, {high:g}]" + ("" if bounds else " (bounds from the data: not private)"))
    if clipped:
        how = "wrapped around the circle" if _wraps(args.protocol) else "to the nearest bound"
        print(f"  clipped            {clipped} value(s) outside --bounds {how} (counted here, "
              "never sent; --no-clip refuses them)")
    for note in missing_notes:
        print(f"  note               {note}")
    print(estimate.describe(values))  # any estimate describes itself: a distribution, or a mean (pm, sr)
    _plot(args, estimate, f"{name}, eps={args.epsilon:g}", values)
    return 0


def _plot(args, estimate, label: str, truth=None) -> None:
    """``--plot``: the estimate's figure, the truth drawn beside it, marked as a simulation's (not private)."""
    if args.plot:
        plotting.save_estimate(estimate, args.plot, label=label, truth=truth, xlabel=args.column, note=PLOT_NOTE)
        print(f"  plot               {args.plot} (a simulation's: the truth drawn is not private)")


def _numerical_with_band(protocol: str, values, data, params: dict, rng, replicates: int):
    """One simulated collection of ``values`` and its estimate with 95% CDF bands."""

    make_params = dict(params)
    if local.needs_population_size(protocol):
        make_params.setdefault("n_users", int(values.size))
    proto = local.make(protocol, bounds=data.bounds, **make_params)
    return uncertainty.cdf_band(proto, proto.simulate(values, rng=rng), replicates=replicates, rng=rng)


def _estimates_a_mean(name: str) -> bool:
    """Whether the numerical protocol ``name`` estimates a mean (``pm``, ``sr``) rather than a distribution."""

    cls = registered_class(name)
    return cls is not None and issubclass(cls, MeanProtocol)


def _wraps(name: str) -> bool:
    """Whether the numerical protocol ``name`` takes its bounds as one period of a circle (``opm-circular``)."""
    return bool(getattr(registered_class(name), "circular", False))


def _numeric_column(args, bounds):
    """``(values, data, clipped, notes)``: the column's numbers, a dataset view of them, how many were clipped, and the
    note on its empty cells (refused unless ``--missing drop``).

    With --bounds, values outside them are clipped to the nearest bound (the default, as every
    numerical protocol's ``clip=True``) or refused (--no-clip); without, the bounds are the data's
    minimum and maximum (not private).
    """

    from ..datasets.files import read_column  # lazy: loads scipy (0.4-2 s)

    values = read_column(args.file, args.column, infinite="keep" if bounds is not None and args.clip else "raise",
                         empty="keep")
    empty = np.isnan(values)
    notes = missing_cells(args, int(np.count_nonzero(empty)), f"{args.file}:{args.column}")
    values = values[~empty]
    if values.size == 0:
        raise InvalidValueTypeError(f"The column {args.column!r} of {args.file!r} holds no numeric value.")
    clipped = 0
    if bounds is None:
        low, high = float(values.min()), float(values.max())
        bounds = (low - 0.5, high + 0.5) if low == high else (low, high)
    else:  # as the protocol brings them in: wrapped on a circle (opm-circular), as privatize and submit
        values, clipped = values_in_bounds(values, bounds, clip=args.clip, column=f"{args.column!r} of {args.file!r}",
                                           where="'--bounds'", wrap=_wraps(args.protocol))
    data = SimpleNamespace(name=f"{Path(args.file).stem}:{args.column}", kind="numerical", bounds=bounds, domain_size=None)
    return values, data, clipped, notes


def _run_estimate_labels(args, extras: dict) -> int:
    """One-shot mode on a column of labels: ``--labels FILE`` gives the public label domain."""


    labels = read_labels(args.labels)
    protocol = local.make(args.protocol, epsilon=args.epsilon, labels=labels, **extras)
    assert isinstance(protocol, FrequencyOracle), "a frequency protocol (tags.kind)"
    parts, missing, unknown = [], 0, 0
    for chunk, n_missing in iter_column(args.file, args.column, text=True):
        known = protocol.encode(chunk, on_unknown="drop")
        parts.append(known)
        missing += n_missing
        unknown += chunk.size - known.size
    missing_notes = missing_cells(args, missing, f"{args.file}:{args.column}")
    items = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
    if items.size == 0:
        raise InvalidParameterError(
            f"The column {args.column!r} of {args.file!r} holds no value of the '--labels' domain "
            f"({unknown} unknown, {missing} missing)."
        )
    postprocess = args.postprocess or "none"
    estimate = protocol.estimate(protocol.simulate(items, rng=np.random.default_rng(args.seed)), postprocess=postprocess)
    truth = np.bincount(items, minlength=protocol.domain_size) / items.size
    name = f"{args.protocol} (chose {protocol.name})" if args.protocol in _CHOOSERS else protocol.name
    print("\n".join(simulation_lines(estimate, args.seed)))
    print(
        f"{name} with epsilon={args.epsilon:g} on {items.size} labelled values of {args.column!r} "
        f"({protocol.domain_size} labels, postprocess={postprocess})"
    )
    if unknown:
        print(f"  rejected           {unknown} value(s) outside the label domain")
    for note in missing_notes:
        print(f"  note               {note}")
    print(estimate.describe(truth))
    _plot(args, estimate, f"{protocol.name}, eps={args.epsilon:g}", truth)
    return 0


def _run_estimate_heavy_hitters(args) -> int:
    """One-shot ``pem`` on a column of words (or of non-negative integers): the heavy hitters found.

    The alphabet of the words is ``--alphabet``, else the characters of the column (not private,
    like bounds from the data); words with another character are skipped and counted.  Integer
    items get the bits of the largest one (not private either).
    """



    chunks, missing = [], 0  # FILE an existing file: the option table
    for chunk, n_missing in iter_column(args.file, args.column, text=True):
        chunks.append(chunk)
        missing += n_missing
    missing_notes = missing_cells(args, missing, f"{args.file}:{args.column}")
    cells = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.str_)
    if cells.size == 0:
        raise InvalidParameterError(f"The column {args.column!r} of {args.file!r} holds no value.")
    numbers = args.alphabet is None and all(re.fullmatch(r"\d+", cell) for cell in np.unique(cells).tolist())
    note, skipped = "", 0
    if numbers:
        integers = [int(cell) for cell in cells.tolist()]
        bits = max(1, max(integers).bit_length())
        if bits > MAX_BITS:
            raise InvalidParameterError(f"The column {args.column!r} holds integers above 2**{MAX_BITS}; pem takes at most {MAX_BITS} bits.")
        items = np.array(integers, dtype=np.int64)
        protocol = local.make("pem", epsilon=args.epsilon, bits=bits)
        note = f"integer items of {bits} bits (from the largest: not private)"
        truth_names = [str(item) for item in items.tolist()]
    else:
        # --alphabet: distinct characters (the option table); the column's: distinct, at least one (no empty cell)
        alphabet = args.alphabet if args.alphabet is not None else "".join(sorted(set("".join(cells.tolist()))))
        per_char = StringCodec(alphabet=alphabet).bits_per_char
        max_chars = min(12, MAX_BITS // per_char)
        if max_chars < 1:
            raise InvalidParameterError(f"The alphabet of {len(alphabet)} characters is too large for pem ({MAX_BITS} bits per word).")
        known = words_in_alphabet(cells, alphabet)
        skipped = int((~known).sum())
        cells = cells[known]
        if cells.size == 0:
            raise InvalidParameterError(f"No word of the column {args.column!r} uses only the '--alphabet' {alphabet!r}.")
        protocol = local.make("pem", epsilon=args.epsilon, alphabet=alphabet, max_chars=max_chars)
        assert isinstance(protocol, PEM) and protocol.codec is not None, "pem over an alphabet"
        items = protocol.codec.encode(cells)
        source = "--alphabet" if args.alphabet is not None else "the column's characters: not private"
        note = f"words over {len(alphabet)} characters ({source}), cut to {max_chars}"
        truth_names = [word[:max_chars] for word in cells.tolist()]
    found = protocol.estimate(protocol.simulate(items, rng=np.random.default_rng(args.seed)))
    names, counts = np.unique(np.array(truth_names, dtype=object).astype(str), return_counts=True)
    truth = dict(zip(names.tolist(), (counts / counts.sum()).tolist()))
    print("\n".join(simulation_lines(found, args.seed)))
    print(f"pem with epsilon={args.epsilon:g} on {items.size} values of {args.column!r}: {note}")
    if skipped:
        print(f"  rejected           {skipped} word(s) with a character outside the alphabet")
    for note in missing_notes:
        print(f"  note               {note}")
    print(found.describe(truth))
    _plot(args, found, f"pem, eps={args.epsilon:g}")
    return 0
