"""Which BLAS kernel computes a run's cells, pinned so that a run's numbers do not depend on the CPU.

numpy's OpenBLAS is built with ``DYNAMIC_ARCH``: at load time it picks the kernels for the
CPU it finds (``SkylakeX`` on a CPU with AVX-512, ``Haswell`` or ``Zen`` on one with AVX2,
...), and the kernels round differently (different blocking and FMA use).  Most cells do
not notice, but an iterative estimator amplifies the last bits: SW-EMS's EM on 1024 buckets
gives a decile error of 22.38 on the Haswell kernel and 22.63 on SkylakeX for the same cell and seed
(docs/experiments.md, "Determinism"; issue 32 item 5: nine explanations of the sw-ems page
differed in the 3rd-4th digit from an independent run of the same commit and seed, and the
page's numbers are exactly those of the Haswell/Zen kernels, the re-run's those of SkylakeX).

So the cells of a run are computed in worker processes whose environment pins the kernel
(``OPENBLAS_CORETYPE``, default :data:`PINNED_CORETYPE` on an x86-64 CPU that has AVX2; an
``OPENBLAS_CORETYPE`` you set yourself wins) and one BLAS thread.  The kernel is part of every
cell's cache key, each cell file records the kernel that computed it, and the report lists them.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import platform
import re
import sys

__all__ = ["PINNED_CORETYPE", "loaded_core", "target_core", "worker_environment", "pinned_environment"]

#: The kernel reproduction runs pin on x86-64 CPUs with AVX2: the one the published pages were
#: computed with (the Haswell and Zen kernels give the same numbers), runnable on every AVX2 CPU.
PINNED_CORETYPE = "Haswell"
_THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


@functools.cache
def loaded_core() -> str:
    """The kernel of the OpenBLAS numpy loaded in this process (e.g. ``"SkylakeX"``), else ``"unknown"``.

    Read from the library itself (``*openblas_get_corename*``), found among the mapped
    libraries of this process (Linux); ``"unknown"`` elsewhere or for another BLAS.
    """
    import numpy  # noqa: F401  (loads the BLAS)

    try:
        with open("/proc/self/maps") as handle:
            paths = sorted(set(re.findall(r"(/\S*openblas\S*\.so\S*)", handle.read())))
    except OSError:
        return "unknown"
    for path in paths:
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_get_corename64_", "scipy_openblas_get_corename", "openblas_get_corename64_",
                     "openblas_get_corename"):
            function = getattr(library, name, None)
            if function is not None:
                function.restype = ctypes.c_char_p
                value = function()
                return value.decode() if value else "unknown"
    return "unknown"


def _has_avx2() -> bool:
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    try:
        with open("/proc/cpuinfo") as handle:
            return any(line.startswith("flags") and " avx2" in line for line in handle)
    except OSError:
        return False


def target_core() -> str | None:
    """The kernel worker processes are pinned to: ``$OPENBLAS_CORETYPE`` if set, else
    :data:`PINNED_CORETYPE` on a Linux x86-64 CPU with AVX2, else None (not pinned)."""
    chosen = os.environ.get("OPENBLAS_CORETYPE")
    if chosen:
        return chosen
    return PINNED_CORETYPE if sys.platform.startswith("linux") and _has_avx2() else None


def worker_environment() -> dict[str, str]:
    """Environment variables a worker process needs for pinned BLAS: the kernel and one thread
    (only the variables not set already)."""
    env = {name: "1" for name in _THREADS if not os.environ.get(name)}
    core = target_core()
    if core and not os.environ.get("OPENBLAS_CORETYPE"):
        env["OPENBLAS_CORETYPE"] = core
    return env


@contextlib.contextmanager
def pinned_environment():
    """Set :func:`worker_environment` in ``os.environ`` while worker processes are started
    (a spawned process loads numpy, so its BLAS, with this environment); restore afterwards."""
    env = worker_environment()
    previous = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    try:
        yield env
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
