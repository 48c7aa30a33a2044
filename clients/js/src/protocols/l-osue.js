// Longitudinal OSUE, "l-osue" (Arcolezi, Couchot, Al Bouna & Xiao, ICDE 2022, sec. 4;
// dpdist.local.frequency.l_osue): OUE(eps_inf) memoized per value, then SUE with the IRR budget of eps_1
// (the rounds chained and the device's Memo: _longitudinal.js; the bits: _unary.js).

import { IncompatibleStateError } from '../errors.js';
import { NOT_SHOWN } from '../refusals.js';
import { exp } from '../libm.js';
import { EPSILON } from '../params.js';
import { chain, checkBudgets } from './_longitudinal.js';
import { UnaryEncoding } from './_unary.js';

const SCALE = 4294967296; // 2^32

/** SUE bits of budget ``epsilonIrr`` realized on the 2^-32 grid (p rounded down, q up), as Python. */
function irrProbabilities(epsilonIrr) {
  const half = exp(epsilonIrr / 2);
  const p = half / (half + 1);
  return [Math.floor(p * SCALE) / SCALE, Math.ceil((1 - p) * SCALE) / SCALE];
}

/** L-OSUE: OUE(eps_inf) memoized, then SUE with the IRR budget of eps_1 (Python's LOSUE). */
export default class LOSUE extends UnaryEncoding {
  static protocol = 'l-osue';

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
      throw new IncompatibleStateError(`A memo maps items to lists of ${size} bytes. Got an entry that does not (${NOT_SHOWN}).`);
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
