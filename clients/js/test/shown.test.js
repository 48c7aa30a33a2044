// A server's text is shown as Python shows it (dpdist._shown.shown): fixtures/shown.json holds Python's outputs
// (tests/clients/test_client_shown.py checks it and writes it).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { secretsOf, shown } from '../src/shown.js';

const CASES = JSON.parse(readFileSync(new URL('./fixtures/shown.json', import.meta.url), 'utf8'));
/** A fixture's text (or shown text): itself, or its ``before + repeat * times + then`` (a long hostile text, fix76). */
const expanded = (text) => (typeof text === 'string' ? text : text.before + text.repeat.repeat(text.times) + text.then);

test('a server text is escaped, masked and cut as Python does it, byte for byte', () => {
  assert.ok(CASES.length >= 60);
  for (const { text, secrets, limit, shown: expected } of CASES.filter((one) => typeof one.text === 'string')) {
    assert.equal(shown(text, secrets, limit), expected, JSON.stringify(text));
  }
});

test('a long hostile text (200,000 characters) is shown whole and masked as Python masks it', () => {
  // each pattern reads the text in a linear time: these took minutes when a run was read from each of its characters
  const hostile = CASES.filter((one) => typeof one.text !== 'string');
  assert.ok(hostile.length >= 8);
  for (const { text, secrets, limit, shown: expected } of hostile) {
    assert.ok(expanded(text).length >= 200000);
    const got = shown(expanded(text), secrets, limit);
    assert.ok(got === expanded(expected) && !got.includes('SECRET'), JSON.stringify(text));
  }
});

test("the request's credential: after its scheme, a PrivateToken's token too, six characters at least", () => {
  assert.deepEqual(secretsOf('Bearer abcdefg'), ['abcdefg']);
  assert.deepEqual(secretsOf('PrivateToken token="abcdefgh"'), ['token="abcdefgh"', 'abcdefgh']);
  assert.deepEqual(secretsOf('Bearer abc'), []);
  assert.deepEqual(secretsOf(undefined), []);
});
