"""A headless Chromium for the browser tests, and the programs they need (node, chromium).

``required(program, *candidates)`` is the path of the first of those programs on PATH; without any, a test
skips, except under CI, where a missing program fails (.ci/run installs them). ``chromium`` is a fixture:
a fresh headless Chromium per test with its own profile (so its own localStorage: the device's ledger),
yielding its DevTools port.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import httpx
import pytest
from serve_support import free_port


def required(program: str, *candidates: str) -> str:
    for name in (program, *candidates):
        path = shutil.which(name)
        if path:
            return path
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"{program} is not installed, and CI is set: .ci/run installs it.")
    pytest.skip(f"{program} is not installed")



@pytest.fixture
def chromium(tmp_path_factory):
    """A fresh headless Chromium per test: its own profile, so its own localStorage (the device's ledger)."""
    binary = required("chromium", "chromium-browser", "google-chrome")
    port = free_port()
    profile = tmp_path_factory.mktemp("chromium-profile")
    process = subprocess.Popen(
        [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--remote-debugging-port={port}",
         "--remote-debugging-address=127.0.0.1", f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/json/version", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail("headless Chromium did not open its DevTools port")
    yield port
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
