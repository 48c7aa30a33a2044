r"""What one mechanism spends, in every currency it can be stated in: :class:`PrivacyLoss`, a value.

A :class:`PrivacyLoss` holds a mechanism's :class:`~dpdist.privacy.PrivacyGuarantee` (the
:math:`(\varepsilon, \delta)` that basic composition adds), its :math:`\rho`-zCDP when it has one, and a
privacy loss distribution of a pair that dominates its neighbouring pairs when it has one
(:mod:`._distributions`), with where these come from (``source``) and what they assume
(``assumptions``).  :func:`sequential` and :func:`parallel` compose losses into a loss: composition is
a function of values (OpenDP's measures and combinators).  An accountant (:mod:`._accountants`) reads
one currency off the result.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

import numpy as np

from .._documents import ABSENT, read_dataclass, read_part
from .._guarantee import PrivacyGuarantee, parallel as basic_parallel, sequential as basic_sequential, with_assumptions
from .._validation import InstanceOf, Integer, Interval, Items, Optional, validate_params
from ..errors import InvalidPrivacyParameterError
from ._distributions import (
    Atoms,
    Composed,
    Curve,
    GaussianLoss,
    LossDistribution,
    approximate_atoms,
    loss_from_dict,
    pure_atoms,
)
from ._pld import deltas_at, mechanisms
from ._zcdp import pure_rho

__all__ = ["PrivacyLoss", "sequential", "repeated", "parallel", "FRESH_RANDOMNESS"]

#: what composing the losses of several mechanisms assumes of their randomness
FRESH_RANDOMNESS = "each mechanism draws fresh randomness (no report, memo or shuffle's sample reused across them)"


@validate_params({
    "guarantee": InstanceOf(PrivacyGuarantee, "a PrivacyGuarantee"),
    "rho": Optional(Interval(0.0, math.inf, closed="left")),
})
@dataclass(frozen=True)
class PrivacyLoss:
    r"""One mechanism's privacy loss in every currency it can be stated in.

    Parameters
    ----------
    guarantee : PrivacyGuarantee
        Its :math:`(\varepsilon, \delta)` under a neighbouring relation (what basic composition adds).
    rho : float, optional
        :math:`\rho`-zCDP under the same relation; None when it has none (a :math:`\delta > 0` guarantee).
    distribution : LossDistribution, optional
        The privacy loss distribution of a pair dominating every neighbouring pair; None when it has none.
    source : str
        Where the numbers come from (``"exact channel of grr (d = 16)"``, ``"any 0.1-DP mechanism"``).
    assumptions : tuple of str
        What they assume beyond the relation (fresh randomness, a shuffler that does not collude, ...).
    derivation : dict, optional
        How to compute this loss again from public parameters alone (``{"kind": "protocol", "config": ...,
        "reports": ...}``, ``"discrete_laplace"``, ``"gaussian"``, ``"shuffled"``): set by the functions that make
        it, kept by :meth:`assuming` and :meth:`restated`, None for a loss made by hand or composed.  A budget file
        derives every charge's loss again from it when read, so a stored loss that was edited is detected
        (:mod:`dpdist.budget._derivation`).  Not compared by ``==``.
    """

    guarantee: PrivacyGuarantee
    rho: float | None = None
    distribution: LossDistribution | None = field(default=None, repr=False)
    source: str = ""
    assumptions: tuple[str, ...] = ()
    derivation: dict | None = field(default=None, repr=False, compare=False)

    def __post_init__(self):
        rho = self.rho
        if rho is not None and self.guarantee.delta == 0 and rho > pure_rho(self.guarantee.epsilon) * (1 + 1e-9):
            object.__setattr__(self, "rho", pure_rho(self.guarantee.epsilon))  # a pure guarantee's own bound is smaller
        object.__setattr__(self, "assumptions", tuple(self.assumptions))

    # ------------------------------------------------------------------ constructors
    @classmethod
    def of_guarantee(cls, guarantee: PrivacyGuarantee, source: str = "") -> "PrivacyLoss":
        r"""What any mechanism stating ``guarantee`` spends: pure :math:`\varepsilon` gives :math:`\varepsilon^2/2`-zCDP
        and randomized response's loss (the worst :math:`\varepsilon`-DP pair); :math:`(\varepsilon, \delta)` gives the
        worst :math:`(\varepsilon, \delta)` pair and no zCDP.  What ``guarantee`` assumes, if it rests on assumptions
        (a shuffled guarantee, :class:`~dpdist.amplification.ShuffledGuarantee`), the loss assumes too."""
        assumed = tuple(getattr(guarantee, "assumptions", ()))
        if guarantee.pure:
            return cls(guarantee, pure_rho(guarantee.epsilon), pure_atoms(guarantee.epsilon),
                       source or f"any {guarantee.epsilon:g}-DP mechanism", assumed)
        return cls(guarantee, None, approximate_atoms(guarantee.epsilon, guarantee.delta),
                   source or f"any ({guarantee.epsilon:g}, {guarantee.delta:g})-DP mechanism", assumed)

    def assuming(self, *assumptions: str) -> "PrivacyLoss":
        """The same loss, stating ``assumptions`` too."""
        kept = tuple(dict.fromkeys((*self.assumptions, *assumptions)))
        return PrivacyLoss(self.guarantee, self.rho, self.distribution, self.source, kept, self.derivation)

    def derived_as(self, derivation: dict) -> "PrivacyLoss":
        """The same loss, with the ``derivation`` that computes it again (the class docstring)."""
        return PrivacyLoss(self.guarantee, self.rho, self.distribution, self.source, self.assumptions, dict(derivation))

    # ------------------------------------------------------------------ reading
    @property
    def mechanisms(self) -> int:
        """How many mechanisms it composes (1 for one release or report)."""
        return 1 if self.distribution is None else mechanisms(self.distribution)

    def describe(self, assumptions: bool = True) -> str:
        """One line: its currencies, where they come from, then what they assume (``"; assuming: ..."``; not with
        ``assumptions=False``, for a message that names the loss within a sentence)."""
        currencies = [self.guarantee.describe(assumptions=False)]
        if self.rho is not None:
            currencies.append(f"{self.rho:.6g}-zCDP")
        if self.distribution is not None:
            currencies.append("a privacy loss distribution")
        why = f" ({self.source})" if self.source else ""
        return with_assumptions(", ".join(currencies) + why, self.assumptions if assumptions else ())

    def restated(self, guarantee: PrivacyGuarantee) -> "PrivacyLoss":
        """The same loss under another (weaker or converted) ``guarantee``: the exact currencies are kept only when
        ``guarantee`` is its own, else the worst case of ``guarantee`` (a converted relation: group privacy)."""
        if guarantee == self.guarantee or (guarantee.epsilon == self.guarantee.epsilon
                                           and guarantee.delta == self.guarantee.delta):
            return PrivacyLoss(guarantee, self.rho, self.distribution, self.source, self.assumptions, self.derivation)
        converted = PrivacyLoss.of_guarantee(guarantee, f"{self.source or 'a mechanism'}, converted to {guarantee.neighbouring}")
        rho = None if self.rho is None else 4.0 * self.rho  # group privacy of two (Bun & Steinke 2016, Prop. 1.9)
        if rho is not None and converted.rho is not None:
            rho = min(rho, converted.rho)
        return PrivacyLoss(guarantee, rho, converted.distribution, converted.source, self.assumptions, self.derivation)

    # ------------------------------------------------------------------ JSON
    def to_dict(self) -> dict[str, Any]:
        document = {"guarantee": self.guarantee.to_dict(), "rho": self.rho,
                    "distribution": None if self.distribution is None else self.distribution.to_dict(),
                    "source": self.source, "assumptions": list(self.assumptions)}
        if self.derivation is not None:
            document["derivation"] = self.derivation
        return document

    @classmethod
    def from_dict(cls, data: Any) -> "PrivacyLoss":
        """The loss of :meth:`to_dict`; a missing, damaged or contradicted field is refused by name
        (:class:`~dpdist.errors.MalformedDocumentError`, an :class:`~dpdist.errors.IncompatibleStateError`)."""

        def distribution(name: str, document: Any) -> Any:
            if name != "distribution" or not isinstance(document, dict) or document.get(name) is None:
                return ABSENT if name != "distribution" or not isinstance(document, dict) or name not in document \
                    else None
            return read_part(loss_from_dict, document[name], "PrivacyLoss.from_dict", name)

        return read_dataclass(cls, data, nested=distribution)


#: the losses a composition takes
_LOSSES = Items(InstanceOf(PrivacyLoss, "a PrivacyLoss"), "a non-empty list of PrivacyLoss values", min_length=1)


@validate_params({"losses": _LOSSES}, owner="accounting.sequential")
def sequential(losses: Iterable[PrivacyLoss]) -> PrivacyLoss:
    r"""The loss of mechanisms run one after another on the same data, each with fresh randomness.

    Basic: :math:`(\sum\varepsilon_i, \sum\delta_i)` (:func:`dpdist.privacy.sequential`); zCDP: :math:`\sum\rho_i`
    (Bun & Steinke 2016, Lemma 2.3), when every part has one; PLD: the product of the dominating pairs (Zhu,
    Dathathri & Gopi 2022), when every part has one.  Equal parts are counted, not repeated.
    """
    losses = list(losses)  # (a list already: the table's)
    guarantee = basic_sequential(loss.guarantee for loss in losses)
    rho = None if any(loss.rho is None for loss in losses) else math.fsum(loss.rho or 0.0 for loss in losses)
    distribution: LossDistribution | None = None
    if all(loss.distribution is not None for loss in losses):
        counts: Counter = Counter()
        for loss in losses:
            for part, count in _parts(loss.distribution):
                counts[part] += count
        distribution = Composed(tuple(sorted(counts.items(), key=lambda item: repr(item[0]))))
    sources = sorted({loss.source for loss in losses if loss.source})
    assumptions = tuple(dict.fromkeys([a for loss in losses for a in loss.assumptions] + [FRESH_RANDOMNESS]))
    source = f"{len(losses)} mechanisms in sequence" + (f": {'; '.join(sources[:4])}" if sources else "")
    return PrivacyLoss(guarantee, rho, distribution, source + ("; ..." if len(sources) > 4 else ""), assumptions)


@validate_params({"loss": InstanceOf(PrivacyLoss, "a PrivacyLoss"), "times": Integer(low=1)}, owner="accounting.repeated")
def repeated(loss: PrivacyLoss, times: int) -> PrivacyLoss:
    r"""The loss of ``times`` runs of one mechanism, each with fresh randomness: :func:`sequential` of ``[loss] * times``
    without the list (a campaign of :math:`10^9` reports is one value): :math:`(k\varepsilon, k\delta)`, :math:`k\rho`,
    and the pair repeated ``times`` times."""
    if times == 1:
        return loss
    one = loss.guarantee
    guarantee = basic_sequential([one, one])  # the kind, the relation and what it assumes, checked as for a list
    if one.delta * times >= 1:
        raise InvalidPrivacyParameterError(f"accounting.repeated: the deltas add up to {one.delta * times!r} >= 1.")
    guarantee = dataclasses.replace(guarantee, epsilon=one.epsilon * times, delta=one.delta * times,
                                    reports=None if guarantee.reports is None else (one.reports or 0) * times)
    rho = None if loss.rho is None else loss.rho * times
    distribution = None if loss.distribution is None else Composed(tuple(
        (part, count * times) for part, count in _parts(loss.distribution)))
    assumptions = tuple(dict.fromkeys([*loss.assumptions, FRESH_RANDOMNESS]))
    source = f"{times} mechanisms in sequence" + (f": {loss.source}" if loss.source else "")
    return PrivacyLoss(guarantee, rho, distribution, source, assumptions)


def _parts(distribution) -> Sequence[tuple[LossDistribution, int]]:
    return distribution.parts if isinstance(distribution, Composed) else ((distribution, 1),)


@validate_params({"losses": _LOSSES}, owner="accounting.parallel")
def parallel(losses: Iterable[PrivacyLoss]) -> PrivacyLoss:
    r"""The loss of mechanisms run on disjoint parts of the data (each record in one part, parts fixed by public
    rules): the worst part.  Basic: max :math:`\varepsilon`, max :math:`\delta`; zCDP: max :math:`\rho`; PLD: a pair
    dominating every part's (the part itself when all are equal, else connect-the-dots on the largest of their
    curves, :func:`_envelope`)."""
    losses = list(losses)  # (a list already: the table's)
    guarantee = basic_parallel(loss.guarantee for loss in losses)
    rho = None if any(loss.rho is None for loss in losses) else max(loss.rho or 0.0 for loss in losses)
    distributions = [loss.distribution for loss in losses]
    distribution: LossDistribution | None = None
    if all(d is not None for d in distributions):
        distinct = list(dict.fromkeys(distributions))
        distribution = distinct[0] if len(distinct) == 1 else _envelope(distinct)
    assumptions = tuple(dict.fromkeys(a for loss in losses for a in loss.assumptions))
    return PrivacyLoss(guarantee, rho, distribution, f"the worst of {len(losses)} disjoint parts", assumptions)


def _envelope(distributions: list) -> Curve:
    """A curve above every one of ``distributions``' delta(epsilon), on a symmetric grid of 2001 epsilons (their
    composed lattices give upper bounds; the curve is their largest, connect-the-dots makes it a pair)."""
    top = max(_largest_loss(d) for d in distributions)
    epsilons = top * (np.arange(2001) / 1000.0 - 1.0)
    deltas = np.max([deltas_at(d, epsilons) for d in distributions], axis=0)
    return Curve(tuple(float(e) for e in epsilons), tuple(float(min(1.0, d)) for d in deltas))


def _largest_loss(distribution) -> float:
    if isinstance(distribution, Atoms):
        return max(abs(x) for x in distribution.losses)
    if isinstance(distribution, Curve):
        return max(abs(x) for x in distribution.epsilons)
    if isinstance(distribution, GaussianLoss):
        mean = 0.5 / distribution.sigma**2
        return mean + 12.0 * math.sqrt(2.0 * mean)
    return sum(count * _largest_loss(part) for part, count in distribution.parts)
