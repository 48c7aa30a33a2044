"""Input validation and CDF assembly shared by the central-DP estimators.

Every public estimator calls :func:`check_central_input` once (SciPy's ``_iv``
pattern) and :func:`cdf_distribution` once at the end.
"""

from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np

from .._missing import missing_mask, missing_policy
from .._rng import check_rng
from .._validation import CENTRAL_EPSILON, DELTA, Boolean, Bounds, Integer, Options, check_param, check_real_values
from ..errors import ContributionBoundWarning, InvalidValueTypeError, OutOfDomainError
from ..estimates import Distribution
from .._guarantee import PrivacyGuarantee
from ._contributions import (AutoBound, ContributionRequest, PrivacyUnit, bounded_rows, contribution_request,
                            public_bound, warn_dropped)
from ._exact_choice import certified_gumbel_max
from .noise import _dyadic_epsilon

__all__ = ["CentralInput", "check_central_input", "release_notes", "as_real_array", "to_unit_interval", "cdf_distribution", "GRID_SIZE"]

#: Default number of equal-width bins of the returned Distribution (the CDF is evaluated at 1025 edges).
GRID_SIZE = 1024

#: Supported epsilon of every central release (see :data:`dpdist._validation.CENTRAL_EPSILON`).
EPSILON = CENTRAL_EPSILON


class CentralInput:
    """Validated inputs of one release: sorted-free float data, budget, bounds, generator.

    With a privacy unit (``unit``, :mod:`dpdist.central._contributions`) ``x`` holds the rows kept by bounding and
    ``epsilon``, ``delta`` the record-level budget of the mechanism; :meth:`stated` states its guarantee per person.
    """

    __slots__ = ("x", "epsilon", "delta", "bounds", "rng", "secure", "grid_size", "notes", "unit", "left")

    def __init__(self, x, epsilon, delta, bounds, rng, secure, grid_size, notes=(), unit: PrivacyUnit | None = None):
        self.x, self.epsilon, self.delta, self.bounds = x, epsilon, delta, bounds
        self.rng, self.secure, self.grid_size = rng, secure, grid_size
        self.notes = list(notes)  # what the result states about the inputs (the missing-value policy, the unit)
        self.unit = unit
        self.left = epsilon  # what is left of the record-level budget once earlier steps spent some (:meth:`guarantee`)

    def details(self, **details):
        """``details`` of the result, with :attr:`notes` (when there are any) under ``"notes"`` and the privacy unit
        under ``"privacy_unit"``."""
        unit = {"privacy_unit": self.unit_details()} if self.unit is not None else {}
        return {**details, **unit, **({"notes": [*details.get("notes", ()), *self.notes]} if self.notes else {})}

    def unit_details(self) -> dict:
        """``details["privacy_unit"]`` of the result: the bound and the record-level budget the mechanism ran at."""
        assert self.unit is not None
        return {**self.unit.details(), "record_epsilon": self.epsilon,
                **({"record_delta": self.delta} if self.delta else {})}

    def guarantee(self, neighbouring: str, *, delta: float | None = None) -> PrivacyGuarantee:
        """The (record-level) budget of this release as a central guarantee (``delta`` defaults to the one given, else
        0): the whole of it, or what :attr:`left` says is left after earlier steps (the default quantiles' choice)."""
        spent = self.delta if delta is None else delta
        return PrivacyGuarantee(self.left, spent or 0.0, neighbouring, "central")

    def stated(self, guarantee: PrivacyGuarantee) -> PrivacyGuarantee:
        """What the release states: ``guarantee`` (record-level, what its steps spent) per person when it has a privacy
        unit (:meth:`~dpdist.central._contributions.PrivacyUnit.stated`), else as it is."""
        return guarantee if self.unit is None else self.unit.stated(guarantee)


