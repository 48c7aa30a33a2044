r"""Average over Multiple Random Permutations, AMRP (paper 001, sec. IV-C).

Paper 001 (Fang et al., IEEE S&P 2023).  A Wiener
filter assumes a (weakly) stationary signal; on non-smooth data its result
depends on the order of the items.  AMRP permutes the support vector at random,
filters it, puts the estimate back in the original order, and averages over
``R`` permutations (the paper uses ``R = 100``):

.. math::

    \tilde f = \frac1R \sum_{r=1}^R \pi_r^{-1}\big(\mathrm{filter}(\pi_r(g))\big).

Permutations are processed in batches (one 2-D FFT per batch) of at most
``max_batch_elements`` entries, so memory stays bounded whatever ``R`` and ``d``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["average_over_permutations"]

#: Entries per batch of permuted vectors (about 32 MB of float64).
MAX_BATCH_ELEMENTS = 1 << 22


def average_over_permutations(
    values: np.ndarray,
    estimator: Callable[[np.ndarray], np.ndarray],
    *,
    permutations: int,
    rng: np.random.Generator,
    max_batch_elements: int = MAX_BATCH_ELEMENTS,
) -> np.ndarray:
    """Average ``estimator`` over random re-orderings of ``values``, mapped back.

    ``estimator`` takes a ``(batch, d)`` array of permuted vectors and returns
    the ``(batch, d)`` estimates in the same (permuted) order.  The batches are
    a function of ``d`` and ``permutations`` only, so a seed fixes the result.
    """
    size = values.shape[-1]
    batch = max(1, min(permutations, max_batch_elements // size))
    total = np.zeros(size, dtype=np.float64)
    done = 0
    while done < permutations:
        rows = min(batch, permutations - done)
        order = rng.permuted(np.tile(np.arange(size), (rows, 1)), axis=1)
        estimates = estimator(values[order])
        # estimates[r, j] is the estimate of item order[r, j]: scatter-add them back in place
        total += np.bincount(order.ravel(), weights=estimates.ravel(), minlength=size)
        done += rows
    return total / permutations
