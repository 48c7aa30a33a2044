// Longitudinal local hashing with memoization, "loloha" (Arcolezi, Pinzón, Palamidessi & Gambs,
// EDBT 2023, Algorithm 1; dpdist.local.frequency.loloha).
//
// A device draws one hash function h of OLH's family [d] -> [g] once and keeps it (its user
// randomness, the seed); a value v is hashed to x = h(v); the permanent response x' = GRR_g(x;
// eps_inf) is memoized per hashed value x; every report is (seed, GRR_g(x'; p2, q2)) with the IRR of
// l-grr, so one report is eps_1-LDP, any number of reports of one value eps_inf-LDP, and values
// that change spend at most g eps_inf.  Variants: "optimal" (OLOLOHA's g, sec. 4.3) and "binary"
// (g = 2).  Reports are OLH's uint64 pairs (seed, value).  ``privatize`` without a memo draws a
// fresh seed and both rounds per value (one report per user), as Python's ``privatize``.

import { IncompatibleStateError, InvalidParameterError } from '../errors.js';
import { NOT_SHOWN } from '../refusals.js';
import { exp } from '../libm.js';
import { EPSILON, frequencyRules, integer, options } from '../params.js';
import { integerRowReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';
import { chain, checkBudgets, grrKeeps, grrProbabilities } from './_longitudinal.js';
import { decodeSeedReport, hashItem, isPrime, writeSeedReport } from './olh.js';

const MERSENNE_31 = 2 ** 31 - 1;
const MAX_CHANNEL_OUTPUTS = 1 << 20;

/** OLOLOHA's g from a = e^eps_inf, b = e^eps_1 (the paper's sec. 4.3; Python's optimal_hash_range). */
export function optimalHashRange(epsilon, epsilon1) {
  const a = exp(epsilon);
  const b = exp(epsilon1);
  const radicand = a ** 4 - 14 * a ** 2 - 12 * a ** 2 * b ** 2 + 12 * a * b + 12 * a ** 3 * b + 1;
  if (radicand <= 0) return 2; // tiny budgets: the formula leaves the reals, the smallest g is the optimum
  const g = (Math.sqrt(radicand) - a ** 2 + 6 * a - 6 * b + 1) / (6 * (a - b));
  return Math.max(2, roundHalfEvenInt(g));
}

/** Python's int(round(x)) for a finite double: ties to even. */
function roundHalfEvenInt(x) {
  const floor = Math.floor(x);
  const rest = x - floor;
  if (rest > 0.5) return floor + 1;
  if (rest < 0.5) return floor;
  return floor % 2 === 0 ? floor : floor + 1;
}

export default class LOLOHA extends FrequencyProtocol {
  static protocol = 'loloha';

  constructor(config) {
    super(
      'loloha',
      config,
      frequencyRules({ epsilon_1: EPSILON, variant: options(['optimal', 'binary']), hash_prime: integer(3, MERSENNE_31) }),
      { labels: null, variant: 'optimal', hash_prime: MERSENNE_31 },
    );
    const { epsilon_1: epsilon1, hash_prime: prime, variant } = this.params;
    if (!(epsilon1 < this.epsilon)) {
      throw new InvalidParameterError(
        `The 'epsilon_1' parameter of LOLOHA (one report) must be below 'epsilon' (the longitudinal bound). ` +
          `Got epsilon_1=${epsilon1} and epsilon=${this.epsilon} instead.`,
      );
    }
    if (!isPrime(prime)) throw new InvalidParameterError(`The 'hash_prime' parameter of LOLOHA must be a prime. Got ${prime} instead.`);
    if (this.domainSize > prime) {
      throw new InvalidParameterError(`The 'domain_size' parameter of LOLOHA must be <= hash_prime = ${prime}. Got ${this.domainSize} instead.`);
    }
    this.prime = prime;
    this.g = variant === 'binary' ? 2 : optimalHashRange(this.epsilon, epsilon1);
    // the two GRR_g rounds' keeps on the 2^-53 grid, as Python's (longitudinal.grrKeeps)
    [this.keep1, this.keep2] = grrKeeps(this.g, this.epsilon, epsilon1);
    [this.p1, this.q1] = grrProbabilities(this.keep1, this.g);
    [this.p2, this.q2] = grrProbabilities(this.keep2, this.g);
    this.p = chain(this.p1, this.q1, this.p2, this.q2)[0];
    this.qOther = (1 - this.p) / (this.g - 1); // a report's probability of one given wrong hash value
    this.format = integerRowReports(2, '<u8'); // (seed, value)
  }

  /** The device keeps its seed and memoizes per hashed value (g keys). */
  get memoized() {
    return {
      keys: this.g,
      userRandomness: true,
      epsilon1: Math.log(this.p / this.qOther),
      epsilonInf: Math.log(this.p1 / this.q1),
      epsilonI: Math.log(this.p2 / this.q2),
    };
  }

  /**
   * A device's hash function {a, b}: seed s = (a - 1) P + b uniform on [0, (P-1)P), a - 1 and b
   * uniform by rejection.  Seeds reach 2^62, beyond a double's integers, so the pair is kept.
   */
  drawUserRandomness(source) {
    const aMinusOne = source.uniformInt(this.prime - 1);
    return { a: aMinusOne + 1, b: source.uniformInt(this.prime) };
  }

  /** The JSON form of Python's BucketMemoClient: [seed], a number up to 2^53, else its decimal string. */
  randomnessToJSON({ a, b }) {
    const seed = BigInt(a - 1) * BigInt(this.prime) + BigInt(b);
    return [seed <= 2n ** 53n ? Number(seed) : seed.toString()];
  }

  checkUserRandomness(randomness) {
    const P = BigInt(this.prime);
    const seeds = (P - 1n) * P;
    const [value] = Array.isArray(randomness) && randomness.length === 1 ? randomness : [null];
    let seed = null;
    if (Number.isSafeInteger(value)) seed = BigInt(value);
    else if (typeof value === 'string' && /^[0-9]{1,20}$/.test(value)) seed = BigInt(value);
    if (seed === null || seed >= seeds) {
      throw new IncompatibleStateError(
        `A LOLOHA client's randomness must be one seed in [0, ${seeds}) (an integer, or its decimal string above 2^53). ` +
          `Got another (${NOT_SHOWN}).`,
      );
    }
    return { a: Number(seed / P) + 1, b: Number(seed % P) };
  }

  /** The memo key of ``item``: its hash under the device's function. */
  bucketOf(item, { a, b }) {
    return hashItem(a, b, item, this.prime, this.g);
  }

  _grr(x, keep, source) {
    const kept = source.bernoulli(keep);
    const other = source.uniformInt(this.g); // drawn either way: the draws must not tell whether it is kept
    return kept ? x : other; // keep, else uniform over all g values
  }

  /** PRR: GRR_g(eps_inf) of a hashed value (what the device memoizes). */
  permanentResponse(hashed, source) {
    return this._grr(hashed, this.keep1, source);
  }

  /** IRR: GRR_g(p2, q2) of a memoized hashed value. */
  instantaneousResponse(memoized, source) {
    return this._grr(memoized, this.keep2, source);
  }

  writeReport(item, source, bytes, view, offset) {
    const randomness = this.drawUserRandomness(source);
    this.writeMemoized(this.permanentResponse(this.bucketOf(item, randomness), source), source, bytes, view, offset, randomness);
  }

  writeMemoized(memoized, source, bytes, view, offset, { a, b }) {
    writeSeedReport(view, offset, a - 1, b, this.prime, this.instantaneousResponse(memoized, source));
  }

  memoToJSON(memoized) {
    return memoized;
  }

  memoFromJSON(value, key) {
    if (!Number.isInteger(value) || value < 0 || value >= this.g) {
      throw new IncompatibleStateError(`A LOLOHA memo maps hash values in [0, ${this.g}) to values in [0, ${this.g}). Got an entry that does not (${NOT_SHOWN}).`);
    }
    return value;
  }

  /** Exact law of one report over (seed, y), column seed * g + y; small hash_prime only. */
  channelRow(item) {
    const P = this.prime;
    const seeds = (P - 1) * P;
    if (seeds * this.g > MAX_CHANNEL_OUTPUTS) throw new InvalidParameterError(`LOLOHA.channelRow enumerates (P-1)P g outputs; only up to ${MAX_CHANNEL_OUTPUTS}.`);
    const row = new Float64Array(seeds * this.g);
    for (let s = 0; s < seeds; s++) {
      const hashed = hashItem(Math.floor(s / P) + 1, s % P, item, P, this.g); // s < 2^20: exact
      for (let y = 0; y < this.g; y++) row[s * this.g + y] = (y === hashed ? this.p : this.qOther) / seeds;
    }
    return row;
  }

  /** Exact law of one report given the seed and the memoized hashed value (round two only), over y. */
  instantaneousRow(memoized) {
    const row = new Float64Array(this.g).fill(this.q2);
    row[memoized] = this.p2;
    return row;
  }

  /** The hash function (a, b) and the reported value of a row. */
  decode(row) {
    return decodeSeedReport(row, this.prime);
  }

  describeReport(row) {
    const { a, b, value } = decodeSeedReport(row, this.prime);
    return `hash function h(x) = ((${a} x + ${b}) mod ${this.prime}) mod ${this.g}, value ${value}`;
  }

  reportIndex(row) {
    const { seed, value } = decodeSeedReport(row, this.prime);
    return seed * this.g + value;
  }

  likelihood(row) {
    const { a, b, value } = decodeSeedReport(row, this.prime);
    return Float64Array.from(this.inputs(), (item) => (hashItem(a, b, item, this.prime, this.g) === value ? this.p : this.qOther));
  }
}
