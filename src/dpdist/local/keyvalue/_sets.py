r"""Sets of key-value pairs, one per user: the input of the key-value protocols, checked once.

A batch of ``n`` users' sets is held as flat arrays: every user's keys and values one user after
another (``keys``, ``values``) and each user's number of pairs (``lengths``), so that sampling one
pair per user is a few vectorized operations whatever the sizes of the sets.  The same batch may be
given as a dense ``(n, d)`` array, NaN where a user does not hold a key (the form of a small batch
and of the conformance kit's inputs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

import numpy as np

from ..._validation import NOT_SHOWN, refused_values
from ...errors import InvalidValueTypeError, OutOfDomainError

__all__ = ["KeyValueSets", "check_sets"]


@dataclass(frozen=True, repr=False)
class KeyValueSets:
    """``n`` users' sets of (key, value) pairs, as flat arrays.

    Parameters
    ----------
    keys : array of int
        Every user's keys, user 0's first (``lengths[0]`` of them), then user 1's, ...
    values : array of float
        The value of each pair, in :math:`[-1, 1]`.
    lengths : array of int
        How many pairs each user holds (0 for a user with none: such a user still reports).
    """

    keys: np.ndarray
    values: np.ndarray
    lengths: np.ndarray

    def __len__(self) -> int:
        return int(np.asarray(self.lengths).shape[0])

    def __getitem__(self, users: slice) -> "KeyValueSets":
        """The sets of a contiguous range of users (``sets[start:stop]``)."""
        if not isinstance(users, slice) or users.step not in (None, 1):
            raise InvalidValueTypeError(f"KeyValueSets takes a slice of users with step 1. Got {users!r}.")
        start, stop, _ = users.indices(len(self))
        stop = max(start, stop)
        ends = np.concatenate([[0], np.cumsum(self.lengths)])
        first, last = int(ends[start]), int(ends[stop])
        return KeyValueSets(self.keys[first:last], self.values[first:last], self.lengths[start:stop])

    def __repr__(self) -> str:
        return f"KeyValueSets(users={len(self)}, pairs={int(np.asarray(self.keys).shape[0])})"

    @classmethod
    def from_pairs(cls, sets: Iterable[Any]) -> "KeyValueSets":
        """From one collection of pairs per user: a dict ``{key: value}`` or a list of ``(key, value)``.

        A convenience for small batches (it loops over the users once); large batches build the
        flat arrays directly.
        """
        keys: list = []
        values: list = []
        lengths: list = []
        for index, user in enumerate(sets):
            try:
                pairs = list(user.items()) if isinstance(user, dict) else list(user)
            except TypeError:
                raise InvalidValueTypeError(
                    f"The 'values' argument of KeyValueSets.from_pairs must hold one dict or list of (key, value) pairs "
                    f"per user. Got a value of type {type(user).__name__} for user {index} ({NOT_SHOWN})."
                ) from None
            lengths.append(len(pairs))
            for pair in pairs:
                if not hasattr(pair, "__len__") or len(pair) != 2:
                    raise InvalidValueTypeError(
                        f"The 'values' argument of KeyValueSets.from_pairs must hold (key, value) pairs. Got a value "
                        f"of type {type(pair).__name__} for user {index} ({NOT_SHOWN})."
                    )
                keys.append(pair[0])
                values.append(pair[1])
        bad = next((v for v in values if not isinstance(v, (int, float, np.integer, np.floating))), _NONE)
        if bad is not _NONE:  # a string, None, a list...: numpy would raise a bare ValueError or read None as NaN
            raise InvalidValueTypeError(
                f"The 'values' argument of KeyValueSets.from_pairs must hold real numbers as values (in [-1, 1]). "
                f"Got a value of type {type(bad).__name__} ({NOT_SHOWN})."
            )
        return cls(np.asarray(keys), np.asarray(values, dtype=np.float64), np.asarray(lengths, dtype=np.int64))

    def to_dense(self, domain_size: int) -> np.ndarray:
        """The ``(n, domain_size)`` array of values, NaN where a user does not hold a key."""
        dense = np.full((len(self), int(domain_size)), np.nan)
        users = np.repeat(np.arange(len(self)), np.asarray(self.lengths, dtype=np.int64))
        dense[users, np.asarray(self.keys, dtype=np.int64)] = self.values
        return dense


_NONE = object()  # no bad value found (None itself is one)


def _from_dense(array: np.ndarray, domain_size: int, owner: str) -> KeyValueSets:
    if array.ndim != 2 or array.shape[1] != domain_size:
        raise InvalidValueTypeError(
            f"The 'values' argument of {owner} must be a KeyValueSets or a 2-D array of shape (n, {domain_size}) "
            f"(user u's value of key k at [u, k], NaN where u does not hold k). Got shape {array.shape} instead."
        )
    held = ~np.isnan(array)
    users, keys = np.nonzero(held)  # row-major: each user's pairs together, in key order
    lengths = np.bincount(users, minlength=array.shape[0]).astype(np.int64, copy=False)  # held.sum(axis=1), faster
    return KeyValueSets(keys.astype(np.int64, copy=False), array[users, keys], lengths)


def check_sets(values: Any, domain_size: int, owner: str) -> KeyValueSets:
    """The checked batch: int64 keys in ``[0, d)``, distinct within each user, finite values in [-1, 1].

    Raises
    ------
    InvalidValueTypeError
        Naming ``values``, for a batch that is not sets of pairs (wrong shape, lengths, dtype).
    OutOfDomainError
        Naming ``values``, for a key outside the domain, a key twice in one set or a value outside [-1, 1].
    """
    fresh = not isinstance(values, KeyValueSets)  # arrays built here, not the caller's: no copies needed
    if fresh:
        array = np.asarray(values)
        if array.ndim == 1 and array.size == 0:
            array = array.reshape(0, domain_size)
        if array.dtype.kind not in "fiub":
            raise InvalidValueTypeError(
                f"The 'values' argument of {owner} must hold numbers (NaN where a key is not held). "
                f"Got dtype {array.dtype} instead."
            )
        values = _from_dense(array.astype(np.float64, copy=False), domain_size, owner)
    keys = np.asarray(values.keys)
    pair_values = np.asarray(values.values)
    lengths = np.asarray(values.lengths)
    if keys.ndim != 1 or pair_values.ndim != 1 or lengths.ndim != 1 or keys.shape != pair_values.shape:
        raise InvalidValueTypeError(
            f"The 'values' argument of {owner}: keys and values must be 1-D arrays of one length and lengths 1-D. "
            f"Got shapes {keys.shape}, {pair_values.shape} and {lengths.shape}."
        )
    for name, array in (("keys", keys), ("lengths", lengths)):
        if array.dtype.kind in "iu":  # integers are whole numbers
            continue
        if array.size and (array.dtype.kind != "f" or not np.all(np.isfinite(array)) or np.any(array != np.floor(array))):
            raise InvalidValueTypeError(f"The 'values' argument of {owner}: {name} must be whole numbers. Got dtype "
                                        f"{array.dtype}, or numbers that are not whole ({NOT_SHOWN}).")
    if pair_values.size and pair_values.dtype.kind not in "iuf":
        raise InvalidValueTypeError(f"The 'values' argument of {owner}: values must be numbers. Got dtype {pair_values.dtype}.")
    keys = keys.astype(np.int64, copy=not fresh)
    lengths = lengths.astype(np.int64, copy=not fresh)
    if np.any(lengths < 0) or int(lengths.sum()) != keys.shape[0]:
        raise InvalidValueTypeError(
            f"The 'values' argument of {owner}: lengths must be >= 0 and sum to the number of pairs {keys.shape[0]}. "
            f"Got lengths summing to {int(lengths.sum())}."
        )
    outside = (keys < 0) | (keys >= domain_size)
    if outside.any():
        raise refused_values(OutOfDomainError, f"The 'values' argument of {owner} must hold keys in [0, {domain_size})",
                             int(np.count_nonzero(outside)), "that are keys outside it")
    pair_values = pair_values.astype(np.float64, copy=not fresh)
    bad = ~(np.abs(pair_values) <= 1.0)  # NaN and infinities too
    if bad.any():
        raise refused_values(OutOfDomainError, f"The 'values' argument of {owner} must hold values in [-1, 1] (scale them "
                             "first)", int(np.count_nonzero(bad)), "outside it (or NaN)")
    if fresh:  # a dense batch's pairs come row-major (np.nonzero): each user's keys increasing, none twice
        return KeyValueSets(keys, pair_values, lengths)
    users = np.repeat(np.arange(lengths.shape[0]), lengths)
    # each user's keys already increasing (a dense batch's pairs come so): no key twice, no sort needed
    next_user, key_rises = np.diff(users) > 0, np.diff(keys) > 0
    if np.all(next_user | key_rises):
        return KeyValueSets(keys, pair_values, lengths)
    order = np.lexsort((keys, users))
    repeated = (np.diff(keys[order]) == 0) & (np.diff(users[order]) == 0)
    if repeated.any():
        where = int(np.flatnonzero(repeated)[0])
        raise OutOfDomainError(
            f"The 'values' argument of {owner} must hold each key at most once per user. A key appears twice for user "
            f"{int(users[order][where])} ({NOT_SHOWN})."
        )
    return KeyValueSets(keys, pair_values, lengths)
