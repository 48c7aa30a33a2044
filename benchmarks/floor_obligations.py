"""The durable floor with dpdist's obligations: what any service giving dpdist's guarantees must pay per request.

``benchmarks/floor_app.py`` acknowledges a batch once it is durable and counted once, and does nothing else: it
decodes, validates and checks nothing.  dpdist aims to spend at most 1.25x its CPU per request.  This app
is the same floor (the same committer thread, group commit, fsync policy and exactly-once key) doing, in the
plainest Python, only what dpdist must do for each one-report batch to keep its guarantees, written here without
dpdist's code:

on the event loop, per request

* the batch id's form (32 lower-case hex digits: the id a device names a batch by, and binds to one campaign);
* the content type, the body's size, and the body held against its address's share of body memory (a client
  cannot hold the server's memory with many bodies);
* admission: the campaign's cached row (known, open);
* the SHA-256 of the content type and the body (a retry under the same id is told from another batch reusing it);
* an answer with the security headers and a request id (``X-Content-Type-Options``, ``Referrer-Policy``,
  ``X-Request-ID``), and a counter of acknowledged batches;

in the committer thread, per group

* each body's record read and checked (magic, version, header length, the header's JSON: the campaign's config, the
  dtype, the shape, the payload's size, its CRC-32, a ``file_id`` that is the batch id) and its reports' range
  (below the domain size); a header whose bytes are the canonical spelling the clients write (Python's ``json.dumps``,
  sorted keys) for this config, payload and batch id passes every header check, so only another spelling is parsed;
* the campaign's row read again in the transaction (still open: another process may have closed it);
* the bound-id check: a batch id another campaign counted is refused (one read of the group's ids, in the batch rows
  and, as dpdist, in the ids whose rows retention deleted), and so is one another campaign names earlier in the group;
* the batch rows as dpdist stores them (campaign, id, digest, arrival, reports read, accepted, rejected: what a retry's
  acknowledgement is answered from), keyed by (batch id, campaign) and indexed by campaign;
* the group's statistic (the GRR counts, ``np.bincount`` of the group's reports) in one log row;
* per request the acknowledgement's counts; a batch counted before answered from its row (its first acknowledgement),
  or refused when its digest is another's (the id reused for other bytes).

The batch route is matched from the path ahead of Starlette's router and answered with ASGI messages, as dpdist's
own fast path is (the floor's goes through Starlette's router, request and response): the least this work costs in
this stack.

Left out, though dpdist has them (each would only add to this floor's cost): the rate limit (``--rate-limit 0`` in the
benchmark), the access log (off), the header timeout and pending-head count of dpdist's HTTP protocol (about 7 us a
request, measured on its own: docs/reference/benchmarks/service.md), the backpressure (503 ``busy`` when the
queue is long), the whole server's body budget and a body's timeouts, the declared ``Content-Length`` checked before
the body is read, admission's 404 for an unknown campaign (every campaign named is open here), the fold of the log
rows (once a second).  Run::

    FLOOR_DB=/tmp/floor.sqlite python -m uvicorn floor_obligations:app --app-dir benchmarks --http httptools --no-access-log
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import re
import sqlite3
import struct
import time
import zlib

import floor_app
import numpy as np
from floor_app import Committer, committer, counted, healthz
from starlette.applications import Starlette
from starlette.routing import Route

#: the campaigns' protocol (every campaign of this app has it): GRR over 64 values, as the benchmark's
CONFIG = json.loads(os.environ.get("FLOOR_CONFIG", '{"domain_size": 64, "epsilon": 1.0, "protocol": "grr", "version": 1}'))
DOMAIN = CONFIG["domain_size"]
BINARY = b"application/octet-stream"
MAX_BODY, BODY_SHARE = 1 << 20, 64 << 20
_ID = re.compile(r"[0-9a-f]{32}")
_PREFIX = struct.Struct("<8sHI")
_MAGIC = b"DPDISTR\n"
_CANONICAL = (b'{"config": ' + json.dumps(CONFIG, sort_keys=True).encode().replace(b"%", b"%%")
              + b', "crc32": %d, "dtype": "|u1", "payload_bytes": %d, "shape": [%d]}')
_CANONICAL_ID = _CANONICAL.replace(b'"payload_bytes"', b'"file_id": "%s", "payload_bytes"')
_SECURITY = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"no-referrer")]
_IDS = random.Random(os.urandom(32))  # request ids as dpdist makes them: 128 random bits, no system call each
_KIND_SHA = hashlib.sha256(BINARY + b"\n")  # the digest's prefix (the content type is checked to be BINARY)
_RENDER = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps's bytes, one encoder (not one per answer)


class ObligedCommitter(Committer):
    """The floor's committer, committing a group as dpdist must (see the module)."""

    def connect(self) -> sqlite3.Connection:
        connection = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=FULL")
        connection.execute("CREATE TABLE IF NOT EXISTS campaigns (id TEXT PRIMARY KEY, config TEXT, state TEXT)")
        connection.execute("CREATE TABLE IF NOT EXISTS batches (campaign_id TEXT NOT NULL, batch_id TEXT NOT NULL,"
                           " body_sha256 TEXT NOT NULL, received_ms BIGINT NOT NULL, n_read BIGINT NOT NULL,"
                           " accepted BIGINT NOT NULL, rejected TEXT NOT NULL, PRIMARY KEY (batch_id, campaign_id))")
        connection.execute("CREATE INDEX IF NOT EXISTS batches_by_campaign ON batches (campaign_id)")
        connection.execute("CREATE TABLE IF NOT EXISTS bound_batch_ids (batch_id TEXT PRIMARY KEY, campaign_id TEXT NOT NULL)")
        connection.execute("CREATE TABLE IF NOT EXISTS ingest_log (campaign_id TEXT, minute_ms BIGINT, n BIGINT,"
                           " statistic BLOB)")
        return connection

    def commit(self, connection: sqlite3.Connection, group: list) -> list:
        """Per item: None (refused: not a record of the campaign, or its id counted by another campaign) or
        (duplicate, reports read, accepted)."""
        minute = int(time.time() // 60 * 60_000)
        payloads = [_payload(body, batch_id) for (_, batch_id), _, _, (body, _) in group]
        connection.execute("BEGIN IMMEDIATE")
        campaigns = {key[0] for key, _, _, _ in group}
        states = dict(connection.execute(f"SELECT id, state FROM campaigns WHERE id IN ({', '.join('?' * len(campaigns))})",
                                         tuple(campaigns)).fetchall())
        for campaign in campaigns - states.keys():  # first seen: the benchmark names its campaign in its requests
            connection.execute("INSERT INTO campaigns VALUES (?, ?, 'open')", (campaign, json.dumps(CONFIG)))
            states[campaign] = "open"
        ids = [batch_id for (_, batch_id), _, _, _ in group]
        bound: dict = {}
        marks = ", ".join("?" * len(ids))
        for batch_id, campaign in connection.execute(
                f"SELECT batch_id, campaign_id FROM batches WHERE batch_id IN ({marks}) UNION ALL"
                f" SELECT batch_id, campaign_id FROM bound_batch_ids WHERE batch_id IN ({marks})", ids + ids):
            bound.setdefault(batch_id, set()).add(campaign)
        for (campaign, batch_id), _, _, _ in group:  # and in this group: the first campaign to name an id binds it
            bound.setdefault(batch_id, {campaign})
        refused = {index for index, ((campaign, batch_id), _, _, _) in enumerate(group)
                   if payloads[index] is None or states[campaign] != "open" or bound[batch_id] != {campaign}}
        candidates = [index for index in range(len(group)) if index not in refused]
        rows = [value for index in candidates for value in (*group[index][0], group[index][3][1], minute,
                                                             len(payloads[index]), len(payloads[index]), "{}")]
        inserted = set(connection.execute(
            "INSERT INTO batches VALUES " + ", ".join(["(?, ?, ?, ?, ?, ?, ?)"] * len(candidates))
            + " ON CONFLICT DO NOTHING RETURNING campaign_id, batch_id", rows).fetchall()) if candidates else set()
        for campaign in {campaign for campaign, _ in inserted}:
            reports = np.frombuffer(b"".join(payloads[index] for index in candidates
                                             if group[index][0][0] == campaign and group[index][0] in inserted), np.uint8)
            connection.execute("INSERT INTO ingest_log VALUES (?, ?, ?, ?)", (campaign, minute, len(reports),
                                                                               np.bincount(reports, minlength=DOMAIN).tobytes()))
        again = _retries(connection, [group[index] for index in candidates if group[index][0] not in inserted])
        connection.execute("COMMIT")  # the WAL's fsync: durable from here
        return [None if index in refused or again.get(group[index][0], 0) is None
                else again.get(group[index][0]) or (False, len(payloads[index]), len(payloads[index]))
                for index in range(len(group))]


def _retries(connection: sqlite3.Connection, items: list) -> dict:
    """Per batch of ``items`` (counted before), its first acknowledgement ``(True, reports read, accepted)``, or None if
    its digest is not the first's (the id reused for other bytes: refused)."""
    if not items:
        return {}
    stored = {(campaign, batch_id): (digest, n_read, accepted) for campaign, batch_id, digest, n_read, accepted in
              connection.execute("SELECT campaign_id, batch_id, body_sha256, n_read, accepted FROM batches WHERE batch_id IN"
                                 f" ({', '.join('?' * len(items))})", [key[1] for key, _, _, _ in items])}
    return {key: (True, *stored[key][1:]) if stored[key][0] == work[1] else None for key, _, _, work in items}


def _payload(body: bytes, batch_id: str) -> bytes | None:
    """The reports of a record of this app's protocol (one byte each), or None if ``body`` is not one."""
    if len(body) < _PREFIX.size:
        return None
    magic, version, length = _PREFIX.unpack_from(body)
    start = _PREFIX.size + length
    if magic != _MAGIC or version != 1 or start > len(body):
        return None
    raw, payload = body[_PREFIX.size:start], body[start:]
    size, crc = len(payload), zlib.crc32(payload)
    # the header as the clients write it (Python's json.dumps, sorted keys): equal bytes parse to a header that passes
    # every check below, so only another spelling is parsed
    if raw != _CANONICAL % (crc, size, size) and raw != _CANONICAL_ID % (crc, batch_id.encode(), size, size):
        try:
            header = json.loads(raw)
        except ValueError:
            return None
        if (not isinstance(header, dict) or header.get("config") != CONFIG or header.get("dtype") != "|u1"
                or header.get("shape") != [size] or header.get("payload_bytes") != size
                or header.get("crc32") != crc or header.get("file_id", batch_id) != batch_id):
            return None
    if payload and max(payload) >= DOMAIN:
        return None
    return payload


_HELD: dict = {}  # bytes of bodies held per client address
_STATES: dict = {}  # admission's cache of the campaigns' states (every campaign named is open here)
_ACKNOWLEDGED = [0]


async def _body(receive) -> bytes | None:
    """The request's body, or None past MAX_BODY."""
    chunks, size, more = [], 0, True
    while more:
        message = await receive()
        chunk, more = message.get("body", b""), message.get("more_body", False)
        size += len(chunk)
        if size > MAX_BODY:
            return None
        chunks.append(chunk)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _batch(campaign: str, batch_id: str, kind: bytes, address: str, receive) -> tuple[int, bytes]:
    """The status and JSON body of the answer to a batch (see the module)."""
    if _ID.fullmatch(batch_id) is None or kind != BINARY:
        return 400, b'{"error": "invalid"}'
    if _STATES.setdefault(campaign, "open") != "open":
        return 409, b'{"error": "campaign_closed"}'
    body = await _body(receive)
    if body is None or _HELD.get(address, 0) + len(body) > BODY_SHARE:
        return 413, b'{"error": "too_large"}'
    _HELD[address] = _HELD.get(address, 0) + len(body)
    try:
        hasher = _KIND_SHA.copy()
        hasher.update(body)
        digest = hasher.hexdigest()
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        committer().put((campaign, batch_id), future, loop, (body, digest))
        outcome = await future
    finally:
        _HELD[address] -= len(body)
    if outcome is None:
        return 409, b'{"error": "refused"}'
    duplicate, n_read, accepted = outcome
    _ACKNOWLEDGED[0] += 1
    ack = {"campaign": campaign, "batch_id": batch_id, "n_read": n_read, "accepted": 0 if duplicate else accepted,
           "rejected": {}, "duplicate": duplicate}
    return 200, _RENDER(ack).encode()


class Batches:
    """The batch route, matched from the path ahead of Starlette's router (as dpdist's own fast path is); every other
    request goes to ``app``."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        parts = scope["path"].split("/") if scope["type"] == "http" and scope["method"] in ("PUT", "POST") else ()
        if len(parts) != 6 or parts[1:3] != ["api", "campaigns"] or parts[4] != "batches":
            await self.app(scope, receive, send)
            return
        kind = next((value for name, value in scope["headers"] if name == b"content-type"), b"")
        client = scope.get("client")
        status, body = await _batch(parts[3], parts[5], kind, client[0] if client else "", receive)
        headers = [*_SECURITY, (b"x-request-id", b"%032x" % _IDS.getrandbits(128)),
                   (b"content-length", b"%d" % len(body)), (b"content-type", b"application/json")]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})


floor_app.KIND = ObligedCommitter
app = Batches(Starlette(routes=[Route("/healthz", healthz), Route("/floor/counted", counted)]))
