"""Frequency metrics: MSE (of all items or the top k), L1, L2, and true/false positives of heavy hitters."""

from __future__ import annotations

from typing import NamedTuple, Union

import numpy as np
from numpy.typing import ArrayLike

from .._validation import Integer, Interval, check_integer_values, check_param
from ..errors import InvalidParameterError, InvalidValueTypeError, OutOfDomainError
from ..estimates import FrequencyEstimate
from ._cdfs import _holds_numbers

#: A frequency estimate or a frequency / count vector: what the frequency metrics compare.
FrequencyLike = Union[FrequencyEstimate, ArrayLike]

__all__ = ["mse", "mse_top_k", "l1", "l2", "true_false_positives", "DetectionCounts", "FrequencyLike"]


class DetectionCounts(NamedTuple):
    """Counts of :func:`true_false_positives`."""

    true_positives: int
    false_positives: int




def _finite_frequencies(array: np.ndarray, well_formed: bool, owner: str, argument: str, expected: str) -> np.ndarray:
    """``array`` as float64 frequencies; refused unless ``well_formed`` (``expected`` says what it must be) and finite."""
    if not well_formed:
        raise InvalidValueTypeError(
            f"The {argument!r} argument of {owner} must be {expected}. "
            f"Got an array of shape {array.shape} and dtype {array.dtype}."
        )
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise OutOfDomainError(f"The {argument!r} argument of {owner} must hold finite frequencies.")
    return array


def _frequency_pair(estimate, truth, domain_size, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """Estimated and true frequency vectors of equal length, float64."""
    estimated = np.asarray(estimate)  # a FrequencyEstimate is its frequency vector
    well_formed = estimated.ndim == 1 and estimated.size > 0 and _holds_numbers(estimated)
    expected = "a FrequencyEstimate or a non-empty 1-D array of floats"
    estimated = _finite_frequencies(estimated, well_formed, owner, "estimate", expected)
    d = estimated.size
    if domain_size is not None:
        domain_size = check_param(owner, "domain_size", domain_size, Integer(low=1))
        if domain_size != d:
            raise InvalidParameterError(
                f"The 'domain_size' parameter of {owner} must equal the estimate's length {d}. "
                f"Got {domain_size!r} instead."
            )
        items = check_integer_values(truth, domain_size, owner=owner, name="truth")
        if items.size == 0:
            raise InvalidValueTypeError(f"The 'truth' argument of {owner} must hold at least one item.")
        return estimated, np.bincount(items, minlength=d) / items.size
    true = np.asarray(truth)
    expected = f"a 1-D array of {d} true frequencies (or raw items with 'domain_size')"
    return estimated, _finite_frequencies(true, true.shape == (d,) and _holds_numbers(true), owner, "truth", expected)


def mse(estimate: FrequencyLike, truth: FrequencyLike, *, domain_size: Union[int, None] = None) -> float:
    r"""Mean squared error over the domain, :math:`\frac{1}{d}\sum_v (\tilde f_v - f_v)^2` ([001] sec. VI).

    Parameters
    ----------
    estimate : FrequencyEstimate or array_like of shape (d,)
    truth : array_like
        True frequencies, shape (d,); or, with ``domain_size``, raw items in ``[0, d)``.
    domain_size : int, optional
        Set it to pass raw items as ``truth``; must equal ``d``.
    """
    estimated, true = _frequency_pair(estimate, truth, domain_size, "metrics.mse")
    return float(np.mean((estimated - true) ** 2))


def mse_top_k(estimate: FrequencyLike, truth: FrequencyLike, k: int, *, domain_size: Union[int, None] = None) -> float:
    r"""MSE over the ``k`` items of largest TRUE frequency ([001] sec. VI, "frequent values").

    Ties in the true frequency are broken by the smaller item index.  Arguments as in
    :func:`mse`; ``k`` is an int in ``[1, d]``.
    """
    owner = "metrics.mse_top_k"
    estimated, true = _frequency_pair(estimate, truth, domain_size, owner)
    k = check_param(owner, "k", k, Integer(low=1, high=true.size))
    top = np.argsort(-true, kind="stable")[:k]
    return float(np.mean((estimated[top] - true[top]) ** 2))


def l1(estimate: FrequencyLike, truth: FrequencyLike, *, domain_size: Union[int, None] = None) -> float:
    r""":math:`L^1` distance :math:`\sum_v |\tilde f_v - f_v|` of frequency vectors (arguments as in :func:`mse`)."""
    estimated, true = _frequency_pair(estimate, truth, domain_size, "metrics.l1")
    return float(np.abs(estimated - true).sum())


def l2(estimate: FrequencyLike, truth: FrequencyLike, *, domain_size: Union[int, None] = None) -> float:
    r""":math:`L^2` distance :math:`\sqrt{\sum_v (\tilde f_v - f_v)^2}` of frequency vectors (arguments as in :func:`mse`)."""
    estimated, true = _frequency_pair(estimate, truth, domain_size, "metrics.l2")
    return float(np.sqrt(np.sum((estimated - true) ** 2)))


def true_false_positives(
    estimate: FrequencyLike, truth: FrequencyLike, threshold: float, *, domain_size: Union[int, None] = None
) -> DetectionCounts:
    r"""Heavy-hitter detection counts at ``threshold`` ([001] sec. VI, after Wang et al. [9]).

    A *true positive* is an item whose true frequency is above the threshold
    (:math:`f_v > \tau`) and whose estimate is above it (:math:`\tilde f_v > \tau`); a
    *false positive* is an item with :math:`f_v \le \tau` and :math:`\tilde f_v > \tau`.

    Parameters
    ----------
    estimate, truth, domain_size
        As in :func:`mse`.
    threshold : float
        The frequency threshold :math:`\tau` (finite).

    Returns
    -------
    DetectionCounts
        ``(true_positives, false_positives)``.
    """
    owner = "metrics.true_false_positives"
    estimated, true = _frequency_pair(estimate, truth, domain_size, owner)
    threshold = check_param(owner, "threshold", threshold, Interval())
    detected = estimated > threshold
    frequent = true > threshold
    return DetectionCounts(int(np.count_nonzero(detected & frequent)), int(np.count_nonzero(detected & ~frequent)))
