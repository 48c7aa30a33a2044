"""No test lists the registered protocols: membership comes from the registry and the declared tags.

A test that names every protocol (``{"grr", "oue", ...} == set(local.available())``, a regex of the
client's protocols, a table by protocol name) breaks when a protocol is added, so a new protocol would
touch it (design.md "Adding a protocol": a protocol is its module, its conformance example and, for
devices, one JavaScript module).  Tests take their protocols from ``local.available()``, the tags, the
conformance examples (``tests/conformance/_examples.py``) or, for the JavaScript and Java clients, their
own registries (``tests/js_support.py``, ``tests/java_support.py``); a test about named protocols names a few.

The check: no collection literal in a Python test (list, tuple, set, dict keys), and no statement of a
JavaScript or Java test, names ``LIMIT`` or more registered protocols.  The conformance examples
(``tests/conformance/examples_*.py``) are exempt: each protocol has its own entry there, and adding one
touches nothing else.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from dpdist import local

ROOT = Path(__file__).resolve().parents[2]
#: this many registered names in one literal is a list of the registry in all but name
LIMIT = 6
EXEMPT = re.compile(r"tests/conformance/examples_[a-z_]+\.py$")


def _python_tests() -> list[Path]:
    files = sorted((ROOT / "tests").rglob("*.py")) + sorted((ROOT / "clients" / "js" / "test").glob("*.py"))
    return [path for path in files if not EXEMPT.search(path.as_posix())]


def _js_tests() -> list[Path]:
    """The JavaScript tests, and the Java ones (their statements end with ``;`` and their comments are JavaScript's)."""
    return (sorted((ROOT / "clients" / "js" / "test").glob("*.js")) + sorted((ROOT / "tests").glob("*.mjs"))
            + sorted((ROOT / "clients" / "java" / "src" / "test").rglob("*.java")) + sorted((ROOT / "tests").glob("*.java")))


def python_lists(text: str, names: set[str], limit: int = LIMIT) -> list[tuple[int, list[str]]]:
    """``(line, names)`` of every collection literal of ``text`` naming ``limit`` or more of ``names``.

    A literal names a protocol by a string constant, written ``"name"`` or ``'name'`` in the source (with a prefix
    or in triple quotes too): a file holding fewer than ``limit`` of them quoted has no such literal and is not
    parsed (walking every test file's tree was most of this check's CPU-second).
    """
    found = []
    if sum(f'"{name}"' in text or f"'{name}'" in text for name in names) < limit:
        return found
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.List | ast.Tuple | ast.Set):
            elements = node.elts
        elif isinstance(node, ast.Dict):
            elements = [key for key in node.keys if key is not None]
        else:
            continue
        named = {e.value for e in elements if isinstance(e, ast.Constant) and isinstance(e.value, str)} & names
        if len(named) >= limit:
            found.append((node.lineno, sorted(named)))
    return found


_COMMENTS = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
_WORD = re.compile(r"(?<![\w$-])([a-z][a-z0-9-]*)(?![\w$-])")


def javascript_lists(text: str, names: set[str], limit: int = LIMIT) -> list[tuple[int, list[str]]]:
    """``(line, names)`` of every statement of ``text`` (comments aside) naming ``limit`` or more of ``names``:
    as strings, object keys or words of a regular expression alike."""
    found, line = [], 1
    for statement in re.split(r"(;)", _COMMENTS.sub(lambda m: "\n" * m.group().count("\n"), text)):
        named = set(_WORD.findall(statement)) & names
        if len(named) >= limit:
            found.append((line + len(statement) - len(statement.lstrip("\n")), sorted(named)))
        line += statement.count("\n")
    return found


@pytest.mark.slow  # an audit of every test file, 0.4 CPU-s: the checks it runs are tested below in the fast loop
def test_no_test_lists_the_registered_protocols():
    names = set(local.available())
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {', '.join(named)}"
        for path in _python_tests() for line, named in python_lists(path.read_text(), names)
    ] + [
        f"{path.relative_to(ROOT)}:{line}: {', '.join(named)}"
        for path in _js_tests() for line, named in javascript_lists(path.read_text(), names)
    ]
    assert not offenders, (
        "closed lists of protocol names in the tests (take them from the registry, the tags or the conformance "
        "examples; a test about named protocols names fewer than " + str(LIMIT) + "):\n" + "\n".join(offenders)
    )


NAMES = set("grr oue sue olh hr ss sw gw".split())  # the checks' own test data


@pytest.mark.parametrize("text, expected", [
    ('CLASSIFIED = {"grr", "oue", "sue", "olh", "hr", "ss"}\n', 1),
    ('SUPPORTED = ("grr", "oue", "sue",\n    "olh", "hr", "sw")\n', 1),
    ('PARAMS = {"grr": {}, "oue": {}, "sue": {}, "olh": {}, "hr": {}, "gw": {"bins": 4}}\n', 1),
    ('CASES = [("grr", {}), ("oue", {}), ("sue", {}), ("olh", {}), ("hr", {}), ("ss", {})]\n', 0),  # a case list
    ('SAMPLE = ["grr", "oue", "sw", "hr", "ss"]\n', 0),  # a few named protocols
])
def test_the_python_check_finds_closed_lists(text, expected):
    assert len(python_lists(text, NAMES)) == expected


@pytest.mark.parametrize("text, expected", [
    ("assert.match(message, /gw, grr, hr, olh, oue, ss, sue, sw/);\n", 1),
    ("const SAME = new Set(['grr', 'olh', 'hr',\n  'sw', 'gw', 'oue']);\n", 1),
    ("const MODULE = { oue: 'unary', sue: 'unary', sw: 'wave', gw: 'wave', olh: 'x', hr: 'y' };\n", 1),
    ("// grr, oue, sue, olh, hr, ss in a comment\nconst x = 1;\n", 0),
    ("const a = fromConfig({ protocol: 'grr' });\nconst b = fromConfig({ protocol: 'oue' });\n", 0),
])
def test_the_javascript_check_finds_closed_lists(text, expected):
    assert len(javascript_lists(text, NAMES)) == expected
