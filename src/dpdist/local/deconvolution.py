r"""Wiener-filter deconvolution of the support counts of any pure frequency oracle.

Paper 001 (Fang, Chen, Liu, Gao, "Locally
Differentially Private Frequency Estimation Based on Convolution Framework",
IEEE S&P 2023).

For a pure protocol with support probabilities :math:`(p^*, q^*)`, the share
:math:`g_j = C_j / n` of the :math:`n` reports that support item :math:`j` is a
circular convolution plus noise (Theorem 1, eq. 7):

.. math::

    g = f * h + n_{\text{noise}}, \qquad h = [p^*, q^*, \dots, q^*], \qquad
    G = F H + N \quad \text{(eq. 15)}.

The plain unbiased estimate (eq. 1) is the inverse filter :math:`G / H` (up to
the DC bin, below).  Wiener filters (eq. 16) trade the
inversion against the noise, whose power spectrum is known (Theorem 3,
:func:`noise_power_spectrum`).  Methods (``method=``) and their options (keyword
options of :func:`deconvolve`):

- ``"inverse"``: :math:`\mathrm{IFFT}(G/H)`, no filtering (the reference point).
- ``"dw"``: Direct Wiener: :math:`\tilde P_f = |G/H|^2` (eq. 21) or a given ``signal_spectrum``
  (array of shape (d,), a prior :math:`P_f`).
- ``"iiw"``: Improved Iterative Wiener, Algorithm 1: ``iterations`` (int >= 0, default 30; 0 is DW),
  ``tolerance`` (stop once the relative change of the estimate is below it; default None,
  run all iterations), ``keep_path`` (bool: return every iterate in ``details["path"]``,
  shape ``(iterations + 1, d)``).
- ``"iiw-g"``: IIW started from :math:`\tilde P_f(0) = |G|^2` (sec. IV-C, "IIW-G"); IIW's options.
- ``"amrp"``: DW (or IIW) averaged over random permutations of the items (sec. IV-C): ``permutations``
  (default 100), ``base`` (``"dw"``, ``"iiw"`` or ``"iiw-g"``; default ``"dw"``, the
  paper's DW-AMRP), ``iterations`` (for an IIW base, default 30).
- ``"smooth"``: the (1/4, 1/2, 1/4) smoothing baseline, eq. 25: ``boundary`` (``"wrap"``,
  ``"reflect"``, ``"nearest"``; default ``"wrap"``).
- ``"gf"``: Gaussian filter on the plain estimate (App. C, GF1/GF3): ``sigma`` (items, default
  1.0), ``boundary``.
- ``"gf-dw"``: DW with :math:`\tilde P_f` from the Gaussian-filtered estimate (App. C, GF-DW):
  ``sigma``, ``boundary``.

The transfer spectrum is :math:`H_0 = p^* + (d-1) q^*`, :math:`H_k = p^* - q^*`.
For :math:`k \ne 0`, :math:`G_k / H_k` is exactly the DFT of the plain
estimate :math:`(g - q^*)/(p^* - q^*)` (eq. 1).  At :math:`k = 0` the two
agree only when :math:`\sum_j g_j = p^* + (d-1) q^*`, which holds for every
sample of GRR; for OUE they differ by a constant added to every item:
:math:`G_0 / H_0` uses :math:`\sum_j g_j` divided by the large
:math:`H_0`, a lower-variance estimate of :math:`\sum_j f_j = 1` than eq. 1.
This is the paper's framework (eq. 7); post-processing such as norm-sub
fixes the total anyway.

Every method costs one real FFT and one inverse FFT, :math:`O(d \log d)`, plus
:math:`O(d)` per IIW iteration (the iterations never leave the frequency
domain).  AMRP batches its permutations through 2-D FFTs.

Use it through any frequency oracle, e.g.
``proto.estimate(agg, deconvolve="iiw", iterations=30, postprocess="norm-sub")``,
or call :func:`deconvolve` on support counts directly.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np
from scipy import fft

from .._rng import check_rng
from .._validation import (
    DOMAIN_SIZE,
    Admits,
    POPULATION,
    Below,
    Boolean,
    Integer,
    Interval,
    Optional,
    Options,
    check_param,
    unknown_names_error,
    validate_params,
)
from ..errors import InvalidParameterError, InvalidValueTypeError
from ._protocol import LocalProtocol, ProtocolTags
from ._deconvolution.permutation import average_over_permutations
from ._deconvolution.smoothing import BOUNDARIES, gaussian_smooth, smooth_adjacent
from ._deconvolution.spectra import half_length, noise_power, transfer_spectrum
from ._deconvolution.wiener import iterative_wiener, wiener_gain
from .._types import ArrayLike, Seed

__all__ = ["METHODS", "deconvolve", "has_fixed_support_size", "noise_power_spectrum"]

from ._deconvolution import METHODS  # noqa: E402  (the names accepted by ``method``)

_OWNER = "deconvolve"

_ITERATIONS = Integer(low=0, high=100_000)
_TOLERANCE = Optional(Interval(0.0, math.inf, closed="left"))
_BOUNDARY = Options(BOUNDARIES)
_SIGMA = Interval(0.0, math.inf, closed="neither")

#: The options each method accepts, with their constraints and defaults.
_METHOD_OPTIONS: dict[str, dict[str, tuple[Any, Any]]] = {
    "inverse": {},
    "dw": {"signal_spectrum": (None, None)},
    "iiw": {"iterations": (_ITERATIONS, 30), "tolerance": (_TOLERANCE, None), "keep_path": (Boolean(), False)},
    "iiw-g": {"iterations": (_ITERATIONS, 30), "tolerance": (_TOLERANCE, None), "keep_path": (Boolean(), False)},
    "amrp": {
        "permutations": (Integer(low=1, high=1_000_000), 100),
        "base": (Options(("dw", "iiw", "iiw-g")), "dw"),
        "iterations": (_ITERATIONS, 30),
    },
    "smooth": {"boundary": (_BOUNDARY, "wrap")},
    "gf": {"sigma": (_SIGMA, 1.0), "boundary": (_BOUNDARY, "wrap")},
    "gf-dw": {"sigma": (_SIGMA, 1.0), "boundary": (_BOUNDARY, "wrap")},
}


#: a frequency protocol (declared by its tags)
_FREQUENCY_PROTOCOL = Admits(object, lambda protocol: None if isinstance(getattr(protocol, "tags", None), ProtocolTags)
                             and protocol.tags.kind == "frequency" else
                             f"tags.kind {getattr(getattr(protocol, 'tags', None), 'kind', None)!r}",
                             "a frequency protocol (tags.kind 'frequency')")


# ---------------------------------------------------------------------- noise spectrum
@validate_params({"protocol": _FREQUENCY_PROTOCOL})
def has_fixed_support_size(protocol: LocalProtocol) -> bool:
    """Whether every report of ``protocol`` supports the same number of items.

    Declared by the protocol's tags, ``tags.fixed_support_size`` (GRR: each report
    supports exactly one item; subset selection: exactly k items).
    """
    return protocol.tags.fixed_support_size


#: ``p_star`` and ``q_star``, each a probability, ``q_star`` below ``p_star`` (the tables of the public functions)
_SUPPORT_PROBABILITIES = {"p_star": Interval(0.0, 1.0, closed="both"), "q_star": Interval(0.0, 1.0, closed="both")}
_Q_STAR_BELOW = Below("q_star", "p_star", why="a pure protocol supports the true item more often",
                      counterexample={"p_star": 0.3, "q_star": 0.5})


@validate_params({"domain_size": DOMAIN_SIZE, **_SUPPORT_PROBABILITIES, "n": POPULATION,
                  "protocol": Optional(_FREQUENCY_PROTOCOL)}, relations=(_Q_STAR_BELOW,))
def noise_power_spectrum(
    domain_size: int,
    p_star: float,
    q_star: float,
    n: int,
    *,
    fixed_support_size: bool | None = None,
    protocol: LocalProtocol | None = None,
) -> np.ndarray:
    r"""Expected power spectrum :math:`E|N_k|^2` of the support noise (Theorem 3, eqs. 19-20).

    Parameters
    ----------
    domain_size : int
        Number of items ``d >= 2``.
    p_star, q_star : float
        Support probabilities of the protocol, :math:`0 \le q^* < p^* \le 1`.
    n : int
        Number of reports.
    fixed_support_size : bool, optional
        Every report supports the same number of items (GRR: exactly one).  Then
        :math:`\sum_j g_j` is deterministic and :math:`P_0 = 0` (the paper's KRR
        exception).  ``None`` infers it from ``protocol`` (false without one).
    protocol : FrequencyOracle, optional
        Used only to infer ``fixed_support_size``.

    Returns
    -------
    ndarray of shape (d,)
        :math:`P_k = \sum_j \sigma_j^2 = \frac{d q^*(1-q^*) + (p^*-q^*)(1-p^*-q^*)}{n}`
        for every :math:`k`, with :math:`P_0 = 0` for fixed-size supports.

    Notes
    -----
    For protocols whose support bits are independent (OUE, SUE) eq. 20 is
    exact at every frequency.  For GRR it is the paper's approximation for
    :math:`k \ne 0`; the exact value, derived from the one-hot report vector
    :math:`e_y` with :math:`E|\hat e_y(k)|^2 = 1` and
    :math:`|E \hat e_y(k)|^2 = (p^*-q^*)^2`, is

    .. math::

        P_k^{\text{GRR}} = \frac{1 - (p^* - q^*)^2}{n}
        = \text{eq. 20} + \frac{q^*(1 + p^* - q^*)}{n} \qquad (k \ne 0),

    a relative difference of order :math:`q^* \approx 1/(e^\varepsilon + d)`
    (1.6% at d = 64, ε = 4; 0.1% at d = 1000).  A caller who wants it passes
    ``noise_spectrum=`` to :func:`deconvolve`.

    References
    ----------
    H. Fang, L. Chen, Y. Liu, Y. Gao, "Locally Differentially Private Frequency Estimation
    Based on Convolution Framework", IEEE S&P 2023 (paper 001),
    Theorem 3.
    """
    owner = "noise_power_spectrum"
    fixed = _resolve_fixed_support(fixed_support_size, protocol, owner)
    spectrum = np.full(domain_size, noise_power(domain_size, p_star, q_star, n))
    if fixed:
        spectrum[0] = 0.0
    return spectrum


# ---------------------------------------------------------------------- deconvolution
@validate_params({**_SUPPORT_PROBABILITIES, "n": POPULATION, "method": Options(METHODS),
                  "protocol": Optional(_FREQUENCY_PROTOCOL)}, relations=(_Q_STAR_BELOW,))
def deconvolve(
    support_counts: ArrayLike,
    p_star: float,
    q_star: float,
    n: int,
    method: str = "iiw",
    *,
    protocol: LocalProtocol | None = None,
    rng: Seed = None,
    noise_spectrum: ArrayLike | float | None = None,
    fixed_support_size: bool | None = None,
    **options: Any,
) -> tuple[np.ndarray, dict]:
    r"""Estimate item frequencies from support counts by Wiener deconvolution (paper 001).

    Parameters
    ----------
    support_counts : array_like of shape (d,)
        :math:`C_j`, the number of reports supporting each item (the paper's
        :math:`g` times ``n``); non-negative and finite.
    p_star, q_star : float
        Support probabilities of the protocol, :math:`0 \le q^* < p^* \le 1`.
    n : int
        Number of reports.
    method : str
        One of :data:`METHODS` (see the module docstring).  Default ``"iiw"``.
    protocol : FrequencyOracle, optional
        The protocol that produced the counts; used to infer
        ``fixed_support_size`` and to check the domain size.
    rng : None, int or Generator
        Randomness of ``"amrp"`` (same seed, same result); unused by the others.
    noise_spectrum : float or array_like of shape (d,), optional
        Replaces the analytic :math:`\tilde P_n` of :func:`noise_power_spectrum`
        (e.g. 0 for the plain inverse, or the exact GRR value).  Only the first
        ``d // 2 + 1`` entries are used (the spectrum of real noise is symmetric).
    fixed_support_size : bool, optional
        See :func:`noise_power_spectrum`; ``None`` infers it from ``protocol``.
    **options
        The method's options, listed in the module docstring (``InvalidParameterError`` for any other).

    Returns
    -------
    frequencies : ndarray of shape (d,)
        The filtered estimate (not post-processed; it may be negative).
    details : dict
        ``deconvolution`` (method), ``noise_power`` (:math:`\tilde P_n` at
        :math:`k \ne 0`), ``fixed_support_size`` and method extras:
        ``iterations`` and ``convergence`` (relative change
        :math:`\|\tilde f(i) - \tilde f(i-1)\|_2 / \|\tilde f(i)\|_2` per
        iteration) for IIW; ``permutations``, ``base`` for AMRP; ``sigma``,
        ``boundary`` for the smoothers.

    References
    ----------
    .. [1] H. Fang, L. Chen, Y. Liu, Y. Gao, "Locally Differentially Private
       Frequency Estimation Based on Convolution Framework", IEEE S&P 2023
       (paper 001), eqs. 7, 15-25, Algorithm 1, App. C.
    .. [2] A. Hillery, R. T. Chin, "Iterative Wiener filters for image
       restoration", ICASSP 1990 (the correction term of Algorithm 1).

    Examples
    --------
    >>> from dpdist import local
    >>> proto = local.make("oue", epsilon=2.0, domain_size=100)
    >>> agg = proto.simulate(np.arange(100).repeat(50), rng=0)
    >>> est = proto.estimate(agg, deconvolve="iiw", iterations=30)
    >>> est.details["iterations"]
    30
    """
    counts, p_star, q_star, n, method, settings = _check_deconvolve_inputs(
        support_counts, p_star, q_star, n, method, protocol, options
    )
    generator = check_rng(rng, owner=_OWNER)
    fixed = _resolve_fixed_support(fixed_support_size, protocol, _OWNER)
    noise = _noise_spectrum(noise_spectrum, counts.size, p_star, q_star, n, fixed)
    details = {"deconvolution": method, "noise_power": float(noise[1]), "fixed_support_size": fixed}
    frequencies = _filtered(counts / n, p_star, q_star, noise, method, settings, details, generator)  # g = C/n
    return np.ascontiguousarray(frequencies, dtype=np.float64), details


def _noise_spectrum(given: ArrayLike | float | None, d: int, p_star: float, q_star: float, n: int,
                    fixed: bool) -> np.ndarray:
    """:math:`\\tilde P_n` at the first ``d // 2 + 1`` frequencies: the one given, else Theorem 3's."""
    if given is not None:
        return _check_spectrum("noise_spectrum", given, d)
    noise = np.full(half_length(d), noise_power(d, p_star, q_star, n))
    if fixed:
        noise[0] = 0.0  # the KRR exception of Theorem 3
    return noise


