// A campaign config is an instruction to the device: a config answer whose statistic or one report is
// too large is refused before anything is drawn, sent or charged, and batches are cut to the body the answer states.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, ServiceError, fromConfig } from '../src/index.js';
import { CLIENT_MAX_BODY_BYTES, CLIENT_MAX_STATISTIC_BYTES, MAX_HEADER_BYTES, headerBytes, recordBytes, statisticSize } from '../src/bound.js';
import { RandomSource } from '../src/random.js';
import { deterministicSource, fixture, memoryStorage } from './helpers.js';

/** A service answering ``config`` (and ``extra`` fields) for the config GET and acknowledging every batch. */
function service(config, extra = {}) {
  const bodies = [];
  let draws = 0;
  const inner = deterministicSource(7)._fill;
  const counted = new RandomSource((words) => { draws += 1; return inner(words); });
  const fetch = async (url, { method, body }) => {
    if (method === 'GET') return Response.json({ campaign: 'c1', state: 'open', config, ...extra });
    bodies.push(new Uint8Array(body));
    const length = new DataView(bodies.at(-1).buffer).getUint32(10, true);
    const rows = JSON.parse(new TextDecoder().decode(bodies.at(-1).subarray(14, 14 + length))).shape[0];
    return Response.json({ campaign: 'c1', batch_id: url.split('/').at(-1), n_read: rows, accepted: rows, rejected: {}, duplicate: false });
  };
  return { fetch, bodies, source: counted, draws: () => draws };
}

function rowsOf(body) {
  const length = new DataView(body.buffer, body.byteOffset).getUint32(10, true);
  return JSON.parse(new TextDecoder().decode(body.subarray(14, 14 + length))).shape[0];
}

test("the ceilings are Python's (fixtures/python.json report_bound)", () => {
  assert.equal(CLIENT_MAX_BODY_BYTES, fixture.report_bound.max_body_bytes);
  assert.equal(CLIENT_MAX_STATISTIC_BYTES, fixture.report_bound.max_statistic_bytes);
  assert.equal(MAX_HEADER_BYTES, fixture.report_bound.max_header_bytes);
});

/** GRR over ``n`` labels ``000000``, ``000001``, ... (the fixture's header cases). */
const labelled = (n) => ({ protocol: 'grr', version: 1, epsilon: 1.0, domain_size: n,
  labels: Array.from({ length: n }, (_, i) => String(i).padStart(6, '0')) });

test("a record header's bytes are Python's header_bytes (fixtures/python.json report_bound headers)", () => {
  assert.ok(fixture.report_bound.headers.some(([, size]) => size > MAX_HEADER_BYTES));
  assert.ok(fixture.report_bound.headers.some(([, size]) => size > 1_000_000 && size <= MAX_HEADER_BYTES));
  for (const [n, size] of fixture.report_bound.headers) assert.equal(headerBytes(fromConfig(labelled(n))), size, String(n));
});

test('a config whose record header would pass 1 MiB is refused before anything is drawn; one within is sent', async () => {
  for (const [n, size] of fixture.report_bound.headers.filter(([n]) => n > 1000)) {
    const server = service(labelled(n), { max_body_bytes: CLIENT_MAX_BODY_BYTES });
    const storage = memoryStorage();
    const client = new Client('http://127.0.0.1:9', 'c1', { fetch: server.fetch, source: server.source, memoStorage: storage, retries: 0 });
    const outcome = await client.submitMany([0, 1, 2]).then(() => null, (error) => error);
    if (size <= MAX_HEADER_BYTES) {
      assert.equal(outcome, null, String(n));
      assert.equal(server.bodies.length, 1);
      continue;
    }
    assert.ok(outcome instanceof ServiceError, String(outcome));
    assert.equal(outcome.code, 'unexpected_answer');
    assert.match(outcome.message, new RegExp(`record header \\(it carries the config\\) takes ${size} bytes, more than the 1048576`));
    assert.doesNotMatch(outcome.message, /\n/);
    assert.equal(server.draws(), 0);
    assert.equal(server.bodies.length, 0);
    assert.equal(storage.getItem('dpdist-ledger') ?? null, null);
  }
});

test("a report's record bytes and a statistic's bytes are Python's record_bytes and statistic_size x itemsize", () => {
  assert.ok(fixture.report_bound.cases.length >= 60);
  for (const [config, one, seven, statistic] of fixture.report_bound.cases) {
    const protocol = fromConfig(config);
    assert.deepEqual([recordBytes(protocol, 1), recordBytes(protocol, 7), statisticSize(protocol) * 8], [one, seven, statistic], config.protocol);
  }
});

