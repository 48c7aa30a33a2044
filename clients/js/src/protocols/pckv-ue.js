// PCKV-UE, "pckv-ue" (Gu, Li, Cheng, Xiong, Cao, USENIX Security 2020, Algorithms 1 and 2;
// dpdist.local.keyvalue.pckv_ue): Padding-and-Sampling of one pair of the set padded to length l (_padded.js),
// then a vector y over the d' = d + l keys: y_k = v* w.p. a p, -v* w.p. a (1 - p), 0 w.p. 1 - a at the sampled
// key, and +-1 w.p. b/2 each, 0 w.p. 1 - b elsewhere.  a = 1/2, p and b are Python's (Theorem 2's epsilon at most
// the stated one in exact rational arithmetic): _padded.js.  Reports: 2d' bits packed as numpy.packbits, bit i
// says y_i = +1, bit d' + i says y_i = -1.  Every position draws its two Bernoulli coins, the sampled one too.

import { packedBitReports } from '../format.js';
import { PaddedKeyValue, ueConstants } from './_padded.js';

/** The most extended keys d' whose 3^d' outputs channelRow enumerates (Python's channel alike). */
const CHANNEL_KEYS = 10;

export default class PCKVUE extends PaddedKeyValue {
  static protocol = 'pckv-ue';

  constructor(config) {
    super('pckv-ue', config);
    const { a, b, p } = ueConstants(this.epsilon);
    this.a = a;
    this.b = b;
    this.p = p;
    this.format = packedBitReports(2 * this.extendedSize);
  }

  writeReport(set, source, bytes, view, offset) {
    const { key, up } = this.sample(set, source);
    const width = this.extendedSize;
    const row = bytes.subarray(offset, offset + this.rowBytes);
    row.fill(0);
    for (let i = 0; i < width; i++) {
      const sampled = i === key;
      const nonzero = source.bernoulli(sampled ? this.a : this.b);
      const coin = source.bernoulli(sampled ? this.p : 0.5);
      if (!nonzero) continue;
      const positive = sampled ? (coin ? up : !up) : coin;
      const bit = positive ? i : width + i;
      row[bit >> 3] |= 0x80 >> (bit & 7);
    }
  }

  bit(row, index) {
    return (row[index >> 3] >> (7 - (index & 7))) & 1;
  }

  /** Python's report_index: the codes (0: y = 0, 1: +1, 2: -1) in base 3, key 0 the most significant. */
  reportIndex(row) {
    const width = this.extendedSize;
    let index = 0;
    for (let i = 0; i < width; i++) index = 3 * index + this.bit(row, i) + 2 * this.bit(row, width + i);
    return index;
  }

  channelRow(set) {
    const width = this.extendedSize;
    if (width > CHANNEL_KEYS) PaddedKeyValue.refuseChannel(this.display, width, CHANNEL_KEYS);
    const { a, b, p } = this;
    const other = [1 - b, b / 2, b / 2];
    const kept = [[1 - a, a * p, a * (1 - p)], [1 - a, a * (1 - p), a * p]]; // sampled v* = +1, -1
    const law = this.sampleLaw(set);
    const row = new Float64Array(3 ** width);
    const codes = new Array(width);
    for (let y = 0; y < row.length; y++) {
      let rest = y;
      for (let i = width - 1; i >= 0; i--) {
        codes[i] = rest % 3;
        rest = Math.floor(rest / 3);
      }
      let everyone = 1;
      for (let i = 0; i < width; i++) everyone *= other[codes[i]];
      let total = 0;
      for (let k = 0; k < width; k++) {
        for (let s = 0; s < 2; s++) total += law[2 * k + s] * ((everyone * kept[s][codes[k]]) / other[codes[k]]);
      }
      row[y] = total;
    }
    return row;
  }

  describeReport(row) {
    const width = this.extendedSize;
    const said = [];
    for (let i = 0; i < width; i++) {
      const sign = this.bit(row, i) ? '+1' : this.bit(row, width + i) ? '-1' : null;
      if (sign !== null) said.push(i < this.domainSize ? `key ${i}: ${sign}` : `dummy ${i - this.domainSize}: ${sign}`);
    }
    return said.length ? `says ${said.slice(0, 20).join(', ')}${said.length > 20 ? ', …' : ''}` : 'says nothing of any key';
  }
}
