"""``dpdist estimate --state A --state B ...``: one estimate from several campaigns' states (:func:`dpdist.local.estimate_jointly`).

Each state is read as ``dpdist estimate --state`` reads one (its journal plays no part); the
campaigns must share the domain, and the errors name ``--state`` and the file.
"""

from __future__ import annotations

from ..errors import InvalidParameterError
from ..io import load_state
from ..local.joint import JOINT_METHODS, check_campaigns, estimate_jointly
from .. import plotting
from ._deploy import _write_table, check_plot_path

__all__ = ["run_estimate_joint"]


def run_estimate_joint(args) -> int:
    """Load every ``--state``, estimate jointly (``--joint-method``), print the summary, write ``--out``/``--plot``."""
    check_plot_path(args.plot)
    if args.postprocess is not None:
        raise InvalidParameterError(
            "The '--postprocess' option of 'dpdist estimate' applies to one --state; the joint estimate of several "
            f"lies in the simplex already. Got --postprocess {args.postprocess} with {len(args.state)} --state files."
        )
    method = args.joint_method or "likelihood"
    if method not in JOINT_METHODS:
        raise InvalidParameterError(
            f"The '--joint-method' option of 'dpdist estimate' must be one of {list(JOINT_METHODS)}. Got {method!r} instead."
        )
    aggregators = [load_state(path, journal=False).aggregator for path in args.state]
    aggregators = check_campaigns(aggregators, owner="dpdist estimate", argument="state", names=args.state)
    estimate = estimate_jointly(aggregators, method=method)
    print(f"joint estimate ({method}) of {len(aggregators)} campaigns, {estimate.n} report(s):")
    for path, aggregator in zip(args.state, aggregators):
        protocol = aggregator.protocol
        print(f"  campaign   {protocol.name} (epsilon={protocol.epsilon:g}), {aggregator.n} report(s) in {path}"
              + (f"; rejected {aggregator.rejected}" if aggregator.rejected else ""))
    if estimate.guarantee is not None:
        print(f"  guarantee  {estimate.guarantee.describe()} (each user in one campaign)")
    for name, value in estimate.summary().items():
        print(f"  {name:<10} {value:.6g}")
    for note in estimate.notes():
        print(f"  note       {note}")
    if args.out:
        _write_table(estimate.table(), args.out)
        print(f"  table  {args.out}")
    if args.plot:
        plotting.save_estimate(estimate, args.plot, label=f"joint ({method}), n={estimate.n}")
        print(f"  plot   {args.plot}")
    return 0
