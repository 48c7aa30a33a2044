"""docs/how-to/call-from-r.md: dpdist called from R through reticulate, the page's R code run as written (slow: R starts Python).

R and reticulate come from Debian's packages (``.ci/run`` installs r-base-core and r-cran-reticulate when
``Rscript`` is missing); reticulate runs this test's own Python (``RETICULATE_PYTHON``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "how-to" / "call-from-r.md"
FENCE = re.compile(r"^```r(?P<info>[^\n]*)\n(?P<code>.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.mark.slow
def test_the_r_code_of_docs_r_runs_through_reticulate(tmp_path):
    from ops_support import required

    rscript = required("Rscript")
    blocks = [m.group("code") for m in FENCE.finditer(PAGE.read_text()) if "no-run" not in m.group("info")]
    assert len(blocks) == 2
    script = tmp_path / "page.R"
    script.write_text("set.seed(1)\n" + "\n".join(blocks))
    run = subprocess.run([rscript, script], capture_output=True, text=True, timeout=300, cwd=tmp_path,
                         env={**os.environ, "RETICULATE_PYTHON": sys.executable})
    assert run.returncode == 0, run.stderr[-3000:]
    out = run.stdout
    shares = dict(re.findall(r"^(home|cart|pay) (\d\.\d+)$", out, flags=re.MULTILINE))
    # GRR at epsilon 2 over 3 labels, n = 3000: standard error about 0.012; 5 of them
    for label, truth in {"home": 0.6, "cart": 0.3, "pay": 0.1}.items():
        assert abs(float(shares[label]) - truth) < 0.06, out
    assert "1-differential privacy (central, add or remove one record)" in out
    median = float(re.search(r"^median (\S+)", out, flags=re.MULTILINE).group(1))
    assert 45 < median < 63, out  # uniform(18, 90): true median 54; the tree CDF at epsilon 1, n = 5000
    rows = re.findall(r"^\d (lyon|oslo|pune) +(\S+) +(\S+) +(\S+)$", out, flags=re.MULTILINE)
    assert [row[0] for row in rows] == ["lyon", "oslo", "pune"], out
    assert all(35 < float(row[1]) < 73 and float(row[2]) <= float(row[1]) <= float(row[3]) for row in rows), out
    assert "numbers of records are not released" in out
