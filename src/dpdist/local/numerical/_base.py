"""Base of numerical protocols: values in ``bounds = (lo, hi)``, rescaled to [0, 1] inside."""

from __future__ import annotations

import warnings
from typing import Any, Callable, ClassVar

import numpy as np

from ..._missing import missing_policy, real_array
from ..._types import ArrayLike, Seed
from ..._validation import (
    EPSILON,
    Boolean,
    Bounds,
    Given,
    Present,
    check_param,
    check_real_values,
    clip_real_values,
    wrap_real_values,
)
from ...errors import ClippedValuesWarning
from ...estimates import Distribution
from .._aggregator import Aggregator
from .._protocol import LocalProtocol, ProtocolTags

__all__ = ["BinnedProtocol", "NumericalProtocol", "unit_bin_index", "VALUES_GIVEN"]

#: ``channel(values)`` of a numerical protocol needs the values: it has no list of all inputs.
VALUES_GIVEN = Given("values", why="points in the bounds: a numerical protocol has no list of all inputs",
                     counterexample={"values": None})
#: What privatize and simulate take as ``values`` (a bare None is no value: refused before the missing policy).
_VALUES = Present("an array of values (a list, an array or a number)")


def unit_bin_index(unit_values, bins: int) -> np.ndarray:
    """Equal-width bin ``floor(u * bins)`` of each ``u`` in [0, 1], the last bin closed on the right."""
    return np.minimum((np.asarray(unit_values, dtype=np.float64) * bins).astype(np.int64), bins - 1)


