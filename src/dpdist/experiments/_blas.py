"""The numerics a run's cells are computed with, pinned so that a run's numbers do not depend on the CPU.

Two libraries pick their code for the CPU at load time, and the choices round differently:

* numpy's OpenBLAS is built with ``DYNAMIC_ARCH``: it picks the kernels for the CPU it finds
  (``SkylakeX`` on a CPU with AVX-512, ``Haswell`` or ``Zen`` on one with AVX2, ...), which
  differ in blocking and FMA use.  An iterative estimator amplifies the last bits: SW-EMS's EM on
  1024 buckets gives a decile error of 22.38 on the Haswell kernel and 22.63 on SkylakeX for the
  same cell and seed (docs/explanation/verdicts.md, "Determinism": nine explanations of
  the sw-ems page differed in the 3rd-4th digit from an independent run of the same commit and
  seed; the page's numbers were those of the Haswell/Zen kernels, the re-run's those of SkylakeX).
* numpy dispatches its own ufunc loops to the highest SIMD level the CPU has (``X86_V3``, i.e.
  AVX2, or ``X86_V4`` / ``AVX512_ICL`` on an AVX-512 CPU), and e.g. its AVX-512 ``exp``/``log``
  loops round differently: the general-wave (GW) cells of sw-ems change in the 7th digit
  between an AVX-512 and an AVX2 dispatch, with OpenBLAS pinned.

So the cells of a run are computed in worker processes whose environment pins both: the OpenBLAS
kernel (``OPENBLAS_CORETYPE``, default :data:`PINNED_CORETYPE`) and numpy's dispatch capped at AVX2
(``NPY_DISABLE_CPU_FEATURES`` lists the AVX-512 targets of this numpy), on a Linux x86-64 CPU
that has AVX2; and one BLAS thread.  Variables you set yourself win.  The numerics
(:func:`loaded_numerics`, e.g. ``"Haswell+X86_V3"``) are part of every cell's cache key, each cell
file records the numerics that computed it, and the report lists them.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import platform
import re
import sys

__all__ = ["PINNED_CORETYPE", "loaded_core", "loaded_simd", "loaded_numerics", "target_core", "target_numerics",
           "worker_environment", "pinned_environment"]

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
    import numpy  # noqa: F401  # lazy: loads the BLAS; this module is read before numpy, to pin its kernel

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


def _dispatch() -> tuple[list, dict]:
    """numpy's SIMD dispatch targets (lowest first) and which of them this process may use."""
    try:
        from numpy._core._multiarray_umath import (  # type: ignore[import-not-found]  # lazy: numpy's private module, tried
            __cpu_dispatch__,
            __cpu_features__,
        )
    except ImportError:  # pragma: no cover - another numpy layout
        return [], {}
    return list(__cpu_dispatch__), dict(__cpu_features__)


def _wide(target: str) -> bool:
    """An AVX-512 dispatch target (numpy 2.4 names them ``X86_V4``, ``AVX512_ICL``, ...)."""
    return target == "X86_V4" or target.startswith("AVX512")


@functools.cache
def loaded_simd() -> str:
    """The highest SIMD target numpy dispatches its loops to in this process (e.g. ``"X86_V3"``), or
    ``"baseline"`` when it uses none beyond the build's baseline."""
    targets, enabled = _dispatch()
    active = [t for t in targets if enabled.get(t)]
    return active[-1] if active else "baseline"


def loaded_numerics() -> str:
    """``"<BLAS kernel>+<numpy SIMD target>"`` of this process, e.g. ``"Haswell+X86_V3"``."""
    return f"{loaded_core()}+{loaded_simd()}"


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


def _simd_to_disable() -> list[str]:
    """The AVX-512 dispatch targets of this numpy that worker processes switch off (none when
    ``$NPY_DISABLE_CPU_FEATURES`` is set: yours wins, and this process has it too)."""
    if os.environ.get("NPY_DISABLE_CPU_FEATURES") or target_core() is None:
        return []
    return [t for t in _dispatch()[0] if _wide(t)]


def target_numerics() -> str | None:
    """The numerics worker processes compute with (:func:`loaded_numerics` of a pinned worker),
    or None when not pinned: the pinned kernel and numpy's highest dispatch target below AVX-512."""
    core = target_core()
    if core is None:
        return None
    targets, enabled = _dispatch()
    off = set(_simd_to_disable())
    active = [t for t in targets if enabled.get(t) and t not in off]
    return f"{core}+{active[-1] if active else 'baseline'}"


def worker_environment() -> dict[str, str]:
    """Environment variables a worker process needs for pinned numerics: the kernel, numpy's
    dispatch below AVX-512 and one BLAS thread (only the variables not set already)."""
    env = {name: "1" for name in _THREADS if not os.environ.get(name)}
    core = target_core()
    if core and not os.environ.get("OPENBLAS_CORETYPE"):
        env["OPENBLAS_CORETYPE"] = core
    disable = _simd_to_disable()
    if disable:
        env["NPY_DISABLE_CPU_FEATURES"] = " ".join(disable)
    return env


@contextlib.contextmanager
def pinned_environment():
    """Set :func:`worker_environment` in ``os.environ`` while worker processes are started
    (a spawned process loads numpy, so its BLAS and its dispatch, with this environment); restore afterwards."""
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
