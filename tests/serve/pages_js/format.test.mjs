// The service's page scripts' numbers (src/dpdist/serve/_web/static/format.js) under node's test runner
// (run by tests/serve/test_pages.py).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { fmt, interval, pick, ticks } from '../../../src/dpdist/serve/_web/static/format.js';

test('fmt keeps significant digits, drops trailing zeros, and prints "-" for what is not a number', () => {
  assert.equal(fmt(0.123456), '0.1235');
  assert.equal(fmt(2.5, 3), '2.5');
  assert.equal(fmt(-0.0000123456), '-0.00001235');
  for (const missing of [null, undefined, NaN, Infinity]) assert.equal(fmt(missing), '-');
});

test('interval prints its ends, or "-" without a low end', () => {
  assert.equal(interval(0.01, 0.5), '[0.01, 0.5]');
  assert.equal(interval(null, 0.5), '-');
});

test('ticks are round values covering the range', () => {
  assert.deepEqual(ticks(0, 1, 6), [0, 0.2, 0.4, 0.6, 0.8, 1]);
  assert.deepEqual(ticks(0, 120, 8), [0, 20, 40, 60, 80, 100, 120]);
  assert.deepEqual(ticks(3, 3, 6), [3]);
});

test('pick finds the interval of a quantity by validity and simultaneity', () => {
  const fixed = { quantity: 'cdf', anytime_valid: false, simultaneous: true };
  const pointwise = { quantity: 'cdf', anytime_valid: false, simultaneous: false };
  const anytime = { quantity: 'cdf', anytime_valid: true };
  const e = { intervals: [pointwise, fixed, anytime] };
  assert.equal(pick(e, 'cdf', false, true), fixed);
  assert.equal(pick(e, 'cdf', false), pointwise);
  assert.equal(pick(e, 'cdf', true), anytime);
  assert.equal(pick(e, 'mean', false), null);
  assert.equal(pick({}, 'mean', false), null);
});
