"""A campaign as the service knows it: its public id, protocol config, state and aggregate; the checks of its inputs.

Ids, configs and caps come from outside (an admin's request, a device's URL) and
are checked here, each refusal an :class:`~dpdist._guard._refusals.InvalidRequest` naming the
field, the value and what is allowed.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._io._binary import _MAX_HEADER_BYTES
from .._json import most_values_within, values_upper_bound
from ..errors import DPDistError
from ..local import Aggregator, from_config
from ._limits import DEFAULT_MAX_STATISTIC_BYTES
from .._guard._refusals import InvalidRequest
from .._wire._report_bound import header_bytes

__all__ = [
    "CampaignRow",
    "Creation",
    "Campaign",
    "CAMPAIGN_ID",
    "BATCH_ID",
    "BOUND_BATCH_ID",
    "STATES",
    "ARRIVAL_RESOLUTION_MS",
    "check_campaign_id",
    "check_batch_id",
    "check_config",
    "check_max_reports",
    "token_sha256",
    "protocol_of",
]

CAMPAIGN_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
BATCH_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
#: batch ids that dpdist clients derive from random file ids or from content: unique per service
BOUND_BATCH_ID = re.compile(r"[0-9a-f]{32}(\.part[0-9]+)?|sha256-[0-9a-f]{1,93}")
STATES = ("created", "open", "closed")
#: arrival times are kept to the minute (the dashboard's history needs no finer)
ARRIVAL_RESOLUTION_MS = 60_000


@dataclass(frozen=True)
class CampaignRow:
    """A campaign's settings (its row of ``campaigns``): what admission and ingest need, no aggregate."""

    id: str
    config: dict
    state: str
    submit_token_sha256: str | None
    keep_reports: bool
    export_file_id: str
    created_ms: int
    opened_ms: int | None
    closed_ms: int | None
    statistic_dtype: str
    max_reports: int | None = None
    enrollment: bool = False

    @property
    def protocol(self):
        return protocol_of(self.config)

    def check_submit_token(self, token: str | None) -> bool:
        """Whether ``token`` opens this campaign for submission (constant-time compare)."""
        if self.submit_token_sha256 is None:
            return True
        return hmac.compare_digest(token_sha256(token), self.submit_token_sha256)


@dataclass(frozen=True)
class Creation:
    """Which creation of a campaign the database holds (``export_file_id``, new at each creation) and what a device's
    token is checked against: its row of ``campaigns`` without the config, and whether it is collected through a relay
    or runs in rounds (:meth:`~._store.Store.creation`: read without parsing the config)."""

    id: str
    export_file_id: str
    state: str
    submit_token_sha256: str | None
    enrollment: bool
    relayed: bool = False
    rounds: bool = False

    def made(self, row: CampaignRow) -> bool:
        """Whether ``row`` was read from this creation, with these token settings."""
        return (row.export_file_id, row.submit_token_sha256, row.enrollment) == (
            self.export_file_id, self.submit_token_sha256, self.enrollment)


@dataclass(frozen=True)
class Campaign(CampaignRow):
    """A campaign with its aggregate's counts (``n``, ``rejected``, ``refused``, ``batches``) and, when it was read,
    its statistic."""

    n: int = 0
    rejected: dict[str, int] = field(default_factory=dict)
    refused: dict[str, int] = field(default_factory=dict)
    batches: int = 0
    statistic: np.ndarray | None = field(default=None, repr=False)

    def aggregator(self):
        """The campaign's aggregate as a validated :class:`~dpdist.local.Aggregator` (read with its statistic)."""
        if self.statistic is None:
            raise ValueError("internal: the campaign was read without its statistic")
        return Aggregator.from_dict(
            {"config": self.config, "n": self.n, "statistic": self.statistic, "rejected": self.rejected}, self.protocol
        )

    def summary(self) -> dict[str, Any]:
        """Public fields for the admin API (never the token hash)."""
        return {
            "campaign": self.id,
            "state": self.state,
            "config": self.config,
            "submit_token_required": self.submit_token_sha256 is not None,
            "keep_reports": self.keep_reports,
            "created_at": iso_time(self.created_ms),
            "opened_at": iso_time(self.opened_ms),
            "closed_at": iso_time(self.closed_ms),
            "n": self.n,
            "rejected": dict(self.rejected),
            "refused_batches": dict(self.refused),
            "batches": self.batches,
            "max_reports": self.max_reports,
            "enrollment": self.enrollment,
        }


_PROTOCOLS: dict[str, Any] = {}
#: the same config object (a row admission reuses for many batches): its protocol without serializing the config
_BY_OBJECT: dict[int, tuple[dict, Any]] = {}


def protocol_of(config: dict):
    """The protocol of a stored config, built once per process (building one can be costly, e.g. a wavelet design)."""
    seen = _BY_OBJECT.get(id(config))
    if seen is not None and seen[0] is config:  # the entry holds the config: its id is not reused meanwhile
        return seen[1]
    protocol = _protocol_of_json(config)
    if len(_BY_OBJECT) > 256:
        _BY_OBJECT.clear()
    _BY_OBJECT[id(config)] = (config, protocol)
    return protocol


def _protocol_of_json(config: dict):
    key = json.dumps(config, sort_keys=True)
    protocol = _PROTOCOLS.get(key)
    if protocol is None:
        protocol = from_config(json.loads(key))
        if len(_PROTOCOLS) > 256:
            _PROTOCOLS.clear()
        _PROTOCOLS[key] = protocol
    return protocol


