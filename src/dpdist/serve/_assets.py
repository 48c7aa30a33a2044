"""Where ``dpdist serve`` finds the JavaScript client and the participation page.

An installed wheel carries them as package data in ``dpdist/serve/_clients_js/``
(``src/`` and ``participate.html``, copied from ``clients/js/`` at build time by
hatch's ``force-include``, see ``pyproject.toml``); a source checkout (an
editable install, the tests) has no such directory and uses ``clients/js/`` of
the checkout itself.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["clients_js_dir"]

_PACKAGED = "_clients_js"
_SOURCE_TREE = Path(__file__).resolve().parents[3] / "clients" / "js"


def clients_js_dir() -> Path:
    """The directory holding ``participate.html`` and ``src/`` (the packaged copy first, else the source tree's)."""
    try:
        packaged = resources.files("dpdist.serve") / _PACKAGED
        if packaged.is_dir() and (packaged / "participate.html").is_file():
            return Path(str(packaged))  # a wheel installs package data as plain files
    except (ModuleNotFoundError, NotADirectoryError, TypeError):  # pragma: no cover - e.g. a zip import
        pass
    return _SOURCE_TREE
