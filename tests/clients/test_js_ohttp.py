"""The JavaScript client through a standard Oblivious HTTP relay (clients/js/src/ohttp.js), served: node and Chromium.

``dpdist serve`` (the gateway) behind the forwarding-only RFC 9458 relay of tests/ohttp_relay_support.py; the device
is the JS client given the gateway's key configuration out of band (``ohttp: {relay, keys}``), so that its config
request goes through the relay too.  Its unit tests (RFC 9458 Appendix A byte for byte, RFC 9292's examples, npm's
bhttp-js) are clients/js/test/ohttp.test.js.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import httpx
import pytest

pytest.importorskip("pyhpke")

from ohttp_relay_support import OhttpRelayProcess  # noqa: E402
from ops_support import chromium_devtools, required, run_page  # noqa: E402
from serve_support import ADMIN_TOKEN, ServerProcess  # noqa: E402

from dpdist.client import AdminClient  # noqa: E402
from dpdist._ohttp import KeyConfig, decode_key_list, encode_key_list, public_key_of  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DRIVER = ROOT / "tests" / "relayed_submit_driver.mjs"
CONFIG = {"protocol": "grr", "epsilon": 0.1, "domain_size": 4}  # one device, many reports: within its budget of 10


def _parties(tmp_path, *, cors=False):
    collector = ServerProcess(str(tmp_path / "c.sqlite")).start()
    relay = OhttpRelayProcess(collector.url + "/ohttp/gateway", lifetime=180, cors=cors).start()
    with AdminClient(collector.url, admin_token=ADMIN_TOKEN) as operator:
        operator.create_campaign("commute", CONFIG)
        operator.open_campaign("commute")
    return collector, relay, httpx.get(collector.url + "/ohttp/keys").content


def _n(collector) -> int:
    with AdminClient(collector.url, admin_token=ADMIN_TOKEN) as operator:
        return operator.campaign("commute")["n"]


def _node(collector, relay, keys, values):
    request = {"server": collector.url, "campaign": "commute", "values": values, "retries": 1, "batchSize": 7,
               "ohttp": {"relay": relay.url + "/ohttp", "keys": keys.hex() if keys is not None else None}}
    result = subprocess.run([required("node"), str(DRIVER), json.dumps(request)], capture_output=True, text=True, timeout=180)
    return result.returncode, json.loads(result.stdout.strip().splitlines()[-1]) if result.stdout.strip() else result.stderr


@pytest.mark.slow  # dpdist serve, a relay and node in subprocesses
def test_node_submits_through_a_standard_relay_counted_once_and_refuses_a_swapped_key(tmp_path):
    collector, relay, keys = _parties(tmp_path)
    try:
        status, answer = _node(collector, relay, keys, [0, 1, 2, 3] * 5)
        assert status == 0, answer
        assert sum(ack["accepted"] for ack in answer["acks"]) == 20 and len(answer["acks"]) == 3
        status, answer = _node(collector, relay, None, [1, 2])  # the keys from the campaign's config (fetched directly)
        assert status == 0 and sum(ack["accepted"] for ack in answer["acks"]) == 2, answer
        (mine,) = decode_key_list(keys)
        swapped = encode_key_list([KeyConfig(mine.key_id, public_key_of(b"\x05" * 32))])
        status, answer = _node(collector, relay, swapped, [3])  # its config request does not open at the gateway
        assert status == 3 and answer["error"]["code"] == "not_decapsulated", answer
        assert _n(collector) == 22
    finally:
        relay.kill()
        collector.kill()


BROWSER_DEVICE = """
(async () => {
  const { Client } = await import('/static/dpdist-client/index.js');
  const keys = Uint8Array.from(%(keys)s.match(/../g), (pair) => parseInt(pair, 16));
  const client = new Client(location.origin, 'commute', { ohttp: { relay: %(relay)s, keys }, retries: 1, batchSize: 4 });
  try {
    const acks = await client.submitMany([0, 1, 2, 3, 3, 2]);
    return { accepted: acks.reduce((total, ack) => total + ack.accepted, 0), batches: acks.length };
  } catch (error) {
    return { error: `${error.name} ${error.code}: ${error.message}` };
  }
})()
"""


@pytest.mark.slow  # dpdist serve, a relay and Chromium in subprocesses
def test_chromium_submits_through_a_standard_relay_of_another_origin(tmp_path):
    """The page's origin is the collector's; the relay is another origin (another port), which answers the CORS
    preflight of ``message/ohttp-req`` as a relay serving browsers must."""
    collector, relay, keys = _parties(tmp_path, cors=True)
    try:
        with chromium_devtools() as devtools:
            (mine,) = decode_key_list(keys)
            swapped = encode_key_list([KeyConfig(mine.key_id, public_key_of(b"\x05" * 32))])
            page = run_page(devtools, collector.url + "/static/dpdist-client/index.js", [
                ["eval", BROWSER_DEVICE % {"keys": json.dumps(given.hex()), "relay": json.dumps(relay.url + "/ohttp")}]
                for given in (keys, swapped)
            ])
        assert page["values"][0] == {"accepted": 6, "batches": 2}, page
        assert page["values"][1]["error"].startswith("ServiceError not_decapsulated"), page  # it went through the relay
        assert _n(collector) == 6
    finally:
        relay.kill()
        collector.kill()


@pytest.mark.slow  # dpdist serve, a relay and node in subprocesses
def test_node_holding_the_old_keys_loses_nothing_across_a_rotation_and_its_retirement(tmp_path):
    """The operations page's rotation with a node device given the key file before it: counted during the overlap,
    refused before anything is sent once the old key is retired, counted after it fetches the key file again."""
    collector, relay, old_keys = _parties(tmp_path)
    admin = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    try:
        assert httpx.post(collector.url + "/api/ohttp/keys", headers=admin).status_code == 201
        status, answer = _node(collector, relay, old_keys, [0, 1, 2])  # the overlap: the old key still taken
        assert status == 0 and sum(ack["accepted"] for ack in answer["acks"]) == 3, answer
        (old,) = decode_key_list(old_keys)
        assert httpx.delete(f"{collector.url}/api/ohttp/keys/{old.key_id}", headers=admin).status_code == 200
        status, answer = _node(collector, relay, old_keys, [3, 3])
        assert status == 3 and answer["error"]["code"] == "ohttp_key_mismatch", answer
        refetched = httpx.get(collector.url + "/ohttp/keys").content
        status, answer = _node(collector, relay, refetched, [3, 3])
        assert status == 0 and sum(ack["accepted"] for ack in answer["acks"]) == 2, answer
        assert _n(collector) == 5
    finally:
        relay.kill()
        collector.kill()
