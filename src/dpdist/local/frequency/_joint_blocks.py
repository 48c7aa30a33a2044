r"""One campaign as a block of a joint likelihood: its operator, counts, information and score covariance.

A campaign is one frequency protocol's aggregate over users whose items are drawn i.i.d. from
the shared distribution :math:`f`.  Two kinds of aggregate enter a joint likelihood
(:func:`dpdist.local.estimate_jointly`):

*Output histograms* (``grr``, ``hr``, ``flh``, ``cp``: ``protocol.output_histogram``).  The
aggregate :math:`N \sim \mathrm{Multinomial}(n, Q^\top f)` with the exact channel
:math:`Q[v, y] = \Pr[y \mid v]`; the block's log-likelihood is exact,
:math:`\ell(f) = \sum_y N_y \log (Q^\top f)_y`, and its Fisher information
:math:`H = n\, Q \operatorname{diag}(1/Q^\top f)\, Q^\top` is the covariance of its score.

*Support counts* (``oue``, ``sue``, ``rue``, ``olh``, ``rlh``, ``ss``, ``rws``).  Report :math:`i` supports item
:math:`j` (bit :math:`s_{ij}`) with probability :math:`p^*` if :math:`j` is its user's item,
:math:`q^*` otherwise; users are independent, so each count is exactly
:math:`C_j \sim \mathrm{Binomial}(n, \pi_j)`, :math:`\pi_j = q^* + (p^* - q^*) f_j`.  The counts
are dependent and their joint law is intractable (:mod:`._exact_channel`), so the block
contributes the product of these exact binomial marginals: a *composite* (independence)
likelihood (Lindsay 1988; Varin, Reid & Firth, Statistica Sinica 21, 2011, sec. 2),

.. math::

    \ell(f) = \sum_j C_j \log \pi_j + (n - C_j) \log(1 - \pi_j),

which is itself a product of multinomials through known channels: item :math:`j`'s binomial
is a two-output channel :math:`\Pr[s_j = 1 \mid v] = p^*` if :math:`v = j` else :math:`q^*`.  So
the EM of mixtures of multinomials through known channels (IBU: Agrawal & Aggarwal, PODS
2001, sec. 3; the shared :func:`dpdist.local._em.expectation_maximization`) maximizes the sum
of every block's log-likelihood as it does one.  The composite score
:math:`(p^*-q^*)(C_j - n\pi_j)/(\pi_j(1-\pi_j))` is unbiased, so its maximizer is consistent;
its information is :math:`H = n (p^*-q^*)^2 \operatorname{diag}(1/(\pi(1-\pi)))` but the
score's covariance :math:`J` is not :math:`H` (Godambe's sandwich, Varin et al. sec. 2.3):
:math:`J = n (p^*-q^*)^2 D^{-1} \Sigma_s D^{-1}` with :math:`D = \operatorname{diag}(\pi(1-\pi))`
and :math:`\Sigma_s` the covariance of one report's support vector (derived here),

.. math::

    \Sigma_s = \underbrace{(p^*-q^*)^2 (\operatorname{diag} f - f f^\top)}_{\text{the item varies}}
    + \mathbb{E}_v \operatorname{Cov}(s \mid v),

whose diagonal is :math:`\pi(1-\pi)`.  Off the diagonal, :math:`\mathbb{E}_v\operatorname{Cov}(s_j, s_k \mid v)
= (f_j + f_k)\, a + (1 - f_j - f_k)\, b` with :math:`a = \operatorname{Cov}(s_v, s_j \mid v)` and
:math:`b = \operatorname{Cov}(s_j, s_k \mid v)` (:math:`j, k \ne v`):

* :math:`a = b = 0` when the bits are independent given the item: exact for OUE and SUE, and for
  OLH under an ideal (3-wise independent) hash family.  OLH's family,
  :math:`((ax+b) \bmod P) \bmod g`, is pairwise but not 3-wise independent (two items' hashes fix
  the line, hence a third's), so its support counts correlate a little: measured over 3,000
  aggregates at :math:`d = 6`, off-diagonal correlations of mean 0.005, 0.024, 0.032 (largest
  0.09) at :math:`\varepsilon` = 0.5, 1, 2, which this :math:`J` leaves out (an approximation
  there; ``bootstrap=B`` simulates the protocol itself);
  RLH is OLH's family with another range :math:`g` and is treated alike (an approximation: measured
  over 200 seeded pairs of campaigns at :math:`d = 8`, :math:`\varepsilon = 1`, coverage 0.956 and
  Monte Carlo over stated variance 0.95, slightly conservative);
* a report supporting exactly :math:`k` items whatever the item (``tags.fixed_support_size``: SS),
  :math:`\sum_j s_j = k` fixes them by exchangeability:
  :math:`a = -p^*(1-p^*)/(d-1)` and :math:`b = -(q^*(1-q^*) + a)/(d-2)`; exact;
* a protocol that gives the exact :math:`\mathbb{E}[s s^\top]` of one report over its channel
  (``support_pair_probabilities(f)``: RWS, whose report supports :math:`k` positions of a wheel of
  :math:`m \ge d`, exactly :math:`k` items when :math:`m = d`, and whose pair covariances depend on the
  triple :math:`(j, l, v)`, not only on whether :math:`v \in \{j, l\}`): :math:`\Sigma_s = \mathbb{E}[s s^\top]
  - \pi\pi^\top`, exact (:meth:`dpdist.local.frequency.rws.RWS.support_pair_probabilities`; checked against the
  enumerated channel).

So :math:`J` is exact for OUE, SUE, RUE (independent bits), SS and RWS, and an approximation (the ideal hash's)
for OLH and RLH.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["CampaignBlock", "StackedOperator", "SupportOperator"]


class SupportOperator:
    r"""The support counts' :math:`d` two-output channels as one operator with outputs ``[supported; not]``.

    ``matvec(f) = [q* sum f + (p*-q*) f ; (1 - q*) sum f - (p*-q*) f]`` (a probability pair per item
    when ``f`` sums to 1) and its adjoint, in :math:`O(d)`.
    """

    def __init__(self, p_star: float, q_star: float, domain_size: int):
        self.p, self.q, self.d = p_star, q_star, domain_size
        self.shape = (2 * domain_size, domain_size)

    def matvec(self, f: np.ndarray) -> np.ndarray:
        total, gap = f.sum(), self.p - self.q
        return np.concatenate([self.q * total + gap * f, (1.0 - self.q) * total - gap * f])

    def rmatvec(self, w: np.ndarray) -> np.ndarray:
        supported, other = w[: self.d], w[self.d :]
        gap = self.p - self.q
        return self.q * supported.sum() + (1.0 - self.q) * other.sum() + gap * (supported - other)


class StackedOperator:
    """Several blocks' operators over the same items, one below the other: ``matvec`` concatenates, ``rmatvec`` sums."""

    def __init__(self, operators: list[Any]):
        self.operators = operators
        sizes = [operator.shape[0] for operator in operators]
        self.bounds = np.concatenate([[0], np.cumsum(sizes)])
        self.shape = (int(self.bounds[-1]), operators[0].shape[1])

    def matvec(self, f: np.ndarray) -> np.ndarray:
        return np.concatenate([operator.matvec(f) for operator in self.operators])

    def rmatvec(self, w: np.ndarray) -> np.ndarray:
        total = np.zeros(self.shape[1])
        for operator, start, stop in zip(self.operators, self.bounds[:-1], self.bounds[1:]):
            total += operator.rmatvec(w[start:stop])
        return total


