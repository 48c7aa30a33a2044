"""What the relay asks of the collector (``dpdist.relay._collector``): a delivery's deadline.  The bounded reads
themselves are tests/relay/test_forwarder.py's (the relay's behaviour) and tests/http/test_deadline.py's; what the relay
logs, tests/test_known_secrets.py's."""

from __future__ import annotations

import pytest

pytest.importorskip("starlette")

from dpdist.relay._collector import delivery_deadline  # noqa: E402


def test_a_deliverys_deadline_grows_with_its_batch():
    assert delivery_deadline(60.0, 14) == 60.0 and delivery_deadline(60.0, 1 << 20) == 76.0
    assert delivery_deadline(0.5, 0) == 0.5

