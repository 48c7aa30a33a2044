r"""Contribution bounding on a cluster: per-person reservoirs keyed by a salted hash of the id, merged exactly.

A table too large for one process is bounded block by block (a Dask chunk, a Spark partition), and the
blocks' states are merged by a tree reduction, as the local aggregates are (:mod:`dpdist.distributed`).
The state of a block is a *reservoir*: every row gets a uniform 64-bit priority from the block's own
random stream, and each person (the SipHash of their id under a secret salt,
:mod:`dpdist.distributed._hashing`) keeps the ``max_contributions`` rows of smallest priority.  The
``k`` smallest of independent uniform priorities are a uniformly random ``k``-subset of the person's
rows, whatever the rows' order or their partitions; keeping the ``k`` smallest of two reservoirs is
keeping the ``k`` smallest of their union, so merging in any grouping and order gives one state,
:meth:`Reservoir.merge` is exact (associative and commutative), and the merged state equals
:func:`bound_blocks` of the same blocks in one process.  (Two rows of one person with equal priorities,
probability below :math:`m^2 2^{-65}` for a person of :math:`m` rows, are ordered by value: still one state.)

With groups (``groups``, ``max_groups``) each (person, group) pair keeps its ``max_contributions`` rows of
smallest priority, and each person the ``max_groups`` pairs of smallest *pair* priority, a SipHash of the
pair under a second salt: the same for every row of the pair, on every worker, uniform and independent
across pairs, so each person keeps a uniformly random choice of their groups (the cross-group bounding of
:mod:`dpdist.central._partitions`) and merging stays exact.

**Randomness.**  The salt and the priorities come from the run's root :class:`~numpy.random.SeedSequence`:
fresh OS entropy without a seed (the salt secret, block ``b``'s priorities AES-CTR keyed from the ``b``-th
child: a CSPRNG stream), or the seed given (reproducible research; PCG64 streams,
:func:`dpdist._rng.block_generator`).  The release then runs on the driver on the merged state
(:meth:`Reservoir.release`), with the hashes as ids: every person holds at most ``max_contributions`` rows,
so nothing more is dropped, and the release states its guarantee per person.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

import numpy as np
from randomgen import AESCounter

from .._rng import block_generator, root_seed_sequence
from .._validation import Integer, check_param
from .._ids import ids_missing, text_codes, type_label
from ..errors import IncompatibleStateError, InvalidParameterError, InvalidValueTypeError, MissingValuesError
from ._hashing import HASHED, block_kind, hash_ids, siphash24

__all__ = ["Reservoir", "Salt", "salt_of", "reservoir_of_block", "bound_blocks", "check_bounds"]

#: the extra word of the spawn key that derives the salt from the run's root (no block's key has it: "SALT")
SALT_STREAM = 0x53414C54
#: the extra word of the spawn key of the one stream indexed by row offset (``offset=`` of :func:`reservoir_of_block`)
ROW_STREAM = 0x524F5753


@dataclass(frozen=True)
class Salt:
    """The run's two SipHash keys: the persons' (and groups') and the (person, group) pairs'."""

    ids: bytes
    pairs: bytes
    secure: bool

    @property
    def digest(self) -> str:
        """A name of the salt that states of one run share and reveals nothing of it (SHA-256 of both keys)."""
        return hashlib.sha256(self.ids + self.pairs).hexdigest()[:16]


def salt_of(root: np.random.SeedSequence, secure: bool) -> Salt:
    """The salt of the run of ``root``: 32 bytes of its own child stream (secret when ``root`` is fresh entropy)."""
    child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, SALT_STREAM), pool_size=root.pool_size)
    state = child.generate_state(8, np.uint32).tobytes()
    return Salt(state[:16], state[16:], secure)


def _priorities(root: np.random.SeedSequence, index: int, rows: int, secure: bool) -> np.ndarray:
    """Block ``index``'s uniform 64-bit priorities: AES-CTR keyed from its child (no seed) or PCG64 (a seed)."""
    if secure:
        child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, int(index)), pool_size=root.pool_size)
        # randomgen's stubs do not say AESCounter is a NumPy BitGenerator (it is one at run time)
        generator = np.random.Generator(AESCounter(child))  # pyright: ignore[reportArgumentType]
    else:
        generator = block_generator(root, index)
    return generator.integers(0, np.iinfo(np.uint64).max, size=rows, dtype=np.uint64, endpoint=True)


