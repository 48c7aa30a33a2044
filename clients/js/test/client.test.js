// Client against a scripted fetch: what is sent, batch ids, retries of the same bytes, errors.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client, InvalidParameterError, Ledger, PrivacyBudgetError, ServiceError, UnsupportedProtocolError, fromConfig } from '../src/index.js';
import { deterministicSource, memoryStorage } from './helpers.js';

const CONFIG = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 };

/** A fake server: answers GET config and PUT batches; ``script`` gives failures per PUT attempt. */
function fakeServer({ config = CONFIG, script = [], published = {} } = {}) {
  const requests = [];
  let puts = 0;
  const fetch = async (url, { method, headers, body }) => {
    requests.push({ url, method, headers, body: body ? new Uint8Array(body) : null });
    if (method === 'GET') return Response.json({ campaign: 'c1', state: 'open', config, ...published });
    const step = script[puts++];
    if (step === 'network') throw new TypeError('fetch failed');
    if (typeof step === 'number') return Response.json({ error: step === 409 ? 'campaign_not_open' : 'oops', detail: 'scripted' }, { status: step });
    if (typeof step === 'object') return Response.json(step.body, { status: step.status });
    const batchId = url.split('/').at(-1);
    return Response.json({ campaign: decodeURIComponent(url.split('/').at(-3)), batch_id: batchId, n_read: 1, accepted: 1, rejected: {}, duplicate: false });
  };
  return { fetch, requests };
}

/** Rounds' sizes that leave a device one round to draw: round ``k`` of ``of`` (a test's device answers it). */
function only(k, of) {
  return Array.from({ length: of }, (_, index) => (index === k - 1 ? 1 : 0));
}

function headerOf(body) {
  const length = new DataView(body.buffer, body.byteOffset).getUint32(10, true);
  return JSON.parse(new TextDecoder().decode(body.subarray(14, 14 + length)));
}

test('submit sends one binary record under a fresh batch id, with the token (not on the public config), and nothing else', async () => {
  const server = fakeServer();
  const client = new Client('http://127.0.0.1:9/', 'c1', { memoStorage: null, token: 'secret', fetch: server.fetch, source: deterministicSource(1) });
  const ack = await client.submit(5);
  assert.equal(ack.accepted, 1);
  assert.equal(server.requests.length, 2);
  const [get, put] = server.requests;
  assert.equal(get.url, 'http://127.0.0.1:9/api/campaigns/c1/config');
  assert.deepEqual(get.headers, { Accept: 'application/json' }); // the public config: no submit token
  assert.match(put.url, /^http:\/\/127\.0\.0\.1:9\/api\/campaigns\/c1\/batches\/[0-9a-f]{32}$/);
  assert.equal(put.method, 'PUT');
  assert.deepEqual(put.headers, { Accept: 'application/json', 'Content-Type': 'application/octet-stream', Authorization: 'Bearer secret' });
  const header = headerOf(put.body);
  assert.equal(header.file_id, put.url.split('/').at(-1));
  assert.deepEqual(header.config, fromConfig(CONFIG).config);
  assert.deepEqual(header.shape, [1]);
  assert.equal(put.body.length, 14 + new DataView(put.body.buffer).getUint32(10, true) + 1); // one byte: the report
});

test('a failed attempt is retried with the same bytes and batch id (network, 503, 409 not open)', async () => {
  const server = fakeServer({ script: ['network', 503, 409] });
  const client = new Client('', 'c1', { memoStorage: null, fetch: server.fetch, retryDelayMs: 1, source: deterministicSource(2) });
  const ack = await client.submit(3);
  const puts = server.requests.filter((r) => r.method === 'PUT');
  assert.equal(puts.length, 4);
  for (const put of puts) {
    assert.equal(put.url, puts[0].url);
    assert.deepEqual(put.body, puts[0].body);
  }
  assert.equal(ack.batch_id, puts[0].url.split('/').at(-1));
});

test('409 campaign_changed is retried with the same bytes and batch id; campaign_full is not', async () => {
  const changed = { status: 409, body: { error: 'campaign_changed', detail: 'created again' } };
  const server = fakeServer({ script: [changed, changed] });
  const client = new Client('', 'c1', { memoStorage: null, fetch: server.fetch, retryDelayMs: 1, source: deterministicSource(7) });
  const ack = await client.submit(4);
  const puts = server.requests.filter((r) => r.method === 'PUT');
  assert.equal(puts.length, 3);
  for (const put of puts) {
    assert.equal(put.url, puts[0].url);
    assert.deepEqual(put.body, puts[0].body);
  }
  assert.equal(ack.batch_id, puts[0].url.split('/').at(-1));

  const full = fakeServer({ script: [{ status: 409, body: { error: 'campaign_full', detail: 'full' } }] });
  const refused = new Client('', 'c1', { memoStorage: null, fetch: full.fetch, retryDelayMs: 1, source: deterministicSource(8) });
  await assert.rejects(refused.submit(1), (error) => error instanceof ServiceError && error.status === 409 && error.code === 'campaign_full');
  assert.equal(full.requests.filter((r) => r.method === 'PUT').length, 1);
});

