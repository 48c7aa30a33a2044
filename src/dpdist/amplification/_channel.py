r"""Each neighbouring pair's reductions, read from a finite channel.

For an ordered pair of inputs :math:`(x_0, x_1)` with output laws :math:`\mu_0, \mu_1`, let
:math:`\beta = \sum_y (\mu_0 - \mu_1)_+` (their total variation), :math:`p = \max_y \mu_0/\mu_1`
and :math:`p' = \max_y \mu_1/\mu_0`.  Then, exactly,

.. math::

    \mu_0 = \tfrac{\beta p}{p-1} P_0 + \tfrac{\beta}{p'-1} P_1 + a_2 P_2, \qquad
    \mu_1 = \tfrac{\beta}{p-1} P_0 + \tfrac{\beta p'}{p'-1} P_1 + a_2 P_2,

with :math:`P_0 \propto (\mu_0-\mu_1)_+`, :math:`P_1 \propto (\mu_1-\mu_0)_+` (disjoint supports) and
:math:`P_2 \ge 0` the common rest, of mass :math:`a_2 = 1 - \beta p/(p-1) - \beta/(p'-1)` (on the
support of :math:`P_0`, :math:`\mu_0 - \beta p P_0/(p-1) = (p\mu_1 - \mu_0)/(p-1) \ge 0`; likewise on
:math:`P_1`'s).  This is the victim's side of Wang et al.'s variation-ratio reduction (VLDB 2024,
"Privacy amplification via shuffling: unified, simplified, and tightened"), with the pair's own
:math:`p, p', \beta`.

Every user's law dominates the blanket :math:`b = \min_x R(x)` (Balle, Bell, Gascón & Nissim,
CRYPTO 2019), so any :math:`r \ge 0` with :math:`r_0 P_0 + r_1 P_1 + r_2 P_2 \le b` makes each other
user a mixture: category :math:`k` with probability :math:`r_k`, its own leftover law otherwise
(revealed to the adversary: an upper bound).  Candidates, each valid (the bound takes the
smallest divergence of them at every :math:`t`):

* ``"blanket"``: :math:`r_2` as large as :math:`b` allows, then :math:`r_0, r_1` from what is
  left; for GRR this is the whole blanket (the exact privacy-blanket bound, which Su, Cheng &
  Wang (2025) show optimal among decompositions);
* ``"split"``: :math:`r_0, r_1` first, then :math:`r_2`;
* ``"clone"``: :math:`b \ge \tfrac w2(\mu_0+\mu_1)` with the pair's clone probability
  :math:`w = \min_y 2b/(\mu_0+\mu_1)`, as categories (FMT21's clone reduction, post-processed:
  never looser than it).

Pairs with equal parameters (up to 12 digits) are one class (GRR, SS, HR: one class).
"""

from __future__ import annotations

import math
from typing import cast

import numpy as np

from .._types import ArrayLike
from .._validation import Channel, check_param, validate_params
from ..errors import InvalidParameterError
from ._reduction import Reduction

__all__ = ["channel_reductions", "pair_reductions", "clone_probability", "realized_epsilon", "check_channel", "CHANNEL",
           "MAX_CHANNEL_WORK"]

#: rows^2 * outputs above which the pairs are not enumerated (about a second of NumPy)
MAX_CHANNEL_WORK = 4 * 10**7
_SHRINK = 1.0 - 1e-12  # the others' rates are shrunk so that rounding never overstates the blanket
_TIE = 1e-12  # entries of two rows this close (relative) are equal
_RATE_FLOOR = 1e-9  # a rate this small next to the victim's own probability is rounding: taken as 0 (conservative)


#: what a channel given to the bounds must be (its rows: the input laws)
CHANNEL = Channel()


def check_channel(channel, owner: str) -> np.ndarray:
    """A channel (:data:`CHANNEL`, refused naming ``owner``) as a float matrix of its outputs of positive probability."""
    return _outputs_given(check_param(owner, "channel", channel, CHANNEL))


def _outputs_given(channel: np.ndarray) -> np.ndarray:
    """The columns of a channel (:data:`CHANNEL`) of the outputs it gives (of positive probability under every input)."""
    return channel[:, channel[0] > 0]


