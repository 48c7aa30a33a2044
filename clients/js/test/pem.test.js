// The heavy-hitter client ("pem") encodes words, mixes prefixes and names its public hash family
// exactly as Python does (fixture), refuses what Python refuses, and its reports find the words.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError, InvalidValueTypeError, OutOfDomainError, fromConfig } from '../src/index.js';
import { mixPrefix } from '../src/protocols/pem.js';
import { deterministicSource, fixture } from './helpers.js';

const WORDS = { protocol: 'pem', epsilon: 4.0, alphabet: fixture.pem.alphabet, max_chars: fixture.pem.max_chars, k: 3 };

test('words encode to the items Python computes (cut to max_chars, 0 after the end)', () => {
  const protocol = fromConfig(WORDS);
  const items = fixture.pem.words.map((word, index) => protocol.encodeWord(word, index).toString());
  assert.deepEqual(items, fixture.pem.items);
});

test('prefixes mix to the FLH items Python computes, up to 62 bits', () => {
  const mixes = fixture.pem.prefixes.map((prefix) => mixPrefix(BigInt(prefix)));
  assert.deepEqual(mixes, fixture.pem.mixes);
});

test('the public hash family of a family_seed of 2^53 - 1 equals Python', () => {
  const protocol = fromConfig({ ...WORDS, family_seed: fixture.pem.family_seed, hash_count: 6 });
  const P = 2n ** 31n - 1n;
  const seeds = protocol.coefficients.map(([a, b]) => (BigInt(a - 1) * P + BigInt(b)).toString());
  assert.deepEqual(seeds, fixture.pem.seeds);
});

test('bad configs and values are refused with the argument named', () => {
  assert.throws(() => fromConfig({ protocol: 'pem', epsilon: 1 }), InvalidParameterError);
  assert.throws(() => fromConfig({ protocol: 'pem', epsilon: 1, bits: 8, alphabet: 'ab' }), /exactly one of 'bits'/);
  assert.throws(() => fromConfig({ protocol: 'pem', epsilon: 1, alphabet: 'aa' }), /'alphabet'/);
  assert.throws(() => fromConfig({ protocol: 'pem', epsilon: 1, bits: 8, family_seed: 2 ** 60 }), /'family_seed'/);
  const words = fromConfig(WORDS);
  assert.throws(() => words.privatize(['Apple'], deterministicSource(1)), OutOfDomainError);
  assert.throws(() => words.privatize([1.5], deterministicSource(1)), InvalidValueTypeError);
  const items = fromConfig({ protocol: 'pem', epsilon: 1, bits: 8 });
  assert.throws(() => items.privatize(['word'], deterministicSource(1)), /alphabet/);
  assert.throws(() => items.privatize([256], deterministicSource(1)), /2\*\*8/);
});

test('reports are (group, function, value) rows in range, one per word', () => {
  const protocol = fromConfig(WORDS);
  const batch = protocol.privatize(['apple', 'banana', 'kiwi'], deterministicSource(3));
  assert.deepEqual(batch.shape, [3, 3]);
  for (let i = 0; i < batch.length; i++) {
    const { group, j, value } = protocol.decode(batch.row(i));
    assert.ok(group < protocol.lengths.length && j < protocol.hashCount && value < protocol.g);
  }
});

test('labelOf decodes an item to its word, and reportBounds are the two probabilities with ratio e^eps', () => {
  const protocol = fromConfig(WORDS);
  for (const word of ['apple', 'a', 'wikipedia']) assert.equal(protocol.labelOf(protocol.encodeWord(word, 0)), word);
  const batch = protocol.privatize(['apple'], deterministicSource(5));
  const { high, low } = protocol.reportBounds(batch.row(0));
  assert.ok(Math.abs(Math.log(high / low) - protocol.epsilon) < 1e-12);
  const small = fromConfig({ protocol: 'pem', epsilon: 1, bits: 4, k: 2, step: 1, hash_count: 4 });
  const row = small.privatize([3], deterministicSource(6)).row(0);
  const likelihood = small.likelihood(row);
  assert.equal(likelihood.length, 16);
  const bounds = small.reportBounds(row);
  for (const p of likelihood) assert.ok(Math.abs(p - bounds.high) < 1e-15 || Math.abs(p - bounds.low) < 1e-15);
  assert.throws(() => protocol.inputs(), /cannot list every word/);
});
