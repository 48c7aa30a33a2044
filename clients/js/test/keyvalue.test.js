// Key-value sets ("privkv", "pckv-ue", "pckv-grr"): the input kind and its refusals, the design constants
// Python derives (pinned here at a few epsilons; every conformance example is compared with Python's channel
// by tests/clients/test_js_conformance.py), the exact law (epsilon-LDP over every set of a small domain),
// seeded reports following it, and draws that are the same whatever the set.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidValueTypeError, OutOfDomainError, fromConfig, privatize } from '../src/index.js';
import { CHANNEL_SLACK, checkSampledChannel, deterministicSource, drawTraces, maxPrivacyLoss } from './helpers.js';

const CONFIGS = [
  { protocol: 'privkv', epsilon: 1.0, domain_size: 3 },
  { protocol: 'pckv-ue', epsilon: 1.0, domain_size: 3, padding_length: 2 },
  { protocol: 'pckv-grr', epsilon: 1.0, domain_size: 3, padding_length: 2 },
  { protocol: 'pckv-grr', epsilon: 3.0, domain_size: 4 },
];

/** Every set of the first ``keys`` keys, each absent or held at -1, 0.25 or 1 (the law is linear in a value). */
function everySet(keys) {
  const sets = [];
  for (let code = 0; code < 4 ** keys; code++) {
    const set = [];
    for (let key = 0, rest = code; key < keys; key++, rest = Math.floor(rest / 4)) {
      if (rest % 4) set.push([key, [-1, 0.25, 1][(rest % 4) - 1]]);
    }
    sets.push(set);
  }
  return sets;
}

test("the design constants are Python's (dpdist.local.keyvalue at these epsilons)", () => {
  const ue = fromConfig({ protocol: 'pckv-ue', epsilon: 1.0, domain_size: 3, padding_length: 2 });
  assert.deepEqual([ue.a, ue.b, ue.p], [0.5, 0.3497554090542191, 0.7310585786300047]);
  const grr = fromConfig({ protocol: 'pckv-grr', epsilon: 3.0, domain_size: 4 });
  assert.deepEqual([grr.a, grr.b, grr.p], [0.7249492068471247, 0.06876269828821882, 0.9525741268224331]);
  const kv = fromConfig({ protocol: 'privkv', epsilon: 1.0, domain_size: 3 });
  assert.deepEqual([kv.p1, kv.p2], [0.6224593312018543, 0.6224593312018543]);
  assert.deepEqual(ue.config, { protocol: 'pckv-ue', version: 1, epsilon: 1.0, domain_size: 3, padding_length: 2 });
  assert.equal(grr.config.padding_length, 1); // the default, written back as Python writes it
});

for (const config of CONFIGS) {
  const name = `${config.protocol} epsilon ${config.epsilon} d ${config.domain_size}`;
  const protocol = fromConfig(config);
  const sets = everySet(Math.min(config.domain_size, 3));
  const rows = sets.map((set) => Array.from(protocol.channelRow(protocol.checkValue(set, 0))));

  test(`the exact law of a set is a distribution and epsilon-LDP over every set: ${name}`, () => {
    for (const row of rows) assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-12);
    const loss = maxPrivacyLoss(rows);
    assert.ok(loss <= config.epsilon * (1 + CHANNEL_SLACK), `${loss} > ${config.epsilon}`);
    if (config.protocol !== 'privkv') assert.ok(loss > config.epsilon * (1 - 1e-6), `PCKV spends its epsilon: ${loss}`);
  });

  test(`seeded reports follow the exact law: ${name}`, () => {
    const chosen = [0, 5, sets.length - 1].map((index) => sets[index]);
    const law = [0, 5, sets.length - 1].map((index) => rows[index]);
    checkSampledChannel(assert, protocol, chosen, law, 20_000, 3);
  });

  test(`the draws are the same whatever the coins and the set, its size included: ${name}`, () => {
    const values = [[], [[0, 0.5]], Array.from({ length: config.domain_size }, (_, key) => [key, -0.75])];
    for (let seed = 1; seed <= 3; seed++) assert.equal(drawTraces(protocol, values, seed).size, 1);
  });
}

test('an object {key: value}, a Map and an array of pairs are the same set', () => {
  const config = { protocol: 'pckv-ue', epsilon: 2.0, domain_size: 4 };
  const forms = [[{ 0: 0.5, 2: -1 }, {}], [new Map([[0, 0.5], [2, -1]]), new Map()], [[[0, 0.5], [2, -1]], []]];
  const bytes = forms.map((sets) => Buffer.from(privatize(config, sets, { source: deterministicSource(9) }).bytes));
  assert.deepEqual(bytes[0], bytes[1]);
  assert.deepEqual(bytes[0], bytes[2]);
  assert.equal(privatize(config, forms[0], { source: deterministicSource(9) }).length, 2);
});

