"""One-record bodies of a group alike but for their values (``_alike_records``) get what ``decode_body`` gives each alone.

A group of one-report records of one length (file id = batch id), with one body
that differs from them in one way: another CRC of the same width, a leading
zero, another file id, upper-case hex, another dtype, a report out of range,
another config, a batch id that is not ASCII, a right CRC with leading zeros,
another length.  Each body gets the batch or the refusal that
:func:`dpdist.serve._ingest.decode_body` gives it alone, and the bodies alike
are read with one check of a body of their length.
"""

from __future__ import annotations

import json
import struct
import zlib

import pytest

from dpdist import local
from dpdist.serve._group import Arrival
from dpdist.serve._group_bodies import PendingBody, decode_pending
from dpdist._guard._refusals import Refusal
from group_decode_support import (
    BINARY,
    GRR,
    LIMITS,
    PROTOCOL,
    assert_group_outcomes_are_each_alone,
    assert_same_outcome,
    decoded_alone,
    raw_record,
    record,
)


def _alike_variants() -> list[tuple[bytes, str]]:
    """One-report records of one length with file id = batch id, and bodies of that length that differ from them
    in one way each (every one must get what decode_body gives it alone)."""
    ids = [f"{k:032x}" for k in range(1, 13)]
    valid = [(record([k % 8], batch_id), batch_id) for k, batch_id in enumerate(ids)]
    body, batch_id = valid[0]
    start = body.index(b'"crc32": ') + len(b'"crc32": ')
    width = body.index(b",", start) - start
    crc = int(body[start : start + width])
    other_crc = str((crc + 1) % 10**width).rjust(width, "1").encode()
    upper = "ABCDEF" + "0" * 26
    variants = [
        (body[:start] + other_crc + body[start + width :], batch_id),  # a CRC of another payload, same width
        (body[:start] + b"0" + body[start + 1 : start + width] + body[start + width :], batch_id),  # leading zero
        (body, "d" * 32),  # the file id of another batch
        (body.replace(batch_id.encode(), upper.encode()), upper),  # upper-case hex: not the plain form
        (body.replace(b'"|u1"', b'"|i1"'), batch_id),  # another dtype, same length
        (b"", "c" * 32),  # (below: a report out of range, its CRC right: the group's reports are validated alone)
        (record([1], "b" * 32, protocol=local.from_config({**GRR, "epsilon": 2.0})), "b" * 32),  # another config
        (body.replace(batch_id.encode(), b"1" * 31 + b"\xff"), "1" * 31 + "\xff"),  # a batch id that is not ASCII
    ]
    header = json.loads(body[struct.calcsize("<8sHI") : -1])  # the header of a record of one one-byte report
    variants[5] = (raw_record(header | {"crc32": zlib.crc32(b"\x09"), "file_id": "c" * 32}, b"\x09"), "c" * 32)
    short = next(value for value in range(8) if len(str(zlib.crc32(bytes([value])))) < width)  # a CRC of fewer digits
    padded = str(zlib.crc32(bytes([short]))).rjust(width, "0").encode()
    variants.append((body[:start] + padded + body[start + width : -1] + bytes([short]), batch_id))  # its CRC, leading zeros
    return valid + [variant for variant in variants if len(variant[0]) == len(body)] + [
        (body + b"x", "9" * 32)]  # another length


@pytest.mark.parametrize("variant", [None, *range(10)], ids=["all-valid", "other-crc", "leading-zero", "other-file-id",
                                                           "upper-case-id", "other-dtype", "out-of-range", "other-config",
                                                           "non-ascii-id", "right-crc-leading-zeros", "other-length"])
def test_bodies_alike_but_for_their_values_are_read_at_once_each_as_alone(variant, monkeypatch):
    from dpdist.serve import _group_bodies

    everything = _alike_variants()
    assert len({len(body) for body, _ in everything[:-1]}) == 1 and len(everything) == 22
    bodies = everything[:12] + ([] if variant is None else [everything[12 + variant]])
    bodies.insert(5, bodies.pop())  # the odd one among the others, not last
    checked = []
    original = _group_bodies._plain_record
    monkeypatch.setattr(_group_bodies, "_plain_record", lambda *args, **kwargs: checked.append(1) or original(*args, **kwargs))
    for _ in range(2):
        checked.clear()
        _each_alone(bodies)
        assert len(checked) <= 2  # the first of the length checked alone, the others against it (the odd one alone)


