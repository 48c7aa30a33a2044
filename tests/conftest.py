"""Fixtures shared by several test files."""

from __future__ import annotations

import os
import platform
import socket


def _pin_numerics() -> None:
    """Load numpy with the numerics reproduction runs pin (dpdist.experiments._blas: the OpenBLAS
    kernel and numpy's SIMD dispatch below AVX-512), before anything imports numpy: every test then
    computes the same numbers on any AVX2 CPU, and run_spec computes jobs=1 cells in this process
    (a worker process would not see the methods a test registers) with the numbers of its pinned
    workers."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return
    try:
        with open("/proc/cpuinfo") as handle:
            avx2 = any(line.startswith("flags") and " avx2" in line for line in handle)
    except OSError:
        return
    if avx2 and not os.environ.get("OPENBLAS_CORETYPE"):
        os.environ["OPENBLAS_CORETYPE"] = "Haswell"
    if avx2 and not os.environ.get("NPY_DISABLE_CPU_FEATURES") and _numpy_version() >= (2, 4):
        # the AVX-512 dispatch targets of numpy >= 2.4 (the version uv.lock pins; a name numpy does
        # not dispatch to stops its import, and older versions name them differently)
        os.environ["NPY_DISABLE_CPU_FEATURES"] = "X86_V4 AVX512_ICL AVX512_SPR"


def _numpy_version() -> tuple[int, ...]:
    from importlib.metadata import version

    return tuple(int(part) for part in version("numpy").split(".")[:2] if part.isdigit())


_pin_numerics()

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
