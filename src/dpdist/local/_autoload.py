"""Import every public module of a protocol package so that its ``@register`` runs."""

from __future__ import annotations

import importlib
import pkgutil


def import_submodules(package_name: str, package_path) -> None:
    for module in pkgutil.iter_modules(package_path):
        if not module.name.startswith("_"):
            importlib.import_module(f"{package_name}.{module.name}")
