// Sending reports through a dpdist relay: each report sealed to the collector's key with HPKE (RFC 9180),
// byte for byte as dpdist._wire._envelope seals it in Python, so that the relay holds ciphertexts only.
//
// Suite: DHKEM(X25519, HKDF-SHA256), HKDF-SHA256, AES-128-GCM, base mode (@hpke/core and @hpke/dhkem-x25519,
// bundled in vendor/hpke.js: no install step). Sealed message: version (1) | key id (8) | enc (32) | ciphertext,
// with info = "dpdist relay v1\0" + campaign id and aad = version | key id; the plaintext is
// kind (1: dpdist binary records, 2: JSON) | body length (4, big-endian) | body | zeros to a multiple of 256 bytes.
//
// Or, as dpdist._wire._ohttp_report writes it, an RFC 9458 request (message/ohttp-req) encapsulated to the Oblivious
// HTTP key configuration of the campaign's identity (relay.ohttp: key id 0), holding the Binary HTTP request
// ``PUT https:///api/campaigns/{campaign}/batches/{32 random hex digits}`` with only ``content-type`` and the one
// report, zero-padded to paddedLength: the same bytes' length as Python's, so the relay and the collector cannot tell
// a JS device from a Python one by it.
//
// A report and its Privacy Pass token are one (dpdist._wire._binding): each token comes with a 32-byte seed, the report
// is sealed once with the HPKE ephemeral key DeriveKeyPair(seed) (RFC 9180 section 7.1.3), whose public key is the
// report's enc, and the token's nonce is SHA-256("dpdist report binding v1" || 0x00 || SHA-256(TokenChallenge) || enc):
// the relay and the collector refuse the token on any other report (token_not_bound).

import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from './vendor/hpke.js';
import { InvalidParameterError } from './errors.js';
import { decodeKeyList, encapsulateRequest, encodeBinaryRequest, paddedLength } from './ohttp.js';

export const RELAY_CONTENT_TYPE = 'application/vnd.dpdist.sealed-report';
const VERSION = 1;
const PADDING = 256;
const KINDS = { 'application/octet-stream': 1, 'application/json': 2 };
const SUITE_IDS = [0x0020, 0x0001, 0x0001];

let suite = null;
function cipherSuite() {
  suite ??= new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
  return suite;
}

