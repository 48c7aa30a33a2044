r"""The covariance of one group's unbiased cell frequencies, as a quadratic form.

A group of :math:`N` users (of :math:`n`) reports cells through GRR or a unary
encoding; its unbiased estimate :math:`\hat f = (C/N - q)/(p - q)` of the cell
frequencies :math:`f` of the *population* has, given :math:`N`, covariance

* from the randomizer, with :math:`P = q + (p - q) f` and :math:`\delta = p - q`:
  GRR, one cell per report: :math:`(\mathrm{diag}(P) - PP^\top)/(N\delta^2)`; unary
  encoding, bits independent given the cell: :math:`\mathrm{diag}(P(1-P))/(N\delta^2) +
  (\mathrm{diag}(f^2) - ff^\top)/N` (the cross term :math:`E[B_uB_v] - P_uP_v = -\delta^2 f_u f_v`);
* from who the :math:`N` users are (a uniform subset): the hypergeometric
  :math:`(\mathrm{diag}(f) - ff^\top)(n - N)/(N(n - 1))`.

:func:`quadratic_form` returns :math:`u^\top \Sigma u` for a batch of vectors ``u``
without forming :math:`\Sigma` (the plug-in :math:`f` is the estimate, clipped to [0, 1]).
"""

from __future__ import annotations

import numpy as np

__all__ = ["quadratic_form"]


def quadratic_form(unary: bool, p: float, q: float, f: np.ndarray, u: np.ndarray, count: int, n: int) -> np.ndarray:
    """:math:`u^\\top \\Sigma u` for ``u`` of shape ``(cells, batch)`` (``inf`` without reports)."""
    f = np.clip(np.asarray(f, dtype=np.float64).ravel(), 0.0, 1.0)[:, None]
    u = u.reshape(f.shape[0], -1)
    if count <= 0:  # the batch's shape (the cells flattened first: a group's table may have several axes)
        return np.full(u.shape[1:], np.inf)
    delta = p - q
    support = q + delta * f
    squares = u * u
    if unary:
        randomizer = (squares * support * (1 - support)).sum(axis=0) / (count * delta**2)
        randomizer += ((squares * f * f).sum(axis=0) - (u * f).sum(axis=0) ** 2) / count
    else:
        randomizer = ((squares * support).sum(axis=0) - (u * support).sum(axis=0) ** 2) / (count * delta**2)
    sampling = 0.0
    if n > 1:
        sampling = ((squares * f).sum(axis=0) - (u * f).sum(axis=0) ** 2) * (n - count) / (count * (n - 1))
    return np.maximum(randomizer + sampling, 0.0)
