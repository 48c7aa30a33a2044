// Symmetric unary encoding, "sue" (basic one-time RAPPOR, Erlingsson, Pihur, Korolova, CCS 2014;
// dpdist.local.frequency.sue): the item's bit is 1 w.p. e^(eps/2)/(e^(eps/2) + 1), every other bit
// w.p. 1/(e^(eps/2) + 1) (the bits and their 2^-32 grid: _unary.js).

import { exp } from '../libm.js';
import { UnaryEncoding } from './_unary.js';

export default class SUE extends UnaryEncoding {
  static protocol = 'sue';

  constructor(config) {
    super('sue', config, (epsilon) => {
      const half = exp(epsilon / 2.0);
      return [half / (half + 1.0), 1.0 / (half + 1.0)];
    });
  }
}
