r"""The loss distributions of :mod:`._distributions` composed and read off: :math:`\varepsilon(\delta)`, :math:`\delta(\varepsilon)`.

A composition is a list of parts, each one mechanism's pair repeated ``count`` times (:class:`Composed`):

* :class:`Atoms` whose finite losses are integer multiples of one step (each local protocol's pair, :math:`\pm
  \varepsilon` and 0; randomized response; the discrete Laplace mechanism; a shuffled round's pair) lie on that lattice
  as they are; others are rounded *up* to the lattice ``discretization`` (each copy then overstates its loss by at most
  the step: a pessimistic estimate);
* a :class:`Curve` is the symmetric pair "connect the dots" builds on its grid (:mod:`._connect_dots`), which
  overstates each copy's :math:`\varepsilon` by at most one grid step;
* Gaussians compose in closed form: their losses are :math:`\mathcal N(\mu, 2\mu)`, :math:`\mu = 1/(2\sigma^2)`, whose
  means add, so ``count`` copies of :math:`\sigma` and other Gaussians are one Gaussian of :math:`(\sum_i k_i /
  \sigma_i^2)^{-1/2}`; alone it is read off in closed form (Balle & Wang, ICML 2018, Thm. 8), else its loss is rounded
  up to the lattice (mass of :math:`(L_{j-1}, L_j]` put at :math:`L_j`).

Each part is composed on its own lattice by repeated squaring (:mod:`._lattice`, tilted at the :math:`\varepsilon`
read: its floating-point error is carried, so a number read off is never below the composition it computes); parts
on different lattices are then rounded up to one lattice and convolved.  A lattice is at most :data:`MAX_POINTS` wide:
a wider composition is put on a coarser one (an integer multiple of its own step), whose overstatement the
statement's ``error`` counts.  So a campaign of :math:`10^9` reports of one protocol costs one composition of a few
hundred thousand points, whatever its count.  Google's ``dp_accounting`` (Doroshenko et al., PETS 2022), which dpdist used before, puts every pair on one
lattice of step :math:`10^{-4}` (a campaign of :math:`10^5` GRR reports: 10 CPU-s, 590 MB, and a discretization
error of 10) and, on a pair's own lattice, raises its FFT to the ``count``-th power on a window from fixed Chernoff
orders, which at :math:`10^9` reports is too wide to finish (``docs/reference/benchmarks/anonymity.md``,
"Accountants").

:func:`discretization_error` is what the rounding may add to the exact :math:`\varepsilon` (``count`` times a
part's rounding per copy, plus one common step per part joined on a common lattice): 0 for a composition of
protocol campaigns on their own lattice.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._validation import Interval, validate_params
from ._connect_dots import dominating_distribution
from ._distributions import LOSS_DISTRIBUTION, Atoms, Composed, Curve, GaussianLoss, LossDistribution
from ._lattice import LatticeLoss, convolve

__all__ = ["DISCRETIZATION", "MAX_POINTS", "epsilon_at", "delta_at", "deltas_at", "discretization_error", "mechanisms",
           "read_epsilon"]

#: the lattice step of losses that lie on no lattice of their own (``dp_accounting``'s default)
DISCRETIZATION = 1e-4
#: the widest lattice a composition is computed on (points; about 50 MB of FFT at most)
MAX_POINTS = 2**20
#: standard deviations of a composed loss its lattice is sized for (the truncations keep it narrower)
_WIDTH_DEVIATIONS = 12.0
#: the share of delta the truncations of the far tails may cost (an untilted law's mass, in all)
_TRUNCATION_SHARE = 1e-6
#: the tilted mass they may move in all (a tilted law's bulk is where delta is read: about 1e-9 of it, relative)
_TILTED_TRUNCATION = 1e-10
#: losses within this relative distance of a lattice point are on it (their float rounding is added as a shift)
_ON_LATTICE = 1e-9

_LOSS = {"loss": LOSS_DISTRIBUTION, "discretization": Interval(0.0, math.inf, closed="neither")}


def mechanisms(loss: LossDistribution) -> int:
    """How many mechanisms ``loss`` composes (1 unless :class:`Composed`)."""
    if isinstance(loss, Composed):
        return sum(count * mechanisms(part) for part, count in loss.parts)
    return 1


@dataclass(frozen=True)
class _Part:
    """One mechanism's pair on its lattice (untilted), how many times it is composed, and what rounding it took:
    ``overstated`` per copy (the looseness), ``shift`` per copy (float rounding below the loss, added back)."""

    one: LatticeLoss
    count: int
    overstated: float
    shift: float


@dataclass(frozen=True)
class _Plan:
    """A composition's parts on their lattices, its Gaussians' one sigma, and the common step that joins them."""

    parts: tuple[_Part, ...]
    sigma: float | None
    common: float | None

    @property
    def error(self) -> float:
        """How far above the exact epsilon the roundings may put the one read off."""
        rounding = math.fsum(part.count * (part.overstated + part.shift) for part in self.parts)
        joined = 0.0 if self.common is None else self.common * (len(self.parts) + (self.sigma is not None))
        return rounding + joined

    @property
    def shift(self) -> float:
        return math.fsum(part.count * part.shift for part in self.parts)


@validate_params(_LOSS)
def epsilon_at(loss: LossDistribution, delta: float, discretization: float = DISCRETIZATION) -> float:
    """The smallest epsilon whose delta is at most ``delta`` (an upper bound: ``inf`` when none is finite)."""
    return read_epsilon(loss, float(delta), discretization)[0]


@validate_params(_LOSS)
def discretization_error(loss: LossDistribution, discretization: float = DISCRETIZATION) -> float:
    """How far above the exact epsilon the roundings may put :func:`epsilon_at` (module docstring)."""
    return _plan(loss, discretization).error


@validate_params(_LOSS)
def delta_at(loss: LossDistribution, epsilon: float, discretization: float = DISCRETIZATION) -> float:
    """An upper bound on the delta of ``loss`` at ``epsilon``."""
    plan = _plan(loss, discretization)
    if not plan.parts:
        return _gaussian_delta(plan.sigma, epsilon)
    tilt = _tilt(plan, epsilon)
    law = _composed(plan, tilt, _TILTED_TRUNCATION if tilt > 0 else 1e-18)
    return min(1.0, law.delta(epsilon - plan.shift))


def deltas_at(loss: LossDistribution, epsilons: np.ndarray, discretization: float = DISCRETIZATION) -> np.ndarray:
    """Upper bounds on the delta of ``loss`` at each of ``epsilons``, from one untilted composition (for a curve
    over a grid: less accurate than :func:`delta_at` far in the tail)."""
    plan = _plan(loss, discretization)
    if not plan.parts:
        return np.array([_gaussian_delta(plan.sigma, float(e)) for e in epsilons])
    law = _composed(plan, 0.0, 1e-15)
    return np.array([min(1.0, law.delta(float(e) - plan.shift)) for e in epsilons])


@functools.lru_cache(maxsize=1024)
def read_epsilon(loss: LossDistribution, delta: float, discretization: float = DISCRETIZATION) -> tuple[float, float]:
    """``(epsilon, error)``: :func:`epsilon_at` and :func:`discretization_error`, kept for the process."""
    plan = _plan(loss, discretization)
    if delta <= 0:  # the largest loss the composition takes (rounded up: the lattice's), if no mass is infinite
        infinite = plan.sigma is not None or any(part.one.infinity > 0 for part in plan.parts)
        largest = math.fsum(part.count * float(part.one.losses()[part.one.mass > 0].max(initial=0.0)) for part in plan.parts)
        return (math.inf, 0.0) if infinite else (max(largest + plan.shift, 0.0), plan.error)
    if not plan.parts:
        return _gaussian_epsilon(plan.sigma, delta), 0.0
    # untilted first: where its carried floating-point error is small against delta, that is the figure (a mixed
    # composition's first guess may tilt far past where it lies); else the tilted one, or the smaller of the two
    untilted = _composed(plan, 0.0, _TRUNCATION_SHARE * delta)
    plain = untilted.epsilon(delta)
    if untilted.allowance <= 1e-3 * delta:
        return plain + plan.shift, plan.error
    tilt = _tilt(plan, _first_guess(plan, delta))
    epsilon = _composed(plan, tilt, _truncation(tilt, delta)).epsilon(delta)
    if math.isfinite(epsilon) and _tilted_off(plan, tilt, epsilon):
        tilt = _tilt(plan, epsilon)  # tilted where it lies
        epsilon = _composed(plan, tilt, _truncation(tilt, delta)).epsilon(delta)
    return min(epsilon, plain) + plan.shift, plan.error


# ---------------------------------------------------------------------------------------------- the plan
@functools.lru_cache(maxsize=256)
def _plan(loss: LossDistribution, discretization: float) -> _Plan:
    counts: dict[LossDistribution, int] = {}
    for part, count in _flattened(loss, 1):
        counts[part] = counts.get(part, 0) + count
    precision = math.fsum(count / part.sigma**2 for part, count in counts.items() if isinstance(part, GaussianLoss))
    sigma = 1.0 / math.sqrt(precision) if precision > 0 else None
    parts = tuple(_part(part, count, discretization) for part, count in counts.items()
                  if not isinstance(part, GaussianLoss))
    if len(parts) + (sigma is not None) <= 1:
        return _Plan(parts, sigma, None)
    steps = [part.one.step for part in parts]
    width = sum(_width(part.one, part.count) for part in parts) + (0.0 if sigma is None else _gaussian_width(sigma))
    smallest = min(steps, default=discretization)
    if sigma is None and all(_multiple(step, smallest) for step in steps) and width / smallest <= MAX_POINTS:
        return _Plan(parts, None, smallest if len(set(steps)) > 1 else None)
    return _Plan(parts, sigma, max(discretization, width / MAX_POINTS))


def _flattened(loss: LossDistribution, times: int):
    if isinstance(loss, Composed):
        for part, count in loss.parts:
            yield from _flattened(part, times * count)
    else:
        yield loss, times


def _part(loss: LossDistribution, count: int, discretization: float) -> _Part:
    """``count`` copies of ``loss`` (an atoms' pair or a curve) on the lattice they are composed on: the atoms' own
    (every ``m``-th point of it when the composition would be wider than :data:`MAX_POINTS`), else ``discretization``'s
    (or a coarser one), each loss rounded up to it."""
    if isinstance(loss, Curve):
        return _curve_part(loss, count)
    assert isinstance(loss, Atoms)  # the table admits no other kind (Gaussians are gathered)
    losses, masses = np.asarray(loss.losses), np.asarray(loss.masses)
    kept = masses > 0
    losses, masses = losses[kept], masses[kept]
    if not losses.size:  # every mass at +infinity
        return _Part(LatticeLoss(discretization, 0, np.zeros(1), loss.infinity), count, 0.0, 0.0)
    step = _own_step(losses) or discretization
    step *= max(1, math.ceil(_width_of(losses, masses, count) / (step * MAX_POINTS)))
    index = np.ceil(losses / step - _ON_LATTICE).astype(np.int64)
    offset = int(index.min())
    one = LatticeLoss(step, offset, np.bincount(index - offset, weights=masses), loss.infinity)
    gaps = index * step - losses
    return _Part(one, count, float(max(gaps.max(), 0.0)), float(max(-gaps.min(), 0.0)))


def _own_step(losses: np.ndarray) -> float | None:
    """The largest step of which every loss is an integer multiple (within float rounding), or None."""
    nonzero = np.abs(losses[losses != 0])
    if not nonzero.size:
        return None
    step = float(nonzero.min())
    ratios = losses / step
    if np.all(np.abs(ratios - np.round(ratios)) <= _ON_LATTICE * np.maximum(np.abs(ratios), 1.0)):
        return step
    return None


def _curve_part(curve: Curve, count: int) -> _Part:
    """A curve's symmetric dominating pair on a uniform grid over its non-negative epsilons, a hair wider than their
    largest spacing (a coarser one when the composition would be wider than :data:`MAX_POINTS`): each copy overstated
    by at most one grid step.  At a grid point, the bound of the curve's point at or below it (delta is
    non-increasing): on the curve's own uniform grid, its own point (a smaller spacing would pin each point to the
    bound below it, a step behind, and the pair built on that staircase would need more mass than there is)."""
    epsilons, deltas = np.asarray(curve.epsilons), np.asarray(curve.deltas)
    top = float(epsilons[-1])
    if top <= 0:  # every bound at a non-positive epsilon: delta(0) is the last one, all of it at +infinity
        return _Part(LatticeLoss(DISCRETIZATION, 0, np.array([1.0 - deltas[-1]]), float(deltas[-1])), count, 0.0, 0.0)
    spacing = np.diff(epsilons[epsilons >= 0])
    step = max(float(spacing.max()) if spacing.size else top, top / 4096) * (1 + 1e-9)

    def pair_on(step: float) -> LatticeLoss:
        points = np.arange(0.0, top + step, step)
        below = np.searchsorted(epsilons, points, side="right") - 1
        return dominating_distribution(step, np.where(below >= 0, deltas[np.maximum(below, 0)], 1.0))

    one = pair_on(step)
    wider = _width(one, count) / MAX_POINTS
    if wider > step:  # the composition would be wider than MAX_POINTS: the coarser grid its width asks for
        step = wider
        one = pair_on(step)
    return _Part(one, count, step, 0.0)


def _multiple(step: float, smallest: float) -> bool:
    ratio = step / smallest
    return abs(ratio - round(ratio)) <= _ON_LATTICE * ratio


def _moments(one: LatticeLoss) -> tuple[float, float]:
    """The mean and variance of one copy's finite loss."""
    mass = one.mass / max(float(one.mass.sum()), 1e-300)
    losses = one.losses()
    mean = float(np.dot(mass, losses))
    return mean, float(np.dot(mass, (losses - mean) ** 2))


