// Where a device takes a relayed campaign's config and keys from, so that neither the relay nor the collector can give it
// a campaign of its own.
//
// A relay that served the collector's HPKE key could serve its own and open the reports; it could also serve another
// protocol config (a larger epsilon with the same report format).  A collector that served one device a config of its
// own (a tag: epsilon 4.0000001) would find that device's report in the shuffled batch.  So a relayed campaign has one
// identity: a document the collector made once, at creation, and serves verbatim (``GET /api/campaigns/{c}/identity``,
// passed on by a relay), and its pin, the lower-case hex SHA-256 of those bytes.  A device
//
// * always fetches the identity's bytes, hashes them (no canonicalization on its side), and refuses them
//   (``pin_mismatch``) unless the hash is the pin it was given (if any) and the pin the server's config names
//   (``relay.pin``);
// * takes config, relay and issuer from the identity only;
// * binds its Privacy Pass tokens to the pin (redemption context v3, privacypass.js; v2 for an identity whose issuer
//   states no ``tokens_each``, made before issuers published it) and names the pin with every report (``Dpdist-Pin``):
//   the relay pins each campaign's identity and refuses reports made under another, so a device served another
//   identity never reaches a batch;
// * checks that the issuer publishes, with the campaign's key, the ``tokens_each`` the identity states (relay-route.js,
//   ``tokens_each_mismatch``): the campaign's guarantee counts each colluding credential as that many reports.
//
// A device given the relay's own URL without a pin refuses (``pin_required``).  A device given a credential is given its
// issuer's URL too, and refuses a campaign that names no issuer or another one (``issuer_mismatch``); the TokenChallenge
// the config publishes is re-derived from the pin (``challenge_mismatch``).

import { MAX_ANSWER_BYTES, tooManyValues } from './answer.js';
import { InvalidParameterError, ServiceError } from './errors.js';
import { shownUrl } from './shown.js';

// Privacy Pass (privacypass.js and its 228 KB vendored libraries) is imported when a campaign has an issuer, not before.
const TOKEN_TYPE = 0x0002;

async function sha256Hex(bytes) {
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('');
}

/** Tokens one credential of an issuer gives, at most (dpdist issuer's MAX_TOKENS_EACH). */
const MAX_TOKENS_EACH = 10_000;

/**
 * The label of the redemption context of a campaign whose identity names ``issuer``: v3 when the identity states the
 * issuer's ``tokens_each`` (a device of the version before refuses such a campaign: the challenge it derives is not the
 * one the config publishes), v2 for an identity made before (dpdist._wire._identity.context_label).
 */
export async function contextLabel(issuer) {
  const { CAMPAIGN_CONTEXT, EARLIER_CAMPAIGN_CONTEXT } = await import('./privacypass.js');
  return Object.hasOwn(issuer, 'tokens_each') ? CAMPAIGN_CONTEXT : EARLIER_CAMPAIGN_CONTEXT;
}

/** The path of a campaign's identity document, under ``/api/campaigns/{c}``. */
export const IDENTITY_PATH = '/identity';
/** The header that names a report's pin to the relay. */
export const PIN_HEADER = 'Dpdist-Pin';

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
    // the value escaped, masked and cut (its password, a token=): a server's relay or issuer URL, or the application's
    throw new InvalidParameterError(`${what} must be an absolute http(s) URL. Got ${typeof url === 'string' ? `"${shownUrl(url)}"` : JSON.stringify(url)}.`);
  }
  return parsed.origin;
}

