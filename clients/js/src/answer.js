// An answer's body, read by the client up to a bound: streamed, and dropped at MAX_ANSWER_BYTES once decoded.
//
// fetch decodes a gzip/br/deflate answer as it reads it (the client cannot ask it not to), so a small compressed answer
// can unpack to gigabytes: Response.text() or arrayBuffer() would hold them all (1 GB of memory from a
// ~1 MB answer).  ``readBounded`` reads the stream chunk by chunk and cancels it past the bound; the Client turns that
// into ServiceError ``answer_too_large``, not retried (as the Python and Java clients: a config or identity past 4 MiB).

import { ServiceError } from './errors.js';

/**
 * The most bytes of a campaign's config or identity answer the client reads, once decoded (4 MiB, as the Python client's
 * CONFIG_ANSWER_BYTES and the Java client; 16 MiB of a hostile config held 557 MB).  A config is at most
 * the 1 MiB of the record header that carries it (bound.js MAX_HEADER_BYTES) and its answer holds it twice; the service
 * refuses at creation a config whose answer would pass 4 MiB or 524,288 JSON values.
 */
export const MAX_ANSWER_BYTES = 4 << 20;

/**
 * The most bytes of an acknowledgement, a refusal (4xx/5xx), an issuer's key or token answer the client reads, once
 * decoded (1 MiB, as the Python client's ACK_ANSWER_BYTES: each is a few hundred bytes); a config or an identity is read
 * up to MAX_ANSWER_BYTES.
 */
export const ACK_ANSWER_BYTES = 1 << 20;

// A bound on bytes is no bound on what parsing them holds: 16 MiB of ``{"campaign":[{},{},...]}`` (16 KB
// of gzip on the wire) held ~570 MB while JSON.parse built its 5.6 million objects.  Before parsing, the client counts
// the bytes that open a value (``[``, ``{``, ``,``, ``:``; those inside strings too: an upper bound) and refuses JSON
// that may hold more values or containers than ``mostValuesWithin`` its bound, as Python's dpdist._json does.

const OPENS = new Uint8Array(256);
OPENS[0x5b] = 1; // [
OPENS[0x7b] = 1; // {
OPENS[0x2c] = 2; // ,
OPENS[0x3a] = 2; // :

/**
 * At least the arrays and objects, and the values (containers, keys, scalars), the JSON ``bytes`` (UTF-8) hold:
 * ``[containers, values]``, the bytes ``[`` and ``{``, and those plus ``,`` and ``:``, plus one (dpdist._json.values_upper_bound).
 */
export function valuesUpperBound(bytes) {
  let containers = 0;
  let separators = 0;
  for (let index = 0; index < bytes.length; index += 1) {
    const kind = OPENS[bytes[index]];
    if (kind === 1) containers += 1;
    else if (kind === 2) separators += 1;
  }
  return [containers, containers + separators + 1];
}

/**
 * The most values, and the most arrays and objects, JSON within ``limit`` bytes may hold before it is parsed: one value
 * per 8 bytes, at least 65,536, and at most 2^20 containers (dpdist._json.most_values_within).
 */
export function mostValuesWithin(limit) {
  const values = Math.max(1 << 16, Math.floor(limit / 8));
  return [values, Math.min(values, 1 << 20)];
}

/** Why the JSON ``bytes`` of an answer read within ``limit`` bytes are not parsed (too many values), or null. */
export function tooManyValues(bytes, limit) {
  const [mostValues, mostContainers] = mostValuesWithin(limit);
  const [containers, values] = valuesUpperBound(bytes);
  if (containers > mostContainers) return `JSON of more than ${mostContainers} arrays and objects`;
  if (values > mostValues) return `JSON of more than ${mostValues} values`;
  return null;
}

/** An answer whose body goes past the bound (``limit`` bytes); nothing more of it was read. */
export class AnswerTooLarge extends Error {
  constructor(limit) {
    super(`an answer longer than ${limit} bytes once decoded`);
    this.limit = limit;
  }
}

function joined(parts, total) {
  const out = new Uint8Array(total);
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/**
 * The body of ``response`` (a fetch Response, or any object with ``body`` or ``arrayBuffer``), read up to ``limit``
 * bytes: AnswerTooLarge past it (the stream is cancelled), the stream's own error if it breaks (a timeout's abort).
 */
export async function readBounded(response, limit = MAX_ANSWER_BYTES) {
  const stream = response?.body;
  if (stream && typeof stream.getReader === 'function') {
    const reader = stream.getReader();
    const parts = [];
    let total = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return joined(parts, total);
      total += value.length;
      if (total > limit) {
        reader.cancel().catch(() => {}); // nothing more is read, nor decoded
        throw new AnswerTooLarge(limit);
      }
      parts.push(value);
    }
  }
  if (typeof response?.arrayBuffer !== 'function') return new Uint8Array(0);
  const bytes = new Uint8Array(await response.arrayBuffer());
  if (bytes.length > limit) throw new AnswerTooLarge(limit);
  return bytes;
}

/**
 * A successful answer, read: its ``status``, ``statusText`` and ``headers`` as fetch gave them, and its body's
 * ``bytes``, also as ``text()``, ``json()`` and ``arrayBuffer()`` (as a Response's, read already); ``json()`` rejects
 * with ServiceError ``unexpected_answer`` (``what``: the request, named, or a function naming it, called only then: a name
 * with the client's secrets masked compiles their pattern, 0.1-2 CPU-s in V8, shown.js), unparsed, JSON that may hold
 * more values than ``mostValuesWithin(limit)``.
 */
export function readAnswer(response, bytes, limit = MAX_ANSWER_BYTES, what = 'The answer') {
  const text = () => new TextDecoder().decode(bytes);
  const json = () => {
    const heavy = tooManyValues(bytes, limit);
    if (heavy !== null) {
      throw new ServiceError(`${typeof what === 'function' ? what() : what}: HTTP ${response.status} with ${heavy} within ${limit} bytes, not parsed (a dpdist service's ` +
        'answers hold far fewer). Is that URL the dpdist service, not another server answering in its place?', { status: response.status, code: 'unexpected_answer' });
    }
    return JSON.parse(text());
  };
  return {
    status: response.status,
    ok: response.ok,
    statusText: response.statusText,
    headers: response.headers,
    bytes,
    text: async () => text(),
    json: async () => json(),
    arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  };
}
