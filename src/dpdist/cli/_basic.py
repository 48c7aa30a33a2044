"""``dpdist list`` and ``dpdist demo``."""

from __future__ import annotations

import argparse

from .. import local
from ..local.frequency.auto import SUMMARY as auto_summary
from ._arguments import seed_argument
from ._commands import HELP


def add_commands(subparsers) -> None:
    listing = subparsers.add_parser("list", help=HELP["list"])
    listing.set_defaults(handler=_run_list)
    demo = subparsers.add_parser("demo", help=HELP["demo"])
    demo.add_argument("--out", default="dpdist-demo", help="output folder for the table and plot")
    demo.add_argument(
        "--epsilons", type=_float_list, default="0.5,1,2,4", help="comma-separated privacy budgets"
    )
    demo.add_argument("--seed", type=seed_argument, default=0)
    demo.add_argument("--repeats", type=int, default=5, help="independent runs per protocol and epsilon (default 5)")
    campaign = demo.add_argument_group(
        "campaign", "--campaign: the collection path instead (needs dpdist[serve]): a local 'dpdist serve' on a temporary "
        "SQLite file, a population of devices each submitting one report per HTTP request (Python client, and the "
        "JavaScript client under Node when node is installed), the dashboard and participate URLs and the live "
        "estimate with its band; it stops after the devices or --seconds (in a terminal it then keeps the service up "
        "until Ctrl-C), and cleanly on Ctrl-C",
    )
    campaign.add_argument("--campaign", action="store_true", help="run the collection demo")
    campaign.add_argument("--devices", type=int, default=1000, help="devices, one report each (default 1000)")
    campaign.add_argument("--js-devices", type=int, default=None,
                          help="of which use the JavaScript client (default: a tenth when node is installed, else 0)")
    campaign.add_argument("--seconds", type=float, default=120.0, help="stop submitting after this long (default 120)")
    demo.set_defaults(handler=_run_demo)


def _run_list(args) -> int:


    rows = sorted(local.describe() + [("auto", "frequency", auto_summary)])
    width = max(len(name) for name, _, _ in rows)
    for name, kind, summary in rows:
        print(f"{name:<{width}}  {kind:<9}  {summary}")
    return 0


def _run_demo(args) -> int:
    if args.campaign:
        try:
            import httpx  # noqa: F401 - the clients' transport  # lazy: optional extra dpdist[serve]
            import uvicorn  # noqa: F401 - the service  # lazy: optional extra dpdist[serve]
        except ImportError as error:
            from ..errors import (
                MissingDependencyError,  # lazy: an optional dependency, tried
            )

            raise MissingDependencyError(f"dpdist demo --campaign needs dpdist[serve] ({error.name} is missing): "
                                         "pip install 'dpdist[serve]'") from None
        from ..demo import run_campaign_demo  # lazy: loads scipy (0.4-2 s)

        return run_campaign_demo(args.devices, args.js_devices, args.seconds, seed=args.seed if args.seed else None)
    from ..demo import run_demo  # lazy: loads scipy (0.4-2 s)

    return run_demo(out=args.out, epsilons=args.epsilons, seed=args.seed, repeats=args.repeats)


def _float_list(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
