"""What each party of a rung of the trust ladder can guess of one device's item, beside chance.

Every number is :mod:`dpdist.accounting._odds`'s, under two priors over the items: uniform (chance :math:`1/d`) and the
ladder's public data shape (chance its largest share).  A party that sees a device's report (the collector of the
local row; the relay and the collector together, of the shuffled one) guesses with the report's exact odds
(:func:`~dpdist.accounting.guess_odds`); a party the row's stated central guarantee holds against (the analyst; the
collector while the relay is honest) with at most the bound of that guarantee (:func:`~dpdist.accounting.guess_bound`,
which holds whatever else it knows of the other devices); a party that holds the raw items (the curator) guesses
every one; a party outside the guarantee (sample-and-threshold's aggregation server) is not bounded by it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._guarantee import PrivacyGuarantee
from ..accounting import guess_bound, guess_odds
from ..accounting._odds import percent

__all__ = ["PartyGuess", "party_guesses"]


@dataclass(frozen=True)
class PartyGuess:
    """How likely one party guesses a device's item: under a uniform prior and under the data shape's.

    ``uniform`` and ``shape`` are None where the row's guarantee does not bound the party; ``exact`` says whether they
    are the party's exact odds (else upper bounds)."""

    party: str
    uniform: float | None
    shape: float | None
    exact: bool
    how: str

    def text(self) -> str:
        if self.uniform is None or self.shape is None:
            return f"{self.party}: not bounded ({self.how})"
        at_most = "" if self.exact else "at most "
        return (f"{self.party}: {at_most}{percent(self.uniform, bound=True)} (data shape's prior: "
                f"{at_most}{percent(self.shape, bound=True)}; {self.how})")

    def to_dict(self) -> dict[str, Any]:
        return {"party": self.party, "uniform": self.uniform, "shape": self.shape, "exact": self.exact, "how": self.how}


def party_guesses(model: str, guarantee: PrivacyGuarantee | None, reported: Any, counts: np.ndarray) -> tuple[PartyGuess, ...]:
    """The parties of ``model``'s row: ``guarantee`` its stated central guarantee (None: not offered), ``reported``
    the protocol of one device's report (local and shuffled rows; None otherwise), ``counts`` the data shape."""
    if guarantee is None:
        return ()
    shape = np.asarray(counts, dtype=np.float64)
    chances = (1.0 / shape.size, float(shape.max() / shape.sum()))
    uniform, shaped = (guess_bound(guarantee.epsilon, guarantee.delta, chance=c) for c in chances)
    stated = PartyGuess(_WHO[model], uniform, shaped, False,
                        f"the stated ({guarantee.epsilon:.4g}, {guarantee.delta:.3g}) bound")
    if model == "local":
        return (_report(_WHO[model], reported, shape),)
    extra = {
        "shuffled": lambda: _report("the relay and the collector together", reported, shape),
        "sample-and-threshold": lambda: PartyGuess("the aggregation server", None, None, False,
                                                   "it sees what the stated guarantee does not cover"),
        "central (discrete Laplace)": lambda: PartyGuess("the curator", 1.0, 1.0, True, "it holds every raw item"),
        "central (Gaussian)": lambda: PartyGuess("the curator", 1.0, 1.0, True, "it holds every raw item"),
    }.get(model)
    return (stated,) if extra is None else (stated, extra())


def _report(party: str, protocol: Any, shape: np.ndarray) -> PartyGuess:
    uniform, weighted = guess_odds(protocol), guess_odds(protocol, prior=shape)
    return PartyGuess(party, uniform.probability[0], weighted.probability[0], uniform.exact[0] and weighted.exact[0],
                      f"one {protocol.display_name} report at epsilon {protocol.guarantee.epsilon:.4g}: "
                      + uniform.sources[0])


#: whom each row's first guess is of
_WHO = {
    "local": "anyone who sees a report (the collector)",
    "shuffled": "the collector and the analyst, the relay honest",
    "sample-and-threshold": "the analyst",
    "central (discrete Laplace)": "the analyst",
    "central (Gaussian)": "the analyst",
    "secure aggregation": "the server and the analyst",
}