test('a refusal is not retried and names the server error; giving up carries the batch', async () => {
  const refused = fakeServer({ script: [{ status: 400, body: { error: 'malformed_batch', detail: 'bad' } }] });
  const client = new Client('', 'c1', { memoStorage: null, fetch: refused.fetch, retryDelayMs: 1, source: deterministicSource(3) });
  await assert.rejects(client.submit(1), (error) => error instanceof ServiceError && error.status === 400 && error.code === 'malformed_batch' && /bad/.test(error.message));
  assert.equal(refused.requests.filter((r) => r.method === 'PUT').length, 1);

  const down = fakeServer({ script: ['network', 'network', 'network'] });
  const patient = new Client('', 'c1', { memoStorage: null, fetch: down.fetch, retries: 2, retryDelayMs: 1, source: deterministicSource(4) });
  await assert.rejects(patient.submit(2), (error) => {
    assert.ok(error instanceof ServiceError && /gave up after 3 attempts/.test(error.message));
    assert.match(error.batchId, /^[0-9a-f]{32}$/);
    assert.equal(error.batch.length, 1);
    return true;
  });
});

test('add() queues reports and sends full batches; a failed flush keeps its batch id for the next', async () => {
  const server = fakeServer({ script: ['network', 'network'] });
  const client = new Client('', 'c1', { memoStorage: null, fetch: server.fetch, batchSize: 3, retries: 1, retryDelayMs: 1, source: deterministicSource(5) });
  assert.deepEqual(await client.add(0), []);
  assert.deepEqual(await client.add(1), []);
  await assert.rejects(client.add(2), ServiceError); // two failing attempts
  assert.equal(client.unsentReports, 3);
  const [ack] = await client.flush();
  assert.equal(client.unsentReports, 0);
  const puts = server.requests.filter((r) => r.method === 'PUT');
  assert.equal(puts.length, 3);
  assert.equal(puts[2].url, puts[0].url, 'the retry of a failed flush keeps its batch id');
  assert.deepEqual(puts[2].body, puts[0].body);
  assert.deepEqual(headerOf(puts[2].body).shape, [3]);
  assert.equal(ack.batch_id, puts[0].url.split('/').at(-1));
  assert.deepEqual(await client.flush(), []);
});

test('submitMany sends ceil(n / batchSize) batches with distinct ids', async () => {
  const server = fakeServer();
  const client = new Client('', 'c1', { memoStorage: null, fetch: server.fetch, batchSize: 4, source: deterministicSource(6) });
  const acks = await client.submitMany([0, 1, 2, 3, 4, 5, 6, 7, 0, 1]);
  assert.equal(acks.length, 3);
  const puts = server.requests.filter((r) => r.method === 'PUT');
  assert.deepEqual(puts.map((p) => headerOf(p.body).shape[0]), [4, 4, 2]);
  assert.equal(new Set(puts.map((p) => p.url)).size, 3);
});

test('a campaign of an unsupported protocol is refused before anything is randomized or sent', async () => {
  const server = fakeServer({ config: { protocol: 'cp', version: 1, epsilon: 1, domain_size: 6 } });
  const client = new Client('', 'c1', { memoStorage: null, fetch: server.fetch });
  await assert.rejects(client.submit(1), UnsupportedProtocolError);
  assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 0);
  assert.throws(() => new Client('', 'bad id!'), TypeError);
  for (const retryDelayMs of [-5, Number.NaN, 'x', Infinity]) { // -5 retried a 503 with no pause, for ever
    assert.throws(() => new Client('', 'c1', { memoStorage: null, retryDelayMs }), /'retryDelayMs' option of Client must be a number of milliseconds >= 0/);
  }
});

test("a config answer this client cannot build is the server's answer refused, not the app's mistake", async () => {
  const hostile = [
    { protocol: 'grr', version: 1, epsilon: -1, domain_size: 6 }, { protocol: 'grr', version: 1, epsilon: 1 },
    { protocol: 'oue', version: 1, epsilon: 1e308, domain_size: 5 }, // the true value sent half the time
    { protocol: 'grr', version: 1, epsilon: 800, domain_size: 5 }, // was a raw RangeError from the protocol's constants
    { protocol: 'sw', version: 1, epsilon: 1, b: 1e308 }, // a raw RangeError
    { protocol: 'grr', version: 2, epsilon: 1, domain_size: 6 }, { protocol: 'grr', version: null, epsilon: 1, domain_size: 6 },
    { protocol: 'grr\u001b]0;pwn\u0007\n', version: 2 }, // raw control characters in the message
    { protocol: 'grr', version: 1, epsilon: `a\u001b[2J\u202e${'x'.repeat(300000)}`, domain_size: 6 }, // and 300 KB of it
  ];
  for (const config of hostile) {
    const server = fakeServer({ config });
    const client = new Client('', 'c1', { memoStorage: null, fetch: server.fetch });
    await assert.rejects(client.submit(1), (error) => error instanceof ServiceError && !(error instanceof InvalidParameterError)
      && error.code === 'unexpected_answer' && /config answer of campaign "c1".*Nothing was drawn or sent/.test(error.message)
      && error.message.length < 1000 && !/[\u0000-\u001f\u007f\u2028\u2029\u202e]/u.test(error.message), JSON.stringify(config).slice(0, 200));
    assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 0);
  }
});

