"""The package's source files parsed once per session (tests/package/test_function_length.py and
tests/results_support.py read the same syntax trees)."""

from __future__ import annotations

import ast
import functools
import gc
from pathlib import Path

import dpdist

SOURCE = Path(dpdist.__file__).parent


@functools.cache
def package_trees() -> dict[Path, ast.Module]:
    """Every ``.py`` file under ``src/dpdist`` (sorted) and its syntax tree, parsed with the cyclic garbage collector
    off (a syntax tree holds no cycle: most of a whole-package parse's cost was the collector's), then frozen
    (:func:`gc.freeze`).  Read them only: every caller sees the same trees."""
    trees = {}
    collecting = gc.isenabled()
    gc.disable()
    try:
        for path in sorted(SOURCE.rglob("*.py")):
            trees[path] = ast.parse(path.read_text())
    finally:
        # the trees live for the rest of the session (~820,000 objects): frozen, the collector's full collections do not
        # walk them again (each would cost 0.4 CPU-s more: the fast loop makes ~15, pytest and Hypothesis call
        # gc.collect too); what else is frozen with them lives until the process ends, as after collection (conftest.py)
        gc.freeze()
        if collecting:
            gc.enable()
    return trees
