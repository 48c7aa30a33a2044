// Oblivious HTTP on the device (src/ohttp.js): RFC 9458's Appendix A byte for byte, RFC 9292's examples, npm's
// bhttp-js (an implementation dpdist did not write) reading what this client writes, and the Client's refusals.
// The served test (a dpdist gateway behind a forwarding-only relay) is tests/serve/test_ohttp_gateway_processes.py.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Client, MAX_ANSWER_BYTES, crc32, encodeRecord } from '../src/index.js';
import { AnswerTooLarge } from '../src/answer.js';
import {
  campaignKeyConfig, decodeBinaryResponse, decodeKeyList, encapsulateRequest, encodeBinaryRequest, obliviousFetch, varint,
} from '../src/ohttp.js';
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from '../src/vendor/hpke.js';

const hex = (text) => new Uint8Array(Buffer.from(text.replace(/\s+/g, ''), 'hex'));
const toHex = (bytes) => Buffer.from(bytes).toString('hex');

// ---- RFC 9458, Appendix A (typed in from the RFC's text) ----
const SKR = hex('3c168975674b2fa8e465970b79c8dcf09f1c741626480bd4c6162fc5b6a98e1a');
const KEY_CONFIG = hex('01002031e1f05a740102115220e9af918f738674aec95f54db6e04eb705aae8e 79815500080001000100010003');
const REQUEST = hex('00034745540568747470730b6578616d706c652e636f6d012f');
const SKE = hex('bc51d5e930bda26589890ac7032f70ad12e4ecb37abb1b65b1256c9c48999c73');
const PKE = hex('4b28f881333e7c164ffc499ad9796f877f4e1051ee6d31bad19dec96c208b472');
const ENCAPSULATED_REQUEST = hex(`010020000100014b28f881333e7c164ffc499ad9796f877f4e1051ee6d31bad1
  9dec96c208b4726374e469135906992e1268c594d2a10c695d858c40a026e796 5e7d86b83dd440b2c0185204b4d63525`);
const RESPONSE = hex('0140c8');
const ENCAPSULATED_RESPONSE = hex('c789e7151fcba46158ca84b04464910d86f9013e404feea014e7be4a441f234f 857fbd');

