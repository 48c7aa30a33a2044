// Type declarations of dpdist-client (clients/js/src/index.js).

/** A protocol config as Python's ``proto.config()`` writes it (JSON). */
export interface ProtocolConfig {
  protocol: string;
  version?: number;
  epsilon: number;
  [parameter: string]: unknown;
}

/** Base class of every error the client raises. */
export class DPDistError extends Error {}
/** A config parameter is missing, of the wrong type or outside its allowed set. */
export class InvalidParameterError extends DPDistError {}
/** The config names a protocol this client does not implement. */
export class UnsupportedProtocolError extends InvalidParameterError {}
/** A user's value lies outside the protocol's domain or bounds. */
export class OutOfDomainError extends DPDistError {}
/** A user's value has the wrong type. */
export class InvalidValueTypeError extends DPDistError {}

/** Uniform 32-bit words (crypto.getRandomValues by default) and the exact draws built on them. */
export class RandomSource {
  /** @param fill fills its argument with uniform words; inject a deterministic one only in tests */
  constructor(fill?: (words: Uint32Array) => unknown);
  word(): number;
  /** Uniform integer in [0, n), 1 <= n <= 2^32, by rejection (no modulo bias). */
  uniformInt(n: number): number;
  /** True with probability exactly p (any double in [0, 1]). */
  bernoulli(p: number): boolean;
  /** k * 2^-53 for k uniform in [0, 2^53). */
  uniform53(): number;
}

/** Reports ready for the wire: the C-order bytes of an array of NumPy dtype ``descr``. */
export class ReportBatch {
  readonly config: ProtocolConfig;
  readonly descr: '|u1' | '<u2' | '<u4' | '<u8';
  readonly shape: number[];
  readonly bytes: Uint8Array;
  readonly length: number;
  /** The bytes of one report. */
  row(index: number): Uint8Array;
}

/** A protocol built from a config. */
export interface Protocol {
  readonly name: string;
  readonly kind: 'frequency' | 'heavy_hitters' | 'numerical' | 'multi' | 'key_value';
  /** Protocols over records ('multi'): the schema, each attribute with its domain or bounds (and its protocol, if any). */
  readonly attributes?: ReadonlyArray<{
    readonly name: string; readonly domain_size?: number; readonly labels?: readonly string[];
    readonly bounds?: readonly [number, number]; readonly protocol: string | null;
  }>;
  readonly epsilon: number;
  /** The normalized config (defaults filled in), exactly as Python's ``proto.config()``. */
  readonly config: ProtocolConfig;
  /** The declared report format (Python's ``report_format``): kind, NumPy descr, row shape. */
  readonly format: { readonly kind: string; readonly dtype: string | unknown[]; readonly rowShape: number[]; describe(): ClientView['format'] };
  /** NumPy descr: a dtype string, or a list of fields for records (spl, smp, rsfd, rsrfd, calm, hdg). */
  readonly descr: string | unknown[];
  readonly rowShape: number[];
  readonly rowBytes: number;
  /** Refuse a client view whose format or design constants differ from this client's own. */
  checkView(view: ClientView): void;
  /** Frequency protocols: the public label of each item, or null. */
  readonly labels?: readonly string[] | null;
  /** Values: items 0..d-1 or labels (frequency protocols), reals in bounds (sw, gw, opm, opm-circular), words or integers (pem). */
  privatize(values: ArrayLike<number | string | bigint | RecordValue | KeyValueSet>, source: RandomSource): ReportBatch;
  /** A short human-readable reading of one report. */
  describeReport(report: Uint8Array): string;
  /** The label of an item (its number when the config has no labels). */
  labelOf(item: number): string;
  /** The inputs ``likelihood`` is evaluated at: every item, or the input bins' centres in [0, 1]. */
  inputs(): number[];
  /** Pr[report | input] for every input of ``inputs()`` (up to a common factor for OUE/SUE). */
  likelihood(report: Uint8Array): Float64Array;
  /** pem only: the two probabilities any word gives this report (their ratio is at most e^epsilon). */
  reportBounds?(report: Uint8Array): { high: number; low: number };
}

/**
 * One user's record for the multi-attribute protocols (spl, smp, rsfd, rsrfd, calm, hdg): the attributes' values in the
 * schema's order, or an object by attribute name (items or labels of categorical attributes, reals in
 * the bounds of numerical ones).
 */
