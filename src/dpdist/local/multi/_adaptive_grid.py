r"""Data-aware 2-D grids over PriPL-Trees: partitioning (Algorithm 3), consistency (sec. 4.3), response matrix.

Wang, Ye, Hu, Meng, "PriPL-Tree: Accurate Range Query for Arbitrary Distribution under Local
Differential Privacy", PVLDB 17(11), 2024 (full version arXiv:2407.13532), sec. 4 and appendix B.2.

*Partitioning* (sec. 4.2, Algorithm 3): a pair's grid starts from the leaf intervals of both attributes'
trees.  The marginal cell of largest estimated frequency (either axis) is split in two of nearly equal
frequency (both at least :math:`\bar\sigma`) when its frequency exceeds :math:`\bar\sigma` and the split
lowers

.. math:: Err_G \propto 2 g_i g_j \sigma^2 \binom{m}{2} + \eta \sum_{c \in G} (\tilde f_{\pi_i(c)} \tilde f_{\pi_j(c)})^2,

the noise of the cells a query covers plus the within-cell error of the cells it cuts (the factor
:math:`r` of sec. 4.2 is common to both sides); a cell that is not split is set aside, and the unsplit
ones among them are then merged with an adjacent set-aside neighbour, smallest first, when the merged
frequency is at most :math:`\bar\sigma` or the merge lowers :math:`Err_G` (lines 10-17), as long as the grid
keeps two cells (an oracle needs two items; a one-cell grid would carry no information).  Here
:math:`\sigma^2 = 4e^\varepsilon / (N (e^\varepsilon - 1)^2)` and :math:`\bar\sigma = \sqrt{2\sigma^2\binom{m}{2}}`,
the standard deviation of an OUE cell frequency from the :math:`N / (2\binom{m}{2})` users of one grid.

*Consistency* (sec. 4.3): the leaves of each tree and the marginal cells of each grid on the same
attribute meet in *blocks* (one leaf split into several cells, several leaves merged into one cell, or
one to one).  First each attribute's leaves are updated by inverse-variance averaging of every block's
total with each of its grids in turn (the extra frequency shared equally by a block's leaves), then
non-negative with total one (Norm-Sub); the trees' slopes are clipped again (eq. 10).  Then each grid is
made to agree with both attributes' leaves, block by block, alternately until it stops changing (eq. 9's
equal shift with non-negativity).

*Response matrix* (sec. 4.1, step 4): the maximum-entropy :math:`d \times d` table whose rows and columns
sum to the two trees' PL histograms bin by bin and whose grid cells sum to the grid (iterative
proportional fitting).
"""

from __future__ import annotations

import numpy as np

from ._pripl_tree import norm_sub

__all__ = ["adaptive_partition", "blocks", "update_leaves", "fit_grid_to_leaves", "response_matrix"]


def _balanced_split(cumulative: np.ndarray, left: int, right: int, floor: float):
    """The split bin ``s`` (cells ``left..s`` and ``s+1..right``) minimising ``f1^2 + f2^2`` with both ``>= floor``."""
    if right <= left:
        return None
    split = np.arange(left, right)
    first = cumulative[split + 1] - cumulative[left]
    second = cumulative[right + 1] - cumulative[split + 1]
    ok = (first >= floor) & (second >= floor)
    if not ok.any():
        return None
    loss = np.where(ok, first**2 + second**2, np.inf)
    s = int(split[np.argmin(loss)])
    return s, float(first[s - left]), float(second[s - left])


