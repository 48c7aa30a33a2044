"""Where ``dpdist serve`` finds the JavaScript client and the participation page: package data of ``dpdist.serve``.

``dpdist/serve/_clients_js/`` holds ``participate.html`` and ``src/`` (the
client's ES modules).  In a source checkout it is a link to ``clients/js/``; the
wheel carries a copy of those two entries (``pyproject.toml``).  Either way it is
found through :mod:`importlib.resources`, as the package's own data.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

__all__ = ["clients_js_dir"]


def clients_js_dir() -> Path:
    """The directory holding ``participate.html`` and ``src/`` (a plain directory of the installed package)."""
    return Path(str(resources.files("dpdist.serve") / "_clients_js"))
