"""Type aliases of the public signatures (for annotations; nothing here runs).

``Seed`` is what every ``rng=`` takes (see :func:`dpdist._rng.check_rng`), ``PathLike`` a
file name, ``FloatBounds`` a closed interval ``(low, high)``; ``ArrayLike`` is NumPy's.
"""

from __future__ import annotations

import os
from typing import Union

import numpy as np
from numpy.typing import ArrayLike

__all__ = ["ArrayLike", "FloatBounds", "PathLike", "Seed"]

#: ``rng=``: an int seed, a SeedSequence, a Generator, or None (the CSPRNG where that is the default)
Seed = Union[int, np.random.SeedSequence, np.random.Generator, None]
#: a file name
PathLike = Union[str, "os.PathLike[str]"]
#: a closed interval ``(low, high)``
FloatBounds = tuple[float, float]
