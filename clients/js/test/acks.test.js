// What the client takes as the acknowledgement of a batch (acks.js, under a hostile or
// broken service): only the service's answer naming the campaign and the batch id sent.  Any other 200 (another batch's,
// another campaign's, a captive portal's page, a body cut short, JSON without the acknowledgement's fields) was taken as
// "counted" and the batch was dropped from the outbox, or threw a SyntaxError.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, ServiceError } from '../src/index.js';
import { deterministicSource } from './helpers.js';

const CONFIG = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 };
const right = (campaign, batchId) => ({ campaign, batch_id: batchId, n_read: 1, accepted: 1, rejected: {}, duplicate: false });
/** Answers of 200 that are no acknowledgement of the batch sent. */
const WRONG = [
  (campaign) => Response.json(right(campaign, 'another-batch')), // a stale or cached acknowledgement
  (campaign, batchId) => Response.json(right('other', batchId)), // a misrouted server's campaign
  () => new Response('<html>Welcome to the airport Wi-Fi</html>', { headers: { 'Content-Type': 'text/html' } }), // a captive portal
  () => new Response('{"campaign": "c1", "batch_id": "', { headers: { 'Content-Type': 'application/json' } }), // cut short
  () => Response.json({}),
  (campaign, batchId) => Response.json({ campaign, batch_id: batchId }),
  (campaign, batchId) => Response.json({ ...right(campaign, batchId), accepted: 'all' }),
  () => Response.json([1, 2]),
];

/** A fake server: the config, then the batches' PUTs answered from ``answers`` in turn (then right answers). */
function fakeServer(answers, { config = { campaign: 'c1', state: 'open', config: CONFIG } } = {}) {
  const puts = [];
  const counted = [];
  const fetch = async (url, { method, body }) => {
    if (method === 'GET') return Response.json(config);
    puts.push({ url, body: new Uint8Array(body) });
    const [, campaign, batchId] = url.match(/\/api\/campaigns\/([^/]+)\/batches\/([^/]+)$/);
    const answer = answers[puts.length - 1];
    if (answer) return answer(campaign, batchId);
    counted.push({ campaign, batchId, body: new Uint8Array(body) });
    return Response.json(right(campaign, batchId));
  };
  return { fetch, puts, counted };
}

function sameRequest(puts) {
  for (const put of puts) {
    assert.equal(put.url, puts[0].url);
    assert.deepEqual(put.body, puts[0].body);
  }
}

test('a batch is resent with the same id and bytes until the service acknowledges that batch, and counted once', async () => {
  const server = fakeServer(WRONG);
  const client = new Client('http://127.0.0.1:9', 'c1', { fetch: server.fetch, retryDelayMs: 1, memoStorage: null, locks: null, source: deterministicSource(61) });
  const acks = await client.submitMany([1, 2, 3]);
  assert.equal(server.puts.length, WRONG.length + 1);
  sameRequest(server.puts);
  assert.equal(server.counted.length, 1);
  assert.deepEqual(acks, [right('c1', server.puts[0].url.split('/').at(-1))]);
  assert.equal(client.unsentReports, 0);
});

test('answers that never acknowledge: a ServiceError wrong_ack naming the server, the batch kept for flush()', async () => {
  const portal = fakeServer(Array(10).fill(WRONG[2]));
  const client = new Client('http://127.0.0.1:9', 'c1', { fetch: portal.fetch, retryDelayMs: 1, retries: 2, memoStorage: null, locks: null, source: deterministicSource(62) });
  const error = await client.submitMany([1, 2, 3]).then(() => null, (thrown) => thrown);
  assert.ok(error instanceof ServiceError, String(error));
  assert.equal(error.code, 'wrong_ack');
  assert.match(error.message, /no acknowledgement of batch id '[0-9a-f]{32}' of campaign 'c1': HTTP 200 with a body that is not JSON/);
  assert.match(error.message, /is http:\/\/127\.0\.0\.1:9 the dpdist service/);
  assert.equal(portal.puts.length, 3);
  sameRequest(portal.puts);
  assert.equal(client.unsentReports, 3); // not dropped: the next flush sends it again
  const server = fakeServer([]);
  client._fetch = server.fetch; // the service answers again
  const acks = await client.flush();
  assert.equal(acks.length, 1);
  assert.equal(server.puts.length, 1);
  sameRequest([...portal.puts, ...server.puts]);
  assert.equal(client.unsentReports, 0);
});

