"""Domains whose arrays would not fit are refused when the protocol is built.

``dbitflippm``, ``l-grr``, ``loloha``, ``l-osue`` (and every protocol whose report or
aggregate holds a number per item) accepted ``domain_size`` up to 2^31 - 1, then
allocated 16-32 GiB for the aggregate (or 8 GiB of uniforms for one unary report) at
the first batch.  The limit is one public constant, ``dpdist.local.MAX_ALLOCATION_BYTES``
(2 GiB for one array); the error names ``domain_size``, its value, the memory and the
largest allowed value.  Sketch protocols (``cms``, ``hcms``, ``flh``) keep reports and
tables that do not grow with the domain and stay usable on huge domains; FLH's estimate
of every item is checked when asked for.
"""

from __future__ import annotations

import re
import tracemalloc

import numpy as np
import pytest

from conformance._examples import EXAMPLES
from dpdist import _validation, local
from dpdist._validation import Optional
from dpdist.errors import InvalidParameterError
from dpdist.local._registry import registered_class
from dpdist.testing import population

LIMIT = 2**31


def _params(name: str, domain_size: int) -> dict:
    """The parameters ``name`` needs (those without a default), from its first conformance example, at ``domain_size``."""
    cls = registered_class(name)
    required = [key for key, rule in cls._constraints.items()
                if key not in cls._defaults and not isinstance(rule, Optional) and key != "domain_size"]
    return {**{key: EXAMPLES[name][0][key] for key in required}, "domain_size": domain_size}


def _bytes_per_item(name: str) -> int:
    """What ``name`` states one item of its largest array costs (0: nothing grows with the domain)."""
    return local.make(name, **_params(name, 16))._item_bytes()


#: every registered frequency protocol, by what one item of its largest array costs: those whose report, aggregate
#: or estimate holds a number per item, and the sketches whose arrays do not grow with the domain (the registry's, so
#: a new protocol is checked with no list to join; test_the_limit_... measures that a protocol states enough)
GROWING = {name: _bytes_per_item(name) for name in local.available("frequency") if _bytes_per_item(name) > 0}
SKETCHES = tuple(name for name in local.available("frequency") if _bytes_per_item(name) == 0)


def test_named_protocols_state_their_arrays():
    """Pins of what some protocols state (their largest array: int64 counts, HR's and dBitFlipPM's 16-byte rows,
    CP's matrix of 500 measurements per item); sketches' arrays do not grow with the domain."""
    assert (GROWING["grr"], GROWING["hr"], GROWING["dbitflippm"], GROWING["cp"]) == (8, 16, 16, 8 * 500)
    assert {"cms", "hcms", "flh"} <= set(SKETCHES)
    assert local.MAX_ALLOCATION_BYTES == LIMIT == 2 * 2**30


@pytest.mark.parametrize("domain_size", [2**31 - 1, "just above"])
@pytest.mark.parametrize("name", sorted(GROWING))
def test_a_domain_over_the_limit_is_refused_when_built(name, domain_size):
    largest = LIMIT // GROWING[name]
    d = largest + 1 if domain_size == "just above" else domain_size
    with pytest.raises(InvalidParameterError) as raised:
        local.make(name, **_params(name, d))
    message = str(raised.value)
    assert "'domain_size'" in message and f"{d:,}" in message, message
    assert f"{d * GROWING[name] / 2**30:.1f} GiB" in message and "2.0 GiB" in message, message
    assert f"largest allowed domain_size is {largest:,}" in message, message


@pytest.mark.parametrize("name", sorted(GROWING))
def test_the_limit_is_one_constant(monkeypatch, name):
    # a smaller limit: every growing protocol is built at its largest domain and refuses one more item
    limit = 2**24
    monkeypatch.setattr(_validation._shared, "MAX_ALLOCATION_BYTES", limit)
    largest = limit // GROWING[name]
    with pytest.raises(InvalidParameterError, match=f"largest allowed domain_size is {largest:,}"):
        local.make(name, **_params(name, largest + 1))
    if name != "cp":  # CP's own matrix cap (2^25 cells) is below the limit at its default size
        assert local.make(name, **_params(name, largest)).domain_size == largest


# 0.2-1.7 CPU-s each under tracemalloc (10.8 in all): the fast loop keeps the refusal and the build at the limit above
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(set(GROWING) - {"cp"}))
def test_a_protocol_at_the_limit_works_within_it(monkeypatch, name):
    # privatize, aggregate and estimate at the largest domain a smaller limit allows; the arrays stay within it
    limit = 2**24
    monkeypatch.setattr(_validation._shared, "MAX_ALLOCATION_BYTES", limit)
    protocol = local.make(name, **_params(name, limit // GROWING[name]))
    values = population(protocol, 50)
    tracemalloc.start()
    try:
        reports = protocol.privatize(values[:1], rng=1)
        aggregator = protocol.aggregator().add(reports)
        protocol.estimate(protocol.simulate(values, rng=2))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert aggregator.n == 1
    # a few arrays at the limit, plus the fixed working blocks (e.g. OLH hashes 2^22 cells at once)
    assert peak <= 8 * limit + 2**26, f"{name}: peak {peak / 2**20:.1f} MiB at a limit of 16 MiB per array"


@pytest.mark.parametrize("name", SKETCHES)
def test_sketches_take_huge_domains_and_flh_checks_its_full_estimate(name):
    protocol = local.make(name, **_params(name, 2**31 - 1), **({"hash_count": 16} if name == "flh" else {}))
    values = np.array([5, 2**31 - 2, 5, 17])
    aggregator = protocol.aggregator().add(protocol.privatize(values, rng=0))
    assert aggregator.n == 4
    if name == "flh":
        assert protocol.simulate(values, rng=1).n == 4  # the exact sampler no longer counts every item
        with pytest.raises(InvalidParameterError, match=re.escape("'domain_size' parameter of FLH.estimate is 2,147,483,647")):
            protocol.estimate(aggregator)
        assert protocol.support_counts_of(aggregator, [5, 17]).shape == (2,)
    else:
        assert protocol.frequencies_of(aggregator, [5]).shape == (1,)


def test_flh_simulate_of_a_huge_domain_draws_what_the_dense_sampler_draws():
    # fewer users than items: the sampler takes the items present only, and consumes the
    # stream exactly like the dense sampler (binomial(0, p) draws nothing)
    protocol = local.make("flh", epsilon=1.0, domain_size=50, hash_count=8)
    values = np.array([3, 3, 7, 49, 0, 3])
    generator = np.random.default_rng(4)
    kept = generator.binomial(np.bincount(values, minlength=50), protocol._keep)
    items = np.flatnonzero(kept)
    dense = protocol.sample_table(items, kept[items], values.size - kept.sum(), generator)
    np.testing.assert_array_equal(protocol.simulate(values, rng=4).statistic, dense)


def test_count_packed_bits_no_longer_needs_256_bytes_per_item():
    from dpdist.local._reports import count_packed_bits

    bits = np.random.default_rng(0).random((3, 2**20 + 5)) < 0.5
    packed = np.packbits(bits, axis=1)
    tracemalloc.start()
    try:
        counts = count_packed_bits(packed, bits.shape[1])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(counts, bits.sum(axis=0))
    assert peak < 32 * 2**20, f"{peak / 2**20:.1f} MiB for 2^20 items (was 516 MiB)"
