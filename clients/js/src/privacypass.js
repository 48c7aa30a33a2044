// Privacy Pass on the device: the client side of token type 2 (RFC 9578 section 6: publicly verifiable, blind RSA 2048,
// RSABSSA-SHA384-PSS-Deterministic of RFC 9474) and the PrivateToken authorization of RFC 9577, for the relayed
// campaigns of docs/how-to/anonymous-collection.md ("Anonymous collection").
//
// The cryptography and the encodings are @cloudflare/privacypass-ts and @cloudflare/blindrsa-ts, bundled in
// vendor/privacypass.js (no install step); this module composes them into the two steps a device runs, with state
// that can be stored between them (a lost issuer answer is asked again with the same request):
//
//   nonce = random(32), or the caller's (relay.js binds it to the report); challenge_digest = SHA-256(TokenChallenge)
//   token_key_id = SHA-256(token_key)
//   token_input = 0x0002 | nonce | challenge_digest | token_key_id           (RFC 9578 section 6.1)
//   blinded_msg, inv = Blind(pkI, token_input)                                (RFC 9474 section 4.2)
//   TokenRequest = 0x0002 | token_key_id[31] | blinded_msg                   -> issuer
//   authenticator = Finalize(pkI, token_input, blind_sig, inv)                (RFC 9474 section 4.4, checks the signature)
//   Token = token_input | authenticator (354 bytes)                           (RFC 9577 section 2.2)

import {
  AuthenticatorInput,
  AuthorizationHeader,
  BLIND_RSA,
  RSABSSA,
  Token,
  TokenChallenge,
  TokenRequest,
  TokenResponse,
  convertRSASSAPSSToEnc,
} from './vendor/privacypass.js';
import { InvalidParameterError, ServiceError } from './errors.js';

/** Token type 2: blind RSA (2048-bit), RSABSSA-SHA384-PSS-Deterministic (RFC 9578 section 8.2.2). */
export const TOKEN_TYPE = 0x0002;
/** Bytes of a token of type 2: token_type (2) | nonce (32) | challenge_digest (32) | token_key_id (32) | authenticator (256). */
export const TOKEN_BYTES = 354;
/** Media types of the issuance protocol (RFC 9578 section 9). */
export const TOKEN_REQUEST_TYPE = 'application/private-token-request';
export const TOKEN_RESPONSE_TYPE = 'application/private-token-response';

const NK = 256; // bytes of the modulus and of a blind signature (RFC 9578 section 6: 2048-bit keys)
// The AlgorithmIdentifier of a type-2 token key (RFC 9578 section 6.5): id-RSASSA-PSS with SHA-384, MGF1 with SHA-384
// and a 48-byte salt, in DER as RFC 9578 Appendix A.2's pkS holds it, after the SubjectPublicKeyInfo's 4-byte header.
const PSS_ALGORITHM = hexBytes(
  '303d06092a864886f70d01010a3030a00d300b0609608648016503040202a11a301806092a864886f70d010108300b0609608648016503040202a203020130',
);
/**
 * The label of the redemption context: ASCII, then one zero byte.  ``CAMPAIGN_CONTEXT``
 * (v3) is that of an identity whose issuer states ``tokens_each``; ``EARLIER_CAMPAIGN_CONTEXT`` (v2) that of an identity
 * made before issuers published it (identity.js ``contextLabel``; dpdist._wire._identity in Python).
 */
export const CAMPAIGN_CONTEXT = 'dpdist campaign v3\0';
export const EARLIER_CAMPAIGN_CONTEXT = 'dpdist campaign v2\0';

function hexBytes(text) {
  return Uint8Array.from(text.match(/../g), (pair) => parseInt(pair, 16));
}

