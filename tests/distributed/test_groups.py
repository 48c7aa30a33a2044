"""Releases of a merged reservoir on the driver (``distributed/_groups.py``): per person, per group with public or
private keys."""

from __future__ import annotations

import warnings

import pytest

from dpdist import central, distributed

from reservoirs_support import cut as _cut, table as _table


def test_the_reservoir_is_released_per_person_and_per_group_on_the_driver():
    ids, values, groups = _table()
    kept = distributed.bound_blocks(_cut((ids, values), 1_000), 4, seed=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # every person already within the bound: nothing more left out
        released = kept.release(central.quantiles, [0.5], epsilon=1.0, bounds=(0, 1), rng=2)
    assert released.guarantee.unit == "person" and abs(released.values[0] - 0.5) < 0.05
    grouped = distributed.bound_blocks(_cut((ids, values, groups), 1_000), 4, max_groups=2, seed=1)
    shown = distributed.group_release(grouped, central.count, epsilon=0.5, selection_epsilon=0.5,
                                      selection_delta=1e-6, rng=3)
    assert list(shown.keys()) == list(range(12)) and shown.guarantee.epsilon == pytest.approx(1.5)
    assert shown.details["selection"]["method"] == "adaptive"  # the default with max_groups=2
    geometric = distributed.group_release(grouped, central.count, epsilon=0.5, selection_epsilon=0.5,
                                          selection_delta=1e-6, selection="truncated_geometric", rng=3)
    assert list(geometric.keys()) == list(range(12))
    assert geometric.details["selection"]["rule"].startswith("truncated geometric")
    listed = distributed.group_release(grouped, central.cdf, epsilon=1.0, bounds=(0, 1), groups=[0, 99], rng=3)
    assert list(listed.keys()) == [0, 99] and listed.guarantee.epsilon == pytest.approx(2.0)


def test_a_replace_release_per_group_is_refused_by_name_before_it_runs():
    """As ``frame.group_release``: slice quantiles and ``neighbouring="replace"``
    refused from their public arguments, not by a run's error on no records."""
    from dpdist.errors import InvalidParameterError

    ids, values, groups = _table()
    grouped = distributed.bound_blocks(_cut((ids, values, groups), 1_000), 4, max_groups=2, seed=1)
    with pytest.raises(InvalidParameterError, match="method='slice' \\(replace neighbours"):
        distributed.group_release(grouped, central.quantiles, [0.5], epsilon=1.0, bounds=(0, 1), method="slice",
                                  delta=1e-6, groups=[0])
    with pytest.raises(InvalidParameterError, match="tree_cdf with neighbouring='replace'"):
        distributed.group_release(grouped, central.tree_cdf, epsilon=1.0, bounds=(0, 1), neighbouring="replace",
                                  groups=[0])
