// Where a device takes a relayed campaign's config and keys from, so that the relay cannot swap them (issue 44 design,
// sections 3 and 4; docs/deployment.md, "Anonymous collection").
//
// A relay that served the collector's HPKE key could serve its own and open the reports; it could also serve another
// protocol config (a larger epsilon with the same report format).  So a device takes the whole campaign from a source
// the relay does not control:
//
// * the collector: the device is given the collector's URL, and sends sealed reports to the relay its config names
//   (``relay.url``);
// * or a pin: the lower-case hex SHA-256 of the campaign's identity document (the bytes the collector made at
//   creation and serves at ``/api/campaigns/{c}/identity``, which a relay passes on verbatim), given to the device with
//   any server's URL: the device hashes the bytes it received (no canonicalization on its side) and refuses others.
//
// A device given the relay's own URL without a pin refuses (``pin_required``).  The issuer named by the campaign is
// checked against what the device was told (``issuer_mismatch``) and its TokenChallenge re-derived
// (``challenge_mismatch``).

import { InvalidParameterError, ServiceError } from './errors.js';

// Privacy Pass (privacypass.js and its 228 KB vendored libraries) is imported when a campaign has an issuer, not before.
const TOKEN_TYPE = 0x0002;

async function sha256Hex(bytes) {
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** The path of a campaign's identity document, under ``/api/campaigns/{c}``. */
export const IDENTITY_PATH = '/identity';

/** ``pin`` as the device keeps it (64 lower-case hex digits), or a TypeError naming the option. */
export function checkPin(pin) {
  if (pin === null || pin === undefined) return null;
  if (typeof pin !== 'string' || !/^[0-9a-fA-F]{64}$/.test(pin)) {
    throw new TypeError(`The 'pin' option of Client must be the campaign's pin: 64 hexadecimal digits (the SHA-256 of its identity document). Got ${JSON.stringify(pin)}.`);
  }
  return pin.toLowerCase();
}

/** The origin of an absolute http(s) URL, or InvalidParameterError naming ``what``. */
export function originOf(url, what) {
  let parsed = null;
  try {
    parsed = new URL(url);
  } catch {
    // below
  }
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw new InvalidParameterError(`${what} must be an absolute http(s) URL. Got ${JSON.stringify(url)}.`);
  }
  return parsed.origin;
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The campaign described by the identity ``bytes`` the server returned, if their SHA-256 is ``pin``; else ServiceError
 * ``pin_mismatch`` (a relay that swapped a key or the config cannot make bytes with the same hash).
 * @returns {Promise<{campaign: string, config: object, relay: object, issuer: object|null}>}
 */
export async function pinnedIdentity(bytes, pin, campaignId) {
  const digest = await sha256Hex(bytes);
  if (digest !== pin) {
    throw new ServiceError(
      `The identity of campaign '${campaignId}' this server returned has SHA-256 ${digest}, not the campaign's pin ${pin}: ` +
        'its config or keys are not the ones the collector published (a relay that swapped them?). Nothing was drawn or sent.',
      { code: 'pin_mismatch' },
    );
  }
  let identity;
  try {
    identity = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw new ServiceError(`The identity matching the pin is not JSON (${error.message}).`, { code: 'pin_mismatch' });
  }
  if (!isObject(identity) || identity.campaign !== campaignId || !isObject(identity.config) || !isObject(identity.relay)) {
    throw new ServiceError(
      `The identity matching the pin is not that of relayed campaign '${campaignId}' (it names ${JSON.stringify(identity?.campaign)}).`,
      { code: 'pin_mismatch' },
    );
  }
  return { campaign: identity.campaign, config: identity.config, relay: identity.relay, issuer: identity.issuer ?? null };
}

/**
 * Refuse to take a relayed campaign's config from its own relay without a pin: ``relay`` is the config's relay (from
 * the server at ``serverOrigin``), and when its ``url`` is that server, the server is the relay (``pin_required``).
 */
export function checkNotTheRelay(relay, serverOrigin, campaignId) {
  const relayOrigin = originOf(relay.url, `The relay URL of campaign '${campaignId}' (relay.url of its config)`);
  if (relayOrigin === serverOrigin) {
    throw new ServiceError(
      `${serverOrigin} is the relay of campaign '${campaignId}': this is the campaign's relay; give the collector's URL ` +
        'or the campaign\'s pin (the pin option), so that the relay cannot choose the key the reports are sealed to. ' +
        'Nothing was drawn or sent.',
      { code: 'pin_required' },
    );
  }
}

/** The issuer ``origin`` a campaign names must be the one the device was given (``expectedUrl``, if any). */
export function checkIssuerOrigin(origin, expectedUrl, campaignId) {
  if (expectedUrl === null || expectedUrl === undefined) return;
  const expected = originOf(expectedUrl, "The 'issuer.url' option of Client");
  if (expected !== origin) {
    throw new ServiceError(
      `Campaign '${campaignId}' names the issuer ${origin}; this device was given ${expected}. Nothing was drawn or sent.`,
      { code: 'issuer_mismatch' },
    );
  }
}

/**
 * What a device needs of a relayed campaign's issuer (issue 44 design, section 4, step 5), checked: the token type,
 * the issuer's URL against the one the device was given (``expectedUrl``, its origin; ``issuer_mismatch``), the token
 * key's encoding, and the TokenChallenge, re-derived from the campaign id, the HPKE key id and the issuer's name
 * (``challenge_mismatch``).
 * @returns {Promise<{url: string, origin: string, name: string, key: string, tokenKey: Uint8Array, tokenKeyText: string,
 *   challenge: Uint8Array, scope: string}>} ``scope``: the challenge in base64url, the campaign's key in the token store
 */
export async function checkedIssuer(issuer, relay, campaignId, expectedUrl = null) {
  if (!isObject(issuer)) throw new InvalidParameterError(`The issuer of campaign '${campaignId}' must be an object. Got ${JSON.stringify(issuer)}.`);
  if (issuer.token_type !== TOKEN_TYPE) {
    throw new ServiceError(
      `Campaign '${campaignId}' takes tokens of type ${JSON.stringify(issuer.token_type)}; this client makes type ${TOKEN_TYPE} (blind RSA, RFC 9578).`,
      { code: 'unsupported_token_type' },
    );
  }
  const origin = originOf(issuer.url, `The issuer URL of campaign '${campaignId}' (issuer.url)`);
  checkIssuerOrigin(origin, expectedUrl, campaignId);
  for (const field of ['name', 'key', 'token_key', 'challenge']) {
    if (typeof issuer[field] !== 'string' || issuer[field] === '') {
      throw new InvalidParameterError(`The issuer of campaign '${campaignId}' must have a non-empty string '${field}'. Got ${JSON.stringify(issuer[field])}.`);
    }
  }
  const { base64UrlDecode, base64UrlEncode, checkTokenKey, redemptionContext, tokenChallenge } = await import('./privacypass.js');
  const tokenKey = checkTokenKey(issuer.token_key);
  const challenge = tokenChallenge(issuer.name, await redemptionContext(campaignId, relay.key_id));
  const published = base64UrlDecode(issuer.challenge, `The TokenChallenge of campaign '${campaignId}' (issuer.challenge)`);
  if (published.length !== challenge.length || !published.every((byte, index) => byte === challenge[index])) {
    throw new ServiceError(
      `The TokenChallenge campaign '${campaignId}' publishes is not the one its id, its key id and its issuer's name give ` +
        '(RFC 9577 section 2.1.1, redemption context of the dpdist design): tokens for it would not be this campaign\'s.',
      { code: 'challenge_mismatch' },
    );
  }
  return {
    url: String(issuer.url).replace(/\/+$/, ''), origin, name: issuer.name, key: issuer.key, tokenKey,
    tokenKeyText: base64UrlEncode(tokenKey), challenge, scope: base64UrlEncode(challenge),
  };
}
