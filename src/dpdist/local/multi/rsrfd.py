r"""Random sampling plus *realistic* fake data, ``rsrfd`` (Arcolezi, Gambs, Couchot, Palamidessi, PVLDB 2023).

RS+FD's uniform fake data let an attacker guess which attribute is real (a
uniform value is unlikely under a skewed attribute; PVLDB 2023 sec. 4).  RS+RFD
draws the fake data from public priors :math:`\tilde f_j` instead (census figures,
a previous collection; Alg. 1): for GRR the fake value is drawn from the prior and
sent as it is (line 6), for unary encodings the encoding of an item drawn from
the prior is randomized ("UE-r" with the prior).  The estimators subtract the
prior's share (eqs. 6 and 7),

.. math::

    \hat f^{GRR}(v) = \frac{k C(v) - n(q + (k-1)\tilde f_j(v))}{n(p - q)}, \qquad
    \hat f^{UE\text{-}r}(v) = \frac{k C(v) - n(q + (p-q)(k-1)\tilde f_j(v) + q(k-1))}{n(p - q)},

with variance :math:`k^2\gamma(1-\gamma)/(n(p-q)^2)`, :math:`\gamma` the probability that
a report supports :math:`v` (Thms. 2 and 4, eqs. 8 and 9).  Priors are realized on a
:math:`2^{-32}` grid (:func:`._fake.quantize_prior`) and the estimators use the realized prior.

Privacy is stated as for RS+FD (:mod:`.rsfd`): ``epsilon`` is the oracle's budget and
the record-level guarantee; ``attribute_guarantee`` is exact, and with a prior that
gives some item probability 0 it is ``epsilon`` itself (a report showing that item
can only be real).  A prior that differs from the data costs accuracy, never privacy:
it is public and independent of the users.
"""

from __future__ import annotations

import math
from typing import Any, cast
from dataclasses import dataclass

import numpy as np

from ..._validation import Constraint, Optional, SameSize
from ...errors import InvalidParameterError
from .._protocol import register
from ._fake import PriorItem, RandomizedItem, quantize_prior
from .rsfd import RandomSamplingFakeData

__all__ = ["RealisticFakeData"]


def _prior(value):
    if value is None:
        return None
    if isinstance(value, (str, bytes, dict)):
        raise ValueError
    prior = [float(entry) for entry in value]
    if len(prior) < 2 or not all(math.isfinite(entry) and entry >= 0 for entry in prior):
        raise ValueError
    if abs(math.fsum(prior) - 1.0) > 1e-6:
        raise ValueError
    return prior


@dataclass(frozen=True)
class Priors(Constraint):
    """One prior per attribute (``None``: uniform), each a list of non-negative floats summing to 1."""

    def check(self, value: Any) -> Any:
        if isinstance(value, (str, bytes, dict)) or not isinstance(value, (list, tuple)):
            raise ValueError
        return tuple(_prior(entry) for entry in value)

    def describe(self) -> str:
        return "a list with one prior per attribute: None (uniform) or a list of non-negative floats summing to 1"

    def invalid_examples(self) -> list:
        return ["uniform", [[0.5, 0.6]], [[-0.1, 1.1]], [[1.0]], [{"a": 1.0}]]


@register
class RealisticFakeData(RandomSamplingFakeData):
    """RS+FD with fake data drawn from public priors (see the module docstring).

    Parameters
    ----------
    epsilon : float
        The oracle's budget and the record-level guarantee.
    attributes : list of dict
        Categorical attributes; protocol one of ``grr``, ``oue``, ``sue``, ``olh``, ``ss``
        (given none: the lower variance of GRR and OUE with uniform fake data).
    priors : list, optional
        One prior per attribute (``None`` entries, or no list at all: uniform), each a list of
        ``domain_size`` non-negative floats summing to 1.
    """

    name = "rsrfd"
    summary = "several attributes: one sampled attribute at epsilon, fake data drawn from public priors"
    _constraints = {
        "epsilon": RandomSamplingFakeData._constraints["epsilon"],
        "attributes": RandomSamplingFakeData._constraints["attributes"],
        "priors": Optional(Priors()),
    }
    _relations = (SameSize("priors", "attributes", why="one prior per attribute", counterexample={
        "attributes": [{"name": "a", "domain_size": 2}, {"name": "b", "domain_size": 3}], "priors": [None]}),)
    _defaults = {"priors": None}

    @property
    def _fake_mode(self) -> str:
        """The oracles' own randomizer on a prior item (UE-r); GRR sends the prior item as it is."""
        return "random"

    def _fake_data(self, index):
        attribute, inner = self._attributes[index], self._inner[index]
        priors = self._params["priors"]
        prior = None if priors is None else priors[index]  # one per attribute: the table's relation
        if prior is not None and len(prior) != attribute.domain_size:
            raise InvalidParameterError(
                f"The 'priors' parameter of {self.display_name}: the prior of attribute {attribute.name!r} must hold "
                f"domain_size={attribute.domain_size} probabilities. Got {len(prior)} instead."
            )
        weights = quantize_prior(np.ones(attribute.domain_size) if prior is None else np.asarray(prior))
        if inner.name == "grr":
            return PriorItem(inner, weights)
        return RandomizedItem(inner, None if prior is None else weights)

    @property
    def realized_priors(self) -> list[np.ndarray]:
        """Each attribute's prior as sampled (multiples of 2^-32)."""
        return [cast("PriorItem | RandomizedItem", fake).prior.copy() for fake in self._fakes]  # what _fake_data makes
