r"""PrivKV, ``privkv``: one key of the whole domain, its presence and value perturbed at half the budget each.

Ye, Hu, Meng, Zheng, "PrivKV: Key-Value Data Collection with Local Differential Privacy", IEEE S&P
2019 (PrivKVM with one iteration).  Each user draws a key :math:`j` uniformly from the :math:`d` keys and
reports :math:`j` with a perturbed pair:

* holding :math:`j` with value :math:`v`: :math:`v` is discretized to :math:`v^* = \pm 1` (``+1`` w.p.
  :math:`(1+v)/2`) and kept w.p. :math:`p_2 = e^{\varepsilon_2}/(1 + e^{\varepsilon_2})`, else flipped
  (the value perturbation primitive VPM); the pair :math:`\langle 1, v'\rangle` is reported w.p.
  :math:`p_1 = e^{\varepsilon_1}/(1 + e^{\varepsilon_1})`, else :math:`\langle 0, 0\rangle`;
* not holding :math:`j`: :math:`\langle 0, 0\rangle` w.p. :math:`p_1`, else :math:`\langle 1, v'\rangle` with a
  fake value uniform on :math:`[-1, 1]` put through VPM (a fair sign).

The paper composes the two perturbations sequentially, :math:`\varepsilon = \varepsilon_1 + \varepsilon_2`,
split :math:`\varepsilon_1 = \varepsilon_2 = \varepsilon/2` (as in the authors' PrivKVM with one round and
the PCKV authors' comparison code); the realized :math:`p_1 = p_2` is the largest multiple of
:math:`2^{-53}` with odds at most :math:`e^{\varepsilon/2}`.  The report's exact epsilon,
:math:`\max\{\varepsilon_2, \varepsilon_1 + \ln[2p_2]\}`, is below the stated one: the looseness PCKV removes
(``channel`` gives the exact law; the conformance kit checks the stated bound).

Estimation, per key :math:`j` from the :math:`N_j` reports about it, :math:`n_1` of :math:`\langle 1, 1\rangle`
and :math:`n_2` of :math:`\langle 1, -1\rangle`: the frequency :math:`\hat f_j = ((n_1 + n_2)/N_j - (1 - p_1))/(2p_1 - 1)`
(unbiased), and the mean of VPM's calibration over all :math:`\langle 1, \cdot\rangle` reports,
:math:`\hat n_i = ((p_2 - 1)(n_1 + n_2) + n_i)/(2p_2 - 1)` clipped to :math:`[0, n_1 + n_2]`,
:math:`\hat m_j = (\hat n_1 - \hat n_2)/(n_1 + n_2)` clipped to :math:`[-1, 1]`, which counts the fake values
of non-holders too and so shrinks toward 0 (the bias PrivKVM's further rounds reduce).  The frequency's
variance adds the sampling of who reports about :math:`j` (:math:`N_j \sim \mathrm{Binomial}(n, 1/d)`), as
for SMP's sampled attributes (:mod:`dpdist.local.multi.smp`).

Reports: the item :math:`3j + o`, :math:`o = 0` for :math:`\langle 0, 0\rangle`, 1 for :math:`\langle 1, 1\rangle`,
2 for :math:`\langle 1, -1\rangle` (``ItemReports(3d)``).
"""

from __future__ import annotations

from typing import Any, cast

import numpy as np

from ..._types import ArrayLike
from .._bernoulli import exp_lower, odds_probability, realized
from .._protocol import ProtocolTags, register
from .._report_kinds import ItemReports
from ..multi._sampling import inverse_count_mean
from ._base import KeyValueProtocol
from ._sampling import sample_domain_key
from ._sets import KeyValueSets

__all__ = ["PrivKV"]