def _filtered(share: np.ndarray, p_star: float, q_star: float, noise: np.ndarray, method: str, settings: dict,
              details: dict, generator: np.random.Generator) -> np.ndarray:
    """The estimate of ``method`` from the share of reports supporting each item (the paper's g, Theorem 1); the
    method's extras go into ``details``."""
    transfer = transfer_spectrum(share.size, p_star, q_star)
    if method in ("inverse", "dw", "iiw", "iiw-g"):
        return _wiener(share, transfer, noise, method, settings, details)
    if method == "amrp":
        base, iterations = settings["base"], settings["iterations"]
        frequencies = average_over_permutations(
            share,
            lambda permuted: _wiener_batch(permuted, transfer, noise, base, iterations),
            permutations=settings["permutations"],
            rng=generator,
        )
        details.update(permutations=settings["permutations"], base=base)
        if base != "dw":
            details["iterations"] = iterations
        return frequencies
    plain = (share - q_star) / (p_star - q_star)  # eq. 1
    frequencies = _smoothed(plain, share, transfer, noise, method, settings)
    details.update(settings)
    return frequencies


def _wiener(share, transfer, noise, method, settings, details) -> np.ndarray:
    """Inverse filter, DW, IIW or IIW-G of one support vector; fills ``details``."""
    d = share.size
    support_spectrum = _rfft(share)
    if method == "inverse":
        return _irfft(support_spectrum / transfer, n=d)
    if method == "dw":
        prior = settings["signal_spectrum"]
        initial = _power(support_spectrum / transfer) if prior is None else prior  # eq. 21
        iterations, tolerance, keep_path = 0, None, False
    else:
        initial = _power(support_spectrum / transfer if method == "iiw" else support_spectrum)
        iterations, tolerance, keep_path = settings["iterations"], settings["tolerance"], settings["keep_path"]
    spectrum, trace, path = iterative_wiener(
        support_spectrum,
        transfer,
        noise,
        initial,
        domain_size=d,
        iterations=iterations,
        tolerance=tolerance,
        keep_path=keep_path,
    )
    if method != "dw":
        details["iterations"] = int(trace.shape[0])
        details["convergence"] = trace
        if path is not None:  # kept with keep_path
            details["path"] = _irfft(np.stack(path), n=d, axis=-1)
    return _irfft(spectrum, n=d)


