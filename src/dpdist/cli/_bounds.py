"""Numbers of a data column within public bounds: clipped to them (wrapped around them on a circle) and counted, or
refused (``--no-clip``)."""

from __future__ import annotations

import numpy as np

from .._validation import clip_real_values, wrap_real_values
from ..errors import OutOfDomainError

__all__ = ["values_in_bounds"]


def values_in_bounds(values, bounds, *, clip: bool, column: str, where: str, wrap: bool = False) -> tuple[np.ndarray, int]:
    """``(values, moved)``: numbers of ``column`` clipped into ``bounds`` (``clip``; ``wrap``: wrapped around them, the
    bounds being one period of a circle), or refused when one is outside.

    ``column`` names the column in the message ("'age'"), ``where`` the bounds ("the bounds of the config").
    """

    if clip:
        return (wrap_real_values if wrap else clip_real_values)(values, bounds, owner=f"the column {column}")
    values = np.asarray(values, dtype=np.float64)
    outside = ~((values >= bounds[0]) & (values <= bounds[1]))
    if outside.any():
        raise OutOfDomainError(
            f"The column {column} must lie in {where} [{bounds[0]:g}, {bounds[1]:g}] with --no-clip. "
            f"Got {int(outside.sum())} value(s) outside (not shown: they are data; without --no-clip they are "
            f"{'wrapped around the circle' if wrap else 'clipped to the nearest bound'})."
        )
    return values, 0
