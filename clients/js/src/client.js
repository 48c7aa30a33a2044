// A device-side client of ``dpdist serve``: fetch a campaign's config, randomize on the device,
// submit batches of reports with a batch id, retrying until the server acknowledges.
//
// Only reports leave the device: a value is randomized as soon as it is given (``submit``,
// ``add``) and only the randomized report is kept, sent and retried.  A retry sends the same
// bytes under the same batch id (the server counts a batch exactly once); a report is never
// drawn again for the same value, which would spend more privacy budget.  Reports leave in a
// uniformly random order (CSPRNG), never in the order the values were given: ``submitMany``
// takes the values in a random order, ``flush`` shuffles the queued reports of a batch.
//
// HTTP API (docs/how-to/run-a-campaign.md, /openapi.json):
//   GET  {server}/api/campaigns/{campaign}/config              -> {"config", "state", ...}
//   PUT  {server}/api/campaigns/{campaign}/batches/{batch_id}  binary records -> ack
// A campaign collected through a relay (its config has ``relay``):
//   GET  {server}/api/campaigns/{campaign}/identity            the identity document: its SHA-256 is the pin
//   GET  {issuer}/issuer/v1/keys/{key}                         the issuer's token key, checked against the campaign's
//   POST {issuer}/issuer/v1/keys/{key}/token-request           Bearer credential, TokenRequest -> TokenResponse
//   PUT  {relay}/relay/v1/campaigns/{campaign}/ohttp/{id}      Dpdist-Pin, PrivateToken token, one RFC 9458 request -> ack
// Through a standard Oblivious HTTP relay (the ``ohttp`` option; RFC 9458, ohttp.js): the same requests, each one
// encapsulated and POSTed to the relay resource, which forwards it to the collector's /ohttp/gateway.

import { IncompatibleStateError, InvalidParameterError, ServiceError } from './errors.js';
import { ReportBatch } from './protocols/_base.js';
import { Ledger } from './ledger.js';
import { isLongitudinal, memoKey } from './protocols/_longitudinal.js';
import { secureSource } from './random.js';
import { permutation, shuffleBatch } from './shuffle.js';
import { encodeRecord, newFileId } from './wire.js';
import { protocolOfAnswer, rowsPerBody } from './bound.js';
import { bindingNonce, encapsulateForRelay, relayKeyConfig, relayReportPath } from './relay.js';
import {
  IDENTITY_PATH, PIN_HEADER, checkExpectedIssuer, checkIssuerOption, checkNotTheRelay, checkPin, checkedIssuer, identityOf, originOf,
} from './identity.js';
import { TokenWallet } from './tokens.js';
import { batchAck, relayAck } from './acks.js';
import { ACK_ANSWER_BYTES, AnswerTooLarge, MAX_ANSWER_BYTES, readAnswer, readBounded, tooManyValues } from './answer.js';
import { refusalShown, secretsOf, shown, shownUrl } from './shown.js';
import { REQUEST_CONTENT_TYPE, campaignKeyConfig, checkRelayUrl, decodeKeyList, givenKeyConfig, obliviousFetch } from './ohttp.js';

/** Privacy Pass (privacypass.js, with its 228 KB of vendored libraries), imported for a campaign with an issuer only. */
const privacyPass = () => import('./privacypass.js');

/**
 * The issuer's refusal ``error`` of a token request, after this device obtained ``obtained`` tokens in the same call: the
 * same status and code, saying that those tokens are kept (``held`` spare of the ``needed``) for the next reports.
 */
function tokensKept(error, obtained, held, needed, campaignId) {
  const kept = new ServiceError(
    `${error.message} The ${obtained} token(s) obtained before this refusal are kept for the next reports of campaign ` +
      `'${campaignId}': ${held} held of the ${needed} needed. Nothing was drawn or sent.`,
    { status: error.status, code: error.code },
  );
  kept.cause = error;
  return kept;
}

export { ServiceError };


const RETRYABLE_STATUS = new Set([408, 425, 429, 500, 502, 503, 504]);

/**
 * The question a device of this campaign answers once (the ledger's ``once``): a campaign in rounds, any of its
 * rounds (its id), or the campaign a round's own campaign is of (``round_of``); null for any other campaign.
 */
function answerOnce(document) {
  if (document.round_of) return String(document.round_of);
  return document.rounds ? String(document.campaign) : null;
}

/**
 * Refuse, before anything is drawn, an answer to a campaign in rounds whose round is not open now: the device's one
 * answer would be spent on a batch the service must refuse (a public state, so the refusal reveals nothing).
 */
function checkRoundOpen(document) {
  const state = document.rounds?.round_state ?? document.state;
  if (state !== 'open' || (document.rounds && !document.submit_to)) {
    throw new ServiceError(
      `Campaign '${document.campaign}' runs in rounds and no round is open now (state ${state}); nothing was drawn, and the ` +
        'device keeps its one answer for an open round.',
      { status: 409, code: 'no_open_round' },
    );
  }
}

/**
 * Refuse, before anything is drawn, an answer outside the round this device drew (``Ledger.roundFor``, kept in its
 * ledger): an earlier round open is ``wait_for_round`` (submit again later), a later one ``round_over`` (the device
 * answers no other round). A device answering the round open when it arrives would fill each round with whoever
 * answers first. Both refusals depend on the draw and the public round only, never on the value.
 */
function checkOwnRound(document, ledger, collector, once, source) {
  if (ledger.answered(once, collector)) return; // the ledger refuses the second answer, saying so
  const sizes = document.rounds?.sizes ?? document.round_sizes;
  if (!Array.isArray(sizes)) {
    throw new ServiceError(
      `Campaign '${document.campaign}' runs in rounds but its config gives no rounds' sizes (a server before dpdist's ` +
        'random split of devices into rounds); nothing was drawn.',
      { status: 409, code: 'no_round_sizes' },
    );
  }
  const own = ledger.roundFor(once, collector, sizes, source);
  const asked = document.config?.round ?? document.rounds?.round;
  if (asked === own) return;
  if (Number.isInteger(asked) && asked < own) {
    throw new ServiceError(
      `This device answers round ${own} of campaign '${once}' (drawn at random, in proportion to the rounds' sizes); ` +
        `round ${asked} is open now. Nothing was drawn: submit again once round ${own} is open.`,
      { status: 409, code: 'wait_for_round' },
    );
  }
  throw new ServiceError(
    `This device answers round ${own} of campaign '${once}' (drawn at random), which is over (round ${asked} is open ` +
      'now); it answers no other round, so its one answer is not given. Nothing was drawn.',
    { status: 409, code: 'round_over' },
  );
}

/** The storage key of the device's privacy ledger. */
export const LEDGER_KEY = 'dpdist-ledger';
/**
 * 409 refusals worth retrying: the campaign is between states (``campaign_not_open``), or was deleted and created
 * again by another server process while the batch was checked, nothing of it counted (``campaign_changed``).
 */
const RETRYABLE_CONFLICTS = new Set(['campaign_not_open', 'campaign_changed']);

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The longest wait a server's Retry-After may ask of this client (seconds), as in Python. */
export const MAX_RETRY_AFTER = 60;
/** How long a failed request is sent again, from its first failure (ms; dpdist._http._retry.DEFAULT_RETRY_WINDOW_S). */
export const DEFAULT_RETRY_WINDOW_MS = 300_000;
/** The longest pause between two attempts without a Retry-After (ms; dpdist._http._retry.MAX_BACKOFF_S). */
export const MAX_BACKOFF_MS = 10_000;

/** Seconds a ``Retry-After`` header asks for (delta-seconds or an HTTP date), null if absent or unreadable. */
export function retryAfterSeconds(value) {
  if (value === null || value === undefined) return null;
  const text = String(value).trim();
  if (/^\d+$/.test(text)) return Math.min(Number(text), MAX_RETRY_AFTER);
  const moment = Date.parse(text);
  return Number.isNaN(moment) ? null : Math.min(Math.max(0, (moment - Date.now()) / 1000), MAX_RETRY_AFTER);
}

