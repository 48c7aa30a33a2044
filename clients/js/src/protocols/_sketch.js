// Apple's count-mean sketches (Apple's Differential Privacy Team, "Learning with Privacy at Scale",
// 2017, sec. 3), the base of "cms" (cms.js, Alg. 1) and "hcms" (hcms.js, Alg. 3), as
// dpdist.local.frequency.cms / .hcms.
//
// Both hash the item with one of k public Carter-Wegman functions h_j(x) = ((a_j x + b_j) mod P)
// mod m, j uniform, whose seeds are SplitMix64(family_seed, j) mod (P - 1) P (the family of
// dpdist.local.frequency.flh.family_seeds).
//   cms:  the m-coordinate vector that is +1 at h_j(v) and -1 elsewhere, every coordinate flipped
//         w.p. 1/(e^{eps/2} + 1); a report is uint64 (j, then the m bits, bit = +1, packed
//         little-endian 64 to a word).
//   hcms: l uniform in [m], the Hadamard entry H[h_j(v), l] = (-1)^popcount(h_j(v) & l), kept w.p.
//         e^eps/(e^eps + 1); a report is (j, l, bit = +1) in the narrowest unsigned dtype.
// Every Bernoulli is exact (RandomSource.bernoulli), so the law is the channel Python's channel()
// states.

import { InvalidParameterError } from '../errors.js';
import { frequencyRules, integer } from '../params.js';
import { FrequencyProtocol } from './_base.js';
import { hashItem, isPrime } from './olh.js';
import { familyCoefficients } from './pem.js';

const MERSENNE_31 = 2 ** 31 - 1;
const MAX_TABLE_CELLS = 1 << 24;
export const MAX_CHANNEL_OUTPUTS = 1 << 20;

export function popcount(x) {
  let count = 0;
  for (let v = x; v !== 0; v &= v - 1) count += 1;
  return count;
}

/** The hashed sketches' base: the parameters, the public hash family, h_j(item). */
export class Sketch extends FrequencyProtocol {
  constructor(name, config, tableCells) {
    super(
      name,
      config,
      frequencyRules({
        hash_count: integer(1, MAX_TABLE_CELLS / 2),
        width: integer(2, 1 << 20),
        hash_prime: integer(3, MERSENNE_31),
        family_seed: integer(0, Number.MAX_SAFE_INTEGER),
      }),
      { labels: null, hash_count: 2048, width: 1024, hash_prime: MERSENNE_31, family_seed: 0 },
    );
    const { hash_count: k, width: m, hash_prime: prime } = this.params;
    if (!isPrime(prime)) throw new InvalidParameterError(`The 'hash_prime' parameter of ${this.display} must be a prime. Got ${prime} instead.`);
    if (this.domainSize > prime) {
      throw new InvalidParameterError(
        `The 'domain_size' parameter of ${this.display} must be <= hash_prime = ${prime} (items are hashed modulo that prime). Got ${this.domainSize} instead.`,
      );
    }
    if ((m & (m - 1)) !== 0) throw new InvalidParameterError(`The 'width' parameter of ${this.display} must be a power of two. Got ${m} instead.`);
    if (tableCells(k, m) > MAX_TABLE_CELLS) {
      throw new InvalidParameterError(
        `${this.display} would keep a table of ${tableCells(k, m)} counts for hash_count = ${k} and width = ${m}; it must be <= ${MAX_TABLE_CELLS}. Lower 'hash_count' (or 'width').`,
      );
    }
    this.k = k;
    this.m = m;
    this.prime = prime;
    this.coefficients = familyCoefficients(this.params.family_seed, k, prime);
  }

  /** h_j(item). */
  hashed(j, item) {
    const [a, b] = this.coefficients[j];
    return hashItem(a, b, item, this.prime, this.m);
  }
}
