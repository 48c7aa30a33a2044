// Oblivious HTTP (RFC 9458) on the device: a fetch that sends each request through a standard OHTTP relay resource,
// encapsulated to the collector's gateway key configuration, and opens the encapsulated answer.  The relay sees this
// device's address and the size of each request, never what it says; the collector (the gateway) sees what it says,
// never the device's address (docs/how-to/anonymous-collection.md, "Anonymous collection").
//
// Wire formats, as dpdist._ohttp and dpdist._ohttp._bhttp speak them in Python:
// - a key configuration list, application/ohttp-keys (RFC 9458 section 3.2): each configuration 2-byte length |
//   key id (1) | KEM id (2) | public key | 2-byte length | (KDF id (2), AEAD id (2))...;
// - an encapsulated request (section 4.3): key id | KEM, KDF, AEAD ids | enc | HPKE-sealed Binary HTTP request, with
//   info "message/bhttp request" 0x00 header, empty aad; suite DHKEM(X25519, HKDF-SHA256), HKDF-SHA256,
//   AES-128-GCM (@hpke/core, vendored in vendor/hpke.js);
// - an encapsulated response (section 4.4): 16-byte response nonce | AES-128-GCM of the Binary HTTP response under
//   key = Expand(Extract(enc | nonce, secret), "key", 16) and nonce = Expand(..., "nonce", 12), with
//   secret = Export("message/bhttp response", 16) of the request's HPKE context (WebCrypto's HKDF and AES-GCM);
// - Binary HTTP (RFC 9292): requests written in the known-length framing (section 3), responses read in both
//   framings, informational responses skipped, trailing empty sections and padding allowed (sections 3.8, 3.9);
//   each request zero-padded (section 3.8) to paddedLength: a power of two (at least 1024) of its length as if every
//   record's CRC-32 had all 10 decimal digits, so that the relay sees a length that depends on the batch's size only,
//   never on its reports, the same as dpdist.client._oblivious_transport.padded_length.

import { ACK_ANSWER_BYTES, readBounded, tooManyValues } from './answer.js';
import { Aes128Gcm, CipherSuite, DhkemX25519HkdfSha256, HkdfSha256 } from './vendor/hpke.js';
import { InvalidParameterError, ServiceError } from './errors.js';
import { shownUrl } from './shown.js';
import { RECORD_MAGIC } from './wire.js';

export const REQUEST_CONTENT_TYPE = 'message/ohttp-req';
export const RESPONSE_CONTENT_TYPE = 'message/ohttp-res';
export const KEYS_CONTENT_TYPE = 'application/ohttp-keys';
const KEM_X25519 = 0x0020;
const KDF_SHA256 = 0x0001;
const AEAD_AES128GCM = 0x0001;
// stated inside the envelope: this client reads the whole answer encapsulated (message/ohttp-res), so the gateway refuses
// this request if a relay relabels it as chunked rather than answer it with its status in the clear
export const WHOLE_ANSWER_FIELD = ['dpdist-ohttp-answer', 'encapsulated'];
const KEY_PROBLEM = 'https://iana.org/assignments/http-problem-types#ohttp-key';
// never encapsulated: fields about a connection (RFC 9110 section 7.6.1), and user-agent and accept, which told the
// collector the client (Python or JS, and its version): every dpdist client sends the same fields
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'te', 'upgrade', 'trailer', 'host',
  'content-length', 'accept-encoding', 'user-agent', 'accept']);
const text = new TextEncoder();

let suite = null;
function cipherSuite() {
  suite ??= new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Aes128Gcm() });
  return suite;
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

function malformed(what) {
  return new InvalidParameterError(`Malformed ${what}.`);
}

/** Reads RFC 9000 variable-length integers and length-prefixed byte strings off ``bytes``; ``what`` names it in refusals. */
class Reader {
  constructor(bytes, what) {
    this.bytes = bytes;
    this.offset = 0;
    this.what = what;
  }

  get done() {
    return this.offset >= this.bytes.length;
  }

  take(count) {
    if (count > this.bytes.length - this.offset) throw malformed(`${this.what}: truncated at byte ${this.offset}`);
    const part = this.bytes.subarray(this.offset, this.offset + count);
    this.offset += count;
    return part;
  }

