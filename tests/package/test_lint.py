"""ruff's small rule set on the source and the tests: syntax, statements, imports, pyflakes, and PEP 765.

The rules are in ``pyproject.toml`` (``[tool.ruff.lint]``): E4 (imports at the top), E7 (statements: ``==`` None,
a bare ``except``, a lambda assigned, ambiguous names), E9 (syntax), F (pyflakes: unused and undefined names,
redefinitions) and B012 (``return``, ``break`` or ``continue`` inside ``finally``, which silences the exception
being raised: Python 3.14 warns, PEP 765).  ruff is pinned in the dev group; it reads the whole tree in a fraction
of a CPU-second.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _ruff(*arguments: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *arguments],
                          cwd=cwd, capture_output=True, text=True, timeout=120)


def test_ruff_finds_nothing_in_the_source_and_the_tests():
    result = _ruff("src", "tests")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_runs_the_configured_rules(tmp_path):
    """The check can fail: a ``return`` in ``finally`` and an unused import, under the project's configuration."""
    sample = tmp_path / "sample.py"
    sample.write_text("import os\n\n\ndef f():\n    try:\n        pass\n    finally:\n        return 1\n")
    result = _ruff("--config", str(ROOT / "pyproject.toml"), str(sample), cwd=tmp_path)
    assert result.returncode == 1 and "B012" in result.stdout and "F401" in result.stdout, result.stdout + result.stderr