const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
const buffer = (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
const keyList = (...configs) => new Uint8Array(configs.flatMap((config) => [config.length >> 8, config.length & 0xff, ...config]));
const RFC_KEYS = keyList(KEY_CONFIG);

test("RFC 9458 Appendix A: the key configuration reads, the request encapsulates byte for byte, the response opens", async () => {
  const [config] = decodeKeyList(RFC_KEYS);
  assert.deepEqual([config.keyId, config.kemId, config.algorithms, config.supported], [1, 0x20, [[1, 1], [1, 3]], true]);
  assert.equal(toHex(config.bytes), toHex(KEY_CONFIG));
  const ekm = { privateKey: await suite.kem.importKey('raw', buffer(SKE), false), publicKey: await suite.kem.importKey('raw', buffer(PKE), true) };
  const { encapsulated, open } = await encapsulateRequest(config, REQUEST, { ekm });
  assert.equal(toHex(encapsulated), toHex(ENCAPSULATED_REQUEST));
  assert.equal(toHex(await open(ENCAPSULATED_RESPONSE)), toHex(RESPONSE));
  assert.equal(decodeBinaryResponse(RESPONSE).status, 200); // truncated: no fields, no content (RFC 9292 section 3.8)
  const changed = ENCAPSULATED_RESPONSE.slice();
  changed[20] ^= 1;
  await assert.rejects(open(changed), /does not open/);
  // and the gateway's side: what this client encapsulates afresh opens under the RFC's private key
  const fresh = await encapsulateRequest(config, REQUEST);
  const recipient = await suite.createRecipientContext({
    recipientKey: await suite.kem.importKey('raw', buffer(SKR), false), enc: buffer(fresh.encapsulated.slice(7, 39)),
    info: new Uint8Array([...new TextEncoder().encode('message/bhttp request'), 0, ...KEY_CONFIG.subarray(0, 3), 0, 1, 0, 1]),
  });
  assert.equal(toHex(new Uint8Array(await recipient.open(buffer(fresh.encapsulated.slice(39))))), toHex(REQUEST));
});

// ---- RFC 9292, section 5: Figure 8 (a known-length request), Figures 11 and 13 (responses) ----
const FIGURE_8 = hex(`00034745 54056874 74707300 0a2f6865 6c6c6f2e 74787440 6c0a7573 65722d61 67656e74 34637572 6c2f372e 31362e33
  206c6962 6375726c 2f372e31 362e3320 4f70656e 53534c2f 302e392e 376c207a 6c69622f 312e322e 3304686f 73740f77 77772e65 78616d70
  6c652e63 6f6d0f61 63636570 742d6c61 6e677561 67650665 6e2c206d 690000`);
const FIGURE_11 = hex(`03406607 72756e6e 696e670a 22736c65 65702031 35220040 67046c69 6e6b233c 2f737479 6c652e63 73733e3b 2072656c
  3d707265 6c6f6164 3b206173 3d737479 6c65046c 696e6b24 3c2f7363 72697074 2e6a733e 3b207265 6c3d7072 656c6f61 643b2061 733d7363
  72697074 0040c804 64617465 1d4d6f6e 2c203237 204a756c 20323030 39203132 3a32383a 35332047 4d540673 65727665 72064170 61636865
  0d6c6173 742d6d6f 64696669 65641d57 65642c20 3232204a 756c2032 30303920 31393a31 353a3536 20474d54 04657461 67142233 34616133
  38372d64 2d313536 38656230 30220d61 63636570 742d7261 6e676573 05627974 65730e63 6f6e7465 6e742d6c 656e6774 68023531 04766172
  790f4163 63657074 2d456e63 6f64696e 670c636f 6e74656e 742d7479 70650a74 6578742f 706c6169 6e003348 656c6c6f 20576f72 6c642120
  4d792063 6f6e7465 6e742069 6e636c75 64657320 61207472 61696c69 6e672043 524c462e 0d0a0000`);
const FIGURE_13 = hex(`0140c800 1d546869 7320636f 6e74656e 7420636f 6e746169 6e732043 524c462e 0d0a0d07 74726169 6c657204 74657874`);

test('RFC 9292: Figure 8 written byte for byte, Figures 11 and 13 read (informational responses skipped)', () => {
  const url = { protocol: 'https:', host: '', pathname: '/hello.txt', search: '' };
  const fields = [['user-agent', 'curl/7.16.3 libcurl/7.16.3 OpenSSL/0.9.7l zlib/1.2.3'], ['host', 'www.example.com'], ['accept-language', 'en, mi']];
  assert.equal(toHex(encodeBinaryRequest('GET', url, fields, new Uint8Array(0))), toHex(FIGURE_8));
  const eleven = decodeBinaryResponse(FIGURE_11);
  assert.equal(eleven.status, 200);
  assert.deepEqual(eleven.fields.map(([name]) => name), ['date', 'server', 'last-modified', 'etag', 'accept-ranges', 'content-length', 'vary', 'content-type']);
  assert.equal(new TextDecoder().decode(eleven.body), 'Hello World! My content includes a trailing CRLF.\r\n');
  const thirteen = decodeBinaryResponse(FIGURE_13);
  assert.deepEqual([thirteen.status, thirteen.fields, new TextDecoder().decode(thirteen.body)], [200, [], 'This content contains CRLF.\r\n']);
  for (const bad of [hex('02'), hex('0140'), hex('01 4064'), FIGURE_13.subarray(0, 10)]) assert.throws(() => decodeBinaryResponse(bad), /Malformed/);
});

function bhttpJs() {
  const prefix = process.env.DPDIST_NPM_PREFIX ?? join(homedir(), '.cache', 'dpdist', 'npm');
  if (!existsSync(join(prefix, 'node_modules', 'bhttp-js'))) return null;
  return createRequire(`${prefix}/`)('bhttp-js');
}

test("npm's bhttp-js reads the batch request this client writes (installed by .ci/run)", { skip: bhttpJs() === null && !process.env.CI && 'bhttp-js not installed' }, async () => {
  const { BHttpDecoder, BHttpEncoder } = bhttpJs();
  const body = new Uint8Array([1, 2, 3, 250]);
  const url = new URL('https://collector.example:8443/api/campaigns/c/batches/b1?x=1');
  const request = new BHttpDecoder().decodeRequest(encodeBinaryRequest('PUT', url, [['content-type', 'application/octet-stream'], ['authorization', 'Bearer t']], body));
  assert.equal(request.method, 'PUT');
  assert.equal(request.url, url.href);
  assert.equal(request.headers.get('authorization'), 'Bearer t');
  assert.deepEqual(new Uint8Array(await request.arrayBuffer()), body);
  const theirs = await new BHttpEncoder().encodeResponse(new Response('{"ok":1}', { status: 201, headers: { 'content-type': 'application/json' } }));
  const ours = decodeBinaryResponse(theirs);
  assert.deepEqual([ours.status, ours.fields, new TextDecoder().decode(ours.body)], [201, [['content-type', 'application/json']], '{"ok":1}']);
});

// ---- the Client through a relay, against a gateway written here on the RFC's key ----
function document(configs, extra = {}) {
  return { campaign: 'c', state: 'open', config: { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 4 },
    ohttp: { keys: Buffer.from(keyList(...configs)).toString('base64url'), gateway: '/ohttp/gateway' }, ...extra };
}

/** A relay and gateway in one fetch: opens each request with the RFC's key, answers ``answer(inner)``; records hosts. */
function gateway(answer, seen) {
  return async (url, init) => {
    seen.push({ host: new URL(url).host, contentType: init.headers['Content-Type'] });
    const body = new Uint8Array(init.body);
    const recipient = await suite.createRecipientContext({
      recipientKey: await suite.kem.importKey('raw', buffer(SKR), false), enc: buffer(body.slice(7, 39)),
      info: new Uint8Array([...new TextEncoder().encode('message/bhttp request'), 0, ...body.subarray(0, 7)]),
    });
    const inner = new Uint8Array(await recipient.open(buffer(body.slice(39))));
    const secret = new Uint8Array(await recipient.export(new TextEncoder().encode('message/bhttp response'), 16));
    const [status, json] = answer(new TextDecoder().decode(inner));
    const content = new TextEncoder().encode(JSON.stringify(json));
    const message = new Uint8Array([1, ...varint(status), 0, ...varint(content.length), ...content, 0]);
    const nonce = crypto.getRandomValues(new Uint8Array(16));
    const salt = new Uint8Array([...body.slice(7, 39), ...nonce]);
    const ikm = await crypto.subtle.importKey('raw', secret, 'HKDF', false, ['deriveBits']);
    const derive = async (info, length) => new Uint8Array(await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info: new TextEncoder().encode(info) }, ikm, length * 8));
    const key = await crypto.subtle.importKey('raw', await derive('key', 16), 'AES-GCM', false, ['encrypt']);
    const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv: await derive('nonce', 12) }, key, message));
    return new Response(new Uint8Array([...nonce, ...sealed]), { status: 200, headers: { 'content-type': 'message/ohttp-res' } });
  };
}