def _width(one: LatticeLoss, count: int) -> float:
    span = one.step * (one.mass.size - 1)
    return min(count * span, span + 2 * _WIDTH_DEVIATIONS * math.sqrt(count * _moments(one)[1]))


def _width_of(losses: np.ndarray, masses: np.ndarray, count: int) -> float:
    mass = masses / masses.sum()
    mean = float(np.dot(mass, losses))
    span = float(losses.max() - losses.min())
    return min(count * span, span + 2 * _WIDTH_DEVIATIONS * math.sqrt(count * float(np.dot(mass, (losses - mean) ** 2))))


def _gaussian_width(sigma: float) -> float:
    mu = 0.5 / sigma**2
    return 2 * _WIDTH_DEVIATIONS * math.sqrt(2 * mu)


# ---------------------------------------------------------------------------------------------- composing
def _composed(plan: _Plan, tilt: float, truncation: float) -> LatticeLoss:
    """The plan's composition on one lattice, tilted by ``tilt``, its truncations moving at most ``truncation``."""
    budget = truncation / (len(plan.parts) + 2)
    laws = []
    for part in plan.parts:
        one = LatticeLoss.tilted(part.one.step, part.one.offset, part.one.mass, part.one.infinity, tilt)
        laws.append(one if part.count == 1 else one.compose(part.count, budget))
    if plan.common is not None:
        laws = [_regridded(law, plan.common) for law in laws]
        if plan.sigma is not None:
            laws.append(_gaussian_lattice(plan.sigma, plan.common, tilt, budget))
    total = laws[0]
    for law in laws[1:]:
        total = convolve(total, law, budget)
    return total


