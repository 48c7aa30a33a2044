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
    off (a syntax tree holds no cycle: most of a whole-package parse's cost was the collector's).  Read them only:
    every caller sees the same trees."""
    trees = {}
    collecting = gc.isenabled()
    gc.disable()
    try:
        for path in sorted(SOURCE.rglob("*.py")):
            trees[path] = ast.parse(path.read_text())
    finally:
        if collecting:
            gc.enable()
    return trees
