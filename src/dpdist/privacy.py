r"""Privacy guarantees as values, and the accountants that compose them: the face of both.

Every local protocol (``protocol.guarantee``) and every central release states what it
promises as a :class:`PrivacyGuarantee` (:math:`(\varepsilon, \delta)`, the neighbouring
relation and the model); budget splits go through :func:`split`, :func:`sequential`,
:func:`parallel` and :func:`convert` (the guarantee and this basic accountant:
``dpdist/_guarantee.py``, below every mechanism), and :func:`shuffled` states the central
guarantee of ``n`` shuffled reports of a local protocol (the amplification accountant,
:mod:`dpdist.amplification`, which sits above the protocols it accounts for).  What a guarantee means for a
person, in odds (:mod:`dpdist.accounting._odds`): :func:`guess_odds`, how likely an attacker who sees a device's
reports guesses its value, beside chance, and :func:`tradeoff`, a membership test's true-positive rate at a
false-positive rate.  Their methods, relations and citations are in those modules.
"""

from ._guarantee import (
    LOCAL_ONLY,
    MODELS,
    NEIGHBOURING,
    OVER_TIME,
    UNITS,
    PrivacyGuarantee,
    convert,
    local_guarantee,
    parallel,
    sequential,
    split,
)
from .accounting import GuessOdds, TradeOff, guess_bound, guess_odds, tradeoff
from .amplification import shuffled

__all__ = [
    "PrivacyGuarantee", "local_guarantee", "sequential", "parallel", "split", "convert", "shuffled", "MODELS",
    "NEIGHBOURING", "OVER_TIME", "LOCAL_ONLY", "UNITS", "guess_odds", "guess_bound", "tradeoff", "GuessOdds", "TradeOff",
]
