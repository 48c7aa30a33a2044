// The random wheel spinner's report: one integer (a - 1) m + y in the narrowest unsigned dtype, as Python's
// ItemReports((m - 1) m).  Python's channel and sampling are compared live over small domains
// (tests/clients/test_js_conformance.py); here the dtype at larger domains, and the BigInt path beyond 2^53.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import RWS from '../src/protocols/rws.js';
import { deterministicSource } from './helpers.js';

const config = (epsilon, d) => ({ protocol: 'rws', version: 1, epsilon, domain_size: d });

test('an rws report is one integer in the narrowest unsigned dtype holding (m - 1) m values', () => {
  const cases = [[5, '|u1'], [128, '<u2'], [1024, '<u4'], [16384, '<u4'], [1 << 20, '<u8']];
  for (const [d, dtype] of cases) {
    const protocol = RWS.fromConfig(config(1.0, d));
    assert.deepEqual(protocol.format.describe(), { kind: 'items', dtype, row_shape: [] }, `d = ${d}`);
  }
});

test('each report decodes to a multiplier and a position, and its index is (a - 1) m + y', () => {
  const protocol = RWS.fromConfig(config(1.0, 16384));
  const m = protocol.positions;
  const batch = protocol.privatize(Array.from({ length: 200 }, (_, i) => i * 81), deterministicSource(5));
  for (let i = 0; i < batch.length; i++) {
    const { a, y } = protocol.decode(batch.row(i));
    assert.ok(a >= 1 && a < m && y >= 0 && y < m);
    assert.equal(protocol.reportIndex(batch.row(i)), (a - 1) * m + y);
  }
});

test('beyond 2^53 outputs the report is written exactly, from a BigInt, as the draws make it', () => {
  const d = 100_000_000; // m = 100,000,007: (m - 1) m is about 2^53.15
  const protocol = RWS.fromConfig(config(1.0, d));
  const m = protocol.positions;
  assert.ok(protocol.wide && (m - 1) * m > Number.MAX_SAFE_INTEGER);
  const values = [0, 1, d - 1, 54_321_987, 99_999_998, 7, 8, 9];
  const batch = protocol.privatize(values, deterministicSource(9));
  assert.equal(batch.descr, '<u8');
  const draws = deterministicSource(9); // the same draws, in writeReport's order
  values.forEach((value, i) => {
    const a = BigInt(draws.uniformInt(m - 1) + 1);
    const kept = draws.bernoulli(protocol.keep);
    const step = BigInt(draws.uniformInt(protocol.subsetSize));
    const other = BigInt(draws.uniformInt(m));
    const M = BigInt(m);
    const y = kept ? (((BigInt(value) - a * step) % M) + M) % M : other;
    const row = batch.row(i);
    assert.equal(new DataView(row.buffer, row.byteOffset, 8).getBigUint64(0, true), (a - 1n) * M + y, `value ${value}`);
    assert.deepEqual(protocol.decode(row), { a: Number(a), y: Number(y) });
  });
});
