// The options of a Client (client.js), each checked when it is made, and the storage that keeps the device's ledger
// (memoStorage): one that does not keep what it is given, or keeps it later, is refused before anything is sent.

import { InvalidParameterError } from './errors.js';
import { checkRelayUrl, decodeKeyList } from './ohttp.js';

/** The storage key of the device's privacy ledger. */
export const LEDGER_KEY = 'dpdist-ledger';

/** Whether ``value`` is a Promise (or any thenable): what an asynchronous storage's getItem or setItem returns. */
export function isThenable(value) {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && typeof value.then === 'function';
}

/** The refusal of an asynchronous ``memoStorage``, whose ``method`` returned a Promise. */
export function asyncStorage(method) {
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
export function keepLedger(storage, text) {
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
export function checkOptionNames(options) {
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
export function checkBudgetOption(budget, storage) {
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
export function checkMemoStorage(memoStorage) {
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
export function checkOhttpOption(ohttp) {
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