export type RecordValue = ReadonlyArray<number | string> | { readonly [attribute: string]: number | string };

/**
 * One user's set of (key, value) pairs for the key-value protocols (privkv, pckv-ue, pckv-grr): keys in
 * [0, domain_size), each at most once, values in [-1, 1]; an object {key: value}, a Map or an array of [key, value].
 */
export type KeyValueSet =
  | ReadonlyArray<readonly [number, number]>
  | { readonly [key: number]: number }
  | ReadonlyMap<number, number>;

/** Names of the protocols this client implements. */
export const SUPPORTED_PROTOCOLS: readonly string[];

/**
 * A collector's client view (Python's ``protocol.client_view()``, published by dpdist serve with each
 * campaign): the config, the declared report format and the design constants of the randomizer.
 */
export interface ClientView {
  config: ProtocolConfig;
  format: { kind: string; dtype: string | unknown[]; row_shape: number[]; [parameter: string]: unknown };
  design?: Record<string, unknown>;
}

/**
 * The protocol a config (object or JSON text) describes; throws for unsupported protocols. A client
 * view is accepted too, once its format and design constants equal this client's own derivation
 * from the config (otherwise ``InvalidParameterError``: a collector cannot weaken the randomizer).
 */
export function fromConfig(config: ProtocolConfig | ClientView | string): Protocol;

/**
 * Randomize ``values``: items 0..d-1 or labels (frequency protocols), reals in ``bounds`` (sw, gw, opm, opm-circular),
 * records (multi-attribute protocols), sets of (key, value) pairs (privkv, pckv-ue, pckv-grr).
 */
export function privatize(
  config: ProtocolConfig | string | Protocol,
  values: ArrayLike<number | string | RecordValue | KeyValueSet>,
  options?: { source?: RandomSource },
): ReportBatch;

/** ``privatize`` then ``encodeRecord``, the record's reports in a uniformly random order. */
export function privatizeRecord(
  config: ProtocolConfig | string | Protocol,
  values: ArrayLike<number | string | RecordValue | KeyValueSet>,
  options?: { source?: RandomSource; fileId?: string | null },
): Uint8Array;

/** One dpdist binary report record (magic, version, JSON header, payload), as Python writes it. */
export function encodeRecord(batch: ReportBatch, options?: { fileId?: string | null }): Uint8Array;
/** The record's JSON header text. */
export function recordHeader(batch: ReportBatch, options?: { fileId?: string | null }): string;
/** A random file id: 32 lower-case hex digits. */
export function newFileId(): string;
/** zlib's CRC-32. */
export function crc32(bytes: Uint8Array): number;

/** A uniformly random permutation of 0 .. n-1 (Fisher-Yates) drawn from ``source``. */
export function permutation(n: number, source: RandomSource): Uint32Array;

/** A new array of the items of ``values`` in a uniformly random order. */
export function shuffled<T>(values: ArrayLike<T>, source: RandomSource): T[];

/** ``batch`` with its rows in a uniformly random order (what ``Client.flush`` sends). */
export function shuffleBatch(batch: ReportBatch, source: RandomSource): ReportBatch;

/** The server's acknowledgement of a batch. */
export interface Ack {
  campaign: string;
  batch_id: string;
  n_read: number;
  accepted: number;
  rejected: Record<string, number>;
  duplicate: boolean;
}