test("a 429/503 answer's Retry-After is honoured (never earlier, jittered later); backoff is jittered", async () => {
  const { retryAfterSeconds, retryDelayMs } = await import('../src/client.js');
  assert.equal(retryAfterSeconds('3'), 3);
  assert.equal(retryAfterSeconds(null), null);
  assert.equal(retryAfterSeconds('soon'), null);
  assert.equal(retryAfterSeconds('100000'), 60);
  for (let i = 0; i < 50; i++) {
    const asked = retryDelayMs(100, 2);
    assert.ok(asked >= 2000 && asked <= 3000);
    const backoff = retryDelayMs(100, null);
    assert.ok(backoff >= 50 && backoff <= 100);
  }
  let calls = 0;
  const config = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 };
  const fetch = async (url, { method }) => {
    if (method === 'GET') return Response.json({ campaign: 'c1', state: 'open', config });
    calls += 1;
    if (calls === 1) return new Response(JSON.stringify({ error: 'busy', detail: 'queue full' }), { status: 503, headers: { 'Retry-After': '1' } });
    return Response.json({ campaign: 'c1', batch_id: url.split('/').at(-1), accepted: 1, rejected: {}, duplicate: false });
  };
  const client = new Client('', 'c1', { fetch, retryDelayMs: 1, memoStorage: null, source: deterministicSource(8) });
  const started = Date.now();
  await client.submit(3);
  assert.ok(Date.now() - started >= 1000, 'waited what Retry-After asked, not the 1 ms backoff');
  assert.equal(calls, 2);
});

test("the campaign's published client view is checked against the client's own derivation before anything is drawn", async () => {
  const protocol = fromConfig(CONFIG);
  const view = { config: CONFIG, format: protocol.format.describe(), design: { keep: protocol.keep } };
  const honest = fakeServer();
  const fetchHonest = async (url, options) =>
    options.method === 'GET' ? Response.json({ campaign: 'c1', state: 'open', config: CONFIG, client_view: view }) : honest.fetch(url, options);
  const ack = await new Client('', 'c1', { memoStorage: null, fetch: fetchHonest, source: deterministicSource(4) }).submit(2);
  assert.equal(ack.accepted, 1);
  for (const weakened of [
    { ...view, design: { keep: Math.min(1, protocol.keep * 1.5) } }, // keeps the true item more often
    { ...view, format: { ...view.format, dtype: '<u2' } },
  ]) {
    const server = fakeServer();
    const fetch = async (url, options) =>
      options.method === 'GET' ? Response.json({ campaign: 'c1', state: 'open', config: CONFIG, client_view: weakened }) : server.fetch(url, options);
    const client = new Client('', 'c1', { memoStorage: null, fetch, source: deterministicSource(5) });
    await assert.rejects(client.submit(2), /client view .* refused/);
    assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 0);
  }
});

test('a campaign that runs in rounds: one threshold answer, sent to the current round\'s campaign', async () => {
  const round = { protocol: 'threshold', version: 1, epsilon: 1.0, bounds: [0.0, 10.0], cuts: [256, 512, 768], grid_size: 1024, round: 2 };
  const server = fakeServer({ config: round, published: { submit_to: 'c1-r2', rounds: { round: 2, of: 4, sizes: only(2, 4) } } });
  const client = new Client('http://127.0.0.1:9', 'c1', { fetch: server.fetch, memoStorage: memoryStorage(), source: deterministicSource(3) });
  const ack = await client.submit(4.2);
  assert.equal(ack.accepted, 1);
  const [get, put] = server.requests;
  assert.equal(get.url, 'http://127.0.0.1:9/api/campaigns/c1/config');
  assert.deepEqual(get.headers, { Accept: 'application/json' }); // the public config: no submit token
  assert.match(put.url, /^http:\/\/127\.0\.0\.1:9\/api\/campaigns\/c1-r2\/batches\/[0-9a-f]{32}$/);
  const header = headerOf(put.body);
  assert.deepEqual(header.config, fromConfig(round).config);
  const output = put.body.at(-1); // one report: 2j + bit, the cut j and the randomized answer
  assert.ok(output < 6);
});

test('a device answers one round of a campaign in rounds: a later round, or its own campaign, is refused', async () => {
  // the plan's epsilon per user holds by parallel composition over disjoint groups: one answer per device
  const round = (k) => ({ protocol: 'threshold', version: 1, epsilon: 1.0, bounds: [0.0, 10.0], cuts: [256 * k], grid_size: 1024, round: k });
  const storage = memoryStorage();
  const first = fakeServer({ config: round(1), published: { submit_to: 'c1-r1', rounds: { round: 1, of: 3, sizes: only(1, 3) } } });
  const device = new Client('http://127.0.0.1:9', 'c1', { fetch: first.fetch, memoStorage: storage, source: deterministicSource(4) });
  assert.equal((await device.submit(4.2)).accepted, 1);
  assert.equal((await device.ledger()).answered('c1', 'http://127.0.0.1:9'), true);
  const askedAgain = [
    fakeServer({ config: round(2), published: { submit_to: 'c1-r2', rounds: { round: 2, of: 3, sizes: only(2, 3) } } }),
    fakeServer({ config: round(1), published: { submit_to: 'c1-r1', rounds: { round: 1, of: 3, sizes: only(1, 3) } } }), // the same round
    fakeServer({ config: round(2), published: { round_of: 'c1' } }), // round 2's own campaign, asked directly
  ];
  for (const server of askedAgain) {
    const again = new Client('http://127.0.0.1:9/', 'c1', { fetch: server.fetch, memoStorage: storage, source: deterministicSource(5) });
    await assert.rejects(again.submit(4.2), (error) => error instanceof PrivacyBudgetError && /already answered 'c1'/.test(error.message));
    assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 0);
  }
  const charges = JSON.parse(storage.getItem('dpdist-ledger')).charges;
  assert.equal(charges.length, 1); // one epsilon spent, not one per round
  // another collector's campaign of the same name is another question
  const elsewhere = fakeServer({ config: round(2), published: { submit_to: 'c1-r2', rounds: { round: 2, of: 3, sizes: only(2, 3) } } });
  const other = new Client('http://127.0.0.1:10', 'c1', { fetch: elsewhere.fetch, memoStorage: storage, source: deterministicSource(6) });
  assert.equal((await other.submit(1.0)).accepted, 1);
});

