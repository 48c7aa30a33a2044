"""``dpdist budget create|show`` and the ``--budget-file FILE`` option of the commands that spend a budget.

A budget file holds a total (epsilon, delta, neighbouring relation) and every
charge against it (:class:`dpdist.budget.BudgetSession`).  ``release``,
``privatize``, ``submit`` and ``campaign open`` (or ``campaign create --open``)
charge it before they spend anything, and refuse with what is left when the
charge would overspend.  (``--budget EPSILON`` of ``privatize``/``submit`` is
another account: a device's own ledger with ``--memo``.)
"""

from __future__ import annotations

import json
import sys

from .._guarantee import with_assumptions
from .._validation import ExistingFile
from ._arguments import Excludes, named_actions, state_rules
from ._commands import HELP


def add_commands(subparsers) -> None:
    budget = subparsers.add_parser(
        "budget",
        help=HELP["budget"],
        description="A budget file holds a total privacy budget and every charge against it. Commands given "
        "'--budget-file FILE' charge it before they read any data, and refuse (with the budget left) the run "
        "that would overspend it. Charges compose sequentially; each is stated in the file's neighbouring "
        "relation (an add/remove release costs twice its epsilon under 'replace').",
    )
    actions = budget.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser("create", help="create a budget file (never overwrites one)",
                                description="Create the budget file FILE holding a total budget and no charge.")
    create.add_argument("file", metavar="FILE", help="the budget file to create (JSON)")
    create.add_argument("--epsilon", required=True, type=float, help="the total epsilon")
    create.add_argument("--delta", type=float, default=0.0, help="the total delta (default 0: pure DP only)")
    create.add_argument(
        "--neighbouring", choices=("replace", "add-remove"), default="replace",
        help="relation of the total (default replace: it can charge local campaigns and every release; "
        "add-remove charges add/remove releases at their own epsilon and refuses the others)",
    )
    create.add_argument(
        "--accountant", choices=("tightest", "basic", "zcdp", "pld"), default="tightest",
        help="how charges add up (docs/how-to/plan-a-budget.md, 'Accountants'): basic sums epsilons and deltas, zcdp sums rhos, "
        "pld composes privacy loss distributions; tightest (default) the smallest of those that can state every "
        "charge at the file's delta",
    )
    create.set_defaults(handler=_run_create)
    show = actions.add_parser("show", help="print the total, the charges and what is left",
                              description="Print the budget file's total, its charges and what is left.")
    show.add_argument("file", metavar="FILE", help="a budget file")
    show.add_argument("--json", action="store_true", help="print the whole account as JSON")
    show.set_defaults(handler=_run_show)


def add_budget_file_argument(parser) -> None:
    """``--budget-file FILE``: the budget file a command charges before it spends anything."""
    parser.add_argument(
        "--budget-file", default=None, metavar="FILE",
        help="a budget file ('dpdist budget create'): charged before any data are read; a run that would "
        "overspend it is refused with the budget left",
    )
    seeded = (Excludes("--seed", "--budget-file", "seeded noise is drawn again by anyone who knows the seed: a seeded "
                       "run is not private, and no budget is charged for it"),) if "--seed" in named_actions(parser) else ()
    state_rules(parser, {"--budget-file": ExistingFile("the path of a budget file ('dpdist budget create')")}, seeded)


def open_budget(args):
    """The :class:`~dpdist.budget.BudgetSession` of ``--budget-file`` (None when not given)."""
    if getattr(args, "budget_file", None) is None:
        return None
    from ..budget import BudgetSession  # lazy: loads scipy (0.4-2 s)

    return BudgetSession.open(args.budget_file)


def charge_line(session, statement) -> str:
    """The line a command prints after charging ``--budget-file`` (the file named before the statement's assumptions,
    as :meth:`~dpdist.budget.BudgetSession.describe` names it)."""
    return statement.describe().replace("budget session:", f"budget session (file {str(session.path)!r}):", 1)


def _run_create(args) -> int:
    from ..budget import BudgetSession  # lazy: loads scipy (0.4-2 s)

    session = BudgetSession.create(args.file, args.epsilon, args.delta, neighbouring=args.neighbouring,
                                   accountant=args.accountant)
    print(f"budget: created {args.file}: {session.total.describe()}, {session.accountant} accountant.")
    return 0


def _run_show(args) -> int:
    from ..budget import BudgetSession  # lazy: loads scipy (0.4-2 s)
    from ..budget._derivation import describe_derivation  # lazy: with the session

    session = BudgetSession.open(args.file)
    charges = session.charges
    if args.json:
        left = session.remaining
        spent = session.spent
        print(json.dumps({
            "total": session.total.to_dict(),
            "accountant": session.accountant,
            "spent": None if spent is None else spent.to_dict(),
            "statement": None if spent is None or spent.statement is None else spent.statement.to_dict(),
            "remaining": {"epsilon": left.epsilon, "delta": left.delta},
            "charges": [charge.to_dict() for charge in charges],
            "tradeoff": session.tradeoff().to_dict(),
        }, indent=2))
        return 0
    print(session.describe())
    listed = session.spent.assumptions if session.spent is not None else ()
    for charge in charges:
        parts = f" over {charge.parts} disjoint parts" if charge.parts > 1 else ""
        cost = "" if charge.charged == charge.guarantee else f" -> charged {charge.charged.epsilon:.6g}"
        print(f"  {charge.time}  {charge.label}: {charge.guarantee.describe(assumptions=False)}{parts}{cost}; loss "
              f"derived from {describe_derivation(charge.loss.derivation)}{_assumed(charge, listed)}", file=sys.stdout)
    print(f"what an attacker can learn: {session.tradeoff().describe()}")
    return 0


def _assumed(charge, listed: tuple[str, ...]) -> str:
    """How a charge's line ends: what its own guarantee assumes (a shuffled round's: the shuffler's assumptions), by
    their numbers in the session's line above when it numbers them all, else in full; '' when it assumes nothing."""
    own = tuple(charge.loss.assumptions)
    if not own:
        return ""
    if len(listed) > 1 and all(text in listed for text in own):
        return "; assuming " + ", ".join(f"({listed.index(text) + 1})" for text in own) + " above"
    return with_assumptions("", own)