/**
 * A server refused a request or could not be reached, or served something the device refuses; from ``send`` it carries
 * the batch to resend.  ``code``: the server's error code (``status`` its HTTP status), or the device's own refusal
 * (``status`` null) of a relayed campaign, each before anything is drawn or sent:
 * ``pin_mismatch`` (the identity's SHA-256 is not the given pin or the pin the config names), ``pin_required`` (the
 * server is the campaign's relay and no pin was given), ``issuer_mismatch`` (the device was given an issuer, the
 * ``issuer.url`` option, and the campaign names none or another), ``issuer_key_mismatch`` (the issuer signs with
 * another key than the campaign's), ``tokens_each_mismatch`` (the issuer publishes another ``tokens_each`` for the
 * campaign's key than the identity states), ``challenge_mismatch`` (the TokenChallenge the config publishes is not the one the
 * pin and the issuer's name give), ``unsupported_token_type``, ``credential_required`` (a token is needed and no
 * credential was given), ``bad_token_response`` (the issuer's answer does not unblind to a valid token).  The issuer's
 * and the relay's refusals keep their codes (the issuer's ``unauthorized``, ``exhausted``, ``wrong_key``; the relay's,
 * e.g. ``token_spent``, and 409 ``pin_mismatch`` or ``identity_changed``: the relay holds another identity of the
 * campaign than the one the report was made under).  ``wrong_ack`` (status 200): every answer within the retry window
 * was a success that is not the acknowledgement of the batch sent (another batch's or campaign's, a captive portal's page,
 * a body that is not JSON or is cut short); the batch stays queued and is carried, to be resent under its id.
 * ``redirected`` (the 3xx status; null for a browser's opaque redirect): the answer was a redirect, refused at once and
 * not followed (it would take the token elsewhere), the message naming where it pointed.  ``answer_too_large``: the
 * answer's body went past ``MAX_ANSWER_BYTES`` (a config, an identity) or ``ACK_ANSWER_BYTES`` (anything else) once
 * decoded (not retried).  ``unexpected_answer``: a config or identity of JSON that may hold more values than one per 8
 * bytes of its bound (or more than 2^20 arrays and objects), not parsed.  A refusal whose code is none of
 * the servers' (``codes.js``) is said as ``status N from HOST (not a dpdist answer, N bytes)``, ``code`` null.  What
 * ``message`` shows of a server's text is shown as the Python client shows it: control characters escaped (``\x1b``),
 * cut (the detail to 2000 characters), the secrets the client holds read ``***`` in every form.
 */
export class ServiceError extends DPDistError {
  readonly status: number | null;
  readonly code: string | null;
  readonly batch?: ReportBatch;
  readonly batchId?: string;
}

/**
 * What a device is given to obtain Privacy Pass tokens of a relayed campaign's issuer: a credential and the URL of the
 * issuer it is of (required with a credential: InvalidParameterError otherwise).
 */
export interface IssuerOptions {
  /** What the issuer gave this device (sent to the issuer only, as ``Authorization: Bearer``). */
  credential?: string | null;
  /**
   * The issuer this device expects: a relayed campaign that names no issuer or another issuer's origin is refused
   * (``issuer_mismatch``) before anything is drawn or the credential sent.
   */
  url?: string | null;
}

/**
 * A direct campaign's requests through a standard Oblivious HTTP relay resource (RFC 9458) to the collector's gateway,
 * encapsulated to the campaign's key configuration: the collector never sees the device's address with a report.
 * Refusals (ServiceError, before anything is drawn or sent): ``ohttp_key_mismatch`` (the campaign states a key
 * configuration not among ``keys``; or the gateway no longer holds the key), ``relayed_campaign`` (a campaign of a
 * dpdist relay: send without an OHTTP relay), ``no_ohttp_gateway`` (a collector without a gateway); a relay's 2xx
 * that is not an encapsulated answer: ``not_encapsulated``.
 */
export interface OhttpOptions {
  /** The URL of the relay resource (it forwards to the collector's /ohttp/gateway). */
  relay: string;
  /**
   * The gateway's key configurations (``application/ohttp-keys`` bytes, as GET /ohttp/keys serves them) given out of
   * band: then the campaign's config goes through the relay too.  Without them the config is fetched from the server.
   */
  keys?: Uint8Array | null;
}

/** The storage key (in ``memoStorage``) of the device's Privacy Pass tokens: pending requests, spare and bound tokens. */
export const TOKENS_KEY: string;

/**
 * A relayed campaign's relay and issuer as the device takes them: from its identity document, whose SHA-256 is ``pin``
 * (the identity names no TokenChallenge: the device derives it from the pin).
 */
export interface RelayConfig {
  url: string;
  kem?: string;
  kdf?: string;
  aead?: string;
  ids: number[];
  public_key: string;
  key_id: string;
  /** The lower-case hex SHA-256 of the identity document; sent with every report as ``Dpdist-Pin``. */
  pin: string;
  issuer: null | {
    url: string; name: string; key: string; token_type: 2; token_key: string; independent?: boolean;
    /** The most tokens (reports) one credential of the key gives, as the issuer publishes it (absent: an identity made before). */
    tokens_each?: number;
  };
}

