"""Data files shipped in npm packages, installed once outside Python, read offline.

Some public data at the papers' scale ship only in npm packages (for example the 3
million BTS flights of ``vega-datasets``).  dpdist does not download them at run time:
they are installed once with npm into a fixed prefix,

    npm install --no-save --prefix ~/.cache/dpdist/npm vega-datasets@3.2.1

(``.ci/run`` does this in CI), and read from ``<prefix>/node_modules/<package>``.  The
prefix is ``$DPDIST_NPM_PREFIX`` when that variable is set and ``~/.cache/dpdist/npm``
otherwise.

A parsed column is cached as a ``.npy`` file under ``<prefix>/dpdist-cache/`` (named by
the package version and the source file's size and modification time), so only the
first load parses the source file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

import numpy as np

from .._io._atomic import atomic_writer
from ..errors import DatasetUnavailableError

__all__ = ["NPM_PREFIX_VARIABLE", "DEFAULT_NPM_PREFIX", "npm_prefix", "npm_package_directory", "cached_column"]

NPM_PREFIX_VARIABLE = "DPDIST_NPM_PREFIX"
DEFAULT_NPM_PREFIX = "~/.cache/dpdist/npm"


def npm_prefix() -> Path:
    """The npm prefix dpdist reads packages from: ``$DPDIST_NPM_PREFIX`` or ``~/.cache/dpdist/npm``."""
    return Path(os.environ.get(NPM_PREFIX_VARIABLE) or DEFAULT_NPM_PREFIX).expanduser()


def _install_command(package: str, version: str) -> str:
    return f"npm install --no-save --prefix {npm_prefix()} {package}@{version}"


def npm_package_directory(package: str, version: str, dataset: str) -> Path:
    """Folder of the npm package ``package`` at exactly ``version`` under :func:`npm_prefix`.

    Parameters
    ----------
    package : str
        npm package name, e.g. ``"vega-datasets"``.
    version : str
        The version whose files the dataset's row counts and provenance describe.
    dataset : str
        Name of the dataset that needs it (for the error message).

    Raises
    ------
    DatasetUnavailableError
        The package is absent, or installed at another version; the message gives the
        exact npm command that installs the right one.
    """
    folder = npm_prefix() / "node_modules" / package
    manifest = folder / "package.json"
    if not manifest.is_file():
        raise DatasetUnavailableError(
            f"The dataset {dataset!r} needs the npm package '{package}@{version}', which is not installed "
            f"under {folder} (set {NPM_PREFIX_VARIABLE} to use another npm prefix). "
            f"Install it with: {_install_command(package, version)}"
        )
    try:
        installed = json.loads(manifest.read_text()).get("version")
    except (OSError, ValueError):
        installed = None
    if installed != version:
        raise DatasetUnavailableError(
            f"The dataset {dataset!r} needs the npm package '{package}' at version {version}. "
            f"Got version {installed!r} under {folder}. Install it with: {_install_command(package, version)}"
        )
    return folder


def cached_column(source: Path, key: str, parse: Callable[[Path], np.ndarray]) -> np.ndarray:
    """``parse(source)``, cached as ``<prefix>/dpdist-cache/<key>-<size>-<mtime>.npy``.

    The cache is written atomically (a temporary file renamed into place); when the cache
    folder cannot be written the column is parsed on every first load of a process.
    """
    status = source.stat()
    cache = npm_prefix() / "dpdist-cache" / f"{key}-{status.st_size}-{status.st_mtime_ns}.npy"
    if cache.is_file():
        try:
            return np.load(cache, allow_pickle=False)
        except (OSError, ValueError):  # a damaged cache file is rebuilt below
            pass
    values = np.ascontiguousarray(parse(source))
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        with atomic_writer(cache) as handle:
            np.save(handle, values, allow_pickle=False)
    except OSError:
        pass
    return values
