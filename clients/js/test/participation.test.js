// Participation: one report per campaign on a device, drawn once and kept.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { IncompatibleStateError, InvalidParameterError, Participation, ReportAlreadyDrawnError, fromConfig, newFileId, participationKey } from '../src/index.js';
import { deterministicSource } from './helpers.js';

const GRR = fromConfig({ protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 });

function memoryStorage() {
  const items = new Map();
  return { items, getItem: (key) => (items.has(key) ? items.get(key) : null), setItem: (key, value) => items.set(key, String(value)) };
}

function counted(source) {
  const calls = [];
  return { calls, draw: (value) => (calls.push(value), GRR.privatize([value], source)) };
}

test('a value is drawn once: the same value, and a reload, give the kept report', () => {
  const storage = memoryStorage();
  const { calls, draw } = counted(deterministicSource(1));
  const first = new Participation('c1', GRR, storage).report(3, '3', draw, newFileId);
  assert.equal(first.fresh, true);
  for (let i = 0; i < 20; i++) {
    const again = new Participation('c1', GRR, storage).report(3, ' 3', draw, newFileId); // a reload each time
    assert.deepEqual(again.batch.bytes, first.batch.bytes);
    assert.equal(again.batchId, first.batchId);
    assert.equal(again.fresh, false);
  }
  assert.deepEqual(calls, [3]);
  assert.deepEqual(new Participation('c1', GRR, storage).kept.batch.bytes, first.batch.bytes);
});

test('another value is refused while the kept report is unsent; once sent, the campaign is done', () => {
  const storage = memoryStorage();
  const { calls, draw } = counted(deterministicSource(2));
  const participation = new Participation('c1', GRR, storage);
  const first = participation.report(3, '3', draw, newFileId);
  assert.throws(
    () => participation.report(5, '5', draw, newFileId),
    (error) => error instanceof ReportAlreadyDrawnError && /"3"/.test(error.message) && error.kept.batchId === first.batchId,
  );
  participation.markSent({ batch_id: first.batchId, accepted: 1 });
  assert.doesNotMatch(storage.getItem(participation.key), /"3"/); // the value is forgotten once sent
  const after = new Participation('c1', GRR, storage).report(5, '5', draw, newFileId);
  assert.deepEqual(after.batch.bytes, first.batch.bytes);
  assert.deepEqual(after.sent, { batch_id: first.batchId, accepted: 1 });
  assert.deepEqual(calls, [3]);
});

test('the key is the campaign and its config; a damaged record is refused, never replaced', () => {
  const storage = memoryStorage();
  const { calls, draw } = counted(deterministicSource(3));
  new Participation('c1', GRR, storage).report(1, '1', draw, newFileId);
  new Participation('c2', GRR, storage).report(1, '1', draw, newFileId);
  const other = fromConfig({ protocol: 'grr', version: 1, epsilon: 2.0, domain_size: 8 });
  new Participation('c1', other, storage).report(1, '1', (v) => other.privatize([v], deterministicSource(4)), newFileId);
  assert.equal(calls.length, 2);
  assert.equal(storage.items.size, 3);
  assert.notEqual(participationKey('c1', GRR), participationKey('c1', other));

  storage.setItem(participationKey('c3', GRR), '{not json');
  assert.throws(() => new Participation('c3', GRR, storage), IncompatibleStateError);
  assert.equal(storage.getItem(participationKey('c3', GRR)), '{not json');
  assert.throws(() => new Participation('c1', GRR, null), InvalidParameterError);
});

test('a record is drawn once too; records are compared value by value (labels with commas do not collide)', () => {
  const spl = fromConfig({ protocol: 'spl', version: 1, epsilon: 2.0, attributes: [
    { name: 'a', labels: ['x,y', 'x', 'z'] }, { name: 'b', labels: ['z', 'y,z', 'q'] }] });
  const storage = memoryStorage();
  const calls = [];
  const draw = (record) => (calls.push(record), spl.privatize([record], deterministicSource(5)));
  const participation = new Participation('records', spl, storage);
  const first = participation.report(['x,y', 'z'], '["x,y","z"]', draw, newFileId);
  assert.deepEqual(participation.report(['x,y', 'z'], '["x,y","z"]', draw, newFileId).batch.bytes, first.batch.bytes);
  assert.throws(() => participation.report(['x', 'y,z'], '["x","y,z"]', draw, newFileId), ReportAlreadyDrawnError); // "x,y,z" both
  assert.equal(new Participation('records', spl, storage).kept.value, '["x,y","z"]');
  assert.deepEqual(calls, [['x,y', 'z']]);
});