  uint(size) {
    return this.take(size).reduce((value, byte) => value * 256 + byte, 0);
  }

  varint() {
    const first = this.take(1)[0];
    const size = 1 << (first >> 6);
    const value = [...this.take(size - 1)].reduce((total, byte) => total * 256 + byte, first & 0x3f);
    if (value > Number.MAX_SAFE_INTEGER) throw malformed(`${this.what}: a length of 2^53 or more`);
    return value;
  }

  prefixed() {
    return this.take(this.varint());
  }
}

/** The RFC 9000 variable-length encoding of ``value`` (below 2^30: every length a device sends). */
export function varint(value) {
  if (!Number.isInteger(value) || value < 0 || value >= 2 ** 30) throw new InvalidParameterError(`A Binary HTTP length is an int in [0, 2^30). Got ${value}.`);
  if (value < 64) return Uint8Array.of(value);
  if (value < 16384) return Uint8Array.of(0x40 | (value >> 8), value & 0xff);
  return Uint8Array.of(0x80 | (value >>> 24), (value >>> 16) & 0xff, (value >>> 8) & 0xff, value & 0xff);
}

function prefixed(bytes) {
  return concat(varint(bytes.length), bytes);
}

function bytesOf(body) {
  if (body === undefined || body === null) return new Uint8Array(0);
  if (typeof body === 'string') return text.encode(body);
  if (body instanceof Uint8Array) return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  throw new InvalidParameterError(`A request through an Oblivious HTTP relay has a string or byte body. Got ${Object.prototype.toString.call(body)}.`);
}

/**
 * One key configuration of an ``application/ohttp-keys`` list: ``keyId``, ``kemId``, ``publicKey``, ``algorithms``
 * ([kdf, aead] pairs), ``bytes`` (its encoding, what a device compares) and ``supported`` (this client's suite).
 */
function readConfig(bytes) {
  const reader = new Reader(bytes, 'Oblivious HTTP key configuration');
  const keyId = reader.uint(1);
  const kemId = reader.uint(2);
  if (kemId !== KEM_X25519) return { keyId, kemId, publicKey: null, algorithms: [], bytes, supported: false };
  const publicKey = reader.take(32);
  const symmetric = new Reader(reader.take(reader.uint(2)), 'Oblivious HTTP key configuration');
  const algorithms = [];
  while (!symmetric.done) algorithms.push([symmetric.uint(2), symmetric.uint(2)]);
  if (!reader.done || algorithms.length === 0) throw malformed('Oblivious HTTP key configuration: trailing bytes or no algorithms');
  const supported = algorithms.some(([kdf, aead]) => kdf === KDF_SHA256 && aead === AEAD_AES128GCM);
  return { keyId, kemId, publicKey, algorithms, bytes, supported };
}

/** The key configurations of an ``application/ohttp-keys`` document (RFC 9458 section 3.2), in its order. */
export function decodeKeyList(bytes) {
  if (!(bytes instanceof Uint8Array)) throw new InvalidParameterError(`Oblivious HTTP keys are a Uint8Array (application/ohttp-keys). Got ${Object.prototype.toString.call(bytes)}.`);
  const reader = new Reader(bytes, 'application/ohttp-keys');
  const configs = [];
  while (!reader.done) configs.push(readConfig(reader.take(reader.uint(2))));
  if (configs.length === 0) throw malformed('application/ohttp-keys: no key configuration');
  return configs;
}

/** The Binary HTTP request (RFC 9292 section 3, known-length framing) of ``method`` ``url`` with ``fields`` and ``body``. */
export function encodeBinaryRequest(method, url, fields, body) {
  const section = concat(...fields.map(([name, value]) => concat(prefixed(text.encode(name)), prefixed(text.encode(value)))));
  return concat(Uint8Array.of(0), prefixed(text.encode(method)), prefixed(text.encode(url.protocol.slice(0, -1))),
    prefixed(text.encode(url.host)), prefixed(text.encode(`${url.pathname}${url.search}`)), prefixed(section), prefixed(body),
    Uint8Array.of(0));
}

