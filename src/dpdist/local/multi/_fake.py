r"""Fake data for the attributes a user did not sample (RS+FD and RS+RFD).

In Arcolezi et al.'s random sampling plus fake data, a user randomizes one
sampled attribute and sends *fake* reports, in the same format, for the others.
Each kind of fake report is described here by what the server needs:

* ``sample(n, rng)`` / ``simulate(n, rng)`` -- ``n`` fake reports, or their
  aggregate statistic (exactly distributed);
* ``support()`` -- :math:`\phi_v`, the probability that one fake report supports item
  :math:`v`, which the unbiased estimators subtract (:math:`\hat f_v = (k C_v/n - q^* -
  (k-1)\phi_v)/(p^* - q^*)`);
* ``row()`` -- the law of a fake report over the inner channel's outputs (the exact
  channel of small instances);
* ``lowest_ratio()`` and ``largest_ratio(others)`` -- the extremes of the likelihood
  ratio :math:`L(y \mid x) = M(y \mid x)/F(y)` of the real report against the fake one,
  from which the attribute-level guarantee is exact (:mod:`dpdist.local.multi.rsfd`).

The kinds (Arcolezi et al., CIKM 2021 and PVLDB 2023, sec. 2.3.2 and 5.1):

* :class:`UniformItem` -- "RS+FD[GRR]": a uniform item (GRR of a uniform item is uniform);
* :class:`PriorItem` -- "RS+RFD[GRR]": an item drawn from a public prior, sent as it is;
* :class:`ZeroVector` -- "RS+FD[UE-z]": unary encoding of the all-zero vector;
* :class:`RandomizedItem` -- "RS+FD[UE-r]" (uniform) and "RS+RFD[UE-r]" (prior): the
  attribute's randomizer applied to an item drawn uniformly or from the prior (for
  any pure oracle; the ratio extremes are derived for unary encodings only).

Priors are realized exactly: each probability is a multiple of :math:`2^{-32}` (largest
remainders, every positive entry kept positive) and an item is drawn by comparing
a uniform 32-bit integer with the cumulative weights, so the law the estimators
and the channel use is the law sampled.
"""

from __future__ import annotations

import math

import numpy as np

from ..frequency._unary import UnaryEncoding

__all__ = ["quantize_prior", "UniformItem", "PriorItem", "ZeroVector", "RandomizedItem"]

_SCALE = 2**32


def quantize_prior(prior) -> np.ndarray:
    """Integer weights summing to :math:`2^{32}`, proportional to ``prior`` (positive entries stay positive)."""
    prior = np.asarray(prior, dtype=np.float64)
    prior = prior / prior.sum()
    exact = prior * _SCALE
    weights = np.floor(exact).astype(np.int64)
    weights[(prior > 0) & (weights == 0)] = 1
    short = _SCALE - int(weights.sum())
    order = np.argsort(-(exact - np.floor(exact)), kind="stable")
    if short > 0:
        weights[order[:short]] += 1
    elif short < 0:  # positive entries raised to 1 took too much: take it back from the largest
        for position in np.argsort(-weights, kind="stable")[: -short]:
            weights[position] -= 1
    return weights


def _draw_items(weights: np.ndarray, n: int, rng) -> np.ndarray:
    """``n`` items with probabilities ``weights / 2**32`` (one uniform 32-bit integer each)."""
    uniform = rng.integers(0, _SCALE, size=n, dtype=np.uint64)
    return np.searchsorted(np.cumsum(weights), uniform, side="right").astype(np.int64)


class UniformItem:
    """A uniform item, as GRR reports it (RS+FD[GRR]: GRR of a uniform item is uniform)."""

    name = "uniform"

    def __init__(self, inner):
        self.inner = inner
        self.size = inner.domain_size

    def sample(self, n: int, rng) -> np.ndarray:
        return rng.integers(0, self.size, size=n, dtype=self.inner.report_format.dtype)

    def simulate(self, n: int, rng) -> np.ndarray:
        return rng.multinomial(n, np.full(self.size, 1.0 / self.size)).astype(np.int64)

    def support(self) -> np.ndarray:
        return np.full(self.size, 1.0 / self.size)

    def row(self) -> np.ndarray:
        return np.full(self.size, 1.0 / self.size)

    def lowest_ratio(self) -> float:
        p, q = self.inner.support_probabilities()
        return self.size * q

    def largest_ratio(self, others: float) -> float:
        p, q = self.inner.support_probabilities()
        return (self.size * p + others) / (self.size * q + others)


