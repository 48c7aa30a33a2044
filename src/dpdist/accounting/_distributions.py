r"""Privacy loss distributions as values: what a mechanism's dominating pair is, in JSON-safe numbers.

A privacy loss distribution (PLD) of an ordered pair of output laws :math:`(P, Q)` is the law of
:math:`L = \log(P(Y)/Q(Y))`, :math:`Y \sim P`; :math:`\delta(\varepsilon) = \mathbb E_P[(1 -
e^{\varepsilon - L})_+] + P(L = \infty)` is the pair's hockey-stick divergence (Dwork & Rothblum
2016; Sommer, Meiser & Mohammadi, PETS 2019).  Each value here describes a pair that *dominates* every
ordered neighbouring pair of a mechanism (its :math:`\delta(\varepsilon)` is at least theirs at every
:math:`\varepsilon`, both orders: Zhu, Dathathri & Gopi, AISTATS 2022), so that pairs compose: the
composition of mechanisms, adaptively chosen, is dominated by the product of their pairs, whose loss
is the sum of independent losses.

* :class:`Atoms`: finitely many losses and their masses under :math:`P`, plus a mass at :math:`+\infty`
  (a finite channel's pair, randomized response, the discrete Laplace mechanism, an
  :math:`(\varepsilon, \delta)` mechanism's worst case);
* :class:`GaussianLoss`: the Gaussian mechanism of noise :math:`\sigma` per unit of l2 sensitivity;
* :class:`Curve`: upper bounds on :math:`\delta(\varepsilon)` at a grid of :math:`\varepsilon`, for the
  worst of several pairs (a non-symmetric channel, releases over disjoint parts), turned into a
  dominating pair by pessimistic "connect the dots" (Doroshenko, Ghazi, Kamath, Kumar & Manurangsi,
  PETS 2022);
* :class:`Composed`: a sequence of the above, each repeated ``count`` times (sequential composition).

They are numbers only: :mod:`._pld` puts them on lattices, composes and converts them when a number is asked for.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Union

import numpy as np

from .._documents import ABSENT, check_document, describe_value, read_dataclass, read_part, refused
from .._validation import InstanceOf, Integer, Interval, Items, SameSize, TupleOf, validate_params
from ..errors import InvalidParameterError

__all__ = ["Atoms", "GaussianLoss", "Curve", "Composed", "LossDistribution", "LOSS_DISTRIBUTION", "loss_from_dict", "pure_atoms",
           "approximate_atoms", "pair_atoms", "pair_parts"]

#: losses closer than this (absolute) are one atom
_SAME_LOSS = 1e-12


@validate_params({
    "losses": Items(Interval(), "a non-empty list of finite floats", min_length=1),
    "masses": Items(Interval(0.0, math.inf, closed="left"), "a non-empty list of finite floats >= 0", min_length=1),
    "infinity": Interval(0.0, 1.0, closed="both"),
}, relations=(SameSize("masses", "losses", why="one mass per loss", counterexample={"losses": [0.0, 1.0], "masses": [1.0]}),))
@dataclass(frozen=True)
class Atoms:
    """A privacy loss that takes finitely many values: ``masses[i]`` at ``losses[i]`` (under :math:`P`), and
    ``infinity`` at :math:`+\\infty`."""

    losses: tuple[float, ...]
    masses: tuple[float, ...]
    infinity: float = 0.0

    def __post_init__(self):
        total = math.fsum(self.masses) + self.infinity
        if abs(total - 1.0) > 1e-9:
            raise InvalidParameterError(f"A privacy loss's masses and its infinity must sum to 1. Got {total!r}.")

    @property
    def largest(self) -> float:
        """The largest finite loss with positive mass (its pure epsilon when ``infinity`` is 0)."""
        masses = np.asarray(self.masses)
        return float(np.max(np.asarray(self.losses)[masses > 0])) if np.any(masses > 0) else 0.0

    def delta(self, epsilon: float) -> float:
        r"""Its exact :math:`\delta(\varepsilon)` (one pair, no composition)."""
        losses, masses = np.asarray(self.losses), np.asarray(self.masses)
        above = losses > epsilon
        return float(np.dot(masses[above], -np.expm1(epsilon - losses[above]))) + self.infinity

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "atoms", "losses": list(self.losses), "masses": list(self.masses), "infinity": self.infinity}


@validate_params({"sigma": Interval(0.0, math.inf, closed="neither")})
@dataclass(frozen=True)
class GaussianLoss:
    r"""The Gaussian mechanism: noise :math:`\mathcal N(0, \sigma^2)` per unit of l2 sensitivity (its loss is
    :math:`\mathcal N(\mu, 2\mu)` with :math:`\mu = 1/(2\sigma^2)`; Balle & Wang 2018)."""

    sigma: float

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "gaussian", "sigma": self.sigma}


@validate_params({
    "epsilons": Items(Interval(), "two or more increasing finite floats", min_length=2, increasing=True),
    "deltas": Items(Interval(0.0, 1.0, closed="both"), "two or more floats in [0, 1]", min_length=2),
}, relations=(SameSize("deltas", "epsilons", why="one delta per epsilon",
                       counterexample={"epsilons": [0.0, 1.0], "deltas": [0.5, 0.5, 0.5]}),))
@dataclass(frozen=True)
class Curve:
    r"""Upper bounds ``deltas[i]`` on every ordered neighbouring pair's :math:`\delta(\varepsilon_i)` at the
    increasing ``epsilons`` (negative ones included: :math:`\delta(\varepsilon) \ge 1 - e^\varepsilon` there);
    ``deltas[-1]`` is put at :math:`+\infty`."""

    epsilons: tuple[float, ...]
    deltas: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "curve", "epsilons": list(self.epsilons), "deltas": list(self.deltas)}


@dataclass(frozen=True)
class Composed:
    """Sequential composition: every ``(part, count)`` of ``parts``, ``count`` times (fresh randomness each)."""

    parts: tuple[tuple["LossDistribution", int], ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "composed", "parts": [{"loss": part.to_dict(), "count": count} for part, count in self.parts]}


LossDistribution = Union[Atoms, GaussianLoss, Curve, Composed]
#: a loss distribution as an argument
LOSS_DISTRIBUTION = InstanceOf((Atoms, GaussianLoss, Curve, Composed),
                               "a privacy loss distribution (Atoms, GaussianLoss, Curve or Composed)")
# (stated after the class: its parts may be Composed themselves)
validate_params({"parts": Items(TupleOf((LOSS_DISTRIBUTION, Integer(low=1)), ""),
                                "a non-empty list of (loss distribution, count >= 1) pairs", min_length=1)})(Composed)


def loss_from_dict(data: Any) -> LossDistribution:
    """The loss distribution of ``to_dict``; a missing, damaged or contradicted field is refused by name
    (:class:`~dpdist.errors.MalformedDocumentError`, an :class:`~dpdist.errors.IncompatibleStateError`; the one
    reader of results' documents, :mod:`dpdist._documents`)."""
    kinds: dict[str, type] = {"atoms": Atoms, "gaussian": GaussianLoss, "curve": Curve, "composed": Composed}
    kind = data.get("kind") if isinstance(data, dict) else None
    if not isinstance(kind, str) or kind not in kinds:
        raise refused("loss_from_dict", "kind", f"must be one of {list(kinds)} (a privacy loss distribution). Got "
                                                f"{describe_value(kind)}")

    def parts(name: str, document: Any) -> Any:  # a composition's parts: [{"loss": ..., "count": ...}, ...]
        if name != "parts":
            return ABSENT
        check_document(document.get("parts"), {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["loss", "count"], "properties": {"count": {"type": "integer", "minimum": 1}}}},
            "loss_from_dict", "parts")
        return tuple((read_part(loss_from_dict, part["loss"], "loss_from_dict", f"parts[{k}].loss"), int(part["count"]))
                     for k, part in enumerate(document["parts"]))

    return read_dataclass(kinds[kind], data, nested=parts, owner="loss_from_dict")


