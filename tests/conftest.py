"""Fixtures shared by several test files."""

from __future__ import annotations

import os
import platform
import socket


def _pin_blas_kernel() -> None:
    """Load numpy's OpenBLAS with the kernel reproduction runs pin (dpdist.experiments._blas), before
    anything imports numpy: run_spec then computes jobs=1 cells in this process (a worker process
    would not see the methods a test registers) with the same numbers as its pinned workers."""
    if platform.machine().lower() not in ("x86_64", "amd64") or os.environ.get("OPENBLAS_CORETYPE"):
        return
    try:
        with open("/proc/cpuinfo") as handle:
            if any(line.startswith("flags") and " avx2" in line for line in handle):
                os.environ["OPENBLAS_CORETYPE"] = "Haswell"
    except OSError:
        pass


_pin_blas_kernel()

import pytest


@pytest.fixture
def no_network(monkeypatch):
    """Fail any attempt to open a network connection (datasets must come from packages or the repo)."""

    def refuse(*args, **kwargs):
        raise AssertionError("a dataset tried to open a network connection")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Each test's own cache directory: `dpdist submit --column` keeps its journals there (never in ~/.cache)."""
    monkeypatch.setenv("DPDIST_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
