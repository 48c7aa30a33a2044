"""Named experiment specs: ``dpdist reproduce NAME`` resolves NAME here.

Each paper's spec is a package of :mod:`dpdist.reproductions` defining ``SPEC`` (an
:class:`ExperimentSpec`), found by listing that folder (no package is imported until its
spec is asked for): the package ``sw_ems`` is the spec ``sw-ems``.  A NAME may also pick
one figure, ``paper:figure``, or be the path of a TOML spec.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from pathlib import Path

from ..errors import InvalidParameterError
from ._spec import ExperimentSpec, load_spec

__all__ = ["SPEC_MODULES", "available_specs", "get_spec", "SpecNotWrittenError"]

_PACKAGE = "dpdist.reproductions"


def _discover() -> dict[str, str]:
    """``{spec name: package}`` for every package of :mod:`dpdist.reproductions`, sorted by name.

    The folder is listed, not imported: the reproductions sit above the runner (each imports its
    claims library), and a spec's package is imported only when it is asked for.
    """
    spec = importlib.util.find_spec(_PACKAGE)
    folders = [] if spec is None or spec.submodule_search_locations is None else list(spec.submodule_search_locations)
    found = {
        info.name.replace("_", "-"): f"{_PACKAGE}.{info.name}"
        for info in pkgutil.iter_modules(folders)
        if info.ispkg and not info.name.startswith("_")
    }
    return dict(sorted(found.items()))


#: name -> package defining ``SPEC`` (papers 000 wavelet, 001 wiener,
#: 002 central, 003 sw-ems, 004 cp; ``toy`` exercises the runner).
SPEC_MODULES = _discover()


class SpecNotWrittenError(InvalidParameterError):
    """The NAME is listed in :data:`SPEC_MODULES` but its package cannot be found."""


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