#: the note of a release whose randomness is not the OS CSPRNG (``rng`` a seed or a generator)
SEEDED_NOTE = ("seeded: the noise came from the rng given (a seed or a generator), not the OS CSPRNG, so it can be "
               "reproduced: NOT for publication")


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
    privacy_id=None,
    max_contributions=None,
    bounded: bool = True,
) -> CentralInput:
    """Validate the arguments every central estimator shares; raise a dpdist error naming the culprit.

    Only public arguments are refused (docs/explanation/central-release.md, "Refusals are public"): whether a release succeeds must not depend
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

    * ``privacy_id`` and ``max_contributions`` (:mod:`dpdist.central._contributions`): one id per value and the
      rows kept per person; the rows are bounded (after the missing-value policy, which leaves a row out with its
      id) and the budget of the release is the record-level one, stated per person by :meth:`CentralInput.stated`.
    * ``bounds``: a pair (lo, hi), refused by name when missing (``None``: "Got None instead", not a bare
      ``TypeError``); ``bounded=False`` with ``bounds=None``: no bounds (:func:`count`,
      :func:`~dpdist.central.unbounded_quantile`): nothing is clipped.
    """
    epsilon = check_param(owner, "epsilon", epsilon, EPSILON)
    if needs_delta:
        delta = check_param(owner, "delta", delta, DELTA)
    if bounded:
        bounds = check_param(owner, "bounds", bounds, Bounds())
    assert bounded or bounds is None, "a release without bounds is given none"
    clip = check_param(owner, "clip", clip, Boolean())
    secure = check_param(owner, "secure", secure, Boolean())
    grid_size = check_param(owner, "grid_size", grid_size, Integer(low=2, high=2**20))
    generator = check_rng(rng, secure=secure, owner=owner)
    policy = missing_policy(owner, missing)
    policy.check_relation(owner, neighbouring)
    request = contribution_request(owner, privacy_id, max_contributions)
    notes = [note] if (note := policy.note()) is not None else []
    if rng is not None:  # a seed or the caller's generator: the release says so, as dpdist release --seed
        notes.append(SEEDED_NOTE)
    array = as_real_array(owner, x)
    codes = request.codes(array.size) if request is not None else None
    kept = policy.apply(array, owner, f"The 'x' argument of {owner}", private=True)
    if codes is not None and kept.size != array.size:  # missing='drop': a row left out with its id
        codes = codes[~missing_mask(array)]
    unit = None
    if request is not None and codes is not None:
        kept, unit, epsilon, delta = _bounded(request, kept, codes, epsilon, delta, generator, neighbouring)
        notes.append(unit.note())
    array = kept
    if bounds is None or clip:
        array = array if bounds is None else np.clip(array, bounds[0], bounds[1])
    else:
        array = _strictly_inside(owner, array, bounds)
    return CentralInput(array, epsilon, delta, bounds, generator, secure, grid_size, notes, unit)


def _strictly_inside(owner: str, array: np.ndarray, bounds) -> np.ndarray:
    """``clip=False``: ``array`` if every value lies inside ``bounds``, else an error that quotes none of them."""
    try:
        return check_real_values(array, bounds, owner=owner, name="x")
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


def _bounded(request: ContributionRequest, values: np.ndarray, codes: np.ndarray, epsilon: float, delta,
             generator, neighbouring: str | None) -> tuple[np.ndarray, PrivacyUnit, float, float | None]:
    """``(rows kept, privacy unit, record epsilon, record delta)``: the bound chosen if asked (privately under
    add-remove; under replace from the persons' numbers of rows, which that relation leaves public, for no budget),
    each person's rows bounded to it (:func:`~dpdist.central._contributions.bounded_rows`), the count left out warned
    to the caller."""
    bound = request.bound
    if isinstance(bound, AutoBound) and neighbouring == "replace":
        unit = PrivacyUnit(public_bound(codes, bound), bound, 0.0, neighbouring)
    elif isinstance(bound, AutoBound):
        unit = PrivacyUnit(_private_bound(request.owner, codes, bound, epsilon * bound.share, generator), bound,
                           epsilon * bound.share, neighbouring)
    else:
        unit = PrivacyUnit(int(bound), neighbouring=neighbouring)
    kept = bounded_rows(codes, unit.max_contributions, generator)
    warn_dropped(request.owner, int(values.size - kept.size), unit.max_contributions, neighbouring)
    record_epsilon, record_delta = unit.record_budget(epsilon, delta)
    return values[kept], unit, record_epsilon, record_delta