test('bad sets are refused as Python refuses them, naming values', () => {
  const protocol = fromConfig({ protocol: 'pckv-grr', epsilon: 1.0, domain_size: 4, padding_length: 2 });
  const refuse = (sets, Error, pattern) => assert.throws(() => protocol.privatize(sets, deterministicSource(1)), (error) => {
    assert.ok(error instanceof Error, `${error.name}: ${error.message}`);
    assert.match(error.message, pattern);
    return true;
  });
  // the value is never shown (a person's): where it is and what is wrong with it
  refuse([{ 4: 0.5 }], OutOfDomainError, /'values'.*keys in \[0, 4\)\. The value at position 0 is a set with a key outside it \(not shown/);
  refuse([[[0, 1.5]]], OutOfDomainError, /'values'.*values in \[-1, 1\].*a set with a value outside it \(not shown[^.]*\)\.$/);
  refuse([[[0, NaN]]], OutOfDomainError, /values in \[-1, 1\]/);
  refuse([[[0, 0.1]], [[2, 0.1], [2, 0.3]]], OutOfDomainError, /at most once per user\. The value at position 1 is a set with a key twice/);
  refuse([[[0.5, 0.1]]], InvalidValueTypeError, /keys must be whole numbers/);
  refuse([{ a: 0.1 }], InvalidValueTypeError, /keys must be whole numbers/);
  refuse([[[0, '0.1']]], InvalidValueTypeError, /values must be numbers/);
  refuse([[[0, 0.1, 2]]], InvalidValueTypeError, /\(key, value\) pairs/);
  refuse([3], InvalidValueTypeError, /one set of \(key, value\) pairs per user/);
  refuse('abc', InvalidValueTypeError, /array of sets/);
});

test('keys Python refuses are refused: a non-canonical object key, a string key of a Map or a pair, a BigInt', () => {
  const protocol = fromConfig({ protocol: 'pckv-ue', epsilon: 1.0, domain_size: 4, padding_length: 2 });
  const refuse = (sets, Error, pattern) => assert.throws(() => protocol.privatize(sets, deterministicSource(1)), (error) => {
    assert.ok(error instanceof Error, `${error.name}: ${error.message}`);
    assert.match(error.message, pattern);
    return true;
  });
  refuse([{ '03': 0.1 }], InvalidValueTypeError, /keys must be whole numbers.*a set with another key \(a string\)/);
  refuse([{ 3: 0.1, '03': 0.2 }], InvalidValueTypeError, /another key \(a string\)/);
  refuse([{ '3e0': 0.1 }], InvalidValueTypeError, /another key \(a string\)/);
  refuse([{ ' 3': 0.1 }], InvalidValueTypeError, /another key \(a string\)/);
  refuse([new Map([['3', 0.1]])], InvalidValueTypeError, /another key \(a string\)/);
  refuse([[['3', 0.1]]], InvalidValueTypeError, /another key \(a string\)/);
  refuse([[[3n, 0.1]]], InvalidValueTypeError, /keys must be whole numbers.*another key \(a bigint\)/);
  refuse([{ 3: 1n }], InvalidValueTypeError, /values must be numbers\. The value at position 0 is a set with another value \(a bigint\)/);
  refuse([{ '-1': 0.1 }], OutOfDomainError, /keys in \[0, 4\)\. The value at position 0 is a set with a key outside it/);
  // an object's canonical keys are its integers, as before
  assert.deepEqual(protocol.checkValue({ 3: 0.5, 0: -1 }, 0), protocol.checkValue([[0, -1], [3, 0.5]], 0));
});

test('a wide domain still draws the same for every set, and reports only keys of the domain or dummies', () => {
  const protocol = fromConfig({ protocol: 'pckv-grr', epsilon: 2.0, domain_size: 1000, padding_length: 3 });
  const batch = protocol.privatize([{}, { 999: 1 }, Object.fromEntries(Array.from({ length: 1000 }, (_, k) => [k, 0]))], deterministicSource(4));
  for (let i = 0; i < batch.length; i++) assert.ok(protocol.reportIndex(batch.row(i)) < 2 * 1003);
  assert.equal(drawTraces(protocol, [{}, { 999: 1 }], 2).size, 1);
});
