// An answer's body, read by the client up to a bound: streamed, and dropped at MAX_ANSWER_BYTES once decoded.
//
// fetch decodes a gzip/br/deflate answer as it reads it (the client cannot ask it not to), so a small compressed answer
// can unpack to gigabytes: Response.text() or arrayBuffer() would hold them all (attack67 F6, 1 GB of memory from a
// ~1 MB answer).  ``readBounded`` reads the stream chunk by chunk and cancels it past the bound; the Client turns that
// into ServiceError ``answer_too_large``, not retried (as the Python client past its 128 MiB, the Java client past 16 MiB).

/**
 * The most bytes of an answer's body the client reads, once decoded (16 MiB, as the Java client: a campaign's config, its
 * identity, an issuer's token response or an acknowledgement is far smaller).
 */
export const MAX_ANSWER_BYTES = 16 << 20;

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
 * ``bytes``, also as ``text()``, ``json()`` and ``arrayBuffer()`` (as a Response's, read already).
 */
export function readAnswer(response, bytes) {
  const text = () => new TextDecoder().decode(bytes);
  return {
    status: response.status,
    ok: response.ok,
    statusText: response.statusText,
    headers: response.headers,
    bytes,
    text: async () => text(),
    json: async () => JSON.parse(text()),
    arrayBuffer: async () => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
  };
}
