"""dpdist's own protocols as randomizers: black box on their reports, white box on their exact channel."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ..errors import DPDistError, EachValueANewUserWarning, InvalidParameterError
from .._validation import InstanceOf, Integer, Optional, validate_params
from ..local import LocalProtocol
from ..local._report_kinds import PackedBitReports
from ..testing import channel_inputs
from ._hash_family import HashFamily
from ._inputs import MAX_INPUTS
from ._randomizer import Randomizer

__all__ = ["is_protocol", "protocol_randomizer"]

#: The most outputs of a channel the white-box audit enumerates.
MAX_CHANNEL_OUTPUTS = 1 << 16


def is_protocol(value: Any) -> bool:
    return isinstance(value, LocalProtocol)


@validate_params({"protocol": InstanceOf(LocalProtocol, "a dpdist local protocol (dpdist.local.make(...))"),
                  "reports": Optional(Integer(low=1))}, owner="audit.protocol_randomizer")
def protocol_randomizer(protocol: LocalProtocol, reports: int | None = None) -> Randomizer:
    """A dpdist protocol as a :class:`Randomizer` (``privatize``, seeded by the audit's generator).

    Its domain is its items, its bounds or (several attributes) the conformance kit's grid of
    records; its claim ``protocol.epsilon``.  When its channel is finite and small (at most
    65,536 outputs on the audited inputs), outputs are placed by ``report_index`` and the
    audit is white box too; bit-packed reports are unpacked into bits for the black box (its
    columns mode then finds the two bits that tell two items apart).

    ``reports=T`` (a memoized protocol: ``l-grr``, ``l-osue``, ``loloha``) audits one device
    holding one value over ``T`` reports: its memo drawn once, ``T`` instantaneous responses
    of it; the claim is then the protocol's guarantee for any number of reports of one value
    (``epsilon_longitudinal``: Arcolezi et al. 2022, the memo's budget).
    """
    kind = protocol.tags.kind
    if kind in ("frequency", "heavy_hitters"):
        domain: Any = int(getattr(protocol, "domain_size"))
    elif kind == "numerical":
        low, high = getattr(protocol, "bounds")
        domain = (float(low), float(high))
    else:
        domain = _designed_records(channel_inputs(protocol))
    if reports is not None:
        return _longitudinal(protocol, int(reports), domain)
    inputs = channel_inputs(protocol) if not isinstance(domain, int) or domain <= 16 else np.arange(2)
    # a frequency oracle has at least d outputs: past the cap its channel is not even built (d = 10^9 would be GBs)
    finite = not (isinstance(domain, int) and domain > MAX_CHANNEL_OUTPUTS) and _finite_channel(protocol, inputs)

    def sample(values, rng):
        if not protocol.tags.memoized:  # only a memoized protocol warns (catching costs ~3 us a call, one value each)
            return protocol.privatize(values, rng=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EachValueANewUserWarning)
            return protocol.privatize(values, rng=rng)

    features: Callable[[Any], np.ndarray] | None = None
    if isinstance(protocol.report_format, PackedBitReports):  # bits: the columns mode finds the bits that tell
        bits = protocol.report_format.bits

        def unpacked(reports: Any) -> np.ndarray:
            return np.unpackbits(np.asarray(reports, dtype=np.uint8), axis=1)[:, :bits]

        features = unpacked
    elif finite:
        features = protocol.report_index

    hashes = getattr(protocol, "report_hashes", None)
    family = None if hashes is None else HashFamily(hashes, f"{protocol.name}'s Carter-Wegman family, g = "
                                                            f"{getattr(protocol, 'hash_range', '?')}")
    return Randomizer(
        sample=sample,
        name=f"dpdist {protocol.name}",
        epsilon=float(protocol.epsilon),
        domain=domain,
        features=features,
        channel=protocol.channel if finite else None,
        output_index=protocol.report_index if finite else None,
        notes=() if finite else (f"{protocol.name}: no small finite channel here, black box only",),
        hash_family=family,
        repeated_value_calls=_privatizes_one_value(protocol, inputs),
    )


def _designed_records(grid: np.ndarray) -> np.ndarray:
    """The conformance grid's records, or 64 of them when it has more (the audit compares at most 64): both ends
    of its order (every attribute or key absent, every one at its top) and evenly spaced records between."""
    if len(grid) <= MAX_INPUTS:
        return grid
    return grid[np.unique(np.linspace(0, len(grid) - 1, MAX_INPUTS).round().astype(np.int64))]


def _finite_channel(protocol: LocalProtocol, inputs: np.ndarray) -> bool:
    if not protocol.tags.finite_channel:
        return False
    try:
        channel = protocol.channel(inputs[:2])
        if channel.shape[1] > MAX_CHANNEL_OUTPUTS:
            return False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EachValueANewUserWarning)
            protocol.report_index(protocol.privatize(inputs[:2], rng=0))
    except (NotImplementedError, DPDistError, MemoryError):
        return False
    return True


def _privatizes_one_value(protocol: LocalProtocol, inputs: np.ndarray) -> bool:
    """Whether a call of k copies of a value is k one-value calls: dpdist's ``privatize`` randomizes each value alone,
    except where a batch is split as a whole (WAVELET's ``assignment="fixed"``), which refuses a call of one value."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EachValueANewUserWarning)
            protocol.privatize(inputs[:1], rng=0)
    except (DPDistError, MemoryError):
        return False
    return True


def _longitudinal(protocol: LocalProtocol, reports: int, domain: Any) -> Randomizer:
    if not protocol.tags.memoized or not hasattr(protocol, "instantaneous_response"):
        raise InvalidParameterError(
            f"The 'reports' argument is for memoized protocols whose memo is one permanent response (l-grr, l-osue, "
            f"loloha). Got {reports!r} for {protocol.name}."
        )
    p: Any = protocol
    hashed = hasattr(p, "_bucket")
    if hashed and not hasattr(p, "_report"):
        raise InvalidParameterError(f"The 'reports' argument is not supported for {protocol.name} (its memo is per bucket).")

    def sample(values, rng):
        values = p._check_values(values)
        if hashed:
            randomness = p._draw_user_randomness(values.size, rng)
            memo = p.permanent_response(p._bucket(randomness, values), rng)
            rows = [p._report(randomness, p.instantaneous_response(memo, rng)) for _ in range(reports)]
        else:
            memo = p.permanent_response(values, rng)
            rows = [p.instantaneous_response(memo, rng) for _ in range(reports)]
        return np.stack([np.asarray(row).reshape(values.size, -1) for row in rows], axis=1)

    features: Callable[[Any], np.ndarray] | None = None
    if isinstance(protocol.report_format, PackedBitReports):
        bits = protocol.report_format.bits

        def unpacked_histories(outputs: Any) -> np.ndarray:
            packed = np.asarray(outputs, dtype=np.uint8)
            return np.unpackbits(packed, axis=2)[:, :, :bits].reshape(len(packed), -1)

        features = unpacked_histories

    return Randomizer(
        sample=sample,
        name=f"dpdist {protocol.name} x{reports} reports",
        epsilon=float(p.epsilon_longitudinal),
        domain=domain,
        features=features,
        notes=(f"one device holding one value over {reports} reports (its memo drawn once)",),
    )
