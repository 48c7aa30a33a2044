"""The service says once, in its log, when one client address carries most of the batches.

Devices behind one address (a proxy missing from --forwarded-allow-ips, a carrier NAT, a simulation on one
machine) share one rate-limit bucket and get 429 together; the log says why and which options change it.
"""

from __future__ import annotations

import asyncio
import logging
import uuid

import httpx
import pytest

pytest.importorskip("starlette")

from dpdist.serve import create_app  # noqa: E402 - after the extra's check
from dpdist.serve._address_share import WINDOW, AddressShare  # noqa: E402

ADMIN = "admin-token-0123456789"


def _warnings(caplog) -> list[str]:
    return [record.getMessage() for record in caplog.records
            if record.name == "dpdist.serve" and record.levelno == logging.WARNING and "One client address" in record.getMessage()]


def test_one_address_sending_most_batches_is_said_once_naming_the_options(tmp_path, caplog):
    app = create_app(str(tmp_path / "c.sqlite"), admin_token=ADMIN)

    async def send(count: int) -> list[int]:
        transport = httpx.ASGITransport(app, client=("203.0.113.7", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://collector") as client:
            return [(await client.put(f"/api/campaigns/nothing/batches/{uuid.uuid4().hex}", content=b"x")).status_code
                    for _ in range(count)]

    with caplog.at_level(logging.WARNING, logger="dpdist.serve"):
        statuses = asyncio.run(send(WINDOW - 1))
        assert _warnings(caplog) == []  # not before a whole block
        statuses += asyncio.run(send(2 * WINDOW + 1))
    assert 429 in statuses  # the default rate limit (20/s, bursts of 100) throttles the one address
    (warning,) = _warnings(caplog)
    assert f"sent {WINDOW} of the last {WINDOW} batches" in warning
    assert "--forwarded-allow-ips" in warning and "--rate-limit 20 batches/s" in warning and "--rate-burst 100" in warning
    assert "203.0.113.7" not in warning  # no address in the log


def test_many_addresses_or_no_rate_limit_say_nothing(caplog):
    with caplog.at_level(logging.WARNING, logger="dpdist.serve"):
        spread = AddressShare(20.0, 100)
        for index in range(4 * WINDOW):  # the busiest address sends a third of every block
            spread.saw(f"198.51.100.{index % 3}")
        unlimited = AddressShare(0.0, 100)  # --rate-limit 0: one address may send everything
        for _ in range(4 * WINDOW):
            unlimited.saw("127.0.0.1")
        ipv6 = AddressShare(20.0, 100)  # one host's /64 is one address
        for index in range(WINDOW):
            ipv6.saw(f"2001:db8::{index:x}")
    assert not spread.warned and not unlimited.warned and ipv6.warned
    assert len(_warnings(caplog)) == 1
