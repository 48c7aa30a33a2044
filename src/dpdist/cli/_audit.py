"""``dpdist audit``: certify a local randomizer's epsilon (a dpdist protocol, a peer library's, or any function).

Exit status: 0 no violation found, 3 the randomizer violates its claimed epsilon (certified), 4 its samples
do not follow its stated channel, 2 bad input, 1 an internal error.
"""

from __future__ import annotations

import importlib
import json
import math
import sys
from typing import Any

from .._validation import DOMAIN_SIZE, Described, Integer, Interval, OneOf, Text
from ..errors import InvalidParameterError
from ._arguments import BOUNDS, PLOT, Each, Excludes, IntegerText, Name, Needs, NeedsAny, seed_argument, state_rules
from ._deploy import load_config
from ._commands import HELP

#: Exit status of each verdict.
EXIT_STATUS = {"no violation found": 0, "violates": 3, "channel mismatch": 4}

#: ``--peer`` names: (adapter in dpdist.audit.peers, how its parameters come from --domain and --epsilon).
PEERS = {
    "opendp-rr": "opendp_randomized_response",
    "opendp-bitvec": "opendp_bitvector",
    "pure-ldp-de": "pure_ldp_direct_encoding",
    "pure-ldp-oue": "pure_ldp_unary_encoding",
    "pure-ldp-sue": "pure_ldp_unary_encoding",
    "multi-freq-ldpy-grr": "multi_freq_ldpy_grr",
    "multi-freq-ldpy-oue": "multi_freq_ldpy_ue",
    "multi-freq-ldpy-sue": "multi_freq_ldpy_ue",
    "pure-ldp-olh": "pure_ldp_local_hashing",
    "multi-freq-ldpy-olh": "multi_freq_ldpy_local_hashing",
}


def add_commands(subparsers) -> None:
    command = subparsers.add_parser(
        "audit",
        help=HELP["audit"],
        description="Draw outputs of a local randomizer on pairs of inputs and certify a lower bound on its realized "
        "epsilon (Clopper-Pearson on output events chosen on earlier outputs, confidence 1 - alpha); for a randomizer "
        "with a stated channel also its exact epsilon and a fit test. Verdict 'violates' (exit 3) only when the "
        "certified bound exceeds the claim; 'channel mismatch' (exit 4); else 'no violation found' (exit 0).",
    )
    target = command.add_mutually_exclusive_group(required=True)
    target.add_argument("--protocol", help="a dpdist protocol name (dpdist list), built with --epsilon and --domain")
    target.add_argument("--config", help="a dpdist protocol's config: a JSON file or an inline JSON object")
    target.add_argument("--callable", metavar="MODULE:FUNCTION",
                        help="any randomizer: FUNCTION(values) -> outputs (or FUNCTION(values, rng)), importable")
    target.add_argument("--peer", choices=sorted(PEERS), help="another library's randomizer (needs that library)")
    command.add_argument("--epsilon", type=float, default=None,
                         help="the epsilon of --protocol/--peer, and the claim of --callable")
    command.add_argument("--claim", type=float, default=None,
                         help="audit against this claim instead of the randomizer's own epsilon")
    command.add_argument("--domain", default=None,
                         help="D items 0..D-1, or real bounds LO,HI (default: the protocol's)")
    command.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                         help="another parameter of --protocol (VALUE as JSON), repeatable")
    command.add_argument("--reports", type=int, default=None,
                         help="a memoized protocol (l-grr, l-osue, loloha): one device's T reports of one value")
    command.add_argument("--alpha", type=float, default=1e-3, help="error rate: confidence is 1 - alpha (default 0.001)")
    command.add_argument("--samples", type=int, default=100_000, help="outputs per input at most (default 100000)")
    command.add_argument("--seed", type=seed_argument, default=None,
                         help="repeat the audit exactly (default: the CSPRNG, an audit nobody can steer)")
    command.add_argument("--json", action="store_true", help="print the result as JSON")
    command.add_argument("--plot", default=None, metavar="PNG", help="write the certified bound against samples")
    command.set_defaults(handler=_run_audit)
    from ..local import available  # lazy: the registry, for this sub-command only (dpdist --help stays light)

    state_rules(command, {
        "--protocol": Name((*available(), "auto")),
        "--claim": Described(Interval(0.0, math.inf, closed="left"), "a finite number >= 0"),
        "--alpha": Interval(0.0, 0.5, closed="neither"),
        "--samples": Integer(low=200),
        "--domain": OneOf((IntegerText(low=2, high=DOMAIN_SIZE.high), BOUNDS),  # a protocol's domain_size: its rule
                          f"an int from 2 to {DOMAIN_SIZE.high} or bounds LO,HI (two finite numbers, LO < HI)"),
        "--param": Each(Described(Text(pattern=r"(?s)[^=]+=.+"), "KEY=VALUE"), keys=True),
        "--callable": Described(Text(pattern=r"(?s)[^:]+:.+"), "MODULE:FUNCTION"),
        "--plot": PLOT,
    }, (Needs("--protocol", "--epsilon"), Needs("--callable", "--domain", "D items or bounds LO,HI"),
        NeedsAny(("--epsilon", "--claim"), "--callable", "the epsilon it claims"),
        Needs("--peer", "--epsilon", "the epsilon of the other library's randomizer"),
        Needs("--peer", "--domain", "D items of the other library's randomizer"),
        # settings of a randomizer that the chosen one does not take (they were ignored)
        *(Excludes("--config", option, "the config states the protocol's parameters") for option in
          ("--epsilon", "--domain")),
        *(Excludes("--param", option, "it is another parameter of the protocol built from --protocol") for option in
          ("--config", "--callable", "--peer")),
        *(Excludes("--reports", option, "it is for a memoized dpdist protocol") for option in ("--callable", "--peer"))))


