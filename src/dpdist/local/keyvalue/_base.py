r"""Base of the key-value protocols: sets of pairs in, one report per user, a :class:`KeyValueEstimate` out.

Owns the input (:func:`~._sets.check_sets`: a :class:`~._sets.KeyValueSets` or a dense ``(n, d)``
array, NaN where a key is not held), the public parameters every such protocol shares
(``epsilon``, ``domain_size``), the estimate's wrapping and the exact channel over *sets*: a
report's law given a user's whole set is finite (one key, a sign), so ``channel(values)`` gives
``Pr[report | set]`` for each set of ``values`` and the conformance kit checks the stated epsilon on
it exactly, for every set of a small domain with values at -1, 1 and between (the law is linear
in each value, so the extreme ratios are at the ends).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ..._types import ArrayLike, Seed
from ..._validation import DOMAIN_SIZE, EPSILON
from ...errors import InvalidParameterError
from ...estimates import FrequencyEstimate
from .._aggregator import Aggregator
from .._protocol import LocalProtocol, ProtocolTags
from ._result import KeyValueEstimate
from ._sets import KeyValueSets, check_sets

__all__ = ["KeyValueProtocol", "every_set"]

#: a key's mean is stated only where its frequency estimate is at least this many standard errors above zero
#: (one-sided, about 2.3% of keys nobody holds pass under the normal approximation); below, too few of the
#: reports that say "this key" come from holders for the mean to mean anything (a key no one holds gets a
#: mean made of noise alone, Gu et al. 2020 Sec. V-B corrects counts only where holders exist)
MEAN_MIN_Z = 2.0

#: the largest domain whose every set ``channel(None)`` enumerates (4 states a key: 4^8 sets)
_ENUMERATED_KEYS = 8


def every_set(domain_size: int) -> np.ndarray:
    """Every set of a small domain, each key absent (NaN) or held with value -1, 0.25 or 1: ``(4^d, d)``."""
    if domain_size > _ENUMERATED_KEYS:
        raise InvalidParameterError(
            f"channel(None) enumerates every set only for domain_size <= {_ENUMERATED_KEYS}. Got {domain_size}: "
            "pass the sets whose rows you want."
        )
    states = np.array([np.nan, -1.0, 0.25, 1.0])
    grids = np.meshgrid(*[states] * domain_size, indexing="ij")
    return np.stack([grid.ravel() for grid in grids], axis=1)


def _withhold_means(
    frequencies: np.ndarray, variance: np.ndarray, means: np.ndarray, details: dict[str, Any]
) -> tuple[np.ndarray, dict[str, Any]]:
    """``means`` with NaN (not estimated) where a key's frequency is not :data:`MEAN_MIN_Z` standard errors above
    zero, and ``details`` with a note saying which keys and why (``details["means_withheld"]``: their indices;
    ``details["estimator_means"]``: the paper's estimator's every mean, noise included, for benchmarks that
    measure it as the paper does)."""
    withheld = ~(frequencies >= MEAN_MIN_Z * np.sqrt(variance))
    details = dict(details)
    details["estimator_means"] = means.copy()
    details["means_withheld"] = [int(k) for k in np.flatnonzero(withheld)]
    if not withheld.any():
        return means, details
    shown = details["means_withheld"][:20]
    keys = ", ".join(map(str, shown)) + (" ..." if withheld.sum() > 20 else "")
    details["notes"] = [*details.get("notes", ()), (
        f"means not estimated for {int(withheld.sum())} key(s) ({keys}): their frequency is below "
        f"{MEAN_MIN_Z:g} standard errors of its estimate, so no holders are clearly present"
    )]
    return np.where(withheld, np.nan, means), details


class KeyValueProtocol(LocalProtocol):
    """Base of protocols whose users each hold a set of (key, value) pairs (see the module docstring).

    Subclasses implement ``_privatize(sets, rng)``, the report format, ``_accumulate``,
    :meth:`_channel_of_sets` and :meth:`_estimate_parts`.
    """

    tags = ProtocolTags(kind="key_value", finite_channel=True, exact_simulate=False, unbiased=True)
    _constraints = {"epsilon": EPSILON, "domain_size": DOMAIN_SIZE}

    @property
    def domain_size(self) -> int:
        """The number of keys ``d``; keys are ints in ``[0, d)``."""
        return int(self._params["domain_size"])

    # ------------------------------------------------------------------ input
    def _check_values(self, values) -> KeyValueSets:  # type: ignore[override]  # sets of pairs, not an array
        return check_sets(values, self.domain_size, self._values_owner())

    def simulate(self, values: ArrayLike | KeyValueSets, rng: Seed = None) -> Aggregator[LocalProtocol]:
        """An aggregator distributed exactly as one that added ``privatize(values)``."""
        sets = check_sets(values, self.domain_size, f"{self.display_name}.simulate")
        return super().simulate(cast(Any, sets), rng)  # checked again as sets by _check_values

    # ------------------------------------------------------------------ estimation
    def _estimate(self, aggregator) -> KeyValueEstimate:
        n = aggregator.n
        frequencies, means, details = self._estimate_parts(aggregator.statistic, n)
        variance = self.variance(n, np.clip(frequencies, 0.0, 1.0))
        frequency = FrequencyEstimate(
            frequencies, n, variance, self.epsilon, self.name, "none", dict(details), self.guarantee
        )
        means, details = _withhold_means(frequencies, variance, np.asarray(means, dtype=np.float64), details)
        return KeyValueEstimate(frequency, means, n, self.epsilon, self.name, self.guarantee, details)

    def _estimate_parts(self, statistic: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
        raise NotImplementedError

    # ------------------------------------------------------------------ channel
    def channel(self, values: ArrayLike | KeyValueSets | None = None) -> np.ndarray:
        """Exact ``P[i, y] = Pr[report y | set values[i]]`` (outputs as :meth:`report_index`).

        ``values``: sets as :meth:`privatize` takes them; ``None``: :func:`every_set` of a small domain.
        """
        sets = check_sets(every_set(self.domain_size) if values is None else values, self.domain_size,
                          f"{self.display_name}.channel")
        return self._channel_of_sets(sets)

    def _channel_of_sets(self, sets: KeyValueSets) -> np.ndarray:
        raise NotImplementedError