def _regridded(law: LatticeLoss, step: float) -> LatticeLoss:
    """``law`` with every loss rounded up to the lattice ``step`` (its probability kept: the tilted mass grows by the
    tilt over the distance moved; the allowance by at most the tilt over one step)."""
    losses = law.losses()
    index = np.ceil(losses / step).astype(np.int64)
    offset = int(index.min())
    grown = np.exp(law.tilt * (index * step - losses))
    mass = np.bincount(index - offset, weights=law.mass * grown)
    relative = (1 + law.relative) * (1 + 4 * 2.0**-53) - 1
    return LatticeLoss(step, offset, mass, law.infinity, relative, law.allowance * math.exp(law.tilt * step), law.tilt,
                       law.scale)


def _tilted_moments(plan: _Plan, tilt: float) -> tuple[float, float]:
    """The mean and variance of the composed finite loss under the law tilted by ``tilt``."""
    mean = variance = 0.0
    for part in plan.parts:
        losses = part.one.losses()
        with np.errstate(divide="ignore"):
            logs = np.log(part.one.mass) + tilt * losses
        weights = np.exp(logs - logs.max())
        weights /= weights.sum()
        one_mean = float(np.dot(weights, losses))
        mean += part.count * one_mean
        variance += part.count * float(np.dot(weights, (losses - one_mean) ** 2))
    if plan.sigma is not None:
        mu = 0.5 / plan.sigma**2
        mean += mu * (1 + 2 * tilt)
        variance += 2 * mu
    return mean, variance


