// Reports over time: memoized two-round randomization, "l-grr" and "l-osue" (Arcolezi, Couchot,
// Al Bouna & Xiao, ICDE 2022, sec. 4; dpdist.local.frequency.longitudinal).
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
import { expLower, fractionOf, gridFloor, mixtureKeep } from '../grid.js';
import { exp } from '../libm.js';
import { secureSource } from '../random.js';
import { EPSILON, frequencyRules } from '../params.js';
import { itemReports } from '../format.js';
import { FrequencyProtocol, ReportBatch } from './base.js';
import { UnaryEncoding } from './unary.js';

const SCALE = 4294967296; // 2^32

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

/** L-GRR: GRR(eps_inf) memoized, then GRR with the IRR budget of eps_1 (Python's LGRR). */
export class LGRR extends FrequencyProtocol {
  constructor(config) {
    super('l-grr', config, frequencyRules({ epsilon_1: EPSILON }), { labels: null });
    checkBudgets(this.display, this.params);
    const d = this.domainSize;
    [this.keep1, this.keep2] = grrKeeps(d, this.epsilon, this.params.epsilon_1);
    [this.p1, this.q1] = grrProbabilities(this.keep1, d);
    [this.p2, this.q2] = grrProbabilities(this.keep2, d);
    [this.p, this.q] = chain(this.p1, this.q1, this.p2, this.q2);
    this.format = itemReports(d);
  }

  /**
   * The device memoizes per value (no user randomness): the memo key of ``item`` is the item.  With the
   * losses its privacy ledger charges (Python's epsilon_per_report, epsilon_longitudinal, epsilon_instantaneous).
   */
  get memoized() {
    return {
      keys: this.domainSize,
      userRandomness: false,
      epsilon1: Math.log(this.p / this.q),
      epsilonInf: Math.log(this.p1 / this.q1),
      epsilonI: Math.log(this.p2 / this.q2),
    };
  }

  bucketOf(item) {
    return item;
  }

  /** Round one of ``item``: what the device memoizes (an item). */
  permanentResponse(item, source) {
    return this._grr(item, this.keep1, source);
  }

  /** Round two of a memoized item: one report's item. */
  instantaneousResponse(memoized, source) {
    return this._grr(memoized, this.keep2, source);
  }

  _grr(item, keep, source) {
    const kept = source.bernoulli(keep);
    const other = source.uniformInt(this.domainSize); // drawn either way: the draws must not tell whether it is kept
    return kept ? item : other; // keep, else uniform over all d
  }

  writeReport(item, source, bytes, view, offset) {
    this.writeMemoized(this.permanentResponse(item, source), source, bytes, view, offset);
  }

  writeMemoized(memoized, source, bytes, view, offset) {
    this.format.write(view, offset, 0, this.instantaneousResponse(memoized, source));
  }

  /** Memo entries as Python's MemoizedClient.to_dict writes them (an int). */
  memoToJSON(memoized) {
    return memoized;
  }

  memoFromJSON(value, item) {
    if (!Number.isInteger(value) || value < 0 || value >= this.domainSize) {
      throw new IncompatibleStateError(`Memo of item ${item} must be an item in [0, ${this.domainSize}). Got ${JSON.stringify(value)}.`);
    }
    return value;
  }

  /** Exact law of one report (both rounds) for input ``item``, indexed by the reported item. */
  channelRow(item) {
    const row = new Float64Array(this.domainSize).fill(this.q);
    row[item] = this.p;
    return row;
  }

  /** Exact law of one report given the memoized item (round two only). */
  instantaneousRow(memoized) {
    const row = new Float64Array(this.domainSize).fill(this.q2);
    row[memoized] = this.p2;
    return row;
  }

  likelihood(row) {
    const output = this.reportIndex(row);
    return Float64Array.from(this.inputs(), (item) => (item === output ? this.p : this.q));
  }

  describeReport(row) {
    return `reports the value ${this.labelOf(this.reportIndex(row))}`;
  }

  reportIndex(row) {
    return this.format.readRow(row);
  }
}

/** SUE bits of budget ``epsilonIrr`` realized on the 2^-32 grid (p rounded down, q up), as Python. */
function irrProbabilities(epsilonIrr) {
  const half = exp(epsilonIrr / 2);
  const p = half / (half + 1);
  return [Math.floor(p * SCALE) / SCALE, Math.ceil((1 - p) * SCALE) / SCALE];
}