def _private_bound(owner: str, codes: np.ndarray, bound: AutoBound, epsilon: float, generator) -> int:
    r"""The exponential mechanism's ``bound.quantile`` of the persons' numbers of rows, at ``epsilon``.

    The candidates are public: the integers :math:`\lfloor 2^{j/4} \rceil` from 1 to ``bound.largest`` (a bound
    within 19% of any value); candidate :math:`k` has utility :math:`-|\#\{c \le k\} - qP|` over the :math:`P`
    persons' counts :math:`c` (one person added or removed moves it by at most 1), weight
    :math:`e^{-\varepsilon' u/2}` with :math:`\varepsilon'` rounded down to a dyadic rational, drawn exactly
    (:func:`~dpdist.central._exact_choice.certified_gumbel_max`).  The holder of the data is warned when the draw
    lands more than 2x from the exact quantile with probability above 1/4 (:func:`_warn_spread_bound`)."""
    candidates = np.unique(np.round(2.0 ** (np.arange(0, 4 * math.log2(bound.largest) + 1) / 4)).astype(np.int64))
    candidates = candidates[candidates <= bound.largest]
    counts = np.sort(np.bincount(codes)) if codes.size else np.zeros(0, dtype=np.int64)
    counts = counts[counts > 0]
    kept = np.searchsorted(counts, candidates, side="right")  # persons with at most k rows
    gamma = _dyadic_epsilon(epsilon) / 2
    target = Fraction(bound.quantile) * int(counts.size)
    distance = np.abs(kept - float(target))
    scores = -float(gamma) * distance
    error = 2.0**-48 * (float(gamma) * (distance + float(target) + 1.0) + 1.0)

    def exact_score(index: int, context):
        exponent = gamma * abs(int(kept[index]) - target)
        return -context.divide(exponent.numerator, exponent.denominator)

    chosen = int(candidates[certified_gumbel_max(scores, error, exact_score, generator)])
    _warn_spread_bound(owner, chosen, candidates, scores, public_bound(codes, bound), int(counts.size), epsilon)
    return chosen


def _warn_spread_bound(owner: str, chosen: int, candidates: np.ndarray, scores: np.ndarray, exact: int, persons: int,
                       epsilon: float) -> None:
    """Warn the holder of the data when the exponential mechanism's law over ``candidates`` (weights
    ``exp(scores)``) puts more than 1/4 of its mass more than 2x from the ``exact`` quantile: too few persons for
    its epsilon, or counts flat above the quantile (the candidates from the largest count up tie).  The warning
    holds private numbers (the persons, the exact quantile) and goes to the caller only, as the rows left out do."""
    weights = np.exp(scores - scores.max())
    far = float(weights[(candidates > 2 * exact) | (2 * candidates < exact)].sum() / weights.sum())
    if far > 0.25:
        warnings.warn(ContributionBoundWarning(
            f"{owner}: max_contributions='auto' chose {chosen} rows per person; with these {persons} persons' numbers "
            f"of rows, its draw at epsilon {epsilon:g} lands more than 2x from their quantile ({exact}) with "
            f"probability {far:.0%} (too few persons, or many at the largest number of rows). Give max_contributions "
            "yourself (from explain, or a histogram of the counts released earlier) or AutoBound(largest=) a "
            "smaller ceiling. This warning is for you, the holder of the data: no release carries it.", persons),
            stacklevel=5)


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
    """``value`` if it is one of ``options`` (the rule :class:`~dpdist._validation.Options`), else an error naming
    ``name`` of ``owner``."""
    return check_param(owner, name, value, Options(tuple(options)))
