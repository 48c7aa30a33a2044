"""``dpdist release``: a central-DP CDF and quantiles of one column, with the guarantee printed."""

from __future__ import annotations

import json
import sys


def add_commands(subparsers) -> None:
    from .cli import seed_argument

    release = subparsers.add_parser(
        "release",
        help="central DP: release a private CDF and quantiles of one column (trusted curator)",
        description="Release a private CDF of COLUMN of a CSV or Parquet file with the tree CDF "
        "(a flat histogram for small epsilon*n), and the requested quantiles with their 95% intervals. "
        "Randomness comes from the OS CSPRNG unless --seed is given (reproducible research only: "
        "never publish data about people from a seeded release). Values outside --bounds (infinities "
        "included) are clipped; empty cells are missing values; a column with no values is released too.",
    )
    release.add_argument("file", metavar="FILE", help="a .csv/.tsv or .parquet file")
    release.add_argument("--column", required=True, help="the numeric column to release")
    release.add_argument("--epsilon", required=True, type=float, help="privacy budget (add/remove neighbours)")
    release.add_argument("--bounds", required=True, help="public bounds LO,HI of the column (values outside are clipped)")
    release.add_argument(
        "--quantiles", default="0.1,0.25,0.5,0.75,0.9", help="probabilities to release (default 0.1,0.25,0.5,0.75,0.9)"
    )
    release.add_argument("--method", choices=("tree", "aq"), default="tree", help="quantile method (default tree)")
    release.add_argument("--plot", default=None, help="write the released CDF and quantiles to this PNG")
    release.add_argument("--json", action="store_true", help="print the release as JSON")
    release.add_argument(
        "--seed", type=seed_argument, default=None, help="seed for reproducible research (not for publishing)"
    )
    release.set_defaults(handler=_run_release)


def _parse_quantiles(text: str):
    """The probabilities of ``--quantiles``: finite, strictly between 0 and 1, strictly increasing.

    Checked before any release, so that a typo never spends budget and the message names the option.
    """
    import math

    from .errors import InvalidParameterError

    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        values = []
    valid = bool(values) and all(math.isfinite(v) and 0 < v < 1 for v in values)
    if not valid or any(later <= earlier for earlier, later in zip(values, values[1:])):
        raise InvalidParameterError(
            f"The '--quantiles' option must be comma-separated probabilities strictly between 0 and 1, "
            f"strictly increasing, without duplicates (e.g. 0.1,0.5,0.9). Got {text!r} instead."
        )
    return values


def _run_release(args) -> int:
    import numpy as np

    from . import central
    from .cli import parse_bounds
    from .datasets.files import read_column
    from .errors import DPDistError, InvalidParameterError

    from ._cli_deploy import check_plot_path

    bounds = parse_bounds(args.bounds)
    q = _parse_quantiles(args.quantiles)
    check_plot_path(args.plot)  # before the release: a bad name must not spend the budget
    seed = args.seed
    try:
        # infinities are clipped into --bounds like any value outside them, and a column with no
        # values is released too (noise alone): whether a release succeeds must not depend on the data
        values = read_column(args.file, args.column, infinite="keep")
    except DPDistError as error:
        raise InvalidParameterError(f"--column {args.column!r} of {args.file!r}: {error}") from None
    tree = se = None
    if args.method == "tree":  # one tree release; the quantiles and the plot are post-processing of it
        from .central.many_quantiles import _tree_quantiles

        tree = central.TreeHistogram.release(values, args.epsilon, bounds, rng=seed, clip=True)
        se = tree.cdf_standard_error()  # the noise's spread (post-processing): the intervals and the plot's band
        release = _tree_quantiles(tree, np.asarray(q, dtype=np.float64), 0.95, se)
    else:  # AQ reads the data itself: no tree is released (nor computed), so epsilon is spent once
        release = central.quantiles(values, q, epsilon=args.epsilon, bounds=bounds, method="aq", rng=seed, clip=True)
    guarantee = (
        f"{release.guarantee.describe()}, "
        + ("seeded generator: NOT for publication" if seed is not None else "randomness from the OS CSPRNG")
    )
    if args.json:
        print(json.dumps({"guarantee": guarantee, "quantiles": release.as_dict()}, indent=2))
    else:
        print(f"guarantee: {guarantee}")
        print(f"method: {release.method}; values clipped to [{bounds[0]:g}, {bounds[1]:g}]")
        print("q\tvalue\t95% interval")
        for index, probability in enumerate(release.q):
            interval = (
                f"[{release.low[index]:.6g}, {release.high[index]:.6g}]" if release.low is not None else "(none for aq)"
            )
            print(f"{probability:g}\t{release.values[index]:.6g}\t{interval}")
    if args.plot:
        _plot(tree, se, release, args, bounds)
    return 0


def _plot(tree, se, release, args, bounds) -> None:
    import matplotlib
    import numpy as np

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots(figsize=(7, 4))
    if tree is not None:
        distribution = tree.to_distribution()
        axis.plot(distribution.edges, distribution.cumulative, color="C0", label="private CDF")
        spread = 1.96 * se  # the noise's spread: post-processing, no budget
        if spread.size == distribution.edges.size:
            axis.fill_between(distribution.edges, np.clip(distribution.cumulative - spread, 0, 1),
                              np.clip(distribution.cumulative + spread, 0, 1), color="C0", alpha=0.25, linewidth=0,
                              label="95% pointwise band (noise)")
    axis.scatter(release.values, release.q, color="C3", zorder=3, label="private quantiles")
    if release.low is not None:
        axis.hlines(release.q, release.low, release.high, color="C3", alpha=0.6, label="95% intervals")
    axis.set_xlim(*bounds)
    axis.set_ylim(0, 1)
    axis.set_xlabel(args.column)
    axis.set_ylabel("cumulative probability")
    axis.set_title(f"{args.column}: {release.method}, epsilon = {args.epsilon:g}")
    axis.legend(loc="lower right")
    figure.tight_layout()
    figure.savefig(args.plot, dpi=120)
    plt.close(figure)
    print(f"release: plot written to {args.plot}", file=sys.stderr)
