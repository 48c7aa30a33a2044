"""Random number generators: seeded for simulation, cryptographically secure for clients.

``rng`` arguments across dpdist accept ``None`` (fresh OS entropy), an ``int`` seed,
a :class:`numpy.random.SeedSequence` or a :class:`numpy.random.Generator`
(SPEC 7).  Client-side randomizers also accept ``secure=True``: the randomness
then comes from AES-128 in counter mode (``randomgen.AESCounter``, hardware
AES-NI where the CPU has it), keyed from the operating system's CSPRNG, exposed
as an ordinary NumPy ``Generator`` so that every sampler is the same code in
both modes.
"""

from __future__ import annotations

import numbers

import numpy as np
from randomgen import AESCounter

from .errors import InvalidParameterError

__all__ = ["check_rng", "secure_generator", "random_words"]


def secure_generator() -> np.random.Generator:
    """A NumPy ``Generator`` backed by AES-CTR keyed from ``os.urandom``.

    The key is 128 bits drawn by ``SeedSequence()`` from the OS entropy pool;
    every call returns an independent stream.  Nothing about it can be seeded,
    by design: a reproducible stream is not secret.
    """
    return np.random.Generator(AESCounter())


def check_rng(rng=None, *, secure: bool = False, owner: str = "dpdist") -> np.random.Generator:
    """Resolve an ``rng`` argument to a ``numpy.random.Generator``.

    Parameters
    ----------
    rng : None, int, SeedSequence or Generator
        ``None`` gives a generator seeded from OS entropy; an ``int`` or
        ``SeedSequence`` seeds PCG64 (reproducible); a ``Generator`` is used as is.
    secure : bool
        Return a CSPRNG-backed generator (see :func:`secure_generator`).  A seed
        cannot be combined with ``secure=True``.
    owner : str
        Name used in error messages.
    """
    if secure:
        if rng is not None:
            raise InvalidParameterError(
                f"The 'rng' parameter of {owner} must be None when secure=True "
                f"(a seeded stream is not secret). Got {rng!r} instead."
            )
        return secure_generator()
    if rng is None or isinstance(rng, np.random.SeedSequence):
        return np.random.default_rng(rng)
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        if rng < 0:
            raise InvalidParameterError(
                f"The 'rng' parameter of {owner} must be a non-negative int seed. Got {rng!r} instead."
            )
        return np.random.default_rng(int(rng))
    raise InvalidParameterError(
        f"The 'rng' parameter of {owner} must be None, a non-negative int, a "
        f"numpy.random.SeedSequence or a numpy.random.Generator. Got {rng!r} instead."
    )



def random_words(rng: np.random.Generator, count: int) -> np.ndarray:
    """``count`` independent uniform 64-bit words (to be viewed as bytes or 32-bit halves).

    Uses ``Generator.integers`` over the full uint64 range, which is correct for any
    bit generator (``bit_generator.random_raw`` is only 32 bits wide for some, e.g.
    MT19937) and as fast as the raw stream for 64-bit ones.
    """
    return rng.integers(0, np.iinfo(np.uint64).max, size=count, dtype=np.uint64, endpoint=True)