/** L-OSUE: OUE(eps_inf) memoized, then SUE with the IRR budget of eps_1 (Python's LOSUE). */
export class LOSUE extends UnaryEncoding {
  constructor(config) {
    super('l-osue', config, (epsilon) => [0.5, 1.0 / (exp(epsilon) + 1.0)], { epsilon_1: EPSILON });
    checkBudgets(this.display, this.params);
    this.p1 = this.p;
    this.q1 = this.q;
    const target = this.params.epsilon_1;
    let low = 0.0;
    let high = 2.0 * (this.epsilon + target) + 64.0;
    for (let step = 0; step < 200; step++) {
      // bisection on the IRR budget, keeping the side at or below the target (Python's loop)
      const middle = 0.5 * (low + high);
      const [p2, q2] = irrProbabilities(middle);
      const [p, q] = chain(this.p1, this.q1, p2, q2);
      if (Math.log((p * (1 - q)) / (q * (1 - p))) <= target) low = middle;
      else high = middle;
    }
    [this.p2, this.q2] = irrProbabilities(low);
    this.p2Threshold = Math.round(this.p2 * SCALE);
    this.q2Threshold = Math.round(this.q2 * SCALE);
    [this.p, this.q] = chain(this.p1, this.q1, this.p2, this.q2);
  }

  get memoized() {
    const { p, q, p1, q1, p2, q2 } = this;
    return {
      keys: this.domainSize,
      userRandomness: false,
      epsilon1: Math.log((p * (1 - q)) / (q * (1 - p))),
      epsilonInf: Math.log((p1 * (1 - q1)) / (q1 * (1 - p1))),
      epsilonI: this.domainSize * Math.log(Math.max(p2 / q2, (1 - q2) / (1 - p2))), // all d bits may differ
    };
  }

  bucketOf(item) {
    return item;
  }

  /** Round one of ``item``: OUE bits, packed (what the device memoizes). */
  permanentResponse(item, source) {
    const bytes = new Uint8Array(this.rowBytes);
    super.writeReport(item, source, bytes, new DataView(bytes.buffer), 0); // OUE's thresholds
    return bytes;
  }

  /** Round two: each memoized bit is 1 w.p. p2 if it was 1, w.p. q2 if it was 0. */
  instantaneousResponse(memoized, source, out = new Uint8Array(this.rowBytes), offset = 0) {
    const d = this.domainSize;
    for (let chunk = 0; chunk < d; chunk += 8192) {
      const size = Math.min(8192, d - chunk);
      const words = source.words(size);
      for (let j = 0; j < size; j += 8) {
        let byte = 0;
        const stop = Math.min(j + 8, size);
        for (let k = j; k < stop; k++) {
          const item = chunk + k;
          const was = (memoized[item >> 3] >> (7 - (item & 7))) & 1;
          byte |= (words[k] < (was ? this.p2Threshold : this.q2Threshold) ? 1 : 0) << (7 - (k - j));
        }
        out[offset + ((chunk + j) >> 3)] = byte;
      }
    }
    return out;
  }

  writeReport(item, source, bytes, view, offset) {
    this.writeMemoized(this.permanentResponse(item, source), source, bytes, view, offset);
  }

  writeMemoized(memoized, source, bytes, view, offset) {
    this.instantaneousResponse(memoized, source, bytes, offset);
  }

  /** Memo entries as Python's MemoizedClient.to_dict writes them (the packed bytes as a list). */
  memoToJSON(memoized) {
    return Array.from(memoized);
  }

  memoFromJSON(value, item) {
    const size = this.rowBytes;
    if (!Array.isArray(value) || value.length !== size || !value.every((b) => Number.isInteger(b) && b >= 0 && b <= 255)) {
      throw new IncompatibleStateError(`Memo of item ${item} must be a list of ${size} bytes. Got ${JSON.stringify(value)}.`);
    }
    return Uint8Array.from(value);
  }

  /** Exact law of one report given the memoized bits (round two only), over the 2^d outputs. */
  instantaneousRow(memoized) {
    const d = this.domainSize;
    const row = new Float64Array(2 ** d);
    for (let y = 0; y < row.length; y++) {
      let probability = 1;
      for (let j = 0; j < d; j++) {
        const on = (memoized[j >> 3] >> (7 - (j & 7))) & 1 ? this.p2 : this.q2;
        probability *= (y >> j) & 1 ? on : 1 - on;
      }
      row[y] = probability;
    }
    return row;
  }
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
      throw new IncompatibleStateError(`Not a memoized client state: ${JSON.stringify(state)?.slice(0, 200)}`);
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
        throw new IncompatibleStateError(`Memo key ${JSON.stringify(text)} is not in [0, ${keys}).`);
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
