// Privacy Pass on the device against every test vector of RFC 9474 (Appendix A) and RFC 9578 (Appendix A.2), with the
// vectors' fixed randomness; the tests' issuer and verifier (privacypass-helpers.js, node:crypto and BigInt) against
// the same vectors; the encodings' refusals.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import {
  CAMPAIGN_CONTEXT,
  EARLIER_CAMPAIGN_CONTEXT,
  TOKEN_BYTES,
  authorizationHeader,
  base64UrlDecode,
  base64UrlEncode,
  checkTokenKey,
  createTokenRequest,
  finalizeToken,
  redemptionContext,
  tokenChallenge,
} from '../src/privacypass.js';
import { RSABSSA } from '../src/vendor/privacypass.js';
import { ServiceError } from '../src/errors.js';
import {
  bigFromBytes,
  boundTo,
  blindSign,
  bytesFromBig,
  hex,
  modInverse,
  newIssuerKey,
  parseChallenge,
  toHex,
  vectorIssuerKey,
  verifyToken,
  withRandomness,
} from './privacypass-helpers.js';

const RFC9474 = JSON.parse(readFileSync(new URL('./fixtures/rfc9474.json', import.meta.url), 'utf8'));
const RFC9578 = JSON.parse(readFileSync(new URL('./fixtures/rfc9578.json', import.meta.url), 'utf8'));

const VARIANTS = {
  'RSABSSA-SHA384-PSS-Randomized': () => RSABSSA.SHA384.PSS.Randomized(),
  'RSABSSA-SHA384-PSSZERO-Randomized': () => RSABSSA.SHA384.PSSZero.Randomized(),
  'RSABSSA-SHA384-PSS-Deterministic': () => RSABSSA.SHA384.PSS.Deterministic(),
  'RSABSSA-SHA384-PSSZERO-Deterministic': () => RSABSSA.SHA384.PSSZero.Deterministic(),
};

function publicKeyOf(vector) {
  const jwk = { kty: 'RSA', n: Buffer.from(vector.n, 'hex').toString('base64url'), e: Buffer.from(vector.e, 'hex').toString('base64url'), ext: true };
  return crypto.subtle.importKey('jwk', jwk, { name: 'RSA-PSS', hash: 'SHA-384' }, true, ['verify']);
}

test('the fixtures hold every vector of RFC 9474 Appendix A and RFC 9578 Appendix A.2, with their source', () => {
  assert.deepEqual(RFC9474.vectors.map((v) => v.name), Object.keys(VARIANTS));
  assert.match(RFC9474.source, /RFC 9474 Appendix A.*draft-irtf-cfrg-rsa-blind-signatures-14/);
  assert.equal(RFC9578.vectors.length, 5);
  assert.match(RFC9578.source, /RFC 9578 Appendix A\.2.*draft-ietf-privacypass-protocol-16/);
});

for (const vector of RFC9474.vectors) {
  test(`RFC 9474 ${vector.name}: Prepare, Blind and Finalize with the vector's randomness; BlindSign of the tests' issuer`, async () => {
    const suite = VARIANTS[vector.name]();
    const publicKey = await publicKeyOf(vector);
    const n = BigInt(`0x${vector.n}`);
    const kLen = vector.n.length / 2;
    const prefix = hex(vector.msg_prefix);
    // Prepare: the randomized variants prepend 32 random bytes, the deterministic ones nothing
    const prepared = await withRandomness([prefix], () => suite.prepare(hex(vector.msg)));
    assert.equal(toHex(prepared), vector.prepared_msg);
    // Blind draws the PSS salt, then r (the inverse of the vector's inv)
    const r = modInverse(BigInt(`0x${vector.inv}`), n);
    const { blindedMsg, inv } = await withRandomness([hex(vector.salt), bytesFromBig(r, kLen)], () => suite.blind(publicKey, prepared));
    assert.equal(toHex(blindedMsg), vector.blinded_msg);
    assert.equal(bigFromBytes(inv), BigInt(`0x${vector.inv}`));
    // the tests' issuer (BigInt) signs as the RFC does
    const signer = { n, e: BigInt(`0x${vector.e}`), d: BigInt(`0x${vector.d}`), length: kLen };
    assert.equal(toHex(blindSign(signer, blindedMsg)), vector.blind_sig);
    const sig = await suite.finalize(publicKey, prepared, hex(vector.blind_sig), inv);
    assert.equal(toHex(sig), vector.sig);
    // Finalize checks the signature: another blind signature, or another message, is refused
    const tampered = hex(vector.blind_sig);
    tampered[kLen - 1] ^= 1;
    await assert.rejects(suite.finalize(publicKey, prepared, tampered, inv), /invalid signature/);
    await assert.rejects(suite.finalize(publicKey, hex(`${vector.prepared_msg}00`), hex(vector.blind_sig), inv), /invalid signature/);
  });
}