def _first_guess(plan: _Plan, delta: float) -> float:
    """Where the epsilon at ``delta`` should lie: the untilted mean plus what a Gaussian tail of ``delta`` adds."""
    mean, variance = _tilted_moments(plan, 0.0)
    return mean + math.sqrt(2 * variance * math.log(1 / delta))


def _tilt(plan: _Plan, target: float) -> float:
    """The tilt whose tilted mean is ``target`` (0 when the untilted mean is there already), by bisection."""
    if _tilted_moments(plan, 0.0)[0] >= target:
        return 0.0
    low, high = 0.0, 1.0
    while _tilted_moments(plan, high)[0] < target and high < 1e4:
        low, high = high, 2 * high
    for _ in range(60):
        middle = 0.5 * (low + high)
        low, high = (middle, high) if _tilted_moments(plan, middle)[0] < target else (low, middle)
    return high


def _truncation(tilt: float, delta: float) -> float:
    return _TILTED_TRUNCATION if tilt > 0 else _TRUNCATION_SHARE * delta


def _tilted_off(plan: _Plan, tilt: float, epsilon: float) -> bool:
    """Whether ``epsilon`` lies more than three tilted standard deviations from the tilted mean."""
    mean, variance = _tilted_moments(plan, tilt)
    return abs(epsilon - mean) > 3 * math.sqrt(variance)


