"""``dpdist estimate --state A --state B ...``: one estimate from several campaigns' states (:func:`dpdist.local.estimate_jointly`).

Each state is read as ``dpdist estimate --state`` reads one, with its ingest journal when it has one
(only to list the report files it counted); the campaigns must share the domain, and the errors
name ``--state`` and the file.  A campaign given twice is refused: the same file (one path or two
naming it), states of identical contents, or states that ingested a report file in common (same
file id, or same content), whose reports would be counted twice.
"""

from __future__ import annotations

import os

from ..errors import IncompatibleStateError
from ..io import journal_path, load_state
from ..local.joint import check_campaigns, estimate_jointly
from ._deploy import print_estimate_and_files

__all__ = ["run_estimate_joint"]


def run_estimate_joint(args) -> int:
    """Load every ``--state``, estimate jointly (``--joint-method``), print the summary, write ``--out``/``--plot``."""
    # --plot, and --postprocess (of one --state), are checked by the option table
    method = args.joint_method or "likelihood"  # checked by the option table
    _refuse_repeated_files(args.state)
    saved = [load_state(path, journal=journal_path(path).exists()) for path in args.state]
    _refuse_shared_ingested(args.state, [state.ingested for state in saved])
    aggregators = check_campaigns([state.aggregator for state in saved], owner="dpdist estimate", argument="--state",
                                  names=args.state)
    estimate = estimate_jointly(aggregators, method=method)
    print(f"joint estimate ({method}) of {len(aggregators)} campaigns, {estimate.n} report(s):")
    for path, aggregator in zip(args.state, aggregators):
        protocol = aggregator.protocol
        print(f"  campaign   {protocol.name} (epsilon={protocol.epsilon:g}), {aggregator.n} report(s) in {path}"
              + (f"; rejected {aggregator.rejected}" if aggregator.rejected else ""))
    if estimate.guarantee is not None:
        print(f"  guarantee  {estimate.guarantee.describe()} (each user in one campaign)")
    print_estimate_and_files(estimate, args, label=f"joint ({method}), n={estimate.n}")
    return 0


def _refuse_repeated_files(paths) -> None:
    """``--state`` naming one file twice (the same path, or two paths of one file)."""
    for index, path in enumerate(paths):
        for earlier in paths[:index]:
            same = os.path.abspath(path) == os.path.abspath(earlier)
            try:
                same = same or os.path.samefile(path, earlier)
            except OSError:  # a missing file: load_state names it
                pass
            if same:
                raise IncompatibleStateError(
                    f"--state names {path} twice (as {earlier!r} and {path!r}): the same campaign counted twice. "
                    "Allowed are the states of independent campaigns, each once."
                )


def _refuse_shared_ingested(paths, ingested) -> None:
    """Two states that counted one report file (same file id or content, as ``dpdist aggregate`` records it)."""
    for index, keys in enumerate(ingested):
        for earlier in range(index):
            shared = sorted(set(keys) & set(ingested[earlier]))
            if shared:
                file = keys[shared[0]].get("file", "?")
                raise IncompatibleStateError(
                    f"--state names {paths[earlier]} and {paths[index]}, which both ingested the report file "
                    f"{file!r} ({shared[0]}; {len(shared)} file(s) in common): its reports would be counted twice. "
                    "Allowed are the states of independent campaigns."
                )
