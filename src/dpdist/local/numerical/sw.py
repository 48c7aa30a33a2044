r"""Square wave reporting with EM / EMS reconstruction, ``sw`` (paper 003, sec. 5).

Paper 003 -- Li, Wang, Lopuhaä-Zwakenberg, Li,
Škorić, Li, "Estimating Numerical Distributions under Local Differential
Privacy", SIGMOD 2020.

Mechanism (eq. 3): a value :math:`v \in [0, 1]` (``bounds`` rescaled) is
reported as :math:`\tilde v \in [-b, 1 + b]` with density :math:`p` within
:math:`b` of :math:`v` and :math:`q` elsewhere,

.. math::

    p = \frac{e^\varepsilon}{2be^\varepsilon + 1}, \qquad q = \frac{1}{2be^\varepsilon + 1},

so :math:`p/q = e^\varepsilon` (Thm. 5.2).  ``b`` defaults to the maximizer of
the upper bound on the mutual information (sec. 5.3),
:math:`b = \frac{\varepsilon e^\varepsilon - e^\varepsilon + 1}{2e^\varepsilon(e^\varepsilon - 1 - \varepsilon)}`
(:func:`~._wave_shape.mutual_information_b`).

Reports (floating-point safety, docs/explanation/privacy-model.md "Privacy model"): the client sends the index of the
public output bucket of :math:`\tilde v` ("randomize before bucketize", R-B,
sec. 5.4: ``output_bins`` equal buckets of :math:`[-b, 1+b]`), sampled from the
exact bucket masses of its wave; every index has probability at least
:math:`q\tilde w > 0` for every input, so the support does not depend on the
input and ``channel`` is the exact law of a report.  With ``discrete=True``
the user bucketizes first ("bucketize before randomize", B-R, sec. 5.4) and
runs the discrete square wave on ``bins`` buckets
(:mod:`._wave_discrete`).

Estimation (sec. 5.5, Alg. 1): EM or EMS (EM with binomial smoothing) over
the transition matrix from ``bins`` input bins to the output buckets; see
:mod:`dpdist.local._em` for the stopping rule and tolerances.
"""

from __future__ import annotations

import dataclasses
import math

from ..._validation import Boolean, NoneWhen
from ...errors import InvalidParameterError
from .._docs import shared_parameters
from .._protocol import ParameterDependentTags, register
from ._wave_discrete import DiscreteSquareWave
from ._wave_grid import OutputGrid
from ._wave_protocol import MAX_BINS, WaveProtocol
from ._wave_shape import WaveShape, mutual_information_b

__all__ = ["SquareWave"]


@register
@shared_parameters
class SquareWave(WaveProtocol):
    """Square wave (SW) mechanism with EMS / EM estimation.

    Parameters
    ----------
    {epsilon}
    {wave_bounds}
    bins : int
        Number of equal input bins of the estimate (``d``; default 1024, at most 4096).
        With ``discrete=True`` also the number of buckets users bucketize into.
    output_bins : int, optional
        Number of equal output buckets of ``[-b, 1+b]`` (``\\tilde d``); default
        ``bins``, as in the paper's experiments.  When ``output_bins = (1 + 2b) bins``
        the buckets are as wide as the input bins and EM runs by FFT.  Not allowed
        with ``discrete=True`` (then it is ``bins + 2 floor(b bins)``).
    b : float, optional
        Half-width of the high-probability band as a fraction of the bounds'
        width; default the mutual-information rule of sec. 5.3.
    discrete : bool
        B-R (bucketize before randomize) instead of R-B; default False.

    Reports are output-bucket indices in the narrowest unsigned dtype.
    """

    name = "sw"
    summary = "square wave: report a public bucket of [-b, 1+b], dense near the value; EMS/EM estimate"
    _constraints = {**WaveProtocol._constraints, "discrete": Boolean()}
    _relations = (NoneWhen("output_bins", "discrete", True,
                           why="the discrete square wave has bins + 2*floor(b*bins) outputs",
                           counterexample={"discrete": True, "output_bins": 64}),)
    _defaults = {**WaveProtocol._defaults, "discrete": False}
    # B-R (discrete=True) has an exact aggregate sampler (binomials and multinomials per input bucket)
    tags = ParameterDependentTags(  # pyright: ignore[reportAssignmentType]  (a descriptor: ProtocolTags on the class and each instance)
        WaveProtocol.tags,
        lambda protocol, tags: dataclasses.replace(tags, exact_simulate=True) if protocol._params["discrete"] else tags,
    )

    def _setup(self):
        epsilon, bins = self.epsilon, self.bins
        b = self._params["b"]
        b = mutual_information_b(epsilon) if b is None else b
        if self._params["discrete"]:
            half_width = math.floor(b * bins)
            if bins + 2 * half_width > MAX_BINS:
                raise InvalidParameterError(
                    f"The 'b' parameter of SW with discrete=True gives bins + 2*floor(b*bins) = "
                    f"{bins + 2 * half_width} output buckets; at most {MAX_BINS} are allowed. Got b={b!r}."
                )
            self._finish_setup(DiscreteSquareWave(epsilon, bins, half_width), half_width / bins)
            return
        # b > 0: the MI rule underflows to 0 only for epsilon > ~700, and epsilon <= 30 by the table
        output_bins = self._params["output_bins"] or bins
        self._finish_setup(OutputGrid(WaveShape(epsilon, b, 1.0), output_bins, bins), b)

    def _simulate(self, values, rng):
        if self._params["discrete"]:
            return self._mechanism.simulate(values, rng)
        return super()._simulate(values, rng)