for (const [index, vector] of RFC9578.vectors.entries()) {
  test(`RFC 9578 A.2 vector ${index + 1}: TokenChallenge, TokenRequest, TokenResponse, Token, and the relay's check`, async () => {
    const issuer = vectorIssuerKey(vector.skS);
    assert.equal(toHex(issuer.tokenKey), vector.pkS); // the tests' SPKI with the id-RSASSA-PSS OID is the RFC's
    const challenge = hex(vector.token_challenge);
    const fields = parseChallenge(challenge);
    assert.equal(toHex(tokenChallenge(fields.issuerName, fields.context, fields.originInfo)), vector.token_challenge);
    const state = await withRandomness([hex(vector.nonce), hex(vector.salt), hex(vector.blind)], () => createTokenRequest(hex(vector.pkS), challenge));
    assert.equal(toHex(base64UrlDecode(state.request)), vector.token_request);
    const response = blindSign(issuer, base64UrlDecode(state.request).subarray(3));
    assert.equal(toHex(response), vector.token_response);
    // the state is JSON-safe: a device may keep it while the issuer's answer is on its way
    const token = await finalizeToken(base64UrlEncode(hex(vector.pkS)), JSON.parse(JSON.stringify(state)), hex(vector.token_response));
    assert.equal(token.length, TOKEN_BYTES);
    assert.equal(toHex(token), vector.token);
    assert.equal(verifyToken(token, { publicKey: issuer.publicKey, tokenKey: issuer.tokenKey, challenge }).nonce, vector.nonce);
    assert.equal(authorizationHeader(token), `PrivateToken token="${Buffer.from(token).toString('base64url')}"`);
  });
}

test('a token request is fresh each time, and a response that is not the signature of its own request is refused', async () => {
  // the campaign's key is the one of the smaller modulus: its blinded messages are then always below the other key's
  // modulus, so the other key signs them and finalizeToken must refuse the signature (with the campaign's key the
  // larger, the other's BlindSign threw 'message representative out of range' itself in 6 % of runs)
  const [issuer, other] = [newIssuerKey(), newIssuerKey()].sort((a, b) => (a.n < b.n ? -1 : 1));
  const challenge = tokenChallenge('issuer.test', await redemptionContext('01'.repeat(32)));
  const first = await createTokenRequest(issuer.tokenKey, challenge);
  const second = await createTokenRequest(base64UrlEncode(issuer.tokenKey), challenge);
  assert.notEqual(first.request, second.request); // another nonce, salt and blind: the issuer cannot link them
  const answer = (state) => blindSign(issuer, base64UrlDecode(state.request).subarray(3));
  const token = await finalizeToken(issuer.tokenKey, first, answer(first));
  assert.ok(verifyToken(token, { publicKey: issuer.publicKey, tokenKey: issuer.tokenKey, challenge }));
  await assert.rejects(finalizeToken(issuer.tokenKey, first, answer(second)), (error) => error instanceof ServiceError && error.code === 'bad_token_response');
  await assert.rejects(finalizeToken(issuer.tokenKey, first, answer(first).subarray(1)), (error) => error.code === 'bad_token_response');
  // a signature under another key than the campaign's
  await assert.rejects(finalizeToken(issuer.tokenKey, first, blindSign(other, base64UrlDecode(first.request).subarray(3))), /bad_token_response|does not unblind/);
});

