// A server's text is shown as Python shows it (dpdist._shown.shown): fixtures/shown.json holds Python's outputs
// (tests/clients/test_client_shown.py checks it and writes it).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { secretsOf, shown } from '../src/shown.js';

const CASES = JSON.parse(readFileSync(new URL('./fixtures/shown.json', import.meta.url), 'utf8'));

test('a server text is escaped, masked and cut as Python does it, byte for byte', () => {
  assert.ok(CASES.length >= 60);
  for (const { text, secrets, limit, shown: expected } of CASES) assert.equal(shown(text, secrets, limit), expected, JSON.stringify(text));
});

test("the request's credential: after its scheme, a PrivateToken's token too, six characters at least", () => {
  assert.deepEqual(secretsOf('Bearer abcdefg'), ['abcdefg']);
  assert.deepEqual(secretsOf('PrivateToken token="abcdefgh"'), ['token="abcdefgh"', 'abcdefgh']);
  assert.deepEqual(secretsOf('Bearer abc'), []);
  assert.deepEqual(secretsOf(undefined), []);
});
