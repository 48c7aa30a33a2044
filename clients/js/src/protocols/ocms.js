// Optimized count-mean sketch with randomized response, "ocms" (Pan, IEEE CSF 2025, Algorithm 1;
// dpdist.local.frequency.ocms).
//
// The report is OLH's (olh.js): a hash function of the Carter-Wegman family h_{a,b}(x) = ((a x + b) mod P) mod m,
// drawn per user, and the hashed item perturbed by m-ary randomized response (keep w.p. lambda, else uniform over
// all m, an exact Bernoulli(lambda) on Python's 2^-53 grid).  What OCMS+RR changes is the width m (Algorithm 1,
// HASHRANGE; eq. 13, 20 and Theorem 3.8), derived here from epsilon as Python derives it:
//   worst-case, f* > 1/2:  round(1 + e^(eps/2));
//   worst-case, f* <= 1/2: round(1 + Delta / (f* e^eps + 1 - f*)), Delta = e^(eps/2) sqrt([(1-f*)e^eps + f*][f* e^eps + 1 - f*]);
//   l2:                    round(1 + Delta_l / (e^eps + d - 1)), Delta_l = e^(eps/2) sqrt((e^eps + d - 1)(d e^eps - e^eps + 1));
// with Python's round-half-even, kept in [2, 2^20].  Reports are uint64 pairs (seed, value), little-endian.

import { InvalidParameterError } from '../errors.js';
import { mixtureKeep } from '../grid.js';
import { exp, roundHalfEven } from '../libm.js';
import { frequencyRules, integer, options } from '../params.js';
import { integerRowReports } from '../format.js';
import { FrequencyProtocol } from './_base.js';
import OLH, { isPrime } from './olh.js';

const MERSENNE_31 = 2 ** 31 - 1;
const MAX_WIDTH = 2 ** 20;

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

/** The width m of OCMS+RR (Python's ocms_hash_range). */
export function ocmsHashRange(epsilon, domainSize, objective, maxFrequency) {
  const e = exp(epsilon);
  const root = exp(epsilon / 2);
  let width;
  if (objective === 'l2') {
    const delta = root * Math.sqrt((e + domainSize - 1) * (domainSize * e - e + 1));
    width = 1 + delta / (e + domainSize - 1);
  } else if (maxFrequency > 0.5) {
    width = 1 + root;
  } else {
    const f = maxFrequency;
    const delta = root * Math.sqrt(((1 - f) * e + f) * (f * e + 1 - f));
    width = 1 + delta / (f * e + 1 - f);
  }
  return Math.min(MAX_WIDTH, Math.max(2, roundHalfEven(width)));
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
}

// The report, its reading and its exact law are OLH's for the same (prime, g, keep): the methods are shared.
for (const method of ['hash', 'writeReport', 'decode', 'channelRow', 'describeReport', 'reportIndex', 'likelihood']) {
  OCMS.prototype[method] = OLH.prototype[method];
}