test('a device answers the round it drew at random in proportion to the sizes, and waits for it', async () => {
  const round = (k) => ({ protocol: 'threshold', version: 1, epsilon: 1.0, bounds: [0.0, 10.0], cuts: [256 * k], grid_size: 1024, round: k });
  const published = (k) => ({ submit_to: `c1-r${k}`, rounds: { round: k, of: 3, round_state: 'open', sizes: [100, 200, 300] } });
  const storage = memoryStorage();
  const drawn = new Ledger();
  assert.equal(drawn.roundFor('c1', 'local', [100, 200, 300], { uniformInt: () => 150 }), 2); // 150 of 600: round 2
  storage.setItem('dpdist-ledger', JSON.stringify(drawn.toJSON()));
  assert.deepEqual(JSON.parse(storage.getItem('dpdist-ledger')).rounds, { 'local c1': 2 });
  const early = fakeServer({ config: round(1), published: published(1) });
  const device = (server) => new Client('', 'c1', { fetch: server.fetch, memoStorage: storage, source: deterministicSource(12) });
  await assert.rejects(device(early).submit(3), (error) => error instanceof ServiceError && error.code === 'wait_for_round');
  assert.equal(early.requests.filter((r) => r.method === 'PUT').length, 0);
  assert.equal(JSON.parse(storage.getItem('dpdist-ledger')).charges.length, 0);
  const own = fakeServer({ config: round(2), published: published(2) });
  assert.equal((await device(own).submit(3)).accepted, 1);
  assert.match(own.requests.find((r) => r.method === 'PUT').url, /\/api\/campaigns\/c1-r2\/batches\//);
  const late = new Ledger();
  assert.equal(late.roundFor('c1', 'local', [100, 200, 300], { uniformInt: () => 99 }), 1);
  const other = memoryStorage();
  other.setItem('dpdist-ledger', JSON.stringify(late.toJSON()));
  const over = fakeServer({ config: round(3), published: published(3) });
  const lateDevice = new Client('', 'c1', { fetch: over.fetch, memoStorage: other, source: deterministicSource(13) });
  await assert.rejects(lateDevice.submit(3), (error) => error instanceof ServiceError && error.code === 'round_over');
  // a fresh device draws from its source once and keeps the draw; 6,000 devices follow the sizes (4 binomial SDs)
  const counts = [0, 0, 0];
  const source = deterministicSource(14);
  for (let i = 0; i < 6000; i += 1) {
    const ledger = new Ledger();
    const k = ledger.roundFor('c1', 'local', [100, 200, 300], source);
    assert.equal(ledger.roundFor('c1', 'local', [100, 200, 300], source), k);
    counts[k - 1] += 1;
  }
  counts.forEach((count, index) => {
    const share = (index + 1) / 6;
    assert.ok(Math.abs(count / 6000 - share) < 4 * Math.sqrt((share * (1 - share)) / 6000), `round ${index + 1}: ${count}`);
  });
  assert.throws(() => new Ledger().roundFor('c1', 'local', [0, 0]), (error) => error instanceof InvalidParameterError && /sizes/.test(error.message));
});

test('a campaign in rounds needs the device ledger, and takes one value per device', async () => {
  const round = { protocol: 'threshold', version: 1, epsilon: 1.0, bounds: [0.0, 10.0], cuts: [512], grid_size: 1024, round: 1 };
  const published = { submit_to: 'c1-r1', rounds: { round: 1, of: 3, sizes: only(1, 3) } };
  const server = fakeServer({ config: round, published });
  const bare = new Client('', 'c1', { fetch: server.fetch, memoStorage: null });
  await assert.rejects(bare.submit(2), (error) => error instanceof InvalidParameterError && /runs in rounds.*memoStorage/.test(error.message));
  const device = new Client('', 'c1', { fetch: server.fetch, memoStorage: memoryStorage(), source: deterministicSource(7) });
  await assert.rejects(device.submitMany([1, 2]), (error) => error instanceof InvalidParameterError && /takes one value/.test(error.message));
  assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 0);
});