def _wiener_batch(shares, transfer, noise, base: str, iterations: int) -> np.ndarray:
    """DW / IIW / IIW-G of every row of ``shares`` (one 2-D FFT each way), for AMRP."""
    d = shares.shape[-1]
    support_spectrum = _rfft(shares, axis=-1)
    start = support_spectrum if base == "iiw-g" else support_spectrum / transfer
    spectrum, _, _ = iterative_wiener(
        support_spectrum,
        transfer,
        noise,
        _power(start),
        domain_size=d,
        iterations=0 if base == "dw" else iterations,
    )
    return _irfft(spectrum, n=d, axis=-1)


def _smoothed(plain, share, transfer, noise, method, settings) -> np.ndarray:
    """The smoothing baselines: eq. 25, GF, and GF-DW (App. C)."""
    if method == "smooth":
        return smooth_adjacent(plain, settings["boundary"])
    smoothed = gaussian_smooth(plain, settings["sigma"], settings["boundary"])
    if method == "gf":
        return smoothed
    # gf-dw: the spectrum of the Gaussian-filtered estimate is DW's signal spectrum
    gain = wiener_gain(transfer, noise, _power(_rfft(smoothed)))
    return _irfft(gain * _rfft(share), n=share.size)


def _rfft(values: Any, **options: Any) -> np.ndarray:
    """``scipy.fft.rfft`` as an array (its stubs type the dispatched result as a tuple)."""
    return np.asarray(fft.rfft(values, **options))