test('a campaign in rounds is acknowledged by the round\'s campaign', async () => {
  const server = fakeServer([(campaign, batchId) => Response.json(right('c1', batchId))],
    { config: { campaign: 'c1', state: 'open', config: CONFIG, submit_to: 'c1-r1' } });
  const client = new Client('http://127.0.0.1:9', 'c1', { fetch: server.fetch, retryDelayMs: 1, memoStorage: null, locks: null, source: deterministicSource(63) });
  const [ack] = await client.submitMany([4]);
  assert.equal(ack.campaign, 'c1-r1');
  assert.equal(server.puts.length, 2);
});

test('a relay\'s answer must name the campaign and the report sent', async () => {
  const { CipherSuite, DhkemX25519HkdfSha256, HkdfSha256, Aes128Gcm } = await import('../src/vendor/hpke.js');
  const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
  const pair = await suite.kem.generateKeyPair();
  const raw = new Uint8Array(await suite.kem.serializePublicKey(pair.publicKey));
  const keys = Buffer.concat([Buffer.from([0, 41, 0, 0, 0x20]), raw, Buffer.from([0, 4, 0, 1, 0, 1])]); // one configuration, key id 0
  const relay = { ohttp: keys.toString('base64url'), url: 'http://relay.test' };
  const identity = new TextEncoder().encode(JSON.stringify({ campaign: 'c1', config: CONFIG, relay, issuer: null, colluding: 0, delta: 1e-8 }));
  const pin = Buffer.from(await crypto.subtle.digest('SHA-256', identity)).toString('hex');
  const puts = [];
  const fetch = async (url, { method, body }) => {
    if (method === 'GET' && url.endsWith('/identity')) return new Response(identity, { headers: { 'Content-Type': 'application/json' } });
    if (method === 'GET') return Response.json({ campaign: 'c1', state: 'open', config: CONFIG, relay: { ...relay, pin } });
    puts.push({ url, body: new Uint8Array(body) });
    const reportId = url.split('/').at(-1);
    const answers = [{ campaign: 'c1', report_id: 'other.0', duplicate: false }, { ok: true }, { campaign: 'c1', report_id: reportId, duplicate: false }];
    return Response.json(answers[Math.min(puts.length, 3) - 1], { status: 202 });
  };
  const client = new Client('http://collector.test', 'c1', { fetch, retryDelayMs: 1, memoStorage: null, locks: null, source: deterministicSource(64) });
  const [ack] = await client.submitMany([5]);
  assert.deepEqual([ack.relayed, ack.duplicates], [1, 0]);
  assert.equal(puts.length, 3);
  sameRequest(puts);
});

test('an acknowledgement counting more reports than were sent is none; every answer of dpdist serve counts', async () => {
  // accepted 1000000 for a batch of 3 reports was taken as counted and resolved
  const counts = (accepted, nRead, rejected = {}, duplicate = false) => (campaign, batchId) =>
    Response.json({ campaign, batch_id: batchId, accepted, rejected, duplicate, ...(nRead === null ? {} : { n_read: nRead }) });
  const more = [counts(1000000, 1000000), counts(4, null), counts(3, 1000000), counts(3, 2), counts(3, 4, { out_of_range: 1 })];
  const real = counts(1, 3, { out_of_range: 2, missing: 2 }, true); // a row may count under several reasons; a duplicate
  const server = fakeServer([...more, real]);
  const client = new Client('http://127.0.0.1:9', 'c1', { fetch: server.fetch, retryDelayMs: 1, memoStorage: null, locks: null, source: deterministicSource(62) });
  const acks = await client.submitMany([1, 2, 3]);
  assert.equal(server.puts.length, more.length + 1);
  sameRequest(server.puts);
  assert.equal(acks.length, 1);
  assert.equal(acks[0].accepted, 1);
});

test('a redirect whose body names the batch is no acknowledgement, and says where it pointed', async () => {
  // the refusal read "HTTP 302: undefined"
  const ackBody = (campaign, batchId) => JSON.stringify(right(campaign, batchId));
  for (const [headers, said] of [[{ Location: 'http://portal.example/login' }, 'a redirect to "http://portal.example/login", not followed'],
    [{}, 'a redirect without a Location']]) {
    const server = fakeServer([(campaign, batchId) => new Response(ackBody(campaign, batchId), { status: 302, headers: { 'Content-Type': 'application/json', ...headers } })]);
    const client = new Client('http://127.0.0.1:9', 'c1', { fetch: server.fetch, retryDelayMs: 1, memoStorage: null, locks: null, source: deterministicSource(63) });
    const error = await client.submitMany([1, 2, 3]).then(() => null, (failure) => failure);
    assert.ok(error instanceof ServiceError, String(error));
    assert.equal(error.status, 302);
    assert.ok(error.message.includes(`HTTP 302: ${said}`) && !error.message.includes('undefined'), error.message);
    assert.equal(server.counted.length, 0);
  }
});
