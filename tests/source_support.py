"""The package's source files parsed once per session (tests/package/test_function_length.py and
tests/results_support.py read the same syntax trees), and its import graph (tests/package/test_import_graph.py and
tests/package/test_layout.py walk it)."""

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


def package_modules() -> dict[str, tuple[Path, bool]]:
    """Every module of the package by its dotted name: its file and whether it is a package (``__init__.py``)."""
    modules = {}
    for path in SOURCE.rglob("*.py"):
        if "_clients_js" in path.parts:
            continue
        parts = ["dpdist", *path.relative_to(SOURCE).with_suffix("").parts]
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def _is_type_checking_block(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)


#: The nodes whose lists can hold statements (an import is a statement: it stands only in such a list)
_HOLDS_STATEMENTS = (ast.stmt, ast.excepthandler, ast.match_case)


def imports(tree: ast.AST, in_function: bool = False, type_only: bool = False):
    """``(import node, made inside a function, under TYPE_CHECKING)`` for every import of ``tree``.

    An import is a statement, so only the lists of statements are walked (bodies, branches, handlers, cases), not
    the expressions: the same imports in a tenth of the nodes."""
    for field in tree._fields:
        children = getattr(tree, field, None)
        if not isinstance(children, list):
            continue
        for node in children:
            if not isinstance(node, _HOLDS_STATEMENTS):
                break
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                yield node, in_function, type_only
                continue
            function = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            yield from imports(node, function, type_only or _is_type_checking_block(node))


def _targets(node: ast.AST, package: str, modules: dict) -> set[str]:
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names}
    base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
    module = ".".join(base + ([node.module] if node.module else []))
    found = set()
    for alias in node.names:
        submodule = f"{module}.{alias.name}"
        found.add(submodule if submodule in modules else module)
    return found


@functools.cache
def source_imports(path: Path) -> tuple[list[str], list[tuple[ast.AST, bool, bool]]]:
    """The lines of a file of the package and its imports (:func:`imports`), from the tree parsed once per session.

    Three tests read the whole package (the circle, the floors, the lazy imports), and test_function_length.py and
    test_file_writers.py read it too: parsing it is most of their cost, so they share one parse
    (tests/source_support.py, with the cyclic garbage collector off)."""
    return path.read_text().splitlines(), list(imports(package_trees()[path]))


@functools.cache
def import_graph() -> dict[str, set[str]]:
    """Module -> the modules of the package it imports, every kind of import included (one graph per session: read
    it only)."""
    modules = package_modules()
    graph = {}
    for name, (path, is_package) in modules.items():
        package = name if is_package else name.rsplit(".", 1)[0]
        targets: set[str] = set()
        for node, _, _ in source_imports(path)[1]:
            targets |= _targets(node, package, modules)
        graph[name] = {target for target in targets if target in modules and target != name}
    return graph
