// What the subset protocols (pgr, rws; Python's ss) share: the variance of a report of k of m positions.

import { exp } from '../libm.js';

/** Python's ``ss.subset_variance``: the variance (times n) of an item of frequency 1/d, a report of k of m positions. */
export function subsetVariance(epsilon, positions, domainSize, k) {
  const e = exp(epsilon);
  const pStar = (k * e) / (k * e + positions - k);
  const qStar = (pStar * (k - 1)) / (positions - 1) + ((1 - pStar) * k) / (positions - 1);
  const gap = pStar - qStar;
  return (qStar * (1 - qStar)) / (gap * gap) + (1 - pStar - qStar) / (domainSize * gap);
}
