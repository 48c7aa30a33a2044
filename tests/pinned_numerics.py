"""The numerics the test suite pins before numpy loads, so that its numbers do not depend on the CPU.

The same pins as the reproduction runs (``dpdist.experiments._blas``): the OpenBLAS kernel
``Haswell`` and numpy's SIMD dispatch below AVX-512, on a Linux x86-64 CPU with AVX2 (variables
already set win).  Used by ``tests/conftest.py`` and ``clients/js/test/make_fixture.py`` (whose
fixture holds last bits of numpy's loops); it must run before anything imports numpy, so it
imports nothing of dpdist's.
"""

from __future__ import annotations

import os
import platform


#: one BLAS thread, as the reproduction workers have (``dpdist.experiments._blas.worker_environment``)
THREADS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def pin_numerics() -> None:
    """Set one BLAS thread, ``OPENBLAS_CORETYPE`` and ``NPY_DISABLE_CPU_FEATURES`` where they are not set (the
    last two on x86-64 with AVX2).

    One thread: the tests' matrices are small, and OpenBLAS's threads wait for work by spinning, so on 2 busy
    cores a threaded least-squares step cost 30 times the CPU of one thread (CP's matching pursuit: 2.4 CPU-s
    against 0.08; docs/reference/benchmarks/test-suite.md, "The test suite").  Subprocesses (servers, CLI runs) inherit it.
    """
    for name in THREADS:
        if not os.environ.get(name):
            os.environ[name] = "1"
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