def test_bodies_longer_than_the_bound_are_each_checked_on_their_own(monkeypatch):
    from dpdist.serve import _alike_records, _group_bodies

    bodies = _alike_variants()[:12]
    checked = []
    original = _group_bodies._plain_record
    monkeypatch.setattr(_group_bodies, "_plain_record", lambda *args, **kwargs: checked.append(1) or original(*args, **kwargs))
    monkeypatch.setattr(_alike_records, "MAX_ALIKE_BYTES", len(bodies[0][0]) - 1)
    items = [Arrival("c", batch_id, "0" * 64, None, 0, 0, pending=PendingBody(PROTOCOL, body, BINARY,
                                                                             LIMITS)) for body, batch_id in bodies]
    committed, places, refused = decode_pending(items)
    assert len(checked) == 12 and not refused and all(isinstance(item, Arrival) for item in committed)
    for (body, batch_id), item in zip(bodies, items):
        assert_same_outcome(item.batch, decoded_alone(body, BINARY, batch_id))


def _each_alone(bodies: list[tuple[bytes, str]]) -> None:
    """``bodies`` (binary body, batch id) decoded in one group: each has its outcome alone."""
    assert_group_outcomes_are_each_alone([(body, BINARY, batch_id) for body, batch_id in bodies])


def _escaped(body: bytes, key: bytes, spelled: bytes) -> bytes:
    """``body`` with the header key ``key`` spelled ``spelled`` (a JSON escape: the same key to a parser), the header's
    length fixed."""
    length = struct.unpack_from("<I", body, 10)[0]
    raw = body[14 : 14 + length].replace(key, spelled, 1)
    return body[:10] + struct.pack("<I", len(raw)) + raw + body[14 + length :]


@pytest.mark.parametrize("key, spelled", [(b'"file_id"', b'"file\\u005fid"'), (b'"crc32"', b'"crc\\u0033\\u0032"')])
def test_a_key_spelled_with_an_escape_is_read_as_the_parse_reads_it(key, spelled):
    """A header whose ``file_id`` or ``crc32`` key is spelled with a JSON escape parses to the
    same header, but the bytes hold no ``"file_id"``: bodies carrying the first one's file id under other batch ids, or
    its CRC over another payload, were taken as alike (accepted) where each alone is refused."""
    first_id = "0" * 31 + "1"
    first = _escaped(record([1], file_id=first_id), key, spelled)
    others = [(first, "0" * 31 + str(index)) for index in range(2, 6)]  # the same file id under other batch ids
    payload_swapped = [(first[:-1] + bytes([first[-1] ^ 1]), first_id)] * 3  # another report, the first one's CRC
    _each_alone([(first, first_id), *others, *payload_swapped])


def test_a_key_given_twice_plain_then_escaped_is_never_remembered_by_its_plain_value():
    """JSON keeps the last of a duplicated key: a header memo keyed by the plain one took the body's own batch id
    where the parse reads the escaped one's (the first body, both keys its own id, was remembered; the others, the
    plain key their own id and the escaped one the first's, were accepted where each alone is refused)."""
    first_id = "0" * 31 + "1"
    body = record([1], file_id=first_id)
    length = struct.unpack_from("<I", body, 10)[0]
    raw = body[14 : 14 + length]
    doubled = raw[:-1] + b', "file\\u005fid": "' + first_id.encode() + b'"}'
    bodies = [(body[:10] + struct.pack("<I", len(doubled)) + doubled + body[14 + length :], first_id)]  # remembered
    for index in range(2, 8):
        batch_id = "0" * 31 + str(index)
        own = doubled.replace(first_id.encode(), batch_id.encode(), 1)  # the plain key holds the body's own batch id
        bodies.append((body[:10] + struct.pack("<I", len(own)) + own + body[14 + length :], batch_id))
    _each_alone(bodies)


def test_a_body_whose_dtype_numpy_cannot_parse_is_refused_alone_not_its_group():
    """A dtype such as ``",u1"`` made numpy's descr parser raise SyntaxError, which failed every
    body of the group with a 500; it is a malformed record, refused as one."""
    bodies = [(record([1], file_id="0" * 31 + str(index)), "0" * 31 + str(index)) for index in range(1, 6)]
    bad, batch_id = bodies[2]
    bodies[2] = (bad.replace(b'"|u1"', b'",u1"', 1), batch_id)
    assert isinstance(decoded_alone(bodies[2][0], BINARY, batch_id), Refusal)
    _each_alone(bodies)


