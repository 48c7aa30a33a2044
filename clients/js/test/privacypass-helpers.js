// The issuer's and the verifier's side of Privacy Pass token type 2 for the tests, written on node:crypto and BigInt
// (independently of the bundled libraries the device uses): RSA blind signing (RFC 9474 section 4.3), the token key's
// SubjectPublicKeyInfo with the id-RSASSA-PSS OID (RFC 9578 section 6.5), and token verification (RFC 9578 section
// 6.4, RFC 9577 section 2.2).  Checked against RFC 9474 and RFC 9578 Appendix A.2 in privacypass.test.js.

import { constants, createHash, createPrivateKey, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';

export const hex = (text) => Uint8Array.from(Buffer.from(text, 'hex'));
export const toHex = (bytes) => Buffer.from(bytes).toString('hex');

export function bigFromBytes(bytes) {
  return bytes.length === 0 ? 0n : BigInt(`0x${toHex(bytes)}`);
}

export function bytesFromBig(value, length) {
  const text = value.toString(16).padStart(2 * length, '0');
  if (text.length > 2 * length) throw new Error(`${value} does not fit in ${length} bytes`);
  return hex(text);
}

export function modPow(base, exponent, modulus) {
  let result = 1n;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

export function modInverse(value, modulus) {
  let [oldR, r] = [value % modulus, modulus];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  if (oldR !== 1n) throw new Error('not invertible');
  return ((oldS % modulus) + modulus) % modulus;
}

const sha256 = (bytes) => new Uint8Array(createHash('sha256').update(bytes).digest());

/** RFC 9474 BlindSign: s = m^d mod n, refused unless s^e mod n = m (the RFC's fault check). */
export function blindSign({ n, e, d, length }, blindedMsg) {
  const m = bigFromBytes(blindedMsg);
  if (m >= n) throw new Error('message representative out of range');
  const s = modPow(m, d, n);
  if (modPow(s, e, n) !== m) throw new Error('signing failure');
  return bytesFromBig(s, length);
}

// id-RSASSA-PSS with SHA-384, MGF1 with SHA-384, salt length 48 (RFC 9578 section 6.5), DER
const PSS_ALGORITHM = hex(
  '303d06092a864886f70d01010a3030a00d300b0609608648016503040202a11a301806092a864886f70d010108300b0609608648016503040202a203020130',
);

function derLength(length) {
  if (length < 0x80) return Uint8Array.of(length);
  if (length < 0x100) return Uint8Array.of(0x81, length);
  return Uint8Array.of(0x82, length >> 8, length & 0xff);
}

function der(tag, content) {
  return Buffer.concat([Uint8Array.of(tag), derLength(content.length), content]);
}

/** The SubjectPublicKeyInfo of an RSA public key (a node KeyObject) with the id-RSASSA-PSS OID (RFC 9578 section 6.5). */
export function pssSpki(publicKey) {
  const rsaPublicKey = publicKey.export({ type: 'pkcs1', format: 'der' });
  return new Uint8Array(der(0x30, Buffer.concat([PSS_ALGORITHM, der(0x03, Buffer.concat([Uint8Array.of(0), rsaPublicKey]))])));
}

/** An issuer's key from a node private KeyObject: its numbers, its token key (SPKI) and the key id. */
export function issuerKeyOf(privateKey) {
  const jwk = privateKey.export({ format: 'jwk' });
  const big = (field) => bigFromBytes(Buffer.from(jwk[field], 'base64url'));
  const publicKey = createPublicKey(privateKey);
  const tokenKey = pssSpki(publicKey);
  return {
    n: big('n'), e: big('e'), d: big('d'), length: Buffer.from(jwk.n, 'base64url').length,
    publicKey, tokenKey, tokenKeyId: sha256(tokenKey), tokenKeyText: Buffer.from(tokenKey).toString('base64url'),
  };
}

/** A fresh RSA-2048 issuer key. */
export function newIssuerKey() {
  return issuerKeyOf(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey);
}

/** The issuer key of an RFC 9578 vector (``skS``: the hexadecimal of a PEM PKCS#8 key). */
export function vectorIssuerKey(skS) {
  return issuerKeyOf(createPrivateKey(Buffer.from(skS, 'hex').toString('latin1')));
}

/** A TokenChallenge's fields (RFC 9577 section 2.1.1), read without the bundled library. */
export function parseChallenge(bytes) {
  const view = Buffer.from(bytes);
  let offset = 0;
  const tokenType = view.readUInt16BE(offset);
  offset += 2;
  const nameLength = view.readUInt16BE(offset);
  offset += 2;
  const issuerName = view.subarray(offset, offset + nameLength).toString('utf8');
  offset += nameLength;
  const contextLength = view[offset];
  offset += 1;
  const context = new Uint8Array(view.subarray(offset, offset + contextLength));
  offset += contextLength;
  const originLength = view.readUInt16BE(offset);
  offset += 2;
  const originInfo = view.subarray(offset, offset + originLength).toString('utf8');
  offset += originLength;
  if (offset !== view.length) throw new Error('trailing bytes after a TokenChallenge');
  return { tokenType, issuerName, context, originInfo };
}

/**
 * Verify ``token`` as a relay or the collector does (RFC 9578 section 6.4): 354 bytes, type 2, the challenge's digest,
 * the key's id, and the authenticator an RSASSA-PSS (SHA-384, MGF1 SHA-384, salt 48) signature of the token input.
 * @returns {{nonce: string}} the nonce (hex), or throws naming what failed
 */
export function verifyToken(token, { publicKey, tokenKey, challenge }) {
  const bytes = Buffer.from(token);
  if (bytes.length !== 354) throw new Error(`a token of type 2 has 354 bytes, got ${bytes.length}`);
  if (bytes.readUInt16BE(0) !== 2) throw new Error('not a token of type 2');
  if (!bytes.subarray(34, 66).equals(Buffer.from(sha256(challenge)))) throw new Error('challenge_digest differs');
  if (!bytes.subarray(66, 98).equals(Buffer.from(sha256(tokenKey)))) throw new Error('token_key_id differs');
  const ok = verify('sha384', bytes.subarray(0, 98), {
    key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 48,
  }, bytes.subarray(98));
  if (!ok) throw new Error('the authenticator is not a signature of the token input');
  return { nonce: bytes.subarray(2, 34).toString('hex') };
}

/**
 * Whether ``token`` is bound to the sealed report ``sealed`` (dpdist._wire._binding, written here on node:crypto): its
 * nonce is SHA-256("dpdist report binding v1" || 0x00 || challenge_digest || enc), enc the report's HPKE encapsulated
 * key (an RFC 9458 request, key id 0: bytes 7..39; dpdist's envelope: bytes 9..41).
 */
export function boundTo(token, sealed) {
  const bytes = Buffer.from(token);
  const message = Buffer.from(sealed);
  const enc = message[0] === 0 ? message.subarray(7, 39) : message.subarray(9, 41);
  const label = Buffer.from('dpdist report binding v1\0', 'ascii');
  return bytes.subarray(2, 34).equals(sha256(Buffer.concat([label, bytes.subarray(34, 66), enc])));
}

/**
 * Run ``action`` with crypto.getRandomValues returning ``chunks`` in order (each exactly the length asked for), then
 * the real one again; resolves to ``action``'s result.  For the vectors' fixed randomness only.
 */
export async function withRandomness(chunks, action) {
  const queue = chunks.map((chunk) => Uint8Array.from(chunk));
  const crypto = globalThis.crypto;
  crypto.getRandomValues = (array) => {
    const next = queue.shift();
    if (next === undefined || next.length !== array.byteLength) {
      throw new Error(`a draw of ${array.byteLength} bytes, the vector has ${next?.length ?? 'none'}`);
    }
    new Uint8Array(array.buffer, array.byteOffset, array.byteLength).set(next);
    return array;
  };
  try {
    const result = await action();
    if (queue.length !== 0) throw new Error(`${queue.length} of the vector's random values were not drawn`);
    return result;
  } finally {
    delete crypto.getRandomValues; // the prototype's method again
  }
}
