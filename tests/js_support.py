"""The JavaScript client from the Python tests: node, and what the client implements (asked of node, never listed).

``node_path()`` finds node (a test skips without it, except under CI, where a missing node fails);
``js_registry()`` is the client's registry as node reads it (its protocol modules,
``clients/js/src/protocols``); ``js_implements(protocol)`` says whether the client randomizes a
protocol's config: a protocol of that registry, and for a protocol over records every attribute's
protocol one of the client's attribute protocols.
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