def realized_epsilon(channel: np.ndarray) -> float:
    """The channel's one-report loss: ``max_y max_{x, x'} log(R(x)[y] / R(x')[y])``."""
    logs = np.log(channel)
    return float(np.max(logs.max(axis=0) - logs.min(axis=0)))


@validate_params({"channel": CHANNEL}, owner="amplification.clone_probability")
def clone_probability(channel: ArrayLike) -> float:
    """The largest ``w`` with ``R(x) >= w/2 (R(x0) + R(x1))`` for every row ``x`` and pair ``x0 != x1``."""
    matrix = _outputs_given(cast(np.ndarray, channel))
    blanket = matrix.min(axis=0)
    top_two = np.sort(matrix, axis=0)[-2:].sum(axis=0)  # the pair that makes the ratio smallest
    return float(min(1.0, np.min(2 * blanket / top_two)))


def _min_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """Row-wise ``min(numerator / denominator)`` over entries with ``denominator > 0`` (inf if none)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(denominator > 0, numerator / denominator, np.inf)
    return ratios.min(axis=1)


#: kept shares of the victim's common part tried by the "blend" candidates (the rest is revealed)
_KEPT_SHARES = (0.999, 0.99, 0.9, 0.5)


def _pair_candidates(first: np.ndarray, second: np.ndarray, blanket: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """Victim categories (pairs, 4) = (a0, a1, b0, b1) and candidates (pairs, 4) = (kept a2, r0, r1, r2) for
    ``first`` against each row of ``second`` (module docstring; non-finite candidates are dropped later)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _pair_candidates_unchecked(first, second, blanket)


def _pair_candidates_unchecked(first, second, blanket):
    gap = first[None, :] - second
    gap[np.abs(gap) <= _TIE * np.maximum(first[None, :], second)] = 0.0  # rounding of equal entries is no signal
    positive, negative = np.maximum(gap, 0.0), np.maximum(-gap, 0.0)
    beta = positive.sum(axis=1)
    up = np.max(first[None, :] / second, axis=1)
    down = np.max(second / first[None, :], axis=1)
    u0, u1 = beta * up / (up - 1), beta / (up - 1)
    v0, v1 = beta / (down - 1), beta * down / (down - 1)
    a2 = np.maximum(1.0 - u0 - v0, 0.0)
    p0, p1 = positive / beta[:, None], negative / beta[:, None]
    common = np.maximum(first[None, :] - u0[:, None] * p0 - v0[:, None] * p1, 0.0)  # a2 * P2
    room = np.broadcast_to(blanket, gap.shape)
    zero = np.zeros_like(a2)
    has_common = a2 > 0
    # "blanket": r2 first, then r0, r1 from what is left
    r2 = np.where(has_common, a2 * np.where(has_common, _min_ratio(room, common), 0.0), 0.0)
    left = room - (r2 / np.where(has_common, a2, 1.0))[:, None] * common
    candidates = [np.stack([a2, _min_ratio(left, p0), _min_ratio(left, p1), r2], axis=1)]
    # "split": r0, r1 first, then r2; "blend": r0, r1 first, then the part of the victim's common mass the
    # blanket left can carry (clipped at lambda * left), the rest of it revealed
    r0, r1 = _min_ratio(room, p0), _min_ratio(room, p1)
    left = np.maximum(room - r0[:, None] * p0 - r1[:, None] * p1, 0.0)
    r2 = np.where(has_common, a2 * np.where(has_common, _min_ratio(left, common), 0.0), 0.0)
    candidates.append(np.stack([a2, r0, r1, r2], axis=1))
    for share in _KEPT_SHARES:
        level = _clip_level(common, left, share * a2)
        carried = share * a2 / np.where(level > 0, level, 1.0)
        candidates.append(np.stack([np.where(level > 0, share * a2, zero), r0, r1, np.where(level > 0, carried, zero)], axis=1))
    # "clone": w/2 (mu0 + mu1) under the blanket, as categories
    w = np.minimum(1.0, _min_ratio(room, 0.5 * (first[None, :] + second)))
    candidates.append(np.stack([a2, w * (u0 + u1) / 2, w * (v0 + v1) / 2, w * a2], axis=1))
    return np.stack([u0, v0, u1, v1], axis=1), candidates


