"""An experiment's grid checked when its spec is built: every key a parameter some method takes, every value
within its rule, each refusal naming the key and the value (not the whole grid in one sentence).

A cell passes its grid point to its method (``experiments._runner.execute_cell``): ``n`` draws the users,
``dataset_bins`` / ``dataset_permute`` override the dataset, ``metric_<name>`` goes to the metrics, and the rest
goes to the method; a local protocol's method (``experiments._methods.run_local_protocol``) passes it to
``local.make`` (its table), ``bins`` to a frequency protocol on numerical data, and ``estimate_<name>`` and
:data:`~dpdist.experiments._methods.ESTIMATE_OPTIONS` to ``estimate``.  A key no protocol method of a sweep takes
(``epsilom``) or a value its rule refuses (``n = 10**309``, ``bins = 0``) failed in every cell with a traceback;
it is refused here.  A registered method or a callable takes what it takes: its keys are not checked.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .. import local
from .._validation import (POPULATION, Constraint, Described, InstanceOf, Integer, Interval, Items, OneOf, Optional,
                           Text, did_you_mean, refuses)
from ..errors import InvalidParameterError
from ..local._registry import registered_class
from ._methods import ESTIMATE_OPTIONS

__all__ = ["GRID", "GRID_VALUES", "METRIC_PREFIX", "DATASET_PREFIX", "SWEEP_DATASETS", "SWEEP_METHODS", "SWEEP_KEYS",
           "check_grid"]

#: Grid parameters with this prefix go to the metrics (see ExperimentSpec, grid).
METRIC_PREFIX = "metric_"
#: Grid parameters with this prefix override fields of the dataset reference.
DATASET_PREFIX = "dataset_"
#: Keys of a sweep (one dict of a list grid) naming the datasets / method labels it runs on.
SWEEP_DATASETS, SWEEP_METHODS = "datasets", "methods"
SWEEP_KEYS = (SWEEP_DATASETS, SWEEP_METHODS)

#: a grid key: a parameter name (of the dataset: only bins and permute)
_KEY = Described(Text(pattern=rf"(?!{DATASET_PREFIX})[A-Za-z_][A-Za-z0-9_]*|{DATASET_PREFIX}(bins|permute)"),
                 f"a parameter name ({DATASET_PREFIX}bins and {DATASET_PREFIX}permute the only {DATASET_PREFIX} ones)")
#: the rule of each value of the grid's own keys (a protocol's parameters: its table, per method)
GRID_VALUES: dict[str, Constraint] = {
    "n": Optional(POPULATION),
    "epsilon": Described(Interval(0.0, math.inf), "a number > 0"),
    "bins": Described(Integer(low=2), "an int >= 2 (equal bins over the bounds)"),
    DATASET_PREFIX + "bins": Described(Integer(low=2), "an int >= 2"),
    DATASET_PREFIX + "permute": Optional(Integer(low=0)),
    SWEEP_DATASETS: Text(), SWEEP_METHODS: Text(),
}
#: an experiment's ``grid`` as its table checks it: a dict, or a non-empty list of dicts (the rest: check_grid)
GRID = OneOf((InstanceOf(Mapping, "a dict"), Items(InstanceOf(Mapping, "a dict"), "a non-empty list of dicts", min_length=1)),
             "a dict of parameter name -> non-empty list of values, or a non-empty list of such dicts")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:24]}... ({len(text)} characters)"


def _protocol_keys(protocol: str) -> tuple[set[str], dict[str, Constraint], bool]:
    """What a local protocol's method takes from a grid: its keys, their rules, and whether any ``estimate_*``."""
    cls = registered_class(protocol)
    rules = dict(cls._constraints)
    keys = set(rules) | set(ESTIMATE_OPTIONS) | {f"estimate_{option}" for option in cls.estimate_options}
    if protocol not in local.available("numerical"):
        keys.add("bins")  # a frequency protocol on numerical data: the bins of the values
    return keys, rules, cls.estimate_delegate is not None


def _check_value(spec: str, key: str, value: Any, rule: Constraint, method: str | None, where: str) -> None:
    try:
        rule.check(value)
    except (ValueError, TypeError):
        of = f" for the method {method!r}" if method else ""
        raise InvalidParameterError(
            f"The grid key {key!r} of ExperimentSpec {spec!r}{where} must hold {rule.describe()}{of}. Got "
            f"{_shown(value)} instead.") from None


def _check_sweep(spec: str, sweep: Mapping, methods: list, where: str) -> None:
    for key, values in sweep.items():
        if not isinstance(key, str) or refuses(_KEY, key):
            raise InvalidParameterError(f"The grid of ExperimentSpec {spec!r} has the key {_shown(key)}{where}: it "
                                        f"must be {_KEY.describe()}.")
        if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple)) or not values:
            raise InvalidParameterError(f"The grid key {key!r} of ExperimentSpec {spec!r}{where} must hold a "
                                        f"non-empty list of values. Got {_shown(values)} instead.")
        for value in values:
            if key in GRID_VALUES:
                _check_value(spec, key, value, GRID_VALUES[key], None, where)
    only = sweep.get(SWEEP_METHODS)
    for method in methods:
        if (only is not None and method.label not in only) or callable(method.method) or method.method not in local.available():
            continue  # a registered method or a callable takes what it takes
        keys, rules, any_estimate = _protocol_keys(method.method)
        for key, values in {**sweep, **method.grid}.items():
            if key in SWEEP_KEYS or key.startswith((METRIC_PREFIX, DATASET_PREFIX)) or key == "n":
                continue
            if key not in keys and not (any_estimate and key.startswith("estimate_")):
                hint = did_you_mean(key, sorted(keys))
                raise InvalidParameterError(
                    f"The grid key {key!r} of ExperimentSpec {spec!r}{where} is no parameter of the method "
                    f"{method.label!r} (local protocol {method.method!r})" + (f": did you mean {hint!r}?" if hint else
                    f"; it takes its parameters {sorted(rules)}, bins, estimate_<an option of its estimate>, n, "
                    f"{DATASET_PREFIX}bins, {DATASET_PREFIX}permute and {METRIC_PREFIX}<name>."))
            if key in rules:
                for value in values:
                    _check_value(spec, key, value, rules[key], method.label, where)


def check_grid(spec: str, sweeps: list[Mapping], methods: list) -> None:
    """Refuse, naming the key and the value, a grid key no method of its sweep takes or a value its rule refuses.

    Parameters
    ----------
    spec : str
        The spec's name (for the messages).
    sweeps : list of dict
        The grid's sweeps (a dict grid is one).
    methods : list of MethodSpec
        The spec's methods (their ``method``, ``label`` and own ``grid``).
    """
    for index, sweep in enumerate(sweeps, 1):
        _check_sweep(spec, sweep, methods, f" (sweep {index})" if len(sweeps) > 1 else "")
