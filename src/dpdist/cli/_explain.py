"""``dpdist explain``: the expected error of a campaign or release at n and each epsilon, before any data exist."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from ..accuracy import default_cache_directory, explain, explain_ladder, explain_plan
from ..accuracy._central import RELEASES
from .._validation import Constraint, OneOf
from ._arguments import (
    BOUNDS,
    PLOT,
    Excludes,
    IntegerText,
    Needs,
    NeedsAny,
    NeedsValue,
    Numbers,
    ValueNeeds,
    seed_argument,
    state_rules,
)
from ._deploy import load_config
from ._commands import HELP


def add_commands(subparsers) -> None:
    explain = subparsers.add_parser(
        "explain",
        help=HELP["explain"],
        description="Print the expected error of a local protocol (--config) or a central release (--release) at --n "
        "users or records, for each epsilon: analytic where the variance is known (frequency oracles, pm, sr), else "
        "a seeded simulation on data of --shape (mean of --repeats runs with its standard error). Nothing is read: "
        "the prediction uses public parameters only.",
    )
    target = explain.add_mutually_exclusive_group(required=True)
    target.add_argument("--config", help="a local protocol's config: a JSON file or an inline JSON object")
    target.add_argument("--release", choices=RELEASES, metavar="RELEASE",
                        help="a central release: cdf, tree, histogram, adaptive-quantiles, polynomial, pursuit or "
                        "quantiles (with --bounds)")
    explain.add_argument("--n", required=True, type=int, help="users (local) or records (central)")
    explain.add_argument("--epsilons", default=None,
                         help="comma-separated epsilons (default 0.25,0.5,1,2,4,8 and the config's own)")
    explain.add_argument("--bounds", default=None, help="--release: the public bounds LO,HI")
    explain.add_argument("--delta", type=float, default=None, help="--release polynomial: its delta")
    persons = explain.add_argument_group("a release per person (--release, with --rows-per-person: --n is persons)")
    persons.add_argument("--rows-per-person", default=None, metavar="LAW",
                         help="the public law of the persons' numbers of rows: an int, geometric:MEAN or zipf:A")
    persons.add_argument("--max-contributions", default=None, metavar="K,K,...",
                         help="the bounds on the rows kept per person to compare (default 1,2,4,8,16,32)")
    persons.add_argument("--person-correlation", type=float, default=None, metavar="RHO",
                         help="how much a person's values go with their number of rows, in [0, 1) (default 0.5)")
    explain.add_argument("--shape", default="normal",
                         help="the data shape of the prediction: uniform, normal (default), skewed, bimodal, zipf (items)")
    explain.add_argument("--repeats", type=int, default=20, help="simulated runs per epsilon (default 20)")
    explain.add_argument("--seed", type=seed_argument, default=0, help="root seed of the simulation (default 0)")
    explain.add_argument("--json", action="store_true", help="print the predictions as JSON")
    explain.add_argument("--plot", default=None, metavar="PNG", help="write the expected errors against epsilon")
    explain.add_argument("--no-cache", action="store_true", help="do not read or write the on-disk cache of results")
    plan = explain.add_argument_group("a year of collection (--plan, with --config)")
    plan.add_argument("--plan", action="store_true",
                      help="plan the campaign repeated --every day/week/release over --horizon days: per device, its "
                      "total under each accountant at --delta (default 1e-8), the memoized alternatives, the relayed "
                      "total (--relay-n) and the per-campaign epsilon that fits --target, each with its error")
    plan.add_argument("--every", choices=("day", "week", "release"), default="day", help="--plan: how often (default day)")
    plan.add_argument("--horizon", type=int, default=365, help="--plan: days planned (default 365)")
    plan.add_argument("--releases", type=int, default=None, help="--plan --every release: campaigns over the horizon")
    plan.add_argument("--target", type=float, default=None, help="--plan: a yearly epsilon per device to fit")
    plan.add_argument("--relay-n", type=int, default=None, help="--plan: reports per shuffled batch (adds the relayed row)")
    rungs = explain.add_argument_group("the trust ladder (--ladder, with --config and --delta)")
    rungs.add_argument("--ladder", action="store_true",
                       help="the campaign under each deployment model at the config's epsilon and --delta (central, "
                       "replace neighbours): local, shuffled through the relay, sample-and-threshold (Nebula), a trusted "
                       "curator, secure aggregation; each row's per-item error and what each party must do")
    rungs.add_argument("--threshold", type=int, default=None, help="--ladder: sample-and-threshold's K (default 20)")
    rungs.add_argument("--sampling", type=float, default=None,
                       help="--ladder: sample-and-threshold's p (default: the largest that meets the target)")
    rungs.add_argument("--colluding", type=int, default=None,
                       help="--ladder: devices the collector or server runs or knows (default 0)")
    rungs.add_argument("--tokens-each", type=int, default=None,
                       help="--ladder: reports one relay credential admits, the protected device's included: the shuffled row is "
                            "stated for a device that sends them all in one round (default 1)")
    explain.set_defaults(handler=_run_explain)
    _state_rules(explain)


def _state_rules(explain) -> None:
    """The option table of ``dpdist explain``: its options' forms, and which go with which mode."""
    releases = "the number of releases over the horizon"
    persons = "explain's model of the rows per person"
    state_rules(explain, {
        "--epsilons": Numbers("comma-separated numbers"),
        "--bounds": BOUNDS,
        "--rows-per-person": OneOf((IntegerText(), _Law(("geometric", "zipf"))), "an int, geometric:MEAN or zipf:A"),
        "--max-contributions": Numbers("comma-separated ints", integer=True),
        "--plot": PLOT,
    }, relations=(
        *(Needs(option, "--plan") for option in ("--target", "--relay-n", "--releases")),
        Excludes("--plan", "--release", "it plans a campaign: give its --config"),
        *(Excludes("--plan", option) for option in ("--epsilons", "--bounds", "--plot")),
        Needs("--release", "--bounds", "the public bounds LO,HI"),
        Excludes("--config", "--bounds", "it goes with --release; a config holds its own parameters"),
        Excludes("--plan", "--ladder", "they answer two questions: give one of them"),
        *(Needs(option, "--ladder") for option in ("--threshold", "--sampling", "--colluding", "--tokens-each")),
        Excludes("--ladder", "--release", "it places one campaign: give its --config"),
        Needs("--ladder", "--delta", "the central delta every row is held to"),
        Excludes("--ladder", "--epsilons", "its rows are at the config's epsilon"),
        NeedsValue("--releases", "--every", ("release",), "release", releases),
        ValueNeeds("--every", ("release",), "--releases", "release", releases),
        *(Needs(option, "--rows-per-person", persons) for option in ("--max-contributions", "--person-correlation")),
        *(Excludes("--config", option, "it goes with --release; a config holds its own parameters")
          for option in ("--rows-per-person", "--max-contributions")),
        NeedsAny(("--release", "--plan", "--ladder"), "--delta", "a release's delta, or the central delta of a plan or "
                 "of the trust ladder (a config holds its own parameters)"),
    ))


