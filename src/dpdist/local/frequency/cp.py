r"""Compressive privatization, ``cp`` (paper 004: Xiong et al., AAAI 2021).

Mechanism (2).  A public matrix :math:`A \in \{-1,+1\}^{m\times k}` (drawn from
``matrix_seed``) gives each item :math:`x` the set :math:`C_x = \{y : A_{yx} = +1\}`
of :math:`n_x` rows; the user reports :math:`y \in [m]` with

.. math::

    Q(y \mid x) = \frac{e^{\varepsilon_0}}{n_x e^{\varepsilon_0} + m - n_x}
    \text{ if } y \in C_x, \qquad \frac{1}{n_x e^{\varepsilon_0} + m - n_x} \text{ otherwise}.

Regimes.  ``"high"`` (sec. 2): i.i.d. Rademacher entries, :math:`\Pr[+1] = \rho = 1/2`.
``"medium"`` (sec. 4, eq. 6): :math:`\Pr[+1] = \rho = e^{-\varepsilon}`.  The entries are
read from the raw PCG64 stream of ``matrix_seed`` (bits, or 32-bit uniforms
against :math:`\lfloor 2^{32}\rho \rfloor`), so the matrix is the same on every
client and NumPy version.

Privacy (Lemma 2.1 / 4.1 and property P1).  With unequal column counts
:math:`n_x` the mechanism with parameter :math:`\varepsilon_0` is not
:math:`\varepsilon_0`-LDP: Lemma 2.1/4.1 bound its loss by :math:`\varepsilon_0 + 2\beta`,
:math:`\beta = \max_x |n_x - \rho m| / (\rho m)` (P1 asks :math:`\beta \le \varepsilon/2`).
We compute the *exact* loss of the realized matrix,
:math:`\max_y \log(\max_x Q(y|x) / \min_x Q(y|x))`, and by default
(``calibration="exact"``) choose the largest :math:`\varepsilon_0` whose exact loss
is at most the requested :math:`\varepsilon` (bisection; the loss is increasing in
:math:`\varepsilon_0`).  ``calibration="none"`` uses :math:`\varepsilon_0 = \varepsilon`
as the paper's experiments do; the protocol then refuses
(``InvalidPrivacyParameterError``) when the exact loss exceeds :math:`\varepsilon`,
or only warns with ``on_privacy_excess="warn"``.  ``privacy_report()`` gives
:math:`\beta`, P1, the Lemma bound and the exact loss.

Estimation (Algorithm 1, eqs. 3–5; medium regime as in sec. 4).  With
:math:`\mu = 2\rho - 1`, :math:`\sigma = 2\sqrt{\rho(1-\rho)}`,
:math:`\bar\kappa = (e^{\varepsilon_0} - 1)\rho + 1` and
:math:`B = (A - \mu)/(\sigma\sqrt m)`, eq. (3)
:math:`q = (\tfrac{e^{\varepsilon_0}-1}{2} A + \tfrac{e^{\varepsilon_0}+1}{2} J) D p`
becomes (derived here; for :math:`\rho = 1/2` it is eq. (4), for
:math:`\rho = e^{-\varepsilon}` the system of sec. 4)

.. math::

    y = \frac{2\bar\kappa\sqrt m}{(e^{\varepsilon_0} - 1)\sigma}\Big(\hat q - \frac{1}{m}\Big)
      = B\,D' p + e_1 + e_2, \qquad D' = m\bar\kappa\,D,\; D = \operatorname{diag}(1/(n_x e^{\varepsilon_0} + m - n_x)).

OMP at sparsity :math:`s` recovers :math:`f \approx D'p`; then
:math:`\hat p' = D'^{-1} f` is projected onto the simplex (``postprocess="simplex"``,
the default; Fig. 3's normalized decoder is ``"clip-normalize"``).

Intervals.  OMP is not linear and drops the items off its support, so it has
no analytic variance and ``unbiased`` is false; a standard error of OMP *given
its support* is 0 off the support, and intervals built on it were zero-width
(coverage 0.18 and 0.08 for the rare items of a 5-label real column).  The
intervals come instead from the unbiased linear estimator of the exact channel
:math:`Q` (``k x m``, :math:`E\hat q = Q^\top p`): the least-squares inverse
:math:`\tilde p = W\hat q`, :math:`W = (Q^\top)^+`, unbiased when :math:`Q`
has rank :math:`k` (then :math:`WQ^\top = I`), with covariance
:math:`W(\operatorname{diag} q - qq^\top)W^\top/n` (multinomial aggregate;
:math:`\hat q` plugged in).  The estimate's ``variance`` is its diagonal and its
``interval_center`` is :math:`\tilde p`: a normal interval around the unbiased
estimate of a linear inversion, as for any frequency oracle (Wang et al., USENIX
Security 2017, sec. 4), next to OMP's point estimate.  With fewer measurements
than items (:math:`m < k`, the compressive regime) no unbiased estimator exists
(:math:`Q^\top` has a null space: the frequencies are identified only by the
sparsity assumption), so there is no interval: ``variance`` is infinite and
``details["no_interval"]`` says why.  Coverage is in ``docs/explanation/uncertainty.md``.
``details["support_variance"]`` keeps OMP's plug-in variance given its support.
``simulate`` is exact: a multinomial over :math:`[m]` per item present (or
per-user draws when fewer).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from fractions import Fraction
from typing import ClassVar

import numpy as np

from ... import postprocess as _postprocess
from ..._guarantee import PrivacyGuarantee, local_guarantee
from ..._types import ArrayLike
from ..._validation import Integer, NoneWhen, Options, check_param, check_relations
from ...errors import InvalidParameterError, InvalidPrivacyParameterError
from .._bernoulli import GRID, exp_lower
from .._protocol import ProtocolTags, register
from .._report_kinds import ItemReports
from ._exact_channel import check_estimator_options
from ._matching_pursuit import (
    noise_ratio,
    column_norms,
    omp_sparsity,
    orthogonal_matching_pursuit,
    stands_out_of_noise,
)
from ._oracle import FrequencyOracle

__all__ = ["CP"]

_SCALE = 2.0**32
_BISECTION_STEPS = 80
#: the calibrated mechanism budgets of the matrices built so far (:meth:`CP._calibrated`), at most this many kept
_KEPT_CALIBRATIONS = 256
_CALIBRATED: dict[tuple, float] = {}
#: cells of the (k, m) row order :meth:`CP._rows_by_sign` keeps (8 bytes each: 16 MiB); a larger matrix orders only
#: the rows of the values a call randomizes
_KEPT_ORDER_CELLS = 1 << 21
#: The options of estimator="omp" only (the sparse decoder's), refused with estimator="ibu".
_OMP_OPTIONS = tuple(NoneWhen(name, "estimator", "ibu", why="an option of estimator='omp'") for name in
                     ("sparsity", "sparsity_rule"))


@register
class CP(FrequencyOracle):
    """Compressive privatization over a public random ``measurements x domain_size`` sign matrix.

    Parameters
    ----------
    epsilon : float
        Privacy budget (the exact guarantee with ``calibration="exact"``).
    domain_size : int
        Number of items ``k >= 2``.
    measurements : int
        Number of rows ``m`` of :math:`A` (the report is one of ``m`` values); default 500.
    matrix_seed : int
        Public seed of :math:`A`; default 0.
    regime : {"high", "medium"}
        ``"high"``: :math:`\\Pr[A_{ij}=+1] = 1/2` (sec. 2); ``"medium"``:
        :math:`e^{-\\varepsilon}` (eq. 6, for :math:`1 \\le \\varepsilon \\le \\log m`).
    calibration : {"exact", "none"}
        How the mechanism's :math:`\\varepsilon_0` is set (module docstring).
    on_privacy_excess : {"raise", "warn"}
        With ``calibration="none"``: refuse or warn when the exact loss exceeds ``epsilon``.

    Notes
    -----
    Reports are row indices in ``[0, m)`` (narrowest unsigned dtype).
    """

    name = "cp"
    counts_report_cells = True  # a count per item or bit of a report (LocalProtocol.aggregation_work)
    @property
    def statistic_total_per_report(self) -> int:
        """1: a histogram of the reported measurements."""
        return 1
    summary = "compressive privatization: m-ary report over a public Rademacher matrix; OMP + simplex decoding"
    tags = ProtocolTags(kind="frequency", finite_channel=True, exact_simulate=True, unbiased=False)
    output_histogram = True
    _constraints = {
        **FrequencyOracle._constraints,
        "measurements": Integer(low=2, high=2**16),
        "matrix_seed": Integer(low=0, high=2**63 - 1),
        "regime": Options(("high", "medium")),
        "calibration": Options(("exact", "none")),
        "on_privacy_excess": Options(("raise", "warn")),
    }
    estimate_options = {
        "estimator": Options(("omp", "ibu")),
        "postprocess": Options(tuple(_postprocess.METHODS)),
        "sparsity": Integer(low=1),
        "sparsity_rule": Options(("pretest", "risk")),
        **{name: FrequencyOracle.estimate_options[name]
           for name in ("tolerance", "max_iterations", "accelerate", "bootstrap", "level", "rng")},
    }
    estimate_delegate = None
    _defaults = {
        "measurements": 500,
        "matrix_seed": 0,
        "regime": "high",
        "calibration": "exact",
        "on_privacy_excess": "raise",
    }
    max_matrix_cells: ClassVar[int] = 1 << 25  # set-up holds a few int64 copies of A
    _largest_array = "the public sign matrix, sorted per item (measurements int64 per item)"

    def _item_bytes(self) -> int:
        return 8 * self._params["measurements"]

    # ------------------------------------------------------------------ set-up
    def _setup(self):
        k, m = self.domain_size, self._params["measurements"]
        if k * m > self.max_matrix_cells:
            raise InvalidParameterError(
                f"The 'measurements' parameter of CP makes a {m} x {k} matrix; at most "
                f"{self.max_matrix_cells} cells are allowed. Got measurements={m!r} instead."
            )
        self.measurements = m
        self._plus, self._rho = self._draw_matrix()
        self.column_counts = self._plus.sum(axis=0, dtype=np.int64)  # n_x
        self._loss_extremes = self._column_extremes()
        if self._params["calibration"] == "exact":
            self.mechanism_epsilon = self._calibrated(self.epsilon)
        else:
            self.mechanism_epsilon = self.epsilon
        self.effective_epsilon = self.exact_privacy_loss(self.mechanism_epsilon)
        if not self._loss_is_within(self.mechanism_epsilon, self.epsilon):
            message = (
                f"The 'epsilon' parameter of CP is {self.epsilon!r}, but with calibration='none' the mechanism over "
                f"this matrix is only {self.effective_epsilon:.6g}-LDP (column balance beta = "
                f"{self.column_balance:.4g}; Lemma 2.1/4.1 bound {self.lemma_epsilon:.6g}). Use "
                "calibration='exact', more measurements, or on_privacy_excess='warn'."
            )
            if self._params["on_privacy_excess"] == "raise":
                raise InvalidPrivacyParameterError(message)
            warnings.warn(message, UserWarning, stacklevel=4)
        e = math.exp(self.mechanism_epsilon)
        self._e = e
        self._denominators = self.column_counts * e + m - self.column_counts  # 1 / d_x
        self._inside_thresholds = self._inside_probabilities(self.column_counts, self.mechanism_epsilon)
        self._order = None
        self._measurement_matrix = None
        self._column_norms_cache = None

    def _draw_matrix(self):
        """Boolean ``(m, k)`` matrix of the +1 entries, from the raw stream of ``matrix_seed``."""
        k, m = self.domain_size, self._params["measurements"]
        stream = np.random.PCG64(self._params["matrix_seed"])
        if self._params["regime"] == "high":
            words = stream.random_raw(-(-m * k // 64))
            bits = np.unpackbits(words.view(np.uint8), bitorder="little")[: m * k]
            return bits.reshape(m, k).astype(bool), 0.5
        threshold = int(math.floor(math.exp(-self.epsilon) * _SCALE))
        uniforms = stream.random_raw(-(-m * k // 2)).view(np.uint32)[: m * k]
        return (uniforms < threshold).reshape(m, k), threshold / _SCALE

    def _column_extremes(self):
        """Per row y: the smallest/largest n_x over items with y in C_x and over items with y not in C_x."""
        # items ranked by n_x: a row's smallest (largest) n_x in a set is at the set's first (last) ranked item,
        # found by argmax over booleans instead of a masked min/max over an int64 copy of the matrix
        order = np.argsort(self.column_counts, kind="stable")
        ranked = self.column_counts[order]
        plus = self._plus[:, order]
        rows = np.arange(plus.shape[0])
        big = np.iinfo(np.int64).max
        extremes = []
        for members in (plus, ~plus):
            first = members.argmax(axis=1)
            last = members.shape[1] - 1 - members[:, ::-1].argmax(axis=1)
            nonempty = members[rows, first]
            extremes += [np.where(nonempty, ranked[first], big), np.where(nonempty, ranked[last], -1)]
        inside_min, inside_max, outside_min, outside_max = extremes
        return inside_min, inside_max, outside_min, outside_max

    def _inside_probabilities(self, counts, mechanism_epsilon: float) -> np.ndarray:
        r"""Realized :math:`\Pr[y \in C_x]` of items with :math:`n_x` = ``counts``: the draw ``U < t``.

        Ideally :math:`n_x e^{\varepsilon_0}/(n_x e^{\varepsilon_0} + m - n_x)`; the threshold is that
        value rounded down to the :math:`2^{-53}` grid of ``Generator.random()``, so the draw realizes
        it exactly, and the privacy loss (:meth:`exact_privacy_loss`, the calibration) is that of
        these realized probabilities.
        """
        m, e = self.measurements, math.exp(mechanism_epsilon)
        counts = np.asarray(counts, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            ideal = np.clip(counts * e / (counts * e + m - counts), 0.0, 1.0)
        return np.floor(ideal * float(GRID)) / float(GRID)

    def _row_probabilities(self, counts, inside: bool, mechanism_epsilon: float) -> np.ndarray:
        """Q(y|x) of the items with n_x = ``counts`` for a row y in (out of) C_x; NaN for the sentinels."""
        m = self.measurements
        counts = np.asarray(counts)
        valid = (counts >= 1) & (counts <= m) if inside else (counts >= 0) & (counts <= m - 1)
        safe = np.where(valid, counts, 1)
        pi = self._inside_probabilities(safe, mechanism_epsilon)
        q = pi / safe if inside else (1.0 - pi) / (m - safe)
        return np.where(valid, q, np.nan)

    def exact_privacy_loss(self, mechanism_epsilon: float) -> float:
        r""":math:`\max_y \log(\max_x Q(y|x)/\min_x Q(y|x))` of mechanism (2) with this matrix (float logs).

        ``Q`` are the realized probabilities of :meth:`_inside_probabilities`.
        """
        inside_min, inside_max, outside_min, outside_max = self._loss_extremes
        # Q decreases in n_x, so the largest Q comes from the smallest n_x
        high = np.fmax(self._row_probabilities(inside_min, True, mechanism_epsilon),
                       self._row_probabilities(outside_min, False, mechanism_epsilon))
        low = np.fmin(self._row_probabilities(inside_max, True, mechanism_epsilon),
                      self._row_probabilities(outside_max, False, mechanism_epsilon))
        return float(np.max(np.log(high / low)))

    def _loss_is_within(self, mechanism_epsilon: float, epsilon: float) -> bool:
        r"""Exact check, in rational arithmetic, that the realized loss is at most ``epsilon``.

        Uses that :math:`Q(y|x)` decreases in :math:`n_x` (checked here on the counts present) and
        compares with the lower bound :func:`~dpdist.local._bernoulli.exp_lower` of
        :math:`e^\varepsilon`.
        """
        m = self.measurements
        present = np.unique(self.column_counts)
        pi = dict(zip(present.tolist(), self._inside_probabilities(present, mechanism_epsilon).tolist()))

        def q_in(n):
            return Fraction(pi[n]) / n

        def q_out(n):
            return (1 - Fraction(pi[n])) / (m - n)

        inner = [q_in(n) for n in present.tolist() if n >= 1]
        outer = [q_out(n) for n in present.tolist() if n <= m - 1]
        if any(a <= b for a, b in zip(inner, inner[1:])) or any(a <= b for a, b in zip(outer, outer[1:])):
            return False  # not decreasing: the extremes below would not be the extremes
        bound = exp_lower(epsilon)
        rows = np.unique(np.stack(self._loss_extremes, axis=1), axis=0)
        for inside_min, inside_max, outside_min, outside_max in rows.tolist():
            high = [q_in(inside_min)] if 1 <= inside_min <= m else []
            low = [q_in(inside_max)] if 1 <= inside_max <= m else []
            if 0 <= outside_min <= m - 1:
                high.append(q_out(outside_min))
                low.append(q_out(outside_max))
            if max(high) > bound * min(low):
                return False
        return True

    def _calibrated(self, epsilon: float) -> float:
        """:meth:`_calibrate`, computed once per matrix and ``epsilon`` in a process: the matrix is a function of
        ``(domain_size, measurements, matrix_seed, regime, epsilon)`` (:meth:`_draw_matrix`) and the calibration of
        the matrix and ``epsilon``, so a CP built again from its config (a state loaded, a service's campaign read,
        a test's protocol) takes the same number without the 80-step bisection and its exact checks (4-5 ms of a
        5-6 ms set-up)."""
        key = (type(self), self.domain_size, self.measurements, self._params["matrix_seed"], self._params["regime"],
               float(epsilon))
        calibrated = _CALIBRATED.get(key)
        if calibrated is None:
            if len(_CALIBRATED) >= _KEPT_CALIBRATIONS:
                _CALIBRATED.clear()
            calibrated = _CALIBRATED[key] = self._calibrate(epsilon)
        return calibrated

    def _calibrate(self, epsilon: float) -> float:
        """The largest eps0 whose realized loss is at most ``epsilon``: bisection on float logs, then exact."""
        eps0 = self._bisect(epsilon)
        step = 2.0**-50 * max(eps0, 1.0)
        for _ in range(64):  # float logs can pass a loss a few ulps above epsilon: step down until exact
            if self._loss_is_within(eps0, epsilon):
                return eps0
            eps0, step = eps0 - step, 2.0 * step
            if eps0 <= 0.0:
                break
        raise InvalidPrivacyParameterError(  # pragma: no cover - the loss is continuous in eps0
            f"The 'epsilon' parameter of CP is {epsilon!r}; no mechanism budget below it was found within it."
        )

    def _bisect(self, epsilon: float) -> float:
        low, high = 0.0, epsilon  # loss(eps0) >= eps0, so eps0 <= epsilon
        if self.exact_privacy_loss(high) <= epsilon:
            return high
        for _ in range(_BISECTION_STEPS):
            middle = 0.5 * (low + high)
            low, high = (middle, high) if self.exact_privacy_loss(middle) <= epsilon else (low, middle)
        if low <= 0.0:
            raise InvalidPrivacyParameterError(
                f"The 'epsilon' parameter of CP is {epsilon!r}, too small for this matrix to be calibrated."
            )
        return low

    @property
    def column_balance(self) -> float:
        r""":math:`\beta = \max_x |n_x - \rho m| / (\rho m)` (property P1)."""
        center = self._rho * self.measurements
        return float(np.max(np.abs(self.column_counts - center)) / center)

    @property
    def lemma_epsilon(self) -> float:
        """Lemma 2.1 / 4.1 bound :math:`\\varepsilon_0 + 2\\beta` on the privacy loss (valid for beta < 1)."""
        return self.mechanism_epsilon + 2 * self.column_balance

    def privacy_report(self) -> dict:
        """Column balance, P1, Lemma 2.1/4.1 bound and the exact loss of the realized matrix."""
        return {
            "requested_epsilon": self.epsilon,
            "mechanism_epsilon": self.mechanism_epsilon,
            "column_balance_beta": self.column_balance,
            "p1_holds": bool(self.column_balance <= self.epsilon / 2),
            "lemma_epsilon": self.lemma_epsilon,
            "exact_epsilon": self.effective_epsilon,
        }

    # ------------------------------------------------------------------ client
    def _rows_by_sign(self) -> np.ndarray:
        """``(k, m)``: for each item, the rows of C_x first, then the others."""
        if self._order is None:
            self._order = np.argsort(~self._plus.T, axis=1, kind="stable").astype(self._report_dtype)
        return self._order

    def _privatize(self, values, rng):
        counts = self.column_counts[values]
        inside = rng.random(values.size) < self._inside_thresholds[values]  # grid values: realized exactly
        offset = np.where(inside, 0, counts)
        size = np.where(inside, counts, self.measurements - counts)
        position = offset + rng.integers(0, np.maximum(size, 1), dtype=np.int64)
        return self._rows_of(values, position).astype(self._report_dtype)

    def _rows_of(self, values: np.ndarray, position: np.ndarray) -> np.ndarray:
        """Row ``position`` of each value's rows in :meth:`_rows_by_sign`'s order (those of C_x first, then the others,
        each ascending).  The whole ``(k, m)`` order is kept when it is small; otherwise only the distinct values'
        rows are ordered, a block at a time: a device sending a few values of a 4096 x 8192 matrix held 268 MB of it
        (526 MB at its peak)."""
        if self._order is not None or self.domain_size * self.measurements <= _KEPT_ORDER_CELLS:
            return self._rows_by_sign()[values, position]
        unique, inverse = np.unique(values, return_inverse=True)
        rows = np.empty(values.size, dtype=np.int64)
        block = max(1, _KEPT_ORDER_CELLS // self.measurements)
        for start in range(0, unique.size, block):
            order = np.argsort(~self._plus[:, unique[start : start + block]].T, axis=1, kind="stable")
            mine = (inverse >= start) & (inverse < start + block)
            rows[mine] = order[inverse[mine] - start, position[mine]]
        return rows

    # ------------------------------------------------------------------ server
    @property
    def statistic_size(self) -> int:
        return self.measurements

    def _report_format(self):
        return ItemReports(self.measurements)

    def _accumulate(self, reports):
        return np.bincount(reports, minlength=self.measurements).astype(np.int64)

    def _simulate(self, values, rng):
        counts = np.bincount(values, minlength=self.domain_size)
        active = np.flatnonzero(counts)
        if active.size * self.measurements > values.size:
            return self._accumulate(self._privatize(values, rng))
        rows = self.channel(active)  # (active, m)
        return rng.multinomial(counts[active], rows).sum(axis=0).astype(np.int64)

    def channel(self, values: ArrayLike | None = None) -> np.ndarray:
        items = np.arange(self.domain_size) if values is None else self._check_values(values)
        counts, inside = self.column_counts[items][:, None], self._inside_thresholds[items][:, None]
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self._plus[:, items].T, inside / counts, (1.0 - inside) / (self.measurements - counts))

    def report_index(self, reports: np.ndarray) -> np.ndarray:
        return np.asarray(reports, dtype=np.int64)

    # ------------------------------------------------------------------ estimation
    def default_sparsity(self) -> int:
        """Largest :math:`s` with :math:`s \\ln(k/s) \\le m/4` (a RIP-style budget :math:`m \\gtrsim s\\log(k/s)`).

        A bound from the matrix alone, blind to the data; ``estimate`` chooses
        :math:`s` from the aggregate instead unless ``sparsity`` is given.
        """
        k, m = self.domain_size, self.measurements
        s = 1
        while s + 1 < k and (s + 1) * math.log(k / (s + 1)) <= m / 4:
            s += 1
        return s

    def measurement_matrix(self) -> np.ndarray:
        """:math:`B = (A - \\mu) / (\\sigma \\sqrt m)` (float64, cached)."""
        if self._measurement_matrix is None:
            mu, sigma = 2 * self._rho - 1, 2 * math.sqrt(self._rho * (1 - self._rho))
            scale = sigma * math.sqrt(self.measurements)
            # the two values of (sign - mu) / scale, each computed once (the same IEEE operations as cell by cell)
            self._measurement_matrix = np.where(self._plus, (1.0 - mu) / scale, (-1.0 - mu) / scale)
        return self._measurement_matrix

    def _column_norms(self) -> np.ndarray:
        """:func:`column_norms` of :meth:`measurement_matrix` (cached: every OMP path divides by them)."""
        if self._column_norms_cache is None:
            self._column_norms_cache = column_norms(self.measurement_matrix())
        return self._column_norms_cache

    def _estimate(
        self, aggregator, *, estimator: str = "omp", postprocess: str = "simplex", sparsity: int | None = None,
        sparsity_rule: str | None = None, **options,
    ):
        """Algorithm 1: OMP at ``sparsity``, rescale by D'^{-1}, post-process.

        ``postprocess`` is any of :data:`dpdist.postprocess.METHODS`; "simplex" is
        Algorithm 1's projection, "none" returns :math:`D'^{-1} f` itself.

        ``sparsity=None`` (the default) chooses :math:`s` from the aggregate, at no
        privacy cost (it is post-processing), with the noise variance of one measurement
        known from the multinomial aggregate, :math:`\\sigma^2 = g^2 (1 - \\sum_y \\hat q_y^2) / (n m)`,
        :math:`g` the gain of eq. (4).  ``sparsity_rule="pretest"`` (the default, ``None``): first the
        pre-test of the empty model,
        :func:`~dpdist.local.frequency._matching_pursuit.stands_out_of_noise` (does any decoded
        coefficient exceed the universal threshold, :math:`t\\,\\hat\\tau` with the Bonferroni
        :math:`t = \\Phi^{-1}(1 - 0.05/(2k))`, so pure noise passes with probability at most 0.05,
        and the noise level :math:`\\hat\\tau^2 = \\max(\\sigma^2, \\|y\\|^2/m)` that also holds a
        heavy tail's small items?); if none does, :math:`s = 0`, else the risk inflation criterion
        :math:`\\|r_s\\|^2 + 2\\ln(k)\\,s\\,\\sigma^2` along the OMP path
        (:func:`~dpdist.local.frequency._matching_pursuit.omp_sparsity`, which may also choose
        0, the empty model).  ``s = 0`` decodes to the zero vector, which the simplex projection
        makes uniform; a forced :math:`s = 1` kept the noisiest column instead (on ``wiki-words``
        1.5x the squared error of the zero estimate; ``docs/explanation/frequency-oracles.md``).  ``sparsity_rule="risk"``
        is the earlier rule: the criterion alone, at least 1.  ``details["sparsity_rule"]``
        says which rule set ``s``.

        ``estimator="ibu"`` instead maximizes the exact likelihood of the row counts
        by EM (:mod:`dpdist.local.frequency._exact_channel`, with its options
        ``tolerance``, ``max_iterations``, ``accelerate``, ``bootstrap``, ``level``, ``rng``).
        """
        if estimator == "ibu":
            check_relations("CP.estimate", {"estimator": estimator, "sparsity": sparsity, "sparsity_rule": sparsity_rule},
                            _OMP_OPTIONS)
            return self._estimate_ibu(aggregator, postprocess, options)
        if options:
            raise InvalidParameterError(
                f"CP.estimate got option(s) {sorted(options)} of estimator='ibu' with estimator='omp'."
            )
        m, n, e, rho = self.measurements, aggregator.n, self._e, self._rho
        sigma = 2 * math.sqrt(rho * (1 - rho))
        mean_denominator = (e - 1) * rho + 1  # E[n_x e + m - n_x] / m
        gain = 2 * mean_denominator * math.sqrt(m) / ((e - 1) * sigma)
        observed = aggregator.statistic / n
        target = (observed - 1.0 / m) * gain
        noise_variance = gain**2 * max(1.0 - float(observed @ observed), 1e-12) / (n * m)
        if sparsity is None:
            s, rule = self._choose_sparsity(target, noise_variance, sparsity_rule or "pretest")
        else:
            s = check_param("CP.estimate", "sparsity", sparsity, Integer(low=1, high=self.domain_size))
            rule = "given"
        matrix = self.measurement_matrix()
        recovered, support = orthogonal_matching_pursuit(matrix, target, s, norms=self._column_norms())
        scale = m * mean_denominator / self._denominators  # diagonal of D'
        frequencies = _postprocess.apply(postprocess, recovered / scale)
        # variance given the selected support: the least-squares fit is linear in y, and
        # Cov(q_hat) = (diag(q) - q q^T) / n (multinomial), with q_hat plugged in for q
        support_variance = np.zeros(self.domain_size)
        if support.size:
            solve = np.linalg.pinv(self.measurement_matrix()[:, support])  # (s, m)
            weighted = solve * observed
            covariance = (weighted @ solve.T - np.outer(solve @ observed, solve @ observed)) * gain**2 / n
            support_variance[support] = np.maximum(np.diag(covariance), 0.0) / scale[support] ** 2
        details = {"estimator": "omp", "sparsity": s, "sparsity_rule": rule, "support": support,
                   "support_variance": support_variance, **self.privacy_report()}
        if s == 0:  # the empty model: say so rather than hand out a uniform vector as if it were measured
            details["noise_ratio"] = noise_ratio(self.measurement_matrix(), target, noise_variance,
                                                 norms=self._column_norms())
            details["notes"] = [self._empty_model_note(frequencies, postprocess, rule, details["noise_ratio"], n)]
        variance, center = self._interval_parts(observed, n, details)
        return self._frequency_estimate(
            frequencies, n, variance, postprocess, details, epsilon=self.effective_epsilon, interval_center=center
        )

    def _estimate_ibu(self, aggregator, postprocess: str, options: dict):
        """``estimator="ibu"``: EM on the exact channel, with the linear inverse's intervals."""

        settings = check_estimator_options(self, "ibu", options)
        estimate = self._estimate_on_channel(aggregator, "ibu", postprocess, settings)
        estimate.details.update(self.privacy_report())
        if settings["bootstrap"]:
            return dataclasses.replace(estimate, epsilon=self.effective_epsilon)
        variance, center = self._interval_parts(aggregator.statistic / aggregator.n, aggregator.n, estimate.details)
        return dataclasses.replace(estimate, epsilon=self.effective_epsilon, variance=variance, interval_center=center)

    def _empty_model_note(self, frequencies: np.ndarray, postprocess: str, rule: str, ratio: float, n: int) -> str:
        """What an estimate of sparsity 0 is (docs/explanation/frequency-oracles.md: CP's default when no item stands out)."""
        k = self.domain_size
        if np.allclose(frequencies, 1.0 / k):
            shown = f"the uniform distribution (1/{k} per item)"
        elif not np.any(frequencies):
            shown = "all zeros"
        else:
            shown = f"what postprocess={postprocess!r} makes of it"
        return (f"no item stands out of the noise (sparsity 0, set by the {rule}; the largest decoded coefficient is "
                f"{ratio:.2g} of the universal threshold at n = {n}): OMP decodes the empty model, the zero vector, "
                f"and the estimate is {shown}, a default, not a measured shape: it says nothing about which items "
                "are frequent. More reports or a larger epsilon let frequent items stand out; estimator='ibu' "
                "estimates every item without the sparsity assumption.")

    def _choose_sparsity(self, target: np.ndarray, noise_variance: float, sparsity_rule: str) -> tuple[int, str]:
        """``(s, the rule that set it)`` (``_estimate``'s docstring)."""
        matrix = self.measurement_matrix()
        norms = self._column_norms()
        by_risk, _ = omp_sparsity(matrix, target, noise_variance, max(self.measurements // 2, 1), norms)
        if sparsity_rule == "risk":
            return max(by_risk, 1), "risk inflation criterion"
        if by_risk and not stands_out_of_noise(matrix, target, noise_variance, norms=norms):
            return 0, "universal threshold"
        return by_risk, "risk inflation criterion"

    # ------------------------------------------------------------------ intervals
    def linear_inverse(self) -> np.ndarray | None:
        """:math:`W = (Q^\top)^+` (``k x m``) when the channel has rank ``k``, else ``None`` (cached).

        ``W q`` is the unbiased least-squares estimate of the frequencies from
        the report shares ``q`` (module docstring, "Intervals").
        """
        if not hasattr(self, "_inverse"):
            inverse = None
            if self.domain_size <= self.measurements:
                u, singular, vt = np.linalg.svd(self.channel().T, full_matrices=False)  # (m, k) = U S V^T
                if singular[-1] > 1e-10 * singular[0]:
                    inverse = (vt.T / singular) @ u.T
            self._inverse = inverse
        return self._inverse

    def _no_interval_reason(self) -> str:
        if self.domain_size > self.measurements:
            return (
                f"no interval: CP's m={self.measurements} measurements cannot identify k={self.domain_size} "
                "frequencies without assuming sparsity (no unbiased estimator exists; use measurements >= "
                "domain_size for intervals)"
            )
        return "no interval: this matrix's channel has rank below the number of items (no unbiased estimator)"

    def _interval_parts(self, observed: np.ndarray, n: int, details: dict):
        """``(variance, interval_center)`` of the unbiased linear estimate, or ``(inf, None)`` with the reason."""
        inverse = self.linear_inverse()
        if inverse is None:
            details["no_interval"] = self._no_interval_reason()
            details["variance"] = "infinite: " + details["no_interval"]
            return np.full(self.domain_size, np.inf), None
        center = inverse @ observed
        variance = np.maximum((inverse**2) @ observed - center**2, 0.0) / n
        details["variance"] = "of the unbiased least-squares inverse of the exact channel, the intervals' centre"
        details["unbiased_frequencies"] = center
        return variance, center

    @property
    def guarantee(self) -> PrivacyGuarantee:
        """Pure LDP at the mechanism's exact privacy loss (at most ``epsilon`` unless ``on_privacy_excess='warn'``)."""
        return local_guarantee(self.effective_epsilon)

    def variance(self, n: int, frequencies: ArrayLike | None = None) -> np.ndarray:
        """Variance of the unbiased least-squares inverse (module docstring) at ``frequencies``.

        ``frequencies=None`` takes the uniform distribution.  Raises ``NotImplementedError``
        when the channel has rank below ``k`` (``m < k``): no unbiased estimator exists.
        """
        inverse = self.linear_inverse()
        if inverse is None:
            raise NotImplementedError(self._no_interval_reason())
        f = np.full(self.domain_size, 1.0 / self.domain_size) if frequencies is None else np.asarray(frequencies, float)
        shares = f @ self.channel()
        return np.maximum((inverse**2) @ shares - (inverse @ shares) ** 2, 0.0) / n