class NumericalProtocol(LocalProtocol):
    """A local protocol over real values in ``bounds`` (default ``(0, 1)``).

    Subclasses work on the unit interval: :meth:`_check_values` returns values
    rescaled to [0, 1], and :meth:`_distribution` maps unit-interval bin masses
    back to a :class:`~dpdist.Distribution` over ``bounds``.  Subclasses extend
    the constraint table, e.g.
    ``_constraints = {**NumericalProtocol._constraints, "bins": Integer(low=2)}``.
    """

    tags: ClassVar[ProtocolTags] = ProtocolTags(
        kind="numerical", finite_channel=False, exact_simulate=False, unbiased=False
    )
    _constraints = {"epsilon": EPSILON, "bounds": Bounds()}
    _defaults = {"bounds": (0.0, 1.0)}
    #: the bounds are one period of a circle (``opm-circular``): a value outside them is wrapped around, not clipped
    circular: ClassVar[bool] = False

    @property
    def bounds(self) -> tuple[float, float]:
        return self._params["bounds"]

    def to_unit(self, x: ArrayLike) -> np.ndarray:
        lo, hi = self.bounds
        return (np.asarray(x, dtype=np.float64) - lo) / (hi - lo)

    def from_unit(self, u: ArrayLike) -> np.ndarray:
        lo, hi = self.bounds
        return lo + np.asarray(u, dtype=np.float64) * (hi - lo)

    # ------------------------------------------------------------------ clipping
    def privatize(self, values: ArrayLike, rng: Seed = None, *, secure: bool = False, clip: bool = True,
                  missing: str | float = "refuse") -> np.ndarray:
        """Randomize each user's value; one report per value.

        Parameters
        ----------
        values : array_like of float
            The users' true values.
        rng : None, int or Generator
            Randomness for simulation; ignored in favour of a CSPRNG when ``secure``.
        secure : bool
            Draw from AES-CTR keyed by the OS CSPRNG (see :mod:`dpdist._rng`).
        clip : bool
            ``True`` (the default, as in every central release): a value below ``lo``
            (``-inf`` included) is randomized as ``lo``, one above ``hi`` as ``hi``, and a
            :class:`~dpdist.errors.ClippedValuesWarning` says how many were
            clipped; on a circle (:attr:`circular`) a finite value outside is wrapped around
            instead (``lo + (x - lo) mod (hi - lo)``). The count stays where ``privatize`` runs (the device): no report
            carries it, and a clipped value's report is drawn exactly as the bound's.
            ``False``: such values raise :class:`~dpdist.errors.OutOfDomainError`.
        missing : {"refuse", "drop"} or float
            A missing value (NaN, None): refused with the count (the default,
            :class:`~dpdist.errors.MissingValuesError`), left out (``"drop"``: that user sends no
            report) or randomized as the number given, with a
            :class:`~dpdist.errors.MissingValuesWarning` counting them (:mod:`dpdist._missing`).
        """
        return super().privatize(self._clip_for(values, clip, "privatize", missing), rng, secure=secure)

    def simulate(self, values: ArrayLike, rng: Seed = None, *, clip: bool = True,
                 missing: str | float = "refuse") -> Aggregator:
        """An aggregator distributed exactly as one that added ``privatize(values)`` (``clip`` and ``missing`` as
        there)."""
        return super().simulate(self._clip_for(values, clip, "simulate", missing), rng)

    def clip_values(self, values: ArrayLike) -> tuple[np.ndarray, int]:
        """``(clipped, count)``: ``values`` clipped into ``bounds`` as ``clip=True`` does, and how many moved.

        For callers that report the count themselves (the command line prints it);
        NaN counts as clipped (to ``lo``).
        """
        return self._into_bounds(values, f"{self.display_name}.clip_values")

    def _into_bounds(self, values, owner: str) -> tuple[np.ndarray, int]:
        """``(values, moved)``: clipped into ``bounds``, or wrapped around them on a circle (:attr:`circular`)."""
        if self.circular:
            return wrap_real_values(values, self.bounds, owner=owner)
        return clip_real_values(values, self.bounds, owner=owner)

    def _clip_for(self, values, clip, method: str, missing: str | float = "refuse"):
        owner = f"{self.display_name}.{method}"
        clip = check_param(owner, "clip", clip, Boolean())
        values = check_param(owner, "values", values, _VALUES)
        values = missing_policy(owner, missing).apply(real_array(values), owner, f"The 'values' argument of {owner}")
        if not clip:
            return values
        clipped, moved = self._into_bounds(values, owner)
        if moved:
            lo, hi = self.bounds
            how = "wrapped around the circle" if self.circular else "clipped to them"
            warnings.warn(
                f"{owner}: {moved} of {clipped.size} value(s) outside the bounds [{lo:g}, {hi:g}] "
                f"were {how} before randomization (clip=True; the count is not sent). "
                "Pass clip=False to refuse them instead.",
                ClippedValuesWarning,
                stacklevel=3,
            )
        return clipped

    def _check_values(self, values) -> np.ndarray:
        """Validate values in ``bounds`` (finite, 1-D, real) and rescale them to [0, 1]."""
        x = check_real_values(values, self.bounds, owner=self._values_owner())
        return np.clip(self.to_unit(x), 0.0, 1.0)

    def _distribution(self, unit_probabilities, *, aggregator=None, **details) -> Distribution:
        """Equal-width bins over ``bounds`` with the given masses."""
        probabilities = np.asarray(unit_probabilities, dtype=np.float64)
        return Distribution(
            np.linspace(self.bounds[0], self.bounds[1], probabilities.size + 1),
            probabilities,
            method=self.name,
            epsilon=self.epsilon,
            n=None if aggregator is None else aggregator.n,
            details=details,
            guarantee=self.guarantee,
        )

    def _linear_estimator(self, options: dict[str, Any]) -> Callable[[np.ndarray, int], np.ndarray] | None:
        """The unbiased bin masses the estimate under ``options`` keeps in ``details`` (before its projection onto
        the simplex), as one map from a block of statistics to their masses; None when it keeps none.

        The map takes ``(statistics, n)``, one aggregate of ``n`` reports per row, and returns one row of masses
        each, exactly those ``estimate(aggregator, **options)`` would keep for the row (the same arithmetic, a block
        at a time): the parametric bootstrap of :func:`dpdist.uncertainty.cdf_band` refits hundreds of aggregates
        and needs nothing else of their estimates.
        """
        return None

    def _bin_masses_estimator(self, options: dict[str, Any]) -> Callable[[np.ndarray, int], np.ndarray] | None:
        """The bin masses ``estimate(aggregator, **options)`` is made of (before :class:`~dpdist.Distribution`
        renormalizes them), as one map from a block of statistics to their masses, as :meth:`_linear_estimator`;
        None when the protocol estimates one aggregate at a time."""
        return None


class BinnedProtocol(NumericalProtocol):
    """A numerical protocol whose estimate has ``bins`` equal bins over ``bounds`` (a ``"bins"`` parameter)."""

    @property
    def bins(self) -> int:
        """Number of equal input bins over ``bounds`` (the estimate's resolution)."""
        return self._params["bins"]