test('given its keys, the Client fetches the config and sends its batch through the relay only', async () => {
  const seen = [];
  const inner = [];
  const fetch = gateway((text) => {
    inner.push(text);
    if (text.includes('/config')) return [200, document([KEY_CONFIG])];
    const batchId = text.match(/batches\/([0-9a-f]{32})/)[1];
    return [200, { campaign: 'c', batch_id: batchId, n_read: 3, accepted: 3, rejected: {}, duplicate: false }];
  }, seen);
  const client = new Client('https://collector.example', 'c', { ohttp: { relay: 'https://relay.example/ohttp', keys: RFC_KEYS }, fetch, memoStorage: null, locks: null, retries: 0 });
  const ack = await client.submitMany([0, 1, 2]);
  assert.equal(ack[0].accepted, 3);
  assert.deepEqual(seen.map((one) => one.host), ['relay.example', 'relay.example']);
  assert.ok(seen.every((one) => one.contentType === 'message/ohttp-req'));
  assert.ok(inner[0].includes('GET') && inner[0].includes('/api/campaigns/c/config') && inner[0].includes('collector.example'));
  assert.ok(inner[1].includes('PUT') && inner[1].includes('/api/campaigns/c/batches/'));
  assert.ok(inner.every((text) => text.includes('dpdist-ohttp-answer') && text.includes('encapsulated'))); // the answer's mark, under HPKE
  assert.ok(inner.every((text) => !/user-agent|accept/.test(text))); // the fields every dpdist client sends, no more
});

