r"""Private keys by Gaussian thresholding: persons who hold many keys, each key shown when its noisy weight is high.

A group-by over private keys shows a key only when enough persons hold it (:mod:`dpdist.central._partitions`).
Truncated geometric thresholding decides each key at :math:`(\varepsilon/m, \delta/m)`, basic composition over the
:math:`m` keys a person may hold: optimal when each person holds one key, wasteful when they hold many.  The
methods here spend one Gaussian budget on the whole vector of keys instead, whose l2 norm a person moves by at most
one unit whatever the number of keys they hold (Gopi, Gulhane, Kulkarni, Shen, Shokouhi & Yekhanin, "Differentially
private set union", ICML 2020, sec. 5):

``"gaussian"`` (Gaussian thresholding, PipelineDP's ``GAUSSIAN_THRESHOLDING``)
    Each person keeps at most :math:`\Delta_0` keys and adds :math:`1/\sqrt{\Delta_0}` to each: a key's weight is its
    number of persons over :math:`\sqrt{\Delta_0}`.
``"weighted_gaussian"`` (the weighted Gaussian mechanism, their Alg. 4 and Thm. 5.1)
    A person who keeps :math:`d \le \Delta_0` keys adds :math:`1/\sqrt d` to each: a person of few keys puts more
    weight on each of them (unit l2 norm either way).
``"adaptive"`` (two rounds, in the manner of MAD2R of Chen, Cohen-Addad, Epasto & Zadimoghaddam, "Scalable private
partition selection via adaptive weighting", ICML 2025)
    The weighted Gaussian mechanism twice, each round at half of :math:`\mu^2`.  The keys shown by the first round are
    public after it; in the second each person spreads their unit weight over their keys *not yet shown* (up to
    :math:`\Delta_0` of them, chosen again): the weight a person spent on keys far above the threshold is rerouted to
    their other keys.  A key not shown by the first round is shown when the sum of its two noisy weights reaches the
    second threshold (a key absent from the first round draws its first-round noise then): a key near the threshold
    keeps the evidence of both rounds, at the noise of one round of the whole budget, plus what the rerouting adds.
    The rerouting rule, the summed second round and the proof below are this module's (the adaptive rule of one
    round, MAD, is not built: its weights depend on other persons' keys, and its sensitivity lemma is not stated here).

**Exact arithmetic.**  Weights are integers on a lattice of :math:`L` steps per unit (a power of two, so that the
noise is between :math:`2^{18}` and :math:`2^{19}` steps: :mod:`dpdist.central._gaussian_noise`): a person of
:math:`d` keys adds :math:`w(d) = \lfloor L/\sqrt d\rfloor` to each, so their vector has l2 norm at most :math:`L`
exactly.  The noise is the exact discrete Gaussian :math:`\mathcal N_\mathbb{Z}(0, \sigma_r^2)`
(:func:`~dpdist.central._gaussian_noise.discrete_gaussian_lattice`), and a key is shown when its weight plus noise
reaches the integer threshold :math:`T_r`.

**The guarantee, per person, under add/remove** (:math:`(\varepsilon, \delta)`; the proof of their Thm. 5.1, done
exactly).  Let :math:`D' = D + v`.  In a round, a key *only v weighs* is one that no other person keeps there (others
may hold it and keep other keys).  Let :math:`\tilde M(D')` be the mechanism on :math:`D'` that never shows, in the
first round, a key only :math:`v` weighs there, nor, in the second, a key the second round weighs under :math:`D'` and
not under :math:`D` (it still adds :math:`v`'s weights everywhere, and keeps the first round's noisy weights for the
second round's sums).  Coupling the noise of the keys:

* :math:`\tilde M(D')` and :math:`M(D)` show keys by one rule from each round's noisy weights of the same keys, which
  differ by :math:`v`'s weights on at most :math:`\Delta_0` keys a round (the other persons' key sets, and so their
  weights, depend on their own keys and on the keys shown before, the same in both; a key only :math:`v` weighs in
  the first round and others in the second has, under :math:`D`, its first-round noise alone, drawn then): l2 distance
  at most :math:`L` a round, so :math:`\mu_r = L/\sigma_r`-GDP up to the discrete noise's rounding distance,
  adaptively composed: :math:`(\varepsilon', \delta(\varepsilon'; \sqrt{\sum_r\mu_r^2}) + (1 +
  e^{\varepsilon'})\Delta_0\sum_r \tau(\sigma_r))`-DP (:mod:`dpdist.central._gaussian_noise`; showing the keys above
  a threshold is post-processing).
* :math:`M(D')` differs from :math:`\tilde M(D')` only when it shows one of the keys :math:`\tilde M` never shows.  In
  the first round these are keys only :math:`v` weighs, at most :math:`d_1 \le \Delta_0` of weight :math:`w(d_1)`
  each, so this happens with probability at most :math:`1 - (1 - q_1(T_1 - w(d_1)))^{d_1} \le \delta_{T,1}`, whatever
  the other keys showed (:math:`T_1` the smallest integer meeting it for every :math:`d_1 \le \Delta_0`), where
  :math:`q_1(c) = Q((c-1)/\sigma_1) \ge P(\mathcal N_\mathbb{Z}(0, \sigma_1^2) \ge c)` (:math:`\sum_{y \ge c}
  e^{-y^2/2\sigma^2} \le \int_{c-1}^\infty e^{-x^2/2\sigma^2}dx`, and the normaliser is at least
  :math:`\sigma\sqrt{2\pi}` by Poisson summation).  The second round weighs every key not shown that either round
  weighed, so a key it weighs under :math:`D'` and not under :math:`D` is one only :math:`v` weighs in each round it
  is weighed: at most :math:`d_2` keys of both rounds' weights (:math:`w(d_1) + w(d_2) \le 2w(d_2)`: the person's
  second-round keys are fewer, :math:`d_2 \le d_1`), :math:`d_1` of the first round's alone and :math:`d_2` of the
  second's alone.  Its statistic adds two discrete Gaussians, each within :math:`\tau` of a rounded continuous one:
  :math:`q_2(c) = Q((c-1)/\sqrt{\sigma_1^2 + \sigma_2^2}) + 2\tau \ge P(Z_1 + Z_2 \ge c)`; by a union bound over the
  three kinds, :math:`T_2` is the smallest integer with the largest term at :math:`2w(d)` plus twice the largest at
  :math:`w(d)` at most :math:`\delta_{T,2}`.  With :math:`p = \sum_r \delta_{T,r}`: :math:`P_{D'}(E) \le
  P(\tilde M(D') \in E) + p` and :math:`P_{D'}(E) \ge (1 - p) P(\tilde M(D') \in E)` (the noise of those keys is
  independent of the others').

So with :math:`\delta_G` the first bullet's delta, :math:`P_{D'}(E) \le e^{\varepsilon'} P_D(E) + \delta_G + p`
and :math:`P_D(E) \le e^{\varepsilon'} P(\tilde M(D') \in E) + \delta_G`.  With one round the keys :math:`\tilde M`
never shows are the only ones whose noise it does not read, so :math:`P_{D'}(E) \ge (1 - p) P(\tilde M(D') \in E)`
(independent noises), :math:`P_D(E) \le e^{\varepsilon'}/(1 - p)\, P_{D'}(E) + \delta_G`, and with
:math:`\varepsilon' = \varepsilon + \ln(1 - p)` the selection is :math:`(\varepsilon, \delta_G + p)`-DP per person
(the usual statement, :math:`\varepsilon' = \varepsilon`, misses that factor :math:`1/(1-p)`); the budget's
:math:`\delta` is split in half between :math:`\delta_G` and :math:`p` (their Thm. 5.1).  With two rounds
:math:`\tilde M` reads the first-round noise of keys only :math:`v` weighs there but others weigh in the second, so
only :math:`P(\tilde M(D') \in E) \le P_{D'}(E) + p` holds: :math:`(\varepsilon, \delta_G + e^\varepsilon p)`-DP
with :math:`\varepsilon' = \varepsilon`, and :math:`e^\varepsilon p = \delta_G = \delta/2`, :math:`p` equally over
the rounds, :math:`\mu^2` by ``first_share`` (half) between them (:func:`threshold_split`).  Each round's
:math:`\rho_r = \mu_r^2/2` is its zCDP as well (Canonne, Kamath & Steinke 2020, Thm. 14, exactly, on the common
keys).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from .._guarantee import PrivacyGuarantee
from ..errors import InvalidPrivacyParameterError
from ._gaussian_noise import (MAX_SIGMA, MIN_SIGMA, discrete_gaussian_lattice, gaussian_mu, lattice_rho,
                              lattice_variance, rounding_distance)
from .noise import gaussian_delta

__all__ = ["GaussianThresholding", "GAUSSIAN_METHODS", "WEIGHTINGS", "person_key_pairs", "bounded_pairs"]

#: the Gaussian selections: name -> (weighting, rounds)
GAUSSIAN_METHODS = {"gaussian": ("persons", 1), "weighted_gaussian": ("l2", 1), "adaptive": ("l2", 2)}
#: how a person's unit of l2 weight is spread over their keys
WEIGHTINGS = ("persons", "l2")
#: the smallest lattice of weights (steps per unit of weight): below, the weights' rounding would cost too much
_MIN_LATTICE_BITS = 8
#: relative margin of the threshold's probability test (its floating-point evaluation)
_MARGIN = 1e-9


@dataclass(frozen=True)
class Round:
    """One round's public numbers: lattice variance ``t * s`` of the noise, integer threshold, the delta of its
    threshold, and the rho it spends."""

    t: int
    s: int
    threshold: int
    threshold_delta: float
    rho: float

    @property
    def sigma(self) -> float:
        return math.sqrt(self.t * self.s)


@dataclass(frozen=True)
class GaussianThresholding:
    r"""Gaussian thresholding of private keys (module docstring), its public parameters.

    Parameters
    ----------
    epsilon, delta : float
        The selection's budget per person (add/remove neighbours).
    max_keys : int
        :math:`\Delta_0`, the keys that carry each person's weight in a round (those they hold most rows of, ties at
        random).
    weighting : {"persons", "l2"}
        Each kept key of a person weighs :math:`1/\sqrt{\Delta_0}` (``"persons"``), or :math:`1/\sqrt d` when the person
        keeps :math:`d` keys (``"l2"``).
    rounds : {1, 2}
        Two: a second round over each person's keys the first did not show.
    first_share : float
        With two rounds, the first round's share of :math:`\rho`.
    """

    epsilon: float
    delta: float
    max_keys: int
    weighting: str = "l2"
    rounds: int = 1
    first_share: float = 0.5

    @classmethod
    def of(cls, method: str, epsilon: float, delta: float, max_keys: int) -> "GaussianThresholding":
        """The thresholding of a method of :data:`GAUSSIAN_METHODS`."""
        weighting, rounds = GAUSSIAN_METHODS[method]
        return cls(float(epsilon), float(delta), int(max_keys), weighting, rounds)

    @property
    def plan(self) -> tuple[int, tuple[Round, ...]]:
        """``(L, rounds)``: the lattice of weights and each round's numbers (computed once per parameters)."""
        return _calibrated(self.epsilon, self.delta, self.max_keys, self.weighting, self.rounds, self.first_share)

    def guarantee(self, unit: str) -> PrivacyGuarantee:
        """``(epsilon, delta)`` under add/remove of one person (or record)."""
        return PrivacyGuarantee(self.epsilon, self.delta, "add-remove", "central", unit=unit)

    def weight(self, degrees: np.ndarray) -> np.ndarray:
        r"""Each kept key's weight in lattice steps for persons keeping ``degrees`` keys: :math:`\lfloor L/\sqrt
        d\rfloor` (``"l2"``) or :math:`\lfloor L/\sqrt{\Delta_0}\rfloor` (``"persons"``), exactly."""
        lattice, _ = self.plan
        degrees = np.asarray(degrees, dtype=np.int64)
        return _floor_roots(lattice, np.full_like(degrees, self.max_keys) if self.weighting == "persons" else degrees)

    def select(self, persons: np.ndarray, keys: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The keys shown (sorted codes) of the rows' (person, key) pairs; a person of more than ``max_keys`` keys
        weighs those they hold most rows of (ties at random: a uniformly random choice when all hold one row)."""
        return self.select_pairs(person_key_pairs(persons, keys), rng)

    def select_pairs(self, pairs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """:meth:`select` of the distinct ``(person, key, rows)`` pairs (:func:`person_key_pairs`)."""
        _, rounds = self.plan
        kept = pairs[bounded_pairs(pairs, self.max_keys, rng)]
        present, first = self._noisy_weights(kept, rounds[0], rng)
        shown = present[first >= rounds[0].threshold]
        if len(rounds) == 1:
            return shown
        remaining = pairs[~np.isin(pairs[:, 1], shown)]
        kept = remaining[bounded_pairs(remaining, self.max_keys, rng)]
        again, weights = self._noisy_weights(kept, rounds[1], rng, noise=False)
        waiting = present[first < rounds[0].threshold]
        eligible = np.union1d(waiting, again)  # every key not shown that either round weighed
        total = discrete_gaussian_lattice(eligible.size, rounds[1].t, rounds[1].s, rng)
        total[np.searchsorted(eligible, again)] += weights
        earlier = np.isin(eligible, waiting)
        total[earlier] += first[first < rounds[0].threshold]  # both sorted: the first round's noisy weights
        total[~earlier] += discrete_gaussian_lattice(int(np.count_nonzero(~earlier)), rounds[0].t, rounds[0].s, rng)
        return np.union1d(shown, eligible[total >= rounds[1].threshold])

    def _noisy_weights(self, pairs: np.ndarray, numbers: Round, rng: np.random.Generator,
                       noise: bool = True) -> tuple[np.ndarray, np.ndarray]:
        """One round: ``(keys present, their weight plus noise)`` (without ``noise``: their weight), each pair's key
        weighing its person's weight."""
        if not pairs.size:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        _, degree_of_pair, degrees = np.unique(pairs[:, 0], return_inverse=True, return_counts=True)
        present, key_of_pair = np.unique(pairs[:, 1], return_inverse=True)
        weights = self.weight(degrees)[degree_of_pair.reshape(-1)]
        totals = np.bincount(key_of_pair.reshape(-1), weights=weights, minlength=present.size).astype(np.int64)
        if noise:  # exact: sums of integers below 2**53
            totals += discrete_gaussian_lattice(present.size, numbers.t, numbers.s, rng)
        return present, totals


def _floor_roots(lattice: int, degrees: np.ndarray) -> np.ndarray:
    r""":math:`\lfloor\sqrt{\lfloor L^2/d\rfloor}\rfloor` for each degree (= :math:`\lfloor L/\sqrt d\rfloor`), exactly:
    a float estimate corrected by one step either way in integer arithmetic."""
    squares = (lattice * lattice) // degrees
    roots = np.floor(np.sqrt(squares.astype(np.float64))).astype(np.int64)
    roots -= roots * roots > squares
    roots += (roots + 1) * (roots + 1) <= squares
    return roots


def person_key_pairs(persons: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """The distinct ``(person, key)`` pairs of the rows (int64, sorted by person then key), with a third column: the
    pair's number of rows."""
    return pairs_of_rows(persons, keys)[0]


def pairs_of_rows(persons: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(pairs, pair of each row)``: :func:`person_key_pairs`, and each row's index among them."""
    persons, keys = np.asarray(persons, dtype=np.int64), np.asarray(keys, dtype=np.int64)
    if not persons.size:
        return np.zeros((0, 3), dtype=np.int64), np.zeros(0, dtype=np.int64)
    order = np.lexsort((keys, persons))
    sorted_persons, sorted_keys = persons[order], keys[order]
    first = np.concatenate([[True], (sorted_persons[1:] != sorted_persons[:-1]) | (sorted_keys[1:] != sorted_keys[:-1])])
    starts = np.flatnonzero(first)
    counts = np.diff(np.append(starts, order.size))
    pair_of_row = np.empty(order.size, dtype=np.int64)
    pair_of_row[order] = np.cumsum(first) - 1
    return np.column_stack([sorted_persons[starts], sorted_keys[starts], counts]), pair_of_row


def bounded_pairs(pairs: np.ndarray, max_keys: int, rng: np.random.Generator) -> np.ndarray:
    """The positions of the pairs kept: of each person, the ``max_keys`` keys they hold most rows of (the third
    column), ties broken uniformly at random."""
    if not pairs.size:
        return np.zeros(0, dtype=np.int64)
    ties = np.asarray(rng.random(pairs.shape[0]))
    order = np.lexsort((ties, -pairs[:, 2], pairs[:, 0]))
    owners = pairs[order, 0]
    starts = np.flatnonzero(np.concatenate([[True], owners[1:] != owners[:-1]]))
    rank = np.arange(owners.size) - np.repeat(starts, np.diff(np.append(starts, owners.size)))
    return np.sort(order[rank < max_keys])


@functools.lru_cache(maxsize=64)
def _calibrated(epsilon: float, delta: float, max_keys: int, weighting: str, rounds: int,
                first_share: float) -> tuple[int, tuple[Round, ...]]:
    """The lattice and each round's noise and threshold (module docstring: delta halved, p over the rounds)."""
    gaussian_epsilon, spent, threshold_delta = threshold_split(epsilon, delta, rounds)
    if not gaussian_epsilon > 0:
        raise InvalidPrivacyParameterError(f"A Gaussian selection at epsilon={epsilon!r}, delta={delta!r} has no "
                                           "budget for its noise: raise epsilon or delta.")
    mu = gaussian_mu(gaussian_epsilon, delta - spent, rounds * max_keys)
    shares = (1.0,) if rounds == 1 else (first_share, 1.0 - first_share)
    lattice = 2 ** math.ceil(math.log2(MIN_SIGMA * mu * math.sqrt(max(shares))))
    if lattice < 2**_MIN_LATTICE_BITS or lattice / (mu * math.sqrt(min(shares))) > MAX_SIGMA:
        raise InvalidPrivacyParameterError(
            f"A Gaussian selection at epsilon={epsilon!r}, delta={delta!r} needs more than 2**20 lattice steps of "
            "noise: raise epsilon or delta.")
    numbers: list[Round] = []
    for share in shares:
        t, s = lattice_variance(lattice / (mu * math.sqrt(share)))
        variance = t * s + sum(r.t * r.s for r in numbers)  # the second round thresholds both rounds' sum
        numbers.append(Round(t, s, _threshold(lattice, variance, max_keys, weighting, threshold_delta, len(numbers)),
                             threshold_delta, lattice_rho(t, s, lattice)))
    spent_mu = math.sqrt(math.fsum(2 * r.rho for r in numbers))  # rho = mu**2 / 2 of each round
    slack = (1 + math.exp(gaussian_epsilon)) * max_keys * math.fsum(rounding_distance(r.sigma) for r in numbers)
    if gaussian_delta(1 / spent_mu, gaussian_epsilon, 1.0) + spent + slack > delta:  # the calibration, checked
        raise InvalidPrivacyParameterError(f"A Gaussian selection at epsilon={epsilon!r}, delta={delta!r} could not "
                                           "be calibrated within its delta.")
    return lattice, tuple(numbers)


def threshold_split(epsilon: float, delta: float, rounds: int) -> tuple[float, float, float]:
    r"""``(epsilon', delta spent by the thresholds, each round's threshold delta)`` (module docstring): one round,
    :math:`p = \delta/2` and :math:`\varepsilon' = \varepsilon + \ln(1 - p)`; two, :math:`e^\varepsilon p = \delta/2`
    and :math:`\varepsilon' = \varepsilon`; :math:`p` equally over the rounds."""
    if rounds == 1:
        return epsilon + math.log1p(-delta / 2), delta / 2, delta / 2
    p = delta / 2 / math.exp(epsilon)
    return epsilon, delta / 2, p / rounds


def _threshold(lattice: int, variance: int, max_keys: int, weighting: str, threshold_delta: float,
               earlier: int) -> int:
    r"""The smallest integer :math:`T` keeping the keys a person holds alone within :math:`\delta_T` (module
    docstring): the first round (``earlier`` 0), :math:`1 - (1 - q(T - w(d)))^d \le \delta_T` for every :math:`d \le
    \Delta_0`; the second, whose ``variance`` is both rounds' and whose :math:`q` has :math:`2\tau` more, the largest
    such term at :math:`2w(d)` plus twice the largest at :math:`w(d)` (``"persons"``: :math:`w = w(\Delta_0)`
    throughout)."""
    from scipy import special  # lazy: scipy.special (0.2-0.9 CPU-s), which only a Gaussian threshold needs

    sigma = math.sqrt(variance)
    degrees = np.arange(1, max_keys + 1, dtype=np.int64)
    weights = _floor_roots(lattice, np.full_like(degrees, max_keys) if weighting == "persons" else degrees)
    slack = 2 * earlier * rounding_distance(MIN_SIGMA)
    limit = threshold_delta * (1 - _MARGIN)

    def shown_alone(threshold: int, held: np.ndarray) -> float:
        distance = threshold - held - 1
        if distance.min() < 0:
            return 1.0
        tails = special.ndtr(-distance / sigma) + slack
        return float(np.max(-np.expm1(degrees * np.log1p(-tails))))

    def meets(threshold: int) -> bool:
        if not earlier:
            return shown_alone(threshold, weights) <= limit
        return shown_alone(threshold, 2 * weights) + 2 * shown_alone(threshold, weights) <= limit

    base = (1 + earlier) * int(weights.max())
    low, high = base, base + 1
    while not meets(high):
        low, high = high, high + 2 * (high - base) + math.ceil(sigma)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if meets(middle) else (middle, high)
    return high
