"""The protocols whose odds (``dpdist.accounting.guess_odds``) are checked over 8 values, taken from the registry.

Every registered frequency oracle and numerical protocol that reports fresh (not memoized) and takes a domain or bins:
over 8 values, each report's channel is enumerated where it can be (``tests/accounting/test_odds.py``), and the tables
of ``docs/explanation/odds.md`` are computed again from them (``tests/docs/test_odds.py``).
"""

from __future__ import annotations

from dpdist import local
from dpdist.errors import InvalidParameterError

#: the candidate values of every protocol here (a numerical protocol: this many equal bins of [0, 1])
VALUES = 8


def over_eight(name: str, epsilon: float):
    """Protocol ``name`` over :data:`VALUES` values, built from its parameters (None: it takes neither a domain nor
    bins, or needs more, as a memoized protocol's ``epsilon_1``): a domain of 8 or 8 bins of [0, 1]; a hashing
    protocol at the prime 11, the smallest above 8, where its channel is small enough to enumerate."""
    names = set(local.parameter_names(name))
    if "domain_size" in names:
        params: dict = {"domain_size": VALUES}
    elif {"bins", "bounds"} <= names:
        params = {"bounds": (0.0, 1.0), "bins": VALUES}
    else:
        return None
    if "hash_prime" in names:
        params["hash_prime"] = 11
    try:
        return local.make(name, epsilon=epsilon, **params)
    except InvalidParameterError:
        return None


def _fresh(name: str) -> bool:
    protocol = over_eight(name, 1.0)
    return protocol is not None and not protocol.tags.memoized and protocol.tags.kind in ("frequency", "numerical")


#: the registered protocols of fresh reports over 8 values, in registry order
FRESH = [name for name in local.available() if _fresh(name)]