def _clip_level(common: np.ndarray, room: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Per row, the ``lam`` with ``sum(min(common, lam * room)) = target`` (0 where no ``lam`` reaches it)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(common > 0, common / room, 0.0)  # inf where the blanket has no room left
    order = np.argsort(ratios, axis=1)
    ratios = np.take_along_axis(ratios, order, axis=1)
    mass, space = np.take_along_axis(common, order, axis=1), np.take_along_axis(room, order, axis=1)
    # at lam = ratios[j]: entries up to j keep all their mass, later ones lam * room
    below = np.cumsum(mass, axis=1)
    above = space[:, ::-1].cumsum(axis=1)[:, ::-1] - space  # room of the later entries
    with np.errstate(invalid="ignore"):
        kept = below + ratios * above
    levels = np.zeros(common.shape[0])
    for row in range(common.shape[0]):  # kept is non-decreasing in j: the first j reaching the target
        finite = np.isfinite(ratios[row])
        j = int(np.searchsorted(np.where(finite, kept[row], np.inf), target[row]))
        if target[row] <= 0 or j >= ratios.shape[1] or not finite[j]:
            continue
        previous_kept = below[row, j - 1] if j > 0 else 0.0
        levels[row] = (target[row] - previous_kept) / (above[row, j] + space[row, j]) if j > 0 else target[row] / (above[row, 0] + space[row, 0])
    return levels


def _candidates_of(victim: np.ndarray, candidates: list[np.ndarray], row: int) -> tuple[tuple, list[Reduction]]:
    """One pair's key (its parameters to 12 digits) and its candidate reductions, dominated ones dropped."""
    a0, a1, b0, b1 = (float(v) for v in victim[row])
    floors = (0.0, _RATE_FLOOR * (a0 + b0), _RATE_FLOOR * (a1 + b1))
    options = set()
    for candidate in candidates:
        common, *raw_rates = (float(v) * _SHRINK for v in candidate[row])
        if not all(math.isfinite(v) and v >= 0 for v in (common, *raw_rates)):
            continue
        rates = [rate if rate > floor else 0.0 for rate, floor in zip(raw_rates, floors[1:] + (_RATE_FLOOR * common,))]
        if sum(rates) > 0:
            options.add((common, *rates))
    # more of the victim's common mass kept and more of every rate is never worse
    kept = [o for o in options if not any(p != o and all(pv >= ov for pv, ov in zip(p, o)) for p in options)]
    key = tuple(float(f"{v:.12g}") for v in victim[row]) + tuple(sorted(tuple(float(f"{v:.12g}") for v in o) for o in kept))
    return key, [Reduction((a0, a1, o[0]), (b0, b1, o[0]), (o[1], o[2], o[3])) for o in sorted(kept)]


def pair_reductions(first, second, blanket) -> list[Reduction]:
    """The candidate reductions of one ordered pair with output laws ``first``, ``second`` and the channel's blanket."""
    first, second, blanket = (np.asarray(v, dtype=np.float64) for v in (first, second, blanket))
    victim, candidates = _pair_candidates(first, second[None, :], blanket)
    return _candidates_of(victim, candidates, 0)[1]


@validate_params({"channel": CHANNEL}, owner="amplification.channel_reductions")
def channel_reductions(channel: ArrayLike) -> list[list[Reduction]]:
    """For each class of ordered pairs with distinct parameters, its candidate reductions (module docstring)."""
    matrix = _outputs_given(cast(np.ndarray, channel))
    rows, outputs = matrix.shape
    if rows * rows * outputs > MAX_CHANNEL_WORK:
        raise InvalidParameterError(
            f"The channel has {rows} inputs and {outputs} outputs: its {rows * (rows - 1)} pairs are too many to "
            f"enumerate (rows^2 * outputs above {MAX_CHANNEL_WORK}). Use method='generic' (any epsilon0-LDP randomizer)."
        )
    blanket = matrix.min(axis=0)
    classes: dict[tuple, list[Reduction]] = {}
    for index in range(rows):
        others = np.delete(matrix, index, axis=0)
        distinct = np.any(others != matrix[index][None, :], axis=1)
        if not distinct.any():
            continue
        victim, candidates = _pair_candidates(matrix[index], others[distinct], blanket)
        for row in range(victim.shape[0]):
            key, reductions = _candidates_of(victim, candidates, row)
            classes.setdefault(key, reductions)
    return list(classes.values())
