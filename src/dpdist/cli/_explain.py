"""``dpdist explain``: the expected error of a campaign or release at n and each epsilon, before any data exist."""

from __future__ import annotations

import json
import sys
from typing import Any

from ..accuracy import default_cache_directory, explain, explain_ladder, explain_plan
from ..accuracy._central import RELEASES
from ..errors import InvalidParameterError
from ._arguments import parse_bounds, seed_argument
from ._deploy import check_plot_path, load_config


def add_commands(subparsers) -> None:
    explain = subparsers.add_parser(
        "explain",
        help="what epsilon buys: the expected error of a local protocol or central release at --n, before any data",
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
                       help="--ladder: reports one relay credential admits (default 1)")
    explain.set_defaults(handler=_run_explain)


def _run_explain(args) -> int:
    if args.plan and args.ladder:
        raise InvalidParameterError("The '--plan' and '--ladder' options answer two questions: give one of them.")
    if args.ladder:
        return _run_ladder(args)
    for option, value in (("--threshold", args.threshold), ("--sampling", args.sampling), ("--colluding", args.colluding),
                          ("--tokens-each", args.tokens_each)):
        if value is not None:
            raise InvalidParameterError(f"The '{option}' option goes with --ladder.")
    if args.plan:
        return _run_plan(args)
    for option, value in (("--target", args.target), ("--relay-n", args.relay_n), ("--releases", args.releases)):
        if value is not None:
            raise InvalidParameterError(f"The '{option}' option goes with --plan.")
    check_plot_path(args.plot)
    epsilons = None if args.epsilons is None else _epsilon_list(args.epsilons)
    cache = None if args.no_cache else default_cache_directory()
    options: dict[str, Any] = {"epsilons": epsilons, "shape": args.shape, "repeats": args.repeats, "seed": args.seed, "cache": cache}
    if args.config is not None:
        for option, value in (("--bounds", args.bounds), ("--delta", args.delta)):
            if value is not None:
                raise InvalidParameterError(f"The '{option}' option goes with --release; a config holds its own parameters.")
        explanation = explain(load_config(args.config).config(), args.n, **options)
    else:
        bounds = parse_bounds(args.bounds)
        if bounds is None:
            raise InvalidParameterError("The '--bounds' option is needed with --release: the public bounds LO,HI.")
        params: dict[str, Any] = {"bounds": bounds} | ({} if args.delta is None else {"delta": args.delta})
        explanation = explain(args.release, args.n, **options, **params)
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
    if args.config is None:
        raise InvalidParameterError("The '--plan' option plans a campaign: give its --config (not --release).")
    for option, value in (("--epsilons", args.epsilons), ("--bounds", args.bounds), ("--plot", args.plot)):
        if value is not None:
            raise InvalidParameterError(f"The '{option}' option does not go with --plan.")
    cache = None if args.no_cache else default_cache_directory()
    planned = explain_plan(load_config(args.config).config(), args.n, every=args.every, horizon=args.horizon,
                           releases=args.releases, delta=1e-8 if args.delta is None else args.delta, target=args.target,
                           relay_n=args.relay_n, shape=args.shape, cache=cache)
    print(json.dumps(planned.to_dict(), indent=2) if args.json else planned.describe())
    return 0


def _run_ladder(args) -> int:
    if args.config is None:
        raise InvalidParameterError("The '--ladder' option places one campaign: give its --config (not --release).")
    if args.delta is None:
        raise InvalidParameterError("The '--ladder' option needs --delta: the central delta every row is held to.")
    for option, value in (("--epsilons", args.epsilons), ("--bounds", args.bounds), ("--target", args.target),
                          ("--relay-n", args.relay_n), ("--releases", args.releases)):
        if value is not None:
            raise InvalidParameterError(f"The '{option}' option does not go with --ladder.")
    check_plot_path(args.plot)
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


def _epsilon_list(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InvalidParameterError(f"The '--epsilons' option must be comma-separated numbers. Got {text!r} instead.") from None