test('an answer decapsulated from the relay is an acknowledgement only if it names the batch sent', async () => {
  const inner = [];
  const fetch = gateway((text) => {
    if (text.includes('/config')) return [200, document([KEY_CONFIG])];
    inner.push(text);
    const batchId = text.match(/batches\/([0-9a-f]{32})/)[1];
    const ack = { campaign: 'c', batch_id: batchId, n_read: 3, accepted: 3, rejected: {}, duplicate: false };
    return [200, inner.length === 1 ? { ...ack, batch_id: 'another' } : ack];
  }, []);
  const client = new Client('https://collector.example', 'c', { ohttp: { relay: 'https://relay.example/ohttp', keys: RFC_KEYS }, fetch, memoStorage: null, locks: null, retryDelayMs: 1 });
  const [ack] = await client.submitMany([0, 1, 2]);
  assert.equal(inner.length, 2);
  assert.equal(ack.batch_id, inner[0].match(/batches\/([0-9a-f]{32})/)[1]);
  assert.equal(inner[0].match(/batches\/([0-9a-f]{32})/)[1], inner[1].match(/batches\/([0-9a-f]{32})/)[1]);
});

test('a swapped key configuration, a relayed campaign, a collector without a gateway: refused before a batch is sent', async () => {
  const other = KEY_CONFIG.slice();
  other[5] ^= 1; // another public key under the same key id
  const cases = [
    [document([other]), RFC_KEYS, 'ohttp_key_mismatch'],
    [document([KEY_CONFIG], { relay: { url: 'https://relay.example' } }), null, 'relayed_campaign'],
    [{ campaign: 'c', state: 'open', config: { protocol: 'grr', version: 1, epsilon: 1.0, domain_size: 4 } }, null, 'no_ohttp_gateway'],
  ];
  for (const [served, keys, code] of cases) {
    const puts = [];
    const fetch = async (url, init) => {
      if (init.method === 'PUT' || String(url).includes('relay.example/ohttp')) puts.push(url);
      return new Response(JSON.stringify(served), { status: 200, headers: { 'content-type': 'application/json' } });
    };
    const direct = keys === null ? fetch : gateway((inner) => (inner.includes('PUT') ? puts.push(inner) : 0, [200, served]), []);
    const client = new Client('https://collector.example', 'c', { ohttp: { relay: 'https://relay.example/ohttp', keys }, fetch: direct, memoStorage: null, locks: null, retries: 0 });
    await assert.rejects(client.submitMany([1]), (error) => error.code === code);
    assert.deepEqual(puts, []);
  }
  assert.throws(() => campaignKeyConfig('c', document([KEY_CONFIG]), keyList(other)), /none of which is among the ones this device was given/);
  // a rotation states a new key first and keeps the old; a device given the old one still sends to it
  const rotated = KEY_CONFIG.slice();
  rotated[0] = 2;
  rotated[5] ^= 1;
  assert.equal(campaignKeyConfig('c', document([rotated, KEY_CONFIG]), RFC_KEYS).keyId, 1);
  assert.equal(campaignKeyConfig('c', document([rotated, KEY_CONFIG]), keyList(rotated, KEY_CONFIG)).keyId, 2);
});