function readFields(reader, indeterminate) {
  const decoder = new TextDecoder('latin1');
  const fields = [];
  const section = indeterminate ? reader : new Reader(reader.done ? new Uint8Array(0) : reader.prefixed(), reader.what);
  while (!section.done) {
    const name = section.prefixed();
    if (indeterminate && name.length === 0) return fields;
    fields.push([decoder.decode(name), decoder.decode(section.prefixed())]);
  }
  if (indeterminate) throw malformed(`${reader.what}: an unterminated field section`);
  return fields;
}

/** The smallest padded inner request: a campaign's config request and a batch of a few reports all pad to it. */
export const MIN_PADDED_BYTES = 1024;

/** The digits the CRC-32s of the records in ``body`` (dpdist's binary records, else 0) lack to 10. */
function crcSlack(body) {
  let slack = 0;
  let offset = 0;
  const starts = (at) => at + 14 <= body.length && RECORD_MAGIC.every((byte, index) => body[at + index] === byte);
  while (starts(offset)) {
    const view = new DataView(body.buffer, body.byteOffset + offset, 14);
    const headerBytes = view.getUint32(10, true);
    let header;
    try {
      header = JSON.parse(new TextDecoder().decode(body.subarray(offset + 14, offset + 14 + headerBytes)));
    } catch {
      return slack; // not a record after all: nothing to even out
    }
    if (Number.isInteger(header?.crc32) && header.crc32 >= 0) slack += 10 - String(header.crc32).length;
    if (!Number.isInteger(header?.payload_bytes)) return slack;
    offset += 14 + headerBytes + header.payload_bytes;
  }
  return slack;
}

/**
 * The length a Binary HTTP ``message`` carrying ``body`` is zero-padded to before it is encapsulated (RFC 9292
 * section 3.8): the next power of two, at least MIN_PADDED_BYTES, of its length with every record's CRC-32 counted
 * at 10 digits.
 */
export function paddedLength(message, body) {
  const publicLength = message.length + crcSlack(body);
  let target = MIN_PADDED_BYTES;
  while (target < publicLength) target *= 2;
  return target;
}

/** The final response ``{status, fields, body}`` of a Binary HTTP response (RFC 9292 sections 3 and 3.5). */
export function decodeBinaryResponse(bytes) {
  const reader = new Reader(bytes, 'Binary HTTP response');
  const framing = reader.varint();
  if (framing !== 1 && framing !== 3) throw malformed(`Binary HTTP response: framing indicator ${framing} (a response is 1 or 3)`);
  const indeterminate = framing === 3;
  let status = reader.varint();
  while (status >= 100 && status < 200) { // informational responses: their fields are dropped
    readFields(reader, indeterminate);
    status = reader.varint();
  }
  if (status < 200 || status > 599) throw malformed(`Binary HTTP response: status ${status}`);
  const fields = reader.done ? [] : readFields(reader, indeterminate);
  let body = new Uint8Array(0);
  if (!reader.done && !indeterminate) body = reader.prefixed();
  else if (!reader.done) {
    const chunks = [];
    for (let chunk = reader.prefixed(); chunk.length > 0; chunk = reader.done ? new Uint8Array(0) : reader.prefixed()) chunks.push(chunk);
    body = concat(...chunks);
  }
  return { status, fields, body };
}

async function hkdf(secret, salt, info, bytes) {
  const key = await globalThis.crypto.subtle.importKey('raw', secret, 'HKDF', false, ['deriveBits']);
  return new Uint8Array(await globalThis.crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt, info: text.encode(info) }, key, bytes * 8));
}

/**
 * ``message`` (a Binary HTTP request) encapsulated to ``config`` (RFC 9458 section 4.3): ``{encapsulated, open}``,
 * ``open(bytes)`` resolving to the Binary HTTP response an encapsulated response holds (section 4.4), refused
 * (InvalidParameterError) if it does not open: changed on the way, or not this request's.  ``ekm``: the HPKE
 * ephemeral key (a CryptoKeyPair), for RFC 9458's Appendix A only: by default a fresh one from the CSPRNG.
 */