/**
 * The wait before a retry, jittered so that many clients refused together do not return together: a server's
 * Retry-After is honoured (never earlier, up to 50% later), else the backoff is spread over its upper half.
 */
export function retryDelayMs(backoffMs, askedSeconds) {
  if (askedSeconds !== null) return askedSeconds * 1000 * (1 + 0.5 * Math.random());
  return backoffMs * (0.5 + 0.5 * Math.random());
}

/**
 * The retries of one request (as dpdist._http._retry.Retries), made as its first attempt starts: after each failed attempt,
 * ``pause(asked)`` gives the milliseconds to wait before the next (the backoff doubling from ``firstMs`` up to
 * MAX_BACKOFF_MS, jittered, or the Retry-After ``asked``, in seconds), or null once ``windowMs`` from the first failure
 * have passed (a last attempt comes at the window's end; a Retry-After past it ends the window) or ``retries`` (if not
 * null) are spent.
 */
export class Retries {
  constructor(windowMs, firstMs, retries = null, now = () => Date.now()) {
    this.windowMs = windowMs;
    this.retries = retries;
    this.now = now;
    this.failures = 0;
    this.started = now(); // made as the first attempt starts: what spentMs counts from
    this.first = null;
    this._next = firstMs;
  }

  elapsedMs() {
    return this.first === null ? 0 : this.now() - this.first;
  }

  /** Milliseconds since the first attempt started, its own time included (elapsedMs counts from its failure). */
  spentMs() {
    return this.now() - this.started;
  }

  pause(asked) {
    if (this.first === null) this.first = this.now();
    this.failures += 1;
    if (this.retries !== null && this.failures > this.retries) return null;
    const left = Math.max(0, this.windowMs - this.elapsedMs());
    const delay = retryDelayMs(this._next, asked);
    this._next = Math.min(MAX_BACKOFF_MS, this._next * 2);
    if (delay <= left) return delay;
    return asked === null && left > 0 ? left : null;
  }
}

/**
 * A client of one campaign of a dpdist server.
 *
 * @param {string} serverUrl e.g. "https://collector.example.org" (or "" for the page's origin, "/path" for a path on it)
 * @param {string} campaignId the campaign's id
 * @param {object} [options]
 * @param {string|null} [options.token] the campaign's submit token, if it has one
 * @param {number} [options.batchSize] reports per batch of ``submitMany`` and ``add`` (1000)
 * @param {number} [options.retryWindowMs] how long a request that failed (no connection, a network error, 408, 425,
 *   429, 5xx) is sent again, the same bytes under the same batch id, from its first failure (300000: five minutes, a
 *   server restarting under load, as the Python client's ``retry_window``); 0: never.  An attempt begun in the
 *   window runs to its own ``timeoutMs``: a request that gets no answer ends up to one ``timeoutMs`` after the window
 * @param {number|null} [options.timeoutMs] how long one attempt may take, its answer's body read whole (60000, as the
 *   Python client's ``timeout``; null: no limit): a server that trickles its answer ends the attempt as a network
 *   error does, retried under ``retryWindowMs``.  A body is read up to MAX_ANSWER_BYTES (4 MiB: a config, an
 *   identity) or ACK_ANSWER_BYTES (1 MiB: anything else, a refusal) once decoded (``answer_too_large``), and JSON that
 *   may hold more than one value per 8 of those bytes is not parsed (``unexpected_answer``); a redirect is refused at once (``redirected``), never followed
 * @param {number|null} [options.retries] at most this many attempts after the first as well (null: as many as
 *   ``retryWindowMs`` allows)
 * @param {number} [options.retryDelayMs] first retry delay, doubled each time up to 10 s, jittered over its upper half;
 *   a 429/503's Retry-After is waited instead (never earlier, up to 50% later) (500 ms)
 * @param {typeof fetch} [options.fetch] the fetch function (default globalThis.fetch)
 * @param {{getItem: (key: string) => string|null, setItem: (key: string, value: string) => void}} [options.memoStorage]
 *   where the device's privacy ledger persists (default globalThis.localStorage, a browser's), under the key
 *   ``dpdist-ledger``: its budget, what each collector spent, and the permanent responses of longitudinal
 *   campaigns per collector and config without budgets (ledger.js).  Every report is charged before it is
 *   drawn and refused (PrivacyBudgetError) past the budget.  Required where there is no globalThis.localStorage
 *   (Node: a file-backed storage), and an object without getItem/setItem functions is refused
 *   (InvalidParameterError), as the Java client requires storage(...) or withoutLedger(); so is, before anything is
 *   sent, a storage that does not keep what it is given (each save is read back: getItem must return the string
 *   setItem was given).  null: no ledger, said
 *   explicitly, for simulations of many users (a longitudinal campaign is then refused: its device must keep its
 *   memo; so is a campaign in rounds, whose device answers one round only, which its ledger remembers)
 * @param {number|null} [options.budget] the device owner's total epsilon (Python's ``PrivacyLedger.restore(budget=...)``,
 *   the Java client's ``Options.budget``): a new ledger starts with it, and it replaces the stored ledger's budget every
 *   time the ledger is read (saved with the next charge), so the code, not the storage, is the authority.  null (default):
 *   the stored ledger's budget, or DEFAULT_BUDGET (10) for a new one.  Needs a memoStorage (refused with null)
 * @param {{request: (name: string, callback: () => any) => Promise<any>}|null} [options.locks] the Web Locks
 *   (default globalThis.navigator.locks, where the browser has them): every read-draw-save of the ledger holds
 *   the lock named ``dpdist-ledger``, so two tabs of one origin, which share its localStorage, cannot both read
 *   the ledger before either saved what it spent or answered.  null: no lock (one writer of the storage)
 * @param {string|null} [options.pin] a relayed campaign's pin (64 hex digits: the SHA-256 of its identity document,
 *   printed by ``dpdist campaign create``).  A relayed campaign's config, relay and issuer are always taken from the
 *   identity document the server returns, refused (ServiceError ``pin_mismatch``) unless its SHA-256 is the pin the
 *   server's config names and this pin, if given; with it any server, the relay included, may serve them.  Without it
 *   a relayed campaign must come from its collector (the relay itself is refused: ``pin_required``)
 * @param {{credential?: string|null, url?: string|null}|null} [options.issuer] for a relayed campaign whose reports
 *   need a Privacy Pass token of its issuer: ``credential``, what the issuer gave this device (sent to the issuer
 *   only, as ``Authorization: Bearer``), and ``url``, that issuer's URL, required with a credential
 *   (InvalidParameterError): a device given it refuses a relayed campaign that names no issuer or another issuer's
 *   origin (``issuer_mismatch``), before anything is drawn.  Also a property (``client.issuer``, checked when set),
 *   for a page that asks for the credential after loading the campaign
 * @param {{relay: string, keys?: Uint8Array|null}|null} [options.ohttp] a direct campaign's batches through a standard
 *   Oblivious HTTP relay (RFC 9458): ``relay``, the URL of the relay resource, which forwards to the collector's gateway
 *   (the collector never sees this device's address with a report); ``keys``, the gateway's key configurations
 *   (``application/ohttp-keys`` bytes) as given out of band: then the campaign's config goes through the relay too, and
 *   a campaign whose config states other keys is refused (ServiceError ``ohttp_key_mismatch``) before anything is drawn
 *   or sent.  Without ``keys`` the config, which states them, is fetched from ``serverUrl`` directly.  A relayed
 *   campaign is refused (``relayed_campaign``: its own relay batches and shuffles), as is a collector without a gateway
 *   (``no_ohttp_gateway``)
 * @param {null|'dpdist'|'ohttp'} [options.relayEnvelope] deprecated, no effect (it goes in dpdist 0.2.0): every report
 *   of a relayed campaign travels to its dpdist relay as an RFC 9458 request encapsulated to the key configuration of
 *   the campaign's identity (dpdist's own envelope is retired on devices)
 * @param {import('./random.js').RandomSource} [options.source] only for tests
 *
 * An option name the Client does not know is refused (InvalidParameterError naming it and listing CLIENT_OPTIONS).
 */
