r"""Heavy hitters of an unknown domain, simulated: :func:`heavy_hitters`.

The method, PEM (Wang et al., IEEE TDSC 2021, sec. V), and its privacy are the
protocol ``pem`` (:mod:`dpdist.local.frequency.pem`), which a deployment runs
on devices and a collector; :func:`heavy_hitters` simulates one collection with
it.  Words are encoded by :mod:`dpdist.local.words`; the result is a
:class:`~dpdist.estimates.HeavyHitters`.
"""

from __future__ import annotations

import numpy as np

from .._rng import check_rng
from ..errors import InvalidParameterError, InvalidValueTypeError
from ..estimates import HeavyHitters
from .frequency.pem import PEM
from .words import StringCodec
from .._types import ArrayLike, Seed

__all__ = ["heavy_hitters"]


def heavy_hitters(values: ArrayLike, epsilon: float, *, k: int = 10, bits: int | None = None, step: int | None = None,
                  alphabet: str | None = None, max_chars: int = 12, codec: StringCodec | None = None,
                  hash_count: int = 4096, rng: Seed = None) -> HeavyHitters:
    r"""Find the ``k`` most frequent items with PEM under ``epsilon``-LDP (simulated collection).

    The same protocol a deployment runs (``local.make("pem", ...)``,
    :class:`~dpdist.local.frequency.pem.PEM`): its exact aggregate sampler
    draws the groups' FLH tables, then its estimator runs the rounds.

    Parameters
    ----------
    values : array of int or sequence of str
        The users' items: integers in ``[0, 2**bits)``, or words (then encoded
        with :func:`encode_strings`, ``alphabet`` and ``max_chars``).
    epsilon : float
        Each user's budget (one report per user).
    k : int
        Number of heavy hitters to return (1..4096).
    bits : int, optional
        Item length :math:`L` in bits (1..62); required for integer values
        unless ``codec`` is given.
    codec : StringCodec, optional
        For integer values that are encoded words (:func:`encode_strings`):
        prunes impossible candidates and decodes the result.
    step : int, optional
        Bits added per round :math:`\eta`; default the paper's rule of thumb,
        so that :math:`k 2^\eta \le 4096` candidates per round (at most 8).
    hash_count : int
        Size :math:`S` of FLH's public family (default 4096): each round costs
        :math:`O(n_i + S |C_i|)`; the family's bias has mean square about
        :math:`\lVert f\rVert_2^2/(S(g-1))` (``flh``).
    rng : seed or Generator, optional
        Randomness of the group split and of every report; default the CSPRNG.

    Returns
    -------
    HeavyHitters
        Items (and their words, for strings) with the frequencies estimated
        in the last round and their standard errors, and ``details["rounds"]``:
        prefix length, group size and number of candidates of each round.
    """
    array = np.asarray(values)
    if array.dtype.kind in "USO":
        params = {"alphabet": alphabet or StringCodec.alphabet, "max_chars": max_chars}
    elif codec is not None:
        params = {"alphabet": codec.alphabet, "max_chars": codec.max_chars}
    else:
        if array.ndim != 1 or array.dtype.kind not in "iu":
            raise InvalidValueTypeError(
                f"The 'values' argument of heavy_hitters must be a 1-D array of integers or a sequence of "
                f"strings. Got dtype {array.dtype} and shape {array.shape}."
            )
        if bits is None:
            raise InvalidParameterError("heavy_hitters needs 'bits' (the item length) for integer values, or a 'codec'.")
        params = {"bits": bits}
    if array.size == 0:
        raise InvalidParameterError("heavy_hitters needs at least one value.")
    protocol = PEM(epsilon=epsilon, k=k, step=step, hash_count=hash_count, **params)
    return protocol.estimate(protocol.simulate(array, rng=check_rng(rng, owner="heavy_hitters")))
