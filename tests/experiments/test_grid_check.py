"""``experiments._grid_check``: an experiment's grid is checked when its spec is built, each refusal naming the key
and the value (a misspelt key, ``bins = 0`` and ``n = 10**309`` built, then failed in every
cell with a traceback; a refusal quoted the whole grid in one 300-character sentence)."""

from __future__ import annotations

import pytest

from dpdist.errors import InvalidParameterError
from dpdist.experiments import ExperimentSpec


def _spec(grid, methods=("grr", "sw")):
    return ExperimentSpec(name="x", datasets=["unif-10", "normal"], methods=list(methods), grid=grid, metrics=["mse"])


@pytest.mark.parametrize("grid, message", [
    ({"epsilom": [1], "n": [1000]},
     "The grid key 'epsilom' of ExperimentSpec 'x' is no parameter of the method 'grr' (local protocol 'grr'): did you "
     "mean 'epsilon'?"),
    ({"epsilon": [1], "n": [1000], "bins": [0]},
     "The grid key 'bins' of ExperimentSpec 'x' must hold an int >= 2 (equal bins over the bounds). Got 0 instead."),
    ({"epsilon": [1], "n": [10**309]},
     "The grid key 'n' of ExperimentSpec 'x' must hold None or an int from 1 to 2**53 = 9007199254740992 (users or "
     "records). Got 100000000000000000000000... (310 characters) instead."),
    ([{"epsilon": [1]}, {"n": [0]}], "The grid key 'n' of ExperimentSpec 'x' (sweep 2) must hold None or an int from 1"),
    ({"epsilon": [50]}, "The grid key 'epsilon' of ExperimentSpec 'x' must hold a finite float >= 1e-06 and <= 30 for "
                        "the method 'grr'. Got 50 instead."),
    ({"epsilon": 1}, "The grid key 'epsilon' of ExperimentSpec 'x' must hold a non-empty list of values. Got 1 instead."),
    ({"epsilon": [1], "b": [0.2]}, "The grid key 'b' of ExperimentSpec 'x' is no parameter of the method 'grr'"),
    ({"dataset_foo": [1]}, "The grid of ExperimentSpec 'x' has the key 'dataset_foo': it must be a parameter name"),
])
def test_a_grid_key_or_value_no_method_can_run_is_refused_when_the_spec_is_built(grid, message):
    with pytest.raises(InvalidParameterError) as refused:
        _spec(grid)
    assert str(refused.value).startswith(message), str(refused.value)
    assert len(str(refused.value)) < 300


def test_what_the_methods_take_is_accepted():
    grid = {"epsilon": [1.0, 2.0], "n": [1000, None], "metric_k": [3], "dataset_permute": [0], "postprocess": ["norm-sub"]}
    assert len(_spec(grid).cells()) == 2 * 2 * 2 * 2 * 10
    assert _spec({"epsilon": [1.0], "b": [0.2]}, methods=("sw",)).grid["b"] == [0.2]  # sw's parameter, sw only
    sweeps = [{"epsilon": [1.0], "b": [0.2], "methods": ["sw"]}, {"epsilon": [1.0], "methods": ["grr"]}]
    assert len(_spec(sweeps).sweeps()) == 2  # a sweep checked against its own methods


def test_every_reproductions_spec_and_its_quick_variant_still_build():
    """No false refusal: the papers' grids (and their ``--quick`` overrides) pass the check."""
    from dataclasses import replace

    from dpdist.experiments._registry import available_specs, get_spec

    for name in available_specs():
        spec = get_spec(name)
        quick = spec.with_options(quick=True)
        assert replace(quick, name=quick.name).cells() and spec.cells()