test('no round open: nothing drawn, nothing charged; a ledger that answered is version 2, which older clients refuse', async () => {
  const round = { protocol: 'threshold', version: 1, epsilon: 1.0, bounds: [0.0, 10.0], cuts: [512], grid_size: 1024, round: 2 };
  const storage = memoryStorage();
  for (const published of [
    { submit_to: null, rounds: { round: 2, of: 3, round_state: 'created', sizes: only(2, 3) } },
    { submit_to: 'c1-r2', rounds: { round: 2, of: 3, round_state: 'closed', sizes: only(2, 3) } },
  ]) {
    const server = fakeServer({ config: round, published });
    const device = new Client('', 'c1', { fetch: server.fetch, memoStorage: storage, source: deterministicSource(8) });
    await assert.rejects(device.submit(3), (error) => error instanceof ServiceError && error.code === 'no_open_round');
    assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 0);
  }
  assert.equal(storage.getItem('dpdist-ledger'), null); // loaded, never charged
  const open = fakeServer({ config: round, published: { submit_to: 'c1-r2', rounds: { round: 2, of: 3, round_state: 'open', sizes: only(2, 3) } } });
  await new Client('', 'c1', { fetch: open.fetch, memoStorage: storage, source: deterministicSource(9) }).submit(3);
  const saved = JSON.parse(storage.getItem('dpdist-ledger'));
  assert.equal(saved.version, 2);
  assert.deepEqual(Object.keys(saved.answered), ['local c1']);
});

test('the ledger is read, drawn from and saved while holding its Web Lock, which another tab waits for', async () => {
  const round = { protocol: 'threshold', version: 1, epsilon: 1.0, bounds: [0.0, 10.0], cuts: [512], grid_size: 1024, round: 1 };
  const published = { submit_to: 'c1-r1', rounds: { round: 1, of: 3, sizes: only(1, 3) } };
  // navigator.locks of two tabs of one origin: one holder at a time, the next request waits for the release
  let held = false;
  let queue = Promise.resolve();
  const names = [];
  const locks = {
    request(name, callback) {
      names.push(name);
      const run = queue.then(async () => {
        held = true;
        try {
          return await callback();
        } finally {
          held = false;
        }
      });
      queue = run.catch(() => {});
      return run;
    },
  };
  const shared = memoryStorage();
  const storage = {
    getItem: (key) => {
      assert.ok(held, 'the ledger is read outside its lock');
      return shared.getItem(key);
    },
    setItem: (key, value) => {
      assert.ok(held, 'the ledger is saved outside its lock');
      shared.setItem(key, value);
    },
  };
  const tab = (seed) => new Client('', 'c1', { fetch: fakeServer({ config: round, published }).fetch, memoStorage: storage, locks, source: deterministicSource(seed) });
  const [first, second] = [tab(1), tab(2)];
  await Promise.all([first.campaign(), second.campaign()]); // loading the ledger holds the lock too
  const outcomes = await Promise.allSettled([first.submit(3), second.submit(4)]);
  assert.deepEqual(names, ['dpdist-ledger', 'dpdist-ledger', 'dpdist-ledger', 'dpdist-ledger']); // 2 loads, 2 draws
  assert.deepEqual(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']); // one answer, the other refused
  const refused = outcomes.find((o) => o.status === 'rejected').reason;
  assert.ok(refused instanceof PrivacyBudgetError && /already answered 'c1'/.test(refused.message));
  assert.throws(() => new Client('', 'c1', { memoStorage: null, locks: {} }), /'locks' option of Client must have a request/);
});

test('concurrent add() calls lose no report when a flush swaps the queue meanwhile', async () => {
  const server = fakeServer();
  const client = new Client('', 'c1', { fetch: server.fetch, batchSize: 2, memoStorage: memoryStorage(), source: deterministicSource(11) });
  await Promise.all([1, 2, 3, 4, 5].map((value) => client.add(value)));
  await client.flush();
  const rows = new Map(); // batch id -> reports in it (a batch sent twice counts once, as the server counts it)
  for (const { method, url, body } of server.requests) if (method === 'PUT') rows.set(url.split('/').at(-1), headerOf(body).shape[0]);
  assert.equal([...rows.values()].reduce((total, n) => total + n, 0), 5);
  assert.equal(client.unsentReports, 0);
});

test('a failed request is sent again for the whole retry window (devices ride out a restart)', async () => {
  const { Retries, DEFAULT_RETRY_WINDOW_MS, MAX_BACKOFF_MS } = await import('../src/client.js');
  let now = 0;
  const retries = new Retries(DEFAULT_RETRY_WINDOW_MS, 250, null, () => now);
  const pauses = [];
  for (let pause = retries.pause(null); pause !== null; pause = retries.pause(null)) {
    pauses.push(pause);
    now += pause;
  }
  assert.equal(now, DEFAULT_RETRY_WINDOW_MS); // the last attempt at the window's end, five minutes after the first failure
  assert.ok(pauses.length >= 30 && Math.max(...pauses) <= MAX_BACKOFF_MS, String(pauses.length));
  const counted = new Retries(DEFAULT_RETRY_WINDOW_MS, 250, 2, () => 0);
  assert.ok(counted.pause(null) !== null && counted.pause(null) !== null && counted.pause(null) === null);
  const asked = new Retries(10_000, 250, null, () => 0);
  assert.equal(asked.pause(30), null); // a Retry-After past the window: not earlier than asked, so no more attempts
  now = 0;
  const timedOut = new Retries(0, 250, null, () => now); // made as the first attempt starts
  now += 60_000; // the attempt times out after 60 s
  assert.equal(timedOut.pause(null), null);
  assert.equal(timedOut.spentMs(), 60_000); // what the message says ("over 0.0 s")
  assert.equal(timedOut.elapsedMs(), 0); // the window counts from the first failure

  let refused = 0;
  const restarting = fakeServer({ script: [] });
  const fetch = async (url, options) => { // refuses connections for about 60 ms (a restart), then serves
    if (refused < 4) {
      refused += 1;
      throw new TypeError('fetch failed');
    }
    return restarting.fetch(url, options);
  };
  const device = new Client('', 'c1', { memoStorage: null, fetch, retryDelayMs: 10, source: deterministicSource(9) });
  const ack = await device.submit(2);
  assert.equal(refused, 4);
  assert.match(ack.batch_id, /^[0-9a-f]{32}$/);

  const down = new Client('', 'c1', { memoStorage: null, fetch: async () => { throw new TypeError('fetch failed'); }, retryWindowMs: 60,
    retryDelayMs: 5, source: deterministicSource(10) });
  await assert.rejects(down.campaign(), (error) => error instanceof ServiceError
    && /gave up after \d+ attempts over 0\.\d s \(retryWindowMs 60\)\. Nothing was lost: send the same batch again/.test(error.message));
});

test('without memoStorage and without globalThis.localStorage (Node) the Client is refused, naming the option', () => {
  assert.equal(globalThis.localStorage, undefined);
  for (const options of [undefined, {}, { memoStorage: undefined }, { fetch: fakeServer().fetch, batchSize: 4 }]) {
    assert.throws(() => new Client('', 'c1', options), (error) => error instanceof InvalidParameterError
      && error.message.startsWith("The 'memoStorage' option of Client is required where there is no globalThis.localStorage (Node)")
      && /getItem and setItem/.test(error.message) && /or null for no ledger at all/.test(error.message)
      && error.message.endsWith('Got no memoStorage option, and no globalThis.localStorage.'), JSON.stringify(options));
  }
});

test('a memoStorage without getItem/setItem functions is refused, not taken for no ledger', () => {
  for (const [memoStorage, got] of [
    [{}, 'an object without getItem and setItem functions'],
    [{ getItem: () => null }, 'an object without setItem function'],
    [{ getItem: () => null, setItem: 'x' }, 'an object without setItem function'],
    [new Map(), 'an object without getItem and setItem functions'],
    ['ledger.json', 'a string'], [false, 'a boolean'], [0, 'a number'],
  ]) {
    assert.throws(() => new Client('', 'c1', { memoStorage }), (error) => error instanceof InvalidParameterError
      && error.message.startsWith("The 'memoStorage' option of Client must be an object with getItem and setItem functions")
      && error.message.endsWith(`Got ${got}.`) && !error.message.includes('ledger.json'), String(memoStorage));
  }
});

test('a globalThis.localStorage is the default memoStorage (a browser); one without getItem/setItem is refused', async () => {
  const storage = memoryStorage();
  globalThis.localStorage = storage;
  try {
    const device = new Client('', 'c1', { fetch: fakeServer().fetch, locks: null, source: deterministicSource(21) });
    await device.submit(3);
    assert.equal((await device.ledger()).spent(), 1.0);
    assert.ok(storage.getItem('dpdist-ledger') !== null);
    globalThis.localStorage = {}; // as Node 25 run without --localstorage-file
    assert.throws(() => new Client('', 'c1', {}), (error) => error instanceof InvalidParameterError
      && /^The 'memoStorage' option of Client must be /.test(error.message)
      && /Got no memoStorage option, and as globalThis\.localStorage an object without getItem and setItem functions/.test(error.message));
    assert.equal(new Client('', 'c1', { memoStorage: null })._memoStorage, null); // null still says: no ledger
  } finally {
    delete globalThis.localStorage;
  }
});

test('memoStorage: null keeps no ledger: nothing charged, no budget refuses, no memo', async () => {
  const config = { protocol: 'grr', version: 1, epsilon: 4.0, domain_size: 8 };
  const server = fakeServer({ config });
  const client = new Client('', 'c1', { fetch: server.fetch, memoStorage: null, source: deterministicSource(22) });
  for (let i = 0; i < 5; i++) await client.submit(i); // 20 epsilon, twice the default budget
  assert.equal(await client.ledger(), null);
  assert.equal(await client.memo(), null);
  assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 5);
});