def pure_atoms(epsilon: float) -> Atoms:
    r"""Randomized response with :math:`\varepsilon`: the pair that dominates every :math:`\varepsilon`-DP
    mechanism's (Kairouz, Oh & Viswanath, ICML 2015, Thm. 2.4): :math:`L = \pm\varepsilon` with masses
    :math:`e^\varepsilon/(1+e^\varepsilon)` and :math:`1/(1+e^\varepsilon)`."""
    return approximate_atoms(epsilon, 0.0)


def approximate_atoms(epsilon: float, delta: float) -> Atoms:
    r"""The pair that dominates every :math:`(\varepsilon, \delta)`-DP mechanism's (Kairouz et al. 2015,
    Thm. 2.4; ``dp_accounting``'s ``from_privacy_parameters``): :math:`+\infty` with mass :math:`\delta`,
    :math:`\pm\varepsilon` with the rest in proportion :math:`e^{\pm\varepsilon}`."""
    high = (1.0 - delta) / (1.0 + math.exp(-epsilon))
    return Atoms((-epsilon, epsilon), (1.0 - delta - high, high), delta)


def pair_atoms(upper: np.ndarray, lower: np.ndarray) -> Atoms:
    r"""The exact loss of the ordered pair of laws ``(upper, lower)`` on the same outputs: :math:`\log(P/Q)` with
    mass :math:`P` (outputs only ``upper`` reaches go to :math:`+\infty`), equal losses merged, sorted."""
    losses, masses, infinity = pair_parts(upper, lower)
    return Atoms(losses, masses, infinity)


def pair_parts(upper: np.ndarray, lower: np.ndarray) -> tuple[tuple[float, ...], tuple[float, ...], float]:
    """``(losses, masses, infinity)`` of :func:`pair_atoms`, not yet checked as an :class:`Atoms` (a channel's
    thousands of pairs build the atoms of their distinct losses only)."""
    upper, lower = np.asarray(upper, dtype=np.float64), np.asarray(lower, dtype=np.float64)
    reached = upper > 0
    infinity = float(upper[reached & (lower <= 0)].sum())
    both = reached & (lower > 0)
    losses = np.log(upper[both]) - np.log(lower[both])
    masses = upper[both]
    order = np.argsort(losses, kind="stable")
    losses, masses = losses[order], masses[order]
    if not losses.size:
        return (0.0,), (0.0,), 1.0
    starts = np.concatenate([[True], np.diff(losses) > _SAME_LOSS])
    groups = np.cumsum(starts) - 1
    merged = np.bincount(groups, weights=masses)
    kept = losses[starts]
    return tuple(float(x) for x in kept), tuple(float(m) for m in merged), infinity
