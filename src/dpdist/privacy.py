r"""Privacy guarantees as values, and the accountants that compose them: the face of both.

Every local protocol (``protocol.guarantee``) and every central release states what it
promises as a :class:`PrivacyGuarantee` (:math:`(\varepsilon, \delta)`, the neighbouring
relation and the model); budget splits go through :func:`split`, :func:`sequential`,
:func:`parallel` and :func:`convert` (the guarantee and this basic accountant:
``dpdist/_guarantee.py``, below every mechanism), and :func:`shuffled` states the central
guarantee of ``n`` shuffled reports of a local protocol (the amplification accountant,
:mod:`dpdist.amplification`, which sits above the protocols it accounts for).  Their
methods, relations and citations are in those modules.
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
from .amplification import shuffled

__all__ = [
    "PrivacyGuarantee", "local_guarantee", "sequential", "parallel", "split", "convert", "shuffled", "MODELS",
    "NEIGHBOURING", "OVER_TIME", "LOCAL_ONLY", "UNITS",
]
