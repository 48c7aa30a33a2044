"""tests/bytecode_cache.py: the suite's processes keep their bytecode under one prefix, whatever PYTHONDONTWRITEBYTECODE says."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import bytecode_cache


def _environment(monkeypatch, prefix: Path) -> None:
    """A process as this machine starts one: no prefix, no bytecode written; the suite's prefix at ``prefix``."""
    monkeypatch.setattr(bytecode_cache, "PREFIX", prefix)
    monkeypatch.delenv("PYTHONPYCACHEPREFIX", raising=False)
    monkeypatch.delenv("DPDIST_TEST_BYTECODE", raising=False)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setattr(sys, "pycache_prefix", None)
    monkeypatch.setattr(sys, "dont_write_bytecode", True)


def test_the_process_and_its_children_write_their_bytecode_under_the_prefix(monkeypatch, tmp_path):
    prefix = tmp_path / "pycache"
    stale = prefix / Path(tempfile.gettempdir()).resolve().relative_to("/") / "old-copy" / "module.cpython-311.pyc"
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"")
    _environment(monkeypatch, prefix)
    bytecode_cache.keep_bytecode()
    assert os.environ["PYTHONPYCACHEPREFIX"] == sys.pycache_prefix == str(prefix)
    assert "PYTHONDONTWRITEBYTECODE" not in os.environ and sys.dont_write_bytecode is False
    assert not stale.exists()  # compiled from a temporary file: dropped
    # a child started now compiles a module once, under the prefix, and writes nothing beside the source
    source = tmp_path / "tree"
    source.mkdir()
    (source / "module_of_the_test.py").write_text("VALUE = 1\n")
    subprocess.run([sys.executable, "-c", "import module_of_the_test"], cwd=source, check=True)
    written = list(prefix.rglob("module_of_the_test.*.pyc"))
    assert len(written) == 1 and written[0].parent == prefix / source.resolve().relative_to("/")
    assert not (source / "__pycache__").exists()


def test_dpdist_test_bytecode_0_keeps_the_environments_choice(monkeypatch, tmp_path):
    _environment(monkeypatch, tmp_path / "pycache")
    monkeypatch.setenv("DPDIST_TEST_BYTECODE", "0")
    bytecode_cache.keep_bytecode()
    assert os.environ["PYTHONDONTWRITEBYTECODE"] == "1" and "PYTHONPYCACHEPREFIX" not in os.environ
    assert sys.dont_write_bytecode is True and sys.pycache_prefix is None
    assert not (tmp_path / "pycache").exists()


def test_a_checkout_in_the_temporary_directory_keeps_its_bytecode_and_a_later_process_drops_nothing(monkeypatch, tmp_path):
    prefix = tmp_path / "pycache"
    mirror = prefix / Path(tempfile.gettempdir()).resolve().relative_to("/")
    checkout, environment = mirror / "clone" / "src" / "module.cpython-311.pyc", mirror / "venv" / "lib" / "numpy.pyc"
    beside, stale = mirror / "clone-of-another" / "module.pyc", mirror / "old-copy" / "module.pyc"
    for path in (checkout, environment, beside, stale):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"")
    _environment(monkeypatch, prefix)
    temporary = Path(tempfile.gettempdir()).resolve()
    monkeypatch.setattr(bytecode_cache, "KEPT", (temporary / "clone", temporary / "venv"))
    bytecode_cache.keep_bytecode()
    assert checkout.exists() and environment.exists()  # a fresh clone there: its second run is warm
    assert not beside.exists() and not stale.exists()
    stale.parent.mkdir()
    stale.write_bytes(b"")
    bytecode_cache.keep_bytecode()  # a pytest-xdist worker, a test's own pytest run: the prefix is set
    assert stale.exists()
