"""docs/how-to/prove-a-protocol.md stays runnable: its code blocks, a third-party protocol proved by the kit, run as one script."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "prove-a-protocol.md"


@pytest.mark.slow
def test_the_documented_third_party_protocol_passes_the_kit(tmp_path):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert any("class Warner" in block for block in blocks)
    script = tmp_path / "example.py"
    script.write_text("\n\n".join(blocks))
    # a fresh interpreter: the example registers "warner", which must not leak into this test session
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Warner passes" in result.stdout


@pytest.mark.slow
def test_import_dpdist_testing_does_not_import_pytest():
    code = "import sys, dpdist, dpdist.testing; print('pytest' in sys.modules, 'hypothesis' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["False", "False"]
