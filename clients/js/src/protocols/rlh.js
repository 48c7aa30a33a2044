// Re-optimized local hashing, "rlh" (Fang, Chen & Liu, USENIX Security 2025; dpdist.local.frequency.rlh):
// OLH's family, randomizer and reports (_local_hashing.js) with the range g that minimizes the mean MSE: the floor or
// the ceiling of h e^eps + 1, h = sqrt((d - 1 + e^-eps)/(d - 1 + e^eps)), whichever has the lower
// q(1-q)/(p-q)^2 + (1-p-q)/(d(p-q)) with p = e^eps/(e^eps + g - 1), q = 1/g (the smaller on a tie), the
// same operations as Python's so the same g.

import { exp } from '../libm.js';
import { LocalHashing } from './_local_hashing.js';

/** The paper's mean MSE (times n) of local hashing into g values with q* = 1/g. */
function meanMse(epsilon, d, g) {
  const e = exp(epsilon);
  const pStar = e / (e + g - 1);
  const qStar = 1.0 / g;
  const gap = pStar - qStar;
  return (qStar * (1 - qStar)) / (gap * gap) + (1 - pStar - qStar) / (d * gap);
}

export default class RLH extends LocalHashing {
  static protocol = 'rlh';

  constructor(config) {
    super(config, 'rlh');
  }

  hashRange() {
    const e = exp(this.epsilon);
    const d = this.domainSize;
    const h = Math.sqrt((d - 1 + 1.0 / e) / (d - 1 + e));
    const optimum = h * e + 1.0;
    const low = Math.max(2, Math.floor(optimum));
    const high = Math.max(2, Math.ceil(optimum));
    return meanMse(this.epsilon, d, high) < meanMse(this.epsilon, d, low) ? high : low;
  }
}
