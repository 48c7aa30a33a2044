"""Types: the package passes mypy and pyright with zero errors, and its public API is annotated.

mypy and pyright are pinned in the dev group and configured in ``pyproject.toml``
(``[tool.mypy]``: the bodies of unannotated functions are checked too, ``# type: ignore``
needs an error code and must be needed; ``[tool.pyright]``: standard mode, which is basic
and more, e.g. an override must keep its base's signature and a property stays a property).
pyright reads scipy through scipy-stubs (the dev group; inferring scipy's source instead cost it about 10
of its ~75 CPU-s); mypy keeps scipy as ``Any``, as without the stubs.
Both are marked slow: they run in the whole suite (CI's run), not in the fast loop.  mypy's cache is
``.mypy_cache`` at the top of the checkout, so a second run only re-checks what changed, but the first run of a
fresh clone checks everything (32-52 CPU-s, a third of the fast loop's budget: docs/reference/benchmarks/test-suite.md, "The test
suite"); ``uv run mypy`` checks the package alone while developing.  pyright checks everything each time (about a
minute; it needs node, which pyright's PyPI package runs).  A ``# pyright: ignore[rule]`` names its rule and
says why (a third-party stub that is wrong), never silences a file.  The annotation test walks
the public modules (no component of the name starts with ``_``) and requires every function
and method they export to annotate each parameter and its return (``__init__`` may leave out
``-> None``).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pkgutil
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mypy import api

import dpdist

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a fresh clone's first run checks every module: 32-52 CPU-s (see above)
def test_mypy_finds_no_error_in_the_package(monkeypatch):
    monkeypatch.chdir(ROOT)  # the configuration's paths are relative to the checkout
    # mypy raises the interpreter's recursion limit for itself; later tests (a deeply nested JSON
    # body refused by the service) rely on the default one
    limit = sys.getrecursionlimit()
    try:
        stdout, stderr, status = api.run(
            ["--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(ROOT / ".mypy_cache"), "src/dpdist"]
        )
    finally:
        sys.setrecursionlimit(limit)
    assert status == 0, f"mypy found errors (uv run mypy):\n{stdout}{stderr}"
    assert "Success: no issues found" in stdout and "note:" not in stdout, stdout


@pytest.mark.slow
def test_pyright_finds_no_error_in_the_package():
    pyright = shutil.which("pyright", path=str(Path(sys.executable).parent))
    if pyright is None or shutil.which("node") is None:
        pytest.skip("pyright (the dev group) and node are needed")
    done = subprocess.run([pyright, "--outputjson", "-p", str(ROOT / "pyproject.toml")], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)
    report = json.loads(done.stdout)
    errors = [f"{d['file']}:{d['range']['start']['line'] + 1}: {d['message']}" for d in report["generalDiagnostics"]
              if d["severity"] == "error"]
    assert report["summary"]["filesAnalyzed"] > 300, report["summary"]
    assert not errors, "pyright found errors (uv run pyright):\n" + "\n".join(errors)


def test_every_pyright_ignore_names_its_rule_and_says_why():
    """A silenced pyright error names the rule, and the line (or the one above) says why."""
    bare = []
    for path in sorted((ROOT / "src" / "dpdist").rglob("*.py")):
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines, start=1):
            if "pyright:" not in line:
                continue
            named = re.search(r"# pyright: ignore\[\w+(, \w+)*\]", line)
            why = re.search(r"# pyright: ignore\[[^]]*\]\s*\S", line) or (number > 1 and lines[number - 2].strip().startswith("#"))
            if not named or not why or "pyright: basic" in line or "pyright: strict" in line:
                bare.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not bare, bare


def _public_modules() -> list[str]:
    names = ["dpdist"]
    for info in pkgutil.walk_packages(dpdist.__path__, "dpdist."):
        if not any(part.startswith("_") for part in info.name.split(".")[1:]):
            names.append(info.name)
    return sorted(names)


def _exported(module) -> dict:
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name, value in vars(module).items()
                 if not name.startswith("_") and getattr(value, "__module__", None) == module.__name__]
    return {name: getattr(module, name) for name in names}


def _is_ours(value) -> bool:
    return (getattr(value, "__module__", None) or "").split(".")[0] == "dpdist"


def _missing(function, *, method: bool = False) -> list[str]:
    """The parameters of ``function`` without an annotation, and ``"return"`` if it has none."""
    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())
    if method and parameters and parameters[0].name in ("self", "cls"):
        parameters = parameters[1:]
    missing = [p.name for p in parameters if p.annotation is inspect.Parameter.empty]
    if signature.return_annotation is inspect.Signature.empty and function.__name__ != "__init__":
        missing.append("return")
    return missing


def _methods(cls):
    """``(qualified name, function)`` of the public methods and properties ``cls`` gets from dpdist classes."""
    for klass in cls.__mro__:
        if not _is_ours(klass):
            continue
        for name, value in vars(klass).items():
            if name.startswith("_") and name not in ("__init__", "__call__"):
                continue
            if dataclasses.is_dataclass(klass) and name == "__init__":
                continue  # generated from the annotated fields
            if isinstance(value, property):
                value = value.fget
            elif isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            if inspect.isfunction(value) and _is_ours(value):
                yield f"{klass.__module__}.{klass.__qualname__}.{name}", value


def public_functions() -> dict:
    """Every function and method of the public API, by qualified name of its definition."""
    found = {}
    for module_name in _public_modules():
        for value in _exported(importlib.import_module(module_name)).values():
            if inspect.isclass(value) and _is_ours(value):
                found.update({name: (function, True) for name, function in _methods(value)})
            elif inspect.isfunction(value) and _is_ours(value):
                found[f"{value.__module__}.{value.__qualname__}"] = (value, False)
    return found


def test_every_public_function_and_method_is_annotated():
    functions = public_functions()
    assert len(functions) > 500, "the walk found the public API"  # dpdist has about a thousand
    unannotated = {name: missing for name, (function, method) in sorted(functions.items())
                   if (missing := _missing(function, method=method))}
    assert not unannotated, "public functions with unannotated parameters or return:\n" + "\n".join(
        f"  {name}: {', '.join(missing)}" for name, missing in unannotated.items()
    )


def test_the_annotation_check_can_fail():
    def untyped(values, rng=None):
        return values

    def typed(values: list, rng: int | None = None) -> list:
        return values

    assert _missing(untyped) == ["values", "rng", "return"]
    assert _missing(typed) == []
