"""What the relay asks of the collector (``dpdist.relay._collector``): a delivery's deadline, and what it logs of an
answer, escaped, masked and cut (attack 67 F13: a refusal was logged with the relay's token, ESC/BEL and a forged line).
The bounded reads themselves are tests/relay/test_forwarder.py's (the relay's behaviour) and tests/test_deadline.py's."""

from __future__ import annotations

import httpx
import pytest

pytest.importorskip("starlette")

from dpdist.relay._collector import delivery_deadline, logged  # noqa: E402

TOKEN = "relay-token-0123456789"


def test_a_deliverys_deadline_grows_with_its_batch():
    assert delivery_deadline(60.0, 14) == 60.0 and delivery_deadline(60.0, 1 << 20) == 76.0
    assert delivery_deadline(0.5, 0) == 0.5


def test_a_logged_answer_is_one_line_without_the_relays_token():
    request = httpx.Request("PUT", "http://collector/x", headers={"authorization": f"Bearer {TOKEN}"})
    answer = httpx.Response(400, request=request)
    text = f'x\x1b]0;PWNED\x07\n\x1b[2JINFO: fake {TOKEN} Basic dTpPSFNFQ1JFVA== http://u:pw@h/?token=abcdefgh ' + "y" * 900
    line = logged(text, answer, limit=300)
    assert line.isprintable() and len(line) <= 303
    for secret in (TOKEN, "dTpPSFNFQ1JFVA==", ":pw@", "abcdefgh"):
        assert secret not in line
    assert line.startswith("x\\x1b]0;PWNED\\x07\\n\\x1b[2JINFO: fake *** Basic ***") and line.endswith("...")
    assert TOKEN not in logged(f"bare {TOKEN}", secrets=(TOKEN,))