/** The README's file-backed storage: every getItem reads the file afresh, every setItem replaces it by a rename. */
function fileStorage(file) {
  const read = () => (existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {});
  return {
    getItem: (key) => { const kept = read(); return Object.hasOwn(kept, key) ? kept[key] : null; },
    setItem: (key, value) => {
      const kept = { ...read(), [key]: String(value) };
      writeFileSync(`${file}.${process.pid}.tmp`, JSON.stringify(kept));
      renameSync(`${file}.${process.pid}.tmp`, file);
    },
  };
}

test('two Clients over one file-backed storage read each other\'s charges: held at the budget together', async () => {
  const folder = mkdtempSync(join(tmpdir(), 'dpdist-ledger-'));
  try {
    const file = join(folder, 'device-ledger.json');
    const grr = fakeServer({ config: { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 } });
    const lgrr = fakeServer({ config: { protocol: 'l-grr', version: 1, epsilon: 4.0, epsilon_1: 1.0, domain_size: 8 } });
    // one storage object per Client, as an app reporting to two campaigns may make them: a device sent 19 reports,
    // epsilon 19.9 against a budget of 10, when each storage kept the copy of the file it read once
    const a = new Client('', 'c1', { fetch: grr.fetch, memoStorage: fileStorage(file), source: deterministicSource(41) });
    const b = new Client('', 'c1', { fetch: lgrr.fetch, memoStorage: fileStorage(file), source: deterministicSource(42) });
    let sent = 0;
    for (let i = 0; i < 6; i++) { await a.submit(1); sent += 1; }
    for (;;) {
      try {
        await b.submit(1);
        sent += 1;
      } catch (error) {
        assert.ok(error instanceof PrivacyBudgetError, error.message);
        break;
      }
    }
    // and both at once: every submit reads, draws and saves in one synchronous step
    const more = await Promise.allSettled(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).submit(2)));
    assert.ok(more.every((result) => result.status === 'rejected' && result.reason instanceof PrivacyBudgetError));
    await assert.rejects(a.submit(3), (error) => error instanceof PrivacyBudgetError);
    const puts = grr.requests.filter((r) => r.method === 'PUT').length + lgrr.requests.filter((r) => r.method === 'PUT').length;
    assert.equal(puts, sent);
    const ledger = Ledger.fromJSON(JSON.parse(JSON.parse(readFileSync(file, 'utf8'))['dpdist-ledger']));
    assert.equal(ledger.charges.length, sent); // every report sent is charged in the file, none lost to the other Client
    assert.ok(ledger.spent() <= 10 * (1 + 1e-12) && ledger.spent() > 9, String(ledger.spent()));
    assert.equal((await a.ledger()).spent(), ledger.spent());
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test('a memoStorage that does not return what was written is refused before anything is drawn or sent', async () => {
  const storages = {
    'a setItem that drops writes': () => ({ getItem: () => null, setItem: () => {} }),
    'a getItem without its return': () => {
      const kept = {};
      // eslint-disable-next-line no-unused-expressions
      return { getItem: (key) => { kept[key]; }, setItem: (key, value) => { kept[key] = value; } };
    },
  };
  const configs = [
    { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 },
    { protocol: 'l-grr', version: 1, epsilon: 4.0, epsilon_1: 1.0, domain_size: 8 },
  ];
  for (const config of configs) {
    for (const [name, make] of Object.entries(storages)) {
      const server = fakeServer({ config });
      const source = deterministicSource(31);
      let words = 0;
      const word = source.word.bind(source);
      source.word = () => { words += 1; return word(); };
      const device = new Client('', 'c1', { fetch: server.fetch, memoStorage: make(), source });
      const refused = (error) => error instanceof InvalidParameterError
        && error.message.startsWith("The 'memoStorage' option of Client did not return what was written")
        && /getItem\('dpdist-ledger'\) returned (null|undefined)/.test(error.message)
        && error.message.endsWith('Nothing was sent.');
      for (const attempt of [() => device.submit(3), () => device.add(4)]) {
        await assert.rejects(attempt(), refused, `${config.protocol}, ${name}`);
      }
      assert.equal(words, 0, `${config.protocol}, ${name}: nothing drawn`);
      await assert.rejects(device.submitMany([1, 2, 3]), refused); // (its values' order is drawn first: no report)
      assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 0, `${config.protocol}, ${name}`);
      assert.equal(device.unsentReports, 0);
    }
  }
});