function base64UrlBytes(text) {
  const standard = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
  const binary = atob(standard);
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

function hexBytes(text) {
  if (!/^([0-9a-f]{2})+$/.test(text)) throw new InvalidParameterError(`A relay key id is hexadecimal. Got ${JSON.stringify(text)}.`);
  return Uint8Array.from(text.match(/../g), (pair) => parseInt(pair, 16));
}

function concat(...parts) {
  const out = new Uint8Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const BINDING_LABEL = new TextEncoder().encode('dpdist report binding v1\0');

async function sha256(bytes) {
  return new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
}

/**
 * The nonce of the token whose report is sealed with the key of ``seed`` (32 bytes) under the campaign's TokenChallenge
 * ``challenge`` (bytes): SHA-256(label || SHA-256(challenge) || enc), enc = DeriveKeyPair(seed)'s public key.
 */
export async function bindingNonce(challenge, seed) {
  const hpke = cipherSuite();
  const enc = new Uint8Array(await hpke.kem.serializePublicKey((await hpke.kem.deriveKeyPair(Uint8Array.from(seed).buffer)).publicKey));
  return sha256(concat(BINDING_LABEL, await sha256(challenge), enc));
}

/**
 * Seal a submission body for the relay of a campaign whose public config carries ``relay``
 * (``{public_key, key_id, ids}``), with the ephemeral key of ``seed`` (its token's: sealed once, the bytes kept for
 * resends) or a fresh one (a campaign without tokens); resolves to the sealed bytes.
 */
export async function sealForRelay(relay, campaignId, body, contentType = 'application/octet-stream', seed = undefined) {
  if (!relay || JSON.stringify(relay.ids) !== JSON.stringify(SUITE_IDS)) {
    throw new InvalidParameterError(`The campaign's relay uses HPKE suite ${JSON.stringify(relay?.ids)}; this client seals with ${JSON.stringify(SUITE_IDS)}.`);
  }
  const kind = KINDS[contentType];
  if (kind === undefined) throw new InvalidParameterError(`A sealed body is dpdist binary records or JSON. Got ${JSON.stringify(contentType)}.`);
  const publicKey = base64UrlBytes(relay.public_key);
  const keyId = hexBytes(relay.key_id);
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', publicKey));
  if (publicKey.length !== 32 || !keyId.every((byte, index) => byte === digest[index])) {
    throw new InvalidParameterError("The campaign's relay key id does not match its public key.");
  }
  const length = new Uint8Array(4);
  new DataView(length.buffer).setUint32(0, body.length);
  const unpadded = 5 + body.length;
  const plain = concat(Uint8Array.of(kind), length, body, new Uint8Array((PADDING - (unpadded % PADDING)) % PADDING));
  const header = concat(Uint8Array.of(VERSION), keyId);
  const hpke = cipherSuite();
  const recipientPublicKey = await hpke.kem.deserializePublicKey(publicKey.buffer.slice(publicKey.byteOffset, publicKey.byteOffset + 32));
  const info = new TextEncoder().encode(`dpdist relay v1\0${campaignId}`);
  const sender = await hpke.createSenderContext({ recipientPublicKey, info, ekm: seed === undefined ? undefined : Uint8Array.from(seed).buffer });
  const ciphertext = await sender.seal(plain, header);
  return concat(header, new Uint8Array(sender.enc), new Uint8Array(ciphertext));
}

/** The relay's path for one report of a campaign under the report id the device chose (``route``: ``ohttp`` for RFC 9458). */
export function relayReportPath(campaignId, reportId, route = 'reports') {
  return `/relay/v1/campaigns/${encodeURIComponent(campaignId)}/${route}/${encodeURIComponent(reportId)}`;
}

/** The key id of every relayed campaign's Oblivious HTTP key configuration (dpdist's envelope starts with 1). */
export const OHTTP_KEY_ID = 0;

/**
 * The Oblivious HTTP key configuration the campaign's identity names (``relay.ohttp``, base64url of
 * application/ohttp-keys), or null for a campaign made before it had one; InvalidParameterError for one that is not a
 * single configuration of key id 0 in this client's suite.
 */
export function relayKeyConfig(relay) {
  if (relay?.ohttp === undefined || relay?.ohttp === null) return null;
  let configs;
  try {
    configs = decodeKeyList(base64UrlBytes(String(relay.ohttp)));
  } catch (error) {
    throw new InvalidParameterError(`The identity's relay.ohttp is not an application/ohttp-keys document: ${error.message}`);
  }
  if (configs.length !== 1 || configs[0].keyId !== OHTTP_KEY_ID || !configs[0].supported) {
    throw new InvalidParameterError("The identity's relay.ohttp must be one key configuration, key id 0, X25519 with HKDF-SHA256 and AES-128-GCM.");
  }
  return configs[0];
}

/**
 * One report (``body``) as the RFC 9458 request a device sends dpdist's relay (message/ohttp-req), encapsulated to
 * ``config`` with the ephemeral key of ``seed`` (its token's) or a fresh one.
 */
export async function encapsulateForRelay(config, campaignId, body, contentType = 'application/octet-stream', seed = undefined) {
  if (KINDS[contentType] === undefined) throw new InvalidParameterError(`A report is dpdist binary records or JSON. Got ${JSON.stringify(contentType)}.`);
  const id = Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
  const target = { protocol: 'https:', host: '', pathname: `/api/campaigns/${campaignId}/batches/${id}`, search: '' };
  const message = encodeBinaryRequest('PUT', target, [['content-type', contentType]], body);
  const padded = concat(message, new Uint8Array(paddedLength(message, body) - message.length));
  return (await encapsulateRequest(config, padded, { ekm: seed === undefined ? undefined : Uint8Array.from(seed).buffer })).encapsulated;
}
