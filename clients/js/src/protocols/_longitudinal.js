// Reports over time: memoized two-round randomization, the base of "l-grr" (l-grr.js) and "l-osue" (l-osue.js)
// (Arcolezi, Couchot, Al Bouna & Xiao, ICDE 2022, sec. 4; dpdist.local.frequency.longitudinal), and the
// device's memo of every longitudinal protocol.
//
// Round one, the permanent randomized response (PRR), randomizes a value once with eps_inf and
// the device memoizes the result per value; every report applies a fresh instantaneous
// randomized response (IRR) to the memoized output, with the IRR budget chosen so that one
// report is exactly eps_1-LDP.  Any number of reports of the same value is then eps_inf-LDP
// (post-processing of one PRR), provided the device keeps its memo: see ``Memo`` below and the
// ``memoStorage`` option of Client; the same Memo serves loloha.js and dbitflippm.js.  ``privatize`` without a memo draws both rounds afresh (one
// report per user, the chain's channel), as Python's ``privatize`` does.
//
// Every constant is derived with the same floating-point operations as Python, so the JS and
// Python channels agree bit for bit (checked against the fixture written by Python).

import { IncompatibleStateError, InvalidParameterError } from '../errors.js';
import { NOT_SHOWN } from '../refusals.js';
import { expLower, fractionOf, gridFloor, mixtureKeep } from '../grid.js';
import { secureSource } from '../random.js';
import { ReportBatch } from './_base.js';

/** The largest double below ``x`` (x > 0), as Python's math.nextafter(x, 0). */
export function nextDown(x) {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  view.setBigUint64(0, view.getBigUint64(0) - 1n);
  return view.getFloat64(0);
}

/** Probabilities of the two rounds chained: a report supports the true item w.p. p, another w.p. q. */
export function chain(p1, q1, p2, q2) {
  return [p1 * p2 + (1 - p1) * q2, q1 * p2 + (1 - q1) * q2];
}

export function checkBudgets(display, params) {
  if (!(params.epsilon_1 < params.epsilon)) {
    throw new InvalidParameterError(
      `The 'epsilon_1' parameter of ${display} (one report) must be below 'epsilon' (the longitudinal bound). ` +
        `Got epsilon_1=${params.epsilon_1} and epsilon=${params.epsilon} instead.`,
    );
  }
}

/**
 * ``[keep1, keep2]`` of the two GRR rounds over ``d`` values (Python's ``_grr_keeps``): round one's
 * ratio 1 + d keep1 / (1 - keep1) is at most e^eps_inf; the chain is GRR with keep1 keep2, at most
 * e^eps_1, i.e. keep1 keep2 <= (E1 - 1) / (E1 - 1 + d).  Both are the largest multiples of 2^-53 that
 * satisfy these in exact arithmetic (grid.js), drawn exactly by the Bernoulli sampler.
 */
export function grrKeeps(d, epsilon, epsilon1) {
  const keep1 = mixtureKeep(epsilon, 1, d);
  if (!(keep1 > 0)) return [keep1, 0];
  const [en, ed] = expLower(epsilon1);
  const [kn, kd] = fractionOf(keep1);
  const keep2 = gridFloor([(en - ed) * kd, (en - ed + BigInt(d) * ed) * kn]);
  return [keep1, Math.min(keep2, 1 - 2 ** -53)]; // below 1: the IRR keeps q2 > 0 (Python's cap)
}

/** ``[p, q]`` of GRR over ``d`` values with keep probability ``keep`` (Python's ``_grr_probabilities``). */
export function grrProbabilities(keep, d) {
  const q = (1.0 - keep) / d;
  return [keep + q, q];
}

/** JSON text of a config with its keys sorted (Python and JS order them differently). */
export function canonical(config) {
  if (config === null || typeof config !== 'object' || Array.isArray(config)) return JSON.stringify(config);
  return JSON.stringify(Object.fromEntries(Object.keys(config).sort().map((key) => [key, config[key]])));
}

/**
 * A device's memo of a longitudinal protocol: its user randomness if the protocol has one (LOLOHA's
 * hash seed, dBitFlipPM's sampled buckets), drawn once, and the permanent response of each memo key (the value for l-grr and
 * l-osue, the value's hash for LOLOHA), in the JSON form of Python's ``MemoizedClient.to_dict`` /
 * ``BucketMemoClient.to_dict`` ({config, [randomness,] memo: {key: response}}).
 *
 * The memo must persist with the device: a device that forgets it and reports the same value
 * again spends a fresh eps_inf.  ``report`` stores what it draws (through ``onChange``) before it
 * returns the report, so nothing is sent that the memo does not hold.
 */
export class Memo {
  /**
   * @param {object} protocol a longitudinal protocol (``isLongitudinal``)
   * @param {object|null} [state] a previous ``toJSON()`` (or Python's to_dict) of the same config
   * @param {{onChange?: (memo: Memo) => void}} [options]
   */
  constructor(protocol, state = null, { onChange = null } = {}) {
    if (!isLongitudinal(protocol)) {
      throw new InvalidParameterError(
        `A Memo needs a longitudinal protocol (l-grr, l-osue, loloha, dbitflippm). Got ${protocol?.name ?? typeof protocol}.`,
      );
    }
    this.protocol = protocol;
    this.onChange = onChange;
    this._randomness = null;
    this._memo = new Map();
    this.seeded = false; // a permanent response was drawn from a reproducible (test) source
    if (state !== null) this._load(state);
  }

