"""The tutorials (docs/tutorials/) run as written, as a reader pasting them into one folder would.

A tutorial's ```python blocks run in order in one namespace (tests/docs/test_doc_snippets.py runs them on every
page); here they run first, in a fresh folder, as one script.  Then its files are written: a fenced block whose first
line is a comment naming a file (``# device.py: ...``, ``// Device.java: ...``) is that file.  Then its ```bash blocks
run in order in one bash session there (``set -euo pipefail``), with the services on free ports instead of 8000, 8001
and 8002, and ``DPDIST_CLONE`` pointing at this repository.  Slow: each starts services, node or a JVM.
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

ROOT = Path(__file__).resolve().parents[2]
TUTORIALS = ROOT / "docs" / "tutorials"
BLOCK = re.compile(r"^```(?P<language>\w+)(?P<info>[^\n]*)\n(?P<code>.*?)^```", re.MULTILINE | re.DOTALL)
FILE = re.compile(r"^(?:#|//) (?P<name>[\w.-]+\.(?:py|mjs|java|json)):")


def blocks(page: str) -> tuple[list[str], dict[str, str], list[str]]:
    """The page's Python snippets, its files (name -> text) and its shell blocks, in order."""
    python, files, shell = [], {}, []
    for match in BLOCK.finditer((TUTORIALS / page).read_text()):
        code, language = match["code"], match["language"]
        named = FILE.match(code)
        if named:
            files[named["name"]] = code
        elif language == "python" and "no-run" not in match["info"]:
            python.append(code)
        elif language == "bash":
            shell.append(code)
    return python, files, shell


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def run_tutorial(page: str, folder: Path, timeout: float = 600) -> str:
    """Run a tutorial's code in ``folder``; its shell's standard output."""
    python, files, shell = blocks(page)
    ports = {str(port): str(_free_port()) for port in (8000, 8001, 8002)}
    local = lambda text: re.sub("800[012]", lambda match: ports[match.group(0)], text)  # noqa: E731
    if python:
        script = folder / "_snippets.py"
        script.write_text("\n".join(local(code) for code in python))
        subprocess.run([sys.executable, script.name], cwd=folder, check=True, timeout=timeout, capture_output=True)
    for name, text in files.items():
        (folder / name).write_text(local(text))
    script = local("\n".join(shell)).replace("export DPDIST_CLONE=~/dpdist", f"export DPDIST_CLONE={ROOT}")
    bin_dir = str(Path(sys.executable).parent)  # the environment's python and dpdist, as `uv run` or an install gives
    env = {**os.environ, "PATH": bin_dir + os.pathsep + os.environ.get("PATH", "")}
    process = subprocess.Popen(["bash", "-euo", "pipefail", "-c", script], cwd=folder, env=env, text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:  # what it printed until then, to say where it waited
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        pytest.fail(f"{page} ran past {timeout} s:\n{out[-3000:]}\n{err[-3000:]}")
    finally:  # the services the script started in the background die with its session, whatever happened
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
    assert process.returncode == 0, f"{page} failed:\n{out[-3000:]}\n{err[-3000:]}"
    return out


def test_every_tutorial_is_listed_and_has_code():
    index = (TUTORIALS / "index.md").read_text()
    for page in sorted(path.name for path in TUTORIALS.glob("*.md") if path.name != "index.md"):
        assert f"({page})" in index, page
        python, files, shell = blocks(page)
        assert python or shell, page


def test_the_first_campaign_writes_a_device_in_each_language():
    python, files, shell = blocks("first-campaign.md")
    assert set(files) == {"device.py", "device.mjs", "Device.java"}
    script = "\n".join(shell)
    for step in ("dpdist serve", "campaign create", "python device.py", "node device.mjs", "java -cp",
                 "dpdist submit", "campaign estimate", "campaign close", "kill %1"):
        assert step in script, step


@pytest.mark.slow
def test_the_simulated_collection_runs_as_written(tmp_path):
    out = run_tutorial("simulated-collection.md", tmp_path)
    assert "not for publication" in out.lower() or "not private" in out.lower(), out


@pytest.mark.slow
def test_the_first_campaign_runs_as_written(tmp_path):
    from ops_support import required

    for program in ("node", "npm", "javac", "java"):
        required(program)
    out = run_tutorial("first-campaign.md", tmp_path)
    for device in ("python", "javascript", "java"):
        assert f"{device} device: 1 report counted" in out, out
    assert "5000 report(s) accepted" in out, out
    estimate = out.split("5000 report(s) accepted", 1)[1]
    for mode in ("bus", "bike", "car", "walk"):
        assert mode in estimate, out
    assert "5003" in estimate.replace(",", ""), out  # the three devices' reports and the crowd's
    assert "closed" in out


@pytest.mark.slow
def test_the_anonymous_campaign_runs_as_written(tmp_path):
    out = run_tutorial("anonymous-campaign.md", tmp_path, timeout=900)  # three services and 100 devices, at any load
    assert "100 devices sent their report to the relay" in out, out
    assert '"central": {' in out and '"local": {' in out and '"smallest_batch": 50' in out, out  # two batches of 50
    for mode in ("bus", "bike", "car", "walk"):
        assert mode in out.split('"assumptions"', 1)[1], out
    assert "closed" in out


@pytest.mark.slow
def test_the_central_release_runs_as_written(tmp_path):
    out = run_tutorial("central-release.md", tmp_path)
    assert "charged 1 of 3-DP (add-remove)" in out, out
    assert "PrivacyBudgetError" not in out and "refused" in out, out
