// A server's text is shown as Python shows it (dpdist._shown.shown): fixtures/shown.json holds Python's outputs
// (tests/clients/test_client_shown.py checks it and writes it).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { originOf } from '../src/identity.js';
import { checkRelayUrl } from '../src/ohttp.js';
import { refusalShown, secretsOf, shown, shownUrl } from '../src/shown.js';

const CASES = JSON.parse(readFileSync(new URL('./fixtures/shown.json', import.meta.url), 'utf8'));

test("a server's text is escaped, cut and the client's secrets masked as Python does it, byte for byte", () => {
  assert.ok(CASES.length >= 200);
  for (const { text, secrets, limit, shown: expected } of CASES) assert.equal(shown(text, secrets, limit), expected, JSON.stringify(text));
});

test("the request's credential: after its scheme, a PrivateToken's token too, four characters at least", () => {
  assert.deepEqual(secretsOf('Bearer abcdefg'), ['abcdefg']);
  assert.deepEqual(secretsOf('PrivateToken token="abcdefgh"'), ['token="abcdefgh"', 'abcdefgh']);
  assert.deepEqual(secretsOf('Bearer abc'), []);
  assert.deepEqual(secretsOf(undefined), []);
});

test('a refusal is a dpdist one only with a code of the closed set', () => {
  const body = (value) => new TextEncoder().encode(JSON.stringify(value));
  assert.deepEqual(refusalShown(409, body({ error: 'campaign_closed', detail: 'closed\n' }), 'h:1', []), ['campaign_closed', 'campaign_closed: closed\\n']);
  assert.deepEqual(refusalShown(409, body({ error: 'campaign_closed', detail: null }), 'h:1', []), ['campaign_closed', 'campaign_closed']);
  assert.deepEqual(refusalShown(409, body({ error: 'conflict', detail: 'x' }), 'h:1', []), [null, 'status 409 from h:1 (not a dpdist answer, 33 bytes)']);
  assert.deepEqual(refusalShown(502, new Uint8Array(3), 'h\u001b', []), [null, 'status 502 from h\\x1b (not a dpdist answer, 3 bytes)']);
});

test('a URL an error names is shown without its userinfo, query values and fragment, whatever its @', () => {
  assert.equal(shownUrl('https://user:PW1\uff20host/x?token=PW2&a=b#PW3'), 'https://***@host/x?token=***&a=***#***');
  assert.equal(shownUrl('https://user\uff1aPW1\ufe6bhost/'), 'https://***@host/');
  assert.equal(shownUrl('ftp://u:PW1@h/\u202e'), 'ftp://***@h/\\u202e');
  // a relay or issuer URL the server named, the application's relay: refused, shown escaped and masked
  for (const refuse of [() => originOf('ftp://u:PW1@relay.example/\u202e', 'The relay URL'), () => originOf('https://u:PW1\uff20r/', 'The relay URL'),
    () => checkRelayUrl('ftp://u:PW1@relay.example/'), () => checkRelayUrl('https://u\uff1aPW1\ufe6bh/')]) {
    assert.throws(refuse, (error) => !error.message.includes('PW1') && !error.message.includes('\u202e') && error.message.includes('://***@'));
  }
});
