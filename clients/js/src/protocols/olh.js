// Optimized local hashing, "olh" (Wang et al. 2017, sec. 4.4; dpdist.local.frequency.olh): local hashing
// (_local_hashing.js: the family, the randomizer, the reports) with g = hash_range, else round(e^eps + 1)
// with Python's round-half-even.

import { exp, roundHalfEven } from '../libm.js';
import { integer, optional } from '../params.js';
import { LocalHashing, MERSENNE_31 } from './_local_hashing.js';

// the family's helpers, where loloha.js and _sketch.js take them
export { decodeSeedReport, hashItem, isPrime, mulMod, writeSeedReport } from './_local_hashing.js';

export default class OLH extends LocalHashing {
  static protocol = 'olh';

  constructor(config) {
    super(
      config,
      'olh',
      { hash_range: optional(integer(2, 2 ** 20)), hash_prime: integer(3, MERSENNE_31) },
      { hash_range: null, hash_prime: MERSENNE_31 },
    );
  }

  /** The range g: hash_range, else round(e^eps + 1) (Python's round-half-even). */
  hashRange() {
    return this.params.hash_range ?? Math.max(2, roundHalfEven(exp(this.epsilon) + 1.0));
  }
}
