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
//
// Its requests are connection.js's (retries, deadlines, acknowledgements), a relayed campaign's tokens and reports
// relay-route.js's, and its options are checked in client-options.js.

import { IncompatibleStateError, InvalidParameterError, ServiceError } from './errors.js';
import { ReportBatch } from './protocols/_base.js';
import { Ledger } from './ledger.js';
import { isLongitudinal, memoKey } from './protocols/_longitudinal.js';
import { secureSource } from './random.js';
import { permutation, shuffleBatch } from './shuffle.js';
import { encodeRecord, newFileId } from './wire.js';
import { protocolOfAnswer, rowsPerBody } from './bound.js';
import { relayKeyConfig } from './relay.js';
import {
  IDENTITY_PATH, checkExpectedIssuer, checkIssuerOption, checkNotTheRelay, checkPin, checkedIssuer, identityOf, originOf,
} from './identity.js';
import { batchAck } from './acks.js';
import { MAX_ANSWER_BYTES } from './answer.js';
import { campaignKeyConfig, givenKeyConfig, obliviousFetch } from './ohttp.js';
import { DEFAULT_RETRY_WINDOW_MS, checkServerUrl, clientRequest } from './connection.js';
import {
  LEDGER_KEY, asyncStorage, checkBudgetOption, checkMemoStorage, checkOhttpOption, checkOptionNames, isThenable, keepLedger,
} from './client-options.js';
import { RelayRoute } from './relay-route.js';

export { DEFAULT_RETRY_WINDOW_MS, MAX_BACKOFF_MS, MAX_RETRY_AFTER, Retries, retryAfterSeconds, retryDelayMs } from './connection.js';
export { CLIENT_OPTIONS, LEDGER_KEY } from './client-options.js';


export { ServiceError };

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
    this._route = null; // a relayed campaign's RelayRoute (relay-route.js): its key configuration, issuer and tokens
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
      const relayConfig = document.relay ? relayKeyConfig(document.relay, this.campaignId) : null;
      // the published client view, checked against this client's derivation (a server without one: the config)
      // refuses unsupported protocols here, and a config it cannot build as the server's answer (bound.js)
      const protocol = protocolOfAnswer(document.client_view ?? document.config, this.campaignId);
      // the reports one body holds, from the answer's max_body_bytes and max_batch_reports: a config whose statistic
      // or one report is too large, or a bad bound, is refused before anything is drawn, sent or charged
      // (bound.js)
      this._bodyRows = rowsPerBody(protocol, served, this.campaignId, Number.MAX_SAFE_INTEGER);
      this._protocol = protocol;
      const relay = document.relay;
      const issuerInfo = relay?.issuer ? await checkedIssuer(relay.issuer, relay.pin, this.campaignId, published) : null;
      this._route = relay ? new RelayRoute(this, relay, relayConfig, issuerInfo) : null;
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
    return this._route === null ? 0 : this._route.tokens(count);
  }


  /**
   * ``prepareTokens`` for ``reports`` new reports and every report drawn but not yet sent without a token bound to it
   * (queued by ``add``, or in a batch not yet sent): the tokens they will take when sent.  Nothing for other campaigns.
   */
  async _prepareFor(reports) {
    await this.campaign();
    this._checkExpectedIssuer();
    if (this._route !== null) await this._route.tokensFor(reports, this._pending.length, this._unsent);
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
    if (relay) {
      this._checkExpectedIssuer(); // the option may have been set after campaign()
      return this._route.send(batch, batchId);
    }
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


  /** The secrets this client holds (its token, its issuer credential), masked in whatever an answer repeats. */
  _secrets() {
    return [this.token, this.issuer?.credential].filter((secret) => typeof secret === 'string' && secret !== '');
  }

  /** ``method`` on ``path`` of this campaign (connection.js ``clientRequest``, which says the options). */
  _request(method, path, options) {
    return clientRequest(this, method, path, options);
  }
}
