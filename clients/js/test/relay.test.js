// Through a relay: each report an RFC 9458 request (message/ohttp-req) to the key configuration of the campaign's
// identity, sent alone; tests/wire/test_ohttp_report.py opens what this client encapsulates with Python's dpdist._wire._ohttp_report.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, ServiceError } from '../src/index.js';
import { REQUEST_CONTENT_TYPE, encapsulateForRelay, relayKeyConfig, relayReportPath } from '../src/relay.js';
import { deterministicSource } from './helpers.js';
import { ohttpKey, openReport } from './relayed-fakes.js';

const CONFIG = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 };

test('a report: key id 0 and the suite, enc, the HPKE-sealed report request of its campaign, one length for every report', async () => {
  const key = await ohttpKey();
  const config = relayKeyConfig({ ohttp: key.ohttp }, 'c1');
  const body = new TextEncoder().encode('{"reports": [3]}');
  const request = await encapsulateForRelay(config, 'c1', body, 'application/json');
  assert.deepEqual([...request.subarray(0, 7)], [0, 0, 0x20, 0, 1, 0, 1]);
  assert.equal(request.length, 7 + 32 + 1024 + 16); // a padded Binary HTTP request of 1024 bytes
  assert.deepEqual(await openReport(key, 'c1', request), body);
  assert.equal(await openReport(key, 'c2', request), null); // another campaign's report request: not this one's
  const longer = await encapsulateForRelay(config, 'c1', new TextEncoder().encode('{"reports": [12345]}'), 'application/json');
  assert.equal(longer.length, request.length); // the relay sees one size
  for (const relay of [{}, { ohttp: null }, { ohttp: 'AAAA' }]) {
    assert.throws(() => relayKeyConfig(relay, 'c1'), (error) => error instanceof ServiceError
      && error.code === (relay.ohttp === 'AAAA' ? 'ohttp_key_mismatch' : 'no_ohttp_key'));
  }
  await assert.rejects(encapsulateForRelay(config, 'c1', body, 'text/plain'), /binary records or JSON/);
});

test('a client of a relayed campaign sends each report alone, sealed, to the relay its identity names, under <batch id>.<row>, with its pin', async () => {
  const key = await ohttpKey();
  const relay = { ohttp: key.ohttp, url: 'http://relay.test/' };
  const identity = new TextEncoder().encode(JSON.stringify({ campaign: 'c1', config: CONFIG, relay, issuer: null, colluding: 0, delta: 1e-8 }));
  const pin = Buffer.from(await crypto.subtle.digest('SHA-256', identity)).toString('hex');
  const requests = [];
  const fetch = async (url, { method, headers, body }) => {
    requests.push({ url, method, headers, body: body ? new Uint8Array(body) : null });
    if (method === 'GET' && url.endsWith('/identity')) return new Response(identity, { headers: { 'Content-Type': 'application/json' } });
    // the config names the pin; its own config (epsilon) and relay are not what the device uses
    if (method === 'GET') return Response.json({ campaign: 'c1', state: 'open', config: { ...CONFIG, epsilon: 8 }, relay: { ...relay, url: 'http://elsewhere.test', pin } });
    return Response.json({ campaign: 'c1', report_id: url.split('/').at(-1), duplicate: false }, { status: 202 });
  };
  const client = new Client('http://collector.test', 'c1', { fetch, batchSize: 3, memoStorage: null, source: deterministicSource(4) });
  const acks = await client.submitMany([1, 2, 3, 4, 5]);
  assert.deepEqual(acks.map((ack) => ack.relayed), [3, 2]);
  assert.deepEqual(requests.filter((r) => r.method === 'GET').map((r) => r.url),
    ['http://collector.test/api/campaigns/c1/config', 'http://collector.test/api/campaigns/c1/identity']);
  assert.equal((await client.protocol()).epsilon, 1); // the identity's config
  const puts = requests.filter((r) => r.method === 'PUT');
  assert.equal(puts.length, 5);
  const ids = new Set();
  for (const put of puts) {
    const [, batchId, row] = put.url.match(/^http:\/\/relay\.test\/relay\/v1\/campaigns\/c1\/ohttp\/([0-9a-f]{32})\.(\d)$/);
    ids.add(batchId);
    assert.equal(put.headers['Content-Type'], REQUEST_CONTENT_TYPE);
    assert.equal(put.headers['Dpdist-Pin'], pin); // the identity the report was made under, for the relay to compare
    assert.equal(put.headers.Authorization, undefined); // a campaign without an issuer: no token, and no submit token
    const opened = await openReport(key, 'c1', put.body); // a dpdist binary record of one report, without a batch id inside
    const headerLength = new DataView(opened.buffer, opened.byteOffset).getUint32(10, true);
    const header = JSON.parse(new TextDecoder().decode(opened.subarray(14, 14 + headerLength)));
    assert.deepEqual(header.shape, [1]);
    assert.equal(header.file_id ?? null, null);
    assert.ok(Number(row) < 3);
  }
  assert.equal(ids.size, 2);
  assert.equal(relayReportPath('c 1', 'a.b'), '/relay/v1/campaigns/c%201/ohttp/a.b');
});