/** The relay's acknowledgement of the reports of one batch sent through it. */
export interface RelayAck {
  batch_id: string;
  relayed: number;
  duplicates: number;
}

/**
 * A device-side client of one campaign of ``dpdist serve``: only reports leave the device.  An option name it does not
 * know is refused (InvalidParameterError naming it and listing the options).
 */
export class Client {
  constructor(
    serverUrl: string,
    campaignId: string,
    options?: {
      token?: string | null;
      batchSize?: number;
      /** at most this many attempts after the first as well (null, the default: as many as ``retryWindowMs`` allows) */
      retries?: number | null;
      /**
       * how long a failed request (no connection, a network error, 408, 425, 429, 5xx) is sent again, the same bytes
       * under the same batch id, from its first failure (300000 ms: a server restarting under load); 0: never
       */
      retryWindowMs?: number;
      /**
       * how long one attempt may take, its answer read whole (60000 ms; null: no limit): a deadline for the whole
       * answer, so a server that trickles it ends the attempt as a network error does (retried under
       * ``retryWindowMs``).  An answer's body is read up to ``MAX_ANSWER_BYTES`` once decoded.
       */
      timeoutMs?: number | null;
      retryDelayMs?: number;
      fetch?: typeof fetch;
      /**
       * Where the device's privacy ledger persists, under ``dpdist-ledger`` (default globalThis.localStorage,
       * a browser's): its budget, its charges and the memos of longitudinal campaigns.  Required where there is
       * no globalThis.localStorage (Node: give a file-backed storage); an object without getItem/setItem functions
       * is refused (InvalidParameterError), and so is, before anything is sent, one whose getItem does not return the
       * string setItem was given (each save is read back).  null: no ledger, said explicitly (simulations of many users, tests;
       * a longitudinal campaign is then refused).
       */
      memoStorage?: MemoStorage | null;
      /**
       * The device owner's total epsilon (Python's ``PrivacyLedger.restore(budget=...)``, the Java client's
       * ``Options.budget``): a new ledger starts with it, and it replaces the stored ledger's budget every time the
       * ledger is read (saved with the next charge).  null (default): the stored budget, or ``DEFAULT_BUDGET`` (10) for
       * a new ledger.  A finite epsilon > 0; refused with ``memoStorage: null`` (no ledger).
       */
      budget?: number | null;
      /**
       * The Web Locks (default globalThis.navigator.locks): ``submit``, ``submitMany`` and ``add`` read, draw
       * from and save the ledger holding the lock ``dpdist-ledger``, so two tabs sharing localStorage cannot
       * both spend or answer from the same ledger state.  null: no lock.
       */
      locks?: { request<T>(name: string, callback: () => T | Promise<T>): Promise<T> } | null;
      source?: RandomSource;
      /**
       * A relayed campaign's pin (64 hex digits, the SHA-256 of its identity document).  A relayed campaign's config,
       * relay and issuer are always taken from the identity the server returns, refused (``pin_mismatch``) unless it
       * hashes to the pin its config names and to this pin, if given: with it any server, the relay included, may
       * serve them.  Without it a relayed campaign must be read from its collector (``pin_required``).
       */
      pin?: string | null;
      /** For a relayed campaign whose reports need a Privacy Pass token of its issuer (one per report). */
      issuer?: IssuerOptions | null;
      /** A direct campaign's requests through a standard Oblivious HTTP relay (RFC 9458). */
      ohttp?: OhttpOptions | null;
      /**
       * @deprecated No effect (it goes in dpdist 0.2.0): every report of a relayed campaign travels to its dpdist relay
       * as an RFC 9458 request encapsulated to the key configuration of the campaign's identity (``relay.ohttp``; a
       * campaign whose identity names none is refused, ``no_ohttp_key``, before anything is drawn).
       */
      relayEnvelope?: 'dpdist' | 'ohttp' | null;
    },
  );
  /** @deprecated The ``relayEnvelope`` option, as checked; read by no one. */
  readonly relayEnvelope: 'dpdist' | 'ohttp' | null;
  readonly source: RandomSource;
  /** The pin given (lower case), or null. */
  readonly pin: string | null;
  /**
   * The issuer options, as checked (``{credential, url}`` or null; settable: a page may ask for the credential after
   * loading the campaign; InvalidParameterError for a credential without its issuer's URL).
   */
  get issuer(): { credential: string | null; url: string | null } | null;
  set issuer(issuer: IssuerOptions | null);
  /**
   * Hold Privacy Pass tokens for ``count`` reports of a relayed campaign with an issuer (resolves to how many the device
   * holds; 0 for other campaigns), before drawing them: ``submit``, ``submitMany`` and ``add`` do it first.  A token
   * request whose answer was lost is sent again unchanged; tokens are kept in ``memoStorage`` under ``TOKENS_KEY``, also
   * those obtained before the issuer refuses a later one (its refusal, e.g. ``exhausted``, says how many).
   */
  prepareTokens(count?: number): Promise<number>;
  /** Reports randomized but not yet acknowledged (queued or in failed batches). */
  readonly unsentReports: number;
  /**
   * The campaign's public description (fetched once).  A relayed campaign's is its identity's: ``campaign``,
   * ``config`` and ``relay`` (with its ``pin`` and ``issuer``) from the identity document, ``state`` from the server.
   */
  campaign(): Promise<{
    campaign: string; state: string; config: ProtocolConfig; client_view?: ClientView; submit_token_required?: boolean; max_body_bytes?: number;
    max_batch_reports?: number;
    relay?: RelayConfig;
  }>;
  protocol(): Promise<Protocol>;
  /** The collector as the ledger names it: the server URL, or the page's origin. */
  readonly collector: string;
  /** The device's privacy ledger (null without storage). */
  ledger(): Promise<Ledger | null>;
  /** Reports of ``values`` of this device, not sent (after ``campaign()``): charged to its ledger. */
  randomize(values: ArrayLike<number | string | RecordValue | KeyValueSet>): ReportBatch;
  /** The device's memo of this longitudinal campaign, null before its first report or for other campaigns. */
  memo(): Promise<Memo | null>;
  /** Randomize one value and submit its report now (a relayed campaign: its token first). */
  submit(value: number | string | RecordValue | KeyValueSet): Promise<Ack | RelayAck>;
  /** Randomize values and submit them in batches of ``batchSize`` or fewer (as many as one body and the answer's
   * ``max_batch_reports`` hold; a relayed campaign: each batch's tokens first). */
  submitMany(values: ArrayLike<number | string | RecordValue | KeyValueSet>): Promise<Array<Ack | RelayAck>>;
  /** Randomize a value now and queue its report; a full queue is flushed. */
  add(value: number | string | RecordValue | KeyValueSet): Promise<Array<Ack | RelayAck>>;
  /** Send queued reports (and earlier failed batches, under their batch ids). */
  flush(): Promise<Array<Ack | RelayAck>>;
  /**
   * Submit a batch under a batch id (fresh by default), retrying the same bytes.  A relayed campaign: each report
   * sealed and sent alone to the relay under ``<batchId>.<row>``, with the token bound to that report id.
   */
  send(batch: ReportBatch, options?: { batchId?: string }): Promise<Ack | RelayAck>;
}

