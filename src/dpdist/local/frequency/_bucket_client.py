"""A device's memo for protocols that memoize per *bucket* of the value, not per value.

``dbitflippm`` and ``loloha`` draw some public randomness once per user (the
sampled bucket indices, or the hash seed) and memoize the permanent response of
each *bucket* the user's value falls into (the value's bucket, or its hash).
Repeated reports of one value therefore reuse one permanent response, and a
device whose value moves among values of one bucket reveals nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..._rng import check_rng
from ..._validation import NOT_SHOWN, InstanceOf, validate_params
from ...errors import IncompatibleStateError
from .._protocol import from_config
from ._memoized import MemoizedProtocol

if TYPE_CHECKING:
    from .._protocol import LocalProtocol
from ..._types import Seed

__all__ = ["BucketMemoProtocol", "BucketMemoClient"]

#: Integers above this are written as decimal strings: JSON readers that parse numbers as doubles
#: (JavaScript's) would round them (a LOLOHA seed reaches 2^62).
_JSON_SAFE_INTEGER = 2**53


def _json_integer(value: int):
    return value if abs(value) <= _JSON_SAFE_INTEGER else str(value)


def parse_memo_key(key) -> int:
    """A memo's key: the canonical decimal string of a non-negative integer (JSON object keys are strings).

    Canonical: no sign, no leading zero (``"01"`` and ``"1"`` would both read as item 1, and two
    readers could disagree on which permanent response is item 1's).
    """
    if (
        not isinstance(key, str) or not key.isascii() or not key.isdigit() or len(key) > 20
        or (len(key) > 1 and key[0] == "0")
    ):
        raise IncompatibleStateError(
            f"A client's memo is keyed by items or buckets: canonical decimal strings of integers >= 0 "
            f"(no leading zero). Got another key ({NOT_SHOWN})."
        )
    return int(key)


def read_seeded(state: dict) -> bool:
    """A client state's ``"seeded"`` mark (absent: drawn from the CSPRNG)."""
    seeded = state.get("seeded", False)
    if not isinstance(seeded, bool):
        raise IncompatibleStateError(f"A client state's 'seeded' must be true or false. Got {seeded!r}.")
    return seeded


def memo_state(protocol: LocalProtocol, memo: dict[int, Any], seeded: bool, **fields: Any) -> dict[str, Any]:
    """A device memo's JSON-safe state: the protocol's config, ``fields``, the memo by key and the seeded mark."""
    state: dict[str, Any] = {
        "config": protocol.config(),
        **fields,
        "memo": {str(key): np.asarray(value).tolist() for key, value in sorted(memo.items())},
    }
    if seeded:
        state["seeded"] = True
    return state


def protocol_of_memo_state(state: Any, kind: type, names: str) -> Any:
    """The protocol of a device memo's state, which must be a ``kind`` (``names`` says which protocols those are)."""

    if not isinstance(state, dict) or "config" not in state or not isinstance(state.get("memo"), dict):
        raise IncompatibleStateError("Not a memoized client state: it needs a 'config' and a 'memo' (an object).")
    protocol = from_config(state["config"])
    if not isinstance(protocol, kind):
        raise IncompatibleStateError(f"This client state's config is {protocol.name!r}; its kind of memo needs {names}.")
    return protocol


def refuse_seeded_memo(owner: str) -> None:
    """A memo drawn from a seed must not serve a report drawn from the CSPRNG (docs/explanation/design.md, "Randomness")."""
    raise IncompatibleStateError(
        f"This {owner} memo was drawn from a seeded generator: anyone who knows the seed can re-draw its permanent "
        "responses, so they protect nothing. A device reporting for real needs a memo drawn from the CSPRNG "
        "(rng=None): start a new client (its first report spends a fresh epsilon_inf)."
    )


def _parse_integer(value) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise IncompatibleStateError(f"A client's randomness holds integers (or their decimal strings). Got a value of "
                                     f"type {type(value).__name__} ({NOT_SHOWN}).")
    if isinstance(value, str):
        if not value.isascii() or not value.lstrip("-").isdigit() or len(value) > 20:
            raise IncompatibleStateError(f"A client's randomness holds integers (or their decimal strings). Got another "
                                         f"string ({NOT_SHOWN}).")
        return int(value)
    return value


class BucketMemoProtocol(MemoizedProtocol):
    """A protocol that memoizes per bucket (``dbitflippm``, ``loloha``); its device side is
    :class:`BucketMemoClient`, which calls the methods below (a subclass supplies them)."""

    def _draw_user_randomness(self, n: int, rng: np.random.Generator) -> np.ndarray:
        """The public randomness of ``n`` users, an integer array with one row per user."""
        raise NotImplementedError

    def _bucket(self, randomness: np.ndarray, items: np.ndarray) -> np.ndarray:
        """The bucket (memo key) of each item, under each user's randomness."""
        raise NotImplementedError

    def permanent_response(self, buckets: np.ndarray, rng: np.random.Generator, randomness: Any) -> np.ndarray:
        """The permanent (memoized) response of each bucket."""
        raise NotImplementedError

    def instantaneous_response(self, memoized: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The instantaneous randomization of memoized responses (every report)."""
        raise NotImplementedError

    def _report(self, randomness: np.ndarray, responses: np.ndarray) -> np.ndarray:
        """The reports of users with ``randomness`` sending ``responses``."""
        raise NotImplementedError

    def _check_user_randomness(self, randomness: np.ndarray) -> None:
        """Refuse, with ``IncompatibleStateError``, a user randomness read back from a state that this protocol cannot draw."""
        raise NotImplementedError

    def _check_memo_entry(self, key: int, value: Any) -> Any:
        """The memoized permanent response of bucket ``key`` read back from a state; ``IncompatibleStateError`` if malformed."""
        raise NotImplementedError


class BucketMemoClient:
    """A device's side of ``dbitflippm`` / ``loloha``: its user randomness and memo, serializable.

    The protocol is a :class:`BucketMemoProtocol`. ``to_dict`` / ``from_dict`` give a JSON-safe
    state that must persist on the device.
    """

    @validate_params({"protocol": InstanceOf(BucketMemoProtocol, "a dbitflippm or loloha protocol")})
    def __init__(self, protocol, randomness=None, memo: dict | None = None, seeded: bool = False):
        self.protocol = protocol
        self._randomness = None if randomness is None else np.asarray(randomness, dtype=np.int64)
        self._memo: dict[int, Any] = {int(key): value for key, value in (memo or {}).items()}
        #: whether a permanent response was drawn from a caller's generator (reproducible from its seed)
        self.seeded = seeded

    @property
    def randomness(self):
        """The user's public randomness (sampled bucket indices or hash seed), ``None`` before the first report."""
        return None if self._randomness is None else self._randomness.copy()

    @property
    def memo(self) -> dict[int, Any]:
        """Bucket -> its memoized permanent response."""
        return dict(self._memo)

    def report(self, value: Any, rng: Seed = None) -> np.ndarray:
        """One report of ``value`` today; the user randomness and the bucket's permanent response are drawn once."""
        if rng is None and self.seeded:
            refuse_seeded_memo(self.protocol.display_name)
        generator = check_rng(rng, secure=rng is None, owner=f"{self.protocol.display_name} client")
        item = np.asarray(self.protocol._check_values([value]))
        if self._randomness is None:
            self._randomness = self.protocol._draw_user_randomness(1, generator)[0]
            self.seeded = self.seeded or rng is not None
        randomness = self._randomness[None, ...]
        bucket = int(self.protocol._bucket(randomness, item)[0])
        # a permanent response is drawn every time, kept only for a new bucket: the same work whether or not
        # the value's bucket is new, so the report's timing does not tell a change
        drawn = self.protocol.permanent_response(np.array([bucket]), generator, randomness)[0]
        if bucket not in self._memo:
            self._memo[bucket] = drawn
            self.seeded = self.seeded or rng is not None
        memoized = np.asarray(self._memo[bucket])[None, ...]
        return self.protocol._report(randomness, self.protocol.instantaneous_response(memoized, generator))[0]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe state: the protocol's config, the user randomness and the memo.

        Randomness above :math:`2^{53}` is written as decimal strings, so that JavaScript (the
        device's client, ``clients/js``) reads it exactly.
        """
        randomness = None if self._randomness is None else [_json_integer(v) for v in self._randomness.tolist()]
        return memo_state(self.protocol, self._memo, self.seeded, randomness=randomness)

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> "BucketMemoClient":
        protocol: BucketMemoProtocol = protocol_of_memo_state(state, BucketMemoProtocol, "dbitflippm or loloha")
        randomness = state.get("randomness")
        if randomness is not None:
            if not isinstance(randomness, list):
                raise IncompatibleStateError(f"A client's randomness is a list of integers. Got a value of type {type(randomness).__name__}.")
            values = [_parse_integer(value) for value in randomness]
            if any(not -(2**63) <= value < 2**63 for value in values):
                raise IncompatibleStateError(f"A client's randomness is out of range (64-bit integers; {NOT_SHOWN}).")
            randomness = np.asarray(values, dtype=np.int64)
            protocol._check_user_randomness(randomness)
        if state["memo"] and randomness is None:
            # the memo's buckets were drawn under a hash seed (or sampled buckets) this state does not hold
            raise IncompatibleStateError("A client's memo has entries but no randomness: they cannot be used.")
        memo = {}
        for key, value in state["memo"].items():
            item = parse_memo_key(key)
            memo[item] = protocol._check_memo_entry(item, value)
        return cls(protocol, randomness, memo, seeded=read_seeded(state))
