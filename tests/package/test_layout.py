"""Tests are found by a path: a public module's own file, a private module's own file or its owner's.

The tests of ``src/dpdist/<package>/<module>.py`` are in ``tests/<package>/test_<module>.py`` (scikit-learn's
layout, one folder per package, the leading underscore of a private name dropped): ``src/dpdist/_io/_atomic.py`` ->
``tests/io/test_atomic.py``, ``src/dpdist/local/frequency/grr.py`` -> ``tests/local/frequency/test_grr.py``; a
package's own code (its ``__init__.py``) -> ``tests/<package>/test_<package>.py``; a module and its private twin
(``frequency/longitudinal.py``, ``frequency/_longitudinal.py``) share one file.  Test files share helpers through the
support modules at the top of ``tests/`` (``serve_support.py``, ...), never by importing one another.

A public module (no part of its path starts with ``_``) has its file.  A private module may instead be tested
through the public module that owns it, as scikit-learn tests its private helpers through their public module (its
``preprocessing/tests/test_data.py`` exercises what ``preprocessing/_data.py`` imports): its owners are the public
modules that import it, directly or through other private modules (``serve/_group.py`` is imported by
``serve/_committer.py``, ..., by ``serve/__init__.py``: ``dpdist.serve`` owns it).  It passes when a test file of
an owner reaches it down the import graph: the owner's own file, the files of an owner package's folder
(``tests/serve/`` for ``dpdist.serve``), or of the folder of the public package that holds it.  The graph counts
what loads a module without an ``import`` statement too: a package's ``import_submodules(__name__, __path__)``
(every protocol module), a module named by its dotted name (the command line's table of commands) or by its file
name beside its reader (a worker run as a script).

Beside them, four folders hold what no single module owns: ``tests/conformance`` (the common module: every check of
the conformance kit on every registered protocol, and the other registry-wide checks), ``tests/package`` (rules over
the whole package and the suite's own machinery), ``tests/docs`` (the pages: ``tests/docs/test_<page>.py`` checks
``docs/<page>.md``) and ``tests/clients`` (the JavaScript client in ``clients/js``).

A module needs no file of its own when:

- it only gathers names (an ``__init__.py``, or a module such as ``plotting.py``: imports, ``__all__``, a lazy
  ``__getattr__``): its names are tested where they are defined;
- it is a ``__main__.py`` (``python -m dpdist.cli``: the command-line tests run it);
- it registers a local protocol: the common module runs every check its tags call for on it
  (tests/conformance/test_conformance.py), besides the tests of the family it belongs to.

No test file is named after a review or an issue: a review's tests go into the files of the modules they test, named
by what they check.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from dpdist import local
from dpdist.local._registry import registered_class
from source_support import import_graph, package_trees

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "src" / "dpdist"
TESTS = ROOT / "tests"
#: test folders that mirror no module of src/dpdist (see the module's docstring)
COMMON_FOLDERS = {"conformance", "package", "docs", "clients"}
#: a file named after a review, a reading or an issue (a finding's number in a test file's name)
REVIEW_NAME = re.compile(r"attack|newcomer|out[s]ider|review|finding|dead_end|fuzz|issue(?!r)|\d\d")


def mirrored_test_file(module: Path) -> Path:
    """The test file of a source module: ``src/dpdist/_io/_atomic.py`` -> ``tests/io/test_atomic.py``."""
    *folders, name = module.relative_to(SOURCE).parts
    folders = [folder.lstrip("_") for folder in folders]
    if name == "__init__.py":  # the package's own code
        return TESTS.joinpath(*folders, f"test_{folders[-1] if folders else 'dpdist'}.py")
    return TESTS.joinpath(*folders, f"test_{name.lstrip('_')}")


def _gathers_names_only(module: Path) -> bool:
    """An ``__init__.py`` that defines nothing but a lazy ``__getattr__``, or another module of imports and ``__all__``
    only: it re-exports."""
    tree = package_trees().get(module)
    if tree is None:
        return False
    body = tree.body
    if module.name == "__init__.py":
        return {node.name for node in body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))} <= {"__getattr__"}
    return all(isinstance(node, (ast.Import, ast.ImportFrom)) or (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant))
               or (isinstance(node, ast.Assign) and [ast.unparse(target) for target in node.targets] == ["__all__"]) for node in body)


@functools.cache
def _registered_protocol_modules() -> set[str]:
    return {registered_class(name).__module__ for name in local.available()}


def _dotted(module: Path) -> str:
    parts = module.relative_to(SOURCE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules() -> list[Path]:
    return sorted(path for path in SOURCE.rglob("*.py") if "_clients_js" not in path.parts)


def _exempt(module: Path, protocols: set[str]) -> bool:
    return _gathers_names_only(module) or module.name == "__main__.py" or _dotted(module) in protocols


def is_private(module: Path) -> bool:
    """Whether a source module is private: its file's name or a package above it starts with ``_`` (``__init__.py``
    and ``__main__.py`` are their package's)."""
    *folders, name = module.relative_to(SOURCE).parts
    return any(part.startswith("_") for part in folders) or (name.startswith("_") and not name.startswith("__"))


