// Reports leave in a uniformly random order, never in the order of the values.
//
// On values sorted by value, an observer who guesses that the report at position j is the value of
// row j is right far more often than chance when the order is kept (GRR, eps = 1, d = 4: 47.5% of
// positions against 25%). With the order uniformly random, the number of such matches has the
// exact mean and variance of Hoeffding's combinatorial CLT (W. Hoeffding, "A combinatorial central
// limit theorem", Ann. Math. Statist. 22, 1951), whatever the reports are; the tests allow
// z = 4.89 standard deviations (two-sided level 1e-6, ALPHA).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Client, fromConfig, privatizeRecord } from '../src/index.js';
import { Z_ALPHA as Z, deterministicSource, positionalMatches, sortedValues } from './helpers.js';

const PRIVATIZE = fileURLToPath(new URL('../bin/privatize.js', import.meta.url));
const GRR = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 4 };

/** The payloads of the binary records in ``bytes``, in file order, concatenated. */
function recordPayloads(bytes) {
  const parts = [];
  for (let offset = 0; offset < bytes.length; ) {
    const view = new DataView(bytes.buffer, bytes.byteOffset + offset);
    const length = view.getUint32(10, true);
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(offset + 14, offset + 14 + length)));
    const start = offset + 14 + length;
    parts.push(bytes.subarray(start, start + header.payload_bytes));
    offset = start + header.payload_bytes;
  }
  return Array.from(Buffer.concat(parts));
}

test('the positional statistic sees the order of in-order reports of sorted values (the check has power)', () => {
  const values = sortedValues(4000, 4);
  const reports = Array.from(fromConfig(GRR).privatize(values, deterministicSource(1)).bytes);
  const { z } = positionalMatches(reports, values, 4);
  assert.ok(z > 20, `z = ${z}`);
});

test('privatize.js writes the reports of a sorted input in a uniformly random order', () => {
  const directory = mkdtempSync(join(tmpdir(), 'dpdist-order-'));
  try {
    const values = sortedValues(4000, 4);
    writeFileSync(join(directory, 'proto.json'), JSON.stringify(GRR));
    const out = join(directory, 'reports.bin');
    const run = spawnSync(process.execPath, [PRIVATIZE, '--config', join(directory, 'proto.json'), '--out', out, '--batch-rows', '1500'], {
      input: `${values.join('\n')}\n`,
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const file = readFileSync(out);
    const reports = recordPayloads(new Uint8Array(file.buffer, file.byteOffset, file.length));
    assert.equal(reports.length, 4000);
    const { matches, mean, sd, z } = positionalMatches(reports, values, 4);
    assert.ok(Math.abs(z) < Z, `${matches} positional matches, random order gives ${mean} +- ${sd} (z = ${z})`);
    assert.deepEqual(readdirSync(directory).sort(), ['proto.json', 'reports.bin']); // no temporary file left
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});

/** A fake server that keeps the bodies of the batches PUT, in order. */
function recordingServer() {
  const bodies = [];
  const fetch = async (url, { method, body }) => {
    if (method === 'GET') return Response.json({ campaign: 'c1', state: 'open', config: GRR });
    bodies.push(new Uint8Array(body));
    return Response.json({ campaign: 'c1', batch_id: url.split('/').at(-1), n_read: 0, accepted: 0, rejected: {}, duplicate: false });
  };
  return { fetch, bodies };
}

test('Client.submitMany sends the reports of sorted values in a uniformly random order', async () => {
  const server = recordingServer();
  const client = new Client('', 'c1', { memoStorage: null, fetch: server.fetch, batchSize: 500, source: deterministicSource(9) });
  const values = sortedValues(4000, 4);
  await client.submitMany(values);
  assert.equal(server.bodies.length, 8);
  const reports = server.bodies.flatMap((body) => recordPayloads(body));
  const { z } = positionalMatches(reports, values, 4);
  assert.ok(Math.abs(z) < Z, `z = ${z}`);
});

test('Client.add then flush sends a batch of queued reports in a uniformly random order', async () => {
  const server = recordingServer();
  const client = new Client('', 'c1', { memoStorage: null, fetch: server.fetch, batchSize: 4000, source: deterministicSource(10) });
  const values = sortedValues(4000, 4);
  for (const value of values) await client.add(value);
  assert.equal(server.bodies.length, 1);
  const { z } = positionalMatches(recordPayloads(server.bodies[0]), values, 4);
  assert.ok(Math.abs(z) < Z, `z = ${z}`);
});

test('privatizeRecord writes the reports of sorted values in a uniformly random order', () => {
  const values = sortedValues(4000, 4);
  const record = privatizeRecord(GRR, values, { source: deterministicSource(11) });
  const { z } = positionalMatches(recordPayloads(record), values, 4);
  assert.ok(Math.abs(z) < Z, `z = ${z}`);
});