class CampaignBlock:
    """One campaign's part of the joint likelihood (module docstring): its counts and operator, and at a given
    ``f`` its information ``H`` and the covariance ``J`` of its score."""

    def __init__(self, protocol: Any, aggregator: Any):
        self.protocol, self.n = protocol, int(aggregator.n)
        self.domain_size = protocol.domain_size
        self.exact = bool(protocol.output_histogram)
        if self.exact:
            self.operator = protocol.channel_operator()
            self.counts = np.asarray(aggregator.statistic, dtype=np.float64)
        else:
            self.p_star, self.q_star = protocol.support_probabilities()
            self.operator = SupportOperator(self.p_star, self.q_star, self.domain_size)
            support = np.asarray(aggregator.statistic, dtype=np.float64)
            self.counts = np.concatenate([support, self.n - support])

    def information(self, f: np.ndarray) -> np.ndarray:
        """:math:`H`, the expected negative Hessian of the block's log-likelihood at ``f`` (``d x d``)."""
        if not self.exact:
            pi = self.q_star + (self.p_star - self.q_star) * f
            return np.diag(self.n * (self.p_star - self.q_star) ** 2 / (pi * (1.0 - pi)))
        predicted = self.operator.matvec(f)
        inverse = np.where(predicted > 0, 1.0 / np.where(predicted > 0, predicted, 1.0), 0.0)
        columns = np.eye(self.domain_size)
        # H e_k = n Q diag(1/pi) Q^T e_k: one product each way per item (the operator is structured)
        return self.n * np.column_stack([self.operator.rmatvec(inverse * self.operator.matvec(column))
                                         for column in columns])

    def score_covariance(self, f: np.ndarray, information: np.ndarray) -> np.ndarray:
        """:math:`J`, the covariance of the block's score at ``f``: :math:`H` for an exact likelihood, the
        sandwich's meat for the support counts (module docstring)."""
        if self.exact:
            return information
        gap, d = self.p_star - self.q_star, self.domain_size
        pi = self.q_star + gap * f
        scale = gap / (pi * (1.0 - pi))
        pairs = getattr(self.protocol, "support_pair_probabilities", None)
        if pairs is not None:  # the protocol's exact E[s s^T] over its channel (RWS)
            covariance = pairs(f) - np.outer(pi, pi)
            return self.n * covariance * np.outer(scale, scale)
        if self.protocol.tags.fixed_support_size:
            a = -self.p_star * (1.0 - self.p_star) / (d - 1)
            b = -(self.q_star * (1.0 - self.q_star) + a) / (d - 2) if d > 2 else 0.0
        else:
            a = b = 0.0
        ones = np.ones(d)
        covariance = gap**2 * (np.diag(f) - np.outer(f, f))
        covariance += (a - b) * (np.outer(f, ones) + np.outer(ones, f)) + b * np.outer(ones, ones)
        within = f * self.p_star * (1 - self.p_star) + (1 - f) * self.q_star * (1 - self.q_star)
        np.fill_diagonal(covariance, within + gap**2 * (f - f * f))  # = pi (1 - pi)
        return self.n * covariance * np.outer(scale, scale)

    def redraw(self, f: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The block's counts from a fresh aggregate of ``n`` users drawn from ``f`` (the parametric bootstrap)."""
        probabilities = np.maximum(f, 0.0)
        probabilities /= probabilities.sum()
        if self.exact:
            law = np.maximum(self.operator.matvec(probabilities), 0.0)
            return rng.multinomial(self.n, law / law.sum()).astype(np.float64)
        items = np.repeat(np.arange(self.domain_size), rng.multinomial(self.n, probabilities))
        support = np.asarray(self.protocol.simulate(items, rng=rng).statistic, dtype=np.float64)
        return np.concatenate([support, self.n - support])

