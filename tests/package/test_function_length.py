"""No function of the package passes 80 lines: a longer one is split into named steps.

A function's length is its lines from ``def`` to its last line (its docstring and comments included), nested
functions counted in the function that holds them and on their own.  :data:`BEING_SPLIT` may list a function over
80 lines while it is being split, with its length then: it may not grow, and an entry must go once its function is
split (the test says so).  It is empty.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import dpdist
from source_support import package_trees

SOURCE = Path(dpdist.__file__).parent
LIMIT = 80
#: ``(file, qualified name) -> lines``: functions over the limit allowed while they are being split, at most as long
#: as they are listed (empty: every function of the package is at most 80 lines)
BEING_SPLIT: dict[tuple[str, str], int] = {}


def function_lengths(body: list, prefix: str = ""):
    """``(qualified name, lines)`` of every function defined in the statements ``body``, methods as ``Class.method``,
    nested ones as ``outer.inner``.  A definition is a statement: only the lists of statements are walked (bodies,
    branches, handlers, cases), a tenth of the cost of walking every node."""
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = prefix + node.name
            yield name, node.end_lineno - node.lineno + 1
            yield from function_lengths(node.body, name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from function_lengths(node.body, prefix + node.name + ".")
        else:
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                statements = getattr(node, field, None)
                if isinstance(statements, list):
                    yield from function_lengths(statements, prefix)


@functools.cache
def long_functions() -> dict[tuple[str, str], int]:
    """The package's functions over :data:`LIMIT` lines, from the trees parsed once per session
    (tests/source_support.py, shared with tests/results_support.py)."""
    found = {}
    for path, tree in package_trees().items():
        relative = path.relative_to(SOURCE).as_posix()
        for name, lines in function_lengths(tree.body):
            if lines > LIMIT:
                found[(relative, name)] = lines
    return found


def test_the_scan_finds_long_functions_methods_and_nested_ones():
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    code = (f"def long():\n{body}\nclass C:\n    def short(self):\n        def inner():\n{body.replace('    ', '            ')}"
            f"try:\n    pass\nexcept ImportError:\n    def fallback():\n{body.replace('    ', '        ')}")
    found = dict(function_lengths(ast.parse(code).body))
    assert found["long"] == LIMIT + 1 and found["C.short.inner"] == LIMIT + 1 and found["C.short"] == LIMIT + 2
    assert found["fallback"] == LIMIT + 1


def test_no_function_passes_80_lines():
    found = long_functions()
    new = {key: lines for key, lines in found.items() if key not in BEING_SPLIT}
    grown = {key: (lines, BEING_SPLIT[key]) for key, lines in found.items() if key in BEING_SPLIT and lines > BEING_SPLIT[key]}
    assert not new, f"functions over {LIMIT} lines (split them into named steps): {new}"
    assert not grown, f"functions of BEING_SPLIT that grew (lines now, listed): {grown}"


def test_every_function_being_split_is_still_over_the_limit():
    """An entry goes once its function is split (or renamed): the list only shrinks."""
    stale = sorted(set(BEING_SPLIT) - set(long_functions()))
    assert not stale, f"remove from BEING_SPLIT (now at most {LIMIT} lines, or gone): {stale}"