#: a string naming a module by its dotted name, or a file by its name
_NAMED = re.compile(r"[\"'](dpdist(?:\.\w+)+|\w+\.py)[\"']")


def _loaded_without_import(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """``graph`` with the modules each module loads without an ``import`` statement (see the module's docstring)."""
    files = {path: _dotted(path) for path in _modules()}
    found = {name: set(targets) for name, targets in graph.items()}
    for path, name in files.items():
        text = path.read_text()
        for named in _NAMED.findall(text):
            if named in found:
                found[name].add(named)
            elif path.with_name(named) in files:
                found[name].add(files[path.with_name(named)])
        if "import_submodules(__name__" in text:
            found[name] |= {files[child] for child in path.parent.glob("*.py") if child != path}
    return found


#: an import of the package in a test file: ``from dpdist.a import (b, c as d)`` or ``import dpdist.a``
#: ``from dpdist.a import b, c`` (its names on that line, or within its parentheses across lines) or ``import dpdist.a``
_IMPORT = re.compile(r"^\s*(?:from\s+(dpdist[\w.]*)\s+import\s+(\([\w\s,]+\)|[\w \t,]+)|import\s+(dpdist[\w.]*))", re.M)


def _test_imports(test_file: Path) -> set[str]:
    """The modules of the package a test file imports (``from dpdist.a import b``: ``dpdist.a.b`` if a module)."""
    found = set()
    for module, names, imported in _IMPORT.findall(test_file.read_text()):
        found.add(module or imported)
        found |= {f"{module}.{item.split()[0]}" for item in names.strip("()").split(",") if item.strip()}
    return found


def untested(modules: list[Path], graph: dict[str, set[str]], test_imports) -> list[str]:
    """The modules of ``modules`` without tests (see the module): a public one without its file, a private one without
    its file that no test file of an owner reaches.  ``graph``: module -> the modules it loads; ``test_imports``: a test
    file -> the modules it imports."""
    protocols = _registered_protocol_modules()
    names = {_dotted(module): module for module in modules}
    importers: dict[str, set[str]] = {}
    for name, targets in graph.items():
        for target in targets:
            importers.setdefault(target, set()).add(name)

    @functools.cache
    def reached(test_file: Path) -> frozenset[str]:
        seen, stack = set(), [name for name in test_imports(test_file) if name in graph]
        while stack:
            name = stack.pop()
            if name not in seen:
                seen.add(name)
                stack += graph.get(name, ())
        return frozenset(seen)

    missing = []
    for name, module in names.items():
        if mirrored_test_file(module).exists() or _exempt(module, protocols):
            continue
        if not is_private(module) or not any(name in reached(test_file) for test_file in _owner_test_files(name, names, importers)):
            missing.append(f"{module.relative_to(SOURCE)} -> {mirrored_test_file(module).relative_to(ROOT)}")
    return missing


def _owner_test_files(name: str, names: dict[str, Path], importers: dict[str, set[str]]) -> list[Path]:
    """The test files of the owners of the private module ``name`` and of the folder of the public package holding it."""
    owners, seen, stack = set(), {name}, [name]
    while stack:
        for importer in importers.get(stack.pop(), ()):
            if importer in seen or importer not in names:
                continue
            seen.add(importer)
            if is_private(names[importer]):
                stack.append(importer)  # a private importer: its own owners own this module too
            else:
                owners.add(importer)
    files = [mirrored_test_file(names[owner]) for owner in owners]
    folders = {mirrored_test_file(names[owner]).parent for owner in owners if names[owner].name == "__init__.py"}
    holder = names[name].parent
    while is_private(holder / "__init__.py") and holder != SOURCE:
        holder = holder.parent
    folders.add(mirrored_test_file(holder / "__init__.py").parent)
    return [file for file in files if file.exists()] + [file for folder in folders for file in sorted(folder.glob("test_*.py"))]


def test_every_module_has_its_test_file_or_is_tested_through_its_owner():
    missing = untested(_modules(), _loaded_without_import(import_graph()), _test_imports)
    assert not missing, ("modules without tests (a public module has its file; a private one its file or an owner's; "
                         "tests/package/test_layout.py):\n" + "\n".join(missing))


def test_test_files_mirror_a_module_or_sit_in_a_common_folder():
    """A test file at the top of a mirrored folder names a module of that package (or the package itself)."""
    expected = {mirrored_test_file(module) for module in _modules()}
    stray = [str(path.relative_to(ROOT)) for path in sorted(TESTS.rglob("test_*.py"))
             if path not in expected and path.relative_to(TESTS).parts[0] not in COMMON_FOLDERS
             and str(path.relative_to(TESTS)) not in NOT_YET_MIRRORED]
    assert not stray, "test files that name no module (tests/<package>/test_<module>.py):\n" + "\n".join(stray)


def test_no_test_file_is_named_after_a_review():
    named = [str(path.relative_to(ROOT)) for path in [*TESTS.rglob("test_*.py"), *(ROOT / "clients" / "js" / "test").glob("*.test.js")]
             if REVIEW_NAME.search(path.name.removeprefix("test_"))]
    assert not named, named


def test_the_rule_finds_the_files_the_layout_names():
    """The rule itself, on the cases the docstring names (a wrong rule would pass the tests above vacuously)."""
    assert mirrored_test_file(SOURCE / "_io" / "_atomic.py") == TESTS / "io" / "test_atomic.py"
    assert mirrored_test_file(SOURCE / "local" / "frequency" / "grr.py") == TESTS / "local" / "frequency" / "test_grr.py"
    assert mirrored_test_file(SOURCE / "local" / "frequency" / "_longitudinal.py") == mirrored_test_file(SOURCE / "local" / "frequency" / "longitudinal.py")
    assert mirrored_test_file(SOURCE / "confidence_sequences" / "__init__.py") == TESTS / "confidence_sequences" / "test_confidence_sequences.py"
    assert mirrored_test_file(SOURCE / "__init__.py") == TESTS / "test_dpdist.py"
    assert _gathers_names_only(SOURCE / "serve" / "__init__.py") and not _gathers_names_only(SOURCE / "testing" / "__init__.py")
    assert "dpdist.local.frequency.grr" in _registered_protocol_modules()
    assert REVIEW_NAME.search("attack" + "44.py") and REVIEW_NAME.search("newcomer" + "51.py") and not REVIEW_NAME.search("grr.py")
    assert is_private(SOURCE / "serve" / "_group.py") and is_private(SOURCE / "_io" / "_atomic.py")
    assert not is_private(SOURCE / "io.py") and not is_private(SOURCE / "serve" / "__init__.py")


def test_a_module_nobody_tests_fails_and_a_private_one_its_owner_tests_passes():
    """The rule can fail: a public module without its file, and a private one no owner's test file reaches, are
    listed; a private module the test file of its public owner reaches is not."""
    client = SOURCE / "client"
    modules = [client / "_new_helper.py", client / "_orphan.py", client / "new_public.py", client / "__init__.py"]
    graph = {"dpdist.client": {"dpdist.client._new_helper"}, "dpdist.client._new_helper": set(),
             "dpdist.client._orphan": set(), "dpdist.client.new_public": set()}
    test_client = TESTS / "client" / "test_client.py"
    found = untested(modules, graph, lambda test_file: {"dpdist.client"} if test_file == test_client else set())
    assert found == ["client/_orphan.py -> tests/client/test_orphan.py", "client/new_public.py -> tests/client/test_new_public.py"]


#: test files that check several modules together and are not split yet: what each checks across them
NOT_YET_MIRRORED: dict[str, str] = {
    "accounting/test_exact_bounds.py": "every accountant between an exact composition and basic composition, beyond GRR",
    "audit/test_audit_adversarial.py": "the auditor against randomizers that try to fool or break it (black box, events, run)",
    "audit/test_audit_mutations.py": "single-probability bugs injected into copies of protocols, each certified to violate",
    "cli/test_cli_consistency.py": "Python and the command line give the same numbers (deploy, records, estimate)",
    "cli/test_cli_recover.py": "estimate --state --recover: the command line over frequency._recovery and testing._poisoning",
    "estimates/test_coverage.py": "a slice of the coverage matrix of docs/explanation/uncertainty.md: local and central bands",
    "experiments/test_reproduce_flights3m.py": "three reproductions' size-sensitive claims on the flights3m dataset",
    "local/test_circular_campaign.py": "a time-of-day campaign end to end: opm-circular, the command line and the service",
    "local/test_clipping.py": "clipping in every numerical protocol and the command line",
    "local/test_labels.py": "categorical data by label: the config, privatize, estimate and the command line",
    "local/test_safe_defaults.py": "safe defaults across central and local releases: the CSPRNG, the epsilon range, bools",
    "serve/test_dashboard.py": "the dashboard in Chromium (Selenium) against the API: the pages, the estimates, the service",
    "serve/test_multi_deploy.py": "multi-attribute protocols deployed: report files, states, merges and the service",
    "serve/test_serve_abuse.py": "the service's defences: memory, time, connections, injected reports, poisoning",
    "serve/test_serve_crash.py": "kill -9 of the service while clients submit: nothing lost, nothing twice",
    "serve/test_serve_recreate.py": "a campaign deleted and created again by another process, its cache and store",
    "serve/test_serve_scale.py": "the service at scale: group commits, the log of changes, backpressure, workers",
}
