// A server's text is shown as Python shows it (dpdist._shown.shown): fixtures/shown.json holds Python's outputs
// (tests/clients/test_client_shown.py checks it and writes it).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { originOf } from '../src/identity.js';
import { checkRelayUrl } from '../src/ohttp.js';
import { secretsOf, shown, shownOneLine, shownUrl } from '../src/shown.js';

const CASES = JSON.parse(readFileSync(new URL('./fixtures/shown.json', import.meta.url), 'utf8'));
/** A fixture's text (or shown text): itself, or its ``before + repeat * times + then`` (a long hostile text, fix76). */
const expanded = (text) => (typeof text === 'string' ? text : text.before + text.repeat.repeat(text.times) + text.then);

test('a server text is escaped, masked and cut as Python does it, byte for byte', () => {
  assert.ok(CASES.length >= 60);
  for (const { text, secrets, limit, fold, shown: expected } of CASES.filter((one) => typeof one.text === 'string')) {
    // a case with fold: Python's shown(..., fold=True), a refusal's detail on one line
    assert.equal((fold ? shownOneLine : shown)(text, secrets, limit), expected, JSON.stringify(text));
  }
});

test('shownOneLine masks a credential holding whitespace whole, then folds the line (attack120 F2)', () => {
  for (const space of ['\t', '\x0b', '\x1c', '\x85', '\xa0', '\u2028', '\u3000']) {
    const text = `a token=ABC${space}TAIL1 b password=PW${space}TAIL2 c Bearer SECRETQ${space}TAIL3 d\nsubmitToken=ABC${space}TAIL4 \n e`;
    assert.equal(shownOneLine(text, [], 2000), 'a token=*** b password=*** c Bearer *** d submitToken=*** e', JSON.stringify(space));
  }
  // a long run of whitespace takes no room; the request's credential holding a space, echoed with a tab, masked
  assert.equal(shownOneLine(`${' '.repeat(10000)}KEEP${' x'.repeat(200)}`, [], 20), 'KEEP x x x x x x x x...');
  assert.equal(shownOneLine('bad\tpin abc\tdefgh here', ['abc defgh'], null), 'bad pin *** here');
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

test('a URL an error names is shown without its userinfo, whatever its @ (ASCII, fullwidth, small)', () => {
  assert.equal(shownUrl('https://user:PW1\uff20host/x?token=PW2'), 'https://***@host/x?token=***');
  assert.equal(shownUrl('https://user\uff1aPW1\ufe6bhost/'), 'https://***@host/');
  assert.equal(shownUrl('ftp://u:PW1@h/\u202e'), 'ftp://***@h/\\u202e');
  // a relay or issuer URL the server named, the application's relay: refused, shown escaped and masked
  for (const refuse of [() => originOf('ftp://u:PW1@relay.example/\u202e', 'The relay URL'), () => originOf('https://u:PW1\uff20r/', 'The relay URL'),
    () => checkRelayUrl('ftp://u:PW1@relay.example/'), () => checkRelayUrl('https://u\uff1aPW1\ufe6bh/')]) {
    assert.throws(refuse, (error) => !error.message.includes('PW1') && !error.message.includes('\u202e') && error.message.includes('://***@'));
  }
});
