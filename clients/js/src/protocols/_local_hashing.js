// Local hashing (Wang et al. 2017, sec. 4.4), the machinery of "olh" (olh.js) and "rlh" (rlh.js):
// dpdist.local.frequency._local_hashing and _hashing.
//
// Hash family h_{a,b}(x) = ((a x + b) mod P) mod g, a in [1, P), b in [0, P); the seed
// s = (a - 1) P + b is uniform on [0, (P-1)P) when a - 1 and b are independent uniform
// integers (drawn by rejection).  The hashed value is perturbed by g-ary randomized response
// in its "keep with probability lambda = (e^eps - 1)/(e^eps + g - 1), else uniform over all g"
// form, with an exact Bernoulli(lambda).  Reports are uint64 pairs (seed, value), little-endian.

import { InvalidParameterError } from '../errors.js';
import { mixtureKeep } from '../grid.js';
import { frequencyRules, integer } from '../params.js';
import { integerRowReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';

export const MERSENNE_31 = 2 ** 31 - 1;
const MAX_CHANNEL_OUTPUTS = 1 << 20;

export function isPrime(n) {
  if (n < 2) return false;
  if (n < 4) return true;
  if (n % 2 === 0) return false;
  for (let k = 3; k * k <= n; k += 2) if (n % k === 0) return false;
  return true;
}

/** h_{a,b}(item) = ((a item + b) mod P) mod g. */
export function hashItem(a, b, item, prime, g) {
  return ((mulMod(a, item, prime) + b) % prime) % g;
}

/**
 * Write the uint64 pair (seed, value) of a hash report, seed = (a - 1) P + b < 2^62: 32-bit halves
 * from 16-bit pieces of P (products < 2^47).
 */
export function writeSeedReport(view, offset, aMinusOne, b, prime, value) {
  const pHigh = Math.floor(prime / 65536);
  const pLow = prime % 65536;
  const lowPart = aMinusOne * pLow + b; // < 2^48
  const highPart = aMinusOne * pHigh; // < 2^46, weight 2^16
  const lowWord = (lowPart % 4294967296) + (highPart % 65536) * 65536;
  const seedLow = lowWord % 4294967296;
  const seedHigh = Math.floor(lowPart / 4294967296) + Math.floor(highPart / 65536) + Math.floor(lowWord / 4294967296);
  view.setUint32(offset, seedLow, true);
  view.setUint32(offset + 4, seedHigh, true);
  view.setUint32(offset + 8, value % 4294967296, true); // value < g < 2^53 (g > 2^32 from eps ~ 22.2)
  view.setUint32(offset + 12, Math.floor(value / 4294967296), true);
}

/** The seed's coefficients (a, b), the reported value and the seed (a Number, exact for small P) of a row. */
export function decodeSeedReport(row, prime) {
  const view = new DataView(row.buffer, row.byteOffset, row.byteLength);
  const seed = view.getUint32(0, true) + view.getUint32(4, true) * 4294967296;
  const seedBig = BigInt(view.getUint32(0, true)) + (BigInt(view.getUint32(4, true)) << 32n);
  const P = BigInt(prime);
  const value = view.getUint32(8, true) + view.getUint32(12, true) * 4294967296;
  return { a: Number(seedBig / P) + 1, b: Number(seedBig % P), value, seed };
}

/** (a x) mod P without rounding: a, x < 2^31, split x in 16-bit halves (all products < 2^53). */
export function mulMod(a, x, prime) {
  const high = Math.floor(x / 65536);
  const low = x % 65536;
  return (((a * high) % prime) * 65536 + a * low) % prime;
}

/** OLH's machinery, shared by OLH (olh.js) and RLH (rlh.js): a subclass gives its name, rules and ``hashRange()``. */
export class LocalHashing extends FrequencyProtocol {
  /**
   * @param {object} config the protocol's config
   * @param {string} name registry name: 'olh', or a variant over the same family and reports (rlh.js)
   * @param {object} rules the parameters beyond epsilon, domain_size and labels, and their defaults
   */
  constructor(
    config,
    name,
    rules = { hash_prime: integer(3, MERSENNE_31) },
    defaults = { hash_prime: MERSENNE_31 },
  ) {
    super(name, config, frequencyRules(rules), { labels: null, ...defaults });
    const prime = this.params.hash_prime;
    if (!isPrime(prime)) throw new InvalidParameterError(`The 'hash_prime' parameter of ${this.display} must be a prime. Got ${prime} instead.`);
    if (this.domainSize > prime) {
      throw new InvalidParameterError(
        `The 'domain_size' parameter of ${this.display} must be <= hash_prime = ${prime} (items are hashed modulo that prime). Got ${this.domainSize} instead.`,
      );
    }
    this.prime = prime;
    this.g = this.hashRange();
    this.keep = mixtureKeep(this.epsilon, 1, this.g); // on the 2^-53 grid, as Python's (grid.js)
    this.format = integerRowReports(2, '<u8'); // (seed, value)
  }

  /** The range g of the hash values (each subclass's rule). */
  hashRange() {
    throw new Error(`${this.display} states no hash range`);
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
    const value = kept ? hashed : other;
    writeSeedReport(view, offset, aMinusOne, b, P, value);
  }

  /** The seed's coefficients (a, b) and the reported value of a row. */
  decode(row) {
    return decodeSeedReport(row, this.prime);
  }

  /** Exact law over (seed, value), column seed * g + value; small hash_prime only. */
  channelRow(item) {
    const P = this.prime;
    const seeds = (P - 1) * P;
    if (seeds * this.g > MAX_CHANNEL_OUTPUTS) throw new InvalidParameterError(`${this.display}.channelRow enumerates (P-1)P g outputs; only up to ${MAX_CHANNEL_OUTPUTS}.`);
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
