r"""The shared machinery of local hashing (OLH and FLH): the prime check and GRR over the hash values.

A user hashes the item into :math:`[0, g)` and reports the value with
:math:`g`-ary randomized response in its "keep, else uniform over all
:math:`g`" form: :math:`\lambda` is on the :math:`2^{-53}` grid
(:func:`dpdist.local._bernoulli.mixture_keep`), so ``U < lambda`` realizes it
exactly and :math:`p = \lambda + (1 - \lambda)/g`.  For another item hashed to
the same value with probability :math:`c` (:func:`_hashing.collision_probability`)
the report supports it with probability :math:`q = p c + (1 - p)(1 - c)/(g - 1)`.
"""

from __future__ import annotations

import numpy as np

from .._bernoulli import keep_or_uniform, mixture_keep
from . import _hashing
from ._oracle import FrequencyOracle

__all__ = ["LocalHashingOracle"]


class LocalHashingOracle(FrequencyOracle):
    """Base of the local-hashing protocols: a ``(function, perturbed value)`` report over a prime family."""

    #: the prime of the family and the range g of the hash values (set by the subclass's ``_setup``)
    _prime: int
    _g: int

    _relations = (*FrequencyOracle._relations, _hashing.PRIME_ABOVE_DOMAIN)

    def _checked_prime(self) -> int:
        """The ``hash_prime`` parameter (a prime at least ``domain_size``: its rule and the table's relation)."""
        return self._params["hash_prime"]

    def _setup_hashed_grr(self) -> None:
        """GRR over ``self._g`` values of hash ``self._prime``: ``_keep``, ``_p``, ``_collision`` and ``_q``."""
        self._keep = mixture_keep(self.epsilon, 1, self._g)
        self._p = self._keep + (1.0 - self._keep) / self._g
        self._collision = _hashing.collision_probability(self._prime, self._g)
        self._q = self._p * self._collision + (1 - self._p) * (1 - self._collision) / (self._g - 1)

    def _perturb(self, hashed: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """Each hash value kept with probability ``_keep``, else replaced by a uniform value of ``[0, g)``."""
        return keep_or_uniform(hashed, self._keep, self._g, rng)

    def _grr_law(self, hashed: np.ndarray, *divisors: float) -> np.ndarray:
        """``GRR_g(y | h)`` of each hash value of ``hashed`` and each ``y``: a trailing axis of length ``g``.

        Divided by each of ``divisors`` in turn (the channels' :math:`1/S` and PEM's :math:`1/G`): the two
        values are divided once and the law is written in place (a fill and a scatter), not compared and
        divided cell by cell; FLH's capped channels have millions of cells per item.
        """
        kept, other = self._p, (1 - self._p) / (self._g - 1)
        for divisor in divisors:
            kept, other = kept / divisor, other / divisor
        law = np.full((*np.shape(hashed), self._g), other)
        np.put_along_axis(law, np.asarray(hashed, dtype=np.int64)[..., None], kept, axis=-1)
        return law

    def report_hashes(self, reports: np.ndarray, items: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The stated hash family at work: ``(h(items) under each report's hash function, the reported value)``.

        ``h`` has shape ``(n reports, m items)``; a report supports item ``v`` when its value equals ``h(v)``.  What
        ``dpdist.audit`` conditions its events on (a wrong keep probability or an input-dependent choice of the hash
        shows in these columns, not in the report's raw seed).
        """
        reports, _ = self.report_format.read(reports)
        reports = reports.astype(np.int64)
        items = np.asarray(items, dtype=np.int64)
        return _hashing.hash_items(self._report_seeds(reports[:, 0])[:, None], items[None, :], self._prime, self._g), reports[:, 1]

    def _report_seeds(self, column: np.ndarray) -> np.ndarray:
        """The hash seed of each report's first column (OLH's is the seed itself; FLH's an index into its family)."""
        return column

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        return reports[:, 0].astype(np.int64) * self._g + reports[:, 1].astype(np.int64)
