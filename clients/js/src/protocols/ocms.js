// Optimized count-mean sketch with randomized response, "ocms" (Pan, IEEE CSF 2025, Algorithm 1;
// dpdist.local.frequency.ocms).
//
// The report is OLH's (_local_hashing.js, whose class this extends): a hash function of the Carter-Wegman family h_{a,b}(x) = ((a x + b) mod P) mod m,
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
import { exp } from '../libm.js';
import { integer, options } from '../params.js';
import { LocalHashing, MERSENNE_31 } from './_local_hashing.js';

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

export default class OCMS extends LocalHashing {
  static protocol = 'ocms';

  constructor(config) {
    super(
      config,
      'ocms',
      { objective: options(['worst-case', 'l2']), max_frequency: unitInterval(), hash_prime: integer(3, MERSENNE_31) },
      { objective: 'worst-case', max_frequency: 1.0, hash_prime: MERSENNE_31 },
    );
  }

  /** The width m (Algorithm 1), after Python's check that f* is in [1/d, 1] (some item has at least 1/d). */
  hashRange() {
    const bound = this.params.max_frequency;
    const d = this.domainSize;
    if (!(bound * d >= 1.0 - 1e-12)) {
      throw new InvalidParameterError(
        `The 'max_frequency' parameter of ${this.display} must be in [1/d, 1] = [${Number((1.0 / d).toPrecision(6))}, 1] with d = domain_size = ${d} ` +
          `(the d frequencies sum to 1, so some item has at least 1/d). Got ${bound} instead.`,
      );
    }
    return ocmsHashRange(this.epsilon, d, this.params.objective, bound);
  }
}
