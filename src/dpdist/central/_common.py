"""Input validation and CDF assembly shared by the central-DP estimators.

Every public estimator calls :func:`check_central_input` once (SciPy's ``_iv``
pattern) and :func:`cdf_distribution` once at the end.
"""

from __future__ import annotations

import numpy as np

from .._missing import missing_policy
from .._rng import check_rng
from .._validation import CENTRAL_EPSILON, DELTA, Boolean, Bounds, Integer, check_param, check_real_values
from ..errors import InvalidParameterError, InvalidValueTypeError, OutOfDomainError
from ..estimates import Distribution
from .._guarantee import PrivacyGuarantee

__all__ = ["CentralInput", "check_central_input", "release_notes", "as_real_array", "to_unit_interval", "cdf_distribution", "GRID_SIZE"]

#: Default number of equal-width bins of the returned Distribution (the CDF is evaluated at 1025 edges).
GRID_SIZE = 1024

#: Supported epsilon of every central release (see :data:`dpdist._validation.CENTRAL_EPSILON`).
EPSILON = CENTRAL_EPSILON


class CentralInput:
    """Validated inputs of one release: sorted-free float data, budget, bounds, generator."""

    __slots__ = ("x", "epsilon", "delta", "bounds", "rng", "secure", "grid_size", "notes")

    def __init__(self, x, epsilon, delta, bounds, rng, secure, grid_size, notes=()):
        self.x, self.epsilon, self.delta, self.bounds = x, epsilon, delta, bounds
        self.rng, self.secure, self.grid_size = rng, secure, grid_size
        self.notes = list(notes)  # what the result states about the inputs (the missing-value policy)

    def details(self, **details):
        """``details`` of the result, with :attr:`notes` (when there are any) under ``"notes"``."""
        return {**details, **({"notes": [*details.get("notes", ()), *self.notes]} if self.notes else {})}

    def guarantee(self, neighbouring: str, *, delta: float | None = None) -> PrivacyGuarantee:
        """The whole budget of this release as a central guarantee (``delta`` defaults to the one given, else 0)."""
        spent = self.delta if delta is None else delta
        return PrivacyGuarantee(self.epsilon, spent or 0.0, neighbouring, "central")


def check_central_input(
    owner: str,
    x,
    *,
    epsilon,
    bounds,
    rng=None,
    clip=True,
    secure=False,
    delta=None,
    needs_delta=False,
    grid_size=GRID_SIZE,
    missing: str | float = "refuse",
    neighbouring: str | None = None,
) -> CentralInput:
    """Validate the arguments every central estimator shares; raise a dpdist error naming the culprit.

    Only public arguments are refused (docs/central.md, "Refusals are public"): whether a release succeeds must not depend
    on the data, since a refusal for one data set and not for its neighbour tells them apart.

    * ``x`` may be empty: every release is then the mechanism run on no records (noisy counts
      of zeros, noisy moments of an empty sum), a valid private output like any other.
    * ``missing`` (:mod:`dpdist._missing`): a missing value (NaN, None) is refused by default,
      with its count, before anything is drawn (the one refusal that depends on the data, told to
      the curator who holds them); ``"drop"`` leaves those records out (refused, whatever the
      data, under ``neighbouring="replace"``, where n is public); a number counts each as that
      value.  The policy goes into :attr:`CentralInput.notes` for the result to state.
    * ``clip=True`` (the default) maps every value into ``bounds``: values below ``lo``
      (``-inf`` included) become ``lo``, values above ``hi`` (``+inf`` included) become ``hi``.
      How many were moved is a statistic of the data and is never released.
    * ``clip=False`` is a strict check for data the caller has already validated: values
      outside ``bounds`` or non-finite raise :class:`~dpdist.errors.OutOfDomainError`, a
      refusal that depends on the data (so not for releases whose failures others can see).

    The dtype and shape of ``x`` are its schema, which is public: a non-numeric or 2-D ``x``
    raises :class:`~dpdist.errors.InvalidValueTypeError`.
    """
    epsilon = check_param(owner, "epsilon", epsilon, EPSILON)
    if needs_delta:
        delta = check_param(owner, "delta", delta, DELTA)
    bounds = check_param(owner, "bounds", bounds, Bounds())
    clip = check_param(owner, "clip", clip, Boolean())
    secure = check_param(owner, "secure", secure, Boolean())
    grid_size = check_param(owner, "grid_size", grid_size, Integer(low=2, high=2**20))
    generator = check_rng(rng, secure=secure, owner=owner)
    policy = missing_policy(owner, missing)
    policy.check_relation(owner, neighbouring)
    notes = [note] if (note := policy.note()) is not None else []
    array = policy.apply(as_real_array(owner, x), owner, f"The 'x' argument of {owner}", private=True)
    if clip:
        array = np.clip(array, bounds[0], bounds[1])
        return CentralInput(array, epsilon, delta, bounds, generator, secure, grid_size, notes)
    try:
        array = check_real_values(array, bounds, owner=owner, name="x")
    except OutOfDomainError as error:
        # the shared validator quotes how many values are bad and one of them: un-noised statistics and a
        # raw record of the private data, which must not reach a log or an analyst through an error message
        finite = "non-finite" not in str(error)
        raise OutOfDomainError(
            f"The 'x' argument of {owner} must hold "
            + (f"values inside the bounds [{bounds[0]}, {bounds[1]}] with clip=False" if finite else "finite values with clip=False")
            + " (the default clip=True clips them). Some do not; how many and which are not reported "
            "(they are statistics of the private data)."
        ) from None
    return CentralInput(array, epsilon, delta, bounds, generator, secure, grid_size, notes)


