// Sending reports through a dpdist relay: each report an RFC 9458 request (message/ohttp-req), as
// dpdist._wire._ohttp_report writes it, encapsulated to the Oblivious HTTP key configuration of the campaign's identity
// (relay.ohttp: key id 0), holding the Binary HTTP request ``PUT https:///api/campaigns/{campaign}/batches/{32 random hex
// digits}`` with only ``content-type`` and the one report, zero-padded to paddedLength: the same bytes' length as
// Python's and Java's, so the relay and the collector cannot tell a JS device from another by it.
//
// A report and its Privacy Pass token are one (dpdist._wire._binding): each token comes with a 32-byte seed, the report
// is encapsulated once with the HPKE ephemeral key DeriveKeyPair(seed) (RFC 9180 section 7.1.3), whose public key is
// the request's enc, and the token's nonce is SHA-256("dpdist report binding v1" || 0x00 || SHA-256(TokenChallenge) ||
// enc): the relay and the collector refuse the token on any other report (token_not_bound).

import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from './vendor/hpke.js';
import { InvalidParameterError, ServiceError } from './errors.js';
import { decodeKeyList, encapsulateRequest, encodeBinaryRequest, paddedLength } from './ohttp.js';

export { REQUEST_CONTENT_TYPE } from './ohttp.js';
const CONTENT_TYPES = new Set(['application/octet-stream', 'application/json']);

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
 * The nonce of the token whose report is encapsulated with the key of ``seed`` (32 bytes) under the campaign's
 * TokenChallenge ``challenge`` (bytes): SHA-256(label || SHA-256(challenge) || enc), enc = DeriveKeyPair(seed)'s public key.
 */
export async function bindingNonce(challenge, seed) {
  const hpke = cipherSuite();
  const enc = new Uint8Array(await hpke.kem.serializePublicKey((await hpke.kem.deriveKeyPair(Uint8Array.from(seed).buffer)).publicKey));
  return sha256(concat(BINDING_LABEL, await sha256(challenge), enc));
}

/** The relay's path for one RFC 9458 report of a campaign under the report id the device chose. */
export function relayReportPath(campaignId, reportId) {
  return `/relay/v1/campaigns/${encodeURIComponent(campaignId)}/ohttp/${encodeURIComponent(reportId)}`;
}

/** The key id of every relayed campaign's Oblivious HTTP key configuration. */
const OHTTP_KEY_ID = 0;

/**
 * The Oblivious HTTP key configuration the campaign's identity names (``relay.ohttp``, base64url of
 * application/ohttp-keys), checked before anything is drawn: ServiceError ``no_ohttp_key`` for a campaign made before
 * it had one (it takes dpdist's retired envelope only: its operator creates it again), ``ohttp_key_mismatch`` for one
 * that is not a single configuration of key id 0 in this client's suite.
 */
export function relayKeyConfig(relay, campaignId) {
  if (relay?.ohttp === undefined || relay?.ohttp === null) {
    throw new ServiceError(`Campaign '${campaignId}''s identity names no Oblivious HTTP key configuration (it was made before relayed ` +
      "campaigns had one, and dpdist's own envelope, the only one it takes, is retired on devices): its collector must create it " +
      'again. Nothing was drawn or sent.', { status: null, code: 'no_ohttp_key' });
  }
  let configs;
  try {
    configs = decodeKeyList(base64UrlBytes(String(relay.ohttp)));
  } catch (error) {
    configs = error;
  }
  if (!Array.isArray(configs) || configs.length !== 1 || configs[0].keyId !== OHTTP_KEY_ID || !configs[0].supported) {
    throw new ServiceError(`Campaign '${campaignId}''s identity names an unusable Oblivious HTTP key configuration (relay.ohttp must be ` +
      'one key configuration, key id 0, X25519 with HKDF-SHA256 and AES-128-GCM). Nothing was drawn or sent.', { status: null, code: 'ohttp_key_mismatch' });
  }
  return configs[0];
}

/**
 * One report (``body``) as the RFC 9458 request a device sends dpdist's relay (message/ohttp-req), encapsulated to
 * ``config`` with the ephemeral key of ``seed`` (its token's) or a fresh one.
 */
export async function encapsulateForRelay(config, campaignId, body, contentType = 'application/octet-stream', seed = undefined) {
  if (!CONTENT_TYPES.has(contentType)) throw new InvalidParameterError(`A report is dpdist binary records or JSON. Got ${JSON.stringify(contentType)}.`);
  const id = Array.from(globalThis.crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('');
  const target = { protocol: 'https:', host: '', pathname: `/api/campaigns/${campaignId}/batches/${id}`, search: '' };
  const message = encodeBinaryRequest('PUT', target, [['content-type', contentType]], body);
  const padded = concat(message, new Uint8Array(paddedLength(message, body) - message.length));
  return (await encapsulateRequest(config, padded, { ekm: seed === undefined ? undefined : Uint8Array.from(seed).buffer })).encapsulated;
}