def _row_priorities(root: np.random.SeedSequence, offset: int, rows: int, secure: bool) -> np.ndarray:
    """The priorities of rows ``offset .. offset + rows - 1`` of one stream for the whole table (counter-based: AES-CTR
    without a seed, Philox with one, advanced to ``offset``), so they do not depend on how the rows are cut."""
    child = np.random.SeedSequence(root.entropy, spawn_key=(*root.spawn_key, ROW_STREAM), pool_size=root.pool_size)
    if secure:
        stream = AESCounter(child)
        stream.advance(offset)  # in 64-bit words
        return np.asarray(stream.random_raw(rows), dtype=np.uint64)
    philox = np.random.Philox(child)
    philox.advance(offset // 4)  # in counter steps of four 64-bit words
    return np.asarray(philox.random_raw(offset % 4 + rows), dtype=np.uint64)[offset % 4:]


@dataclass(frozen=True, eq=False)
class Reservoir:
    """The bounded rows of one or more blocks: at most ``max_contributions`` per person (and pair), in canonical order.

    Attributes
    ----------
    max_contributions, max_groups : int
    salt : str
        The digest of the run's salt (states of two runs never merge: their hashes are of different keys).
    hashes, priorities, values : ndarray
        The rows kept: each person's hash, the row's priority and value (sorted by person, group, priority).
    groups, pair_priorities : ndarray or None
        With groups: each row's group hash and its pair's priority.
    keys : dict
        With groups: each group hash's key (the value of the group column).
    id_kind : str or None
        The kind of the ids hashed (``"number"``, ``"string"``, ``"bytes"``; ``None``: no rows): states of two
        kinds never merge (one person must be one key in every block).
    id_types : tuple of str
        The types of the ids of the blocks merged (for a refusal's message).
    rows : int
        Rows seen in all the blocks merged (``rows - kept``: the rows bounding left out, for the holder of the data).
    """

    max_contributions: int
    max_groups: int
    salt: str
    hashes: np.ndarray
    priorities: np.ndarray
    values: np.ndarray
    rows: int
    groups: np.ndarray | None = None
    pair_priorities: np.ndarray | None = None
    keys: dict = field(default_factory=dict)
    id_kind: str | None = None
    id_types: tuple[str, ...] = ()

    @property
    def kept(self) -> int:
        return int(self.values.size)

    @property
    def dropped(self) -> int:
        """Rows left out by bounding (a statistic of the private data: for the holder of the data only)."""
        return self.rows - self.kept

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Reservoir):
            return NotImplemented
        arrays = ("hashes", "priorities", "values", "groups", "pair_priorities")
        same = all(_same(getattr(self, name), getattr(other, name)) for name in arrays)
        return same and (self.max_contributions, self.max_groups, self.salt, self.rows, self.keys, self.id_kind,
                         self.id_types) == (other.max_contributions, other.max_groups, other.salt, other.rows,
                                            other.keys, other.id_kind, other.id_types)

    def merge(self, other: "Reservoir") -> "Reservoir":
        """The reservoir of both states' blocks (exact: keeping the smallest priorities of a union)."""
        return Reservoir.merge_all([self, other])

    __add__ = merge

    @staticmethod
    def merge_all(states: list["Reservoir"]) -> "Reservoir":
        """The reservoir of every state's blocks, in one reduction (what a tree of merges gives, at one sort)."""
        first = states[0]
        for other in states[1:]:
            mine = (first.max_contributions, first.max_groups, first.salt, first.groups is None)
            theirs = (other.max_contributions, other.max_groups, other.salt, other.groups is None)
            if mine != theirs:
                raise IncompatibleStateError(f"Reservoirs merge when they bound alike in one run (max_contributions, "
                                             f"max_groups, salt, groups): {mine} and {theirs}.")
        kind = _one_kind(states)
        hashes, priorities, values = (np.concatenate([getattr(state, name) for state in states]) for name in _PLAIN)
        groups = pair_priorities = None
        if first.groups is not None:  # then every state has its groups (checked above): the filters drop nothing
            groups = np.concatenate([state.groups for state in states if state.groups is not None])
            pair_priorities = np.concatenate([state.pair_priorities for state in states
                                              if state.pair_priorities is not None])
        keys = {key: value for state in states for key, value in state.keys.items()}
        return _reduced(first.max_contributions, first.max_groups, first.salt, sum(state.rows for state in states),
                        hashes, priorities, values, groups, pair_priorities, keys, kind)

    def release(self, function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """``function(values kept, *args, privacy_id=hashes, max_contributions=..., **kwargs)``: a central release of
        the bounded rows, per person (every person already within the bound: nothing more is left out)."""
        if self.groups is not None:
            raise InvalidParameterError("A reservoir with groups is released group by group: group_release(...).")
        return function(self.values, *args, privacy_id=self.hashes, max_contributions=self.max_contributions, **kwargs)


_PLAIN = ("hashes", "priorities", "values")


def _one_kind(states: list[Reservoir]) -> tuple[str | None, tuple[str, ...]]:
    """``(kind, types)`` of the ids of ``states``: one kind (empty states have none), or a refusal naming the types
    seen: ``1`` in an int64 block and ``"1"`` in a str block would be two keys, one person bounded twice."""
    kinds = {state.id_kind for state in states if state.id_kind is not None}
    types = tuple(sorted({name for state in states for name in state.id_types}))
    if len(kinds) > 1:
        raise InvalidValueTypeError(
            f"The 'privacy_id' ids of the blocks must be of one kind in every block: {HASHED}. Got {', '.join(types)} "
            f"(kinds {', '.join(sorted(kinds))}): a person whose id is 1 in one block and '1' in another would be two "
            "persons, bounded twice. Cast the column to one type (e.g. .astype(str)) before bounding.")
    return (kinds.pop() if kinds else None), types


def _same(first, second) -> bool:
    if first is None or second is None:
        return first is second
    return first.dtype == second.dtype and np.array_equal(first, second, equal_nan=first.dtype.kind == "f")


def _runs(*keys: np.ndarray) -> np.ndarray:
    """Each position's rank within its run of equal ``keys`` (arrays sorted by them)."""
    size = keys[0].size
    change = np.zeros(size, dtype=bool)
    change[:1] = True
    for key in keys:
        change[1:] |= key[1:] != key[:-1]
    starts = np.flatnonzero(change)
    return np.arange(size) - np.repeat(starts, np.diff(np.append(starts, size)))


def _reduced(k: int, m: int, salt: str, rows: int, hashes, priorities, values, groups=None, pair_priorities=None,
             keys=None, kind: tuple[str | None, tuple[str, ...]] = (None, ())) -> Reservoir:
    """The reservoir of these rows: the ``k`` of smallest priority per person (and pair), the ``m`` pairs of smallest
    pair priority per person, in canonical order (person, group, priority, value)."""
    columns = (priorities,) + ((groups,) if groups is not None else ()) + (hashes,)
    order = np.lexsort(columns)
    if np.any(_runs(*(column[order] for column in columns))[1:] > 0):  # equal priorities of one pair: by value
        order = np.lexsort((values, *columns))
    hashes, priorities, values = hashes[order], priorities[order], values[order]
    pair = (hashes,) if groups is None else (hashes, groups[order])
    kept = _runs(*pair) < k
    if groups is not None and pair_priorities is not None:
        groups, pair_priorities = groups[order], pair_priorities[order]
        kept &= _pairs_kept(hashes, groups, pair_priorities, m)
        groups, pair_priorities = groups[kept], pair_priorities[kept]
        keys = {g: (keys or {})[g] for g in np.unique(groups).tolist()}
    return Reservoir(k, m, salt, hashes[kept], priorities[kept], values[kept], rows, groups, pair_priorities,
                     keys or {}, *kind)


def _pairs_kept(hashes: np.ndarray, groups: np.ndarray, pair_priorities: np.ndarray, m: int) -> np.ndarray:
    """Which rows (sorted by person and group) lie in one of their person's ``m`` pairs of smallest pair priority."""
    first = _runs(hashes, groups) == 0  # one row per (person, group) pair
    pairs = np.flatnonzero(first)
    order = np.lexsort((groups[pairs], pair_priorities[pairs], hashes[pairs]))
    chosen = np.zeros(pairs.size, dtype=bool)
    chosen[order] = _runs(hashes[pairs][order]) < m
    return np.repeat(chosen, np.diff(np.append(pairs, hashes.size)))


def check_bounds(owner: str, max_contributions: Any, max_groups: Any, grouped: bool) -> tuple[int, int]:
    """``(max_contributions, max_groups)`` checked by name (``max_groups`` with groups only, default 1)."""
    k = check_param(owner, "max_contributions", max_contributions, Integer(low=1, high=2**31 - 1))
    if not grouped and max_groups is not None:
        raise InvalidParameterError(f"The 'max_groups' argument of {owner} goes with 'groups'. Got {max_groups!r}.")
    m = 1 if max_groups is None else check_param(owner, "max_groups", max_groups, Integer(low=1, high=2**31 - 1))
    return k, m


def reservoir_of_block(ids: Any, values: Any, k: int, m: int, salt: Salt, root: np.random.SeedSequence, index: int,
                       groups: Any = None, offsets: np.ndarray | None = None) -> Reservoir:
    """The reservoir of block ``index`` (its rows' ids, values and, optionally, group keys); with ``offsets`` (the
    rows' positions in the table, increasing) their priorities are the rows' own in one stream for the table
    (:func:`_row_priorities`): any cut of the same rows in the same order then merges to one reservoir."""
    ids, values = np.asarray(ids), np.asarray(values, dtype=np.float64)
    if ids.shape != values.shape or (groups is not None and np.shape(groups) != values.shape):
        raise InvalidParameterError(f"Block {index} holds another number of ids than of values"
                                    + ("" if groups is None else " or of group keys")
                                    + ": every row needs its id (and group). How many of each is not printed "
                                    "(numbers of rows of the private data).")
    _refuse_missing_ids(ids, index)
    kind = block_kind(ids)
    hashes = hash_ids(ids, salt.ids)
    types = (type_label(ids),) if kind is not None else ()
    if offsets is None:
        priorities = _priorities(root, index, values.size, salt.secure)
    else:
        start = int(offsets[0]) if offsets.size else 0
        span = int(offsets[-1]) - start + 1 if offsets.size else 0
        priorities = _row_priorities(root, start, span, salt.secure)[np.asarray(offsets, dtype=np.int64) - start]
    if groups is None:
        return _reduced(k, m, salt.digest, values.size, hashes, priorities, values, kind=(kind, types))
    groups = np.asarray(groups)
    coded = text_codes(groups) if groups.dtype == object else None
    group_hashes = hash_ids(groups, salt.ids, "groups") if coded is None else \
        hash_ids(groups[coded[1]], salt.ids, "groups")[coded[0]]  # each group's text hashed once
    message = np.column_stack([hashes, group_hashes]).astype("<u8").view(np.uint8).reshape(-1, 16)
    pair_priorities = siphash24(salt.pairs, np.pad(message, ((0, 0), (0, 8))), np.full(values.size, 16))
    distinct, first = np.unique(group_hashes, return_index=True)
    keys = {int(h): _python(groups[i]) for h, i in zip(distinct.tolist(), first.tolist())}  # one per group
    return _reduced(k, m, salt.digest, values.size, hashes, priorities, values, group_hashes, pair_priorities, keys,
                    (kind, types))


def _python(value):
    return value.item() if isinstance(value, np.generic) else value


def _refuse_missing_ids(ids: np.ndarray, index: int) -> None:
    """A missing id (NaN, None, NaT, ``pandas.NA``) is refused: its row is no known person's (the count in the
    error's ``count``)."""
    missing = int(np.count_nonzero(ids_missing(ids)))
    if missing:
        raise MissingValuesError(f"The 'privacy_id' ids of block {index} hold missing ids (NaN, None; how many is in this error's "
                                 "'count'): a row without an id belongs to no known person. Nothing was released.",
                                 missing)


def bound_blocks(blocks: Iterable[tuple], max_contributions: int, *, max_groups: int | None = None,
                 seed: int | np.random.SeedSequence | None = None) -> Reservoir:
    """The reservoir of consecutive blocks in one process: equal to the Dask and Spark ones of the same blocks and seed.

    Parameters
    ----------
    blocks : iterable of (ids, values) or (ids, values, group keys)
        Block ``b``'s rows (the cut of the Dask chunks or Spark partitions).
    max_contributions : int
        Rows kept per person (per person and group, with groups).
    max_groups : int, optional
        With group keys: the groups kept per person (default 1).
    seed : int or SeedSequence, optional
        ``None`` (the default): a secret salt and CSPRNG priorities; a seed: reproducible (research only).
    """
    root = root_seed_sequence(seed)
    salt = salt_of(root, secure=seed is None)
    pending: list[Reservoir] = []  # merged 8 at a time (the order of merges changes nothing: one sort per 8)
    for index, block in enumerate(blocks):
        grouped = len(block) == 3
        k, m = check_bounds("distributed.bound_blocks", max_contributions, max_groups, grouped)
        pending.append(reservoir_of_block(block[0], block[1], k, m, salt, root, index, block[2] if grouped else None))
        if len(pending) == _MERGED_AT_ONCE:
            pending = [Reservoir.merge_all(pending)]
    if not pending:
        k, m = check_bounds("distributed.bound_blocks", max_contributions, max_groups, max_groups is not None)
        return empty_reservoir(k, m, salt, max_groups is not None)
    return Reservoir.merge_all(pending)


#: blocks' reservoirs merged at once in one process
_MERGED_AT_ONCE = 8


def empty_reservoir(k: int, m: int, salt: Salt, grouped: bool) -> Reservoir:
    """The reservoir of no rows."""
    empty = np.zeros(0, dtype=np.uint64)
    return Reservoir(k, m, salt.digest, empty, empty, np.zeros(0), 0, empty if grouped else None,
                     empty if grouped else None)