export class Client {
  constructor(serverUrl, campaignId, options = {}) {
    if (typeof serverUrl !== 'string') throw new TypeError(`The 'serverUrl' argument of Client must be a string. Got ${typeof serverUrl}.`);
    checkServerUrl(serverUrl);
    if (typeof campaignId !== 'string' || !/^[A-Za-z0-9._-]{1,128}$/.test(campaignId)) {
      throw new TypeError(`The 'campaignId' argument of Client must be 1-128 characters of A-Z, a-z, 0-9, '.', '_' and '-'. Got ${JSON.stringify(campaignId)}.`);
    }
    const {
      token = null, batchSize = 1000, retries = null, retryWindowMs = DEFAULT_RETRY_WINDOW_MS, timeoutMs = 60000, retryDelayMs = 500, fetch,
      memoStorage, locks, budget = null, source, pin = null, issuer = null, ohttp = null, relayEnvelope = null,
    } = checkOptionNames(options);
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new TypeError(`The 'batchSize' option of Client must be an int >= 1. Got ${batchSize}.`);
    if (retries !== null && (!Number.isInteger(retries) || retries < 0)) throw new TypeError(`The 'retries' option of Client must be null or an int >= 0. Got ${retries}.`);
    if (typeof retryWindowMs !== 'number' || !Number.isFinite(retryWindowMs) || retryWindowMs < 0) {
      throw new TypeError(`The 'retryWindowMs' option of Client must be a number of milliseconds >= 0. Got ${retryWindowMs}.`);
    }
    if (typeof retryDelayMs !== 'number' || !Number.isFinite(retryDelayMs) || retryDelayMs < 0) { // as Java
      // (-5 retried a 503 with no pause, 8,238 requests in 10 s, for ever)
      throw new TypeError(`The 'retryDelayMs' option of Client must be a number of milliseconds >= 0. Got ${retryDelayMs}.`);
    }
    if (timeoutMs !== null && (typeof timeoutMs !== 'number' || !Number.isFinite(timeoutMs) || timeoutMs <= 0)) {
      throw new TypeError(`The 'timeoutMs' option of Client must be null or a number of milliseconds > 0. Got ${timeoutMs}.`);
    }
    this.timeoutMs = timeoutMs;
    this.serverUrl = serverUrl.replace(/\/+$/, '');
    this.campaignId = campaignId;
    this.token = token;
    this.batchSize = batchSize;
    this.retries = retries;
    this.retryWindowMs = retryWindowMs;
    this.retryDelayMs = retryDelayMs;
    this._fetch = fetch ?? globalThis.fetch.bind(globalThis);
    this._ohttp = checkOhttpOption(ohttp);
    if (![null, 'dpdist', 'ohttp'].includes(relayEnvelope)) { // deprecated, no effect: checked, as before
      throw new InvalidParameterError(`The 'relayEnvelope' option of Client must be null, 'dpdist' or 'ohttp'. Got ${JSON.stringify(relayEnvelope)}.`);
    }
    this.relayEnvelope = relayEnvelope; // deprecated, read by no one
    // keys given out of band: the config too goes through the relay; the batches' fetch is made once the config is read
    this._configFetch = this._ohttp?.keys ? obliviousFetch(this._ohttp.relay, givenKeyConfig(this._ohttp.keys), this._fetch) : null;
    this._batchFetch = null;
    this._source = source ?? secureSource();
    this._memoStorage = checkMemoStorage(memoStorage);
    this._budget = checkBudgetOption(budget, this._memoStorage);
    this._locks = locks === undefined ? (globalThis.navigator?.locks ?? null) : locks;
    if (this._locks !== null && typeof this._locks.request !== 'function') {
      throw new TypeError("The 'locks' option of Client must have a request(name, callback) method (navigator.locks) or be null.");
    }
    this.pin = checkPin(pin);
    this.issuer = issuer; // checked by the setter
    this._wallet = new TokenWallet(this._memoStorage);
    this._issuerInfo = null; // the campaign's issuer, checked (identity.js checkedIssuer), when it has one
    this._relayConfig = null; // a relayed campaign's Oblivious HTTP key configuration (relay.js relayKeyConfig)
    this._issuerKeyChecked = false; // the issuer's live token key was compared with the campaign's
    this._ledger = null; // the device's privacy Ledger, when it has storage
    this._bodyRows = 1; // reports per request body, from the config answer (campaign(), bound.js)
    this._campaign = null;
    this._pending = []; // reports (never values) waiting for the next batch
    this._unsent = []; // batches not yet acknowledged: {batch, batchId}, always sent under that id
  }

  /** The ``issuer`` option: null or ``{credential, url}`` (``url`` required with a credential). */
  get issuer() {
    return this._issuer;
  }

  set issuer(issuer) {
    this._issuer = checkIssuerOption(issuer);
  }

  /** The random source privatize draws from (crypto.getRandomValues unless a test injected one). */
  get source() {
    return this._source;
  }

  _url(path) {
    return `${this.serverUrl}/api/campaigns/${encodeURIComponent(this.campaignId)}${path}`;
  }

  /**
   * The campaign's public description ``{campaign, state, config, ...}`` (fetched once).  A relayed campaign's is its
   * identity's: ``{campaign, state, config, relay: {...relay, pin, issuer}}``, with config, relay and issuer from the
   * identity document whose SHA-256 is the pin (``_trusted``).
   */
  async campaign() {
    if (this._campaign === null) {
      const response = await this._request('GET', '/config', { via: this._configFetch, limit: MAX_ANSWER_BYTES });
      const served = await response.json();
      if (this._ohttp !== null) { // before anything else is fetched, drawn or sent
        const config = campaignKeyConfig(this.campaignId, served, this._ohttp.keys);
        this._batchFetch = obliviousFetch(this._ohttp.relay, config, this._fetch);
      }
      const { document, published } = await this._trusted(served);
      // a relayed campaign's key configuration, before anything is drawn (no_ohttp_key for one made before it had one)
      this._relayConfig = document.relay ? relayKeyConfig(document.relay, this.campaignId) : null;
      // the published client view, checked against this client's derivation (a server without one: the config)
      // refuses unsupported protocols here, and a config it cannot build as the server's answer (bound.js)
      const protocol = protocolOfAnswer(document.client_view ?? document.config, this.campaignId);
      // the reports one body holds, from the answer's max_body_bytes and max_batch_reports: a config whose statistic
      // or one report is too large, or a bad bound, is refused before anything is drawn, sent or charged
      // (bound.js)
      this._bodyRows = rowsPerBody(protocol, served, this.campaignId, Number.MAX_SAFE_INTEGER);
      this._protocol = protocol;
      const relay = document.relay;
      this._issuerInfo = relay?.issuer ? await checkedIssuer(relay.issuer, relay.pin, this.campaignId, published) : null;
      this._campaign = document;
      try {
        // under the ledger's lock too: loading may save (a memo of an earlier client joins the ledger)
        this._ledger = await this._withLedgerLock(() => this._loadLedger(this._protocol));
      } catch (error) {
        this._campaign = null;
        throw error;
      }
    }
    return this._campaign;
  }

  /** The campaign's protocol (see ``fromConfig``). */
  async protocol() {
    await this.campaign();
    return this._protocol;
  }

