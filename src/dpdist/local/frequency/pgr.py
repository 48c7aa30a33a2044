r"""Projective geometry response, ``pgr`` (Feldman, Nelson, Nguyen & Talwar, "Private Frequency Estimation via
Projective Geometry", ICML 2022).

Design (sec. 3 of the paper).  For a prime :math:`q` and a dimension :math:`t \ge 2`, the projective space
:math:`\mathbb P^{t-1}(\mathbb F_q)` has :math:`K = (q^t - 1)/(q - 1)` points: the nonzero vectors of
:math:`\mathbb F_q^t` up to a nonzero scalar.  A point is stored as its *canonical* vector, whose most
significant nonzero coordinate (reading the vector as base-:math:`q` digits, least significant first) is 1;
point :math:`i` is the :math:`i`-th canonical vector in increasing value, so the points of top digit :math:`m`
are indices :math:`(q^m-1)/(q-1) .. (q^{m+1}-1)/(q-1) - 1`.  :math:`t` is the least with :math:`K \ge d`
and item :math:`x` is point :math:`x` (the other :math:`K - d` points are outputs only).  The set of
output :math:`v` is its hyperplane :math:`\{x : \langle x, v\rangle = 0\}`; every point lies in
:math:`s = (q^{t-1}-1)/(q-1)` of them and every two points in :math:`\lambda = (q^{t-2}-1)/(q-1)` (a symmetric
2-design).  The randomizer (the paper's eq. 1, subset selection restricted to the design) reports

.. math::

    Q(v \mid x) = \frac{e^\varepsilon}{s e^\varepsilon + K - s} \text{ if } \langle x, v\rangle = 0, \quad
    \frac{1}{s e^\varepsilon + K - s} \text{ otherwise},

an index of :math:`\lceil \log_2 K \rceil` bits; the ratio of any two rows is at most :math:`e^\varepsilon`.

Estimator.  With :math:`C_x` the number of reports whose hyperplane holds :math:`x`, the protocol is pure with

.. math::

    p^* = p_{\mathrm{in}} = \frac{s e^\varepsilon}{s e^\varepsilon + K - s}, \qquad
    q^* = p_{\mathrm{in}} \frac{\lambda}{s} + (1 - p_{\mathrm{in}}) \frac{s - \lambda}{K - s},

so :math:`\hat f_x = (C_x/n - q^*)/(p^* - q^*)` is unbiased with the variance of subset selection of
:math:`s` out of :math:`K` items (the paper's Theorem 3.2; :func:`~dpdist.local.frequency.ss.subset_variance`
with ``positions = K``): :math:`q^*` is exactly subset selection's, since :math:`\lambda = s(s-1)/(K-1)`.
:math:`p_{\mathrm{in}}` is drawn as ``U < p_in`` on the :math:`2^{-53}` grid, the largest grid value whose
ratio is at most :math:`e^\varepsilon` (:mod:`dpdist.local._bernoulli`).

The field.  The paper takes :math:`q` near :math:`e^\varepsilon + 1`; here :math:`q` is the prime (and
:math:`t` the least dimension) of least exact variance at uniform frequencies (what ``auto`` ranks), among
the designs whose transform below fits :data:`MAX_TRANSFORM_CELLS`; a config records it as ``field_size``.
Only primes: prime powers (:math:`q = 4, 8, 9`) would need :math:`\mathbb F_q` arithmetic tables.

Sampling, exact, with the same draws whatever the value and the coins.  Let :math:`j` be the top coordinate of
the user's :math:`x` (where :math:`x_j = 1`).  Each user draws the inclusion (probability :math:`p_{\mathrm{in}}`),
a nonzero integer uniform on :math:`[1, q^{t-1})` and an integer uniform on :math:`[0, q^{t-1})`; the first (when
included) or the second (when not) gives the coordinates :math:`w_i, i \ne j` as its base-:math:`q` digits, and
:math:`w_j` then makes :math:`\langle x, w\rangle = r` with :math:`r = 0` (included) or :math:`1`.  The nonzero
vectors of product 0 hold :math:`q - 1` representatives of each point of the hyperplane, one per nonzero free part,
and the vectors of product 1 one representative of each point outside it, so scaling :math:`w` to its canonical
vector gives a uniform point of the hyperplane (of its complement).  No draw is repeated, so the number of draws
tells nothing of whether the report includes the value; the JavaScript and Java clients draw in the same order.

Decoding in :math:`O(n + q^t t \log q)`, the paper's :math:`O(n + K e^\varepsilon \log K)` bound.  Lift the
histogram :math:`h` of the reports to every nonzero vector, :math:`h'(a v) = h(v)`; its Fourier transform over
:math:`\mathbb F_q^t` (``numpy.fft``, one axis per coordinate) is constant on lines, and
:math:`[\langle x, w\rangle = 0] = \frac1q \sum_{a} \omega^{a \langle x, w\rangle}` gives
:math:`C_x = (n + \operatorname{Re} \hat h'(x)) / q`, rounded to the integer it is.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from .._bernoulli import exp_lower, odds_probability
from .._docs import shared_parameters
from .._protocol import ProtocolTags, register
from .._report_kinds import ItemReports
from .._aggregator import Aggregator
from ._oracle import FrequencyOracle
from .ss import subset_variance
from ..._types import ArrayLike
from ..._validation import Optional, Prime
from ...errors import InvalidParameterError

__all__ = ["PGR", "projective_design", "projective_points"]

#: largest :math:`q^t`, the cells of the decoding transform (a float64 lift and half as many complex128
#: coefficients: 192 MiB at this size)
MAX_TRANSFORM_CELLS = 1 << 23
#: vectors per chunk of the lift and of the draws
_CHUNK = 1 << 16


def projective_points(field_size: int, domain_size: int) -> tuple[int, int, int, int]:
    r"""``(t, K, s, lambda)`` of the least dimension :math:`t \ge 2` whose :math:`K = (q^t-1)/(q-1)` points hold
    ``domain_size`` items, with :math:`s` points per hyperplane and :math:`\lambda` per two hyperplanes."""
    q, t = field_size, 2
    while (q**t - 1) // (q - 1) < domain_size:
        t += 1
    return t, (q**t - 1) // (q - 1), (q ** (t - 1) - 1) // (q - 1), (q ** (t - 2) - 1) // (q - 1)


def _primes(bound: int) -> list[int]:
    """The primes up to ``bound`` (a sieve)."""
    sieve = np.ones(bound + 1, dtype=bool)
    sieve[:2] = False
    for factor in range(2, math.isqrt(bound) + 1):
        if sieve[factor]:
            sieve[factor * factor :: factor] = False
    return np.flatnonzero(sieve).tolist()


def _design_variance(epsilon: float, domain_size: int, field_size: int) -> float:
    _, points, per_plane, _ = projective_points(field_size, domain_size)
    return subset_variance(epsilon, points, domain_size, per_plane)


def projective_design(epsilon: float, domain_size: int) -> int:
    r"""The prime :math:`q` of least exact variance at uniform frequencies (smaller on a tie) among those whose
    transform, :math:`q^t` cells, fits :data:`MAX_TRANSFORM_CELLS`: the primes up to :math:`4(e^\varepsilon+1)+8`
    and the least prime :math:`q \ge d - 1` (:math:`t = 2`, randomized response over :math:`q + 1` points)."""
    largest = math.isqrt(MAX_TRANSFORM_CELLS)  # q^2 cells at the least dimension
    primes = _primes(min(largest, int(4 * (math.exp(min(epsilon, 30.0)) + 1)) + 8))
    lines = [q for q in _primes(min(largest, 2 * domain_size + 3)) if q >= domain_size - 1][:1]
    candidates: list[int] = sorted(set(primes) | set(lines))
    fitting = [q for q in candidates if q ** projective_points(q, domain_size)[0] <= MAX_TRANSFORM_CELLS]
    if not fitting:
        raise InvalidParameterError(
            f"The 'domain_size' of PGR must fit a projective space whose transform has at most {MAX_TRANSFORM_CELLS} "
            f"cells. Got {domain_size} at epsilon={epsilon}.")
    return min(fitting, key=lambda q: _design_variance(epsilon, domain_size, q))


@register
@shared_parameters
class PGR(FrequencyOracle):
    """Projective geometry response: a point of a projective space over a prime field, ``ceil(log2 K)`` bits.

    Parameters
    ----------
    {epsilon}
    {domain_size}
    field_size : int, optional
        The prime :math:`q`.  Default: :func:`projective_design` (recorded in the config).

    Notes
    -----
    Reports are point indices in ``[0, K)`` (narrowest unsigned dtype); ``field_size`` (:math:`q`),
    ``dimension`` (:math:`t`), ``output_size`` (:math:`K`) and ``plane_size`` (:math:`s`) describe the design.
    """

    name = "pgr"
    summary = "projective geometry response: a hyperplane of a projective space over F_q, log2 K bits; FFT decoding"
    tags = ProtocolTags(kind="frequency", finite_channel=True, bernoulli_support=True)
    output_histogram = True
    counts_report_cells = True
    _constraints = {**FrequencyOracle._constraints, "field_size": Optional(Prime(high=1 << 20))}
    _defaults = {"field_size": None}

    def _setup(self):
        d = self.domain_size
        q = self._params["field_size"]
        if q is None:
            q = self._params["field_size"] = projective_design(self.epsilon, d)
        self.field_size = q
        self.dimension, self.output_size, self.plane_size, self._pair = projective_points(q, d)
        if q**self.dimension > MAX_TRANSFORM_CELLS:
            raise InvalidParameterError(
                f"The 'field_size' parameter of PGR must give a transform of at most {MAX_TRANSFORM_CELLS} cells "
                f"(q^t with t = {self.dimension} for domain_size={d}). Got {q} instead.")
        K, s = self.output_size, self.plane_size
        self._p_in = odds_probability(exp_lower(self.epsilon) * Fraction(s, K - s))
        self._q_star = self._p_in * self._pair / s + (1 - self._p_in) * (s - self._pair) / (K - s)
        self._offsets = np.array([(q**m - 1) // (q - 1) for m in range(self.dimension + 1)], dtype=np.int64)
        self._inverse = np.array([0] + [pow(a, q - 2, q) if q > 2 else 1 for a in range(1, q)], dtype=np.int64)

    def support_probabilities(self) -> tuple[float, float]:
        return self._p_in, self._q_star

    # ------------------------------------------------------------------ points
    def _digits(self, values: np.ndarray) -> np.ndarray:
        """Base-:math:`q` digits of vectors stored as integers, ``(len, t)``, least significant first."""
        powers = self.field_size ** np.arange(self.dimension, dtype=np.int64)
        return (values[:, None] // powers[None, :]) % self.field_size

    def _values(self, digits: np.ndarray) -> np.ndarray:
        return digits @ (self.field_size ** np.arange(self.dimension, dtype=np.int64))

    def _point_vectors(self, points: np.ndarray) -> np.ndarray:
        """The canonical vector (as an integer) of each point index."""
        top = np.searchsorted(self._offsets, points, side="right") - 1
        return self.field_size**top + points - self._offsets[top]

    def _canonical_points(self, digits: np.ndarray) -> np.ndarray:
        """The point index of each nonzero vector (rows of digits): scaled so its top nonzero digit is 1."""
        nonzero = digits != 0
        top = self.dimension - 1 - np.argmax(nonzero[:, ::-1], axis=1)
        scale = self._inverse[digits[np.arange(digits.shape[0]), top]]
        values = self._values((digits * scale[:, None]) % self.field_size)
        return self._offsets[top] + values - self.field_size**top

    # ------------------------------------------------------------------ client
    def _privatize(self, values, rng):
        q, t, count = self.field_size, self.dimension, values.size
        item = self._digits(self._point_vectors(values))
        top = t - 1 - np.argmax(item[:, ::-1] != 0, axis=1)  # where the item's digit is 1
        include = rng.random(count) < self._p_in
        inside = rng.integers(1, q ** (t - 1), size=count, dtype=np.int64)  # nonzero: residue 0 gives no zero vector
        outside = rng.integers(0, q ** (t - 1), size=count, dtype=np.int64)  # drawn either way: residue 1
        free = self._digits(np.where(include, inside, outside))  # t - 1 digits (the last one is 0)
        coordinate = np.arange(t)[None, :]
        w = np.take_along_axis(free, coordinate - (coordinate > top[:, None]), axis=1)  # free digits around top
        rows = np.arange(count)
        w[rows, top] = 0
        product = np.einsum("ij,ij->i", item, w)
        w[rows, top] = (np.where(include, 0, 1) - product) % q
        return self._canonical_points(w).astype(self._report_dtype)

    # ------------------------------------------------------------------ server
    @property
    def statistic_size(self) -> int:
        return self.output_size

    @property
    def statistic_total_per_report(self) -> int:
        """1: a histogram of the reported points (a state whose counts do not sum to n is refused)."""
        return 1

    def _client_design(self):
        """The constants a client's randomizer uses (``client_view()['design']``)."""
        return {"fieldSize": self.field_size, "dimension": self.dimension, "outputSize": self.output_size,
                "pIn": self._p_in}

    def _report_format(self):
        return ItemReports(self.output_size)

    def _accumulate(self, reports):
        return np.bincount(reports, minlength=self.output_size).astype(np.int64)

    def _lifted(self, histogram: np.ndarray) -> np.ndarray:
        """:math:`h'(w) = h(\\text{point of } w)` on every vector of :math:`\\mathbb F_q^t` (0 at the zero vector)."""
        cells = self.field_size**self.dimension
        lifted = np.zeros(cells)
        for start in range(1, cells, _CHUNK):
            vectors = np.arange(start, min(cells, start + _CHUNK), dtype=np.int64)
            lifted[start : start + vectors.size] = histogram[self._canonical_points(self._digits(vectors))]
        return lifted

    def plane_sums(self, weights: ArrayLike) -> np.ndarray:
        r""":math:`\sum_{v : \langle x, v\rangle = 0} w_v` for every item :math:`x` (module docstring), from weights on
        the :math:`K` points, by one Fourier transform over :math:`\mathbb F_q^t`."""
        weights = np.asarray(weights, dtype=np.float64)
        q, t = self.field_size, self.dimension
        coefficients = np.fft.rfftn(self._lifted(weights).reshape((q,) * t))  # axis 0: the most significant digit
        sums = np.empty(self.domain_size)
        for start in range(0, self.domain_size, _CHUNK):
            items = np.arange(start, min(self.domain_size, start + _CHUNK), dtype=np.int64)
            digits = self._digits(self._point_vectors(items))[:, ::-1]
            mirrored = digits[:, -1] > q // 2  # rfftn keeps half of the last axis: Re h(y) = Re h(-y)
            digits[mirrored] = (-digits[mirrored]) % q
            sums[items] = coefficients[tuple(digits.T)].real
        return (weights.sum() + sums) / q

    def support_counts(self, aggregator: Aggregator) -> np.ndarray:
        """:math:`C_x`: the reports whose hyperplane holds :math:`x`, from :meth:`plane_sums` of the histogram."""
        return np.rint(self.plane_sums(aggregator.statistic))

    def in_plane(self, items: ArrayLike, points: ArrayLike) -> np.ndarray:
        """:math:`\\langle x, v\\rangle = 0` for items and points (broadcasting)."""
        items, points = np.broadcast_arrays(np.asarray(items, dtype=np.int64), np.asarray(points, dtype=np.int64))
        item = self._digits(self._point_vectors(items.ravel()))
        point = self._digits(self._point_vectors(points.ravel()))
        return (np.einsum("ij,ij->i", item, point) % self.field_size == 0).reshape(items.shape)

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        """Output law over the :math:`K` points (columns in index order)."""
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        member = self.in_plane(items[:, None], np.arange(self.output_size)[None, :])
        s, K = self.plane_size, self.output_size
        return np.where(member, self._p_in / s, (1 - self._p_in) / (K - s))

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)
