// Random wheel spinner, "rws" (Fang, Chen & Liu, USENIX Security 2025; dpdist.local.frequency.rws).
//
// The wheel has m positions, m the smallest prime >= d (positions >= d hold no item).  A device draws a
// multiplier a uniform on [1, m) (its public set S_a = {0, a, ..., (k-1) a} mod m) and spins: with
// probability lambda (Python's: the largest 2^-53 grid value whose ratio 1 + lambda m / (k (1 - lambda))
// is at most e^eps, grid.js) a uniform position of v - S_a, else a uniform position of all m.  Every
// draw is made either way, so the draws never tell the value or whether it was kept.  k is the floor or
// the ceiling of m/(e^eps + 1), the lower mean MSE (1 when it is at most 1), as Python derives it.
// A report is one integer, (a - 1) m + y, in the narrowest unsigned dtype holding (m - 1) m values,
// little-endian (written from a BigInt where (m - 1) m exceeds 2^53).

import { InvalidParameterError } from '../errors.js';
import { mixtureKeep } from '../grid.js';
import { exp } from '../libm.js';
import { frequencyRules } from '../params.js';
import { itemReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';
import { isPrime, mulMod } from './_local_hashing.js';
import { subsetVariance } from './_subsets.js';

const MAX_CHANNEL_OUTPUTS = 1 << 16;

/** The smallest prime >= n. */
export function nextPrime(n) {
  let candidate = Math.max(2, n);
  while (!isPrime(candidate)) candidate += 1;
  return candidate;
}

/** k: the floor or the ceiling of m/(e^eps + 1), the lower mean MSE; 1 when it is at most 1. */
export function subsetSize(epsilon, m, d) {
  const optimum = m / (exp(epsilon) + 1.0);
  if (optimum <= 1.0) return 1;
  const low = Math.floor(optimum);
  const high = Math.min(m - 1, Math.ceil(optimum));
  return subsetVariance(epsilon, m, d, high) < subsetVariance(epsilon, m, d, low) ? high : low;
}

export default class RWS extends FrequencyProtocol {
  static protocol = 'rws';

  constructor(config) {
    super('rws', config, frequencyRules(), { labels: null });
    this.positions = nextPrime(this.domainSize);
    this.subsetSize = subsetSize(this.epsilon, this.positions, this.domainSize);
    this.keep = mixtureKeep(this.epsilon, this.subsetSize, this.positions);
    this.qPosition = (1.0 - this.keep) / this.positions;
    this.pPosition = this.keep / this.subsetSize + this.qPosition;
    this.format = itemReports((this.positions - 1) * this.positions); // (a - 1) m + y
    this.wide = (this.positions - 1) * this.positions > Number.MAX_SAFE_INTEGER;
  }

  writeReport(item, source, bytes, view, offset) {
    const m = this.positions;
    const aMinusOne = source.uniformInt(m - 1);
    const kept = source.bernoulli(this.keep);
    const step = source.uniformInt(this.subsetSize); // drawn either way, as the uniform position
    const other = source.uniformInt(m);
    const spun = (item - mulMod(aMinusOne + 1, step, m) + m) % m; // a position of v - S_a
    const y = kept ? spun : other;
    this.format.write(view, offset, 0, this.wide ? BigInt(aMinusOne) * BigInt(m) + BigInt(y) : aMinusOne * m + y);
  }

  /** The multiplier a and the position y of a row. */
  decode(row) {
    const m = this.positions;
    if (this.wide) {
      const index = new DataView(row.buffer, row.byteOffset, row.byteLength).getBigUint64(0, true);
      return { a: Number(index / BigInt(m)) + 1, y: Number(index % BigInt(m)) };
    }
    const index = this.format.readRow(row);
    return { a: Math.floor(index / m) + 1, y: index % m };
  }

  /** The items a report supports: y + a i mod m for i < k, those below d. */
  supported(a, y) {
    const m = this.positions;
    const items = [];
    for (let i = 0; i < this.subsetSize; i++) {
      const position = (y + mulMod(a, i, m)) % m;
      if (position < this.domainSize) items.push(position);
    }
    return items;
  }

  /** Exact law over the reports (a - 1) m + y; small d only. */
  channelRow(item) {
    const m = this.positions;
    const outputs = (m - 1) * m;
    if (outputs > MAX_CHANNEL_OUTPUTS) throw new InvalidParameterError(`RWS.channelRow enumerates (m-1) m outputs; only up to ${MAX_CHANNEL_OUTPUTS}.`);
    const row = new Float64Array(outputs).fill(this.qPosition / (m - 1));
    for (let a = 1; a < m; a++) {
      for (let i = 0; i < this.subsetSize; i++) {
        const y = (item - mulMod(a, i, m) + m) % m;
        row[(a - 1) * m + y] = this.pPosition / (m - 1);
      }
    }
    return row;
  }

  likelihood(row) {
    const { a, y } = this.decode(row);
    const support = new Set(this.supported(a, y));
    return Float64Array.from(this.inputs(), (item) => (support.has(item) ? this.pPosition : this.qPosition));
  }

  describeReport(row) {
    const { a, y } = this.decode(row);
    const items = this.supported(a, y).map((item) => this.labelOf(item));
    return `wheel multiplier ${a}, position ${y}: supports ${items.length ? items.join(', ') : 'no item'}`;
  }

  reportIndex(row) {
    return this.format.readRow(row);
  }
}
