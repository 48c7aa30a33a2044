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


def collect_examples() -> dict[str, list[dict]]:
    examples: dict[str, list[dict]] = {}
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if module.name.startswith("examples_"):
            mod = importlib.import_module(f"{__package__}.{module.name}")
            for name, configs in mod.EXAMPLES.items():
                examples.setdefault(name, []).extend(configs)
    return examples


EXAMPLES = collect_examples()

CASES = [
    (name, params)
    for name in local.available()
    for params in EXAMPLES.get(name, [])
]


def case_id(case) -> str:
    name, params = case
    return name + "[" + ",".join(f"{k}={v}" for k, v in params.items()) + "]"


def make(case):
    name, params = case
    return local.make(name, **params)


def channel_inputs(protocol, rng=None):
    """The inputs the suite checks: every item, or a spread of points in bounds."""
    import numpy as np

    if protocol.tags.kind == "frequency":
        return np.arange(protocol.domain_size)
    lo, hi = protocol.bounds
    generator = np.random.default_rng(12345 if rng is None else rng)
    fixed = lo + (hi - lo) * np.array([0.0, 0.25, 0.5, 0.75, 1.0])
    return np.concatenate([fixed, generator.uniform(lo, hi, 3)])


def population(protocol, n: int, rng=0):
    """A fixed, non-uniform population of ``n`` values for the protocol."""
    import numpy as np

    generator = np.random.default_rng(rng)
    if protocol.tags.kind == "frequency":
        d = protocol.domain_size
        weights = np.arange(1, d + 1, dtype=float) ** 2
        counts = np.floor(n * weights / weights.sum()).astype(int)
        counts[0] += n - counts.sum()
        return generator.permutation(np.repeat(np.arange(d), counts))
    lo, hi = protocol.bounds
    return lo + (hi - lo) * generator.beta(5, 2, size=n)