  /**
   * The campaign document ``served`` as the device takes it, and the TokenChallenge the
   * server publishes (``published``, base64url, null if none).  A relayed campaign (its config has ``relay``, or a pin
   * was given): the identity document's bytes are fetched from the same server and hashed, refused (``pin_mismatch``)
   * unless the hash is the given pin and the config's ``relay.pin``; config, relay and issuer are the identity's only.
   * Without a pin, a server the identity names as the relay is refused (``pin_required``); a device given an issuer
   * refuses an identity that names no issuer or another one (``issuer_mismatch``).  Any other campaign: as served.
   */
  async _trusted(served) {
    if (this.pin === null && !served?.relay) return { document: served, published: null };
    const response = await this._request('GET', IDENTITY_PATH, { limit: MAX_ANSWER_BYTES });
    const identity = await identityOf(new Uint8Array(await response.arrayBuffer()), this.campaignId, {
      pin: this.pin, configPin: served?.relay?.pin ?? null,
    });
    if (this.pin === null) checkNotTheRelay(identity.relay, this._serverOrigin(), this.campaignId);
    checkExpectedIssuer(identity.issuer, this.issuer?.url, this.campaignId);
    // only what the pin covers, and the campaign's state (public, and only ever a reason to refuse)
    const document = {
      campaign: identity.campaign, state: served?.state, config: identity.config,
      relay: { ...identity.relay, pin: identity.pin, issuer: identity.issuer },
    };
    return { document, published: served?.relay?.issuer?.challenge ?? null };
  }

  /** A relayed campaign, loaded: refuse it (``issuer_mismatch``) if this device was given an issuer it does not name. */
  _checkExpectedIssuer() {
    const relay = this._campaign?.relay;
    if (relay) checkExpectedIssuer(relay.issuer, this.issuer?.url, this.campaignId);
  }

  /** The origin of the server this client was given (the page's, for ''). */
  _serverOrigin() {
    return originOf(this.serverUrl || globalThis.location?.origin, "The 'serverUrl' argument of Client");
  }

  /**
   * Hold tokens of the campaign's issuer for ``count`` reports (resolves to how many the device holds), before they
   * are drawn: a relayed campaign with an issuer takes one token per report, so that
   * ``submit``, ``submitMany`` and ``add`` call this first and a refusal (no credential, the issuer's) never follows a
   * draw.  A request whose answer was lost is sent again, the same bytes: the issuer answers it from its store.
   * Tokens are kept (``memoStorage``, key ``dpdist-tokens``) until a report spends them, also those obtained before the
   * issuer refuses a later one (a credential exhausted): the refusal says how many.  Other campaigns: 0.
   */
  async prepareTokens(count = 1) {
    if (!Number.isInteger(count) || count < 0) throw new TypeError(`The 'count' argument of prepareTokens must be an int >= 0. Got ${count}.`);
    await this.campaign();
    this._checkExpectedIssuer(); // the option may have been set after campaign()
    const info = this._issuerInfo;
    if (info === null) return 0;
    const { base64UrlEncode, createTokenRequest, finalizeToken } = await privacyPass();
    for (let obtained = 0; ; obtained++) {
      const { spare, pending } = await this._withLedgerLock(() => this._wallet.view(info.scope));
      if (spare.length >= count) return spare.length;
      const credential = this.issuer?.credential;
      if (typeof credential !== 'string' || credential === '') {
        throw new ServiceError(
          `Campaign '${this.campaignId}' takes each report with a token of its issuer (${info.origin}): give this device's ` +
            'credential from that issuer (the issuer option, {credential, url}). Nothing was drawn or sent.',
          { code: 'credential_required' },
        );
      }
      await this._checkIssuerKey(info);
      let entry = pending[0];
      if (entry === undefined) { // the token's nonce commits to the key its report will be sealed with (relay.js)
        const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
        entry = { ...await createTokenRequest(info.tokenKey, info.challenge, await bindingNonce(info.challenge, seed)), seed: base64UrlEncode(seed) };
        await this._withLedgerLock(() => this._wallet.addPending(info.scope, entry));
      }
      const response = await this._requestToken(info, entry.request, credential).catch((error) => {
        throw obtained > 0 && error instanceof ServiceError ? tokensKept(error, obtained, spare.length, count, this.campaignId) : error;
      });
      let token;
      try {
        token = await finalizeToken(info.tokenKey, entry, response);
      } catch (error) {
        // the issuer keeps its answer to this request: asking again would give the same bad one
        await this._withLedgerLock(() => this._wallet.drop(info.scope, entry.request));
        throw error;
      }
      await this._withLedgerLock(() => this._wallet.finish(info.scope, entry.request, base64UrlEncode(token)));
    }
  }

  /**
   * ``prepareTokens`` for ``reports`` new reports and every report drawn but not yet sent without a token bound to it
   * (queued by ``add``, or in a batch not yet sent): the tokens they will take when sent.  Nothing for other campaigns.
   */
  async _prepareFor(reports) {
    await this.campaign();
    this._checkExpectedIssuer();
    const info = this._issuerInfo;
    if (info === null) return;
    const { bound } = await this._withLedgerLock(() => this._wallet.view(info.scope));
    let owed = this._pending.length;
    for (const { batch, batchId } of this._unsent) {
      for (let index = 0; index < batch.length; index++) if (!Object.hasOwn(bound, `${batchId}.${index}`)) owed += 1;
    }
    await this.prepareTokens(owed + reports);
  }

  /** The issuer's token key (``GET /issuer/v1/keys/{key}``) must be the campaign's, else ``issuer_key_mismatch`` (once). */
  async _checkIssuerKey(info) {
    if (this._issuerKeyChecked) return;
    const response = await this._request('GET', '', { url: `${info.url}/issuer/v1/keys/${encodeURIComponent(info.key)}` });
    const published = await response.json();
    const { base64UrlDecode } = await privacyPass();
    let key = null;
    try {
      key = base64UrlDecode(published?.token_key, 'token_key');
    } catch {
      // below
    }
    if (key === null || key.length !== info.tokenKey.length || !key.every((byte, index) => byte === info.tokenKey[index])) {
      throw new ServiceError(
        `The issuer ${info.origin} signs tokens of key '${info.key}' with another key than the one campaign '${this.campaignId}' ` +
          'names: its tokens would not be admitted (or the issuer could tell devices apart by key). Nothing was drawn or sent.',
        { code: 'issuer_key_mismatch' },
      );
    }
    if (info.tokensEach !== null && published?.tokens_each !== info.tokensEach) {
      throw new ServiceError(
        `Campaign '${this.campaignId}' states that a credential of the issuer's key '${info.key}' gives at most ${info.tokensEach} ` +
          `token(s); the issuer ${info.origin} publishes ${JSON.stringify(published?.tokens_each ?? null)}: the campaign's ` +
          'guarantee would count each colluding credential as fewer reports than it gives. Nothing was drawn or sent.',
        { code: 'tokens_each_mismatch' },
      );
    }
    this._issuerKeyChecked = true;
  }

  /** The issuer's TokenResponse to the TokenRequest ``request`` (base64url), retried with the same bytes. */
  async _requestToken(info, request, credential) {
    const { TOKEN_REQUEST_TYPE, TOKEN_RESPONSE_TYPE, base64UrlDecode } = await privacyPass();
    const response = await this._request('POST', '', {
      url: `${info.url}/issuer/v1/keys/${encodeURIComponent(info.key)}/token-request`,
      body: base64UrlDecode(request),
      headers: { 'Content-Type': TOKEN_REQUEST_TYPE, Accept: TOKEN_RESPONSE_TYPE },
      authorization: `Bearer ${credential}`,
    });
    const type = response.headers?.get?.('Content-Type') ?? '';
    if (type.split(';')[0].trim().toLowerCase() !== TOKEN_RESPONSE_TYPE) {
      throw new ServiceError(`The issuer answered a token request with ${JSON.stringify(type)}, not ${TOKEN_RESPONSE_TYPE}.`, { code: 'bad_token_response' });
    }
    return new Uint8Array(await response.arrayBuffer());
  }

  /** The collector this client reports to, as the device's ledger names it (the server's origin). */
  get collector() {
    return this.serverUrl || globalThis.location?.origin || 'local';
  }

  /** The device's privacy ledger (null without storage), loaded with the campaign. */
  async ledger() {
    await this.campaign();
    return this._ledger;
  }

  /** The device's memo of this longitudinal campaign (l-grr, l-osue, loloha, dbitflippm), null before its first report. */
  async memo() {
    const ledger = await this.ledger();
    return ledger === null ? null : ledger.memoOf(this._protocol, this.collector);
  }

