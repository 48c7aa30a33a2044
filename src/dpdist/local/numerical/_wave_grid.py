r"""Public output grid of the wave mechanisms: bucket masses, transition matrices, sampling.

Paper 003, sec. 5.4-5.5.  The client reports
the *index* of the output bucket its randomized value falls in, never the
value itself: the output domain :math:`[-b, 1+b]` is cut into
:math:`\tilde d` equal buckets :math:`\tilde B_j = [e_j, e_{j+1})`, and every
bucket has probability at least :math:`q \tilde w > 0` whatever the input, so the
support of a report is all :math:`\tilde d` indices for every input
(floating-point safety, docs/explanation/privacy-model.md "Privacy model": no input-dependent gaps as with naively
sampled real noise, cf. Mironov 2012).

For a point input :math:`v` the bucket masses are exact integrals of the wave:

.. math::

    \Pr[j \mid v] = q \tilde w + \lambda\,[G(e_{j+1} - v) - G(e_j - v)],

and for an input uniform on the bin :math:`B_i = [c_i, c_{i+1})` of width
:math:`h` (the matrix :math:`M` of sec. 5.5, here stored as
``M[j, i] = Pr[bucket j | bin i]``, output rows by input columns):

.. math::

    M_{j,i} = q \tilde w + \frac{\lambda}{h}\,\Delta_j\,[K(e_j - c_i) - K(e_j - c_{i+1})],

with :math:`\Delta_j` the forward difference in :math:`j`.  The column sums
telescope to :math:`q(1+2b) + \lambda\,[(K(1+b-c_i) - K(1+b-c_{i+1})) - 0]/h = 1`.
"""

from __future__ import annotations

import numpy as np

from ._wave_shape import WaveShape

__all__ = ["OutputGrid"]


class OutputGrid:
    """``buckets`` equal output buckets over ``[-b, 1 + b]`` for a wave ``shape``, ``bins`` input bins."""

    def __init__(self, shape: WaveShape, buckets: int, bins: int):
        self.shape = shape
        self.buckets = int(buckets)
        self.bins = int(bins)
        self.width = (1.0 + 2.0 * shape.b) / self.buckets
        self.edges = -shape.b + self.width * np.arange(self.buckets + 1)
        self.edges[-1] = 1.0 + shape.b
        # output buckets as wide as the input bins: M[j, i] depends on j - i only
        self.toeplitz = abs(self.width * self.bins - 1.0) < 1e-12

    def client_design(self) -> dict:
        """The constants the JavaScript client's randomizer uses."""
        shape = self.shape
        return {"buckets": self.buckets, "weight": shape.weight, "b": shape.b, "width": self.width,
                "halfWidths": list(shape.half_widths)}

    def point_masses(self, values: np.ndarray) -> np.ndarray:
        """``P[k, j] = Pr[bucket j | input values[k]]`` for inputs in [0, 1] (the exact channel)."""
        values = np.asarray(values, dtype=np.float64)[:, None]
        bump = np.diff(self.shape.bump_cdf(self.edges[None, :] - values), axis=1)
        return self.shape.q * self.width + self.shape.weight * bump

    def transition_parts(self) -> tuple[float, np.ndarray]:
        """``(c, B)`` with ``M = c + B``: the uniform part ``c = q w`` and the banded bump part ``B``.

        ``B[j, i]`` is set to exactly 0 where bucket ``j`` cannot meet the bump of
        any input of bin ``i`` (``[e_j, e_{j+1}]`` and ``[c_i - b, c_{i+1} + b]``
        overlap in at most a point), where it is 0 mathematically.
        """
        bins = self.bins
        inputs = np.linspace(0.0, 1.0, bins + 1)
        integral = self.shape.bump_cdf_integral(self.edges[:, None] - inputs[None, :])
        per_bin = (integral[:, :-1] - integral[:, 1:]) * bins  # (1/h) * integral over the bin of G
        bump = self.shape.weight * np.diff(per_bin, axis=0)
        reach = (self.edges[1:, None] > inputs[None, :-1] - self.shape.b) & (
            self.edges[:-1, None] < inputs[None, 1:] + self.shape.b
        )
        return self.shape.q * self.width, np.where(reach, bump, 0.0)

    def transition_matrix(self) -> np.ndarray:
        """``M[j, i] = Pr[bucket j | input uniform on bin i of the bins equal bins of [0, 1]]``."""
        constant, bump = self.transition_parts()
        return constant + bump

    def sample(self, values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        r"""One bucket index per input value in [0, 1] (int64).

        Mixture sampling of the wave :math:`q + \lambda g`: with probability
        :math:`1 - \lambda` a uniform bucket -- an exact integer draw, since the
        uniform part has mass :math:`q\tilde w` on every bucket; so every index
        is reachable from every input and the support of a report does not
        depend on it.  Otherwise the bucket holding :math:`v + Z`,
        :math:`Z \sim g` (one or two uniforms; O(1) work per user), i.e. a draw
        from the bucket masses :math:`G(e_{j+1} - v) - G(e_j - v)`; float64
        rounding can move a point within ~1 ulp of a bucket edge to the
        neighbouring bucket (a relative change of the masses of order
        :math:`2^{-52}`), never outside the set of buckets.
        """
        size = values.size
        uniform = rng.integers(0, self.buckets, size=size)
        from_bump = rng.random(size) < self.shape.weight
        position = values + self.shape.sample_offsets(size, rng)
        bump_bucket = np.floor((position + self.shape.b) / self.width).astype(np.int64)
        np.clip(bump_bucket, 0, self.buckets - 1, out=bump_bucket)
        return np.where(from_bump, bump_bucket, uniform)