class PriorItem(UniformItem):
    """An item drawn from a public prior and sent as it is (RS+RFD[GRR], Alg. 1 line 6)."""

    name = "prior"

    def __init__(self, inner, weights: np.ndarray):
        super().__init__(inner)
        self.weights = np.asarray(weights, dtype=np.int64)
        self.prior = self.weights / _SCALE

    def sample(self, n, rng):
        return _draw_items(self.weights, n, rng).astype(self.inner.report_format.dtype)

    def simulate(self, n, rng):
        return rng.multinomial(n, self.prior).astype(np.int64)

    def support(self):
        return self.prior.copy()

    def row(self):
        return self.prior.copy()

    def lowest_ratio(self):
        p, q = self.inner.support_probabilities()
        return q / float(self.prior.max())

    def largest_ratio(self, others):
        p, q = self.inner.support_probabilities()
        smallest = float(self.prior.min())
        if smallest == 0:  # an item the fake data never shows: its report can only be real
            return math.exp(self.inner.epsilon)
        return (p + others * smallest) / (q + others * smallest)


class ZeroVector:
    """Unary encoding of the all-zero vector: every bit 1 with probability ``q`` (RS+FD[UE-z])."""

    name = "zero"

    def __init__(self, inner: UnaryEncoding):
        self.inner = inner

    def sample(self, n, rng):
        return self.inner.privatize_zero(n, rng)

    def simulate(self, n, rng):
        p, q = self.inner.support_probabilities()
        return rng.binomial(n, q, size=self.inner.domain_size).astype(np.int64)

    def support(self):
        p, q = self.inner.support_probabilities()
        return np.full(self.inner.domain_size, q)

    def row(self):
        return self.inner.zero_channel()

    def _ratios(self) -> tuple[float, float]:
        p, q = self.inner.support_probabilities()
        return p / q, (1 - p) / (1 - q)  # a report's likelihood ratio against the zero vector, bit set or not

    def lowest_ratio(self):
        return self._ratios()[1]

    def largest_ratio(self, others):
        high, low = self._ratios()
        return (high + others) / (low + others)


class RandomizedItem:
    """The attribute's own randomizer applied to an item drawn uniformly or from a prior (RS+FD/RS+RFD[UE-r])."""

    name = "randomized"

    def __init__(self, inner, weights: np.ndarray | None = None):
        self.inner = inner
        size = inner.domain_size
        self.weights = quantize_prior(np.ones(size)) if weights is None else np.asarray(weights, dtype=np.int64)
        self.prior = self.weights / _SCALE
        self.uniform = weights is None

    def _items(self, n, rng) -> np.ndarray:
        if self.uniform:
            return rng.integers(0, self.inner.domain_size, size=n, dtype=np.int64)
        return _draw_items(self.weights, n, rng)

    def sample(self, n, rng):
        return self.inner._privatize(self._items(n, rng), rng)

    def simulate(self, n, rng):
        if self.uniform:
            counts = rng.multinomial(n, np.full(self.inner.domain_size, 1.0 / self.inner.domain_size))
        else:
            counts = rng.multinomial(n, self.prior)
        items = np.repeat(np.arange(self.inner.domain_size), counts)
        return self.inner._simulate(items, rng)

    def support(self):
        p, q = self.inner.support_probabilities()
        prior = np.full(self.inner.domain_size, 1.0 / self.inner.domain_size) if self.uniform else self.prior
        return q + (p - q) * prior

    def row(self):
        prior = np.full(self.inner.domain_size, 1.0 / self.inner.domain_size) if self.uniform else self.prior
        return prior @ self.inner.channel(None)

    def _unary(self) -> tuple[float, float, float] | None:
        if not isinstance(self.inner, UnaryEncoding):
            return None
        p, q = self.inner.support_probabilities()
        smallest = 1.0 / self.inner.domain_size if self.uniform else float(self.prior.min())
        return p / q, (1 - p) / (1 - q), smallest

    def lowest_ratio(self):
        r"""For unary encodings :math:`\min L = r_0/(r_0 + (r_1 - r_0)(1 - \pi_{\min}))` (the true bit off, every
        other bit on); ``None`` (no amplification claimed) for other randomizers."""
        unary = self._unary()
        if unary is None:
            return None
        high, low, smallest = unary
        return low / (low + (high - low) * (1.0 - smallest))

    def largest_ratio(self, others):
        r"""For unary encodings :math:`(r_1 + S D)/(r_0 + S D)`, :math:`D = r_0 + (r_1 - r_0)\pi_{\min}` (one bit on, at
        the least likely item): the fake law's smallest mass at an output makes a real report likeliest."""
        unary = self._unary()
        if unary is None:
            return math.exp(self.inner.epsilon)
        high, low, smallest = unary
        mass = low + (high - low) * smallest
        return (high + others * mass) / (low + others * mass)
