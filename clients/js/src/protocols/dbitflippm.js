// Permanently memoized d-bit flipping, "dbitflippm" (Ding, Kulkarni & Yekhanin, NeurIPS 2017,
// sec. 3-4; dpdist.local.frequency.dbitflippm).
//
// Items are the paper's b buckets.  A device samples d distinct bucket indices j_1 < ... < j_d once
// (its user randomness, public: sent with every report) and, for its bucket v, draws the bits
// b_s = 1 w.p. p = e^{eps/2}/(e^{eps/2}+1) if j_s = v, w.p. q = 1/(e^{eps/2}+1) otherwise, once
// per bucket; every later report of a value in that bucket replays them (no second round), so
// any number of reports of one value is eps-LDP (eps/2 when d = 1).  Bits compare 32-bit words with
// the thresholds floor(p 2^32), ceil(q 2^32), as in Python.  Reports are uint32 rows of 2d columns:
// the sorted indices, then their bits.  ``privatize`` without a memo draws fresh indices and bits
// per value (one report per user), as Python's ``privatize``.

import { IncompatibleStateError, InvalidParameterError } from '../errors.js';
import { NOT_SHOWN } from '../refusals.js';
import { exp } from '../libm.js';
import { frequencyRules, integer, optional } from '../params.js';
import { integerRowReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';
import { comb } from './ss.js';

const SCALE = 4294967296; // 2^32
const MAX_CHANNEL_OUTPUTS = 1 << 20;

export default class DBitFlipPM extends FrequencyProtocol {
  static protocol = 'dbitflippm';

  constructor(config) {
    super('dbitflippm', config, frequencyRules({ sampled_bits: optional(integer(1, 2 ** 31 - 1)) }), {
      labels: null,
      sampled_bits: null,
    });
    const b = this.domainSize;
    const d = this.params.sampled_bits ?? b;
    if (d > b) {
      throw new InvalidParameterError(
        `The 'sampled_bits' parameter of dBitFlipPM must be <= domain_size = ${b} (the number of buckets). Got ${d} instead.`,
      );
    }
    this.d = d;
    const half = exp(this.epsilon / 2);
    this.pThreshold = Math.floor((half / (half + 1)) * SCALE);
    this.qThreshold = Math.ceil((1 / (half + 1)) * SCALE);
    this.p = this.pThreshold / SCALE;
    this.q = this.qThreshold / SCALE;
    this.format = integerRowReports(2 * d, '<u4'); // d increasing buckets, then d bits
  }

  get display() {
    return 'dBitFlipPM';
  }

  /** The device keeps its sampled indices and memoizes the bits per bucket (b keys). */
  get memoized() {
    const epsilon1 = this.d > 1 ? this.epsilon : this.epsilon / 2;
    // no second round: a report repeats its memo, so two reports show whether the bucket changed
    return { keys: this.domainSize, userRandomness: true, epsilon1, epsilonInf: epsilon1, epsilonI: Infinity };
  }

  /** d distinct bucket indices, uniform, sorted (a partial Fisher-Yates shuffle by exact uniform draws). */
  drawUserRandomness(source) {
    const b = this.domainSize;
    const picked = new Map(); // sparse shuffle of 0..b-1
    const out = new Array(this.d);
    for (let s = 0; s < this.d; s++) {
      const r = s + source.uniformInt(b - s);
      out[s] = picked.get(r) ?? r;
      picked.set(r, picked.get(s) ?? s);
    }
    return out.sort((x, y) => x - y);
  }

  randomnessToJSON(indices) {
    return [...indices];
  }

  checkUserRandomness(randomness) {
    const b = this.domainSize;
    const ok =
      Array.isArray(randomness) &&
      randomness.length === this.d &&
      randomness.every((j, s) => Number.isInteger(j) && j >= 0 && j < b && (s === 0 || j > randomness[s - 1]));
    if (!ok) {
      throw new IncompatibleStateError(
        `A dBitFlipPM client's randomness must be ${this.d} increasing bucket indices in [0, ${b}). Got another (${NOT_SHOWN}).`,
      );
    }
    return [...randomness];
  }

  bucketOf(item) {
    return item;
  }

  /** The bits of bucket ``item`` at the sampled indices (what the device memoizes). */
  permanentResponse(item, source, indices) {
    const words = source.words(this.d);
    return indices.map((j, s) => (words[s] < (j === item ? this.pThreshold : this.qThreshold) ? 1 : 0));
  }

  writeReport(item, source, bytes, view, offset) {
    const indices = this.drawUserRandomness(source);
    this.writeMemoized(this.permanentResponse(item, source, indices), source, bytes, view, offset, indices);
  }

  /** No second round: the memoized bits are reported as they are, after the indices. */
  writeMemoized(bits, source, bytes, view, offset, indices) {
    for (let s = 0; s < this.d; s++) {
      view.setUint32(offset + 4 * s, indices[s], true);
      view.setUint32(offset + 4 * (this.d + s), bits[s], true);
    }
  }

  memoToJSON(bits) {
    return [...bits];
  }

  memoFromJSON(value, key) {
    if (!Array.isArray(value) || value.length !== this.d || !value.every((bit) => bit === 0 || bit === 1)) {
      throw new IncompatibleStateError(`A dBitFlipPM memo maps buckets in [0, ${this.domainSize}) to ${this.d} bits. Got an entry that does not (${NOT_SHOWN}).`);
    }
    return [...value];
  }

  /** Indices and bits of a row. */
  decode(row) {
    const view = new DataView(row.buffer, row.byteOffset, row.byteLength);
    const indices = Array.from({ length: this.d }, (_, s) => view.getUint32(4 * s, true));
    const bits = Array.from({ length: this.d }, (_, s) => view.getUint32(4 * (this.d + s), true));
    return { indices, bits };
  }

  /** Python's column: colex rank of the index set times 2^d, plus sum_s bit_s 2^s. */
  reportIndex(row) {
    // decode()'s entries read in place (no DataView and arrays per report: the channel tests index millions)
    const { d, format } = this;
    let rank = 0;
    let bits = 0;
    for (let s = 0; s < d; s++) {
      rank += comb(format.readRow(row, s), s + 1);
      bits += format.readRow(row, d + s) * 2 ** s;
    }
    return rank * 2 ** d + bits;
  }

  /** Exact law of one report over Python's columns; small b only. */
  channelRow(item) {
    const { d } = this;
    const b = this.domainSize;
    const subsets = comb(b, d);
    if (subsets * 2 ** d > MAX_CHANNEL_OUTPUTS) throw new InvalidParameterError(`dBitFlipPM.channelRow enumerates C(b, d) 2^d outputs; only up to ${MAX_CHANNEL_OUTPUTS}.`);
    const row = new Float64Array(subsets * 2 ** d);
    const visit = (start, chosen) => {
      if (chosen.length === d) {
        const rank = chosen.reduce((total, j, s) => total + comb(j, s + 1), 0);
        for (let y = 0; y < 2 ** d; y++) {
          let probability = 1 / subsets;
          for (let s = 0; s < d; s++) {
            const on = chosen[s] === item ? this.p : this.q;
            probability *= (y >> s) & 1 ? on : 1 - on;
          }
          row[rank * 2 ** d + y] = probability;
        }
        return;
      }
      for (let j = start; j < b; j++) visit(j + 1, [...chosen, j]);
    };
    visit(0, []);
    return row;
  }

  likelihood(row) {
    const { indices, bits } = this.decode(row);
    return Float64Array.from(this.inputs(), (item) =>
      indices.reduce((product, j, s) => {
        const on = j === item ? this.p : this.q;
        return product * (bits[s] ? on : 1 - on);
      }, 1),
    );
  }

  describeReport(row) {
    const { indices, bits } = this.decode(row);
    return `buckets ${indices.map((j, s) => `${this.labelOf(j)}:${bits[s]}`).join(', ')}`;
  }
}
