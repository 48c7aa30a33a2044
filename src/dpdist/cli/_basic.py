"""``dpdist list`` and ``dpdist demo``."""

from __future__ import annotations


def add_commands(subparsers) -> None:
    from ._arguments import seed_argument

    listing = subparsers.add_parser("list", help="list the registered local protocols")
    listing.set_defaults(handler=_run_list)
    demo = subparsers.add_parser("demo", help="estimate an embedded dataset with every protocol")
    demo.add_argument("--out", default="dpdist-demo", help="output folder for the table and plot")
    demo.add_argument(
        "--epsilons", type=_float_list, default="0.5,1,2,4", help="comma-separated privacy budgets"
    )
    demo.add_argument("--seed", type=seed_argument, default=0)
    demo.add_argument("--repeats", type=int, default=5, help="independent runs per protocol and epsilon (default 5)")
    demo.set_defaults(handler=_run_demo)


def _run_list(args) -> int:
    from .. import local

    from ..local.frequency.auto import SUMMARY as auto_summary

    rows = sorted(local.describe() + [("auto", "frequency", auto_summary)])
    width = max(len(name) for name, _, _ in rows)
    for name, kind, summary in rows:
        print(f"{name:<{width}}  {kind:<9}  {summary}")
    return 0


def _run_demo(args) -> int:
    from ..demo import run_demo

    return run_demo(out=args.out, epsilons=args.epsilons, seed=args.seed, repeats=args.repeats)


def _float_list(text: str) -> list[float]:
    import argparse

    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