@register
class PrivKV(KeyValueProtocol):
    """PrivKV over ``domain_size`` keys (see the module docstring).

    Parameters
    ----------
    epsilon : float
        The budget of a report, split evenly between the key (:math:`\\varepsilon_1`) and the value (:math:`\\varepsilon_2`).
    domain_size : int
        Number of keys ``d >= 2``.
    """

    name = "privkv"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    summary = "key-value pairs: one key of the domain, presence and value perturbed at epsilon/2 each (PrivKV)"
    tags = ProtocolTags(kind="key_value", finite_channel=True, exact_simulate=False, unbiased=True)

    def _setup(self):
        self._p1 = self._p2 = odds_probability(exp_lower(self.epsilon / 2))

    @property
    def statistic_size(self) -> int:
        return 3 * self.domain_size

    @property
    def statistic_total_per_report(self) -> int:
        """1: the statistic is a histogram of the reported (key, pair) items."""
        return 1

    def perturbation_probabilities(self) -> tuple[float, float]:
        """``(p1, p2)`` as realized: the key's and the value's probability of being reported truthfully."""
        return self._p1, self._p2

    def _client_design(self):
        """``p1``, ``p2`` as realized: the JavaScript client derives the same from epsilon (clients/js/src/protocols/privkv.js)."""
        return {"p1": self._p1, "p2": self._p2}

    # ------------------------------------------------------------------ client
    def _report_format(self):
        return ItemReports(3 * self.domain_size)

    def _privatize(self, values, rng):
        keys, held, signs = sample_domain_key(cast(KeyValueSets, values), self.domain_size, rng)  # _check_values made them
        n = len(values)
        value_kept = rng.random(n) < self._p2
        truthful = rng.random(n) < self._p1
        perturbed = np.where(value_kept, signs, -signs)
        pair = np.where(perturbed == 1, 1, 2)
        outcome = np.where(held, np.where(truthful, pair, 0), np.where(truthful, 0, pair))
        return (3 * keys + outcome).astype(self._report_dtype)

    # ------------------------------------------------------------------ server
    def _accumulate(self, reports):
        return np.bincount(np.asarray(reports, dtype=np.int64), minlength=3 * self.domain_size).astype(np.int64)

    def _estimate_parts(self, statistic, n):
        p1, p2 = self._p1, self._p2
        counts = statistic.reshape(self.domain_size, 3).astype(np.float64)
        about = counts.sum(axis=1)
        ones = counts[:, 1] + counts[:, 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            frequencies = np.where(about > 0, (ones / about - (1 - p1)) / (2 * p1 - 1), 0.0)
            n1 = np.clip(((p2 - 1) * ones + counts[:, 1]) / (2 * p2 - 1), 0.0, ones)
            n2 = np.clip(((p2 - 1) * ones + counts[:, 2]) / (2 * p2 - 1), 0.0, ones)
            means = np.where(ones > 0, np.clip((n1 - n2) / ones, -1.0, 1.0), 0.0)
        details: dict[str, Any] = {
            "p1": p1, "p2": p2, "reports_per_key": about.astype(np.int64).tolist(),
            "mean_estimator": "Ye et al. 2019: VPM's calibration over every <1, v> report (fake values included)",
        }
        return frequencies, means, details

    def variance(self, n: int, frequencies: ArrayLike | None = None) -> np.ndarray:
        r"""Variance of :math:`\hat f_j` given at least one report about :math:`j`.

        Given the :math:`N` users who drew :math:`j`, :math:`\hat f_j` is unbiased for their frequency with
        variance :math:`V_1/N`, :math:`V_1 = p_1(1-p_1)/(2p_1-1)^2` (holders and others alike report
        :math:`\langle 1, \cdot\rangle` with a Bernoulli of variance :math:`p_1(1-p_1)`); their frequency
        varies around :math:`f` hypergeometrically, so with :math:`m = E[1/N \mid N \ge 1]`:
        :math:`m\,(V_1 + f(1-f)\,n/(n-1)) - f(1-f)/(n-1)`.
        """
        p1 = self._p1
        f = np.zeros(self.domain_size) if frequencies is None else np.asarray(frequencies, dtype=np.float64)
        per_report = p1 * (1 - p1) / (2 * p1 - 1) ** 2
        m = inverse_count_mean(int(n), self.domain_size)
        spread = f * (1 - f)
        if n <= 1:
            return np.full(self.domain_size, per_report * m)
        return m * (per_report + spread * n / (n - 1)) - spread / (n - 1)

    # ------------------------------------------------------------------ channel
    def _channel_of_sets(self, sets):
        p1, p2, d, n = self._p1, self._p2, self.domain_size, len(sets)
        law = np.empty((n, d, 3))
        law[:] = [p1, (1 - p1) / 2, (1 - p1) / 2]
        users = np.repeat(np.arange(n), sets.lengths)
        up = realized((1.0 + sets.values) / 2.0)
        positive = up * p2 + (1 - up) * (1 - p2)
        law[users, sets.keys, 0] = 1 - p1
        law[users, sets.keys, 1] = p1 * positive
        law[users, sets.keys, 2] = p1 * (1 - positive)
        return law.reshape(n, 3 * d) / d

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)