  /**
   * The device's Ledger, read from ``memoStorage`` (null without one), saved there (``keepLedger``) each time it
   * changes.  ``beforeDraw``: right before a draw, when a storage holding no ledger yet is made to keep an empty one.
   */
  _loadLedger(protocol, { beforeDraw = false } = {}) {
    const storage = this._memoStorage;
    if (storage === null) {
      if (this._campaign !== null && answerOnce(this._campaign) !== null) {
        throw new InvalidParameterError(
          `Campaign '${this.campaignId}' runs in rounds: its epsilon per user holds only if a device answers one round, ` +
            'which the device keeps in its ledger. Pass the memoStorage option (an object with getItem/setItem, such as ' +
            'window.localStorage).',
        );
      }
      if (!isLongitudinal(protocol)) return null;
      throw new InvalidParameterError(
        `Campaign '${this.campaignId}' uses the longitudinal protocol '${protocol.name}': the device must keep its memo ` +
          'of permanent responses, or every report would spend a fresh epsilon. Pass the memoStorage option ' +
          '(an object with getItem/setItem, such as window.localStorage).',
      );
    }
    const save = (ledger) => keepLedger(storage, JSON.stringify(ledger.toJSON()));
    const text = storage.getItem(LEDGER_KEY);
    if (isThenable(text)) throw asyncStorage('getItem');
    const settings = this._budget === null ? {} : { budget: this._budget }; // the owner's, replacing the stored one
    let ledger;
    if (text === null || text === undefined) {
      ledger = new Ledger(settings, { onChange: save });
      // no ledger yet: the storage is seen to keep one before the first draw (a dropped write, a getItem without its
      // return, would otherwise be refused only after the draw, at its save)
      if (beforeDraw) save(ledger);
    } else {
      let state;
      try {
        state = JSON.parse(text);
      } catch {
        // (not JSON.parse's message: V8 quotes the text, a memo keyed by the device's past values)
        throw new IncompatibleStateError(`The ledger under '${LEDGER_KEY}' is not valid JSON; it was not overwritten.`);
      }
      ledger = Ledger.fromJSON(state, { onChange: save, settings });
    }
    // a memo kept by an earlier client under its config's own key joins the ledger (its past reports unknown)
    const old = isLongitudinal(protocol) ? storage.getItem(memoKey(protocol)) : null;
    if (old !== null && old !== undefined && ledger.memoOf(protocol, this.collector) === null) {
      let memo;
      try {
        memo = JSON.parse(old);
      } catch {
        // (not JSON.parse's message: V8 quotes the text, a memo keyed by the device's past values)
        throw new IncompatibleStateError(`The memo under '${memoKey(protocol)}' is not valid JSON; it was not overwritten.`);
      }
      ledger.adopt(protocol, memo, this.collector);
    }
    return ledger;
  }

  /**
   * Reports of ``values`` of this device as one ReportBatch (after ``campaign()``), not sent: charged to its
   * ledger (through its memo for a longitudinal campaign; PrivacyBudgetError past the budget), else fresh draws.
   * Synchronous, so it cannot wait for the ledger's Web Lock: a page whose ledger other tabs share reports
   * through ``submit``, ``submitMany`` or ``add``, which hold it.
   */
  randomize(values) {
    if (this._campaign === null) throw new InvalidParameterError('Client.randomize needs the campaign: await client.campaign() first.');
    this._checkExpectedIssuer();
    return this._privatize(this._protocol, values);
  }

  /** One report of each value: charged to the device's ledger (through its memo if longitudinal), else a fresh draw. */
  _privatize(protocol, values) {
    if (this._ledger === null) return protocol.privatize(values, this._source);
    const once = answerOnce(this._campaign);
    try {
      if (once !== null) checkRoundOpen(this._campaign);
      // read again from storage right before drawing: another tab (another Client) may have drawn or charged since
      this._ledger = this._loadLedger(protocol, { beforeDraw: true });
      if (once !== null) checkOwnRound(this._campaign, this._ledger, this.collector, once, this._source);
    } catch (error) {
      // the round open now is not this device's: the next submit fetches the campaign again (its round may be open
      // then), not this document, which would refuse it forever
      if (error instanceof ServiceError && ['no_open_round', 'wait_for_round'].includes(error.code)) this._campaign = null;
      throw error;
    }
    return this._ledger.report(protocol, values, { collector: this.collector, source: this._source, once });
  }

  /**
   * ``_privatize`` holding the ledger's Web Lock (``locks``), when the device keeps a ledger: another tab's
   * Client reads, draws and saves under the same lock, so each sees what the other spent and answered.
   */
  async _privatizeLocked(protocol, values) {
    if (this._ledger === null) return this._privatize(protocol, values);
    return this._withLedgerLock(() => this._privatize(protocol, values));
  }

  /** ``action()`` holding the Web Lock ``dpdist-ledger`` (at once without ``locks`` or storage). */
  async _withLedgerLock(action) {
    if (this._locks === null || this._memoStorage === null) return action();
    return this._locks.request(LEDGER_KEY, action);
  }

  /** Randomize one user's value and submit its report now; resolves to the server's ack. */
  async submit(value) {
    const protocol = await this.protocol();
    await this._prepareFor(1); // a relayed campaign's token first: no token, no draw
    return this.send(await this._privatizeLocked(protocol, [value]));
  }

  /**
   * Randomize many values and submit them in batches of ``batchSize`` (fewer when one request body, the config
   * answer's ``max_body_bytes`` capped at 16 MiB, holds fewer reports, or when the answer's ``max_batch_reports``, the
   * most reports the service takes in one batch, is smaller); resolves to the acks.
   * The values are taken in a uniformly random order (CSPRNG), so neither a report's batch nor
   * its place in it depends on where its value was in ``values``.
   * If a batch cannot be sent, the error is thrown and it and the later batches stay queued
   * (as reports) for ``flush()``, under their batch ids.
   */
  async submitMany(values) {
    const protocol = await this.protocol();
    const order = permutation(values.length, this._source);
    const step = Math.min(this.batchSize, this._bodyRows); // fewer when one body or batch holds fewer
    for (let start = 0; start < values.length; start += step) {
      await this._prepareFor(Math.min(step, values.length - start)); // the batch's tokens before its draws
      const batch = await this._privatizeLocked(protocol, Array.from(order.subarray(start, start + step), (index) => values[index]));
      this._unsent.push({ batch, batchId: newFileId() });
    }
    return this.flush();
  }

  /** Randomize a value now and queue its report; a full queue is flushed (resolves to its acks, or []). */
  async add(value) {
    const protocol = await this.protocol();
    await this._prepareFor(1); // this report's token before its draw
    const report = await this._privatizeLocked(protocol, [value]);
    this._pending.push(report); // after the await: a flush meanwhile replaced this._pending
    return this._pending.length >= Math.min(this.batchSize, this._bodyRows) ? this.flush() : [];
  }

  /**
   * Send the queued reports as one batch, in a uniformly random order (not the order of ``add``);
   * resolves to the acks of the batches sent (first any batch an earlier flush failed to send,
   * under its original batch id and with the same bytes, so that a batch the server received but
   * could not acknowledge is still counted once).
   */
  async flush() {
    if (this._pending.length > 0) {
      const parts = this._pending;
      this._pending = [];
      const bytes = new Uint8Array(parts.reduce((total, part) => total + part.bytes.length, 0));
      let offset = 0;
      for (const part of parts) {
        bytes.set(part.bytes, offset);
        offset += part.bytes.length;
      }
      const first = parts[0];
      const batch = new ReportBatch(first.config, first.floatKeys, first.descr, [parts.length, ...first.shape.slice(1)], bytes);
      this._unsent.push({ batch: shuffleBatch(batch, this._source), batchId: newFileId() });
    }
    const acks = [];
    while (this._unsent.length > 0) {
      const { batch, batchId } = this._unsent[0];
      acks.push(await this.send(batch, { batchId })); // on failure it stays first in line
      this._unsent.shift();
    }
    return acks;
  }