def release_notes(releases) -> dict:
    """``{"notes": [...]}``: what the site releases of a mergeable state state (each its missing-value policy), once
    each; ``{}`` when none states anything."""
    notes = list(dict.fromkeys(note for release in releases for note in release.get("notes", ())))
    return {"notes": notes} if notes else {}


def as_real_array(owner: str, x) -> np.ndarray:
    """``x`` as a 1-D float64 array of any real values (NaN and infinities included); only its schema is checked."""
    array = np.asarray(x)
    if array.ndim == 0:
        array = array.reshape(1)
    if array.ndim != 1:
        raise InvalidValueTypeError(
            f"The 'x' argument of {owner} must be a 1-D array of floats. Got an array of shape {array.shape} instead."
        )
    if array.dtype == object:  # a Python list with None (missing: NaN) among the numbers
        try:
            array = array.astype(np.float64)
        except (TypeError, ValueError):
            pass
    if array.size and not (np.issubdtype(array.dtype, np.floating) or np.issubdtype(array.dtype, np.integer)):
        # no value is quoted: it would be a record of the private data
        raise InvalidValueTypeError(
            f"The 'x' argument of {owner} must hold real numbers. Got dtype {array.dtype} instead."
        )
    return array.astype(np.float64, copy=False)


def check_positive_int(owner: str, name: str, value, *, low: int = 1, high: int | None = None) -> int:
    """Validate one integer parameter (``low <= value <= high``)."""
    return check_param(owner, name, value, Integer(low=low, high=high))


def to_unit_interval(x: np.ndarray, bounds: tuple[float, float]) -> np.ndarray:
    """Affine map of ``bounds`` onto ``[-1, 1]`` (sec. IV of the paper assumes A = 1)."""
    low, high = bounds
    return np.clip((2.0 * x - (low + high)) / (high - low), -1.0, 1.0)


def cdf_distribution(edges, cdf_values, *, method, guarantee: PrivacyGuarantee | None, n, details) -> Distribution:
    """A :class:`~dpdist.Distribution` from monotone CDF values at ``edges`` (0 at the left, 1 at the right).

    ``guarantee`` is what the release spent, composed by :mod:`dpdist.privacy`; ``None``
    only for a comparison variant that is not differentially private (no epsilon claimed).
    """
    epsilon = None if guarantee is None else guarantee.epsilon
    return Distribution.from_cdf(
        edges, cdf_values, method=method, epsilon=epsilon, n=n, details=details, guarantee=guarantee
    )


def grid_edges(bounds: tuple[float, float], grid_size: int) -> np.ndarray:
    """The ``grid_size + 1`` equal-width edges over ``bounds`` at which smooth CDFs are evaluated."""
    return np.linspace(bounds[0], bounds[1], grid_size + 1)


def check_option(owner: str, name: str, value, options: tuple) -> str:
    if value not in options:
        raise InvalidParameterError(
            f"The {name!r} parameter of {owner} must be one of {', '.join(map(repr, options))}. "
            f"Got {value!r} instead."
        )
    return value
