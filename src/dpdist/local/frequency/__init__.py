"""Categorical frequency oracles; every public module here registers its protocol on import."""

from .._autoload import import_submodules

import_submodules(__name__, __path__)