  _load(state) {
    if (state === null || typeof state !== 'object' || typeof state.memo !== 'object' || state.memo === null) {
      throw new IncompatibleStateError("Not a memoized client state: it needs a 'memo' (an object).");
    }
    if (canonical(state.config) !== canonical(this.protocol.config)) {
      throw new IncompatibleStateError(
        `The memo was made for config ${JSON.stringify(state.config)}, not ${JSON.stringify(this.protocol.config)}; ` +
          'a memo only serves the protocol it was drawn for.',
      );
    }
    const { keys, userRandomness } = this.protocol.memoized;
    if (userRandomness && state.randomness != null) this._randomness = this.protocol.checkUserRandomness(state.randomness);
    if (userRandomness && this._randomness === null && Object.keys(state.memo).length > 0) {
      // the memo's buckets were drawn under a hash seed (or sampled buckets) this state does not hold
      throw new IncompatibleStateError("A client's memo has entries but no randomness: they cannot be used.");
    }
    if (state.seeded !== undefined && typeof state.seeded !== 'boolean') {
      throw new IncompatibleStateError(`A client state's 'seeded' must be true or false. Got ${JSON.stringify(state.seeded)}.`);
    }
    this.seeded = state.seeded === true;
    for (const [text, value] of Object.entries(state.memo)) {
      // canonical decimal only: '' and ' 1' are no keys, and '01' would read as item 1 beside '1'
      const key = /^(0|[1-9]\d{0,19})$/.test(text) ? Number(text) : NaN;
      if (!Number.isInteger(key) || key < 0 || key >= keys) {
        throw new IncompatibleStateError(`A memo is keyed by integers in [0, ${keys}). Got another key (${NOT_SHOWN}).`);
      }
      this._memo.set(key, this.protocol.memoFromJSON(value, key));
    }
  }

  /** Memo keys with a permanent response (values, or hashed values for LOLOHA). */
  get items() {
    return [...this._memo.keys()].sort((a, b) => a - b);
  }

  /** The device's user randomness in JSON form (LOLOHA: [seed]), null before the first report or if none. */
  get randomness() {
    return this._randomness === null ? null : this.protocol.randomnessToJSON(this._randomness);
  }

  /**
   * Today's report of ``value`` as a one-row ReportBatch: the memoized permanent response (drawn
   * and stored on first use) through a fresh instantaneous response. ``source`` defaults to
   * crypto.getRandomValues, as for ``privatize`` (a test passes a seeded one).
   */
  report(value, source = secureSource()) {
    const protocol = this.protocol;
    const secure = source.secure === true;
    if (this.seeded && secure) {
      throw new IncompatibleStateError(
        'This memo was drawn from a reproducible (seeded) source: anyone who knows the seed can re-draw its permanent ' +
          'responses, so they protect nothing. A device reporting for real needs a memo drawn from crypto.getRandomValues.',
      );
    }
    const [item] = protocol.checkValues([value]);
    let changed = false;
    if (protocol.memoized.userRandomness && this._randomness === null) {
      this._randomness = protocol.drawUserRandomness(source);
      changed = true;
    }
    const key = protocol.bucketOf(item, this._randomness);
    // a permanent response is drawn every time, kept only for a new key: the same work whether or not the
    // value is new, so the report's timing does not tell a change
    const drawn = protocol.permanentResponse(key, source, this._randomness);
    if (!this._memo.has(key)) {
      this._memo.set(key, drawn);
      changed = true;
    }
    if (changed && !secure) this.seeded = true;
    if (changed && this.onChange) this.onChange(this); // persisted before any report of it exists
    const bytes = new Uint8Array(protocol.rowBytes);
    protocol.writeMemoized(this._memo.get(key), source, bytes, new DataView(bytes.buffer), 0, this._randomness);
    return new ReportBatch(protocol.config, protocol.floatKeys, protocol.descr, [1, ...protocol.rowShape], bytes);
  }

  toJSON() {
    const memo = {};
    for (const key of this.items) memo[String(key)] = this.protocol.memoToJSON(this._memo.get(key));
    const state = { config: this.protocol.config };
    if (this.protocol.memoized.userRandomness) state.randomness = this.randomness;
    state.memo = memo;
    if (this.seeded) state.seeded = true;
    return state;
  }
}

/** The storage key of a device's memo for ``protocol``: every round (campaign) of one config shares it. */
export function memoKey(protocol) {
  return `dpdist-memo:${canonical(protocol.config)}`;
}

/** True for the protocols whose device must keep a Memo (l-grr, l-osue, loloha, dbitflippm). */
export function isLongitudinal(protocol) {
  return protocol != null && typeof protocol === 'object' && protocol.memoized != null;
}
