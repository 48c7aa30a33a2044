r"""A finite channel's exact privacy loss: every ordered pair of inputs read from the matrix.

For a channel :math:`R` (rows: inputs, columns: outputs) the ordered pair :math:`(x_0, x_1)` has the
exact loss :func:`~._distributions.pair_atoms` of :math:`(R(x_0), R(x_1))`.  When every ordered pair
has the same loss (up to 1e-12 in its atoms: GRR, the unary encodings, subset selection, Hadamard
response, hashing with a symmetric family), that loss *is* the mechanism's dominating pair and the
accounting of its reports is exact.  Otherwise the pairs' distinct losses are gathered and the
mechanism is dominated by connect-the-dots on the largest of their curves (:class:`Curve`; exact at
the grid points, pessimistic between them).  :math:`\rho` is the largest pair's
(:func:`~._zcdp.atoms_rho`).
"""

from __future__ import annotations

import numpy as np

from .._validation import Channel, check_param
from ..errors import InvalidParameterError
from ._distributions import Atoms, Curve, LossDistribution, pair_parts
from ._zcdp import atoms_rho

__all__ = ["channel_loss", "pairs_loss", "MAX_PAIR_WORK"]

#: rows^2 * outputs above which a channel's pairs are not enumerated (about a second of NumPy)
MAX_PAIR_WORK = 4 * 10**7
#: a channel: its outputs may have probability 0 under some inputs only (an infinite loss, which the distributions hold)
_CHANNEL = Channel(one_support=False)
#: points of the envelope's curve over [-largest loss, largest loss]
_CURVE_POINTS = 2001


def channel_loss(channel: np.ndarray, owner: str) -> tuple[LossDistribution, float, int]:
    """``(distribution, rho, distinct)``: the channel's dominating pair, its rho, and how many distinct pair losses it has;
    a matrix that is no channel is refused naming ``owner`` (whose channel it is).

    Raises
    ------
    InvalidParameterError
        The channel is too large to enumerate its pairs (``MAX_PAIR_WORK``), or not a channel.
    """
    matrix = check_param(owner, "channel", channel, _CHANNEL)
    rows, outputs = matrix.shape
    if rows * rows * outputs > MAX_PAIR_WORK:
        raise InvalidParameterError(f"A channel of {rows} inputs and {outputs} outputs has too many pairs to enumerate.")
    distinct: dict[tuple, Atoms] = {}
    seen: set[bytes] = set()
    for first in range(rows):
        seconds = np.delete(np.arange(rows), first)
        for second, key in zip(seconds.tolist(), _pair_keys(matrix[first], matrix[seconds])):
            if key in seen:  # the same sorted losses, masses and infinite masses: pair_atoms gives the same atoms
                continue
            seen.add(key)
            parts = pair_parts(matrix[first], matrix[second])  # pair_atoms's, checked as Atoms once per signature
            signature = _parts_signature(*parts)
            if signature not in distinct:
                distinct[signature] = Atoms(*parts)
    return pairs_loss(list(distinct.values()))


def _pair_keys(upper: np.ndarray, lowers: np.ndarray) -> list[bytes]:
    """One key per row of ``lowers``: the exact bytes of what :func:`pair_atoms` reads of the pair (``upper``, row):
    its finite losses in their stable sorted order with their masses, and the masses that go to infinity in the
    outputs' order.  Equal keys give equal atoms, so a channel's pairs are computed once per key (a 256-input channel's
    65,280 pairs: 2.6 -> 0.2 CPU-s), and the atoms kept are those the pair-by-pair loop kept."""
    reached = upper > 0
    both = reached[None, :] & (lowers > 0)
    with np.errstate(divide="ignore"):
        losses = np.where(both, np.log(upper)[None, :] - np.log(np.where(both, lowers, 1.0)), np.inf)
    order = np.argsort(losses, axis=1, kind="stable")
    masses = np.where(both, upper[None, :], 0.0)
    infinite = np.where(reached[None, :] & (lowers <= 0), upper[None, :], 0.0)
    keys = np.concatenate([np.take_along_axis(losses, order, 1), np.take_along_axis(masses, order, 1), infinite], 1)
    return [row.tobytes() for row in keys]


def pairs_loss(pairs: list[Atoms]) -> tuple[LossDistribution, float, int]:
    """The dominating pair of a mechanism whose ordered neighbouring pairs have the losses ``pairs`` (all of them,
    both orders), its rho, and how many distinct losses there were."""
    unique = list({_signature(atoms): atoms for atoms in pairs}.values())
    rho = max(atoms_rho(atoms) for atoms in unique)
    if len(unique) == 1:
        return unique[0], rho, 1
    return _curve(unique), rho, len(unique)


def _signature(atoms: Atoms) -> tuple:
    return _parts_signature(atoms.losses, atoms.masses, atoms.infinity)


def _parts_signature(losses: tuple[float, ...], masses: tuple[float, ...], infinity: float) -> tuple:
    return (tuple(np.round(losses, 12)), tuple(np.round(masses, 12)), round(infinity, 12))


def _curve(pairs: list[Atoms]) -> Curve:
    """The largest of the pairs' exact curves at a symmetric grid of epsilons (exact values, so connect-the-dots on
    them dominates each pair: every pair's curve is convex in e^epsilon and lies below its chords)."""
    top = max(max(abs(x) for x in atoms.losses) for atoms in pairs)
    epsilons = np.linspace(-top, top, _CURVE_POINTS)
    deltas = np.zeros(_CURVE_POINTS)
    for atoms in pairs:
        losses, masses = np.asarray(atoms.losses), np.asarray(atoms.masses)
        gap = -np.expm1(epsilons[:, None] - losses[None, :])
        curve = (np.maximum(gap, 0.0) * masses[None, :]).sum(axis=1) + atoms.infinity
        deltas = np.maximum(deltas, curve)
    return Curve(tuple(float(e) for e in epsilons), tuple(float(min(d * (1 + 1e-12), 1.0)) for d in deltas))
