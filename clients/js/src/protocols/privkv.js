// PrivKV, "privkv" (Ye, Hu, Meng, Zheng, IEEE S&P 2019; dpdist.local.keyvalue.privkv): one key j uniform on the
// domain; holding j with value v, v* = +-1 (+1 w.p. (1 + v)/2) is kept w.p. p2 else flipped, and <1, v'> is
// reported w.p. p1, else <0, 0>; not holding j, <0, 0> w.p. p1, else <1, v'> of a fair sign through the same
// perturbation.  p1 = p2 is the largest multiple of 2^-53 with odds at most e^(eps/2) (grid.js, as Python).
// Reports: the item 3j + o, o = 0 for <0, 0>, 1 for <1, 1>, 2 for <1, -1> (items below 3d).

import { expLower, oddsProbability } from '../grid.js';
import { itemReports } from '../format.js';
import { KeyValueProtocol, keyValueRules } from './_keyvalue.js';

export default class PrivKV extends KeyValueProtocol {
  static protocol = 'privkv';

  constructor(config) {
    super('privkv', config, keyValueRules());
    this.p1 = oddsProbability(expLower(this.epsilon / 2));
    this.p2 = this.p1;
    this.format = itemReports(3 * this.domainSize);
  }

  get display() {
    return 'PrivKV';
  }

  writeReport(set, source, bytes, view, offset) {
    const key = source.uniformInt(this.domainSize);
    const at = set.keys.indexOf(key);
    const held = at >= 0;
    const up = this.discretize(held ? set.values[at] : 0, source); // a fair sign where the key is not held
    const kept = source.bernoulli(this.p2);
    const truthful = source.bernoulli(this.p1);
    const pair = (kept ? up : !up) ? 1 : 2;
    const outcome = held ? (truthful ? pair : 0) : truthful ? 0 : pair;
    this.format.write(view, offset, 0, 3 * key + outcome);
  }

  /** Exact law of the report for a checked set, indexed by the reported item (Python's channel). */
  channelRow(set) {
    const { p1, p2 } = this;
    const d = this.domainSize;
    const row = new Float64Array(3 * d);
    for (let j = 0; j < d; j++) {
      row[3 * j] = p1 / d;
      row[3 * j + 1] = (1 - p1) / 2 / d;
      row[3 * j + 2] = (1 - p1) / 2 / d;
    }
    set.keys.forEach((key, at) => {
      const up = KeyValueProtocol.up(set.values[at]);
      const positive = up * p2 + (1 - up) * (1 - p2);
      row[3 * key] = (1 - p1) / d;
      row[3 * key + 1] = (p1 * positive) / d;
      row[3 * key + 2] = (p1 * (1 - positive)) / d;
    });
    return row;
  }

  describeReport(row) {
    const item = this.reportIndex(row);
    const key = Math.floor(item / 3);
    return [`says <0, 0> of key ${key}`, `says <1, +1> of key ${key}`, `says <1, -1> of key ${key}`][item % 3];
  }
}
