// PCKV-GRR, "pckv-grr" (Gu, Li, Cheng, Xiong, Cao, USENIX Security 2020, Algorithms 1 and 3;
// dpdist.local.keyvalue.pckv_grr): Padding-and-Sampling of one pair of the set padded to length l (_padded.js),
// then <k, v*> w.p. a p, <k, -v*> w.p. a (1 - p), and <i, +-1> for each other key i of the d' = d + l w.p. b/2
// each, b = (1 - a)/(d' - 1).  p and a are Python's (the optimized allocation, Theorem 3's epsilon at most the
// stated one in exact rational arithmetic): _padded.js.  Reports: the item 2i + s, s = 0 for +1 (items below 2d').

import { itemReports } from '../format.js';
import { PaddedKeyValue, grrConstants } from './_padded.js';

export default class PCKVGRR extends PaddedKeyValue {
  static protocol = 'pckv-grr';

  constructor(config) {
    super('pckv-grr', config);
    const { a, p } = grrConstants(this.epsilon, this.paddingLength, this.extendedSize);
    this.a = a;
    this.p = p;
    this.b = (1.0 - a) / (this.extendedSize - 1);
    this.format = itemReports(2 * this.extendedSize);
  }

  writeReport(set, source, bytes, view, offset) {
    const { key, up } = this.sample(set, source);
    const width = this.extendedSize;
    const kept = source.bernoulli(this.a);
    const valueKept = source.bernoulli(this.p);
    let other = source.uniformInt(width - 1); // drawn either way
    if (other >= key) other += 1;
    const fair = source.bernoulli(0.5);
    const positive = kept ? (valueKept ? up : !up) : fair;
    this.format.write(view, offset, 0, 2 * (kept ? key : other) + (positive ? 0 : 1));
  }

  /** Pr[output 2i + s | sampled key k, sign s'] (rows 2k + s'). */
  pairLaw(k, s, output) {
    const i = output >> 1;
    if (i !== k) return this.b / 2;
    return (output & 1) === s ? this.a * this.p : this.a * (1 - this.p);
  }

  channelRow(set) {
    const law = this.sampleLaw(set);
    const width = this.extendedSize;
    const row = new Float64Array(2 * width);
    for (let output = 0; output < 2 * width; output++) {
      let total = 0;
      for (let k = 0; k < width; k++) for (let s = 0; s < 2; s++) total += law[2 * k + s] * this.pairLaw(k, s, output);
      row[output] = total;
    }
    return row;
  }

  describeReport(row) {
    const item = this.reportIndex(row);
    const key = item >> 1;
    const sign = item & 1 ? '-1' : '+1';
    return key < this.domainSize ? `reports key ${key} with value ${sign}` : `reports a dummy key with value ${sign}`;
  }
}
