// Apple's Hadamard count-mean sketch, "hcms" (Apple's Differential Privacy Team, "Learning with Privacy at
// Scale", 2017, sec. 3, Alg. 3; dpdist.local.frequency.hcms): j and l uniform, the Hadamard entry
// H[h_j(v), l] = (-1)^popcount(h_j(v) & l) kept w.p. e^eps/(e^eps + 1); a report is (j, l, bit = +1) in the
// narrowest unsigned dtype (the family: _sketch.js).

import { expLower, oddsProbability } from '../grid.js';
import { integerRowReports, smallestUnsigned } from '../format.js';
import { Sketch, popcount } from './_sketch.js';

/** Hadamard count-mean sketch: one bit of H[h_j(v), l] per report (Alg. 3). */
export default class HCMS extends Sketch {
  static protocol = 'hcms';

  constructor(config) {
    super('hcms', config, (k, m) => 2 * k * m);
    this.p = oddsProbability(expLower(this.epsilon)); // on the 2^-53 grid (grid.js)
    this.format = integerRowReports(3, smallestUnsigned(Math.max(this.k, this.m, 2))); // (function, column, bit)
  }

  plus(j, l, item) {
    return popcount(this.hashed(j, item) & l) % 2 === 0;
  }

  writeReport(item, source, bytes, view, offset) {
    const j = source.uniformInt(this.k);
    const l = source.uniformInt(this.m);
    const plus = this.plus(j, l, item);
    const bit = source.bernoulli(this.p) ? plus : !plus;
    [j, l, bit ? 1 : 0].forEach((entry, column) => this.format.write(view, offset, column, entry));
  }

  decode(row) {
    const [j, l, bit] = [0, 1, 2].map((column) => this.format.readRow(row, column));
    return { j, l, bit };
  }

  /** Python's column: (j m + l) 2 + bit. */
  reportIndex(row) {
    const { j, l, bit } = this.decode(row);
    return (j * this.m + l) * 2 + bit;
  }

  channelRow(item) {
    const { k, m, p } = this;
    const row = new Float64Array(2 * k * m);
    for (let j = 0; j < k; j++) {
      for (let l = 0; l < m; l++) {
        const plus = this.plus(j, l, item);
        row[(j * m + l) * 2 + 1] = (plus ? p : 1 - p) / (k * m);
        row[(j * m + l) * 2] = (plus ? 1 - p : p) / (k * m);
      }
    }
    return row;
  }

  likelihood(row) {
    const { j, l, bit } = this.decode(row);
    return Float64Array.from(this.inputs(), (item) => (this.plus(j, l, item) === (bit === 1) ? this.p : 1 - this.p));
  }

  describeReport(row) {
    const { j, l, bit } = this.decode(row);
    return `hash function ${j}, Hadamard column ${l}, sign ${bit ? '+1' : '-1'}`;
  }
}