  /** Reports randomized but not yet acknowledged by the server (queued or in failed batches). */
  get unsentReports() {
    return this._pending.length + this._unsent.reduce((total, { batch }) => total + batch.length, 0);
  }

  /**
   * Submit a batch of reports (a ReportBatch) under a fresh batch id, retrying the same bytes
   * and id on network errors, 408/425/429, 5xx and 409 campaign_not_open or campaign_changed; resolves to the server's ack.
   * The rows are sent in the order given (a resend must carry the same bytes): a batch of
   * several users' reports should come from ``privatize`` of values in a random order, or
   * through ``submitMany`` / ``add``, which shuffle.
   */
  async send(batch, { batchId = newFileId() } = {}) {
    const { relay, submit_to: round } = await this.campaign();
    if (relay) return this._sendThroughRelay(relay, batch, batchId);
    const body = encodeRecord(batch, { fileId: batchId });
    // a campaign that runs in rounds (adaptive quantiles) counts the current round's reports in that round's campaign
    const path = round ? `/api/campaigns/${encodeURIComponent(round)}/batches/${batchId}` : `/batches/${batchId}`;
    try {
      // only the service's acknowledgement of this batch of this campaign (the round's) counts it (acks.js)
      return await this._request('PUT', path, {
        body,
        headers: { 'Content-Type': 'application/octet-stream' },
        absolute: Boolean(round),
        via: this._batchFetch,
        acknowledges: batchAck(round ? String(round) : this.campaignId, batchId, batch.length),
      });
    } catch (error) {
      if (error instanceof ServiceError) Object.assign(error, { batch, batchId }); // resend with send(batch, {batchId})
      throw error;
    }
  }

  /**
   * A campaign collected through a relay (its config has ``relay``): each report an RFC 9458 request to the identity's
   * key configuration, sent alone to the relay the identity names (``relay.url``), under ``<batchId>.<row>``, without a batch id inside
   * (nothing per device reaches the collector), with the identity's pin (``Dpdist-Pin``: the relay refuses a report
   * made under another identity of the campaign than the one it holds) and, when the campaign has an issuer, its own
   * Privacy Pass token: the one bound to that report id, the report encapsulated once with the token's key (its nonce
   * commits to it: relay.js) and kept, so that a resend carries the same token and bytes.  The tokens of a batch stay bound
   * until the relay has acknowledged every report of it: a resend after a failure (the relay down, an answer lost) sends
   * the reports already acknowledged again with their own tokens (duplicates), never new ones.  Resolves to the relay's
   * acks.
   */
  async _sendThroughRelay(relay, batch, batchId) {
    const base = String(relay.url ?? '').replace(/\/+$/, '');
    originOf(base, `The relay URL of campaign '${this.campaignId}' (relay.url of its identity)`);
    this._checkExpectedIssuer(); // the option may have been set after campaign()
    const info = this._issuerInfo;
    const acks = [];
    try {
      for (let index = 0; index < batch.length; index++) {
        const reportId = `${batchId}.${index}`;
        const { sealed, authorization } = await this._sealedReport(batch, index, reportId);
        let ack;
        try {
          ack = await this._request('PUT', relayReportPath(this.campaignId, reportId), {
            url: `${base}${relayReportPath(this.campaignId, reportId)}`,
            body: sealed,
            headers: { 'Content-Type': REQUEST_CONTENT_TYPE, [PIN_HEADER]: relay.pin },
            authorization,
            acknowledges: relayAck(this.campaignId, reportId),
          });
        } catch (error) {
          throw await this._relayRefused(info, reportId, error);
        }
        acks.push(ack);
      }
    } catch (error) {
      if (error instanceof ServiceError) Object.assign(error, { batch, batchId }); // resend with send(batch, {batchId})
      throw error;
    }
    if (info !== null) { // every report of the batch acknowledged: their tokens are spent, and forgotten
      const ids = Array.from({ length: batch.length }, (_, index) => `${batchId}.${index}`);
      await this._withLedgerLock(() => this._wallet.release(info.scope, ...ids));
    }
    return { batch_id: batchId, relayed: acks.length, duplicates: acks.filter((ack) => ack.duplicate).length };
  }

  /** The secrets this client holds (its token, its issuer credential), masked in whatever an answer repeats. */
  _secrets() {
    return [this.token, this.issuer?.credential].filter((secret) => typeof secret === 'string' && secret !== '');
  }

  /**
   * The report ``index`` of ``batch`` as an RFC 9458 request for the relay, and its ``authorization``: encapsulated with
   * its token's key once and kept in the wallet before it is sent (a resend takes the kept bytes; a report an earlier
   * version sealed in dpdist's envelope is encapsulated again with its token's seed, kept until its batch is
   * acknowledged), else (a campaign without tokens) with a fresh key.
   */
  async _sealedReport(batch, index, reportId) {
    const rowBytes = batch.bytes.length / Math.max(batch.length, 1);
    const one = new ReportBatch(batch.config, batch.floatKeys, batch.descr, [1, ...batch.shape.slice(1)], batch.bytes.slice(index * rowBytes, (index + 1) * rowBytes));
    const seal = (seed) => encapsulateForRelay(this._relayConfig, this.campaignId, encodeRecord(one), 'application/octet-stream', seed);
    const info = this._issuerInfo;
    if (info === null) return { sealed: await seal(undefined), authorization: undefined };
    const { authorizationHeader, base64UrlDecode, base64UrlEncode } = await privacyPass();
    let bound = await this._withLedgerLock(() => this._wallet.bind(info.scope, reportId));
    if (bound === null) {
      await this.prepareTokens(1); // a batch drawn by randomize() and sent here: its token now
      bound = await this._withLedgerLock(() => this._wallet.bind(info.scope, reportId));
    }
    let sealed = bound.ohttp === undefined ? null : base64UrlDecode(bound.ohttp);
    if (sealed === null) { // encapsulated once with its token's key, kept before it leaves the device
      sealed = await seal(base64UrlDecode(bound.seed));
      await this._withLedgerLock(() => this._wallet.seal(info.scope, reportId, base64UrlEncode(sealed)));
    }
    return { sealed, authorization: authorizationHeader(base64UrlDecode(bound.token)) };
  }

  /**
   * The error to throw for the relay's refusal ``error`` of report ``reportId``: a token the relay saw spent on another
   * report is released (a resend takes another, and encapsulates again); one the relay does not admit (401, 403 ``token_not_bound``) was checked against the identity's key and challenge when it was
   * finalized and bound to the report's key when it was asked for: the relay checks otherwise (a relay older than the
   * identity's redemption context), and another token would be refused too, and spent: this one stays with its report.
   */
  async _relayRefused(info, reportId, error) {
    if (info === null || !(error instanceof ServiceError)) return error;
    if (error.code === 'token_spent') {
      await this._withLedgerLock(() => this._wallet.release(info.scope, reportId));
    }
    if (error.status !== 401 && error.code !== 'token_not_bound') return error;
    const kept = new ServiceError(
      `${error.message} This report's token verifies under the issuer key and the token challenge of the ` +
        "campaign's identity, bound to the report: the relay checks tokens otherwise (a relay older than the identity's " +
        "redemption context, or one that does not verify as the campaign states). The token is kept for the report's resend.",
      { status: error.status, code: error.code },
    );
    kept.cause = error;
    return kept;
  }

