r"""HH-ADMM, ``hh-admm`` (paper 003 sec. 4.3 and App. B, Algorithm 2).

Same client and reports as :mod:`.hierarchy` (``hh``); the server replaces Hay
et al.'s consistency + Norm-Sub by the ADMM solution of problem (2)/(5),

.. math::

    \min_{\hat x} \tfrac12 \|\hat x - \tilde x\|_2^2 \quad\text{s.t.}\quad
    A\hat x = 0,\ \hat x \ge 0,\ \hat x_0 = 1,

where :math:`\tilde x` concatenates the root (1) and every level's unbiased
frequencies.  See :func:`._tree.hh_admm` for the updates and the stopping rule
(primal and dual residuals below ``tolerance * sqrt(#nodes)``, at most
``max_iterations`` iterations; defaults 1e-7 and 10 000).  The returned leaf
masses are the ADMM split variable :math:`w` of the leaves, which is exactly
non-negative and sums to 1; its distance to the consistent iterate is bounded
by the primal residual (reported in ``details``).
"""

from __future__ import annotations

import numpy as np

from ..._validation import Integer, Interval, check_param
from ...postprocess import consistency_violation
from .._protocol import register
from ._tree import hh_admm
from .hh import HierarchicalHistogram

__all__ = ["HierarchicalHistogramADMM"]


@register
class HierarchicalHistogramADMM(HierarchicalHistogram):
    """Hierarchical histogram post-processed by ADMM (non-negative, sums to 1, consistent).

    Parameters are those of ``hh``; ``estimate`` takes ``tolerance`` and
    ``max_iterations`` for the stopping rule.
    """

    name = "hh-admm"
    summary = "hierarchical histogram with the ADMM post-processing of Li et al. (App. B)"
    estimate_options = {"tolerance": Interval(0, 1, closed="neither"), "max_iterations": Integer(low=1)}

    # its options replace hh's post-processing (estimate_options declares them): not hh's signature
    def _estimate(self, aggregator, *, tolerance: float = 1e-7, max_iterations: int = 10_000):  # type: ignore[override]
        """Leaf masses from Algorithm 2 of paper 003.

        Parameters
        ----------
        tolerance : float
            Absolute tolerance per node on the primal and dual residuals (> 0).
        max_iterations : int
            Iteration cap (>= 1); ``details["converged"]`` says whether the
            tolerance was reached first.
        """
        owner = f"{self.display_name}.estimate"
        tolerance = check_param(owner, "tolerance", tolerance, Interval(0, 1, closed="neither"))
        max_iterations = check_param(owner, "max_iterations", max_iterations, Integer(low=1))
        noisy = [np.ones(1)] + self.level_frequencies(aggregator)
        result = hh_admm(noisy, self.branching, tolerance=tolerance, max_iterations=max_iterations)
        return self._distribution(
            result.leaves,
            aggregator=aggregator,
            iterations=result.iterations,
            converged=result.converged,
            primal_residual=result.primal_residual,
            dual_residual=result.dual_residual,
            consistency_violation=consistency_violation(result.tree, self.branching),
            tree=result.tree,
            level_counts=self.level_counts(aggregator),
        )