test('a memoStorage whose writes stop reading back, or throw, refuses at the save: nothing sent', async () => {
  for (const config of [
    { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 },
    { protocol: 'l-grr', version: 1, epsilon: 4.0, epsilon_1: 1.0, domain_size: 8 },
  ]) {
    // a ledger is kept, then the storage drops writes (a full disk ignored, a read-only copy): the save of the next
    // report's charge does not read back
    const storage = memoryStorage();
    const server = fakeServer({ config });
    const device = new Client('', 'c1', { fetch: server.fetch, memoStorage: storage, source: deterministicSource(32) });
    await device.submit(3);
    const kept = storage.getItem('dpdist-ledger');
    storage.setItem = () => {};
    await assert.rejects(device.submit(3), (error) => error instanceof InvalidParameterError
      && /getItem\('dpdist-ledger'\) returned another string \(\d+ characters\)/.test(error.message));
    assert.equal(storage.getItem('dpdist-ledger'), kept);
    // a setItem that throws (a browser's QuotaExceededError): the error itself, nothing sent
    storage.setItem = () => { throw new Error('QuotaExceededError'); };
    await assert.rejects(device.submit(3), /QuotaExceededError/);
    assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 1, config.protocol);
  }
});

test('an asynchronous memoStorage (getItem returns a Promise) is refused, saying it must be synchronous', async () => {
  const kept = {};
  const storage = { getItem: async (key) => kept[key] ?? null, setItem: async (key, value) => { kept[key] = value; } };
  const server = fakeServer();
  const device = new Client('', 'c1', { fetch: server.fetch, memoStorage: storage, source: deterministicSource(33) });
  await assert.rejects(device.submit(3), (error) => error instanceof InvalidParameterError
    && error.message.startsWith("The 'memoStorage' option of Client must be a synchronous storage: its getItem('dpdist-ledger') returned a Promise")
    && !/JSON/.test(error.message));
  assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 0);
});