  /**
   * ``method`` on ``path`` of this campaign (``absolute``: of the server; ``url``: that URL, of another server, which
   * gets ``authorization`` and never this client's submit token), retried as ``send`` describes; ``via``: the fetch to
   * send with (an Oblivious HTTP relay's, ohttp.js; default: this client's own).  ``acknowledges``: what a successful
   * answer must be (acks.js): one that is not (a proxy's or a captive portal's 200, a body cut short) is retried as a
   * failure, with the same bytes; with it, resolves to the acknowledgement (parsed), else to the response.  ``limit``:
   * the most bytes of a successful answer read (a refusal's: ACK_ANSWER_BYTES); JSON that may hold more values than
   * ``mostValuesWithin(limit)`` is not parsed: no acknowledgement, no refusal's code, else ``unexpected_answer``.
   */
  async _request(method, path, { body, headers = {}, absolute = false, url = null, authorization = undefined, via = null, acknowledges = null,
    limit = ACK_ANSWER_BYTES }) {
    const allHeaders = { Accept: 'application/json', ...headers };
    // the submit token goes with a batch only: a campaign's config and identity are public, read without it
    if (url === null && this.token && method !== 'GET') allHeaders.Authorization = `Bearer ${this.token}`;
    if (url !== null && authorization !== undefined) allHeaders.Authorization = authorization;
    const target = url ?? (absolute ? `${this.serverUrl}${path}` : this._url(path));
    // whatever the answer says is shown escaped and cut, the secrets this client holds masked (shown.js)
    const request = { method, where: url ?? path, target, secrets: [...secretsOf(allHeaders.Authorization), ...this._secrets()] };
    let lastProblem = null;
    let unacknowledged = false; // the last answer was a success that is no acknowledgement of what was sent
    const retrying = new Retries(this.retryWindowMs, this.retryDelayMs, this.retries);
    for (;;) {
      let response = null;
      let bytes = null;
      try {
        // a deadline per attempt, the body's reading included: undici's own timeouts are between chunks;
        // no redirect is followed (it would take the token elsewhere, or read another server's answer as this one's)
        const signal = this.timeoutMs === null ? undefined : AbortSignal.timeout(this.timeoutMs);
        response = await (via ?? this._fetch)(target, { method, headers: allHeaders, body, signal, redirect: 'manual' });
        checkNotRedirected(request, response);
        bytes = await readBounded(response, response.ok ? limit : ACK_ANSWER_BYTES); // streamed, within the same deadline
      } catch (error) {
        if (error instanceof ServiceError) throw error;
        if (error instanceof AnswerTooLarge) throw tooLarge(request, response, error.limit);
        lastProblem = response === null
          ? `cannot reach the server (${shown(error.message, request.secrets)})`
          : `${method} ${shown(request.where, request.secrets)}: HTTP ${response.status} with a body cut short (${shown(error.message, request.secrets)})`;
      }
      let asked = null; // seconds a 429/503 answer's Retry-After asked for
      unacknowledged = false;
      if (bytes !== null) {
        asked = retryAfterSeconds(response.headers?.get?.('Retry-After') ?? null);
        if (response.ok && acknowledges === null) return readAnswer(response, bytes, limit, () => `${method} ${shown(request.where, request.secrets)}`);
        if (response.ok) {
          const heavy = tooManyValues(bytes, limit); // not parsed: no acknowledgement
          const [ack, problem] = heavy === null ? acknowledges(new TextDecoder().decode(bytes), response)
            : [null, `no acknowledgement: HTTP ${response.status} with ${heavy} (not parsed)`];
          if (problem === null) return ack;
          lastProblem = shown(`${method} ${request.where}: ${problem}`, request.secrets, null);
          unacknowledged = true;
        } else {
          const refusal = refusalOf(request, response, bytes);
          const retryable = RETRYABLE_STATUS.has(response.status) || (response.status === 409 && RETRYABLE_CONFLICTS.has(refusal.code));
          if (!retryable) throw refusal;
          lastProblem = refusal.message;
        }
      }
      const pause = retrying.pause(asked);
      if (pause === null) break;
      await sleep(pause);
    }
    const origin = URL.canParse?.(target) ? new URL(target).origin : target;
    const hint = unacknowledged ? ` (is ${origin} the dpdist service, not a proxy, a captive portal or another server answering in its place? `
      + 'Nothing is taken as counted)' : '';
    throw new ServiceError(`${lastProblem}; gave up after ${retrying.failures} attempts over ${(retrying.spentMs() / 1000).toFixed(1)} s `
      + `(retryWindowMs ${this.retryWindowMs})${hint}. Nothing was lost: send the same batch again later (send(error.batch, `
      + '{batchId: error.batchId}): the same id and bytes), and a batch already counted is not counted twice',
    unacknowledged ? { status: 200, code: 'wrong_ack' } : {});
  }
}

/**
 * A redirect (3xx, or a browser's opaque one) is refused at once, ServiceError ``redirected`` naming the status and where
 * it pointed (shown): not followed, whatever its body says, as the Python and Java clients.
 */
function checkNotRedirected({ method, where, secrets }, response) {
  const opaque = response.type === 'opaqueredirect'; // a browser's redirect: 'manual' hides the status and Location
  if (!opaque && !(response.status >= 300 && response.status < 400)) return;
  const location = opaque ? null : (response.headers?.get?.('Location') ?? null);
  const to = opaque ? 'a redirect (the browser hides where it pointed)'
    : location === null ? 'a redirect without a Location' : `a redirect to "${shown(location, secrets)}"`;
  throw new ServiceError(`${method} ${shown(where, secrets)}: HTTP ${opaque ? '3xx' : response.status}: ${to}, not followed (this client follows ` +
    'no redirect, which would take its token elsewhere): give the URL it names instead', { status: opaque ? null : response.status, code: 'redirected' });
}

/** The ServiceError of an answer whose body goes past ``limit`` bytes once decoded (not retried: it would again). */
function tooLarge({ method, where, secrets }, response, limit) {
  const kind = shown((response?.headers?.get?.('Content-Type') ?? '').split(';')[0].trim(), secrets, 60) || 'no content type';
  return new ServiceError(`The answer to ${method} ${shown(where, secrets)} is larger than this client reads (${response ? `HTTP ${response.status}` : "the Oblivious HTTP relay's answer"}, ${kind}, ` +
    `more than ${limit >> 20} MiB once decoded): a dpdist service's answers are far smaller. Is that URL the dpdist service, not ` +
    'another server answering in its place?', { status: response?.status ?? null, code: 'answer_too_large' });
}

/**
 * The ServiceError of a refusal (4xx/5xx): a dpdist refusal's code and detail (escaped, masked, cut to 2000 characters),
 * or the status, host and size of any other answer (``refusalShown``, as Python's and Java's).
 */
function refusalOf({ method, where, secrets, target }, response, bytes) {
  let host = 'the server';
  try {
    host = new URL(target, globalThis.location?.href).host;
  } catch {
    // a target no URL parser reads
  }
  const [code, said] = refusalShown(response.status, bytes, host, secrets);
  return new ServiceError(`${method} ${shown(where, secrets)}: ${code ? `HTTP ${response.status} ` : ''}${said}`, { status: response.status, code });
}

/**
 * Refuse, at once, a server URL fetch could not send or that would send elsewhere, naming the argument and showing the
 * value masked: one that is not ``http://`` or ``https://`` with a host (``htp:/oops`` was taken, and its requests
 * retried in silence for the whole retry window, where Python and Java refuse it), nor ``""`` or a path on the page's
 * origin (in a page); with ``user:password@`` (fetch refuses a URL with credentials; this client authenticates
 * with its token), or with a query or fragment (the API's paths are joined to it: every request would go to ``/?...``).
 */