export async function encapsulateRequest(config, message, { ekm } = {}) {
  if (!config?.supported) throw new InvalidParameterError('An Oblivious HTTP key configuration with X25519, HKDF-SHA256 and AES-128-GCM is needed.');
  const header = Uint8Array.of(config.keyId, 0, KEM_X25519, 0, KDF_SHA256, 0, AEAD_AES128GCM);
  const hpke = cipherSuite();
  const key = config.publicKey;
  const recipientPublicKey = await hpke.kem.deserializePublicKey(key.buffer.slice(key.byteOffset, key.byteOffset + key.length));
  const sender = await hpke.createSenderContext({ recipientPublicKey, info: concat(text.encode('message/bhttp request'), Uint8Array.of(0), header), ekm });
  const sealed = new Uint8Array(await sender.seal(message));
  const enc = new Uint8Array(sender.enc);
  const secret = new Uint8Array(await sender.export(text.encode('message/bhttp response'), 16));
  async function open(bytes) {
    if (bytes.length < 16 + 16) throw malformed('Oblivious HTTP response: shorter than a nonce and a tag');
    const salt = concat(enc, bytes.subarray(0, 16));
    const aeadKey = await globalThis.crypto.subtle.importKey('raw', await hkdf(secret, salt, 'key', 16), 'AES-GCM', false, ['decrypt']);
    try {
      return new Uint8Array(await globalThis.crypto.subtle.decrypt({ name: 'AES-GCM', iv: await hkdf(secret, salt, 'nonce', 12) }, aeadKey, bytes.subarray(16)));
    } catch {
      throw malformed("Oblivious HTTP response: it does not open (changed on the way, or not this request's answer)");
    }
  }
  return { encapsulated: concat(header, enc, sealed), open };
}

/** A relay's or the gateway's own answer (nothing was served): passed on as the client reads refusals. */
async function notEncapsulated(outer) {
  const kind = (outer.headers.get('content-type') ?? '').split(';')[0].trim();
  const json = (status, error, detail) => new Response(JSON.stringify({ error, detail }), { status, headers: { 'content-type': 'application/json' } });
  if (outer.status === 400 && kind === 'application/problem+json') {
    const parsed = (bytes) => (tooManyValues(bytes, ACK_ANSWER_BYTES) === null ? JSON.parse(new TextDecoder().decode(bytes)) : {});
    const problem = await readBounded(outer, ACK_ANSWER_BYTES).then(parsed, () => ({})); // a problem: a few hundred bytes
    if (problem?.type === KEY_PROBLEM) {
      return json(400, 'ohttp_key_mismatch', `The gateway holds no key for this key configuration (rotated or retired): fetch the campaign's config again. ${problem.detail ?? ''}`);
    }
  }
  if (outer.ok) return json(502, 'not_encapsulated', `The relay answered ${outer.status} ${kind || 'without a content type'}, not ${RESPONSE_CONTENT_TYPE}.`);
  return outer;
}

/**
 * A fetch(url, {method, headers, body}) that sends each request through the relay resource ``relayUrl``, encapsulated
 * to ``config``, with ``fetch`` (the relay's): it resolves to the collector's answer as a Response, or to the relay's
 * own refusal; an answer that does not open rejects (the client retries it as a network error).
 */
export function obliviousFetch(relayUrl, config, fetch) {
  return async (target, { method = 'GET', headers = {}, body, signal, redirect } = {}) => {
    const url = new URL(target, globalThis.location?.href);
    const fields = Object.entries(headers).map(([name, value]) => [name.toLowerCase(), String(value)]).filter(([name]) => !HOP_BY_HOP.has(name));
    fields.push(WHOLE_ANSWER_FIELD);
    const bytes = bytesOf(body);
    const message = encodeBinaryRequest(method, url, fields, bytes);
    const padded = new Uint8Array(paddedLength(message, bytes)); // RFC 9292 section 3.8: zero padding
    padded.set(message);
    const { encapsulated, open } = await encapsulateRequest(config, padded);
    // the client's deadline and its refusal of redirects hold for the relay too; its answer is read up to the bound
    const outer = await fetch(relayUrl, { method: 'POST', headers: { 'Content-Type': REQUEST_CONTENT_TYPE, Accept: RESPONSE_CONTENT_TYPE }, body: encapsulated, signal, redirect });
    const kind = (outer.headers.get('content-type') ?? '').split(';')[0].trim().toLowerCase();
    if (outer.status !== 200 || kind !== RESPONSE_CONTENT_TYPE) return notEncapsulated(outer);
    const inner = decodeBinaryResponse(await open(await readBounded(outer)));
    const empty = [204, 205, 304].includes(inner.status);
    return new Response(empty ? null : inner.body, { status: inner.status, headers: inner.fields });
  };
}