test('the ohttp option is checked by name, and a relay that answers for itself is read as a refusal', async () => {
  assert.throws(() => new Client('https://c.example', 'c', { memoStorage: null, ohttp: { relay: 'ftp://relay' } }), /'ohttp.relay'/);
  assert.throws(() => new Client('https://c.example', 'c', { memoStorage: null, ohttp: { relay: 'https://relay/ohttp', keys: new Uint8Array([0, 9, 1]) } }), /'ohttp.keys'/);
  const [config] = decodeKeyList(RFC_KEYS);
  const problem = { type: 'https://iana.org/assignments/http-problem-types#ohttp-key', title: 'key identifier unknown' };
  const answers = [
    [new Response(JSON.stringify(problem), { status: 400, headers: { 'content-type': 'application/problem+json' } }), 400, 'ohttp_key_mismatch'],
    [new Response('hello', { status: 200, headers: { 'content-type': 'text/plain' } }), 502, 'not_encapsulated'],
    [new Response('dropped', { status: 502 }), 502, null],
  ];
  for (const [outer, status, code] of answers) {
    const answer = await obliviousFetch('https://relay/ohttp', config, async () => outer)('https://c.example/api/campaigns/c/config');
    assert.equal(answer.status, status);
    if (code !== null) assert.equal((await answer.json()).error, code);
  }
  const garbage = new Response(new Uint8Array(40), { status: 200, headers: { 'content-type': 'message/ohttp-res' } });
  await assert.rejects(obliviousFetch('https://relay/ohttp', config, async () => garbage)('https://c.example/x'), /does not open/);
});

test("the relay's answer is read under the client's deadline, redirects and bound", async () => {
  const [config] = decodeKeyList(RFC_KEYS);
  const seen = [];
  const huge = new Response(new Uint8Array(MAX_ANSWER_BYTES + 1), { status: 200, headers: { 'content-type': 'message/ohttp-res' } });
  const signal = AbortSignal.timeout(60000);
  await assert.rejects(obliviousFetch('https://relay/ohttp', config, async (url, init) => {
    seen.push(init);
    return huge;
  })('https://c.example/x', { signal, redirect: 'manual' }), AnswerTooLarge);
  assert.equal(seen[0].signal, signal);
  assert.equal(seen[0].redirect, 'manual');
});

test('two batches encapsulate to the same length whatever their reports and CRC-32s', async () => {
  const [config] = decodeKeyList(RFC_KEYS);
  const batch = (value) => ({ config: { domain_size: 100, epsilon: 1.0, protocol: 'grr', version: 1 }, descr: '|u1', shape: [1], bytes: Uint8Array.of(value), floatKeys: new Set(['epsilon']) });
  const digits = (value) => String(crc32(Uint8Array.of(value))).length;
  const [short] = [...Array(100).keys()].filter((value) => digits(value) < 9);
  assert.ok(short !== undefined && digits(short) !== digits(0)); // unpadded, these two lengths differ
  const lengths = [];
  const relay = async (url, init) => {
    lengths.push(init.body.length);
    return new Response('dropped', { status: 502 });
  };
  for (const value of [short, 0]) {
    const body = encodeRecord(batch(value), { fileId: 'a'.repeat(32) });
    await obliviousFetch('https://relay/ohttp', config, relay)('https://c.example/api/campaigns/c/batches/' + 'b'.repeat(32), { method: 'PUT', headers: { 'Content-Type': 'application/x-dpdist-reports' }, body });
  }
  assert.equal(lengths[0], lengths[1]);
});
