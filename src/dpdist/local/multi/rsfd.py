r"""Random sampling plus fake data, ``rsfd`` (Arcolezi, Couchot, Al Bouna, Xiao, CIKM 2021).

Each user draws one attribute :math:`j` of their record uniformly at random,
randomizes :math:`v_j` with attribute :math:`j`'s frequency oracle, and sends a
*fake* report, in the same format, for every other attribute, so the report does
not say which attribute is real (Arcolezi et al., PVLDB 2023, sec. 2.3.2 restates
the three protocols):

* RS+FD[GRR]: fake values uniform over each attribute's domain;
* RS+FD[UE-z]: fake unary-encoded reports of the all-zero vector (``fake="zero"``);
* RS+FD[UE-r]: the oracle applied to a uniform item (``fake="random"``; any pure oracle).

Estimation (the paper's estimators, one form): with :math:`\phi_v` the probability
that a fake report supports item :math:`v` (:mod:`._fake`), a report supports
:math:`v` with probability :math:`\gamma_v = (q^* + f_v(p^*-q^*) + (k-1)\phi_v)/k`, so

.. math::

    \hat f_v = \frac{k C_v / n - q^* - (k-1)\phi_v}{p^* - q^*}, \qquad
    \operatorname{Var}[\hat f_v] = \frac{k^2 \gamma_v (1 - \gamma_v)}{n (p^* - q^*)^2}

(for GRR, :math:`\phi_v = 1/d_j` gives :math:`\hat f = (C d_j k - n(k - 1 + q d_j))/(n d_j (p - q))`;
for UE-z, :math:`\phi_v = q`: :math:`\hat f = k(C - nq)/(n(p - q))`; for UE-r,
:math:`\phi_v = q + (p - q)/d_j`; PVLDB 2023 sec. 2.3.2 and Thm. 2 for the variance).

Privacy, as values.  The paper runs the sampled attribute's oracle at the amplified
:math:`\varepsilon' = \ln(k(e^\varepsilon - 1) + 1)` and claims :math:`\varepsilon`-LDP by
amplification by sampling.  Amplification by sampling holds for neighbours that
differ in *one* sampled element, i.e. records differing in one attribute; for two
records that differ in every attribute the report's ratio is exactly
:math:`e^{\varepsilon'}` (all attributes report their true values under one record and
none under the other).  dpdist states both:

* ``epsilon`` is the record-level budget and the oracle's: ``guarantee`` is
  :math:`\varepsilon`-LDP for any two records (``"replace"``), proved by the exact channel;
* ``attribute_guarantee`` is the exact guarantee for records that differ in one attribute,
  :math:`\max_j \ln\frac{L_j^{\max} + S_j}{L_j^{\min} + S_j}` with :math:`L` the likelihood
  ratio of a real report against a fake one and :math:`S_j = \sum_{i \ne j} \min L_i`
  (:mod:`._fake`); it is the paper's :math:`\ln(1 + (e^\varepsilon - 1)/k)` when all
  attributes share one domain size and one oracle, and larger otherwise (with GRR on
  domains of 2 and 100 items at :math:`\varepsilon' = \ln 4.44`, 1.25 instead of 1).

To run the paper's setting, pass ``epsilon=rsfd.amplified_epsilon(eps, k)``: the
report is then :math:`\varepsilon'`-LDP per record, and ``attribute_guarantee`` is at
most the paper's :math:`\varepsilon` when the attributes share a domain size.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ... import postprocess as _postprocess
from ..._validation import Options
from ...errors import InvalidParameterError
from ...estimates import FrequencyEstimate
from .._protocol import make, register
from .._report_kinds import RecordReports
from ..frequency._unary import UnaryEncoding
from ..numerical._composite import inner_aggregator
from ._base import MultiAttributeProtocol, _kron_rows, _mixed_radix
from ._fake import RandomizedItem, UniformItem, ZeroVector
from ._sampling import sample_groups
from ._schema import Attribute, Attributes

__all__ = ["RandomSamplingFakeData", "amplified_epsilon", "FAKE", "ORACLES"]

#: values of the ``fake`` parameter
FAKE = ("auto", "zero", "random")
#: frequency oracles RS+FD runs (pure oracles whose support of an item is one Bernoulli per report)
ORACLES = ("grr", "oue", "sue", "olh", "ss")


def amplified_epsilon(epsilon: float, attributes: int) -> float:
    r"""The paper's oracle budget :math:`\varepsilon' = \ln(k(e^\varepsilon - 1) + 1)` for a claimed :math:`\varepsilon`."""
    return math.log(attributes * math.expm1(epsilon) + 1.0)


def _variance_at_zero(name: str, fake: str, epsilon: float, size: int, k: int) -> float:
    """RS+FD's per-item variance at f = 0 for n = 1 (ranks GRR against UE for an attribute given no oracle)."""

    inner: Any = make(name, epsilon=epsilon, domain_size=size)
    p, q = inner.support_probabilities()
    phi = 1.0 / size if name == "grr" else q if fake == "zero" else q + (p - q) / size
    gamma = (q + (k - 1) * phi) / k
    return k**2 * gamma * (1 - gamma) / (p - q) ** 2


@register
class RandomSamplingFakeData(MultiAttributeProtocol):
    """One sampled attribute randomized at ``epsilon``, fake reports for the others (see the module docstring).

    Parameters
    ----------
    epsilon : float
        The oracle's budget and the record-level guarantee.
    attributes : list of dict
        Categorical attributes (:mod:`dpdist.local.multi._schema`); protocol one of
        ``grr``, ``oue``, ``sue``, ``olh``, ``ss``.  Given none, the lower RS+FD variance
        of GRR and OUE (with this protocol's fake data) is chosen, as RS+FD[ADP].
    fake : {"auto", "zero", "random"}
        Fake reports of unary encodings: the all-zero vector (UE-z) or a uniform item (UE-r);
        ``"auto"`` (default) is UE-z for unary encodings and a uniform item for the others.
    """

    name = "rsfd"
    summary = "several attributes: one sampled attribute at epsilon, fake data for the others (index hidden)"
    # categorical attributes only: random sampling plus fake data estimates frequencies (spl or smp take numerical ones)
    _constraints = {**MultiAttributeProtocol._constraints, "attributes": Attributes(kind="categorical"),
                    "fake": Options(FAKE)}
    _defaults = {"fake": "auto"}

    def _budgets(self, k):
        return [self.epsilon] * k

    def _allowed(self, attribute: Attribute) -> list[str]:
        return list(ORACLES)  # every attribute is categorical (the table's rule of 'attributes')

    def _default_protocol(self, attribute, epsilon):
        k = len(self._params["attributes"])
        fake = "zero" if self._fake_mode == "auto" else self._fake_mode
        ranked = {name: _variance_at_zero(name, fake, epsilon, attribute.size, k) for name in ("grr", "oue")}
        return min(ranked, key=lambda name: ranked[name])

    def _setup(self):
        super()._setup()
        self._fakes = tuple(self._fake_data(index) for index in range(len(self._inner)))

    @property
    def _fake_mode(self) -> str:
        return self._params["fake"]

    def _fake_data(self, index: int):
        inner, fake = self._inner[index], self._fake_mode
        unary = isinstance(inner, UnaryEncoding)
        if fake == "zero" and not unary:
            raise InvalidParameterError(
                f"The 'fake' parameter of {self.display_name} is 'zero' (unary encoding of the zero vector), but "
                f"attribute {self._attributes[index].name!r} uses {inner.name}. Use 'random' or 'auto'."
            )
        if unary and fake in ("auto", "zero"):
            return ZeroVector(inner)
        return UniformItem(inner) if inner.name == "grr" else RandomizedItem(inner)

    @property
    def fake_data(self) -> tuple:
        """Each attribute's fake-data generator (:mod:`dpdist.local.multi._fake`)."""
        return self._fakes

    def _attribute_epsilon(self):
        lowest = [fake.lowest_ratio() or 0.0 for fake in self._fakes]
        total = sum(lowest)
        losses = [math.log(fake.largest_ratio(total - low)) for fake, low in zip(self._fakes, lowest)]
        return min(self.epsilon, max(losses))

    # ------------------------------------------------------------------ client
    def _report_format(self):
        return RecordReports([codec.field() for codec in self._codecs])

    def _privatize(self, values, rng):
        n, k = values.shape[0], len(self._attributes)
        chosen = sample_groups(n, k, rng)
        reports = self.report_format.empty(n)
        for index, (codec, fake) in enumerate(zip(self._codecs, self._fakes)):
            real = chosen == index
            column = np.empty((n, *codec.row_shape), dtype=codec.dtype)
            rows = np.flatnonzero(real)
            if rows.size:
                column[rows] = codec.encode(codec.inner._privatize(self._inner_values(values[rows], index), rng))
            others = np.flatnonzero(~real)
            if others.size:
                column[others] = codec.encode(fake.sample(others.size, rng))
            reports[codec.name] = column
        return reports

    # ------------------------------------------------------------------ server
    def _check_reports(self, reports, invalid):
        self._check_fields(reports, np.arange(reports.shape[0]), invalid)
        return invalid

    def _simulate(self, values, rng):
        """Exact: the sampled attribute drawn per user; real reports by each oracle's simulate, fake ones by the fake law."""
        n, k = values.shape[0], len(self._attributes)
        chosen = sample_groups(n, k, rng)
        statistic: np.ndarray = np.zeros(self.statistic_size, dtype=self.statistic_dtype)
        for index, (inner, fake) in enumerate(zip(self._inner, self._fakes)):
            real = chosen == index
            start, stop = self._offsets[index + 1], self._offsets[index + 2]
            statistic[start:stop] = inner._simulate(self._inner_values(values[real], index), rng) + fake.simulate(
                int(n - np.count_nonzero(real)), rng
            )
        return statistic

    # ------------------------------------------------------------------ estimation
    def _unbiased(self, index: int, statistic: np.ndarray, n: int) -> np.ndarray:
        inner, k = self._inner[index], len(self._attributes)
        p, q = inner.support_probabilities()
        support = inner.support_counts(inner_aggregator(inner, self.attribute_statistic(statistic, index), n))
        return (k * support / n - q - (k - 1) * self._fakes[index].support()) / (p - q)

    def _attribute_estimate(self, index, statistic, n, postprocess):
        inner = self._inner[index]
        frequencies = self._unbiased(index, statistic, n)
        return FrequencyEstimate(
            _postprocess.apply(postprocess, frequencies),
            n,
            self._categorical_variance(index, n, np.clip(frequencies, 0.0, 1.0)),
            self.epsilon,
            inner.name,
            postprocess,
            {"estimator": "unbiased", "fake": self._fakes[index].name},
            self.guarantee,
            self._attributes[index].labels,
        )

    def _categorical_variance(self, index, n, frequencies):
        inner, k = self._inner[index], len(self._attributes)
        p, q = inner.support_probabilities()
        gamma = (q + np.asarray(frequencies, dtype=np.float64) * (p - q) + (k - 1) * self._fakes[index].support()) / k
        return k**2 * gamma * (1 - gamma) / (n * (p - q) ** 2)

    # ------------------------------------------------------------------ channel
    def _combine_channel(self, rows: list[np.ndarray]) -> np.ndarray:
        k = len(rows)
        total: float | np.ndarray = 0.0
        for index in range(k):
            parts = [
                rows[index] if other == index else np.broadcast_to(self._fakes[other].row(), (rows[index].shape[0], rows[other].shape[1]))
                for other in range(k)
            ]
            total = total + _kron_rows(parts)
        return np.asarray(total) / k

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        reports, _ = self.report_format.read(reports)
        indices = [self._inner_report_index(index, reports[codec.name]) for index, codec in enumerate(self._codecs)]
        return _mixed_radix(indices, self._output_counts())