/** ``relay`` checked: the http(s) URL of an Oblivious HTTP relay resource. */
export function checkRelayUrl(relay) {
  let url = null;
  try {
    url = new URL(relay);
  } catch {
    // refused below
  }
  if (typeof relay !== 'string' || url === null || !['http:', 'https:'].includes(url.protocol) || !url.hostname) {
    throw new InvalidParameterError(`The 'ohttp.relay' option of Client must be the http:// or https:// URL of an Oblivious HTTP relay resource. Got ${typeof relay === 'string' ? `"${shownUrl(relay)}"` : JSON.stringify(relay)?.slice(0, 100)}.`);
  }
  return relay;
}

/** The first configuration of the ``given`` list that offers this client's suite (InvalidParameterError if none). */
export function givenKeyConfig(given) {
  const config = decodeKeyList(given).find((one) => one.supported);
  if (!config) throw new InvalidParameterError("The 'ohttp.keys' option of Client must offer a key configuration with X25519, HKDF-SHA256 and AES-128-GCM. None does.");
  return config;
}

function base64UrlBytes(encoded) {
  const standard = encoded.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (encoded.length % 4)) % 4);
  return Uint8Array.from(atob(standard), (c) => c.charCodeAt(0));
}

/**
 * The key configuration to encapsulate ``campaignId``'s requests to: the newest of its public config's ``ohttp.keys``
 * that offers this client's suite and, with ``given`` ones, the newest of those among them (a rotation states a new
 * key first and keeps the old: devices holding the old still send; a collector that hands devices different keys
 * could tell them apart behind the relay, and is refused when none of the given keys is stated).  Refused (ServiceError ``relayed_campaign``,
 * ``no_ohttp_gateway``, ``ohttp_key_mismatch``) before anything is drawn or sent.
 */
export function campaignKeyConfig(campaignId, document, given) {
  const refuse = (message, code) => new ServiceError(`Campaign '${campaignId}' ${message} Nothing was drawn or sent.`, { code });
  if (document?.relay) throw refuse('is collected through its dpdist relay (its config names one), which batches and shuffles its reports: send without an Oblivious HTTP relay.', 'relayed_campaign');
  if (typeof document?.ohttp?.keys !== 'string') throw refuse("states no Oblivious HTTP key configuration (a collector before dpdist's gateway).", 'no_ohttp_gateway');
  let configs;
  try {
    configs = decodeKeyList(base64UrlBytes(document.ohttp.keys)).filter((config) => config.supported);
  } catch (error) {
    throw refuse(`states an unreadable Oblivious HTTP key configuration: ${error.message}`, 'ohttp_key_mismatch');
  }
  if (configs.length === 0) throw refuse("offers no Oblivious HTTP key configuration with X25519, HKDF-SHA256 and AES-128-GCM.", 'ohttp_key_mismatch');
  if (!given) return configs[0];
  // the newest stated that this device was given: a rotation adds keys, the given ones still serve
  const same = (a, b) => a.length === b.length && a.every((byte, index) => byte === b[index]);
  const mine = decodeKeyList(given);
  const shared = configs.find((config) => mine.some((one) => same(one.bytes, config.bytes)));
  if (!shared) {
    throw refuse(`states Oblivious HTTP key configurations (key ids ${configs.map((config) => config.keyId).join(', ')}) none of which is among the ones this device was given: a collector that gives devices different keys can tell them apart behind the relay, and a retired key cannot be sent to.`, 'ohttp_key_mismatch');
  }
  return shared;
}
