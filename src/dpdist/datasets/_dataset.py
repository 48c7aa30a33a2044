"""The :class:`Dataset` record and the registry of named datasets.

A dataset is a name, a one-line description, its kind ("numerical" values in
``bounds`` or "categorical" items ``0 .. domain_size - 1``), its size, its
license and source, and a sampler ``draw(n, rng) -> ndarray`` hidden behind
:meth:`Dataset.load`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from .._rng import check_rng
from .._validation import Described, Implies, InstanceOf, Integer, Interval, OneOf, Options, Registered, check_param, validate_params
from ..errors import InvalidParameterError
from ._binning import bucketize
from .._types import Seed

__all__ = ["Dataset", "register", "get", "available", "describe"]

_REGISTRY: dict[str, "Dataset"] = {}


@validate_params({"kind": Options(("numerical", "categorical"))}, relations=(
    Implies("bounds", None, "kind", ("numerical",), why="every value lies in [lo, hi]",
            counterexample={"name": "x", "description": "", "kind": "numerical", "size": 1}),
    Implies("domain_size", None, "kind", ("categorical",), why="every item lies in [0, domain_size)",
            counterexample={"name": "x", "description": "", "kind": "categorical", "size": 1}),
))
@dataclass(frozen=True)
class Dataset:
    """A named dataset and how to draw its values.

    Attributes
    ----------
    name : str
        Registry name (lower case, hyphenated).
    description : str
        One line.
    kind : {"numerical", "categorical"}
    size : int
        Number of records of the population (real data) or the default sample
        size of a generator (``synthetic=True``).
    bounds : (float, float) or None
        Numerical datasets: every value lies in ``[lo, hi]``.
    domain_size : int or None
        Categorical datasets: every item lies in ``[0, domain_size)``.
    license, source : str
        Where the data come from and under which terms.
    synthetic : bool
        Drawn i.i.d. from a known law (then ``load(n)`` accepts any ``n``).
    default_n : int
        Number of values ``load()`` returns with ``n=None``.
    """

    name: str
    description: str
    kind: str
    size: int
    draw: Callable[[int | None, np.random.Generator], np.ndarray] = field(repr=False, compare=False)
    bounds: tuple[float, float] | None = None
    domain_size: int | None = None
    license: str = ""
    source: str = ""
    synthetic: bool = True
    default_n: int | None = None

    def __post_init__(self):
        # bounds of a numerical dataset, domain_size of a categorical one: the table's relations
        if self.default_n is None:
            object.__setattr__(self, "default_n", int(self.size))

    # ------------------------------------------------------------------ access
    @property
    def domain(self) -> str:
        """Human-readable bounds or domain size."""
        if self.kind == "numerical":
            assert self.bounds is not None, "a numerical dataset has bounds"
            return f"[{self.bounds[0]:g}, {self.bounds[1]:g}]"
        return f"{self.domain_size} items"

    def load(self, n: int | None = None, rng: Seed = None) -> np.ndarray:
        """Values of the dataset: float64 in ``bounds`` or int64 items in ``[0, domain_size)``.

        Parameters
        ----------
        n : int, optional
            Number of values.  ``None`` gives ``default_n`` values (the whole
            population for real data).  For real data, ``n < size`` draws a
            uniform subsample without replacement; ``n > size`` is an error.
        rng : None, int or Generator
            Randomness of the generator or of the subsample.
        """
        owner = f"dataset {self.name!r}"
        if n is not None:
            high = None if self.synthetic else int(self.size)
            n = check_param(f"Dataset.load of {owner}", "n", n, Integer(low=1, high=high))
        values = self.draw(n, check_rng(rng, owner=f"Dataset.load of {owner}"))
        dtype = np.float64 if self.kind == "numerical" else np.int64
        return np.asarray(values, dtype=dtype)

    # ------------------------------------------------------------------ derived datasets
    def binned(self, bins: int) -> "Dataset":
        """The categorical dataset of bucket indices of ``bins`` equal bins over ``bounds``."""
        if self.kind != "numerical":
            raise InvalidParameterError(
                f"Dataset.binned needs a numerical dataset; {self.name!r} is {self.kind}."
            )
        bins = check_param(f"Dataset.binned of {self.name!r}", "bins", bins, Integer(low=2, high=2**31 - 1))
        parent, bounds = self, self.bounds
        assert bounds is not None, "a numerical dataset has bounds"

        def draw(n, rng):
            return bucketize(parent.draw(n, rng), bounds, bins)

        return replace(
            self,
            name=f"{self.name}[bins={bins}]",
            description=f"{self.description} (bucketized into {bins} equal bins)",
            kind="categorical",
            bounds=None,
            domain_size=bins,
            draw=draw,
        )

    def spread(self, width: float) -> "Dataset":
        """Each value spread uniformly over its block of ``width`` (blocks from the lower bound): a
        smooth version of data recorded on a grid.

        E.g. departure times recorded to the minute and heaped on multiples of 5 minutes become,
        with ``width=5``, a density with the same profile at 5-minute resolution and no spikes
        inside a block, so equal bins of any width do not alias the recording grid (docs/how-to/run-experiments.md,
        "Scope of a claim").  The offsets come from the same ``rng`` as the values.
        """
        if self.kind != "numerical":
            raise InvalidParameterError(f"Dataset.spread needs a numerical dataset; {self.name!r} is {self.kind}.")
        assert self.bounds is not None, "a numerical dataset has bounds"
        low, high = self.bounds
        width = check_param(f"Dataset.spread of {self.name!r}", "width", width, Described(
            Interval(0.0, high - low, closed="right"), f"a number in (0, {high - low:g}]"))
        parent = self

        def draw(n, rng):
            values = np.asarray(parent.draw(n, rng), dtype=np.float64)
            blocks = np.floor((values - low) / width)
            return np.clip(low + (blocks + rng.random(values.size)) * width, low, high)

        return replace(
            self,
            name=f"{self.name}[spread={width:g}]",
            description=f"{self.description} (each value spread uniformly over its {width:g}-wide block)",
            draw=draw,
        )

    def permuted(self, seed: int = 0) -> "Dataset":
        """Items relabelled by a fixed random permutation (e.g. paper 001's "RP Taxi").

        The permutation is drawn from ``numpy.random.default_rng(seed)``; it turns a smooth
        histogram into a non-smooth one with the same multiset of frequencies.
        """
        if self.kind != "categorical":
            raise InvalidParameterError(
                f"Dataset.permuted needs a categorical dataset (use .binned(bins) first); {self.name!r} is {self.kind}."
            )
        seed = check_param(f"Dataset.permuted of {self.name!r}", "seed", seed, Integer(low=0))
        assert self.domain_size is not None, "a categorical dataset has a domain size"
        permutation = np.random.default_rng(seed).permutation(self.domain_size)
        parent = self

        def draw(n, rng):
            return permutation[np.asarray(parent.draw(n, rng), dtype=np.int64)]

        return replace(
            self,
            name=f"{self.name}[permuted={seed}]",
            description=f"{self.description} (items randomly permuted, seed {seed})",
            draw=draw,
        )


# ---------------------------------------------------------------------- registry
def register(dataset: Dataset) -> Dataset:
    """Add ``dataset`` to the registry under its name (names are unique)."""
    if dataset.name in _REGISTRY:
        raise InvalidParameterError(f"A dataset named {dataset.name!r} is already registered.")
    _REGISTRY[dataset.name] = dataset
    return dataset


def available(kind: str | None = None) -> list[str]:
    """Registered dataset names (optionally only ``kind`` "numerical" or "categorical")."""
    return sorted(name for name, data in _REGISTRY.items() if kind is None or data.kind == kind)


@validate_params({"name": OneOf((InstanceOf(Dataset, "a Dataset"), Registered(available, "a registered dataset name")),
                                 "a Dataset or a registered dataset name (datasets.available())")},
                 owner="datasets.get")
def get(name: str | Dataset, *, bins: int | None = None, permute: int | None = None,
        spread: float | None = None) -> Dataset:
    """A registered dataset, optionally spread over blocks of width ``spread`` (:meth:`Dataset.spread`),
    bucketized into ``bins`` and permuted with seed ``permute``.

    ``name`` may also be a :class:`Dataset` (returned with the same options applied).
    """
    dataset = name if isinstance(name, Dataset) else _REGISTRY[name]  # a registered name: the table
    if spread is not None:
        dataset = dataset.spread(spread)
    if bins is not None:
        dataset = dataset.binned(bins)
    if permute is not None:
        dataset = dataset.permuted(permute)
    return dataset


def describe() -> list[tuple[str, str, int, str, str]]:
    """``(name, kind, size, domain, description)`` of every registered dataset."""
    return [
        (name, data.kind, data.size, data.domain, data.description)
        for name, data in sorted(_REGISTRY.items())
    ]
