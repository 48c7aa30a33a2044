"""Categorical frequency oracles (importing this package registers them)."""

from .grr import GRR
from .oue import OUE

__all__ = ["GRR", "OUE"]
