r"""One pair per user: PCKV's Padding-and-Sampling and PrivKV's key drawn from the whole domain.

Both return, for each user, the key that the report is about and the value discretized to
:math:`v^* \in \{1, -1\}` (``+1`` with probability :math:`(1 + v)/2`, so that :math:`E[v^*] = v`):
the first step of PCKV's perturbation (Gu et al. 2020, Algorithms 2 and 3, line 1) and of PrivKV's
value perturbation primitive VPM (Ye et al. 2019).  Every user makes the same draws whatever their
set holds: one uniform integer below a bound, one dummy key, one discretization coin.
"""

from __future__ import annotations

import numpy as np

from ._sets import KeyValueSets

__all__ = ["discretize", "pad_and_sample", "sample_domain_key"]


def discretize(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """:math:`v^* = 1` with probability :math:`(1 + v)/2`, else :math:`-1` (int8)."""
    return np.where(rng.random(values.shape[0]) < (1.0 + values) / 2.0, 1, -1).astype(np.int8)


def _offsets(sets: KeyValueSets) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(sets.lengths)[:-1]]).astype(np.int64) if len(sets) else np.zeros(0, np.int64)


def pad_and_sample(sets: KeyValueSets, domain_size: int, padding_length: int, rng: np.random.Generator):
    r"""Padding-and-Sampling (Gu et al. 2020, Algorithm 1): each user's sampled key and discretized value.

    A set :math:`S` with :math:`|S| < \ell` is padded with :math:`\ell - |S|` distinct dummy pairs
    :math:`\langle d + j, 0\rangle` of the :math:`\ell` dummy keys, and one pair of the padded set is
    picked uniformly: a real pair with probability :math:`\eta = |S| / \max(|S|, \ell)`, each dummy key
    with probability :math:`(1 - \eta)/\ell` (by symmetry of the random padding).  Drawn as one uniform
    index below :math:`\max(|S|, \ell)` (the real pair it names, if below :math:`|S|`) and one uniform
    dummy key.

    Returns
    -------
    keys : int64 array
        The sampled key of each user, in :math:`[0, d + \ell)` (:math:`\ge d`: a dummy key).
    signs : int8 array
        The discretized value :math:`v^*` (a dummy's value 0 gives :math:`\pm 1` with probability 1/2).
    """
    n = len(sets)
    lengths = sets.lengths
    index = rng.integers(0, np.maximum(lengths, padding_length), size=n, dtype=np.int64)
    dummy = domain_size + rng.integers(0, padding_length, size=n, dtype=np.int64)
    real = index < lengths
    at = _offsets(sets) + np.where(real, index, 0)
    has_pairs = lengths > 0
    keys = dummy.copy()
    values = np.zeros(n)
    chosen = real & has_pairs
    keys[chosen] = sets.keys[at[chosen]]
    values[chosen] = sets.values[at[chosen]]
    return keys, discretize(values, rng)


def sample_domain_key(sets: KeyValueSets, domain_size: int, rng: np.random.Generator):
    """PrivKV's sampling (Ye et al. 2019): a key uniform on the whole domain, whether the user holds it, its v*.

    Returns ``(keys, held, signs)``; ``signs`` is the discretized value where ``held`` (and a
    discretized 0, a fair sign, elsewhere: PrivKV reports a fake value uniform on [-1, 1] there).
    """
    n = len(sets)
    keys = rng.integers(0, domain_size, size=n, dtype=np.int64)
    users = np.repeat(np.arange(n), sets.lengths)
    match = sets.keys == keys[users]
    held = np.zeros(n, dtype=bool)
    held[users[match]] = True
    values = np.zeros(n)
    values[users[match]] = sets.values[match]
    return keys, held, discretize(values, rng)
