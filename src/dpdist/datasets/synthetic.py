r"""Synthetic datasets: i.i.d. draws from known laws, numerical and categorical.

Numerical (values in ``bounds``):

* ``beta(a, b)`` on [0, 1]; Beta(5, 2) is the smooth default of papers 000 (eq. 89) and
  003 (sec. 7), Beta(10, 2) one of paper 002's (sec. VI).
* ``normal``, ``lognormal`` and ``normal_mixture`` truncated to finite bounds, sampled
  exactly by the inverse CDF on :math:`[F(lo), F(hi)]`; Lognormal(0, 0.5) is paper 002's.
* ``step(h)``: the spiky density of paper 000, eq. (92),

  .. math::

      f(x) = 1.5 \text{ if } \lfloor x/h \rfloor \text{ is odd}, \qquad
      f(x) = 0.5 \text{ if } \lfloor x/h \rfloor \text{ is even}, \qquad x \in [0, 1),

  with :math:`h = 1/2, 1/4, 1/8, 1/16`.  With :math:`1/h` intervals (an even number), the
  odd ones carry mass :math:`1.5 h` each and :math:`3/4` together; a draw picks an odd
  interval with probability 3/4 (else an even one), the interval uniformly within its
  class, and the point uniformly within the interval.

Categorical (items ``0 .. k-1``):

* ``geometric(lam, k)``: :math:`p(i) \propto (1-\lambda)^i \lambda` truncated to
  :math:`k` items (paper 004, sec. "Experiments": Geo(0.8), Geo(0.6), k = 10,000).
* ``sparse_uniform(s, k)``: uniform on :math:`s` items of :math:`k` (paper 004's
  Unif(s)); the support is drawn once from ``support_seed`` so the law is fixed.
* ``zipf(a, k)``: :math:`p(i) \propto (i+1)^{-a}`.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

from .._validation import Bounds, Described, Even, Integer, Interval, RealArray, SameSize, Weights, check_param, validate_params
from ._dataset import Dataset, register
from .._types import ArrayLike, FloatBounds

__all__ = ["beta", "normal", "lognormal", "normal_mixture", "step", "geometric", "sparse_uniform", "zipf"]

_SYNTHETIC = "synthetic (dpdist.datasets.synthetic)"
_FREE = "public domain (generated)"


def _size(n: int, owner: str) -> int:
    return check_param(owner, "n", n, Integer(low=1))


def _truncated(frozen, bounds, n, rng):
    """Exact draws of a continuous law truncated to ``bounds`` (inverse CDF)."""
    low, high = frozen.cdf(bounds[0]), frozen.cdf(bounds[1])
    values = frozen.ppf(low + (high - low) * rng.random(n))
    return np.clip(values, bounds[0], bounds[1])


def _numerical(name, description, n, bounds, draw) -> Dataset:
    """A synthetic numerical dataset of default size ``n`` whose values ``draw(m, rng)`` draws in ``bounds``."""
    return Dataset(
        name=name, description=description, kind="numerical", size=n, bounds=bounds, draw=draw, license=_FREE,
        source=_SYNTHETIC,
    )


def _truncated_law(owner, name, law_text, law, bounds, n, shape=""):
    """The continuous ``law`` (written ``law_text``) truncated to the checked ``bounds``, ``n`` values by default."""
    bounds = check_param(owner, "bounds", bounds, Bounds())
    n = _size(n, owner)
    description = f"{law_text} truncated to [{bounds[0]:g}, {bounds[1]:g}]{shape}"
    return _numerical(name, description, n, bounds, lambda m, rng: _truncated(law, bounds, n if m is None else m, rng))


def beta(a: float, b: float, *, n: int = 100_000, name: str | None = None) -> Dataset:
    """Beta(a, b) on [0, 1] (paper 000, eq. 89)."""
    owner = "datasets.synthetic.beta"
    a = check_param(owner, "a", a, Interval(0, np.inf))
    b = check_param(owner, "b", b, Interval(0, np.inf))
    n = _size(n, owner)

    def draw(m, rng):
        return rng.beta(a, b, size=n if m is None else m)

    return _numerical(name or f"beta-{a:g}-{b:g}", f"Beta({a:g}, {b:g}) on [0, 1], smooth", n, (0.0, 1.0), draw)


def normal(mean: float = 0.0, std: float = 1.0, *, bounds: FloatBounds = (-4.0, 4.0), n: int = 100_000, name: str | None = None) -> Dataset:
    """Normal(mean, std**2) truncated to ``bounds``."""
    owner = "datasets.synthetic.normal"
    mean = check_param(owner, "mean", mean, Interval())
    std = check_param(owner, "std", std, Interval(0, np.inf))
    law = stats.norm(mean, std)
    return _truncated_law(owner, name or f"normal-{mean:g}-{std:g}", f"Normal({mean:g}, {std:g}^2)", law, bounds, n)


def lognormal(mu: float = 0.0, sigma: float = 0.5, *, bounds: FloatBounds = (0.0, 5.0), n: int = 100_000, name: str | None = None) -> Dataset:
    """Lognormal(mu, sigma) (of the underlying normal) truncated to ``bounds`` (paper 002)."""
    owner = "datasets.synthetic.lognormal"
    mu = check_param(owner, "mu", mu, Interval())
    sigma = check_param(owner, "sigma", sigma, Interval(0, np.inf))
    law = stats.lognorm(s=sigma, scale=np.exp(mu))
    law_text = f"Lognormal({mu:g}, {sigma:g})"
    return _truncated_law(owner, name or f"lognormal-{mu:g}-{sigma:g}", law_text, law, bounds, n, ", right-skewed")


@validate_params({
    "weights": Weights("non-negative numbers with a positive sum, one per component"),
    "means": RealArray("finite numbers, one per component", ndims=(1,), min_size=1),
    "stds": RealArray("numbers > 0, one per component", ndims=(1,), min_size=1, low=0.0, closed="right"),
}, owner="datasets.synthetic.normal_mixture", relations=(
    SameSize("means", "weights", counterexample={"weights": [1.0, 1.0], "means": [0.0], "stds": [1.0, 1.0]}),
    SameSize("stds", "weights", counterexample={"weights": [1.0], "means": [0.0], "stds": [1.0, 1.0]}),
))
def normal_mixture(weights: ArrayLike, means: ArrayLike, stds: ArrayLike, *, bounds: FloatBounds = (-4.0, 4.0), n: int = 100_000, name: str | None = None) -> Dataset:
    """Mixture of normals truncated to ``bounds`` (component by weight, then truncated draw)."""
    owner = "datasets.synthetic.normal_mixture"
    weights, means, stds = (np.asarray(array, dtype=np.float64) for array in (weights, means, stds))
    bounds = check_param(owner, "bounds", bounds, Bounds())
    n = _size(n, owner)
    # Truncating the mixture is the same as truncating each component and reweighting
    # the components by the mass each keeps inside the bounds.
    kept = stats.norm.cdf(bounds[1], means, stds) - stats.norm.cdf(bounds[0], means, stds)
    probabilities = weights * kept / np.sum(weights * kept)

    def draw(m, rng):
        m = n if m is None else m
        component = rng.choice(means.size, size=m, p=probabilities)
        low = stats.norm.cdf(bounds[0], means[component], stds[component])
        high = stats.norm.cdf(bounds[1], means[component], stds[component])
        values = stats.norm.ppf(low + (high - low) * rng.random(m), means[component], stds[component])
        return np.clip(values, bounds[0], bounds[1])

    parts = " + ".join(f"{w:g} N({mu:g}, {s:g}^2)" for w, mu, s in zip(weights / weights.sum(), means, stds))
    description = f"mixture {parts} truncated to [{bounds[0]:g}, {bounds[1]:g}], multimodal"
    return _numerical(name or "normal-mixture", description, n, bounds, draw)


@validate_params({"intervals": Described(Even(low=2), "an even int >= 2 (h = 1/intervals)")}, owner="datasets.synthetic.step")
def step(intervals: int, *, n: int = 100_000, name: str | None = None) -> Dataset:
    """The step density of paper 000, eq. (92), with ``h = 1 / intervals`` (an even number)."""
    owner = "datasets.synthetic.step"
    n = _size(n, owner)
    half = intervals // 2
    width = 1.0 / intervals

    def draw(m, rng):
        m = n if m is None else m
        odd = rng.random(m) < 0.75  # odd intervals hold 1.5 * h * (1/h) / 2 = 3/4 of the mass
        interval = 2 * rng.integers(0, half, size=m) + odd
        return (interval + rng.random(m)) * width

    description = f"step density of paper 000 eq. 92, h = 1/{intervals}: 1.5 on odd, 0.5 on even intervals"
    return _numerical(name or f"step-{intervals}", description, n, (0.0, 1.0), draw)


def _categorical(name, description, probabilities, n):
    probabilities = probabilities / probabilities.sum()
    cumulative = np.cumsum(probabilities)
    cumulative[-1] = 1.0

    def draw(m, rng):
        # inverse-CDF draw, O(m log k), same law as rng.choice(k, p=probabilities)
        return np.searchsorted(cumulative, rng.random(n if m is None else m), side="right")

    return Dataset(
        name=name,
        description=description,
        kind="categorical",
        size=n,
        domain_size=probabilities.size,
        draw=draw,
        license=_FREE,
        source=_SYNTHETIC,
    )


def geometric(lam: float, domain_size: int = 10_000, *, n: int = 100_000, name: str | None = None) -> Dataset:
    r"""Geo(lambda): :math:`p(i) \propto (1-\lambda)^i \lambda` on ``domain_size`` items (paper 004)."""
    owner = "datasets.synthetic.geometric"
    lam = check_param(owner, "lam", lam, Interval(0, 1))
    domain_size = check_param(owner, "domain_size", domain_size, Integer(low=2))
    n = _size(n, owner)
    probabilities = lam * (1 - lam) ** np.arange(domain_size, dtype=np.float64)
    return _categorical(
        name or f"geo-{lam:g}",
        f"geometric Geo({lam:g}) on {domain_size} items (paper 004), approximately sparse",
        probabilities,
        n,
    )


def sparse_uniform(support: int, domain_size: int = 10_000, *, n: int = 100_000, support_seed: int = 0, name: str | None = None) -> Dataset:
    """Unif(s): uniform on ``support`` items of ``domain_size`` (paper 004), fixed by ``support_seed``."""
    owner = "datasets.synthetic.sparse_uniform"
    domain_size = check_param(owner, "domain_size", domain_size, Integer(low=2))
    support = check_param(owner, "support", support, Integer(low=1, high=domain_size))
    n = _size(n, owner)
    probabilities = np.zeros(domain_size)
    probabilities[np.random.default_rng(support_seed).choice(domain_size, size=support, replace=False)] = 1.0
    return _categorical(
        name or f"unif-{support}",
        f"uniform on {support} random items of {domain_size} (paper 004 Unif({support}), support seed {support_seed})",
        probabilities,
        n,
    )


def zipf(a: float, domain_size: int = 10_000, *, n: int = 100_000, name: str | None = None) -> Dataset:
    r"""Zipf: :math:`p(i) \propto (i + 1)^{-a}` on ``domain_size`` items."""
    owner = "datasets.synthetic.zipf"
    a = check_param(owner, "a", a, Interval(0, np.inf))
    domain_size = check_param(owner, "domain_size", domain_size, Integer(low=2))
    n = _size(n, owner)
    probabilities = np.arange(1, domain_size + 1, dtype=np.float64) ** -a
    return _categorical(name or f"zipf-{a:g}", f"Zipf({a:g}) on {domain_size} items, heavy-tailed", probabilities, n)


def _register_defaults() -> None:
    register(beta(5, 2))
    register(beta(10, 2))
    register(normal(0, 1, name="normal"))
    register(lognormal(0, 0.5, name="lognormal"))
    register(normal_mixture([0.5, 0.5], [-1.5, 1.5], [0.5, 0.5], name="normal-mixture"))
    for intervals in (2, 4, 8, 16):
        register(step(intervals))
    register(geometric(0.8))
    register(geometric(0.6))
    register(sparse_uniform(10))
    register(sparse_uniform(25))
    # paper 004's "weakly depends on the universe size": Unif(10) in smaller and larger universes
    register(sparse_uniform(10, domain_size=1_000, name="unif-10-k1000"))
    register(sparse_uniform(10, domain_size=50_000, name="unif-10-k50000"))
    register(zipf(1.1))


_register_defaults()
