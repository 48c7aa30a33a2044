"""One uniform unset cell per row of a boolean matrix, by rejection (the subset samplers' last item).

Subset selection (:mod:`.frequency.ss`) and the wavelet's signed subsets
(:mod:`.numerical._signed_subset`) draw ``k - 1`` other items for every user and then
one more, kept unless the true item takes its place: the same draws whether or not
the report holds the value, so a device's work does not tell it.  A uniform subset
plus a uniform element of its complement is a uniform subset one larger.
"""

from __future__ import annotations

import numpy as np

__all__ = ["uniform_unset_columns"]


def uniform_unset_columns(bitmap: np.ndarray, excluded, rng) -> np.ndarray:
    """For each row ``i`` of the boolean ``bitmap`` (n, d), a uniform column ``!= excluded[i]`` that is unset.

    ``excluded`` is an int array (n,) or one int for every row.  Rejection with one candidate per row and
    round: the rounds depend on the draws only.  Every row must have such a column.
    """
    n, d = bitmap.shape
    excluded = np.broadcast_to(np.asarray(excluded, dtype=np.int64), (n,))
    found = np.empty(n, dtype=np.int64)
    pending = np.arange(n)
    while pending.size:
        r = rng.integers(0, d - 1, size=pending.size, dtype=np.int64)
        column = r + (r >= excluded[pending])
        free = ~bitmap[pending, column]
        found[pending[free]] = column[free]
        pending = pending[~free]
    return found
