"""Collect ``EXAMPLES`` from every ``examples_*.py`` module of this folder.

Each module maps a registry name to a list of parameter dicts for small
instances.  A registered protocol with no example makes the suite fail
(``test_every_protocol_has_examples``), so a new method cannot skip it.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import dpdist.local as local
from dpdist.testing import population  # noqa: F401  (re-exported for the state-file tests)


def _example_modules() -> list:
    return [importlib.import_module(f"{__package__}.{module.name}")
            for module in pkgutil.iter_modules([str(Path(__file__).parent)]) if module.name.startswith("examples_")]


def collect_examples() -> dict[str, list[dict]]:
    examples: dict[str, list[dict]] = {}
    for mod in _example_modules():
        for name, configs in mod.EXAMPLES.items():
            examples.setdefault(name, []).extend(configs)
    return examples


def collect_lightest() -> dict[str, int]:
    """``name -> index`` of the example a module names as the lightest (``LIGHTEST``, optional): the fast loop
    runs the non-privacy conformance checks on it (``conftest.py``)."""
    return {name: index for mod in _example_modules() for name, index in getattr(mod, "LIGHTEST", {}).items()}


EXAMPLES = collect_examples()
LIGHTEST = collect_lightest()

CASES = [
    (name, params)
    for name in local.available()
    for params in EXAMPLES.get(name, [])
]


def lightest_cases() -> list[tuple[str, dict]]:
    """``(name, params)`` of the lightest example of each registered protocol, in registry order.

    The lightest: the example whose non-privacy checks cost the least CPU, measured over the whole conformance
    suite (the channel samplers at full size, the repeated estimates at a quarter); each ``examples_*.py`` module
    names it (``LIGHTEST``) where it is not the first (pckv-grr's second example alone costs 0.8 CPU-s, rsfd's
    first 0.75, smp's and spl's first 0.5).  The fast loop runs the non-privacy conformance checks on it
    (``conftest.py``); the registry-wide tests of one example per protocol take it.
    """
    return [(name, EXAMPLES[name][LIGHTEST.get(name, 0)]) for name in local.available() if EXAMPLES.get(name)]


def case_id(case) -> str:
    name, params = case
    return name + "[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]"


def make(case):
    name, params = case
    return local.make(name, **params)