def test_the_parts_of_a_group_s_valid_reports_are_what_each_part_s_rows_validate_to_alone():
    """The batches a group's validated reports are cut into (made without the frozen dataclass's ``__init__``) are what
    validating each body's rows alone gives, field by field, and still frozen."""
    import dataclasses

    import numpy as np

    from dpdist.serve._group_bodies import _parts

    rows = np.array([1, 7, 0, 3, 3, 5], dtype=PROTOCOL.report_format.dtype)
    sizes = [1, 2, 3]
    parts = _parts(PROTOCOL.validate_reports(rows), sizes)
    starts = [0, 1, 3]
    for part, start, size in zip(parts, starts, sizes):
        alone = PROTOCOL.validate_reports(rows[start : start + size])
        assert_same_outcome(part, alone)
        assert type(part) is type(alone) and vars(part).keys() == vars(alone).keys()
        with pytest.raises(dataclasses.FrozenInstanceError):
            part.n_read = 5  # type: ignore[misc]


@pytest.mark.parametrize("edit", [
    (b'"shape": [1]', b'"shape": [1000000000000000000000000000000]'),  # a size past int64: OverflowError failed the group
    (b'"|u1"', b'"(1,)u1"'),  # a sub-array dtype: its rows would not have the shape said (ValueError: a 500)
    (b'"shape": [1]', b'"shape": [true]'),  # not sizes: int() took them as 1
    (b'"shape": [1]', b'"shape": [1.5]'),
], ids=["shape-past-int64", "sub-array-dtype", "shape-true", "shape-fraction"])
def test_a_header_whose_sizes_or_dtype_are_no_report_batch_s_is_refused_alone_not_its_group(edit):
    bodies = [(record([1], file_id="0" * 31 + str(index)), "0" * 31 + str(index)) for index in range(1, 6)]
    bad, batch_id = bodies[2]
    prefix = struct.calcsize("<8sHI")
    header, payload = bad[prefix:-1], bad[-1:]  # the header of a record of one one-byte report, and its payload
    assert edit[0] in header
    bodies[2] = (raw_record(header.replace(*edit, 1), payload), batch_id)  # its length field says the new length
    refusal = decoded_alone(bodies[2][0], BINARY, batch_id)
    assert isinstance(refusal, Refusal) and refusal.status == 400, refusal
    _each_alone(bodies)


def test_a_later_group_is_read_with_the_template_an_earlier_group_s_first_body_left(monkeypatch):
    """Reading the first body of every group alone was about 40 us of the committer's group at 16 connections: its
    template serves the later groups checked against the same protocol and limits, each body still getting what it
    gets alone, and no other protocol or limit reads with it."""
    import dataclasses

    from dpdist.serve import _alike_records, _group_bodies

    checked = []
    original = _group_bodies._plain_record
    monkeypatch.setattr(_group_bodies, "_plain_record", lambda *args, **kwargs: checked.append(1) or original(*args, **kwargs))
    monkeypatch.setattr(_alike_records, "TEMPLATES", {})
    everything = _alike_variants()
    _each_alone(everything[:6])
    assert len(checked) == 1  # the first body alone, the others against it
    checked.clear()
    _each_alone(everything[6:12])  # the next group: no body read alone
    assert checked == []
    for variant in everything[12:]:  # a body that differs, alone in its group: what it gets alone
        _each_alone([variant])
    # under another limit (fewer reports a batch) or another protocol object, nothing read is reused
    other_limits = dataclasses.replace(LIMITS, max_batch_work=LIMITS.max_batch_work // 2)
    for protocol, limits in ((PROTOCOL, other_limits), (local.from_config(dict(PROTOCOL.config())), LIMITS)):
        checked.clear()
        items = [Arrival("c", batch_id, "0" * 64, None, 0, 0, pending=PendingBody(protocol, body, BINARY, limits))
                 for body, batch_id in everything[:3]]
        decode_pending(items)
        assert len(checked) == 1 and all(item.batch is not None for item in items)
