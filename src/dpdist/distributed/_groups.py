"""Releases per group of a bounded reservoir (:mod:`dpdist.distributed._reservoirs`): public keys, or keys chosen
privately on the driver (truncated geometric or Gaussian thresholding, :mod:`dpdist.central._partitions`)."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, KeysView, Sequence

import numpy as np

from .._rng import check_rng
from ..errors import ContributionBoundWarning, InvalidParameterError
from .._validation import Options, check_param
from .._guarantee import PrivacyGuarantee
from ._reservoirs import Reservoir

__all__ = ["GroupedReleases", "group_release"]


@dataclass(frozen=True)
class GroupedReleases:
    """One release per group shown, and what the group-by states per person.

    Attributes
    ----------
    results : dict
        ``{key: result}`` of the groups released (public keys listed, or those the selection kept), sorted by key.
    guarantee : PrivacyGuarantee
        The selection (with private keys) and ``max_groups`` groups' releases, composed sequentially per person.
    details : dict
        The bounds, the selection's budget and rule, one group's guarantee.
    """

    results: dict
    guarantee: PrivacyGuarantee
    details: dict = field(default_factory=dict)

    def __getitem__(self, key: Any) -> Any:
        return self.results[key]

    def __iter__(self) -> Iterator:
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def keys(self) -> KeysView[Any]:
        return self.results.keys()


def group_release(reservoir: Reservoir, function: Callable[..., Any], *args: Any, groups: Sequence[Any] | None = None,
                  selection_epsilon: float | None = None, selection_delta: float | None = None,
                  selection: str | None = None, rng: Any = None, **kwargs: Any) -> GroupedReleases:
    """One central release per group of a reservoir bounded with ``groups`` (Dask, Spark or :func:`bound_blocks`).

    ``groups`` lists public keys (each released, an empty one too); ``None`` chooses them privately from the
    reservoir (``selection_epsilon``, ``selection_delta``; ``selection``, how, as in
    :func:`dpdist.frame.group_release`: by default truncated geometric thresholding with ``max_groups=1``, two rounds
    of the weighted Gaussian mechanism with more, :mod:`dpdist.central._partitions`).  ``function(values, *args, privacy_id=..., max_contributions=...,
    **kwargs)`` runs once per group shown, on the driver; the guarantee composes the selection and ``max_groups``
    groups' releases per person.
    """
    # lazy: loads scipy (0.4-2 s)
    from ..central._partitions import (SELECTIONS, check_selection, default_selection, grouped_guarantee,
                                       refuse_replace_first, select_keys, selection_rule)

    owner = "distributed.group_release"
    if reservoir.groups is None:
        raise InvalidParameterError(f"{owner} releases a reservoir bounded with 'groups'; this one has none: "
                                    "reservoir.release(...).")
    refuse_replace_first(owner, function, kwargs)
    budget = None if groups is not None else check_selection(owner, selection_epsilon, selection_delta,
                                                               reservoir.max_groups)
    method = default_selection(reservoir.max_groups) if selection is None else \
        check_param(owner, "selection", selection, Options(SELECTIONS))
    each_group = _planned(function, args, kwargs, reservoir.max_contributions)
    total = grouped_guarantee(owner, each_group, reservoir.max_groups, budget)
    codes_of = {key: code for code, key in reservoir.keys.items()}
    streams = _streams(rng, owner)
    if budget is None:
        shown = [(key, codes_of.get(key)) for key in groups]  # type: ignore[union-attr]
    else:
        persons = np.unique(reservoir.hashes, return_inverse=True)[1].reshape(-1)
        kept = select_keys(persons, reservoir.groups.view(np.int64), method, *budget, reservoir.max_groups,
                           next(streams))
        shown = sorted(((reservoir.keys[int(code)], int(code)) for code in kept.view(np.uint64)), key=_order)
    results = {}
    for key, code in shown:
        rows = reservoir.groups == np.uint64(code) if code is not None else np.zeros(reservoir.kept, dtype=bool)
        results[key] = function(reservoir.values[rows], *args, privacy_id=reservoir.hashes[rows],
                                max_contributions=reservoir.max_contributions, rng=next(streams), **kwargs)
    details = {"max_contributions": reservoir.max_contributions, "max_groups": reservoir.max_groups,
               "each_group": each_group.to_dict()}
    if budget is not None:
        details["selection"] = {"epsilon": budget[0], "delta": budget[1], "method": method,
                                "rule": selection_rule(method)}
    return GroupedReleases(results, total, details)


def _order(item: tuple) -> Any:
    return (str(type(item[0])), item[0])


def _planned(function: Callable, args: tuple, kwargs: dict, k: int) -> PrivacyGuarantee:
    """What one group's release states: the release run on no records (its public arguments alone)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ContributionBoundWarning)
        dry = function(np.zeros(0), *args, privacy_id=np.zeros(0, dtype=np.uint64), max_contributions=k, rng=0,
                       **kwargs)
    guarantee = getattr(dry, "guarantee", None)
    if not isinstance(guarantee, PrivacyGuarantee):
        raise InvalidParameterError(f"distributed.group_release runs releases that state their guarantee; "
                                    f"{getattr(function, '__qualname__', function)!r} does not.")
    return guarantee


def _streams(rng: Any, owner: str) -> Iterator[np.random.Generator]:
    """The selection's and each group's generator: fresh CSPRNG streams, or children of a seed."""
    if rng is None:
        while True:
            yield check_rng(None, owner=owner)
    root = check_rng(rng, owner=owner)
    sequence = np.random.SeedSequence(root.integers(0, 2**63, size=4).tolist())
    while True:
        yield np.random.default_rng(sequence.spawn(1)[0])