test("the attacker's config (OUE, domain_size 2*10^7) is refused before anything is drawn, charged or sent", async () => {
  const config = { protocol: 'oue', version: 1, epsilon: 1.0, domain_size: 20_000_000 };
  const server = service(config, { max_body_bytes: CLIENT_MAX_BODY_BYTES });
  const storage = memoryStorage();
  const client = new Client('http://127.0.0.1:9', 'c1', { fetch: server.fetch, source: server.source, memoStorage: storage, retries: 0 });
  await assert.rejects(client.submitMany(Array.from({ length: 300 }, (_, i) => i % 8)), (error) => {
    assert.ok(error instanceof ServiceError);
    assert.equal(error.code, 'unexpected_answer');
    assert.match(error.message, /domain_size = 20000000/);
    assert.match(error.message, /statistic takes 160000000 bytes, more than the 67108864/);
    assert.doesNotMatch(error.message, /\n/);
    return true;
  });
  assert.equal(server.draws(), 0);
  assert.equal(server.bodies.length, 0);
  assert.equal(storage.getItem('dpdist-ledger') ?? null, null);
});

test("a config whose one report does not fit the answer's max_body_bytes is refused, naming the field and the sizes", async () => {
  const config = { protocol: 'oue', version: 1, epsilon: 1.0, domain_size: 8192 };
  const server = service(config, { max_body_bytes: 1024 });
  const client = new Client('http://127.0.0.1:9', 'c1', { memoStorage: null, fetch: server.fetch, source: server.source, retries: 0 });
  await assert.rejects(client.submit(3), (error) => {
    assert.equal(error.code, 'unexpected_answer');
    assert.match(error.message, /reports of \d+ bytes each \('config': domain_size = 8192\).*\(1024 bytes: 'max_body_bytes' = 1024/);
    return true;
  });
  assert.equal(server.draws(), 0);
  assert.equal(server.bodies.length, 0);
});

for (const stated of [0, -5, 1.5, '4096', true, [4096]]) {
  test(`a max_body_bytes of ${JSON.stringify(stated)} is refused (unexpected_answer)`, async () => {
    const server = service({ protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 }, { max_body_bytes: stated });
    const client = new Client('http://127.0.0.1:9', 'c1', { memoStorage: null, fetch: server.fetch, source: server.source, retries: 0 });
    await assert.rejects(client.submitMany([1, 2]), (error) => error.code === 'unexpected_answer' && /'max_body_bytes'/.test(error.message));
    assert.equal(server.bodies.length, 0);
  });
}

test('submitMany and add cut each batch to the reports that fit the stated body; every report is sent once', async () => {
  const config = { protocol: 'oue', version: 1, epsilon: 1.0, domain_size: 4096 }; // 512-byte reports
  const server = service(config, { max_body_bytes: 4096 });
  const client = new Client('http://127.0.0.1:9', 'c1', { memoStorage: null, fetch: server.fetch, source: server.source, batchSize: 1000 });
  const acks = await client.submitMany(Array.from({ length: 50 }, (_, i) => i));
  const rows = server.bodies.map(rowsOf);
  assert.equal(rows.reduce((a, b) => a + b, 0), 50);
  assert.ok(server.bodies.every((body) => body.length <= 4096));
  const most = Math.max(...rows);
  assert.ok(most >= 2 && recordBytes(fromConfig(config), most + 1) > 4096, `${most} reports per body`);
  assert.equal(acks.length, server.bodies.length);
  server.bodies.length = 0;
  for (let i = 0; i < 2 * most; i++) await client.add(i);
  assert.deepEqual(server.bodies.map(rowsOf), [most, most]); // a full body is flushed, not a batchSize queue
});

test('without max_body_bytes (an older service) the ceiling is 16 MiB and batchSize still applies', async () => {
  const server = service({ protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 });
  const client = new Client('http://127.0.0.1:9', 'c1', { memoStorage: null, fetch: server.fetch, source: server.source, batchSize: 4 });
  await client.submitMany([0, 1, 2, 3, 4, 5, 6, 7, 0, 1]);
  assert.deepEqual(server.bodies.map(rowsOf).sort(), [2, 4, 4]);
});

// the service's per-batch work bound (fix76): a config answer's max_batch_reports caps every batch; one that is not an
// int >= 1 is the server's answer refused before anything is drawn, sent or charged; absent, the body alone bounds it
test('a max_batch_reports of 3 cuts 10 values into 4 batches of at most 3 reports, each sent once; add flushes at 3', async () => {
  const server = service({ protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 }, { max_batch_reports: 3 });
  const client = new Client('http://127.0.0.1:9', 'c1', { memoStorage: null, fetch: server.fetch, source: server.source, batchSize: 1000 });
  const acks = await client.submitMany([0, 1, 2, 3, 4, 5, 6, 7, 0, 1]);
  assert.deepEqual(server.bodies.map(rowsOf), [3, 3, 3, 1]);
  assert.equal(acks.length, 4);
  assert.equal(new Set(acks.map((ack) => ack.batch_id)).size, 4);
  server.bodies.length = 0;
  for (let i = 0; i < 7; i++) await client.add(i);
  assert.deepEqual(server.bodies.map(rowsOf), [3, 3]); // a queue of 3 is flushed, not a batchSize one
  await client.flush();
  assert.deepEqual(server.bodies.map(rowsOf), [3, 3, 1]);
});

test('max_batch_reports and max_body_bytes both bound a batch: the smaller wins, batchSize still applies', async () => {
  const config = { protocol: 'oue', version: 1, epsilon: 1.0, domain_size: 4096 }; // 512-byte reports: ~7 per 4096 bytes
  const cases = [[{ max_body_bytes: 4096, max_batch_reports: 2 }, 1000, 2], [{ max_body_bytes: 4096, max_batch_reports: 500 }, 1000, null],
    [{ max_batch_reports: 5 }, 4, 4]];
  for (const [extra, batchSize, expected] of cases) {
    const server = service(config, extra);
    const client = new Client('http://127.0.0.1:9', 'c1', { memoStorage: null, fetch: server.fetch, source: server.source, batchSize });
    await client.submitMany(Array.from({ length: 20 }, (_, i) => i));
    const rows = server.bodies.map(rowsOf);
    assert.equal(rows.reduce((a, b) => a + b, 0), 20, JSON.stringify(extra));
    const most = expected ?? Math.max(...rows); // null: what fits 4096 bytes
    assert.equal(Math.max(...rows), most, JSON.stringify(extra));
    if (expected === null) assert.ok(most < 20 && recordBytes(fromConfig(config), most + 1) > 4096, `${most} reports per body`);
  }
});

for (const stated of [0, -3, 2.5, '3', true, false, [3], { n: 3 }, 2 ** 53, 1e300, 'x'.repeat(100)]) {
  test(`a max_batch_reports of ${JSON.stringify(stated).slice(0, 20)} is refused (unexpected_answer), nothing drawn or sent`, async () => {
    const server = service({ protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 }, { max_batch_reports: stated });
    const storage = memoryStorage();
    const client = new Client('http://127.0.0.1:9', 'c1', { fetch: server.fetch, source: server.source, memoStorage: storage, retries: 0 });
    await assert.rejects(client.submitMany([1, 2]), (error) => {
      assert.ok(error instanceof ServiceError, String(error));
      assert.equal(error.code, 'unexpected_answer');
      assert.match(error.message, /^The config answer of campaign 'c1' gives 'max_batch_reports' = .{1,40}, not an int >= 1; nothing was drawn or sent\.$/);
      assert.ok(error.message.includes(String(JSON.stringify(stated)).slice(0, 40)), error.message);
      return true;
    });
    await assert.rejects(client.add(1), (error) => error.code === 'unexpected_answer');
    assert.equal(server.draws(), 0);
    assert.equal(server.bodies.length, 0);
    assert.equal(storage.getItem('dpdist-ledger') ?? null, null);
  });
}

test('a max_batch_reports of null or absent (an older service) is no cap beyond the body and batchSize', async () => {
  for (const extra of [{}, { max_batch_reports: null }]) {
    const server = service({ protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 }, extra);
    const client = new Client('http://127.0.0.1:9', 'c1', { memoStorage: null, fetch: server.fetch, source: server.source, batchSize: 1000 });
    await client.submitMany(Array.from({ length: 1500 }, (_, i) => i % 8));
    assert.deepEqual(server.bodies.map(rowsOf).sort(), [1000, 500]);
  }
});