def _run_audit(args) -> int:
    from .. import audit  # lazy: loads scipy (0.4-2 s); dpdist --help stays light

    domain = args.domain  # D items (an int) or bounds (lo, hi), or None; --plot, --param, --callable: the option table
    if args.protocol is not None or args.config is not None:
        protocol = load_config(args.config) if args.config is not None else _protocol(args, domain)
        randomizer = audit.protocol_randomizer(protocol, reports=args.reports)
    elif args.peer is not None:
        randomizer = _peer(args, domain)
    else:
        randomizer = _callable(args.callable)  # with --epsilon or --claim: the option table
    claim = args.claim if args.claim is not None else (args.epsilon if args.callable is not None else None)
    result = audit.audit(randomizer, claim, domain if args.callable is not None else None, alpha=args.alpha,
                         samples=args.samples, rng=args.seed)
    if args.plot:
        from ..estimates._drawing import pyplot, save_figure  # lazy: matplotlib, only for --plot

        axis = result.plot()
        save_figure(axis.figure, args.plot, bbox_inches="tight")  # the x label inside the image
        pyplot().close(axis.figure)
    print(result.to_json(indent=2) if args.json else result.text())
    return EXIT_STATUS[result.verdict]


def _parameters_of(name: str) -> set[str]:
    """The parameters the protocol ``name`` is built with (its constraints table; ``auto``, a frequency oracle's
    chooser, takes D items)."""
    from ..local._registry import registered_class  # lazy: only --protocol builds a protocol

    if name == "auto":
        return {"domain_size"}
    return set(registered_class(name)._constraints)


def _protocol(args, domain):
    from ..local import make  # lazy: only --protocol builds a protocol

    params: dict[str, Any] = {"epsilon": args.epsilon}
    if domain is not None:
        key = "domain_size" if isinstance(domain, int) else "bounds"
        taken = _parameters_of(args.protocol) & {"domain_size", "bounds"}
        if key not in taken:
            given = domain if isinstance(domain, int) else ",".join(f"{end:g}" for end in domain)
            if not taken:
                raise InvalidParameterError(f"The '--domain' option does not apply to --protocol {args.protocol}: it "
                                            f"takes neither D items nor bounds (give its parameters with --param "
                                            f"KEY=VALUE). Got {given}.")
            wanted = "bounds LO,HI" if "bounds" in taken else "D items (an int >= 2)"
            raise InvalidParameterError(f"The '--domain' option of --protocol {args.protocol} must be {wanted}. "
                                        f"Got {given}.")
        params[key] = domain
    for item in args.param:
        key, _, value = item.partition("=")  # KEY=VALUE: the option table
        try:
            params[key] = json.loads(value)
        except ValueError:
            params[key] = value
    return make(args.protocol, **params)


def _peer(args, domain):
    from ..audit import peers  # lazy: loads scipy (0.4-2 s), like dpdist.audit

    if not isinstance(domain, int):  # --epsilon and --domain given: the option table
        raise InvalidParameterError(f"The '--domain' option must be D items (an int >= 2) with --peer. Got {domain!r}.")
    adapter = getattr(peers, PEERS[args.peer])
    if args.peer == "opendp-bitvec":
        if domain % 8:
            raise InvalidParameterError(f"The '--domain' option must be a multiple of 8 with --peer opendp-bitvec. Got {domain}.")
        return adapter(domain, 2 / (1 + math.exp(args.epsilon / 2)))
    if args.peer.endswith("-oue") or args.peer.endswith("-sue"):
        return adapter(domain, args.epsilon, optimal=args.peer.endswith("-oue"))
    return adapter(domain, args.epsilon)


def _callable(text: str):
    module_name, _, function_name = text.partition(":")  # MODULE:FUNCTION: the option table
    sys.path.insert(0, "")  # the working directory, as python -m does
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise InvalidParameterError(f"The '--callable' option names a module that cannot be imported: {error}") from None
    finally:
        sys.path.remove("")
    function = getattr(module, function_name, None)
    if not callable(function):
        raise InvalidParameterError(f"The '--callable' option must name a function: {module_name} has no callable "
                                    f"{function_name!r}.")
    return function
