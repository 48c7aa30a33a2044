r"""Expected errors of a release per person across ``max_contributions``: dropping rows against the noise of k rows.

A release per person (``privacy_id``) keeps at most :math:`k` rows of each person and runs at
:math:`\varepsilon/k` per row (:mod:`dpdist.central._contributions`).  A small :math:`k` drops the rows of the
persons with many (a *bias* when those persons' values differ from the others'); a large :math:`k` keeps them
but multiplies the noise by :math:`k`.  Which :math:`k` is best depends on the public law of the persons' numbers
of rows and on how much a person's values go with how many rows they have: :func:`person_predictions` simulates
both, seeded, on a public model (:class:`PersonModel`), and measures each release against *all* the rows (what
the analyst asks about), so both the bias and the noise are in the number.

The model (all public, chosen by the analyst before any data exist):

* ``rows_per_person``: an int (every person that many rows), ``("geometric", mean)`` (1 + a geometric count,
  the given mean), ``("zipf", a)`` (Zipf's law of exponent :math:`a > 1`, capped at :data:`MAX_ROWS`: heavy
  tailed), or a sequence of counts (a public sample, e.g. an earlier release's, drawn from with replacement);
* ``person_correlation`` :math:`\rho \in [0, 1)`: a person's rows are the data shape's quantiles at
  :math:`\Phi(\sqrt\rho\, z_p + \sqrt{1 - \rho}\, z)`, with :math:`z_p` the normal score of the person's rank
  in number of rows (the persons with the most rows have the largest values: the direction in which dropping
  their rows biases a release most) and :math:`z` a row's own; 0 makes values independent of persons (then
  bounding costs no bias, only rows).
"""

from __future__ import annotations

import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import Integer, Interval, OneOf, Vector, validate_params
from ..errors import ContributionBoundWarning, InvalidParameterError
from ._result import Prediction
from ._shapes import Shape
from ._simulation import data_generator, distribution_errors, interval_of, mean_of, run_generator

__all__ = ["PersonModel", "check_person_model", "person_predictions", "MAX_ROWS"]

#: the most rows one person of a ``("zipf", a)`` model holds
MAX_ROWS = 10_000


@dataclass(frozen=True)
class PersonModel:
    """The public model of a table with several rows per person (the module docstring)."""

    rows_per_person: Any
    person_correlation: float
    max_contributions: tuple[int, ...]

    def key(self) -> dict:
        rows = self.rows_per_person
        return {"rows_per_person": list(rows) if isinstance(rows, (tuple, list)) else rows,
                "person_correlation": self.person_correlation, "max_contributions": list(self.max_contributions)}

    def counts(self, persons: int, rng: np.random.Generator) -> np.ndarray:
        """Each person's number of rows (>= 1)."""
        rows = self.rows_per_person
        if isinstance(rows, int):
            return np.full(persons, rows, dtype=np.int64)
        if isinstance(rows, tuple) and rows and rows[0] == "geometric":
            return rng.geometric(1.0 / float(rows[1]), persons).astype(np.int64)
        if isinstance(rows, tuple) and rows and rows[0] == "zipf":
            return np.minimum(rng.zipf(float(rows[1]), persons), MAX_ROWS).astype(np.int64)
        return rng.choice(np.asarray(rows, dtype=np.int64), persons)

    def table(self, persons: int, shape: Shape, bounds: tuple[float, float],
              rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``(values, ids)`` of one simulated table of ``persons`` persons."""
        from scipy.special import ndtr, ndtri  # lazy: loads scipy (0.4-2 s)

        counts = self.counts(persons, rng)
        rank = np.empty(persons)
        rank[np.lexsort((rng.random(persons), counts))] = (np.arange(persons) + 0.5) / persons  # ties at random
        ids = np.repeat(np.arange(persons), counts)
        rho = self.person_correlation
        scores = math.sqrt(rho) * ndtri(rank)[ids] + math.sqrt(1 - rho) * rng.standard_normal(ids.size)
        return shape.at_quantiles(ndtr(scores), bounds), ids


@validate_params({
    "person_correlation": Interval(0.0, 1.0, closed="left"),
    "max_contributions": OneOf((Integer(low=1, high=MAX_ROWS), Vector(Integer(low=1, high=MAX_ROWS))),
                               f"an int in [1, {MAX_ROWS}] or a non-empty list of them (the bounds compared)"),
}, owner_argument="owner")
def check_person_model(owner: str, rows_per_person: Any, person_correlation: Any,
                       max_contributions: Any) -> PersonModel:
    """The model refused by name where it is not one (the module docstring)."""
    rows = rows_per_person
    if isinstance(rows, list) and len(rows) == 2 and isinstance(rows[0], str):
        rows = tuple(rows)  # ("geometric", 5) read back from JSON
    valid = (isinstance(rows, numbers.Integral) and not isinstance(rows, bool) and 1 <= int(rows) <= MAX_ROWS) or (
        isinstance(rows, tuple) and len(rows) == 2 and rows[0] in ("geometric", "zipf")
        and isinstance(rows[1], (int, float)) and not isinstance(rows[1], bool)
        and (rows[1] >= 1 if rows[0] == "geometric" else rows[1] > 1) and math.isfinite(rows[1]))
    if not valid and isinstance(rows, (list, np.ndarray)) and len(rows):
        counts = np.asarray(rows)
        valid = counts.ndim == 1 and counts.dtype.kind in "iu" and bool(np.all(counts >= 1))
        rows = tuple(int(c) for c in counts) if valid else rows
    if not valid:
        raise InvalidParameterError(
            f"The 'rows_per_person' parameter of {owner} must be an int in [1, {MAX_ROWS}], ('geometric', mean >= 1), "
            f"('zipf', a > 1) or a list of counts >= 1. Got {rows_per_person!r:.100} instead.")
    bounds = max_contributions if isinstance(max_contributions, list) else [max_contributions]  # checked by the table
    checked = tuple(sorted(set(bounds)))
    return PersonModel(int(rows) if isinstance(rows, numbers.Integral) else rows, float(person_correlation), checked)


def person_predictions(function, persons: int, epsilons, shape: Shape, repeats: int, seed: int, params: dict,
                       model: PersonModel, name: str, quantiles: bool) -> list[Prediction]:
    """One :class:`~dpdist.accuracy.Prediction` per epsilon and bound: ``repeats`` simulated tables (the same at
    every epsilon and bound: common random numbers), each released per person and measured against all its rows."""
    bounds = params["bounds"]
    tables = [model.table(persons, shape, bounds, data_generator(seed, run)) for run in range(repeats)]
    predictions = []
    for epsilon in epsilons:
        for k in model.max_contributions:
            runs, errors, medians = [], [], []
            for run, (values, ids) in enumerate(tables):
                generator = run_generator(seed, f"{name} k={k}", epsilon, run)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ContributionBoundWarning)
                    released = function(values, epsilon=epsilon, rng=generator, privacy_id=ids, max_contributions=k,
                                        **params)
                if quantiles:
                    errors.append(float(np.mean(np.abs(released.values - np.quantile(values, released.q)))))
                    medians.append(float(np.interp(0.5, released.q, released.values) - np.median(values)))
                else:
                    runs.append((released, values))
            found = distribution_errors(runs) if runs else {"quantile_mae": mean_of(errors),
                                                            "interval": interval_of(medians)}
            predictions.append(Prediction(float(epsilon), persons, found, k))
    return predictions
