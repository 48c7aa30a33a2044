// Optimized count-mean sketch with randomized response, "ocms" (Pan, IEEE CSF 2025, Algorithm 1;
// dpdist.local.frequency.ocms).
//
// The report is OLH's (olh.js): a hash function of the Carter-Wegman family h_{a,b}(x) = ((a x + b) mod P) mod m,
// drawn per user, and the hashed item perturbed by m-ary randomized response (keep w.p. lambda, else uniform over
// all m, an exact Bernoulli(lambda) on Python's 2^-53 grid).  What OCMS+RR changes is the width m (Algorithm 1,
// HASHRANGE; eq. 13, 20 and Theorem 3.8), derived here from epsilon as Python derives it:
//   worst-case, f* > 1/2:  1 + e^(eps/2);
//   worst-case, f* <= 1/2: 1 + Delta / (f* e^eps + 1 - f*), Delta = e^(eps/2) sqrt([(1-f*)e^eps + f*][f* e^eps + 1 - f*]);
//   l2:                    1 + Delta_l / (e^eps + d - 1), Delta_l = e^(eps/2) sqrt((e^eps + d - 1)(d e^eps - e^eps + 1));
// Algorithm 1 rounds these to the closest integer; like Python, the client takes the better of the two integers
// around them by the loss of eq. 19 / 21 (the smaller on a tie), kept in [2, 2^20].
// Reports are uint64 pairs (seed, value), little-endian.

import { InvalidParameterError } from '../errors.js';
import { mixtureKeep } from '../grid.js';
import { exp } from '../libm.js';
import { frequencyRules, integer, options } from '../params.js';
import { integerRowReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';
import { decodeSeedReport, hashItem, isPrime, writeSeedReport } from './olh.js';

const MERSENNE_31 = 2 ** 31 - 1;
const MAX_WIDTH = 2 ** 20;
const MAX_CHANNEL_OUTPUTS = 1 << 20;

/** A finite float in [0, 1] (Python's Interval(0, 1, closed="both")). */
function unitInterval() {
  return {
    isFloat: true,
    describe: () => 'a finite float >= 0 and <= 1',
    check(value) {
      if (typeof value !== 'number' || !Number.isFinite(value) || !(value >= 0 && value <= 1)) throw new RangeError();
      return value;
    },
  };
}

/** The loss of width m for n = 1 and collision probability 1/m (eq. 19, 21), as Python's _loss. */
function loss(width, e, domainSize, objective, maxFrequency) {
  const p = e / (e + width - 1.0);
  const q = 1.0 / width;
  const scale = (p - q) ** 2;
  if (objective === 'l2') return (p * (1.0 - p) + (domainSize - 1.0) * q * (1.0 - q)) / scale;
  const atZero = (q * (1.0 - q)) / scale;
  const atBound = (maxFrequency * p * (1.0 - p) + (1.0 - maxFrequency) * q * (1.0 - q)) / scale;
  return Math.max(atZero, atBound);
}

/** The width m of OCMS+RR (Python's ocms_hash_range): the better of the two integers around the paper's optimum. */
export function ocmsHashRange(epsilon, domainSize, objective, maxFrequency) {
  const e = exp(epsilon);
  const root = exp(epsilon / 2);
  let optimum;
  if (objective === 'l2') {
    const delta = root * Math.sqrt((e + domainSize - 1.0) * (domainSize * e - e + 1.0));
    optimum = 1.0 + delta / (e + domainSize - 1.0);
  } else if (maxFrequency > 0.5) {
    optimum = 1.0 + root;
  } else {
    const f = maxFrequency;
    const delta = root * Math.sqrt(((1.0 - f) * e + f) * (f * e + 1.0 - f));
    optimum = 1.0 + delta / (f * e + 1.0 - f);
  }
  const low = Math.min(MAX_WIDTH, Math.max(2, Math.floor(optimum)));
  const high = Math.min(MAX_WIDTH, low + 1);
  return loss(high, e, domainSize, objective, maxFrequency) < loss(low, e, domainSize, objective, maxFrequency) ? high : low;
}

export default class OCMS extends FrequencyProtocol {
  static protocol = 'ocms';

  constructor(config) {
    super(
      'ocms',
      config,
      frequencyRules({ objective: options(['worst-case', 'l2']), max_frequency: unitInterval(), hash_prime: integer(3, MERSENNE_31) }),
      { labels: null, objective: 'worst-case', max_frequency: 1.0, hash_prime: MERSENNE_31 },
    );
    const prime = this.params.hash_prime;
    if (!isPrime(prime)) throw new InvalidParameterError(`The 'hash_prime' parameter of OCMS must be a prime. Got ${prime} instead.`);
    if (this.domainSize > prime) {
      throw new InvalidParameterError(
        `The 'domain_size' parameter of OCMS must be <= hash_prime = ${prime} (items are hashed modulo that prime). Got ${this.domainSize} instead.`,
      );
    }
    this.prime = prime;
    this.g = ocmsHashRange(this.epsilon, this.domainSize, this.params.objective, this.params.max_frequency);
    this.keep = mixtureKeep(this.epsilon, 1, this.g); // on the 2^-53 grid, as Python's (grid.js)
    this.format = integerRowReports(2, '<u8'); // (seed, value)
  }

  /** h_seed(item) for the seed's coefficients a (>= 1) and b. */
  hash(a, b, item) {
    return hashItem(a, b, item, this.prime, this.g);
  }

  writeReport(item, source, bytes, view, offset) {
    const P = this.prime;
    const aMinusOne = source.uniformInt(P - 1);
    const b = source.uniformInt(P);
    const hashed = this.hash(aMinusOne + 1, b, item);
    const kept = source.bernoulli(this.keep);
    const other = source.uniformInt(this.g); // drawn either way: the draws must not tell whether it is kept
    writeSeedReport(view, offset, aMinusOne, b, P, kept ? hashed : other);
  }

  /** The seed's coefficients (a, b) and the reported value of a row. */
  decode(row) {
    return decodeSeedReport(row, this.prime);
  }

  /** Exact law over (seed, value), column seed * m + value; small hash_prime only. */
  channelRow(item) {
    const P = this.prime;
    const seeds = (P - 1) * P;
    if (seeds * this.g > MAX_CHANNEL_OUTPUTS) throw new InvalidParameterError(`OCMS.channelRow enumerates (P-1)P m outputs; only up to ${MAX_CHANNEL_OUTPUTS}.`);
    const row = new Float64Array(seeds * this.g);
    const other = (1 - this.keep) / this.g;
    for (let s = 0; s < seeds; s++) {
      const hashed = this.hash(Math.floor(s / P) + 1, s % P, item);
      for (let y = 0; y < this.g; y++) row[s * this.g + y] = ((y === hashed ? this.keep : 0) + other) / seeds;
    }
    return row;
  }

  describeReport(row) {
    const { a, b, value } = this.decode(row);
    return `hash function h(x) = ((${a} x + ${b}) mod ${this.prime}) mod ${this.g}, value ${value}`;
  }

  reportIndex(row) {
    const { seed, value } = this.decode(row);
    return seed * this.g + value;
  }

  likelihood(row) {
    const { a, b, value } = this.decode(row);
    const other = (1 - this.keep) / this.g;
    return Float64Array.from(this.inputs(), (item) => (this.hash(a, b, item) === value ? this.keep : 0) + other);
  }
}
