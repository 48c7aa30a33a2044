"""Reports over time, under the module's old name: the protocols are :mod:`.l_grr` (``l-grr``) and
:mod:`.l_osue` (``l-osue``), the device's memo and what they share :mod:`._longitudinal`."""

from ._longitudinal import MemoizedClient as MemoizedClient
from .l_grr import LGRR as LGRR
from .l_osue import LOSUE as LOSUE

__all__ = ["MemoizedClient"]