test("the redemption context (v3; v2 for an identity without tokens_each) binds the campaign's identity through its pin; a token key must be type 2's encoding", async () => {
  const pin = 'c0ffee'.padEnd(64, '5');
  const context = await redemptionContext(pin);
  // SHA-256("dpdist campaign v3" || 0x00 || the pin's 32 bytes), the label's bytes written out
  const label = Uint8Array.of(0x64, 0x70, 0x64, 0x69, 0x73, 0x74, 0x20, 0x63, 0x61, 0x6d, 0x70, 0x61, 0x69, 0x67, 0x6e, 0x20, 0x76, 0x33, 0x00);
  assert.equal(CAMPAIGN_CONTEXT, 'dpdist campaign v3\0');
  assert.equal(EARLIER_CAMPAIGN_CONTEXT, 'dpdist campaign v2\0');
  const expected = new Uint8Array(await crypto.subtle.digest('SHA-256', Buffer.concat([label, hex(pin)])));
  assert.deepEqual(context, expected);
  assert.equal(toHex(context), createHash('sha256').update(Buffer.concat([Buffer.from('dpdist campaign v3\x00', 'ascii'), Buffer.from(pin, 'hex')])).digest('hex'));
  assert.equal(toHex(await redemptionContext(pin, EARLIER_CAMPAIGN_CONTEXT)),
    createHash('sha256').update(Buffer.concat([Buffer.from('dpdist campaign v2\x00', 'ascii'), Buffer.from(pin, 'hex')])).digest('hex'));
  assert.notDeepEqual(await redemptionContext(pin.replace(/5$/, '4')), context); // another identity: another context
  // known answers, from Python's hashlib (the wire the Python device, relay and collector compute; design, section 5)
  const zero = await redemptionContext('00'.repeat(32));
  assert.equal(toHex(zero), '5a0ca63620caf1c9b8c028fc1db5b2e326f2fccf566804d791c2ce9046becd89');
  assert.equal(toHex(await redemptionContext('00'.repeat(32), EARLIER_CAMPAIGN_CONTEXT)), '6f482df052e2700f53733ef22c82c7c1044cde0b739ea9b2b64d7a39bcefac8e');
  assert.equal(toHex(tokenChallenge('issuer.example', zero)),
    '0002000e6973737565722e6578616d706c6520' + '5a0ca63620caf1c9b8c028fc1db5b2e326f2fccf566804d791c2ce9046becd89' + '0000');
  await assert.rejects(redemptionContext(pin, 'dpdist campaign v1\0'), /label/);
  await assert.rejects(redemptionContext('0011'), /64 lower-case hexadecimal/);
  await assert.rejects(redemptionContext(pin.toUpperCase()), /64 lower-case hexadecimal/);
  const challenge = tokenChallenge('issuer.example', context);
  assert.deepEqual(parseChallenge(challenge), { tokenType: 2, issuerName: 'issuer.example', context, originInfo: '' });
  const issuer = newIssuerKey();
  const rsaEncryption = issuer.publicKey.export({ type: 'spki', format: 'der' }); // the rsaEncryption OID, not type 2's
  assert.throws(() => checkTokenKey(rsaEncryption), /id-RSASSA-PSS/);
  assert.throws(() => checkTokenKey('not base64!'), /base64url/);
  assert.deepEqual(checkTokenKey(issuer.tokenKeyText), issuer.tokenKey);
});

test("a token's nonce is the caller's when given: bound to the HPKE key its report is encapsulated with, as Python binds it", async () => {
  const { bindingNonce, encapsulateForRelay, relayKeyConfig } = await import('../src/relay.js');
  const challenge = tokenChallenge('issuer.example', await redemptionContext('00'.repeat(32)));
  const seed = Uint8Array.from({ length: 32 }, (_, index) => index);
  const nonce = await bindingNonce(challenge, seed);
  // known answer, from dpdist._wire._binding.seed_nonce (tests/wire/test_binding.py)
  assert.equal(toHex(nonce), '72ad0d2e02e3c4cf0103baa5f877e365d473a116aa4f17d78019d59d84363e1d');
  const issuer = newIssuerKey();
  const state = await createTokenRequest(issuer.tokenKey, challenge, nonce);
  const token = await finalizeToken(issuer.tokenKey, state, blindSign(issuer, base64UrlDecode(state.request).subarray(3)));
  assert.equal(verifyToken(token, { publicKey: issuer.publicKey, tokenKey: issuer.tokenKey, challenge }).nonce, toHex(nonce));
  // a key configuration of key id 0 (X25519 key 'Aqm6...'), as a relayed campaign's identity names it
  const config = relayKeyConfig({ ohttp: 'ACkAACACqbp2wr7y58E2GfcNrRihWl9zEe49WMuT4gKAnJ3PaQAEAAEAAQ' }, 'c');
  const request = await encapsulateForRelay(config, 'c', new Uint8Array(3), 'application/json', seed);
  assert.ok(boundTo(token, request)); // the test's own hash (node:crypto) of the request's enc
  const again = await encapsulateForRelay(config, 'c', new Uint8Array(3), 'application/json', seed);
  assert.deepEqual(again.subarray(0, 39), request.subarray(0, 39)); // the same enc (its inner batch id is drawn afresh)
  assert.ok(!boundTo(token, await encapsulateForRelay(config, 'c', new Uint8Array(3), 'application/json'))); // a fresh key
  await assert.rejects(createTokenRequest(issuer.tokenKey, challenge, new Uint8Array(31)), /32 bytes/);
});
