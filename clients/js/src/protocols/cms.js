// Apple's count-mean sketch, "cms" (Apple's Differential Privacy Team, "Learning with Privacy at Scale",
// 2017, sec. 3, Alg. 1; dpdist.local.frequency.cms): one of k public hash functions h_j uniform, the
// m-coordinate vector +1 at h_j(v) and -1 elsewhere, every coordinate flipped w.p. 1/(e^(eps/2) + 1);
// a report is uint64 (j, then the m bits, packed little-endian 64 to a word). Every Bernoulli is exact
// (RandomSource.bernoulli), so the law is the channel Python's channel() states (the family: _sketch.js).

import { InvalidParameterError } from '../errors.js';
import { expLower, oddsProbability } from '../grid.js';
import { integerRowReports } from '../format.js';
import { MAX_CHANNEL_OUTPUTS, Sketch } from './_sketch.js';

/** Count-mean sketch: m bits per report, one of them the item's coordinate (Alg. 1). */
export default class CMS extends Sketch {
  static protocol = 'cms';

  constructor(config) {
    super('cms', config, (k, m) => k * (m + 1));
    // per coordinate the largest 2^-53 grid probability with p / (1 - p) <= e^(eps/2) (grid.js)
    this.p = oddsProbability(expLower(this.epsilon / 2.0));
    this.words = Math.ceil(this.m / 64);
    this.format = integerRowReports(1 + this.words, '<u8'); // function index, then the m bits in words
  }

  writeReport(item, source, bytes, view, offset) {
    const j = source.uniformInt(this.k);
    const own = this.hashed(j, item);
    view.setUint32(offset, j, true);
    view.setUint32(offset + 4, 0, true);
    const start = offset + 8;
    bytes.fill(0, start, start + 8 * this.words);
    for (let l = 0; l < this.m; l++) {
      // the item's coordinate reads +1 w.p. p, every other one w.p. 1 - p (flipped from -1)
      const plus = l === own ? source.bernoulli(this.p) : !source.bernoulli(this.p);
      if (plus) bytes[start + (l >> 3)] |= 1 << (l & 7); // little-endian bits of little-endian words
    }
  }

  bit(row, l) {
    return (row[8 + (l >> 3)] >> (l & 7)) & 1;
  }

  /** Python's column: j 2^m + the bits as an integer (small m only). */
  reportIndex(row) {
    const j = new DataView(row.buffer, row.byteOffset, 8).getUint32(0, true);
    let bits = 0;
    for (let l = 0; l < this.m; l++) bits += this.bit(row, l) * 2 ** l;
    return j * 2 ** this.m + bits;
  }

  channelRow(item) {
    const { k, m, p } = this;
    if (k * 2 ** m > MAX_CHANNEL_OUTPUTS) throw new InvalidParameterError(`CMS.channelRow enumerates k 2^m outputs; only up to ${MAX_CHANNEL_OUTPUTS}.`);
    const row = new Float64Array(k * 2 ** m);
    for (let j = 0; j < k; j++) {
      const own = this.hashed(j, item);
      for (let x = 0; x < 2 ** m; x++) {
        let probability = 1 / k;
        for (let l = 0; l < m; l++) {
          const plus = (x >> l) & 1;
          probability *= l === own ? (plus ? p : 1 - p) : plus ? 1 - p : p;
        }
        row[j * 2 ** m + x] = probability;
      }
    }
    return row;
  }

  /** Pr[report | item] up to a factor common to all items: only the item's coordinate depends on it. */
  likelihood(row) {
    const j = new DataView(row.buffer, row.byteOffset, 8).getUint32(0, true);
    const ratio = this.p / (1 - this.p);
    return Float64Array.from(this.inputs(), (item) => (this.bit(row, this.hashed(j, item)) ? ratio : 1 / ratio));
  }

  describeReport(row) {
    const j = new DataView(row.buffer, row.byteOffset, 8).getUint32(0, true);
    let set = 0;
    for (let l = 0; l < this.m; l++) set += this.bit(row, l);
    return `hash function ${j}, ${set} of ${this.m} coordinates +1`;
  }
}
