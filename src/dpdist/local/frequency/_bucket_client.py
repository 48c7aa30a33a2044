"""A device's memo for protocols that memoize per *bucket* of the value, not per value.

``dbitflippm`` and ``loloha`` draw some public randomness once per user (the
sampled bucket indices, or the hash seed) and memoize the permanent response of
each *bucket* the user's value falls into (the value's bucket, or its hash).
Repeated reports of one value therefore reuse one permanent response, and a
device whose value moves among values of one bucket reveals nothing more.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from ..._rng import check_rng
from ...errors import IncompatibleStateError, InvalidParameterError

__all__ = ["BucketMemoClient"]


class BucketMemoClient:
    """A device's side of ``dbitflippm`` / ``loloha``: its user randomness and memo, serializable.

    The protocol supplies ``_draw_user_randomness(n, rng)`` (an integer array,
    one row per user), ``_bucket(randomness, items)``, ``permanent_response(buckets, rng)``,
    ``instantaneous_response(memoized, rng)`` and ``_report(randomness, responses)``.
    ``to_dict`` / ``from_dict`` give a JSON-safe state that must persist on the device.
    """

    def __init__(self, protocol, randomness=None, memo: dict | None = None):
        if not hasattr(protocol, "_draw_user_randomness"):
            raise InvalidParameterError(
                f"BucketMemoClient needs a dbitflippm or loloha protocol. Got {type(protocol).__name__} instead."
            )
        self.protocol = protocol
        self._randomness = None if randomness is None else np.asarray(randomness, dtype=np.int64)
        self._memo: dict[int, Any] = {int(key): value for key, value in (memo or {}).items()}

    @property
    def randomness(self):
        """The user's public randomness (sampled bucket indices or hash seed), ``None`` before the first report."""
        return None if self._randomness is None else self._randomness.copy()

    @property
    def memo(self) -> dict[int, Any]:
        """Bucket -> its memoized permanent response."""
        return dict(self._memo)

    def report(self, value, rng=None):
        """One report of ``value`` today; the user randomness and the bucket's permanent response are drawn once."""
        generator = check_rng(rng, secure=rng is None, owner=f"{self.protocol.display_name} client")
        item = np.asarray(self.protocol._check_values([value]))
        if self._randomness is None:
            self._randomness = self.protocol._draw_user_randomness(1, generator)[0]
        randomness = self._randomness[None, ...]
        bucket = int(self.protocol._bucket(randomness, item)[0])
        if bucket not in self._memo:
            self._memo[bucket] = self.protocol.permanent_response(np.array([bucket]), generator, randomness)[0]
        memoized = np.asarray(self._memo[bucket])[None, ...]
        return self.protocol._report(randomness, self.protocol.instantaneous_response(memoized, generator))[0]

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe state: the protocol's config, the user randomness and the memo."""
        return {
            "config": self.protocol.config(),
            "randomness": None if self._randomness is None else self._randomness.tolist(),
            "memo": {str(key): np.asarray(value).tolist() for key, value in sorted(self._memo.items())},
        }

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> "BucketMemoClient":
        from .._protocol import from_config

        if not isinstance(state, dict) or "config" not in state or not isinstance(state.get("memo"), dict):
            raise IncompatibleStateError(f"Not a memoized client state: {json.dumps(state)[:200]}")
        protocol = from_config(state["config"])
        randomness = state.get("randomness")
        if randomness is not None:
            randomness = np.asarray(randomness, dtype=np.int64)
            protocol._check_user_randomness(randomness)
        memo = {}
        for key, value in state["memo"].items():
            memo[int(key)] = protocol._check_memo_entry(int(key), value)
        return cls(protocol, randomness, memo)
