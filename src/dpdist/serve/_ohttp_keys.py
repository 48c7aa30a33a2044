"""The Oblivious HTTP gateway's key ring: the key configurations devices encapsulate to, rotated by key id.

Table ``ohttp_keys`` (schema 8) holds one X25519 key pair per key id (0-255, RFC 9458 section 3.1), with the
time it was made and, once retired, the time it was retired.  The gateway accepts requests encapsulated to
any key not retired; ``application/ohttp-keys`` lists those, newest first, so a device takes the newest.

Rotation (``POST /api/ohttp/keys``, admin) adds a key under the smallest key id not listed (in use or
retired), and keeps the earlier keys: a device that fetched the key configuration before the rotation still
gets its request through.  Retiring a key (``DELETE /api/ohttp/keys/{key id}``) makes the gateway answer
requests encapsulated to it with RFC 9458's ``ohttp-key`` problem (a device then fetches the configuration
again); the last key is never retired.  A retired key stays listed, and its id is never reused, until the
admin forgets it (``DELETE /api/ohttp/keys/{key id}?forget=true``): an id reused silently made a device
holding the retired key get ``not_decapsulated`` instead of the ``ohttp-key`` problem.  Once
all 256 ids are listed, rotation is refused (409 ``ohttp_keys_full``) naming the key
retired longest ago, to forget first.  A service that starts with an empty ring makes
key id 0.  Several processes share the ring through the database: each reads it again at most every
:data:`RELOAD_S` seconds, and at once when a request names a key id it does not know.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

from .._ohttp import KeyConfig, encode_key_list, public_key_of
from .._guard._refusals import Conflict, InvalidRequest, NotFound

__all__ = ["GatewayKeys", "RELOAD_S", "GATEWAY_PATH", "gateway_keys", "public_fields"]

#: the gateway's route (:mod:`._ohttp_gateway`), stated in every direct campaign's public config
GATEWAY_PATH = "/ohttp/gateway"

#: seconds a process keeps the ring it read before reading it again
RELOAD_S = 5.0


@dataclass(frozen=True)
class _Ring:
    """The keys not retired, newest first: ``(key id, private key)``, and their ``application/ohttp-keys``."""

    keys: tuple[tuple[int, bytes], ...]
    document: bytes
    read_at: float

    @property
    def private_keys(self) -> dict[int, bytes]:
        return dict(self.keys)


class GatewayKeys:
    """The key ring of one service's database (module docstring)."""

    def __init__(self, db, clock=time.monotonic):
        self.db, self.clock = db, clock
        self._ring: _Ring | None = None
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ reads
    def ring(self, *, fresh: bool = False) -> _Ring:
        """The keys in use (read again when older than :data:`RELOAD_S`, or ``fresh``); a first key made if none."""
        ring = self._ring
        if ring is not None and not fresh and self.clock() - ring.read_at < RELOAD_S:
            return ring
        with self._lock:
            rows = self._active()
            if not rows:
                with self.db.transaction():
                    self._insert(0)
                rows = self._active()
            keys = tuple((int(key_id), bytes.fromhex(private)) for key_id, private in rows)
            configs = [KeyConfig(key_id, public_key_of(private)) for key_id, private in keys]
            self._ring = _Ring(keys, encode_key_list(configs), self.clock())
            return self._ring

    def private_keys(self, key_id: int | None = None) -> dict[int, bytes]:
        """``{key id: private key}`` of the keys in use; read again at once if ``key_id`` is not among them (another
        process rotated)."""
        keys = self.ring().private_keys
        if key_id is not None and key_id not in keys:
            keys = self.ring(fresh=True).private_keys
        return keys

    def cached_private_keys(self, key_id: int | None) -> dict[int, bytes] | None:
        """:meth:`private_keys` without reading the database: None when it would have to (a ring older than
        :data:`RELOAD_S`, none read yet, or ``key_id`` not in it), so that the event loop reads it only then."""
        ring = self._ring
        if ring is None or self.clock() - ring.read_at >= RELOAD_S:
            return None
        keys = ring.private_keys
        return keys if key_id is None or key_id in keys else None

    def document(self) -> bytes:
        """``application/ohttp-keys`` of the keys in use, newest first."""
        return self.ring().document

    def listing(self) -> list[dict]:
        """Every key of the ring, retired ones included, for the admin: id, public key (hex), when made and retired."""
        rows = self.db.execute("SELECT key_id, public_key, created_ms, retired_ms FROM ohttp_keys ORDER BY created_ms DESC")
        return [{"key_id": int(key_id), "public_key": public, "created_ms": int(created), "retired_ms": retired}
                for key_id, public, created, retired in rows]

    def _active(self) -> list[tuple]:
        return self.db.execute("SELECT key_id, private_key FROM ohttp_keys WHERE retired_ms IS NULL"
                               " ORDER BY created_ms DESC, key_id DESC")

    # ------------------------------------------------------------------ writes (admin)
    def rotate(self) -> dict:
        """Add a key (module docstring); its listing entry."""
        with self._lock:
            with self.db.transaction():
                key_id = self._next_key_id()
                self._insert(key_id)
            self._ring = None
        return next(entry for entry in self.listing() if entry["key_id"] == key_id)

    def _next_key_id(self) -> int:
        """The key id of the next key: the smallest not listed (in use or retired); refused when all 256 are."""
        rows = self.db.execute("SELECT key_id, retired_ms FROM ohttp_keys")
        used = {int(key_id): retired for key_id, retired in rows}
        free = [key_id for key_id in range(256) if key_id not in used]
        if free:
            return free[0]
        retired = sorted((when, key_id) for key_id, when in used.items() if when is not None)
        then = (f"forget a retired key first (the oldest: DELETE /api/ohttp/keys/{retired[0][1]}?forget=true; a device "
                "still holding it then gets not_decapsulated)" if retired else "retire one, then forget it "
                "(DELETE /api/ohttp/keys/{key id}, then again with ?forget=true)")
        raise Conflict("ohttp_keys_full", f"All 256 key ids of the gateway are listed (in use or retired): {then}.")

    def retire(self, key_id, *, forget: bool = False) -> dict:
        """Retire the key ``key_id`` (refused for the last key in use, or an id not in use); ``forget``: remove the
        retired key ``key_id`` from the ring, its id free again (refused for a key in use or not listed)."""
        if isinstance(key_id, str) and key_id.isascii() and key_id.isdigit():
            key_id = int(key_id)
        if not isinstance(key_id, int) or not 0 <= key_id <= 255:
            raise InvalidRequest("invalid_key_id", f"A key id is an integer 0-255. Got {key_id!r:.40}.")
        if forget:
            return self._forget(key_id)
        with self._lock:
            active = [int(row[0]) for row in self._active()]
            if key_id not in active:
                raise NotFound("unknown_key_id", f"The gateway has no key id {key_id} in use (in use: {active}).")
            if active == [key_id]:
                raise Conflict("last_key", f"Key id {key_id} is the gateway's only key: rotate first (POST /api/ohttp/keys).")
            with self.db.transaction():
                self.db.execute("UPDATE ohttp_keys SET retired_ms = ? WHERE key_id = ?", (_now_ms(), key_id))
            self._ring = None
        return next(entry for entry in self.listing() if entry["key_id"] == key_id)

    def _forget(self, key_id: int) -> dict:
        """Remove the retired key ``key_id`` from the ring (:meth:`retire` with ``forget``); its last listing entry."""
        with self._lock:
            entry = next((entry for entry in self.listing() if entry["key_id"] == key_id), None)
            if entry is None:
                raise NotFound("unknown_key_id", f"The gateway lists no key id {key_id}.")
            if entry["retired_ms"] is None:
                raise Conflict("key_in_use", f"Key id {key_id} is in use: retire it first (DELETE /api/ohttp/keys/"
                                             f"{key_id}), then forget it.")
            with self.db.transaction():
                self.db.execute("DELETE FROM ohttp_keys WHERE key_id = ? AND retired_ms IS NOT NULL", (key_id,))
            self._ring = None
        return {**entry, "forgotten": True}

    def _insert(self, key_id: int) -> None:
        """A fresh key pair (the operating system's CSPRNG) under ``key_id``, unless another process made one first."""
        private = os.urandom(32)
        self.db.execute("INSERT INTO ohttp_keys (key_id, public_key, private_key, created_ms) VALUES (?, ?, ?, ?)"
                        " ON CONFLICT (key_id) DO NOTHING", (key_id, public_key_of(private).hex(), private.hex(), _now_ms()))


def _now_ms() -> int:
    return int(time.time() * 1000)


def gateway_keys(app) -> GatewayKeys:
    """The application's key ring (made on first use, over the service's database)."""
    keys = getattr(app.state, "ohttp_keys", None)
    if keys is None:
        keys = app.state.ohttp_keys = GatewayKeys(app.state.service.store.db)
    return keys


def public_fields(app, relayed: bool) -> dict:
    """What a direct campaign's public config adds: the gateway's key configurations and path (none for a ``relayed``
    campaign, which takes reports from its relay only)."""
    if relayed:
        return {}
    document = gateway_keys(app).document()
    return {"ohttp": {"keys": _ohttp_b64(document), "gateway": GATEWAY_PATH}}


def _ohttp_b64(raw: bytes) -> str:
    import base64  # lazy: only here

    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()
