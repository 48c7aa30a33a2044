"""Named experiment specs: ``dpdist reproduce NAME`` resolves NAME here.

Each paper's spec lives in its own module of this package, which defines ``SPEC`` (an
:class:`ExperimentSpec`).  A NAME may also pick one figure, ``paper:figure``, or be the
path of a TOML spec.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

from ..errors import InvalidParameterError
from ._spec import ExperimentSpec, load_spec

__all__ = ["SPEC_MODULES", "available_specs", "get_spec", "SpecNotWrittenError"]

#: name -> module defining ``SPEC`` (papers in /shared/papers: 000 wavelet, 001 wiener,
#: 002 central, 003 sw-ems, 004 cp).
SPEC_MODULES = {
    "toy": "dpdist.experiments.toy",
    "wavelet": "dpdist.experiments.wavelet",
    "wiener": "dpdist.experiments.wiener",
    "central": "dpdist.experiments.central",
    "sw-ems": "dpdist.experiments.sw_ems",
    "cp": "dpdist.experiments.compressive",
}


class SpecNotWrittenError(InvalidParameterError):
    """The NAME is a known paper whose spec module does not exist yet."""


def _module_exists(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def available_specs() -> dict[str, bool]:
    """Every known spec name and whether its spec is written."""

    return {name: _module_exists(module) for name, module in SPEC_MODULES.items()}


def get_spec(name: str) -> ExperimentSpec:
    """The spec named ``name`` (``paper``, ``paper:figure`` or a path to a ``.toml`` file)."""

    if name.endswith(".toml") or Path(name).is_file():
        return load_spec(name)
    paper, _, figure = name.partition(":")
    if paper not in SPEC_MODULES:
        raise InvalidParameterError(_unknown_message(name))
    if not _module_exists(SPEC_MODULES[paper]):
        raise SpecNotWrittenError(
            f"The experiment spec {paper!r} is not written yet (module {SPEC_MODULES[paper]}). "
            + _listing()
        )
    spec = importlib.import_module(SPEC_MODULES[paper]).SPEC
    return spec.for_figure(figure) if figure else spec


def _listing() -> str:
    names = available_specs()
    ready = [n for n, ok in names.items() if ok]
    planned = [n for n, ok in names.items() if not ok]
    return f"Available: {', '.join(ready) or 'none'}; not written yet: {', '.join(planned) or 'none'}."


def _unknown_message(name: str) -> str:
    return (
        f"The NAME argument of reproduce must be a spec name, 'name:figure' or a path to a .toml spec. "
        f"Got {name!r} instead. " + _listing()
    )
