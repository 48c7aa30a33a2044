// The exact draws: uniform integers by rejection (no modulo bias) and Bernoulli(p) for a double p.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RandomSource } from '../src/random.js';
import { scriptedSource } from './helpers.js';

test('uniformInt rejects the words above the largest multiple of n (no modulo bias)', () => {
  // n = 3: 2^32 = 3 * 1431655765 + 1, so the single word 2^32 - 1 is redrawn
  const source = scriptedSource([0xffffffff, 0xfffffffe, 5]);
  assert.equal(source.uniformInt(3), 0xfffffffe % 3);
  assert.equal(source.uniformInt(3), 5 % 3);
  // n = 2^31 + 1: words >= 2^31 + 1 are redrawn (almost half of them)
  const big = scriptedSource([0x80000001, 0x80000000]);
  assert.equal(big.uniformInt(2 ** 31 + 1), 0x80000000);
  assert.equal(scriptedSource([0xffffffff]).uniformInt(2 ** 32), 0xffffffff);
});

test('bernoulli(p) compares a lazily drawn uniform real with the binary expansion of p', () => {
  // p = 1/2: the first word decides (w < 2^31)
  assert.equal(scriptedSource([0x7fffffff]).bernoulli(0.5), true);
  assert.equal(scriptedSource([0x80000000]).bernoulli(0.5), false);
  // p = 2^-32 + 2^-64 has digits (1, 1) in base 2^32: a first word 0 is below, 2 above
  const p = 2 ** -32 + 2 ** -64;
  assert.equal(scriptedSource([0]).bernoulli(p), true);
  assert.equal(scriptedSource([2]).bernoulli(p), false);
  // tie on the first word (1), second word compared with p's second digit (1)
  assert.equal(scriptedSource([1, 0]).bernoulli(p), true);
  assert.equal(scriptedSource([1, 1]).bernoulli(p), false);
  // the expansion ends: an exact tie on every digit means U >= p
  assert.equal(scriptedSource([0x80000000]).bernoulli(0.5 + 0), false);
  assert.equal(scriptedSource([5]).bernoulli(0), false);
  assert.equal(scriptedSource([0xffffffff]).bernoulli(1), true);
  assert.throws(() => scriptedSource([0]).bernoulli(1.5), RangeError);
  assert.throws(() => scriptedSource([0]).bernoulli(NaN), RangeError);
});

test('bernoulli(p) for a double with 53 significant bits reads at most three words', () => {
  const p = 0.1; // 0x3FB999999999999A: binary expansion ends after 56 bits
  const digits = [Math.floor(p * 2 ** 32)];
  digits.push(Math.floor((p * 2 ** 32 - digits[0]) * 2 ** 32));
  assert.equal(scriptedSource([digits[0], digits[1] - 1]).bernoulli(p), true);
  assert.equal(scriptedSource([digits[0], digits[1] + 1]).bernoulli(p), false);
});

test('uniform53 is k * 2^-53 for 53 bits of two words', () => {
  assert.equal(scriptedSource([0, 0]).uniform53(), 0);
  assert.equal(scriptedSource([0xffffffff, 0xffffffff]).uniform53(), 1 - 2 ** -53);
  assert.equal(scriptedSource([0x80000000, 0]).uniform53(), 0.5);
});

test('the default source is crypto.getRandomValues and a fill function is required', () => {
  const source = new RandomSource();
  const words = new Set(Array.from({ length: 64 }, () => source.word()));
  assert.ok(words.size > 60);
  assert.throws(() => new RandomSource(42), TypeError);
});

test('uniformInt keeps exactly the residues for large n and words near 2^32', () => {
  for (const n of [3, 7, 1000003, 2 ** 31 - 1, 2 ** 31 + 1, 2 ** 32 - 1, 3 * 2 ** 30]) {
    const limit = 2 ** 32 - (2 ** 32 % n);
    for (const w of [0, 1, n - 1, n, limit - 1, limit - n, 2 ** 32 - 1, 2 ** 31]) {
      if (w >= limit || w < 0) continue;
      assert.equal(scriptedSource([w]).uniformInt(n), w % n, `n=${n} w=${w}`);
    }
    if (limit < 2 ** 32) assert.equal(scriptedSource([limit, 5]).uniformInt(n), 5 % n, `n=${n} rejects ${limit}`);
  }
});

test('uniformInt above 2^32 (a large hash range) draws 53-bit integers by rejection, exactly', () => {
  const n = 3 * 2 ** 40 + 7;
  const limit = 2 ** 53 - (2 ** 53 % n);
  // x = (w1 >>> 11) 2^32 + w2
  const word = (x) => [Math.floor(x / 2 ** 32) * 2 ** 11, x % 2 ** 32];
  for (const x of [0, 1, n - 1, n, limit - 1, 2 ** 52 + 12345]) {
    assert.equal(scriptedSource(word(x)).uniformInt(n), x % n, `x=${x}`);
  }
  assert.equal(scriptedSource([...word(limit), ...word(42)]).uniformInt(n), 42, 'rejects the top partial block');
  assert.throws(() => scriptedSource([0, 0]).uniformInt(2 ** 53 + 2), RangeError);
});
