"""The JavaScript client from the Python tests: node, and what the client implements (asked of node, never listed).

``node_path()`` finds node (a test skips without it, except under CI, where a missing node fails);
``js_registry()`` is the client's registry as node reads it (its protocol modules,
``clients/js/src/protocols``); ``js_implements(protocol)`` says whether the client randomizes a
protocol's config: a protocol of that registry, and for a protocol over records every attribute's
protocol one of the client's attribute protocols.  ``npm_tools()`` is the folder of the npm programs the JavaScript
checks run (typescript, esbuild, jscpd), installed once from the npm registry into a cache folder.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DRIVER = ROOT / "tests" / "js_conformance_driver.mjs"


def node_path() -> str:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("node is not installed, and CI is set: the JavaScript client's tests must run in CI.")
        pytest.skip("node is not installed (CI installs it; see .ci/run)")
    return node


@functools.cache
def _registry(node: str) -> dict:
    result = subprocess.run([node, str(DRIVER), "registry"], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def js_registry() -> dict:
    """``{"supported": [...], "attributes": [...]}``: every protocol of the client, and those an attribute may use."""
    return _registry(node_path())


def js_implements(protocol) -> bool:
    """Whether the client randomizes ``protocol``'s config (records: with every attribute's protocol)."""
    registry = js_registry()
    if protocol.name not in registry["supported"]:
        return False
    inners = getattr(protocol, "inner_protocols", ()) if protocol.tags.kind == "multi" else ()
    return all(inner.name in registry["attributes"] for inner in inners)


#: The npm programs of the JavaScript checks (tsc: types; esbuild: a bundle; jscpd: duplicated code), pinned.
NPM_TOOLS = {"typescript": "5.9.3", "esbuild": "0.28.2", "jscpd": "4.0.5"}


@functools.cache
def npm_tools() -> Path:
    """The ``.bin`` folder of :data:`NPM_TOOLS`, installed from the npm registry once into
    ``$DPDIST_NPM_TOOLS`` (default ``~/.cache/dpdist/npm-tools``), in a sub-folder named by the pinned versions (an
    npm install into a folder removes what it was not asked for: another set of versions gets its own folder)."""
    node_path()
    npm = shutil.which("npm")
    if npm is None:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            pytest.fail("npm is not installed, and CI is set: the JavaScript checks must run in CI.")
        pytest.skip("npm is not installed (CI installs it; see .ci/run)")
    wanted = [f"{name}@{version}" for name, version in NPM_TOOLS.items()]
    base = Path(os.environ.get("DPDIST_NPM_TOOLS", Path.home() / ".cache" / "dpdist" / "npm-tools"))
    prefix = base / "-".join(wanted).replace("@", "_")
    manifests = [prefix / "node_modules" / name / "package.json" for name in NPM_TOOLS]
    if not all(path.is_file() and json.loads(path.read_text())["version"] == version
               for path, version in zip(manifests, NPM_TOOLS.values())):
        prefix.mkdir(parents=True, exist_ok=True)
        result = subprocess.run([npm, "install", "--no-save", "--no-audit", "--no-fund", "--prefix", str(prefix), *wanted],
                                cwd=prefix, capture_output=True, text=True, timeout=600)
        assert result.returncode == 0, f"npm install {wanted}: {result.stderr[-2000:]}"
    return prefix / "node_modules" / ".bin"
