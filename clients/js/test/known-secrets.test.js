// No line the client writes holds a secret it was given: its token and its issuer credential, echoed by a server in
// every form (as sent, percent-, JSON-, Python- and HTML-escaped, in base64 at each offset) through every path a
// ServiceError's message takes: a dpdist refusal, a refusal that is none, a redirect, a success that acknowledges
// nothing, a failure to reach the server.  Seeded secrets of every kind of character.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Client, ServiceError } from '../src/index.js';
import { deterministicSource } from './helpers.js';

const CONFIG = { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 8 };
const ALPHABET = Array.from('abcXYZ0189-_.~+/=:@%&<>"\' \u00e4\u00f6\u4e2d\u{1f511}');

/** A seeded generator of secrets: ``next(length)``. */
function secrets(seed) {
  let state = seed;
  const next = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  return (length) => Array.from({ length }, () => ALPHABET[Math.floor(next() * ALPHABET.length)]).join('');
}

/** ``secret`` in each form a server could echo it in. */
export function echoes(secret) {
  const bytes = new TextEncoder().encode(secret);
  const base64 = (prefix) => Buffer.concat([Buffer.from(prefix), bytes]).toString('base64');
  const forms = [secret, encodeURIComponent(secret), encodeURIComponent(secret).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()),
    JSON.stringify(secret).slice(1, -1), Array.from(secret, (c) => `&#${c.codePointAt(0)};`).join(''),
    Array.from(secret, (c) => `&#x${c.codePointAt(0).toString(16)};`).join(''), secret.replace(/&/g, '&amp;').replace(/</g, '&lt;'),
    secret.split('').map((unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`).join(''), secret.replace(/ /g, '+')];
  for (const prefix of ['', 'u', 'u:']) forms.push(base64(prefix), base64(prefix).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
  return [...new Set(forms)];
}

/** A fetch answering the campaign's config, and everything else as ``kind`` says, each echoing ``said``. */
function hostile(kind, said) {
  return async (url, init) => {
    if ((init?.method ?? 'GET') === 'GET') return Response.json({ campaign: 'c1', state: 'open', config: CONFIG });
    if (kind === 'unreachable') throw new TypeError(`fetch failed: ${said}`);
    if (kind === 'redirect') return new Response(null, { status: 302, headers: { Location: `http://h/?t=${encodeURIComponent(said)}` } });
    const body = { refusal: { error: 'campaign_closed', detail: said }, other: { error: said, detail: said }, wrong: { batch_id: said } }[kind];
    return Response.json(body, { status: kind === 'wrong' ? 200 : 409 });
  };
}

test('no message of the client holds its token or its issuer credential, in any form a server echoes it in', async () => {
  const next = secrets(85);
  for (let round = 0; round < 12; round += 1) {
    const token = next(6 + round);
    const credential = next(20);
    const said = [...echoes(token), ...echoes(credential)].join(' | ');
    for (const kind of ['refusal', 'other', 'redirect', 'wrong', 'unreachable']) {
      const client = new Client('http://collector.test', 'c1', { token, fetch: hostile(kind, said), issuer: { credential, url: 'http://issuer.test' },
        retries: 1, retryDelayMs: 1, retryWindowMs: 0, memoStorage: null, locks: null, source: deterministicSource(round) });
      const error = await client.submit(1).then(() => assert.fail('submitted'), (caught) => caught);
      assert.ok(error instanceof ServiceError, String(error));
      for (const form of [...echoes(token), ...echoes(credential)].filter((one) => Array.from(one).length >= 4)) {
        assert.ok(!error.message.includes(form) && !String(error.code).includes(form), `${kind}: ${form} in ${error.message}`);
      }
    }
  }
});
