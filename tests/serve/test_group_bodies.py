"""Bodies decoded by the committer with their group (``_group_bodies``) give what ``decode_body`` gives each alone.

Every arrival of a mixed group - valid one-report records, records of invalid
reports, corrupt, truncated, concatenated or foreign records, a wrong file id,
JSON - gets from :func:`decode_pending` exactly the batch (reports, rejected
counts, rows read) or the refusal (status, code, detail) that
:func:`dpdist.serve._ingest.decode_body` gives it alone.
"""

from __future__ import annotations

import json
import zlib

import numpy as np
import pytest

from dpdist import local
from dpdist.serve._group import Arrival
from dpdist.serve._group_bodies import PendingBody, decode_pending, settle
from dpdist._guard._refusals import NotFound
from group_decode_support import GRR, LIMITS, PROTOCOL, assert_group_outcomes_are_each_alone, raw_record, record

BATCH = "0123456789abcdef0123456789abcdef"


def _header(payload: bytes, **fields) -> dict:
    header = {"config": PROTOCOL.config(), "dtype": "|u1", "shape": [len(payload)], "payload_bytes": len(payload),
              "crc32": zlib.crc32(payload)}
    header.update(fields)
    return {name: value for name, value in header.items() if value is not None}


BODIES = {
    "one report": (record([3]), "application/octet-stream", BATCH),
    "one report, file id = batch id": (record([5], BATCH), "application/octet-stream", BATCH),
    "ten reports": (record(np.arange(10) % 8), "application/vnd.dpdist.reports", "b" * 32),
    "parameters in the type": (record([1]), "Application/Octet-Stream; q=1", "c" * 32),
    "out of range": (raw_record(_header(b"\x09"), b"\x09"), "application/octet-stream", "d" * 32),
    "wrong crc": (raw_record(_header(b"\x02", crc32=5), b"\x02"), "application/octet-stream", "e" * 32),
    "crc with a leading zero": (raw_record(json.dumps(_header(b"\x02"), sort_keys=True).replace(
        '"crc32": ', '"crc32": 0').encode(), b"\x02"), "application/octet-stream", "f" * 32),
    "file id of another batch": (record([2], "9" * 32), "application/octet-stream", "a" * 31 + "0"),
    "other config": (record([2], protocol=local.from_config({**GRR, "domain_size": 9})), "application/octet-stream",
                     "a" * 30 + "00"),
    "two records": (record([1]) + record([2]), "application/octet-stream", "a" * 29 + "000"),
    "trailing bytes": (record([1]) + b"x", "application/octet-stream", "a" * 28 + "0000"),
    "truncated": (record([1])[:-1], "application/octet-stream", "a" * 27 + "00000"),
    "not a record": (b"DPDIST?" + b"x" * 40, "application/octet-stream", "a" * 26 + "000000"),
    "empty": (b"", "application/octet-stream", "a" * 25 + "0000000"),
    "wrong dtype": (raw_record(_header(b"\x02\x00", dtype="<u2", shape=[1], payload_bytes=2), b"\x02\x00"),
                    "application/octet-stream", "a" * 24 + "0" * 8),
    "nested crc32 key": (raw_record(_header(b"\x02", crc32=None, config={**PROTOCOL.config(), "crc32": 4}), b"\x02"),
                         "application/octet-stream", "a" * 23 + "0" * 9),
    "json": (b'{"reports": [1, 2, 9]}', "application/json", "a" * 22 + "0" * 10),
}


@pytest.mark.parametrize("invalid_in_group", [False, True])
def test_a_group_decodes_each_body_as_decode_body_does_alone(invalid_in_group):
    names = [name for name in BODIES if invalid_in_group or name in ("one report", "one report, file id = batch id",
                                                                        "ten reports", "parameters in the type")]
    for _ in range(2):  # the second time every header is known to the memo
        assert_group_outcomes_are_each_alone([BODIES[name] for name in names])


def test_a_refused_body_is_counted_in_the_group_and_answered_with_its_refusal():
    bodies = [BODIES["one report"], BODIES["not a record"], BODIES["two records"], BODIES["not a record"][:2] + ("x y",)]
    items = [Arrival("c", batch_id, "0" * 64, None, 0, 0, pending=PendingBody(PROTOCOL, body, kind, LIMITS))
             for body, kind, batch_id in bodies]
    committed, places, refused = decode_pending(items)
    assert [type(item).__name__ for item in committed] == ["Arrival", "Refused", "Arrival", "Refused"]
    assert (committed[1].reason, committed[1].batch_id) == ("malformed_batch", "a" * 26 + "000000")
    assert committed[3].batch_id is None  # not a batch id of the counted form: counted each time
    counted = settle([{"ack": 1}, None, {"ack": 2}, NotFound("unknown_campaign", "gone")], places, refused)
    assert counted[0] == {"ack": 1} and counted[2] == {"ack": 2}
    assert counted[1].code == counted[3].code == "malformed_batch"


def test_a_decoding_bug_is_its_callers_alone(monkeypatch):
    import dpdist.serve._group_bodies as bodies

    def broken(item, pending):
        raise RuntimeError("a bug")

    monkeypatch.setattr(bodies, "_decoded", broken)
    items = [Arrival("c", "a" * 32, "0" * 64, None, 0, 0, pending=PendingBody(PROTOCOL, b"junk", "application/json", LIMITS)),
             Arrival("c", "b" * 32, "0" * 64, None, 0, 0, pending=PendingBody(PROTOCOL, record([1]),
                                                                              "application/octet-stream", LIMITS))]
    committed, places, refused = decode_pending(items)
    assert len(committed) == 1 and places == [None, 0] and isinstance(refused[0], RuntimeError)