def iso_time(ms: int | None) -> str | None:
    if ms is None:
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ms / 1000)) + f".{ms % 1000:03d}Z"


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def arrival_ms() -> int:
    """Now, rounded down to :data:`ARRIVAL_RESOLUTION_MS` (the only arrival time stored)."""
    return now_ms() // ARRIVAL_RESOLUTION_MS * ARRIVAL_RESOLUTION_MS


def token_sha256(token: str | None) -> str:
    return hashlib.sha256((token or "").encode()).hexdigest()


def check_campaign_id(campaign_id) -> str:
    if not isinstance(campaign_id, str) or not CAMPAIGN_ID.fullmatch(campaign_id):
        raise InvalidRequest(
            "invalid_campaign_id",
            f"A campaign id must be 1-64 characters of a-z, 0-9, '_' and '-', starting with a letter or digit. "
            f"Got {campaign_id!r}.",
        )
    return campaign_id


def check_batch_id(batch_id) -> str:
    if not isinstance(batch_id, str) or not BATCH_ID.fullmatch(batch_id):
        raise InvalidRequest(
            "invalid_batch_id", f"A batch id must be 1-128 characters of A-Z, a-z, 0-9, '.', '_' and '-'. Got {batch_id!r}."
        )
    return batch_id


def check_config(config, max_statistic_bytes: int = DEFAULT_MAX_STATISTIC_BYTES, devices_read: int | None = None):
    """The protocol of a campaign config, or an :class:`InvalidRequest` naming what is wrong.

    A protocol whose aggregate (``statistic_size`` entries of ``statistic_dtype``)
    would take more than ``max_statistic_bytes`` is refused before anything of
    that size is allocated (the server holds one copy per campaign and per batch
    being added); so is one whose public config answer devices could not read
    (:func:`check_devices_read`, within ``devices_read`` bytes).
    """
    if not isinstance(config, dict):
        raise InvalidRequest("invalid_config", f"The 'config' must be a JSON object (a protocol config). Got {config!r}.")
    try:
        protocol = from_config(config, new=True)  # its left-out parameters take today's defaults, stored with it
        size = int(protocol.statistic_size)
        needed = size * np.dtype(protocol.statistic_dtype).itemsize
        if needed <= max_statistic_bytes:
            protocol.report_format.dtype  # a protocol whose reports have no wire format is refused here
    except (DPDistError, TypeError, ValueError) as error:
        raise InvalidRequest("invalid_config", f"The 'config' is not a valid protocol config: {error}") from None
    if needed > max_statistic_bytes:
        raise InvalidRequest(
            "statistic_too_large",
            f"The 'config' ({protocol.name}) needs a statistic of {size:,} {np.dtype(protocol.statistic_dtype).name} "
            f"counts, {_bytes_text(needed)} of memory per copy; this server allows at most "
            f"{_bytes_text(max_statistic_bytes)} (--max-statistic-bytes). Use a smaller domain.",
        )
    check_devices_read(config, protocol, devices_read)
    _check_record_header(protocol)
    return protocol


def _check_record_header(protocol) -> None:
    """Refuse a config whose binary record header, which carries it, is past what the service reads of one (1 MiB):
    every batch of its devices would be refused as ``malformed_batch`` (150,000 labels were taken)."""
    size = header_bytes(protocol)
    if size > _MAX_HEADER_BYTES:
        raise InvalidRequest(
            "config_too_large",
            f"The 'config' ({protocol.name}) makes record headers of {_bytes_text(size)} (a report record carries its "
            f"config); this server reads at most {_bytes_text(_MAX_HEADER_BYTES)} of one, so no batch could be counted. "
            "Use fewer or shorter labels, or a domain_size without labels.",
        )


#: the most bytes of a campaign's public config answer every device client reads (Python's
#: ``dpdist._http._deadline.CONFIG_ANSWER_BYTES``, a test checks they are equal; the JavaScript and Java clients read 4 MiB)
DEVICE_CONFIG_BYTES = 4 << 20
#: room for the answer's other fields (state, limits, a relayed campaign's identity, OHTTP keys)
_CONFIG_ANSWER_ROOM = 64 << 10


def check_devices_read(config: dict, protocol, most_bytes: int | None = None) -> None:
    """Refuse a config whose public answer (``GET .../config``: the config and its client view, which repeats its
    labels) devices would refuse as larger than they read or holding more values (1.4 million labels,
    9.8 MB of config, were taken and no device could submit); ``most_bytes``: what they read (None:
    :data:`DEVICE_CONFIG_BYTES`; a relay passes on pages of at most 1 MiB)."""
    most_bytes = DEVICE_CONFIG_BYTES if most_bytes is None else most_bytes
    texts = [json.dumps(config), json.dumps(protocol.client_view())]
    size = sum(map(len, texts)) + _CONFIG_ANSWER_ROOM
    containers, values = (sum(counts) for counts in zip(*map(values_upper_bound, texts)))
    most_values, most_containers = most_values_within(most_bytes)
    if size > most_bytes or values > most_values - 4096 or containers > most_containers - 4096:
        raise InvalidRequest(
            "config_too_large",
            f"The 'config' ({protocol.name}) makes a public config answer of {_bytes_text(size)} holding up to "
            f"{values:,} JSON values (it carries the config and its client view); devices read at most "
            f"{_bytes_text(most_bytes)} and {most_values:,} values{' through a relay' if most_bytes < DEVICE_CONFIG_BYTES else ''}. Use fewer or shorter labels, or a "
            "domain_size without labels.",
        )


def _bytes_text(size: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} bytes"


def check_max_reports(value) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 2**53:
        raise InvalidRequest("invalid_max_reports", f"'max_reports' must be null or an integer in [1, 2^53]. Got {value!r}.")
    return value
