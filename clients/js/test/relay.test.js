// Through a relay: each report sealed to the collector's key (HPKE) and sent alone; the sealed bytes' layout.
// tests/relay/test_app.py opens what this client seals with Python's dpdist._wire._envelope.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client } from '../src/index.js';
import { RELAY_CONTENT_TYPE, relayReportPath, sealForRelay } from '../src/relay.js';
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '../src/vendor/hpke.js';
import { deterministicSource } from './helpers.js';

const CONFIG = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 };

async function relayKey() {
  const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
  const pair = await suite.kem.generateKeyPair();
  const raw = new Uint8Array(await suite.kem.serializePublicKey(pair.publicKey));
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', raw));
  const relay = {
    ids: [0x0020, 0x0001, 0x0001],
    public_key: Buffer.from(raw).toString('base64url'),
    key_id: Buffer.from(digest.subarray(0, 8)).toString('hex'),
  };
  return { suite, pair, relay };
}

async function open({ suite, pair }, campaign, sealed) {
  const header = sealed.subarray(0, 9);
  const recipient = await suite.createRecipientContext({
    recipientKey: pair.privateKey, enc: sealed.slice(9, 41).buffer, info: new TextEncoder().encode(`dpdist relay v1\0${campaign}`),
  });
  const plain = new Uint8Array(await recipient.open(sealed.slice(41).buffer, header));
  const length = new DataView(plain.buffer).getUint32(1);
  return { kind: plain[0], body: plain.subarray(5, 5 + length), padding: plain.subarray(5 + length) };
}

test('a sealed report: version, key id, enc, ciphertext of a padded plaintext bound to its campaign', async () => {
  const key = await relayKey();
  const body = new TextEncoder().encode('{"reports": [3]}');
  const sealed = await sealForRelay(key.relay, 'c1', body, 'application/json');
  assert.equal(sealed.length, 1 + 8 + 32 + 256 + 16);
  assert.equal(sealed[0], 1);
  assert.equal(Buffer.from(sealed.subarray(1, 9)).toString('hex'), key.relay.key_id);
  const opened = await open(key, 'c1', sealed);
  assert.equal(opened.kind, 2);
  assert.deepEqual(opened.body, body);
  assert.ok(opened.padding.every((byte) => byte === 0));
  await assert.rejects(open(key, 'c2', sealed)); // another campaign's info: does not open
  const longer = await sealForRelay(key.relay, 'c1', new TextEncoder().encode('{"reports": [12345]}'), 'application/json');
  assert.equal(longer.length, sealed.length); // the relay sees one size
  await assert.rejects(sealForRelay({ ...key.relay, key_id: '00'.repeat(8) }, 'c1', body, 'application/json'), /key id/);
  await assert.rejects(sealForRelay({ ...key.relay, ids: [0x0010, 1, 1] }, 'c1', body, 'application/json'), /suite/);
});

test('a client of a relayed campaign sends each report alone, sealed, to the relay its identity names, under <batch id>.<row>, with its pin', async () => {
  const key = await relayKey();
  const relay = { ...key.relay, url: 'http://relay.test/' };
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
    const [, batchId, row] = put.url.match(/^http:\/\/relay\.test\/relay\/v1\/campaigns\/c1\/reports\/([0-9a-f]{32})\.(\d)$/);
    ids.add(batchId);
    assert.equal(put.headers['Content-Type'], RELAY_CONTENT_TYPE);
    assert.equal(put.headers['Dpdist-Pin'], pin); // the identity the report was made under, for the relay to compare
    assert.equal(put.headers.Authorization, undefined); // a campaign without an issuer: no token, and no submit token
    const opened = await open(key, 'c1', put.body);
    assert.equal(opened.kind, 1); // a dpdist binary record of one report, without a batch id inside
    const headerLength = new DataView(opened.body.buffer, opened.body.byteOffset).getUint32(10, true);
    const header = JSON.parse(new TextDecoder().decode(opened.body.subarray(14, 14 + headerLength)));
    assert.deepEqual(header.shape, [1]);
    assert.equal(header.file_id ?? null, null);
    assert.ok(Number(row) < 3);
  }
  assert.equal(ids.size, 2);
  assert.equal(relayReportPath('c 1', 'a.b'), '/relay/v1/campaigns/c%201/reports/a.b');
});