@dataclass(frozen=True)
class _Law(Constraint):
    """An option's text ``NAME:NUMBER`` with ``NAME`` one of ``names`` (``geometric:5``), as ``(NAME, NUMBER)``."""

    names: tuple[str, ...]

    def check(self, value: Any) -> Any:
        name, colon, number = value.partition(":") if isinstance(value, str) else ("", "", "")
        if not colon or name not in self.names:
            raise ValueError
        return name, float(number)  # ValueError: not a number

    def describe(self) -> str:
        return " or ".join(f"{name}:NUMBER" for name in self.names)

    def invalid_examples(self) -> list:
        return ["x", f"{self.names[0]}:x", "other:1"]


def _run_explain(args) -> int:
    if args.ladder:
        return _run_ladder(args)
    if args.plan:
        return _run_plan(args)
    epsilons = None if args.epsilons is None else list(args.epsilons)  # --plot and --epsilons: the option table
    cache = None if args.no_cache else default_cache_directory()
    options: dict[str, Any] = {"epsilons": epsilons, "shape": args.shape, "repeats": args.repeats, "seed": args.seed, "cache": cache}
    if args.config is not None:  # --delta, --bounds and the persons' options refused: the option table
        explanation = explain(load_config(args.config), args.n, **options)  # the protocol: auto's candidates with it
    else:
        params: dict[str, Any] = {"bounds": args.bounds}  # a pair (lo, hi): the option table needs it with --release | ({} if args.delta is None else {"delta": args.delta})
        explanation = explain(args.release, args.n, **options, **params, **_person_options(args))
    if args.json:
        print(json.dumps(explanation.to_dict(), indent=2))
    else:
        print(explanation.describe())
    if args.plot:
        from ..estimates._drawing import headless, pyplot, save_figure  # lazy: loads matplotlib (1-2 s)

        headless()
        explanation.plot()
        save_figure(pyplot().gcf(), args.plot, dpi=120)
        pyplot().close("all")
        print(f"explain: plot written to {args.plot}", file=sys.stderr)
    return 0


def _run_plan(args) -> int:
    # --config given, --epsilons..., and --releases with (only with) --every release: the option table
    cache = None if args.no_cache else default_cache_directory()
    planned = explain_plan(load_config(args.config).config(), args.n, every=args.every, horizon=args.horizon,
                           releases=args.releases, delta=1e-8 if args.delta is None else args.delta, target=args.target,
                           relay_n=args.relay_n, shape=args.shape, cache=cache)
    print(json.dumps(planned.to_dict(), indent=2) if args.json else planned.describe())
    return 0


def _person_options(args) -> dict[str, Any]:
    """``--rows-per-person``, ``--max-contributions`` and ``--person-correlation`` as explain's parameters (checked by
    explain itself, which names them; their forms, and none without ``--rows-per-person``: the option table)."""
    if args.rows_per_person is None:
        return {}
    options: dict[str, Any] = {"rows_per_person": args.rows_per_person}
    if args.max_contributions is not None:
        options["max_contributions"] = list(args.max_contributions)
    if args.person_correlation is not None:
        options["person_correlation"] = args.person_correlation
    return options


def _run_ladder(args) -> int:
    # --config and --delta given, the other modes' options refused, --plot an image file: the option table
    options: dict[str, Any] = {name: value for name, value in (
        ("threshold", args.threshold), ("sampling", args.sampling), ("colluding", args.colluding),
        ("tokens_each", args.tokens_each)) if value is not None}
    rungs = explain_ladder(load_config(args.config).config(), args.n, delta=args.delta, shape=args.shape, **options)
    print(json.dumps(rungs.to_dict(), indent=2) if args.json else rungs.describe())
    if args.plot:
        from ..estimates._drawing import headless, pyplot, save_figure  # lazy: loads matplotlib (1-2 s)

        headless()
        rungs.plot()
        save_figure(pyplot().gcf(), args.plot, dpi=120)
        pyplot().close("all")
        print(f"explain: plot written to {args.plot}", file=sys.stderr)
    return 0