def _irfft(spectrum: Any, **options: Any) -> np.ndarray:
    """``scipy.fft.irfft`` as an array."""
    return np.asarray(fft.irfft(spectrum, **options))


def _power(spectrum: np.ndarray) -> np.ndarray:
    return np.real(spectrum) ** 2 + np.imag(spectrum) ** 2


# ---------------------------------------------------------------------- validation
def _resolve_fixed_support(fixed_support_size, protocol, owner) -> bool:
    """``fixed_support_size``, or when None what the tables' frequency ``protocol`` (or None) declares."""
    fixed = check_param(owner, "fixed_support_size", fixed_support_size, Optional(Boolean()))
    if fixed is None:
        return protocol is not None and protocol.tags.fixed_support_size
    return fixed


def _refuse_negative(array: np.ndarray, subject: str, entries: str, ending: str) -> None:
    """Raise naming the first non-finite or negative entry of ``array`` ("{subject} must hold finite {entries} >= 0")."""
    good = np.isfinite(array) & (array >= 0)
    if not good.all():
        raise InvalidParameterError(f"{subject} must hold finite {entries} >= 0. Got {array[~good][0]!r} among them{ending}.")


def _check_spectrum(name: str, value, domain_size: int) -> np.ndarray:
    """A non-negative power spectrum: a scalar or shape (d,); returns its half spectrum."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool):
        array = np.full(domain_size, float(value))
    else:
        array = np.asarray(value)
        if array.shape != (domain_size,) or not (
            np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)
        ):
            raise InvalidValueTypeError(
                f"The {name!r} parameter of {_OWNER} must be a float or a real array of shape "
                f"({domain_size},). Got {type(value).__name__} with shape {array.shape} and dtype {array.dtype} instead."
            )
        array = array.astype(np.float64)
    _refuse_negative(array, f"The {name!r} parameter of {_OWNER}", "values", " instead")
    return array[: half_length(domain_size)]


def _check_deconvolve_inputs(support_counts, p_star, q_star, n, method, protocol, options):
    """Coerce and check everything :func:`deconvolve` takes; return clean values."""
    counts = np.asarray(support_counts)
    if (
        counts.ndim != 1
        or counts.size < 2
        or not (np.issubdtype(counts.dtype, np.floating) or np.issubdtype(counts.dtype, np.integer))
        or counts.dtype == np.bool_
    ):
        raise InvalidValueTypeError(
            f"The 'support_counts' argument of {_OWNER} must be a 1-D real array of length >= 2. "
            f"Got shape {counts.shape} and dtype {counts.dtype} instead."
        )
    counts = counts.astype(np.float64)
    _refuse_negative(counts, f"The 'support_counts' argument of {_OWNER}", "counts", "")
    expected = None if protocol is None else protocol.domain_size  # a frequency protocol: the table
    if expected is not None and expected != counts.size:
        raise InvalidParameterError(
            f"The 'support_counts' argument of {_OWNER} must have length domain_size = {expected} "
            f"of {protocol!r}. Got length {counts.size} instead."
        )
    allowed = _METHOD_OPTIONS[method]
    unknown = sorted(set(options) - set(allowed))
    if unknown:  # the method's table of options names the allowed ones (and suggests the one meant)
        raise unknown_names_error(f"{_OWNER}(method={method!r})", unknown, allowed, what="option",
                                  note=" (and protocol, rng, noise_spectrum, fixed_support_size)")
    settings = {}
    for name, (constraint, default) in allowed.items():
        value = options.get(name, default)
        settings[name] = (
            value if constraint is None else check_param(f"{_OWNER}(method={method!r})", name, value, constraint)
        )
    if settings.get("signal_spectrum") is not None:
        settings["signal_spectrum"] = _check_spectrum("signal_spectrum", settings["signal_spectrum"], counts.size)
    return counts, p_star, q_star, n, method, settings