test('a write-behind memoStorage (setItem returns a Promise, getItem answers at once) is refused before anything is sent', async () => {
  const kept = {};
  const storage = { getItem: (key) => kept[key] ?? null, setItem: async (key, value) => { kept[key] = value; } };
  const server = fakeServer();
  const device = new Client('', 'c1', { fetch: server.fetch, memoStorage: storage, source: deterministicSource(34) });
  await assert.rejects(device.submit(3), (error) => error instanceof InvalidParameterError
    && error.message.startsWith("The 'memoStorage' option of Client must be a synchronous storage: its setItem('dpdist-ledger') returned a Promise"));
  assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 0);
});

test('an option the Client does not know is refused, naming it and listing the options', () => {
  const storage = memoryStorage();
  for (const [options, named] of [
    [{ memoStorage: storage, budgett: 3 }, '"budgett"'],
    [{ memoStorage: storage, retry: 2, timeout: 5 }, '"retry", "timeout"'],
    [{ memoStorage: storage, storage }, '"storage"'],
  ]) {
    assert.throws(() => new Client('', 'c1', options), (error) => error instanceof InvalidParameterError
      && error.message.startsWith(`Client has no option ${named}: its options are token, batchSize, retries, retryWindowMs, `)
      && /memoStorage, locks, budget, /.test(error.message) && error.message.includes('relayEnvelope'), named);
  }
  for (const [options, got] of [[null, 'null'], ['c1', 'a string'], [[], 'an array']]) {
    assert.throws(() => new Client('', 'c1', options), (error) => error instanceof InvalidParameterError
      && error.message.startsWith("The 'options' argument of Client must be an object of options") && error.message.endsWith(`Got ${got}.`));
  }
  assert.ok(new Client('', 'c1', { memoStorage: null, token: null, batchSize: 5, retries: 1, retryWindowMs: 0, timeoutMs: null,
    retryDelayMs: 1, fetch: fakeServer().fetch, locks: null, budget: undefined, source: deterministicSource(1), pin: null, issuer: null,
    ohttp: null, relayEnvelope: null }));
});

test('the budget option: a new ledger starts with it, and it replaces a stored ledger\'s budget each time it is read', async () => {
  const server = fakeServer(); // grr, epsilon 1
  const storage = memoryStorage();
  const device = (budget, seed) => new Client('', 'c1', { fetch: server.fetch, memoStorage: storage, budget, source: deterministicSource(seed) });
  const first = device(3, 51);
  for (let i = 0; i < 3; i++) await first.submit(i);
  await assert.rejects(first.submit(3), (error) => error instanceof PrivacyBudgetError && /left of its budget of 3 /.test(error.message));
  assert.equal(JSON.parse(storage.getItem('dpdist-ledger')).budget, 3);
  assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 3);
  // without the option the stored budget holds (3, not the default 10); with another, the owner's code decides
  await assert.rejects(device(null, 52).submit(3), (error) => error instanceof PrivacyBudgetError);
  const raised = device(5, 53);
  await raised.submit(3);
  await raised.submit(4);
  await assert.rejects(raised.submit(5), (error) => error instanceof PrivacyBudgetError && /budget of 5 /.test(error.message));
  assert.equal(JSON.parse(storage.getItem('dpdist-ledger')).budget, 5);
  // an edit of the stored budget does not raise it past the option: the ledger is read again before each draw
  const edited = JSON.parse(storage.getItem('dpdist-ledger'));
  storage.setItem('dpdist-ledger', JSON.stringify({ ...edited, budget: 100 }));
  await assert.rejects(raised.submit(6), (error) => error instanceof PrivacyBudgetError && /budget of 5 /.test(error.message));
  assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 5);
  assert.equal((await raised.ledger()).spent(), 5);
});

test('the budget option is a finite epsilon > 0, and needs a ledger', () => {
  for (const budget of [0, -1, Infinity, NaN, '3', true]) {
    assert.throws(() => new Client('', 'c1', { memoStorage: memoryStorage(), budget }), (error) => error instanceof InvalidParameterError
      && error.message.startsWith("The 'budget' option of Client must be null or a finite epsilon > 0."), String(budget));
  }
  assert.throws(() => new Client('', 'c1', { memoStorage: null, budget: 3 }), (error) => error instanceof InvalidParameterError
    && /'budget' option of Client .* memoStorage: null keeps no ledger/.test(error.message));
  assert.equal(new Client('', 'c1', { memoStorage: null, budget: null })._budget, null);
});

test('a memoStorage keeps the ledger: each report charged and stored, refused past the budget before it is sent', async () => {
  const config = { protocol: 'grr', version: 1, epsilon: 4.0, domain_size: 8 };
  const server = fakeServer({ config });
  const storage = memoryStorage();
  const client = new Client('', 'c1', { fetch: server.fetch, memoStorage: storage, source: deterministicSource(23) });
  await client.submit(1);
  await client.submit(2);
  const ledger = await client.ledger();
  assert.equal(ledger.spent(), 8.0);
  assert.equal(ledger.remaining(), 2.0);
  assert.equal(Ledger.fromJSON(JSON.parse(storage.getItem('dpdist-ledger'))).spent(), 8.0);
  await assert.rejects(client.submit(3), (error) => error instanceof PrivacyBudgetError);
  assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 2);
  const again = new Client('', 'c1', { fetch: server.fetch, memoStorage: storage, source: deterministicSource(24) }); // a restart
  await assert.rejects(again.submit(4), (error) => error instanceof PrivacyBudgetError);
  assert.equal(server.requests.filter((r) => r.method === 'PUT').length, 2);
});