# ---------------------------------------------------------------------------------------------- Gaussians
def _gaussian_delta(sigma: float | None, epsilon: float) -> float:
    r"""The exact delta at ``epsilon`` of the Gaussian mechanism of ``sigma`` per unit of sensitivity (Balle & Wang 2018,
    Thm. 8): :math:`\Phi(-\varepsilon/\mu + \mu/2) - e^\varepsilon \Phi(-\varepsilon/\mu - \mu/2)`, :math:`\mu = 1/\sigma`."""
    from scipy import special  # lazy: loads scipy (0.4-2 s), for Gaussians only

    assert sigma is not None  # a plan without parts has a Gaussian
    mu = 1.0 / sigma
    first = float(special.log_ndtr(-epsilon / mu + mu / 2))
    second = epsilon + float(special.log_ndtr(-epsilon / mu - mu / 2))
    return max(0.0, math.exp(first) * -math.expm1(min(second - first, 0.0)))


def _gaussian_epsilon(sigma: float | None, delta: float) -> float:
    """The smallest epsilon >= 0 with :func:`_gaussian_delta` at most ``delta`` (bisection, the upper end kept)."""
    if _gaussian_delta(sigma, 0.0) <= delta:
        return 0.0
    low, high = 0.0, 1.0
    while _gaussian_delta(sigma, high) > delta:
        low, high = high, 2 * high
    while high - low > 1e-12 * high:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if _gaussian_delta(sigma, middle) > delta else (low, middle)
    return high


def _gaussian_lattice(sigma: float, step: float, tilt: float, budget: float) -> LatticeLoss:
    r"""The Gaussian loss :math:`\mathcal N(\mu, 2\mu)` rounded up to the lattice ``step`` (the mass of each interval
    :math:`(L_{j-1}, L_j]` at :math:`L_j`), tilted by ``tilt``, over its (tilted) bulk: the mass above to
    +infinity, below up to the lowest loss kept (untilted) or into the allowance (tilted: at most ``budget``)."""
    from scipy import special  # lazy: loads scipy (0.4-2 s), for Gaussians only

    mu = 0.5 / sigma**2
    deviation = math.sqrt(2 * mu)
    center = mu + 2 * mu * tilt  # the tilted law is N(mu + 2 mu tilt, 2 mu)
    reach = _WIDTH_DEVIATIONS * deviation + step
    index = np.arange(math.floor((center - reach) / step), math.ceil((center + reach) / step) + 1)
    upper = (index * step - mu) / deviation
    lower = upper - step / deviation
    above = lower >= 0  # the interval's mass as a difference of upper tails there, of lower ones below
    log_survival = special.log_ndtr(-lower), special.log_ndtr(-upper)
    log_cdf = special.log_ndtr(upper), special.log_ndtr(lower)
    with np.errstate(divide="ignore"):
        logs = np.where(above, log_survival[0] + np.log1p(-np.exp(log_survival[1] - log_survival[0])),
                        log_cdf[0] + np.log1p(-np.exp(log_cdf[1] - log_cdf[0])))
    infinity = float(special.ndtr(-upper[-1]))
    below = float(special.ndtr(lower[0]))
    law = LatticeLoss.tilted(step, int(index[0]), np.exp(logs - logs.max()), infinity, tilt)
    if tilt == 0.0:
        mass = law.mass * math.exp(float(logs.max()))
        mass[0] += below
        return LatticeLoss(step, law.offset, mass, infinity, 8 * 2.0**-53)
    # the lower tail's probability in tilted units (past the floats: inf, a tilt of no use; the untilted figure stands)
    exponent = -math.inf if below == 0 else math.log(below) + tilt * float(index[0] * step) - law.scale - float(logs.max())
    hidden = math.inf if exponent > 709.0 else math.exp(exponent)
    return LatticeLoss(step, law.offset, law.mass, infinity, law.relative, hidden, tilt, law.scale + float(logs.max()))
