// Re-optimized unary encoding, "rue" (Fang, Chen & Liu, USENIX Security 2025; dpdist.local.frequency.rue):
// the item's bit is 1 w.p. p = 1/(h + 1), every other bit w.p. q = 1/(h e^eps + 1), with
// h = sqrt((d - 1 + e^-eps)/(d - 1 + e^eps)) (the bits and their 2^-32 grid: _unary.js).  Math.sqrt is
// correctly rounded and exp is Python's (libm.js), so p and q are Python's bit for bit.

import { exp } from '../libm.js';
import { UnaryEncoding } from './_unary.js';

export default class RUE extends UnaryEncoding {
  static protocol = 'rue';

  constructor(config) {
    super('rue', config, (epsilon, d) => {
      const e = exp(epsilon);
      const h = Math.sqrt((d - 1 + 1.0 / e) / (d - 1 + e));
      return [1.0 / (h + 1.0), 1.0 / (h * e + 1.0)];
    });
  }
}
