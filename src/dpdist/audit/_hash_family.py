r"""Auditing a local-hashing randomizer conditioned on the hash family it states.

A local-hashing report is a hash function's seed (or index) and a perturbed hash value.  Its privacy loss
lives in the event "the value equals :math:`h_s(x)` and not :math:`h_s(x')`" for the report's own
:math:`s`: seeds are uniform over billions of values, so no cell of raw (seed, value) outputs tells two
items apart, and the black box alone certifies 0 (OLH, RLH, OCMS).  LDP-Auditor reaches OLH with an attack
that knows the hash family (Arcolezi & Gambs 2023, arXiv:2309.01597, Sec. 4); here the randomizer states
its family (:class:`HashFamily`) and every output gets, beside its own numbers, two columns per audited
input :math:`x_j`: whether the report supports :math:`x_j` (its value equals :math:`h_s(x_j)`) and the
bucket :math:`h_s(x_j)` itself.  These are a fixed function of the output once the audited inputs are fixed,
so a post-processing: every bound stays valid (Dwork & Roth 2014, Proposition 2.1).  The columns mode then
finds, for a pair :math:`x, x'`, the event :math:`\{y = h_s(x),\ y \ne h_s(x')\}` whose ratio is exactly
:math:`p (g - 1) / (1 - p)`: a wrong keep probability is certified as the loss it causes, and a hash chosen
depending on the input (a seed redrawn until the item lands in some bucket) shows in the bucket columns.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from ..errors import InvalidParameterError
from ._draws import as_columns
from ._randomizer import Randomizer

__all__ = ["HashFamily", "conditioned_on_hash"]


@dataclass(frozen=True)
class HashFamily:
    """The hash family a local-hashing randomizer states.

    Attributes
    ----------
    hashes : callable
        ``hashes(outputs, items) -> (buckets, reported)``: ``buckets[i, j]`` the hash value of ``items[j]``
        under output ``i``'s hash function (its seed, or its index in a public family), ``reported[i]`` the
        hash value output ``i`` reports.
    name : str
        The family, for the report (e.g. ``"Carter-Wegman mod 2^31 - 1, g = 4"``, ``"xxhash32(str(v), seed) % g"``).
    """

    hashes: Callable[[Any, np.ndarray], tuple[np.ndarray, np.ndarray]]
    name: str = "stated hash family"


def conditioned_on_hash(randomizer: Randomizer, inputs: np.ndarray) -> Randomizer:
    """``randomizer`` whose outputs are audited as their own numbers plus, per audited input, support and bucket."""
    family = randomizer.hash_family
    assert family is not None
    own = randomizer.features
    items = np.asarray(inputs)

    def features(outputs: Any) -> np.ndarray:
        buckets, reported = family.hashes(outputs, items)
        buckets, reported = np.asarray(buckets), np.asarray(reported).reshape(-1)
        if buckets.shape != (reported.size, items.shape[0]):
            raise InvalidParameterError(
                f"The hash family of {randomizer.name!r} must give one bucket per output and audited input, shape "
                f"({reported.size}, {items.shape[0]}). Got {buckets.shape}."
            )
        raw = as_columns(own(outputs) if own is not None else outputs, randomizer.name)
        return np.column_stack([raw, (buckets == reported[:, None]).astype(np.uint8), buckets])

    note = (f"conditioned on its stated hash family ({family.name}): per audited input, whether the report supports "
            f"it and its bucket under the report's hash")
    return dataclasses.replace(randomizer, features=features, notes=(*randomizer.notes, note))