function checkServerUrl(serverUrl) {
  let url = null;
  const page = globalThis.location?.href;
  try {
    if (serverUrl === '' || (page !== undefined && serverUrl.startsWith('/') && !serverUrl.startsWith('//'))) url = new URL(serverUrl, page ?? 'http://localhost/');
    else if (/^https?:\/\/[^/?#]/iu.test(serverUrl)) url = new URL(serverUrl); // absolute: WHATWG would take http:/x as http://x
  } catch {
    // refused below (a host or port no URL parser reads)
  }
  const problem = url === null || !['http:', 'https:'].includes(url.protocol) || url.hostname === ''
    ? 'an http:// or https:// URL with a host (or "" for the page\'s origin, or a path on it in a page)'
    : url.username || url.password || /^[^?#]*\/\/[^/?#]*@/u.test(serverUrl) ? 'without user:password@ (this client authenticates with its token, never a URL\'s credentials, which fetch refuses)'
      : /[?#]/u.test(serverUrl) ? 'without a query or fragment (?...#...: the API\'s paths are joined to it)' : null;
  if (problem !== null) throw new InvalidParameterError(`The 'serverUrl' argument of Client must be the service's URL, ${problem}. Got "${shownUrl(serverUrl)}".`);
}

/** Whether ``value`` is a Promise (or any thenable): what an asynchronous storage's getItem or setItem returns. */
function isThenable(value) {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof value.then === 'function';
}

/** The refusal of an asynchronous ``memoStorage``, whose ``method`` returned a Promise. */
function asyncStorage(method) {
  return new InvalidParameterError(
    `The 'memoStorage' option of Client must be a synchronous storage: its ${method}('${LEDGER_KEY}') returned a Promise ` +
      "(an asynchronous storage, such as localForage or React Native's AsyncStorage). The device's ledger is read, " +
      'charged and saved in one step before each draw, which an asynchronous storage cannot do: give a synchronous one ' +
      '(window.localStorage, or a file-backed one in Node). Nothing was drawn or sent.',
  );
}

/**
 * Save the ledger's JSON ``text`` under LEDGER_KEY and read it back: a storage whose getItem does not return the
 * string written (a setItem that drops writes, a getItem without its ``return``, an asynchronous storage) keeps no
 * ledger, so it is refused (InvalidParameterError naming memoStorage) before the reports this save was for are sent
 * (such a storage sent 15 of 15 reports, and l-grr drew a fresh permanent response each day).
 */
function keepLedger(storage, text) {
  // a setItem returning a Promise writes later (write-behind): a process that ends before it did kept no charge
  // (9 reports against a budget of 3 over three runs), though the read-back sees its memory
  if (isThenable(storage.setItem(LEDGER_KEY, text))) throw asyncStorage('setItem');
  const back = storage.getItem(LEDGER_KEY);
  if (back === text) return;
  if (isThenable(back)) throw asyncStorage('getItem');
  const got = back === null || back === undefined ? String(back)
    : typeof back === 'string' ? `another string (${back.length} characters)` : `a ${typeof back}, not the string written`;
  throw new InvalidParameterError(
    `The 'memoStorage' option of Client did not return what was written: after setItem('${LEDGER_KEY}', ...) wrote the ` +
      `device's ledger (${text.length} characters), getItem('${LEDGER_KEY}') returned ${got}. A storage that does not ` +
      'keep what it is given keeps no ledger: nothing would be charged or refused by budget, and a longitudinal ' +
      "campaign's permanent responses would be drawn again. Its getItem must return the string setItem was given (a " +
      'getItem written as an arrow function with braces needs its return). Nothing was sent.',
  );
}

/** The options the Client constructor knows (its JSDoc, index.d.ts). */
export const CLIENT_OPTIONS = Object.freeze([
  'token', 'batchSize', 'retries', 'retryWindowMs', 'timeoutMs', 'retryDelayMs', 'fetch', 'memoStorage', 'locks', 'budget',
  'source', 'pin', 'issuer', 'ohttp', 'relayEnvelope',
]);

/**
 * The ``options`` argument of Client, checked: an object whose every own key is an option the Client knows.  A name it
 * does not know (a typo, ``budget`` before it was an option) was ignored silently, the device then
 * running with the default it meant to change.
 */
function checkOptionNames(options) {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new InvalidParameterError(`The 'options' argument of Client must be an object of options (${CLIENT_OPTIONS.join(', ')}). ` +
      `Got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : `a ${typeof options}`}.`);
  }
  const unknown = Object.keys(options).filter((name) => !CLIENT_OPTIONS.includes(name));
  if (unknown.length > 0) {
    const named = unknown.slice(0, 5).map((name) => JSON.stringify(name.length > 60 ? `${name.slice(0, 60)}...` : name)).join(', ');
    throw new InvalidParameterError(`Client has no option ${named}${unknown.length > 5 ? ` (and ${unknown.length - 5} more)` : ''}: ` +
      `its options are ${CLIENT_OPTIONS.join(', ')}. Nothing was fetched, drawn or sent.`);
  }
  return options;
}

/**
 * The ``budget`` option of Client, checked: null (the stored ledger's budget; a new ledger's DEFAULT_BUDGET) or a
 * finite epsilon > 0, the owner's total, which needs a ledger (refused with ``memoStorage: null``, which keeps none).
 */
function checkBudgetOption(budget, storage) {
  if (budget === null || budget === undefined) return null;
  if (typeof budget !== 'number' || !Number.isFinite(budget) || !(budget > 0)) {
    throw new InvalidParameterError(`The 'budget' option of Client must be null or a finite epsilon > 0. Got ${typeof budget === 'number' ? budget : JSON.stringify(budget)?.slice(0, 80) ?? typeof budget}.`);
  }
  if (storage === null) {
    throw new InvalidParameterError("The 'budget' option of Client is the device's total epsilon, kept in its ledger: it needs a " +
      "memoStorage, and memoStorage: null keeps no ledger (nothing is charged, no budget refuses).");
  }
  return budget;
}

const MEMO_STORAGE_ALLOWED = 'an object with getItem and setItem functions, where the device keeps its privacy ledger (such as ' +
  'window.localStorage, or a file-backed one in Node), or null for no ledger at all (a simulation of many users, a test: ' +
  'nothing is charged, no budget refuses, no memo is kept)';

/**
 * The ``memoStorage`` option of Client, checked: an object with getItem/setItem functions, or null (explicitly no
 * ledger).  Not given, it is globalThis.localStorage (a browser's); where there is none (Node) it is refused, as the
 * Java client's Options without storage(...) or withoutLedger(): a device app that forgot the option would report with
 * no ledger at all, charging nothing and refusing nothing by budget.  A storage without those functions is refused
 * too (it was taken for none), globalThis.localStorage included (Node 25 run without --localstorage-file has one).
 */
function checkMemoStorage(memoStorage) {
  if (memoStorage === null) return null;
  const given = memoStorage !== undefined;
  const storage = given ? memoStorage : globalThis.localStorage;
  const usable = (typeof storage === 'object' || typeof storage === 'function') && storage !== null &&
    typeof storage.getItem === 'function' && typeof storage.setItem === 'function';
  if (usable) return storage;
  if (!given && (storage === undefined || storage === null)) {
    throw new InvalidParameterError(
      `The 'memoStorage' option of Client is required where there is no globalThis.localStorage (Node): ${MEMO_STORAGE_ALLOWED}. ` +
        'Got no memoStorage option, and no globalThis.localStorage.',
    );
  }
  const found = typeof storage !== 'object' && typeof storage !== 'function' ? `a ${typeof storage}`
    : `an object without ${['getItem', 'setItem'].filter((name) => typeof storage[name] !== 'function').join(' and ')} function${
      typeof storage.getItem !== 'function' && typeof storage.setItem !== 'function' ? 's' : ''}`;
  throw new InvalidParameterError(
    `The 'memoStorage' option of Client must be ${MEMO_STORAGE_ALLOWED}. Got ${given ? found : `no memoStorage option, and as ` +
      `globalThis.localStorage ${found} (Node 25 run without --localstorage-file has such a localStorage)`}.`,
  );
}

/** The ``ohttp`` option of Client, checked: null or ``{relay, keys}`` (keys: application/ohttp-keys bytes that parse). */
function checkOhttpOption(ohttp) {
  if (ohttp === null || ohttp === undefined) return null;
  if (typeof ohttp !== 'object') throw new InvalidParameterError(`The 'ohttp' option of Client must be null or {relay, keys}. Got ${typeof ohttp}.`);
  const relay = checkRelayUrl(ohttp.relay);
  const keys = ohttp.keys ?? null;
  if (keys !== null) {
    try {
      decodeKeyList(keys);
    } catch (error) {
      throw new InvalidParameterError(`The 'ohttp.keys' option of Client must be the bytes of an application/ohttp-keys document (RFC 9458 section 3.2): ${error.message}`);
    }
  }
  return { relay, keys };
}
