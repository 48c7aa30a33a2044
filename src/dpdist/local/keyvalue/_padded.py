r"""What PCKV-UE and PCKV-GRR share (Gu, Li, Cheng, Xiong, Cao, USENIX Security 2020).

* Padding-and-Sampling with padding length :math:`\ell` (Algorithm 1, :func:`~._sampling.pad_and_sample`)
  over the extended domain :math:`d' = d + \ell` of real and dummy keys;
* the statistic: for every key of :math:`d'`, how many reports say ``+1`` there (:math:`n_1`) and how many
  ``-1`` (:math:`n_2`), stored ``[n_1 of each key, n_2 of each key]``;
* the estimators of Algorithm 4: the frequency :math:`\hat f_k = \ell((n_1 + n_2)/n - b)/(a - b)`
  (unbiased when every user holds at most :math:`\ell` pairs; Theorem 4), and the corrected mean: the
  frequency clipped to :math:`[1/n, 1]`, :math:`N = n\hat f_k/\ell`, the counts of true ``+1`` and ``-1``
  solved from :math:`A [\hat n_1, \hat n_2]^T = [n_1 - nb/2, n_2 - nb/2]^T` with
  :math:`A = [[ap - b/2, a(1-p) - b/2], [a(1-p) - b/2, ap - b/2]]`, clipped to :math:`[1, N]`, and
  :math:`\hat m_k = (\hat n_1 - \hat n_2)/N`;
* the exact variance of :math:`\hat f_k`: the count :math:`n_1 + n_2` of key :math:`k` is a sum of
  independent Bernoulli draws, :math:`b + (a - b)/\ell` for a holder of :math:`k` (sampled with
  probability :math:`1/\ell`) and :math:`b` for anyone else, so

  .. math::

      \operatorname{Var}[\hat f_k] = \frac{\ell^2 b(1-b)}{n(a-b)^2}
          + \frac{f_k}{n}\left(\frac{\ell(1-2b)}{a-b} - 1\right),

  which is Theorem 4's expression for :math:`\ell = 1`; for :math:`\ell > 1` Theorem 4's second
  term reads :math:`\ell f_k(1-a-b)/(n(a-b))`, smaller than the exact one by :math:`(\ell-1)f_k/n`.

The realized probabilities ``a``, ``b``, ``p`` are multiples of :math:`2^{-53}` (``dpdist.local._bernoulli``),
chosen so that the *combined* report meets the stated epsilon exactly; the channel and the estimators use them.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, cast

import numpy as np

from ..._types import ArrayLike
from ..._validation import DOMAIN_SIZE, EPSILON, Integer
from .._bernoulli import GRID, realized
from ._base import KeyValueProtocol
from ._sampling import pad_and_sample
from ._sets import KeyValueSets

__all__ = ["PaddedKeyValue", "grid_ceil"]


def grid_ceil(value: Fraction) -> float:
    """The smallest multiple of :math:`2^{-53}` at least ``value``, within [0, 1]."""
    value = Fraction(value)
    k = -((-value.numerator * GRID) // value.denominator)
    return min(max(k, 0), GRID) / GRID


class PaddedKeyValue(KeyValueProtocol):
    """Base of PCKV-UE and PCKV-GRR (see the module docstring).

    Parameters
    ----------
    epsilon : float
        The budget of the combined key-and-value report (split between key and value by the
        paper's optimized allocation).
    domain_size : int
        Number of keys ``d >= 2``.
    padding_length : int
        :math:`\\ell \\ge 1`, the padding length of Padding-and-Sampling (default 1: every user with
        at most one pair is counted without bias).
    """

    _constraints = {"epsilon": EPSILON, "domain_size": DOMAIN_SIZE, "padding_length": Integer(low=1, high=2**20)}
    _defaults = {"padding_length": 1}
    #: the realized probabilities (set by each protocol's ``_setup``)
    _a: float
    _b: float
    _p: float

    @property
    def padding_length(self) -> int:
        return int(self._params["padding_length"])

    @property
    def extended_size(self) -> int:
        """:math:`d' = d + \\ell`: the real keys and the dummy keys."""
        return self.domain_size + self.padding_length

    def perturbation_probabilities(self) -> tuple[float, float, float]:
        """``(a, b, p)`` as realized: a sampled key reported w.p. ``a``, another w.p. ``b``; the value kept w.p. ``p``."""
        return self._a, self._b, self._p

    @property
    def statistic_size(self) -> int:
        return 2 * self.extended_size

    def _client_design(self):
        """``a``, ``b``, ``p`` as realized: the JavaScript client derives the same from epsilon (clients/js/src/protocols/_padded.js)."""
        return {"a": self._a, "b": self._b, "p": self._p}

    # ------------------------------------------------------------------ sampling, as a law over (key, sign)
    def _sample_law(self, sets: KeyValueSets) -> np.ndarray:
        r"""``W[u, k, s]``: the probability that user ``u`` samples key ``k`` of :math:`d'` with :math:`v^* = \pm 1`
        (``s = 0``: +1), from Algorithm 1 and the discretization's realized probability."""
        n, ell, d = len(sets), self.padding_length, self.domain_size
        width = np.maximum(sets.lengths, ell).astype(np.float64)
        law = np.zeros((n, self.extended_size, 2))
        users = np.repeat(np.arange(n), sets.lengths)
        up = realized((1.0 + sets.values) / 2.0)
        law[users, sets.keys, 0] = up / width[users]
        law[users, sets.keys, 1] = (1.0 - up) / width[users]
        dummy = (1.0 - sets.lengths / width) / ell / 2.0
        law[:, d:, :] = dummy[:, None, None]
        return law

    def _channel_of_sets(self, sets):
        law = self._sample_law(sets)
        return law.reshape(len(sets), -1) @ self._pair_channel()

    def _pair_channel(self) -> np.ndarray:
        """``Pr[output | sampled key k, sign s]``, rows ``2k + s``."""
        raise NotImplementedError

    def _sample(self, values: object, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Algorithm 1 on ``values``, the :class:`KeyValueSets` that ``_check_values`` made of the input."""
        return pad_and_sample(cast(KeyValueSets, values), self.domain_size, self.padding_length, rng)

    # ------------------------------------------------------------------ estimation (Algorithm 4)
    def _estimate_parts(self, statistic, n):
        a, b, p = self._a, self._b, self._p
        ell, d = self.padding_length, self.domain_size
        d_ext = self.extended_size
        n1 = statistic[:d].astype(np.float64)
        n2 = statistic[d_ext : d_ext + d].astype(np.float64)
        frequencies = ell * ((n1 + n2) / n - b) / (a - b)
        clipped = np.clip(frequencies, 1.0 / n, 1.0)
        holders = n * clipped / ell
        alpha, beta = a * p - b / 2.0, a * (1.0 - p) - b / 2.0
        r1, r2 = n1 - n * b / 2.0, n2 - n * b / 2.0
        determinant = alpha * alpha - beta * beta
        true1 = (alpha * r1 - beta * r2) / determinant
        true2 = (alpha * r2 - beta * r1) / determinant
        true1 = np.minimum(np.maximum(true1, 1.0), holders)
        true2 = np.minimum(np.maximum(true2, 1.0), holders)
        means = (true1 - true2) / holders
        details: dict[str, Any] = {
            "a": a, "b": b, "p": p, "padding_length": ell,
            "mean_estimator": "Gu et al. 2020, Algorithm 4 (corrected counts, clipped)",
            "notes": [f"frequencies are unbiased when every user holds at most padding_length={ell} pairs"],
        }
        return frequencies, means, details

    def variance(self, n: int, frequencies: ArrayLike | None = None) -> np.ndarray:
        """Exact variance of the unbiased frequency estimate when every user holds at most ``padding_length`` pairs."""
        a, b, ell = self._a, self._b, self.padding_length
        f = np.zeros(self.domain_size) if frequencies is None else np.asarray(frequencies, dtype=np.float64)
        base = ell * ell * b * (1.0 - b) / (n * (a - b) ** 2)
        return base + f / n * (ell * (1.0 - 2.0 * b) / (a - b) - 1.0)

    # ------------------------------------------------------------------ the composed epsilon
    def composed_epsilon(self) -> float:
        """The epsilon the paper's theorem gives for the realized ``a, b, p`` (Theorem 2 for UE, 3 for GRR)."""
        raise NotImplementedError

    @staticmethod
    def _log(value: Fraction) -> float:
        return math.log(value.numerator) - math.log(value.denominator)
