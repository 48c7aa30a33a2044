"""The quickstart's campaign runs as written (docs/quickstart.md, section 2).

Its Python blocks run with every page's (tests/docs/test_doc_snippets.py); its shell block starts a
service, creates a campaign, submits a CSV and reads the estimate: it runs here in one bash
session, as a reader pasting it would, on a free port instead of 8000.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

PAGE = Path(__file__).resolve().parents[2] / "docs" / "quickstart.md"


def _campaign_script() -> str:
    section = PAGE.read_text().split("## 2. ", 1)[1].split("\n## ", 1)[0]
    (script,) = re.findall(r"^```bash\n(.*?)^```", section, re.MULTILINE | re.DOTALL)
    return script


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_campaign_script_is_the_path_the_page_describes():
    script = _campaign_script()
    for step in ("dpdist serve", "campaign create", "dpdist submit", "campaign estimate", "campaign close", "kill %1"):
        assert step in script, step


@pytest.mark.slow
def test_the_quickstart_campaign_runs_as_written(tmp_path):
    pytest.importorskip("uvicorn")
    script = _campaign_script().replace("8000", str(_free_port()))
    bin_dir = str(Path(sys.executable).parent)  # the environment's python and dpdist, as `uv run` or an install gives
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    process = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=tmp_path, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = process.communicate(timeout=240)
    finally:  # the service the script started in the background dies with its session, whatever happened
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    assert process.returncode == 0, err[-3000:]
    assert "5000 report(s) accepted" in out, out
    for mode in ("bus", "bike", "car", "walk"):
        assert mode in out.split("5000 report(s) accepted", 1)[1], out
    assert "closed" in out


def test_the_site_opens_on_the_quickstart_and_lists_every_guide_in_order():
    index = (PAGE.parent / "index.md").read_text()
    entries = [line.strip() for block in re.findall(r"^```\{toctree\}\n(.*?)^```", index, re.MULTILINE | re.DOTALL)
               for line in block.splitlines() if line.strip() and not line.startswith(":")]
    assert entries[0] == "quickstart"  # the first page after the home page
    pages = {path.stem for path in PAGE.parent.glob("*.md")} - {"index"}
    listed = {entry for entry in entries if "*" not in entry and "/" not in entry}
    assert pages == listed, f"pages missing from docs/index.md's tables of contents: {sorted(pages - listed)}"
    assert len(entries) == len(set(entries))
