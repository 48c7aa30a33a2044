// Optimized unary encoding, "oue" (Wang, Blocki, Li, Jha, USENIX Security 2017, sec. 4.3;
// dpdist.local.frequency.oue): the item's bit is 1 w.p. 1/2, every other bit w.p. 1/(e^eps + 1)
// (the bits and their 2^-32 grid: _unary.js).

import { exp } from '../libm.js';
import { UnaryEncoding } from './_unary.js';

export default class OUE extends UnaryEncoding {
  static protocol = 'oue';

  constructor(config) {
    super('oue', config, (epsilon) => [0.5, 1.0 / (exp(epsilon) + 1.0)]);
  }
}