def adaptive_partition(densities: tuple[np.ndarray, np.ndarray], leaves: tuple[np.ndarray, np.ndarray],
                       noise_variance: float, eta: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Algorithm 3: the left bins of each axis's cells, from the trees' bin ``densities`` and leaf ``leaves``
    (left bins).  ``noise_variance`` is :math:`2\sigma^2\binom{m}{2}`, a cell's OUE variance."""
    floor = float(np.sqrt(noise_variance))
    cumulative = [np.concatenate([[0.0], np.cumsum(d)]) for d in densities]
    sizes = [d.size for d in densities]
    # per axis: lists of [left, right, frequency, status]; status 1 original, 2 split, -1 mergeable, 0 final
    cells = []
    for axis in (0, 1):
        lefts = np.asarray(leaves[axis], dtype=np.int64)
        rights = np.concatenate([lefts[1:] - 1, [sizes[axis] - 1]])
        mass = cumulative[axis][rights + 1] - cumulative[axis][lefts]
        cells.append([[int(a), int(b), float(f), 1] for a, b, f in zip(lefts, rights, mass)])

    def squares(axis: int) -> float:
        return float(sum(c[2] ** 2 for c in cells[axis]))

    while True:  # splitting, lines 3-9
        open_cells = [(c[2], axis, i) for axis in (0, 1) for i, c in enumerate(cells[axis]) if c[3] > 0]
        if not open_cells:
            break
        frequency, axis, i = max(open_cells)
        other = 1 - axis
        cell = cells[axis][i]
        split = _balanced_split(cumulative[axis], int(cell[0]), int(cell[1]), floor) if frequency > floor else None
        if split is not None:
            s, f1, f2 = split
            gain = eta * (frequency**2 - f1**2 - f2**2) * squares(other) - noise_variance * len(cells[other])
            if gain > 0:
                cells[axis][i: i + 1] = [[cell[0], s, f1, 2], [s + 1, cell[1], f2, 2]]
                continue
        cell[3] = -1 if cell[3] == 1 else 0
    while True:  # merging, lines 10-17
        open_cells = [(c[2], axis, i) for axis in (0, 1) for i, c in enumerate(cells[axis]) if c[3] == -1]
        if not open_cells:
            break
        frequency, axis, i = min(open_cells)
        other, row = 1 - axis, cells[axis]
        neighbours = [j for j in (i - 1, i + 1) if 0 <= j < len(row) and row[j][3] == -1]
        if not neighbours:
            row[i][3] = 0
            continue
        j = min(neighbours, key=lambda k: row[k][2])
        a, b = min(i, j), max(i, j)
        merged = row[a][2] + row[b][2]
        gain = noise_variance * len(cells[other]) - eta * 2 * row[a][2] * row[b][2] * squares(other)
        if (merged <= floor or gain > 0) and (len(row) - 1) * len(cells[other]) >= 2:  # a grid keeps 2 cells
            row[a: b + 1] = [[row[a][0], row[b][1], merged, -1]]
        else:
            row[a][3] = row[b][3] = 0
    return tuple(np.array([c[0] for c in cells[axis]], dtype=np.int64) for axis in (0, 1))  # type: ignore[return-value]


def blocks(leaf_lefts: np.ndarray, cell_lefts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The block of every leaf and of every cell: blocks start where both partitions have an edge."""
    common = np.intersect1d(leaf_lefts, cell_lefts)
    return (np.searchsorted(common, leaf_lefts, side="right") - 1, np.searchsorted(common, cell_lefts, side="right") - 1)


def update_leaves(frequencies: np.ndarray, variances: np.ndarray, leaf_lefts: np.ndarray, marginal: np.ndarray,
                  marginal_variance: np.ndarray, cell_lefts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One grid's update of one tree's leaves (sec. 4.3): each block's total averaged by inverse variance with the
    grid's, the change shared equally by the block's leaves, with the exact variance of that linear update."""
    leaf_block, cell_block = blocks(leaf_lefts, cell_lefts)
    count = int(leaf_block.max()) + 1
    leaf_total = np.bincount(leaf_block, frequencies, count)
    leaf_var = np.bincount(leaf_block, variances, count)
    grid_total = np.bincount(cell_block, marginal, count)
    grid_var = np.bincount(cell_block, marginal_variance, count)
    share = np.divide(leaf_var, leaf_var + grid_var, out=np.zeros(count), where=leaf_var + grid_var > 0)
    members = np.bincount(leaf_block, minlength=count).astype(np.float64)
    step = (share / members)[leaf_block]
    new = frequencies + step * (grid_total - leaf_total)[leaf_block]
    new_var = (variances * (1 - step) ** 2 + step**2 * (leaf_var[leaf_block] - variances)
               + step**2 * grid_var[leaf_block])
    return new, new_var


def fit_grid_to_leaves(table: np.ndarray, targets: tuple[np.ndarray, np.ndarray], leaf_lefts: tuple, cell_lefts: tuple,
                       tolerance: float = 1e-12, max_iterations: int = 200) -> np.ndarray:
    """Sec. 4.3, second step: the grid made to agree with both trees' leaf frequencies ``targets``, block by block
    (an equal shift of the block's cells with non-negativity, eq. 9), alternating the axes until it stops changing;
    then non-negative with total one."""
    table = np.asarray(table, dtype=np.float64).copy()
    plans = []
    for axis in (0, 1):
        leaf_block, cell_block = blocks(np.asarray(leaf_lefts[axis]), np.asarray(cell_lefts[axis]))
        count = int(leaf_block.max()) + 1
        plans.append((cell_block, np.bincount(leaf_block, targets[axis], count)))
    for _ in range(max_iterations):
        before = table.copy()
        for axis, (cell_block, totals) in enumerate(plans):
            view = table if axis == 0 else table.T
            for block, total in enumerate(totals):
                rows = cell_block == block
                view[rows] = norm_sub(view[rows].ravel(), max(float(total), 0.0)).reshape(view[rows].shape)
        if np.abs(table - before).sum() < tolerance:
            break
    return norm_sub(table.ravel(), 1.0).reshape(table.shape)


def response_matrix(rows: np.ndarray, columns: np.ndarray, table: np.ndarray, cell_lefts: tuple,
                    tolerance: float = 1e-10, max_iterations: int = 300) -> np.ndarray:
    """The maximum-entropy table with bin marginals ``rows``/``columns`` and cell sums ``table`` (IPF)."""
    size_x, size_y = rows.size, columns.size
    lx, ly = (np.asarray(cell_lefts[0]), np.asarray(cell_lefts[1]))
    wx = np.diff(np.concatenate([lx, [size_x]]))
    wy = np.diff(np.concatenate([ly, [size_y]]))
    matrix = np.full((size_x, size_y), 1.0 / (size_x * size_y))

    def ratio(target, current):
        return np.divide(target, current, out=np.zeros_like(current), where=current > 0)

    for _ in range(max_iterations):
        before = matrix.copy()
        matrix *= ratio(rows, matrix.sum(axis=1))[:, None]
        matrix *= ratio(columns, matrix.sum(axis=0))[None, :]
        sums = np.add.reduceat(np.add.reduceat(matrix, lx, axis=0), ly, axis=1)
        matrix *= np.repeat(np.repeat(ratio(table, sums), wx, axis=0), wy, axis=1)
        matrix /= matrix.sum()
        if np.abs(matrix - before).sum() < tolerance:
            break
    return matrix