function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * The ``issuer`` option of Client as the device keeps it: null, or ``{credential, url}`` where ``credential`` is null or
 * a non-empty string and ``url`` null or an absolute http(s) URL, required with a credential (a credential is tied to
 * its issuer: a device that sent it to whatever issuer a campaign names would hand it to the collector's own issuer).
 * InvalidParameterError naming the option otherwise.
 */
export function checkIssuerOption(issuer) {
  if (issuer === null || issuer === undefined) return null;
  const shown = JSON.stringify(issuer, (key, value) => (key === 'credential' && typeof value === 'string' ? '…' : value));
  if (!isObject(issuer)) throw new InvalidParameterError(`The 'issuer' option of Client must be null or {credential, url}. Got ${shown}.`);
  const unknown = Object.keys(issuer).filter((key) => key !== 'credential' && key !== 'url');
  if (unknown.length > 0) {
    throw new InvalidParameterError(`The 'issuer' option of Client takes 'credential' and 'url' only. Got ${JSON.stringify(unknown)}.`);
  }
  const credential = issuer.credential ?? null;
  const url = issuer.url ?? null;
  if (credential !== null && (typeof credential !== 'string' || credential === '')) {
    throw new InvalidParameterError(`The 'issuer.credential' option of Client must be a non-empty string or null. Got a ${typeof credential}${credential === '' ? ' (empty)' : ''}.`);
  }
  if (url !== null) originOf(url, "The 'issuer.url' option of Client");
  if (credential !== null && url === null) {
    throw new InvalidParameterError(
      "The 'issuer.url' option of Client is required with 'issuer.credential': a credential is tied to its issuer, and " +
        'the device sends it to that issuer only (give the issuer URL received with the credential).',
    );
  }
  return { credential, url };
}

/**
 * The identity of relayed campaign ``campaignId`` in the ``bytes`` the server returned, with its ``pin`` (their SHA-256),
 * if that pin is the one the device was given (``pin``, null if none) and the one the server's config names
 * (``configPin``, its ``relay.pin``); else ServiceError ``pin_mismatch``: a relay that swapped a key or the config, or
 * a collector that served this device an identity of its own, cannot make bytes with the same hash.
 * @returns {Promise<{pin: string, campaign: string, config: object, relay: object, issuer: object|null}>}
 */
export async function identityOf(bytes, campaignId, { pin = null, configPin = null } = {}) {
  const digest = await sha256Hex(bytes);
  if (pin !== null && digest !== pin) {
    throw new ServiceError(
      `The identity of campaign '${campaignId}' this server returned has SHA-256 ${digest}, not the campaign's pin ${pin}: ` +
        'its config or keys are not the ones the collector published (a relay that swapped them?). Nothing was drawn or sent.',
      { code: 'pin_mismatch' },
    );
  }
  const named = typeof configPin === 'string' ? configPin.toLowerCase() : configPin;
  if (named !== digest) {
    throw new ServiceError(
      `The config of campaign '${campaignId}' this server returned names the pin ${JSON.stringify(named ?? null)}, and the identity ` +
        `it returned has SHA-256 ${digest}: the device takes a relayed campaign from one identity only. Nothing was drawn or sent.`,
      { code: 'pin_mismatch' },
    );
  }
  const heavy = tooManyValues(bytes, MAX_ANSWER_BYTES); // not parsed: a server's pin covers any bytes
  if (heavy !== null) {
    throw new ServiceError(`The identity of campaign '${campaignId}' this server returned is ${heavy}, not parsed (an identity holds a few hundred).`,
      { code: 'unexpected_answer' });
  }
  let identity;
  try {
    identity = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw new ServiceError(`The identity matching the pin is not JSON (${error.message}).`, { code: 'pin_mismatch' });
  }
  if (!isObject(identity) || identity.campaign !== campaignId || !isObject(identity.config) || !isObject(identity.relay) ||
    !(identity.issuer === null || isObject(identity.issuer))) {
    throw new ServiceError(
      `The identity matching the pin is not that of relayed campaign '${campaignId}' (it names ${JSON.stringify(identity?.campaign)}).`,
      { code: 'pin_mismatch' },
    );
  }
  return { pin: digest, campaign: identity.campaign, config: identity.config, relay: identity.relay, issuer: identity.issuer };
}

/**
 * Refuse to take a relayed campaign from its own relay without a pin: ``relay`` is the identity's relay (from the server
 * at ``serverOrigin``), and when its ``url`` is that server, the server is the relay (``pin_required``).
 */
export function checkNotTheRelay(relay, serverOrigin, campaignId) {
  const relayOrigin = originOf(relay.url, `The relay URL of campaign '${campaignId}' (relay.url of its identity)`);
  if (relayOrigin === serverOrigin) {
    throw new ServiceError(
      `${serverOrigin} is the relay of campaign '${campaignId}': this is the campaign's relay; give the collector's URL ` +
        'or the campaign\'s pin (the pin option), so that the relay cannot choose the key the reports are sealed to. ' +
        'Nothing was drawn or sent.',
      { code: 'pin_required' },
    );
  }
}

/**
 * A device given an issuer (``expectedUrl``: the ``issuer.url`` option, null if none) refuses a relayed campaign whose
 * identity names no issuer (``issuer`` null: anyone, the collector included, may fill its batches) or another issuer's
 * origin (``issuer_mismatch``), before anything is drawn or any credential sent.
 */
export function checkExpectedIssuer(issuer, expectedUrl, campaignId) {
  if (expectedUrl === null || expectedUrl === undefined) return;
  const expected = originOf(expectedUrl, "The 'issuer.url' option of Client");
  if (!isObject(issuer)) {
    throw new ServiceError(
      `Campaign '${campaignId}' names no issuer: this campaign admits anyone (its relay takes reports without a token, so ` +
        `the collector could fill a batch with reports of its own), and this device was given the issuer ${expected}. ` +
        'Nothing was drawn or sent.',
      { code: 'issuer_mismatch' },
    );
  }
  const origin = originOf(issuer.url, `The issuer URL of campaign '${campaignId}' (issuer.url)`);
  if (expected !== origin) {
    throw new ServiceError(
      `Campaign '${campaignId}' names the issuer ${origin}; this device was given ${expected}. Nothing was drawn or sent.`,
      { code: 'issuer_mismatch' },
    );
  }
}

/**
 * What a device needs of a relayed campaign's issuer, checked: the token type, the
 * issuer's URL, the token key's encoding, its ``tokens_each`` (an int in 1..10000, or absent from an identity made
 * before issuers published it), and the TokenChallenge, derived from the issuer's name and the campaign's ``pin``
 * (redemption context v3, ``contextLabel``), which must be the one the server's config publishes (``published``: its
 * ``relay.issuer.challenge``, base64url; null if it publishes none), else ``challenge_mismatch``.
 * @returns {Promise<{url: string, origin: string, name: string, key: string, tokenKey: Uint8Array, tokenKeyText: string,
 *   tokensEach: number|null, challenge: Uint8Array, scope: string}>} ``scope``: the challenge in base64url, the
 *   campaign's key in the token store
 */
export async function checkedIssuer(issuer, pin, campaignId, published = null) {
  if (!isObject(issuer)) throw new InvalidParameterError(`The issuer of campaign '${campaignId}' must be an object. Got ${JSON.stringify(issuer)}.`);
  if (issuer.token_type !== TOKEN_TYPE) {
    throw new ServiceError(
      `Campaign '${campaignId}' takes tokens of type ${JSON.stringify(issuer.token_type)}; this client makes type ${TOKEN_TYPE} (blind RSA, RFC 9578).`,
      { code: 'unsupported_token_type' },
    );
  }
  const origin = originOf(issuer.url, `The issuer URL of campaign '${campaignId}' (issuer.url)`);
  for (const field of ['name', 'key', 'token_key']) {
    if (typeof issuer[field] !== 'string' || issuer[field] === '') {
      throw new InvalidParameterError(`The issuer of campaign '${campaignId}' must have a non-empty string '${field}'. Got ${JSON.stringify(issuer[field])}.`);
    }
  }
  const stated = Object.hasOwn(issuer, 'tokens_each');
  const tokensEach = stated ? issuer.tokens_each : null;
  if (stated && !(Number.isInteger(tokensEach) && tokensEach >= 1 && tokensEach <= MAX_TOKENS_EACH)) {
    throw new InvalidParameterError(`The issuer of campaign '${campaignId}' must state 'tokens_each' as an int in 1..${MAX_TOKENS_EACH}. Got ${JSON.stringify(tokensEach)}.`);
  }
  const { base64UrlDecode, base64UrlEncode, checkTokenKey, redemptionContext, tokenChallenge } = await import('./privacypass.js');
  const tokenKey = checkTokenKey(issuer.token_key);
  const challenge = tokenChallenge(issuer.name, await redemptionContext(pin, await contextLabel(issuer)));
  if (published !== null && published !== undefined) {
    let given = null;
    try {
      given = base64UrlDecode(published, `The TokenChallenge of campaign '${campaignId}' (relay.issuer.challenge)`);
    } catch {
      // below
    }
    if (given === null || given.length !== challenge.length || !given.every((byte, index) => byte === challenge[index])) {
      throw new ServiceError(
        `The TokenChallenge campaign '${campaignId}' publishes is not the one its issuer's name and its pin give (RFC 9577 ` +
          'section 2.1.1, the redemption context of the dpdist design): tokens for it would not be this campaign\'s. ' +
          'Nothing was drawn or sent.',
        { code: 'challenge_mismatch' },
      );
    }
  }
  return {
    url: String(issuer.url).replace(/\/+$/, ''), origin, name: issuer.name, key: issuer.key, tokenKey,
    tokenKeyText: base64UrlEncode(tokenKey), tokensEach, challenge, scope: base64UrlEncode(challenge),
  };
}
