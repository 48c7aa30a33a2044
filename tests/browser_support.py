"""The browser tests' Chromium as a pytest fixture, and the programs they need (node, chromium).

``required(program, *candidates)`` (from ``ops_support``) is the path of the first of those programs on PATH;
without any, a test skips, except under CI, where a missing program fails (.ci/run installs them). ``chromium`` is
a fixture: a fresh headless Chromium per test (``ops_support.chromium_devtools``: its own profile, so its own
localStorage -- the device's ledger -- in its own process group, stopped and its profile removed after the test),
yielding its DevTools port.
"""

from __future__ import annotations

import pytest
from ops_support import chromium_devtools, required

__all__ = ["chromium", "required"]


@pytest.fixture
def chromium():
    """A fresh headless Chromium per test, its DevTools port on 127.0.0.1."""
    with chromium_devtools() as port:
        yield port
