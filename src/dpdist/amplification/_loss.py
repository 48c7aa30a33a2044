r"""A relayed campaign's rounds as a :class:`~dpdist.accounting.PrivacyLoss`, to compose with other charges.

Each round of ``n`` shuffled fresh reports is dominated by the pair :mod:`._composition` builds from the
round's hockey-stick bound (connect-the-dots on the reductions' curve); ``rounds`` rounds compose as that
pair repeated.  :func:`shuffled` states the rounds' :math:`(\varepsilon, \delta)` by the lattice composition of
:mod:`dpdist.accounting._lattice` (exact for the discrete pair, its floating-point error carried); the returned loss
carries the same pair, so that a budget session's ``"pld"`` accountant composes the rounds with the session's other
charges on the pair's own lattice and states the same figure.  On GRR (:math:`\varepsilon_0` = 4, d = 3, n = 10^5,
30 rounds, :math:`\delta = 10^{-8}`) it gives 0.8889, and ``dp_accounting`` (step :math:`10^{-4}`) 0.8903, within
its discretization error of 0.003 (``docs/reference/benchmarks/anonymity.md``, "Accountants").
"""

from __future__ import annotations

import json

from .._guarantee import PrivacyGuarantee
from .._validation import validate_params
from ..accounting import Atoms, Composed, PrivacyLoss
from ..local import LocalProtocol
from . import _composition
from ._accounting import SHUFFLE_ASSUMPTIONS, _Bound, _reductions, account
from ._checks import PROTOCOL, check_protocol

__all__ = ["shuffled_loss", "SHUFFLE_ASSUMPTIONS"]  # (SHUFFLE_ASSUMPTIONS: a shuffled guarantee's, _accounting's)


@validate_params({"protocol": PROTOCOL})
def shuffled_loss(protocol: LocalProtocol, n: int, delta: float, rounds: int = 1) -> PrivacyLoss:
    """The central loss of ``rounds`` rounds of ``n`` shuffled reports of ``protocol``: its guarantee at ``delta``
    (:func:`~dpdist.amplification.shuffled`) and the rounds' dominating pair (module docstring).  No zCDP."""
    protocol = check_protocol(protocol)
    result = account(protocol, n, delta, "numerical", rounds)
    guarantee = PrivacyGuarantee(max(result.epsilon, 1e-12), result.delta, "replace", "central")
    epsilon0 = float(protocol.guarantee.epsilon)
    classes, _ = _reductions(protocol, epsilon0, "numerical", [])
    bound = _Bound(classes, result.n)
    one = _composition.round_distribution(bound.curve, bound.within, bound.t_max, rounds, delta)
    if one is None:  # each round's total variation is below delta / rounds / 1000: all of it at +infinity
        floor = float(bound.curve([0.0])[0])
        atoms = Atoms((0.0,), (1.0 - floor,), floor)
    else:
        atoms = Atoms(tuple(float(x) for x in one.losses()), tuple(float(m) for m in one.mass), float(one.infinity))
    distribution = atoms if rounds == 1 else Composed(((atoms, rounds),))
    source = f"{rounds} round(s) of {n} shuffled reports of {protocol.display_name} ({result.method} reductions)"
    derivation = {"kind": "shuffled", "config": json.loads(json.dumps(protocol.config(), sort_keys=True, default=str)),
                  "n": int(n), "delta": float(delta), "rounds": int(rounds)}
    return PrivacyLoss(guarantee, None, distribution, source, SHUFFLE_ASSUMPTIONS, derivation)
