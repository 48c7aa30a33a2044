"""How many reports of a fetched config fit one request body: a campaign config is an instruction to the device.

A device builds its protocol from the config a server answers and sizes its
reports by it, so a hostile server or proxy answering the config GET with a huge
domain (``domain_size`` = 2*10^7: ~530 bytes on the wire) made ``dpdist submit`` of
300 values allocate gigabytes.  Before anything is randomized, the
device computes the encoded bytes of one report (a binary record, as
:func:`dpdist._io._binary.encode_record` writes it) and

* refuses a config whose one report cannot fit the body the config answer says
  the service takes (``max_body_bytes``), capped by :data:`DEFAULT_MAX_BODY_BYTES`,
  which the server cannot raise, and a config whose statistic is over what the
  service accepts at campaign creation by default (:data:`DEFAULT_MAX_STATISTIC_BYTES`)
  (``unexpected_answer``, naming the field and the size);
* sends batches of at most :func:`rows_per_body` reports, so the memory of
  randomizing and encoding one batch is bounded by that body, and no more reports than
  the answer's ``max_batch_reports`` (what the collector's counting of one batch may cost: :func:`reports_within`).

The service's default limits are written here once: its options' defaults (:mod:`dpdist.serve._limits`) and a
device's ceilings are the same numbers.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from .._io._binary import _MAX_HEADER_BYTES, _PREFIX
from .._shown import shown
from ..errors import IncompatibleStateError, InvalidParameterError, ServiceRefusedError
from ..local import from_config

__all__ = ["protocol_of_answer", "DEFAULT_MAX_BODY_BYTES", "DEFAULT_MAX_STATISTIC_BYTES", "DEFAULT_MAX_BATCH_WORK",
           "AGGREGATE_PASSES", "aggregate_work", "reports_within", "record_bytes", "header_bytes", "body_limit",
           "check_statistic", "check_header", "rows_per_body", "batch_reports"]

#: the largest request body the service reads by default (``--max-body-bytes``) and a device sends, whatever the config
#: answer says: a service with a larger limit still gets every report, in more batches
DEFAULT_MAX_BODY_BYTES = 16 << 20
#: the largest campaign statistic (``statistic_size`` x its dtype) the service accepts at creation by default
#: (``--max-statistic-bytes``) and a device takes part in: an OUE report is then at most 1 MiB
DEFAULT_MAX_STATISTIC_BYTES = 64 << 20
#: element operations a batch's reports may cost the collector to count by default (``--max-batch-work``: about 0.5 s of
#: the committer for OLH's hashing); a report file's parts hold at most what it allows, the same on every run
DEFAULT_MAX_BATCH_WORK = 1 << 26
#: operations of ``--max-batch-work`` a count of a campaign's aggregate costs a group (a zeroed statistic, the
#: counts added to it, its delta encoded: about 8 ns a count)
AGGREGATE_PASSES = 8

#: a file id as :func:`dpdist._io._identity.new_file_id` draws it (its length is what matters; nothing is drawn)
_PLACEHOLDER_ID = "0" * 32
#: the largest CRC-32 (its digits are what matter)
_MAX_CRC = 0xFFFFFFFF


def aggregate_work(protocol) -> int:
    """What a group's aggregate of one campaign costs the committer to build, add and encode, in the operations
    ``--max-batch-work`` counts: :data:`AGGREGATE_PASSES` a count (65-72 ms for GRR at d = 8*10^6, where an OLH
    report's operation is 5-7 ns)."""
    return AGGREGATE_PASSES * int(protocol.statistic_size)


def reports_within(protocol, max_batch_work: int = DEFAULT_MAX_BATCH_WORK) -> int:
    """The most reports one batch of ``protocol`` may hold: those whose counting, with its campaign's aggregate
    (:func:`aggregate_work`), costs at most ``max_batch_work`` element operations (``protocol.aggregation_work`` each),
    at least one."""
    return max(1, (max_batch_work - aggregate_work(protocol)) // max(1, protocol.aggregation_work))


def record_bytes(protocol, rows: int) -> int:
    """Bytes of one binary record of ``rows`` reports of ``protocol``, with a file id (as ``encode_record`` writes it;
    at least those bytes: its CRC is counted at its longest)."""
    report_format = protocol.report_format
    payload = rows * report_format.row_bytes
    fields: dict[str, Any] = {
        "config": protocol.config(), "dtype": np.lib.format.dtype_to_descr(report_format.dtype),
        "shape": [rows, *report_format.row_shape], "payload_bytes": payload, "crc32": _MAX_CRC,
        "file_id": _PLACEHOLDER_ID,
    }
    return _PREFIX.size + len(json.dumps(fields, sort_keys=True).encode()) + payload


def body_limit(document: Any, campaign: str) -> int:
    """The body the config answer says the service takes (``max_body_bytes``), capped by :data:`DEFAULT_MAX_BODY_BYTES`
    (an answer without it: the cap); a value that is not an int >= 1 is refused (``unexpected_answer``)."""
    stated = _stated_count(document, "max_body_bytes", campaign)
    return DEFAULT_MAX_BODY_BYTES if stated is None else min(stated, DEFAULT_MAX_BODY_BYTES)


def rows_per_body(protocol, document: Any, campaign: str, wanted: int) -> int:
    """The most reports (at most ``wanted``, at least 1) whose binary record fits :func:`body_limit`; a config whose
    one report does not fit is refused (``unexpected_answer``, naming the config's field and the sizes) before
    anything is drawn."""
    check_statistic(protocol, campaign)
    check_header(protocol, campaign)
    limit = body_limit(document, campaign)
    one = record_bytes(protocol, 1)
    if one > limit:
        raise ServiceRefusedError(
            f"The config answer of campaign {campaign!r} describes {protocol.name} reports of {one} bytes each "
            f"('config': {_largest_field(protocol.config())}), more than one request body may hold ({limit} bytes: "
            f"'max_body_bytes' {_stated(document)}, at most {DEFAULT_MAX_BODY_BYTES} on this device); refused before "
            "anything was drawn or charged.", status=200, code="unexpected_answer")
    row_bytes = max(protocol.report_format.row_bytes, 1)
    rows = max(1, min(wanted, batch_reports(document, campaign), (limit - record_bytes(protocol, 0)) // row_bytes))
    while rows > 1 and record_bytes(protocol, rows) > limit:  # the digits of the shape: a few bytes
        rows -= 1
    return rows


def batch_reports(document: Any, campaign: str) -> int:
    """The most reports one batch may hold, as the config answer says (``max_batch_reports``: what counting them costs
    the collector, ``--max-batch-work``); an answer without it: no bound but the body's (as many as its bytes).  A value
    that is not an int >= 1 is refused (``unexpected_answer``)."""
    stated = _stated_count(document, "max_batch_reports", campaign)
    return DEFAULT_MAX_BODY_BYTES if stated is None else stated


def _stated_count(document: Any, field: str, campaign: str) -> int | None:
    """The config answer's count ``field`` (None when the answer has none); a value that is not an int >= 1 is refused
    (``unexpected_answer``: nothing drawn or sent)."""
    stated = document.get(field) if isinstance(document, dict) else None
    if stated is not None and (not isinstance(stated, int) or isinstance(stated, bool) or stated < 1):
        raise ServiceRefusedError(
            f"The config answer of campaign {campaign!r} gives {field!r} = {str(stated)[:40]!r}, not an int >= 1; "
            "nothing was drawn or sent.", status=200, code="unexpected_answer")
    return stated


def header_bytes(protocol) -> int:
    """Bytes of the header of a binary record of ``protocol`` (it carries the config: labels and all)."""
    return record_bytes(protocol, 0) - _PREFIX.size


def check_header(protocol, campaign: str) -> None:
    """Refuse (``unexpected_answer``) a config whose record header is past the 1 MiB a service reads of one
    (:data:`dpdist._io._binary._MAX_HEADER_BYTES`): every batch would be refused (150,000 labels)."""
    size = header_bytes(protocol)
    if size > _MAX_HEADER_BYTES:
        raise ServiceRefusedError(
            f"The config answer of campaign {campaign!r} describes {protocol.name} reports whose record header (it "
            f"carries the config) takes {size} bytes, more than the {_MAX_HEADER_BYTES} a service reads of one: no batch "
            "of them could be counted; refused before anything was drawn or charged.", status=200,
            code="unexpected_answer")


def check_statistic(protocol, campaign: str) -> None:
    """Refuse (``unexpected_answer``) a config whose statistic is over :data:`DEFAULT_MAX_STATISTIC_BYTES`: a campaign
    the service refuses to create at its default limits, whose reports and randomization grow with it."""
    size = int(protocol.statistic_size)
    needed = size * np.dtype(protocol.statistic_dtype).itemsize
    if needed > DEFAULT_MAX_STATISTIC_BYTES:
        raise ServiceRefusedError(
            f"The config answer of campaign {campaign!r} describes a campaign of {protocol.name} ('config': "
            f"{_largest_field(protocol.config())}) whose statistic takes {needed} bytes, more than the {DEFAULT_MAX_STATISTIC_BYTES} "
            "a device takes part in (the service's default --max-statistic-bytes); refused before anything was drawn "
            "or charged.", status=200, code="unexpected_answer")


def _stated(document: Any) -> str:
    stated = document.get("max_body_bytes") if isinstance(document, dict) else None
    return "absent" if stated is None else f"= {stated}"


def _largest_field(config: dict) -> str:
    """The config's largest integer field, e.g. ``domain_size = 20000000`` (what sizes its reports)."""
    numbers = [(value, key) for key, value in config.items() if isinstance(value, int) and not isinstance(value, bool)]
    if not numbers:
        return "its protocol"
    value, key = max(numbers)
    return f"{key} = {value}"


def protocol_of_answer(campaign: str, config: Any):
    """The protocol of the config a server answered for ``campaign``; one this dpdist cannot build (a parameter out of
    range, an unknown protocol, a version it does not read) is the server's answer refused (``unexpected_answer``, its
    text escaped and cut), not the caller's ``InvalidParameterError`` (a hostile config's
    parameter read as the app's own mistake, by the client and by ``dpdist submit``; so was a version)."""
    try:
        return from_config(config)
    except (InvalidParameterError, IncompatibleStateError) as error:  # a config of another version too
        raise ServiceRefusedError(
            f"The config answer of campaign {campaign!r} is not a config this dpdist can use: {shown(str(error), limit=400)} "
            "Is the server a "
            "dpdist service of a version this one reads? Nothing was drawn or sent.", status=200,
            code="unexpected_answer") from None