/** Lower-case hexadecimal of ``bytes``. */
export function toHex(bytes) {
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** base64url of ``bytes``, without padding. */
export function base64UrlEncode(bytes) {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The bytes of base64url ``text`` (padded or not); InvalidParameterError naming ``what`` if it is not base64url. */
export function base64UrlDecode(text, what = 'a base64url value') {
  if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*={0,2}$/.test(text)) {
    throw new InvalidParameterError(`${what} must be base64url text. Got ${JSON.stringify(text)}.`);
  }
  const plain = text.replace(/=+$/, '');
  const binary = atob(plain.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (plain.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}

/** SHA-256 of ``bytes`` (WebCrypto). */
export async function sha256(bytes) {
  return new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
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

function equalBytes(a, b) {
  return a.length === b.length && a.every((byte, index) => byte === b[index]);
}

/**
 * The redemption context of a relayed campaign's TokenChallenge:
 * SHA-256(label || the pin's 32 bytes), where the pin is the SHA-256 of the campaign's identity document, so that a
 * token is bound to the exact identity (config, HPKE key, relay, issuer and its tokens_each) the device trusted.
 * @param {string} pin the campaign's pin, 64 lower-case hexadecimal digits
 * @param {string} [label] ``CAMPAIGN_CONTEXT`` (default), or ``EARLIER_CAMPAIGN_CONTEXT`` for an identity without ``tokens_each``
 */
export async function redemptionContext(pin, label = CAMPAIGN_CONTEXT) {
  if (typeof pin !== 'string' || !/^[0-9a-f]{64}$/.test(pin)) {
    throw new InvalidParameterError(`A relayed campaign's pin must be 64 lower-case hexadecimal digits. Got ${JSON.stringify(pin)}.`);
  }
  if (label !== CAMPAIGN_CONTEXT && label !== EARLIER_CAMPAIGN_CONTEXT) {
    throw new InvalidParameterError(`A redemption context's label is ${JSON.stringify(CAMPAIGN_CONTEXT)} or ${JSON.stringify(EARLIER_CAMPAIGN_CONTEXT)}. Got ${JSON.stringify(label)}.`);
  }
  return sha256(concat(new TextEncoder().encode(label), hexBytes(pin)));
}

/**
 * The bytes of a TokenChallenge of type 2 (RFC 9577 section 2.1.1): token_type, issuer_name (UTF-8), the
 * redemption context (0 or 32 bytes) and ``originInfo`` (empty by default, as dpdist's campaigns have it).
 */
export function tokenChallenge(issuerName, context, originInfo = '') {
  if (typeof issuerName !== 'string' || issuerName.length === 0) {
    throw new InvalidParameterError(`A TokenChallenge's issuer name must be a non-empty string. Got ${JSON.stringify(issuerName)}.`);
  }
  const origins = originInfo === '' ? undefined : originInfo.split(',');
  return new TokenChallenge(TOKEN_TYPE, issuerName, Uint8Array.from(context), origins).serialize();
}

/** token_key_id = SHA-256(token_key), the key's SubjectPublicKeyInfo with the id-RSASSA-PSS OID (RFC 9578 section 6.5). */
export function tokenKeyId(tokenKey) {
  return sha256(tokenKey);
}

/** The token key of type 2 ``tokenKey`` (SPKI bytes, or base64url text) as bytes, refused unless it is one. */
export function checkTokenKey(tokenKey) {
  const bytes = typeof tokenKey === 'string' ? base64UrlDecode(tokenKey, 'A token key') : Uint8Array.from(tokenKey);
  if (bytes.length <= 4 + PSS_ALGORITHM.length || bytes[0] !== 0x30 || !equalBytes(bytes.subarray(4, 4 + PSS_ALGORITHM.length), PSS_ALGORITHM)) {
    throw new InvalidParameterError(
      'A token key of type 2 is the SubjectPublicKeyInfo of a 2048-bit RSA key with the id-RSASSA-PSS OID and the ' +
        'parameters SHA-384, MGF1 with SHA-384, salt length 48 (RFC 9578 section 6.5). Got another encoding.',
    );
  }
  return bytes;
}

const importedKeys = new Map(); // base64url token key -> its WebCrypto RSA-PSS (SHA-384) verification key

async function publicKeyOf(tokenKey) {
  const name = base64UrlEncode(tokenKey);
  if (!importedKeys.has(name)) {
    // WebCrypto imports an RSA key from an SPKI with the rsaEncryption OID only: the same key, re-encoded
    const key = await globalThis.crypto.subtle.importKey(
      'spki', convertRSASSAPSSToEnc(tokenKey), { name: 'RSA-PSS', hash: 'SHA-384' }, true, ['verify'],
    );
    if (key.algorithm.modulusLength !== 8 * NK) {
      throw new InvalidParameterError(`A token key of type 2 is a 2048-bit RSA key. Got ${key.algorithm.modulusLength} bits.`);
    }
    importedKeys.set(name, key);
  }
  return importedKeys.get(name);
}

/**
 * A TokenRequest for one token of type 2 under ``tokenKey`` for ``challenge`` (RFC 9578 section 6.1), and the state
 * that finishes it (``finalizeToken``).  The state is JSON-safe (base64url text): a device keeps it until the issuer's
 * answer arrives, and asks again with the same ``request`` if the answer was lost.
 * @param {Uint8Array|string} tokenKey the issuer's key (SPKI with the id-RSASSA-PSS OID, bytes or base64url)
 * @param {Uint8Array} challenge the TokenChallenge's bytes
 * @param {Uint8Array} [nonce] the token's nonce (32 bytes; default: random), from fresh high-entropy input (RFC 9474
 *   section 7.3) when chosen: the issuer never sees it
 * @returns {Promise<{request: string, tokenInput: string, inv: string}>}
 */
export async function createTokenRequest(tokenKey, challenge, nonce = globalThis.crypto.getRandomValues(new Uint8Array(32))) {
  const key = checkTokenKey(tokenKey);
  const keyId = await tokenKeyId(key);
  if (!(nonce instanceof Uint8Array) || nonce.length !== 32) throw new InvalidParameterError(`A token's nonce is 32 bytes. Got ${nonce?.length}.`);
  const authInput = new AuthenticatorInput(BLIND_RSA, TOKEN_TYPE, nonce, await sha256(challenge), keyId);
  const tokenInput = authInput.serialize();
  const { blindedMsg, inv } = await RSABSSA.SHA384.PSS.Deterministic().blind(await publicKeyOf(key), tokenInput);
  const request = new TokenRequest(keyId[keyId.length - 1], blindedMsg, BLIND_RSA).serialize();
  return { request: base64UrlEncode(request), tokenInput: base64UrlEncode(tokenInput), inv: base64UrlEncode(inv) };
}

/**
 * The token that the issuer's TokenResponse ``response`` (RFC 9578 section 6.2: the 256-byte blind signature) gives
 * for the request ``state`` came from (RFC 9578 section 6.3): unblinded and checked as an RSASSA-PSS signature of
 * the token input under ``tokenKey`` (RFC 9474 Finalize), else ServiceError ``bad_token_response``.
 * @returns {Promise<Uint8Array>} the Token (354 bytes)
 */
export async function finalizeToken(tokenKey, state, response) {
  const key = checkTokenKey(tokenKey);
  const bytes = Uint8Array.from(response);
  if (bytes.length !== NK) {
    throw new ServiceError(`The issuer's TokenResponse has ${bytes.length} bytes; a token of type 2 takes ${NK}.`, { code: 'bad_token_response' });
  }
  const tokenInput = base64UrlDecode(state.tokenInput, 'A token request state');
  let authenticator;
  try {
    authenticator = await RSABSSA.SHA384.PSS.Deterministic().finalize(
      await publicKeyOf(key), tokenInput, TokenResponse.deserialize(bytes).blindSig, base64UrlDecode(state.inv, 'A token request state'),
    );
  } catch (error) {
    throw new ServiceError(
      `The issuer's TokenResponse does not unblind to a signature under the campaign's token key (${error.message}): no token.`,
      { code: 'bad_token_response' },
    );
  }
  const token = new Token(BLIND_RSA, AuthenticatorInput.deserialize(BLIND_RSA, tokenInput, { bytesRead: 0 }), authenticator).serialize();
  if (token.length !== TOKEN_BYTES) throw new ServiceError(`A token of type 2 has ${TOKEN_BYTES} bytes. Got ${token.length}.`, { code: 'bad_token_response' });
  return token;
}

/** The Authorization header value that redeems ``token`` (RFC 9577 section 2.2): ``PrivateToken token="<base64url>"``. */
export function authorizationHeader(token) {
  const parsed = Token.deserialize(BLIND_RSA, Uint8Array.from(token));
  return new AuthorizationHeader(parsed).toString(true);
}
