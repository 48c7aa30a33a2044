"""What the tests of the committer's group decoding share (tests/serve/test_group_bodies.py, test_alike_records.py):
a GRR protocol, its records, and the rule they check - every body decoded in a group has the outcome it has alone."""

from __future__ import annotations

import json
import struct

import numpy as np

from dpdist import io, local
from dpdist._io._binary import RECORD_MAGIC, RECORD_VERSION
from dpdist.serve._group import Arrival, Refused
from dpdist.serve._group_bodies import PendingBody, decode_pending, settle
from dpdist.serve._ingest import decode_body
from dpdist.serve._limits import Limits
from dpdist._guard._refusals import Refusal

GRR = {"protocol": "grr", "epsilon": 1.0, "domain_size": 8}
PROTOCOL = local.from_config(GRR)
LIMITS = Limits()
BINARY = "application/octet-stream"


def record(values, file_id=None, protocol=PROTOCOL) -> bytes:
    """A record of ``values`` privatized with a fixed seed."""
    return io.encode_record(protocol, protocol.privatize(np.asarray(values), rng=7), file_id)


def raw_record(header: dict | bytes, payload: bytes) -> bytes:
    """A record with exactly this header (a dict dumped as Python does, or bytes as given)."""
    raw = header if isinstance(header, bytes) else json.dumps(header, sort_keys=True).encode()
    return struct.pack("<8sHI", RECORD_MAGIC, RECORD_VERSION, len(raw)) + raw + payload


def decoded_alone(body: bytes, content_type: str, batch_id: str):
    """The body decoded on its own (:func:`decode_body`): its batch, or the refusal it raised."""
    try:
        return decode_body(PROTOCOL, body, content_type, batch_id, LIMITS)
    except Refusal as refusal:
        return refusal


def assert_same_outcome(got, expected) -> None:
    """The same refusal (kind, code, detail), or the same decoded batch (counts, config, reports and their dtype)."""
    if isinstance(expected, Refusal):
        assert isinstance(got, Refusal), got
        assert (type(got), got.code, got.detail) == (type(expected), expected.code, expected.detail)
        return
    assert (got.rejected, got.n_read, got.n_rejected_rows, got.first_invalid_row, got.config) == (
        expected.rejected, expected.n_read, expected.n_rejected_rows, expected.first_invalid_row, expected.config)
    assert np.array_equal(got.reports, expected.reports) and got.reports.dtype == expected.reports.dtype


def assert_group_outcomes_are_each_alone(bodies: list[tuple[bytes, str, str]]) -> None:
    """``bodies`` (body, content type, batch id) decoded in one group: each committed with the batch, accepted and
    read counts it has alone, or refused as alone."""
    items = [Arrival("c", batch_id, "0" * 64, None, 0, 0, pending=PendingBody(PROTOCOL, body, kind, LIMITS))
             for body, kind, batch_id in bodies]
    committed, places, refused = decode_pending(items)
    outcomes = settle([None if isinstance(item, Refused) else "committed" for item in committed], places, refused)
    for (body, kind, batch_id), item, outcome in zip(bodies, items, outcomes):
        expected = decoded_alone(body, kind, batch_id)
        if isinstance(expected, Refusal):
            assert_same_outcome(outcome, expected)
        else:
            assert outcome == "committed", batch_id
            assert_same_outcome(item.batch, expected)
            assert (item.accepted, item.n_read) == (expected.n_read - expected.n_rejected_rows, expected.n_read)