/** Web Storage's two methods: where a device keeps its memo (window.localStorage has them). */
export interface MemoStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** A saved state (a device's memo) does not fit its protocol, or is malformed. */
export class IncompatibleStateError extends DPDistError {}

/** JSON form of a memo, as Python's ``MemoizedClient.to_dict`` writes it. */
export interface MemoState {
  config: ProtocolConfig;
  /** loloha: the device's hash seed [s] (a decimal string above 2^53); dbitflippm: its sampled buckets. */
  randomness?: (number | string)[] | null;
  /** item (as a string) -> its permanent response: an item (l-grr) or the packed bytes (l-osue). */
  memo: Record<string, number | number[]>;
  /** Drawn from a reproducible (seeded) source: refused by a report from the CSPRNG. */
  seeded?: boolean;
}

/**
 * A device's memo of a longitudinal protocol (l-grr, l-osue, loloha, dbitflippm): each value's (loloha: each hash
 * value's) permanent response, drawn once and kept; every report is a fresh instantaneous response to it.
 */
export class Memo {
  constructor(protocol: Protocol, state?: MemoState | null, options?: { onChange?: (memo: Memo) => void });
  readonly items: number[];
  /** loloha: the hash seed, dbitflippm: the sampled buckets (JSON form); null before the first report and for l-grr / l-osue. */
  readonly randomness: (number | string)[] | null;
  /** Today's report of ``value`` (one row); a new permanent response is stored via onChange first. */
  report(value: number | string, source?: RandomSource): ReportBatch;
  toJSON(): MemoState;
}

/** True for the protocols whose device must keep a Memo (l-grr, l-osue, loloha, dbitflippm). */
export function isLongitudinal(protocol: Protocol): boolean;

/** The key of the device's privacy ledger in its storage. */
export const LEDGER_KEY: string;
/**
 * The most bytes of a config or identity answer the Client reads, once decoded (4 MiB, as the Python and Java clients):
 * the body is streamed and dropped past it (ServiceError ``answer_too_large``), so a small gzip answer cannot fill the
 * device's memory; JSON within it that may hold more than 524,288 values is not parsed.
 */
export const MAX_ANSWER_BYTES: number;
/**
 * The most bytes of an acknowledgement, a refusal (4xx/5xx), an issuer's key or token answer the Client reads, once
 * decoded (1 MiB, as the Python and Java clients); JSON within it that may hold more than 131,072 values is not parsed.
 */
export const ACK_ANSWER_BYTES: number;
/** The total epsilon a device spends unless its owner sets another (10). */
export const DEFAULT_BUDGET: number;

/** A ledger refused a report: over budget, or a collector changed a kept memo's budgets. */
export class PrivacyBudgetError extends DPDistError {
  readonly reason: string;
  /** The budget left (epsilon). */
  readonly remaining: number;
}

/** One charge of a ledger. */
export interface LedgerCharge {
  at: number;
  epsilon: number;
  collector: string;
  protocol: string;
  reports: number;
  /** the chance each report is a randomized response of its epsilon (GRR, SS, OUE, SUE); absent: 1 */
  share?: number;
}

/** JSON form of a ledger, as Python's ``PrivacyLedger.to_dict`` writes it. */
export interface LedgerState {
  format: 'dpdist-ledger';
  version: 1 | 2;
  budget: number;
  window: number | null;
  accounting: 'history' | 'stable';
  streams: Record<string, MemoState & { collector: string; reports: number }>;
  charges: LedgerCharge[];
  /** "<collector> <once>" -> the question answered once (a campaign in rounds) */
  answered?: Record<string, { at: number; protocol: string }>;
  /** "<collector> <once>" -> the round this device drew for a campaign in rounds */
  rounds?: Record<string, number>;
}

/**
 * A device's privacy ledger (Python's PrivacyLedger): memos per collector and config without budgets,
 * every report charged before it is drawn, refused past the budget.
 */
export class Ledger {
  constructor(
    settings?: { budget?: number; window?: number | null; accounting?: 'history' | 'stable' },
    options?: { onChange?: (ledger: Ledger) => void },
  );
  static fromJSON(
    state: LedgerState | MemoState,
    options?: { collector?: string; onChange?: (ledger: Ledger) => void; settings?: object },
  ): Ledger;
  readonly budget: number;
  readonly window: number | null;
  readonly accounting: 'history' | 'stable';
  readonly charges: LedgerCharge[];
  spent(now?: number): number;
  remaining(now?: number): number;
  /** What the charges spend at ``delta``: Python's PrivacyLedger.statement (the same total for the same charges). */
  statement(delta: number, accountant?: 'tightest' | 'basic' | 'pld', now?: number): {
    accountant: 'basic' | 'pld'; epsilon: number; delta: number; basic: number;
    /** 'replace' (any two histories) under 'history' accounting; 'stable' (the same pattern of changes only) under 'stable'. */
    relation: 'replace' | 'stable';
    /** What the statement assumes, as Python's statement does, in its words and order: one memo per device and scope
     * (a memo's charges), fresh randomness across the charges, or nothing charged (none to state); the window's
     * charges only (a ledger with a window); the stable relation (stable accounting). */
    assumptions: string[];
  };
  reportsSent(protocol: Protocol, collector?: string): number;
  /** Epsilon the next ``reports`` reports would be charged (public inputs only). */
  cost(protocol: Protocol, reports?: number, collector?: string): number;
  memoOf(protocol: Protocol, collector?: string): Memo | null;
  /** Reports of ``values`` of this one device, charged first; throws PrivacyBudgetError past the budget. */
  /** Whether the device has answered the question ``once`` of ``collector`` (a campaign in rounds: its id). */
  answered(once: string, collector?: string): boolean;
  /** The round (1-based) this device answers of the campaign in rounds `once`: drawn once in proportion to `sizes`, kept. */
  roundFor(once: string, collector: string, sizes: number[], source?: RandomSource): number;
  /** ``once``: a question the device answers at most once at ``collector`` (one value; a second answer is refused). */
  report(protocol: Protocol, values: ArrayLike<number | string | RecordValue | KeyValueSet>, options?: { collector?: string; source?: RandomSource; now?: number; once?: string | null }): ReportBatch;
  toJSON(): LedgerState;
}

/** The scope a ledger keeps a memo under: the collector and the config without budgets. */
export function budgetScope(collector: string, config: ProtocolConfig): string;
/** A collector's name as the ledger keeps it: an http(s) URL's origin (lower case, no default port) and path. */
export function normalCollector(collector: string): string;
/** eps_T of T reports through one memo against every other history (Python's epsilon_over_changes). */
export function historyEpsilon(
  reports: number,
  losses: { epsilon1: number; epsilonInf: number; epsilonI: number; keys: number },
): number;

/** How likely someone who sees this device's reports guesses its value, by the bound of the protocol's epsilon. */
export interface GuessOdds {
  /** what is guessed: "your value", "which of 10 equal ranges of [0, 100] your value lies in", ... */
  target: string;
  /** how many candidates, equally likely before any report */
  values: number;
  /** 1 / values: a blind guess */
  chance: number;
  /** one report's epsilon (epsilon_1 for a longitudinal protocol) */
  epsilon: number;
  /** the bound e^eps / (e^eps + values - 1) on the guess from one report */
  probability: number;
  /** true for GRR, which reaches the bound; else an upper bound */
  exact: boolean;
  /** a longitudinal protocol: the bound for every report of an unchanged value (epsilon_inf); else null */
  memo: { epsilon: number; probability: number } | null;
}

/** The bound of any epsilon-DP guarantee on guessing a value whose likeliest candidate has probability ``chance``. */
export function guessBound(epsilon: number, chance: number): number;
/** What someone who sees this device's reports can guess (null for a protocol of key-value pairs). */
export function guessOdds(protocol: Protocol): GuessOdds | null;
/** One sentence a person reads before taking part, with the chance baseline (null for key-value pairs). */
export function consentText(protocol: Protocol): string | null;
/**
 * A probability as a percentage of three significant digits, or as many more as keep one below 1 from reading 100%:
 * to the nearest, or rounded up where ``bound`` (an attacker's success, never shown below it).
 */
export function percent(value: number, bound?: boolean): string;

/** A report was already drawn for this campaign on this device, for another value. */
export class ReportAlreadyDrawnError extends DPDistError {
  kept: KeptReport;
}

/** The report a campaign keeps on this device. */
export interface KeptReport {
  batch: ReportBatch;
  batchId: string;
  /** the value's text it was drawn for; null once sent */
  value: string | null;
  /** the server's acknowledgement once sent, else null */
  sent: { batch_id: string; accepted: number } | null;
}

/** The storage key of a campaign's kept report (its id and canonical config). */
export function participationKey(campaignId: string, protocol: Protocol): string;

/**
 * One report per campaign on this device, drawn once and kept in ``storage`` (what the
 * participation page offers): the same value gives the kept report again; another value, while it
 * is unsent, throws ReportAlreadyDrawnError.
 */
export class Participation {
  constructor(campaignId: string, protocol: Protocol, storage: MemoStorage);
  readonly key: string;
  readonly kept: KeptReport | null;
  report(
    value: unknown,
    valueText: string,
    draw: (value: unknown) => ReportBatch,
    newBatchId: () => string,
  ): KeptReport & { fresh: boolean };
  markSent(ack: { batch_id: string; accepted: number }): void;
}
