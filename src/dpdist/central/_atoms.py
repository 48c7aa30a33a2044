r"""Atom-aware CDF inside the leaves of a released histogram (post-processing: no privacy cost).

A released histogram knows how much mass each leaf holds, not where it lies inside the leaf.  The
usual reading, a CDF linear inside the leaf, is exact for mass spread evenly, but for a point mass
(an atom: incomes at round yearly sums, times rounded to the minute) at relative position
:math:`t` in the leaf it misses the data's CDF by :math:`m\max(t, 1-t)`, up to the whole atom
:math:`m` when the atom sits at a leaf edge.  That error depends only on where the public grid
happens to fall, and it decides the KS distance on data with atoms (``docs/explanation/central-release.md``, "Tree CDF
on data with atoms").  Any continuous CDF misses an atom by at least :math:`m/2` (it cannot be
within less of both :math:`F(a^-)` and :math:`F(a)`); the CDF that puts half of the atom at each
edge of its leaf reaches :math:`m/2` wherever the atom lies: it is the minimax reading of mass of
unknown position.

The rule.  For an inner leaf :math:`j` with released mass :math:`c_j` the part above both
neighbours, less a noise margin,

.. math::

    a_j = \max\bigl(0,\; c_j - \max(c_{j-1}, c_{j+1}) - z\sqrt{2}\,\sigma\bigr),

is read as an atom of unknown position: :math:`a_j/2` at the leaf's left edge (the CDF is
right-continuous: an atom exactly at the edge, common for data on a lattice, is half-covered
there) and :math:`a_j/2` just before its right edge, the rest :math:`c_j - a_j` spread evenly
(linear).  Just below every leaf edge the CDF keeps its released value, the share of the data
below the edge.  :math:`\sigma` is the noise standard deviation of a released
count and :math:`z =` :data:`NOISE_MARGIN` standard deviations of the difference of two counts keep
noise from making atoms.  Mass that rises smoothly (a density's peak) exceeds its larger neighbour
by a curvature term only, so smooth data keep the linear reading; the two end leaves keep it too
(an atom there cannot be told from a steep rise at the bound).  The jumps are drawn as bins of
width :data:`JUMP_WIDTH` of a leaf (a :class:`~dpdist.Distribution` is uniform within each bin);
where the bounds' floating-point resolution cannot hold such a bin, the linear reading is kept.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["NOISE_MARGIN", "JUMP_WIDTH", "atom_masses", "atom_aware_cdf"]

#: Noise standard deviations (of the difference of two released counts) an atom must clear.
NOISE_MARGIN = 3.0
#: Width of the bins that carry the half atoms, as a share of the leaf width.
JUMP_WIDTH = 2.0**-20


def atom_masses(masses: np.ndarray, noise_sd, widths: np.ndarray | None = None,
                whole: bool | np.ndarray = False) -> np.ndarray:
    r"""The atom :math:`a_j` of every leaf (see the module docstring), in the units of ``masses``.

    ``noise_sd`` is one standard deviation for every cell or one per cell; with ``widths`` (cells of
    several widths: a tree's leaves beside the sub-leaves of a refined leaf,
    :mod:`dpdist.central._refine`) a neighbour's mass is taken at the cell's width (its density times the
    cell's width).  ``whole`` (for every cell or per cell): the margin decides only whether the cell holds
    an atom, and the atom is all of its mass above the larger neighbour (a sub-leaf is too narrow to hold
    much else: keeping the margin out of the atom would put it between the atom's halves, and a quantile
    there on the wrong side of the atom).
    """
    masses = np.asarray(masses, dtype=np.float64)
    if masses.size < 3:
        return np.zeros(masses.size)
    left, right = masses[:-2], masses[2:]
    if widths is not None:
        widths = np.asarray(widths, dtype=np.float64)
        left, right = left * (widths[1:-1] / widths[:-2]), right * (widths[1:-1] / widths[2:])
    margin = NOISE_MARGIN * math.sqrt(2.0) * np.broadcast_to(np.asarray(noise_sd, dtype=np.float64), masses.shape)
    atoms = np.zeros(masses.size)
    above = masses[1:-1] - np.maximum(left, right)
    taken = np.where(np.broadcast_to(whole, masses.shape)[1:-1], 0.0, margin[1:-1])
    atoms[1:-1] = np.where(above > margin[1:-1], above - taken, 0.0)
    return atoms


def atom_aware_cdf(
    edges: np.ndarray, cdf: np.ndarray, atoms: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Knots ``(x, F)`` of the CDF with each leaf's atom split between its two edges (``atoms`` as CDF shares),
    and where each released value ``cdf[k]`` holds (``edges[k]``, or ``edges[k] - w`` next to an atom).

    At a leaf edge :math:`e_k` the CDF is :math:`F_k + a_k/2` (the released share below the edge plus
    half the atom of the leaf starting there); :math:`F_k` itself holds at :math:`e_k - w` and the
    right half of the previous leaf's atom rises over :math:`[e_k - 2w, e_k - w]`, with ``w`` =
    :data:`JUMP_WIDTH` of a leaf.  Returns ``(edges, cdf)`` unchanged when no leaf has an atom or
    when the bounds cannot resolve ``w`` (the values then hold at the edges).
    """
    edges = np.asarray(edges, dtype=np.float64)
    cdf = np.asarray(cdf, dtype=np.float64)
    atoms = np.minimum(np.asarray(atoms, dtype=np.float64), np.diff(cdf))
    if not np.any(atoms > 0):
        return edges, cdf, edges
    starting = np.append(atoms, 0.0)  # the atom of the leaf starting at each edge
    ending = np.insert(atoms, 0, 0.0)  # the atom of the leaf ending at each edge
    width = np.insert(np.diff(edges), 0, 0.0) * JUMP_WIDTH  # in the leaf left of each edge
    below = np.flatnonzero((starting > 0) | (ending > 0))
    rising = np.flatnonzero(ending > 0)
    x = np.concatenate([edges, edges[below] - width[below], edges[rising] - 2 * width[rising]])
    f = np.concatenate([cdf + starting / 2, cdf[below], cdf[rising] - ending[rising] / 2])
    order = np.argsort(x, kind="stable")
    x, f = x[order], f[order]
    if np.any(np.diff(x) <= 0):  # the jump bins are below the bounds' floating-point resolution
        return edges, cdf, edges
    held = edges.copy()
    held[below] -= width[below]
    return x, np.maximum.accumulate(f), held
